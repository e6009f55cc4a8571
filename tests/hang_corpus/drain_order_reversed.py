"""Hang: the runtime drains two outputs in the opposite order to the core, waiting in between.

Cause: the core writes all of 'lo' and then all of 'hi'. The runtime drains 'hi' first and waits
for it (``rt.sync()``) before it issues the drain of 'lo'. Nothing drains 'lo', so once its
buffers are full the core blocks and never reaches 'hi'.

Mirrors: Xilinx/mlir-aie#2653 (the runtime sequence waited right after the first of two drains,
before the second was issued, and the application deadlocked).

Reported: by running (exit code 3): the chain leads from the wait on 'hi' to the drain of 'lo'
the runtime issues only after that wait.
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels import add, passthrough


@design(device="npu1_1col")
def drain_order_reversed(x: Tensor[4096, i32], lo_out: Tensor[4096, i32],
                         hi_out: Tensor[4096, i32]):
    a = fifo(Tensor[1024, i32], depth=4, name="a")
    lo = fifo(Tensor[1024, i32], name="lo")
    hi = fifo(Tensor[1024, i32], name="hi")
    copy = passthrough(Tensor[1024, i32])
    add_k = add(Tensor[1024, i32])

    @herd()
    def core():
        xs = a.acquire("consume", 4)
        for i in range(4):
            with lo.produce() as r:
                copy(xs[i], r)
        for i in range(4):
            with hi.produce() as r:
                add_k(xs[i], xs[i], r)
        a.release("consume", 4)

    with runtime() as rt:
        rt.fill(a, x)
        rt.drain(hi, hi_out)
        rt.sync()
        rt.drain(lo, lo_out)


@drain_order_reversed.reference
def reference(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return x.copy(), x + x
