# expect: python error 5
# why: the design imports int32, numpy's name, where aiedsl's is i32: it said only "fix the code at this line".
import numpy as np

from aiedsl import Tensor, design, fifo, herd, int32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def direct(inp: Tensor[4096, int32], out: Tensor[4096, int32]):
    a = fifo(Tensor[1024, int32], name="a")
    b = fifo(Tensor[1024, int32], name="b")
    copy = passthrough(Tensor[1024, int32])

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
