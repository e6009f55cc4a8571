# expect: split offsets 12
# why: explicit part types that add up to more than the parent element.
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, join, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def splitjoin(inp: Tensor[2048, i32], out: Tensor[2048, i32]):
    whole = fifo(Tensor[1024, i32], name="whole")
    parts = whole.split([Tensor[512, i32], Tensor[1024, i32]], names=["p0", "p1"])
    r0 = fifo(Tensor[512, i32], name="r0")
    r1 = fifo(Tensor[512, i32], name="r1")
    res = join([r0, r1], name="res")
    copy = passthrough(Tensor[512, i32])

    @herd(rows=2)
    def core(x, y):
        for _ in loop(2):
            with parts[y].consume() as s, [r0, r1][y].produce() as d:
                copy(s, d)

    with runtime() as rt:
        rt.fill(whole, inp)
        rt.drain(res, out)


@splitjoin.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
