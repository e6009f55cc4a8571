# expect: kernel signature 26
# why: the core passes 1e39 to an f32 scalar (it would become infinity).
import numpy as np

from aiedsl import Tensor, design, f32, fifo, herd, loop, runtime
from aiedsl.kernels import buffer, declare, scalar


def add_ref(a, b, n):
    b[...] = a * n


@design(device="npu1_1col")
def add_one(inp: Tensor[1024, f32], out: Tensor[1024, f32]):
    a = fifo(Tensor[256, f32], name="a")
    b = fifo(Tensor[256, f32], name="b")
    add = declare("scale_f32_256", source="kernels_ok.cc", entry="scale_f32<256>",
                  args=[buffer("src", Tensor[256, f32]), buffer("dst", Tensor[256, f32], "out"),
                        scalar("f", f32)],
                  reference=add_ref, cycles=40, cost="one 16-lane vector add per 16 values")

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as x, b.produce() as y:
                add(x, y, 1e39)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)


@add_one.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp * 1
