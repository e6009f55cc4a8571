"""VSOp(Mul): IRON's ``basic/vector_scalar_mul`` re-expressed in aiedsl.

4096 int16 times an int32 factor on core (0, 2): a depth-2 fifo of 1024-element buffers in,
the factor through its own depth-2 fifo of one int32, a depth-2 fifo out, all shim <-> core
directly (three shim tasks, the drain waited for). The core acquires the factor once, then runs
4 iterations of: acquire output, acquire input, scale 1024 elements, release both.

Kernel: the library's ``scale`` is IRON's ``vector_scalar_mul_int16_vector`` (same contract);
its cost, 2(n/32) + 14 = 78 cycles for n = 1024, is the figure mlir-aie's programming guide
(section 4b) reports for that kernel on npu1.

Measured on npu1: 114.54 / 116.77 us (npu1-measured.md).
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i16, i32, loop, runtime
from aiedsl.kernels import scale

N = 4096
TILE = 1024


@design(device="npu1_1col")
def vsop_mul(inp: Tensor[N, i16], factor: Tensor[1, i32], out: Tensor[N, i16]):
    of_in = fifo(Tensor[TILE, i16], depth=2, name="in")
    of_factor = fifo(Tensor[1, i32], depth=2, name="infactor")
    of_out = fifo(Tensor[TILE, i16], depth=2, name="out")
    scale_k = scale(TILE)

    @herd()
    def core():
        with of_factor.consume() as f:
            for _ in loop(N // TILE):
                with of_out.produce() as dst, of_in.consume() as src:
                    scale_k(src, dst, f, TILE)

    with runtime() as rt:
        rt.fill(of_in, inp)
        rt.fill(of_factor, factor)
        rt.drain(of_out, out)


@vsop_mul.reference
def reference(inp: np.ndarray, factor: np.ndarray) -> np.ndarray:
    return (inp.astype(np.int64) * int(factor[0])).astype(np.int16)
