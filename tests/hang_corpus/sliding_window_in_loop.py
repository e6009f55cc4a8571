"""Hang: a sliding window acquired inside the loop, without peeling its first elements.

Cause: each iteration acquires a window of 3 rows of 'rows' and releases the oldest one. The
first iteration therefore keeps 2 rows that no iteration gives back; lowered as a fresh
acquire of 3 every iteration, the core soon holds every buffer and stalls the producer.

Mirrors: Xilinx/mlir-aie#2463 (acquire(N) inside a loop body while holding N - released rows
across iterations exhausts the producer pool and deadlocks on hardware; PR #3144 peels iteration
0 so the steady-state acquire is only the per-iteration delta).

Reported: statically, [hang: unbalanced loop], with the peeling fix.
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import add

ROWS = 8


@design(device="npu1_1col")
def sliding_window_in_loop(img: Tensor[ROWS + 2, 256, i32], out: Tensor[ROWS, 256, i32]):
    rows = fifo(Tensor[256, i32], depth=4, name="rows")
    res = fifo(Tensor[256, i32], name="res")
    add_k = add(Tensor[256, i32])

    @herd()
    def core():
        for _ in loop(ROWS):
            win = rows.acquire("consume", 3)
            with res.produce() as o:
                add_k(win[0], win[2], o)
            rows.release("consume", 1)
        rows.release("consume", 2)

    with runtime() as rt:
        rt.fill(rows, img)
        rt.drain(res, out)


@sliding_window_in_loop.reference
def reference(img: np.ndarray) -> np.ndarray:
    return img[:-2] + img[2:]
