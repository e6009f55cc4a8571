# expect: runtime 25
# why: rt.fill of a join channel's host end (c[:]), the joined output the host must drain: it said "one part of a join" and to fill the fifo the parts come from.
import numpy as np

from aiedsl import Tensor, bf16, channel, design, herd, loop, memtile, runtime
from aiedsl.kernels import mul


@design(device="npu1")
def mul4(A: Tensor[16384, bf16], B: Tensor[16384, bf16], C: Tensor[16384, bf16]):
    a = channel(Tensor[1024, bf16], shape=[4], via=memtile, split=0)
    b = channel(Tensor[1024, bf16], shape=[4], via=memtile, split=0)
    c = channel(Tensor[1024, bf16], shape=[4], via=memtile, join=0)
    k = mul(Tensor[1024, bf16])

    @herd(cols=1, rows=4)
    def core(x, y):
        for _ in loop(4):
            with a[y].consume() as ta, b[y].consume() as tb, c[y].produce() as tc:
                k(ta, tb, tc)

    with runtime() as rt:
        rt.fill(a[:], A)
        rt.fill(b[:], B)
        rt.fill(c[:], C)


@mul4.reference
def reference(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return A * B
