# expect: kernel signature 23
# why: a core-local buffer passed where the kernel takes a scalar: a core program only calls kernels, so it cannot read a value out of its memory to pass by value (the func.call would get a memref where the kernel's i32 is declared); the kernel must take the local as a buffer.
"""Scales each tile by a factor a core keeps in a core-local buffer (IRON's Buffer handed to a
Worker)."""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, local, loop, runtime
from aiedsl.kernels import vector_scalar


@design(device="npu1_1col")
def scaled(inp: Tensor[128, i32], out: Tensor[128, i32]):
    a = fifo(Tensor[16, i32])
    b = fifo(Tensor[16, i32])
    factor = local(Tensor[1, i32], initial=3)
    mul = vector_scalar("mul", Tensor[16, i32])

    @herd()
    def core():
        for _ in loop(8):
            with a.consume() as t, b.produce() as o:
                mul(t, o, factor)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)


@scaled.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp * 3
