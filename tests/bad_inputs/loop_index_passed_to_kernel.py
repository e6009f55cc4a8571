# expect: loop 26
# why: the core computes with the loop's index before passing it: the body is traced once, so the product has no value (only the index itself reaches a kernel).
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
        for i in loop(4):
            with a.consume() as x, b.produce() as y:
                add(x, y, i * 64)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)


@add_one.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp + 1
