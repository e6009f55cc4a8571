# expect: kernel signature 17
# why: args= lists b (out) before a (in) while the C++ takes (a, b, n), and the call passes (consumed, produced) in the C++ order: it said [stale read] and to swap the call's arguments, after which [kernel signature] named the declaration, the real mistake.
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import buffer, declare, scalar


def add_ref(b, a, n):
    b[:n] = a[:n] + 1


@design(device="npu1_1col")
def add_one(inp: Tensor[1024, i32], out: Tensor[1024, i32]):
    a = fifo(Tensor[256, i32], name="a")
    b = fifo(Tensor[256, i32], name="b")
    add = declare("add_one_i32_256", source="kernels_ok.cc", entry="add_one<256>",
                  args=[buffer("b", Tensor[256, i32], "out"), buffer("a", Tensor[256, i32]),
                        scalar("n", i32)],
                  reference=add_ref, cycles=40, cost="one 16-lane vector add per 16 values")

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as x, b.produce() as y:
                add(x, y, 256)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)


@add_one.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp + 1
