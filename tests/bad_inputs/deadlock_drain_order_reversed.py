# expect: deadlock 31
# run: sim
# why: the core writes all of 'lo' then all of 'hi'; the runtime waits for 'hi' before draining 'lo' (mlir-aie#2653).
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def reversed_drains(x: Tensor[4096, i32], lo_out: Tensor[4096, i32], hi_out: Tensor[4096, i32]):
    a = fifo(Tensor[1024, i32], depth=4, name="a")
    lo = fifo(Tensor[1024, i32], name="lo")
    hi = fifo(Tensor[1024, i32], name="hi")
    copy = passthrough(Tensor[1024, i32])

    @herd()
    def core():
        xs = a.acquire("consume", 4)
        for i in range(4):
            with lo.produce() as r:
                copy(xs[i], r)
        for i in range(4):
            with hi.produce() as r:
                copy(xs[i], r)
        a.release("consume", 4)

    with runtime() as rt:
        rt.fill(a, x)
        rt.drain(hi, hi_out)
        rt.sync()
        rt.drain(lo, lo_out)


@reversed_drains.reference
def reference(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return x.copy(), x.copy()
