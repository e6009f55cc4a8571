# expect: dma pattern 12
# why: a fifo element of 3 i8 values (3 bytes): AIE2 DMAs move whole 4-byte words.
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i8, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def direct(inp: Tensor[4096, i32], out: Tensor[4096, i32], ts: Tensor[12, i8]):
    a = fifo(Tensor[1024, i32], name="a")
    t = fifo(Tensor[3, i8], name="t")
    b = fifo(Tensor[1024, i32], name="b")
    copy = passthrough(Tensor[1024, i32])

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as x, b.produce() as y:
                copy(x, y)
                with t.consume():
                    pass

    with runtime() as rt:
        rt.fill(a, inp)
        rt.fill(t, ts)
        rt.drain(b, out)


@direct.reference
def reference(inp: np.ndarray, ts: np.ndarray) -> np.ndarray:
    return inp.copy()
