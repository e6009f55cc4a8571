"""Hang: the core acquires more elements at once than the fifo's depth.

Cause: the core needs 3 neighbouring tiles of 'a' at once (``consume(3)``) but the fifo is
double-buffered. Only 2 buffers exist on the core's end, so the third never arrives.

Mirrors: Xilinx/mlir-aie PR #3553 (a core end needs max_acquire + 1 buffers, which for a large
acquire exceeds the declared depth), PR #2986 (buffer count driven by max acquire, not by the
declared depth) and Xilinx/mlir-aie#3620 (depth semantics to clarify).

Reported: statically, [acquire].
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import add


@design(device="npu1_1col")
def acquire_over_depth(a_in: Tensor[6, 256, i32], out: Tensor[2, 256, i32]):
    a = fifo(Tensor[256, i32], name="a")
    o = fifo(Tensor[256, i32], name="o")
    add_k = add(Tensor[256, i32])

    @herd()
    def core():
        for _ in loop(2):
            with a.consume(3) as t, o.produce() as r:
                add_k(t[0], t[2], r)

    with runtime() as rt:
        rt.fill(a, a_in)
        rt.drain(o, out)


@acquire_over_depth.reference
def reference(a_in: np.ndarray) -> np.ndarray:
    return a_in[0::3] + a_in[2::3]
