# expect: core buffer descriptors 18
# why: two fifos whose core ends hold 9 buffers each (per-end depths): 18 BDs of 16.
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def direct(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
    a = fifo(Tensor[256, i32], name="a", depth=2, consumer_depth=9)
    b = fifo(Tensor[256, i32], name="b", depth=9, consumer_depth=2)
    copy = passthrough(Tensor[256, i32])

    @herd()
    def core():
        for _ in loop(16):
            with a.consume() as x, b.produce() as y:
                copy(x, y)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)


@direct.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
