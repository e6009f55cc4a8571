# expect: dma pattern 11
# why: a transposing core layout whose innermost step is 64 elements of i16: a BD moves whole 4-byte words, so a 2-byte element cannot be stepped alone (DMABDOp::verify).
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i16, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def direct(inp: Tensor[4096, i16], out: Tensor[4096, i16]):
    a = fifo(Tensor[1024, i16], name="a", dims_from_stream=[(64, 1), (16, 64)])
    b = fifo(Tensor[1024, i16], name="b")
    copy = passthrough(Tensor[1024, i16])

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as x, b.produce() as y:
                copy(x, y)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)


@direct.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
