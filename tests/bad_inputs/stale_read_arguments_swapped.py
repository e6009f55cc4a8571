# expect: stale read 26
# why: the kernel's input and output are swapped: it reads y, just acquired by produce() and never written (it holds whatever its DMA last sent from it), and writes x, which nobody reads again.
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import buffer, declare, scalar


def add_ref(a, b, n):
    b[:n] = a[:n] + 1


@design(device="npu1_1col")
def add_one(inp: Tensor[1024, i32], out: Tensor[1024, i32]):
    a = fifo(Tensor[256, i32], name="a")
    b = fifo(Tensor[256, i32], name="b")
    add = declare("add_one_i32_256", source="kernels_ok.cc", entry="add_one<256>",
                  args=[buffer("src", Tensor[256, i32]), buffer("dst", Tensor[256, i32], "out"),
                        scalar("n", i32)],
                  reference=add_ref, cycles=40, cost="one 16-lane vector add per 16 values")

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as x, b.produce() as y:
                add(y, x, 256)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)


@add_one.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp + 1
