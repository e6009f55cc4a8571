"""Hang: more runtime transfers in flight on one shim tile than it has buffer descriptors.

Cause: the runtime issues one fill per row (17 rows) plus the drain before waiting on anything.
A shim tile has 16 buffer descriptors; transfers past that have no descriptor to run on, so the
queue stalls and the run never completes.

Mirrors: Xilinx/mlir-air#1822 (runtime-loop tiling left more shim feed tasks in flight than a
channel absorbs; the design deadlocked and the host timed out with a partially written buffer).

Reported: statically, [shim buffer descriptors].
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def shim_transfers_in_flight(A: Tensor[17, 64, i32], C: Tensor[17, 64, i32]):
    a = fifo(Tensor[64, i32], name="a")
    c = fifo(Tensor[64, i32], name="c")
    copy = passthrough(Tensor[64, i32])

    @herd()
    def core():
        for _ in loop(17):
            with a.consume() as x, c.produce() as y:
                copy(x, y)

    with runtime() as rt:
        for row in range(17):
            rt.fill(a, A, (row * 64, [64], [1]))
        rt.drain(c, C)


@shim_transfers_in_flight.reference
def reference(A: np.ndarray) -> np.ndarray:
    return A.copy()
