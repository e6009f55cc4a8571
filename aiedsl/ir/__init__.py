"""The design IR (see :mod:`aiedsl.ir.design`); the way back from a ``design.json`` is
:func:`aiedsl.load_json` (:mod:`aiedsl.design_json`, outside this package: it raises
:class:`~aiedsl.errors.DesignError`, whose module reads :mod:`aiedsl.ir.loc`)."""

from aiedsl.ir.core_ops import (
    Acquire, Arg, BarrierWait, BufferArg, Call, IndexArg, LocalArg, Loop, Op, Release, RtpArg,
    ScalarArg,
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

__all__ = [
    "Acquire", "Arg", "Barrier", "BarrierWait", "Bd", "BufferAlloc", "BufferArg", "Call",
    "Cascade",
    "Connect", "Core", "Design", "Dim",
    "DmaChannel", "Endpoint", "Fifo", "Herd", "HostTensor", "IndexArg", "Kernel", "KernelArg",
    "Link",
    "Loc", "Local", "LocalArg", "LockAlloc", "Loop", "Op", "PacketFlow", "Pattern", "Physical",
    "Release", "Route",
    "Rtp", "RtpArg", "RtpWrite", "RuntimeOp",
    "ScalarArg", "SetBarrier", "TensorType", "Transfer", "Wait",
]
