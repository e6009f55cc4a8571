"""The design IR (see :mod:`aiedsl.ir.design`), and :func:`load_json`, the way back from a
``design.json`` (see :mod:`aiedsl.ir.validate`)."""

from typing import TYPE_CHECKING, Any

from aiedsl.ir.core_ops import (
    Acquire, Arg, BarrierWait, BufferArg, Call, LocalArg, Loop, Op, Release, RtpArg, ScalarArg,
)
from aiedsl.ir.cores import Barrier, Cascade, Core, Herd, Local, Rtp
from aiedsl.ir.design import Design
from aiedsl.ir.fifos import Endpoint, Fifo, Link
from aiedsl.ir.kernel import Kernel, KernelArg
from aiedsl.ir.loc import Loc
from aiedsl.ir.physical import (
    Bd, BufferAlloc, Connect, DmaChannel, LockAlloc, PacketFlow, Physical, Route,
)
from aiedsl.ir.runtime import HostTensor, RtpWrite, RuntimeOp, SetBarrier, Transfer, Wait
from aiedsl.ir.types import Dim, Pattern, TensorType

if TYPE_CHECKING:
    from aiedsl.ir.validate import load_json

__all__ = [
    "Acquire", "Arg", "Barrier", "BarrierWait", "Bd", "BufferAlloc", "BufferArg", "Call",
    "Cascade",
    "Connect", "Core", "Design", "Dim",
    "DmaChannel", "Endpoint", "Fifo", "Herd", "HostTensor", "Kernel", "KernelArg", "Link",
    "Loc", "Local", "LocalArg", "LockAlloc", "Loop", "Op", "PacketFlow", "Pattern", "Physical",
    "Release", "Route",
    "Rtp", "RtpArg", "RtpWrite", "RuntimeOp",
    "ScalarArg", "SetBarrier", "TensorType", "Transfer", "Wait", "load_json",
]


def __getattr__(name: str) -> Any:
    """``load_json``, imported on first use: its module reads :mod:`aiedsl.errors`, which
    imports this package's :mod:`~aiedsl.ir.loc` (imported here at once, a cycle)."""
    if name == "load_json":
        from aiedsl.ir.validate import load_json

        return load_json
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
