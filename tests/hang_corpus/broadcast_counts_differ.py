"""Hang: the two consumers of a broadcast take different numbers of elements.

Cause: the weights 'w' are broadcast to both cores, but core[0,1] loops one time fewer than
core[0,0]. A broadcast element leaves the shim only when every receiver has taken it, so the
last element waits forever for core[0,1].

Mirrors: Xilinx/mlir-aie PR #3257 (a broadcast object fifo whose outstanding elements outrun its
buffers deadlocks on the array; the PR adds a static check for that one class).

Reported: statically, [balance].
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def broadcast_counts_differ(w_in: Tensor[4, 256, i32], out0: Tensor[4, 256, i32],
                            out1: Tensor[4, 256, i32]):
    w = fifo(Tensor[256, i32], name="w")
    o0 = fifo(Tensor[256, i32], name="o0")
    o1 = fifo(Tensor[256, i32], name="o1")
    copy = passthrough(Tensor[256, i32])

    @herd(rows=2)
    def core(x, y):
        for _ in loop(4 if y == 0 else 3):
            with w.consume() as a, [o0, o1][y].produce() as r:
                copy(a, r)

    with runtime() as rt:
        rt.fill(w, w_in)
        rt.drain(o0, out0)
        rt.drain(o1, out1)


@broadcast_counts_differ.reference
def reference(w_in: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return w_in.copy(), w_in.copy()
