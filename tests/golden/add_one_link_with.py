"""mlir-aie's npu-xrt add_one_func_link_with_peano, re-expressed in aiedsl (golden test input)."""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import buffer, declare, scalar


def add_ref(a: np.ndarray, b: np.ndarray, n: int) -> None:
    b[:n] = a[:n] + 1


@design(device="npu1_1col")
def add_one_link_with(inp: Tensor[64, i32], buf: Tensor[32, i32], out: Tensor[64, i32]):
    of_in = fifo(Tensor[8, i32], name="of_in")
    of_out = fifo(Tensor[8, i32], name="of_out")
    add_one = declare("add_one", source="add_one.cc", entry="add_one<8, 1>",
                      args=[buffer("a", Tensor[8, i32]), buffer("b", Tensor[8, i32], "out"),
                            scalar("n", i32)],
                      reference=add_ref, cycles=30, cost="one 8-lane vector add plus overhead")

    @herd()
    def core():
        for _ in loop(8):
            with of_in.consume() as a, of_out.produce() as b:
                add_one(a, b, 8)

    with runtime() as rt:
        rt.drain(of_out, out)
        rt.fill(of_in, inp)
