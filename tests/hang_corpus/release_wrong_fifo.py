"""Hang: the core releases an element of a fifo it does not hold (a copy-paste slip).

Cause: with explicit acquire/release, the core releases 'a' twice and never 'b'. The second
release of 'a' hands back an element the core never acquired (on the NPU the lock count goes
out of step with the buffers), and 'b' is never released.

Mirrors: Xilinx/mlir-aie PR #3308 (core-side lock bookkeeping tracks how many objects a core
holds per fifo and port; a release must match what is held) and Xilinx/mlir-aie PR #3257
(object-fifo mistakes that compile clean and only hang at run time).

Reported: statically, [hang: release].
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import add


@design(device="npu1_1col")
def release_wrong_fifo(x: Tensor[4096, i32], y: Tensor[4096, i32], z: Tensor[4096, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    b = fifo(Tensor[1024, i32], name="b")
    c = fifo(Tensor[1024, i32], name="c")
    add_k = add(Tensor[1024, i32])

    @herd()
    def core():
        for _ in loop(4):
            xa = a.acquire("consume")
            xb = b.acquire("consume")
            with c.produce() as xc:
                add_k(xa, xb, xc)
            a.release("consume")
            a.release("consume")

    with runtime() as rt:
        rt.fill(a, x)
        rt.fill(b, y)
        rt.drain(c, z)


@release_wrong_fifo.reference
def reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return x + y
