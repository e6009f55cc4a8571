"""Hang: the core program ends still holding the scale factor it acquired once per run.

Cause: as in vector_scalar_mul, the factor arrives once per run; here it is taken with an
explicit ``acquire`` and never released. The NPU runs a core's program again and again: the
first run passes, the second starts without a free factor buffer and the host's next fill of
'infactor' waits forever.

Mirrors: Xilinx/mlir-air PR #1894 (a design whose single invocation is numerically correct times
out on its second invocation) and Xilinx/mlir-air#1557 (its ``omit_while_true_loop`` setting:
whether each core program is wrapped in an endless loop).

Reported: statically, [hang: held at end].
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i16, i32, loop, runtime
from aiedsl.kernels import scale


@design(device="npu1_1col")
def held_at_end(inp: Tensor[4096, i16], factor: Tensor[1, i32], out: Tensor[4096, i16]):
    of_factor = fifo(Tensor[1, i32], name="infactor")
    of_in = fifo(Tensor[1024, i16], name="in")
    of_out = fifo(Tensor[1024, i16], name="out")
    scale_k = scale(1024)

    @herd()
    def core():
        f = of_factor.acquire("consume")
        for _ in loop(4):
            with of_out.produce() as dst, of_in.consume() as src:
                scale_k(src, dst, f, 1024)

    with runtime() as rt:
        rt.fill(of_in, inp)
        rt.fill(of_factor, factor)
        rt.drain(of_out, out)


@held_at_end.reference
def reference(inp: np.ndarray, factor: np.ndarray) -> np.ndarray:
    return (inp.astype(np.int64) * int(factor[0])).astype(np.int16)
