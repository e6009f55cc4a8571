"""mlir-aie's npu-xrt add_one_objFifo, re-expressed in aiedsl (golden test input).

The reference adds 41 inline in the core; aiedsl cores call kernels, so the arithmetic is a kernel
here and the design gains one func.func declaration (the golden test leaves kernels out).
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import buffer, declare, scalar


def add_ref(a: np.ndarray, b: np.ndarray, n: int) -> None:
    b[...] = a + 41


@design(device="npu1_1col")
def add_one_objfifo(inp: Tensor[64, i32], buf: Tensor[32, i32], out: Tensor[64, i32]):
    in0 = fifo(Tensor[16, i32], name="objFifo_in0")
    in1 = in0.forward(Tensor[8, i32], name="objFifo_in1")
    out1 = fifo(Tensor[8, i32], name="objFifo_out1")
    out0 = out1.forward(Tensor[16, i32], name="objFifo_out0")
    add = declare("add_41_i32_8", source="add_one.cc", entry="add_one<8, 41>",
                  args=[buffer("a", Tensor[8, i32]), buffer("b", Tensor[8, i32], "out"),
                        scalar("n", i32)],
                  reference=add_ref, cycles=30, cost="one 8-lane vector add plus call overhead")

    @herd()
    def core():
        for _ in loop(8):
            with in1.consume() as a, out1.produce() as b:
                add(a, b, 8)

    with runtime() as rt:
        rt.drain(out0, out)
        rt.fill(in0, inp)
