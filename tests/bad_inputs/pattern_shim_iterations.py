# expect: dma pattern 22
# why: a repeat of 65: the shim's iteration dimension counts to 64 (its 6-bit wrap holds the count less one).
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def direct(inp: Tensor[64, i32], out: Tensor[4160, i32]):
    a = fifo(Tensor[64, i32], name="a")
    b = fifo(Tensor[64, i32], name="b")
    copy = passthrough(Tensor[64, i32])

    @herd()
    def core():
        for _ in loop(65):
            with a.consume() as x, b.produce() as y:
                copy(x, y)

    with runtime() as rt:
        rt.fill(a, inp, (0, [65, 1, 1, 64], [0, 0, 0, 1]))
        rt.drain(b, out)


@direct.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return np.tile(inp, 65)
