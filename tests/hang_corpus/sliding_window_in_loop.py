"""Hang: a sliding window acquired inside the loop, without peeling its first elements.

Cause: each iteration acquires a window of 3 rows and releases the oldest, ending with 2 more
than it started with. mlir-aie 1e400306 (aiedsl's target) unrolls the loop and counts new rows at
compile time from the 0 held at loop entry: each pass takes 3 while 2 are held; buffers run out.

Mirrors: Xilinx/mlir-aie#2463 (acquire(N) in a loop body, N - released held across iterations,
deadlocks); PR #3144 (June 2026) peels iteration 0 on the opt-in dynamic lowering only, and since
PR #3298 (August 2026) every core counts at run time, max(N - held, 0), as aiedsl's simulator.

Reported: statically, [hang: unbalanced loop], naming the version, with the peeling fix.
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
