"""The design IR (see :mod:`aiedsl.ir.nodes`)."""

from aiedsl.ir.loc import Loc
from aiedsl.ir.nodes import (
    Acquire, Arg, BufferArg, Call, Core, Design, Endpoint, Fifo, Herd, HostTensor, Kernel,
    KernelArg, Link, Loop, Op, Release, RuntimeOp, ScalarArg, Transfer, Wait,
)
from aiedsl.ir.types import Dim, Pattern, TensorType

__all__ = [
    "Acquire", "Arg", "BufferArg", "Call", "Core", "Design", "Dim", "Endpoint", "Fifo", "Herd",
    "HostTensor", "Kernel", "KernelArg", "Link", "Loc", "Loop", "Op", "Pattern", "Release",
    "RuntimeOp", "ScalarArg", "TensorType", "Transfer", "Wait",
]
