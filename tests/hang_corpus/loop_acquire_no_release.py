"""Hang: a loop body acquires an input element and never releases it.

Cause: the core takes an element of 'a' with an explicit ``acquire`` (to keep the buffer across
the kernel call) and the matching ``release`` was forgotten. The first iteration keeps the
element; the shim's fill of 'a' can never complete, so the runtime never finishes.

Mirrors: Xilinx/mlir-aie#2463 (an acquire inside a loop body that is not balanced per iteration
exhausts the fifo's buffers and deadlocks on hardware; fixed for windows by PR #3144) and
Xilinx/mlir-aie PR #3257 (object-fifo designs that compile clean and hang with no diagnostic).

Reported: statically, [hang: unbalanced loop].
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def loop_acquire_no_release(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    b = fifo(Tensor[1024, i32], name="b")
    copy = passthrough(Tensor[1024, i32])

    @herd()
    def core():
        for _ in loop(4):
            src = a.acquire("consume")
            with b.produce() as dst:
                copy(src, dst)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)


@loop_acquire_no_release.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
