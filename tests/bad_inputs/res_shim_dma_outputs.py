# expect: shim DMA output (MM2S) channels 20
# why: three fills pinned to shim column 0: a shim tile has 2 output channels.
from aiedsl import Tensor, design, fifo, herd, i32, runtime, shim


@design(device="npu1")
def shim3(A: Tensor[1024, i32], B: Tensor[1024, i32], C: Tensor[1024, i32]):
    a = fifo(Tensor[1024, i32], name="a", shim=shim(0))
    b = fifo(Tensor[1024, i32], name="b", shim=shim(0))
    c = fifo(Tensor[1024, i32], name="c", shim=shim(0))

    @herd(cols=3)
    def core(x, y):
        with [a, b, c][x].consume():
            pass

    with runtime() as rt:
        rt.fill(a, A)
        rt.fill(b, B)
        rt.fill(c, C)
