"""Hang: a window swept over each frame's rows, whose frame loop keeps one row too many.

Cause: per frame, the core acquires the first 2 rows, slides a window of 3 over the middle rows
(acquire 3, release 1), takes the last 2 and releases 1: each frame ends holding one row more
than it started with. mlir-aie 1e400306 counts each acquire's new rows when it compiles the frame
loop, from the 0 held where it is entered, so the second frame takes as many as the first while
a row is still held; the rows' buffers run out.

Mirrors: Xilinx/mlir-aie#2463 (acquire(N) in a loop body, rows held across iterations,
deadlocks); mlir-aie's edge_detect sweeps such a window per frame and releases 2 after its last
row (programming_examples/vision/edge_detect).

Reported: statically, [hang: unbalanced loop], the fix releasing the row the frame still holds.
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import add

FRAMES, ROWS = 2, 6


@design(device="npu1_1col")
def window_swept_per_frame(img: Tensor[FRAMES * ROWS, 256, i32],
                           out: Tensor[FRAMES * ROWS, 256, i32]):
    rows = fifo(Tensor[256, i32], depth=4, name="rows")
    res = fifo(Tensor[256, i32], name="res")
    add_k = add(Tensor[256, i32])

    @herd()
    def core():
        for _ in loop(FRAMES):
            win = rows.acquire("consume", 2)
            with res.produce() as o:
                add_k(win[0], win[1], o)
            for _ in loop(ROWS - 2):
                win = rows.acquire("consume", 3)
                with res.produce() as o:
                    add_k(win[0], win[2], o)
                rows.release("consume", 1)
            win = rows.acquire("consume", 2)
            with res.produce() as o:
                add_k(win[0], win[1], o)
            rows.release("consume", 1)

    with runtime() as rt:
        rt.fill(rows, img)
        rt.drain(res, out)


@window_swept_per_frame.reference
def reference(img: np.ndarray) -> np.ndarray:
    out = np.empty_like(img)
    for f in range(FRAMES):
        x = img[f * ROWS:(f + 1) * ROWS]
        y = out[f * ROWS:(f + 1) * ROWS]
        y[0] = x[0] + x[1]
        y[1:-1] = x[:-2] + x[2:]
        y[-1] = x[-2] + x[-1]
    return out
