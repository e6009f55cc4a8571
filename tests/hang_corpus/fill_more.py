"""Hang: the runtime sends more elements than the core consumes.

Cause: the core's loop runs over K // TILE tiles, but the fill sends the whole K x K matrix
(every row of it) into the same fifo. The core stops after its tiles; the shim still has data to
send and the fill never completes.

Mirrors: Xilinx/mlir-air PR #1852 (a put inside a loop re-sent the whole buffer on every trip:
864 elements sent for the 288 the core consumed, and the design hung).

Reported: statically, [balance].
"""

import numpy as np

from aiedsl import Tensor, define, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough

K = define("K", 64)
TILE = 256


@design(device="npu1_1col")
def fill_more(w: Tensor[K, K, i32], out: Tensor[K * K // 4, i32]):
    a = fifo(Tensor[TILE, i32], name="a")
    b = fifo(Tensor[TILE, i32], name="b")
    copy = passthrough(Tensor[TILE, i32])

    @herd()
    def core():
        for _ in loop(K * K // 4 // TILE):
            with a.consume() as x, b.produce() as y:
                copy(x, y)

    with runtime() as rt:
        rt.fill(a, w)
        rt.drain(b, out)


@fill_more.reference
def reference(w: np.ndarray) -> np.ndarray:
    return w.reshape(-1)[: w.size // 4].copy()
