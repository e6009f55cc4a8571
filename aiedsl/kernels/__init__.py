"""Kernels: the declaration (:mod:`.base`) and the shipped library (:mod:`.library`)."""

from aiedsl.kernels.base import KERNELS_CPP, Kernel, buffer, declare, scalar
from aiedsl.kernels.layout import block, block_dims, unblock, unblock_dims
from aiedsl.kernels.library import add, matmul, mul, passthrough, scale, zero

__all__ = [
    "KERNELS_CPP", "Kernel", "add", "block", "block_dims", "buffer", "declare", "matmul", "mul",
    "passthrough", "scalar", "scale", "unblock", "unblock_dims", "zero",
]
