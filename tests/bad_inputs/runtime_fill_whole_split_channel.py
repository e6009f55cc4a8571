# expect: runtime 23
# why: rt.fill of a whole channel with split=0: it said to pass "a channel index such as a[0]", a part the host cannot fill; its host end is a[:].
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
        rt.fill(a, A)
        rt.fill(b[:], B)
        rt.drain(c[:], C)


@mul4.reference
def reference(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return A * B
