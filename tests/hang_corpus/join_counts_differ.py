"""Hang: the parts of a join are produced in different numbers.

Cause: two cores each produce one half of every joined element of 'c', but core[0,1] produces 3
halves per run and core[0,0] 4. The memtile sends a joined element only when both halves are in,
so the fourth element never leaves and the drain of 'c' never completes.

Mirrors: Xilinx/mlir-air#1478 (a memtile gather of two tiles' outputs into one L2 buffer: its
output waits on the locks of the parts before it sends, and when those locks do not count the
parts one by one the design deadlocks on hardware).

Reported: statically, [balance].
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, join, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def join_counts_differ(a_in: Tensor[4, 256, i32], b_in: Tensor[4, 256, i32],
                       c_out: Tensor[4, 512, i32]):
    a = fifo(Tensor[256, i32], name="a")
    b = fifo(Tensor[256, i32], name="b")
    c0 = fifo(Tensor[256, i32], name="c0")
    c1 = fifo(Tensor[256, i32], name="c1")
    c = join([c0, c1], name="c")
    copy = passthrough(Tensor[256, i32])

    @herd(rows=2)
    def core(x, y):
        for _ in loop(4 if y == 0 else 3):
            with [a, b][y].consume() as s, [c0, c1][y].produce() as d:
                copy(s, d)

    with runtime() as rt:
        rt.fill(a, a_in)
        rt.fill(b, b_in)
        rt.drain(c, c_out)


@join_counts_differ.reference
def reference(a_in: np.ndarray, b_in: np.ndarray) -> np.ndarray:
    return np.concatenate([a_in, b_in], axis=1)
