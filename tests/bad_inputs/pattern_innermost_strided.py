# expect: dma pattern 22
# why: a transposing pattern of 2-byte elements whose innermost step is 1024 elements: the shim DMA moves whole 4-byte words, so only 4-byte elements may step innermost.
import numpy as np

from aiedsl import Tensor, bf16, design, fifo, herd, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def direct(inp: Tensor[4096, bf16], out: Tensor[4096, bf16]):
    a = fifo(Tensor[1024, bf16], name="a")
    b = fifo(Tensor[1024, bf16], name="b")
    copy = passthrough(Tensor[1024, bf16])

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as x, b.produce() as y:
                copy(x, y)

    with runtime() as rt:
        rt.fill(a, inp, (0, [1024, 4], [1, 1024]))
        rt.drain(b, out)


@direct.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
