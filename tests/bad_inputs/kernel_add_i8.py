# expect: kernel 15
# why: elementwise add of i8: the library's add is bf16, i16 or i32.
import numpy as np

from aiedsl import Tensor, channel, i8, design, herd, i32, loop, memtile, runtime
from aiedsl.kernels import add


@design(device="npu1_2col")
def bcast(w_in: Tensor[4, 256, i32], x_in: Tensor[2, 4, 256, i32],
          out: Tensor[2, 4, 256, i32]):
    w = channel(Tensor[256, i32], shape=[1], via=memtile, broadcast=2, name="w")
    x = channel(Tensor[256, i32], shape=[2], name="x")
    o = channel(Tensor[256, i32], shape=[2], via=memtile, name="o")
    add_k = add(Tensor[256, i8])

    @herd(rows=2)
    def core(col, row):
        for _ in loop(4):
            with w[0].consume() as a, x[row].consume() as b, o[row].produce() as r:
                add_k(a, b, r)

    with runtime() as rt:
        rt.fill(w[0], w_in)
        rt.fill(x[0], x_in, (0, [1024], [1]))
        rt.fill(x[1], x_in, (1024, [1024], [1]))
        rt.drain(o[0], out, (0, [1024], [1]))
        rt.drain(o[1], out, (1024, [1024], [1]))


@bcast.reference
def reference(w_in: np.ndarray, x_in: np.ndarray) -> np.ndarray:
    return x_in + w_in[None]
