# expect: core DMA input (S2MM) channels 21
# why: a core consuming three fifos: it has 2 input channels.
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_2col")
def direct(inp: Tensor[4096, i32], inp2: Tensor[4096, i32], inp3: Tensor[4096, i32],
           out: Tensor[4096, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    a2 = fifo(Tensor[1024, i32], name="a2")
    a3 = fifo(Tensor[1024, i32], name="a3")
    b = fifo(Tensor[1024, i32], name="b")
    copy = passthrough(Tensor[1024, i32])

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as x, a2.consume(), a3.consume(), b.produce() as y:
                copy(x, y)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.fill(a2, inp2)
        rt.fill(a3, inp3)
        rt.drain(b, out)


@direct.reference
def reference(inp: np.ndarray, inp2: np.ndarray, inp3: np.ndarray) -> np.ndarray:
    return inp.copy()
