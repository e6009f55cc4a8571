"""Kernels: the declaration (:mod:`.base`) and the shipped library (:mod:`.library`)."""

from aiedsl.kernels.base import KERNELS_CPP, Kernel, buffer, declare, scalar
from aiedsl.kernels.layout import block, block_dims, unblock, unblock_dims
from aiedsl.kernels.library import matmul, passthrough, scale, zero

__all__ = [
    "KERNELS_CPP", "Kernel", "block", "block_dims", "buffer", "declare", "matmul",
    "passthrough", "scalar", "scale", "unblock", "unblock_dims", "zero",
]
