# expect: channel 11
# why: split='0' as a string.
import numpy as np

from aiedsl import Tensor, channel, design, herd, i32, memtile, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def chan(inp: Tensor[2, 1024, i32], out: Tensor[2, 1024, i32]):
    a = channel(Tensor[1024, i32], shape=[2], via=memtile, split="0", name="a")
    c = channel(Tensor[1024, i32], shape=[2], via=memtile, join=0, name="c")
    copy = passthrough(Tensor[1024, i32])

    @herd(rows=2)
    def core(x, y):
        with a[y].consume() as s, c[y].produce() as d:
            copy(s, d)

    with runtime() as rt:
        rt.fill(a[:], inp)
        rt.drain(c[:], out)


@chan.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
