"""The design IR (see :mod:`aiedsl.ir.nodes`)."""

from aiedsl.ir.loc import Loc
from aiedsl.ir.nodes import (
    Acquire, Arg, Barrier, BarrierWait, BufferArg, Call, Cascade, Core, Design, Endpoint, Fifo,
    Herd, HostTensor, Kernel, KernelArg, Link, Local, LocalArg, Loop, Op, Release, Rtp, RtpArg,
    RtpWrite, RuntimeOp, ScalarArg, SetBarrier, Transfer, Wait,
)
from aiedsl.ir.physical import (
    Bd, BufferAlloc, Connect, DmaChannel, LockAlloc, PacketFlow, Physical, Route,
)
from aiedsl.ir.types import Dim, Pattern, TensorType

__all__ = [
    "Acquire", "Arg", "Barrier", "BarrierWait", "Bd", "BufferAlloc", "BufferArg", "Call",
    "Cascade",
    "Connect", "Core", "Design", "Dim",
    "DmaChannel", "Endpoint", "Fifo", "Herd", "HostTensor", "Kernel", "KernelArg", "Link",
    "Loc", "Local", "LocalArg", "LockAlloc", "Loop", "Op", "PacketFlow", "Pattern", "Physical",
    "Release", "Route",
    "Rtp", "RtpArg", "RtpWrite", "RuntimeOp",
    "ScalarArg", "SetBarrier", "TensorType", "Transfer", "Wait",
]
