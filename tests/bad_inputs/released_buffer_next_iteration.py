# expect: released buffer 21
# why: the loop slides a window over 'a' but the kernel reads the element acquired before the loop, which the first iteration released.
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def window(inp: Tensor[4096, i32], out: Tensor[3072, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    b = fifo(Tensor[1024, i32], name="b")
    copy = passthrough(Tensor[1024, i32])

    @herd()
    def core():
        first = a.acquire("consume", 1)
        for _ in loop(3):
            a.acquire("consume", 2)
            with b.produce() as y:
                copy(first[0], y)
            a.release("consume", 1)
        a.release("consume", 1)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)


@window.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp[:3072].copy()
