# expect: core DMA output (MM2S) channels 21
# why: a core producing three fifos: it has 2 output channels (b2 and b3 released unwritten, judged last).
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_2col")
def direct(inp: Tensor[4096, i32], out: Tensor[4096, i32], out2: Tensor[4096, i32],
           out3: Tensor[4096, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    b = fifo(Tensor[1024, i32], name="b")
    b2 = fifo(Tensor[1024, i32], name="b2")
    b3 = fifo(Tensor[1024, i32], name="b3")
    copy = passthrough(Tensor[1024, i32])

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as x, b.produce() as y, b2.produce(), b3.produce():
                copy(x, y)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)
        rt.drain(b2, out2)
        rt.drain(b3, out3)


@direct.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
