# expect: kernel signature 32
# why: scale(TILE) called with n = TILE // 2: scale.cc is compiled for TILE elements and does not read n, so the NPU scales the whole tile while the call says half (the reference used to write half and the simulator disagreed with the C++).
"""Vector times scalar: int16 values multiplied by an int32 factor the core reads from a fifo.

The factor arrives once per run; the core then scales the vector tile by tile. The same design as
mlir-aie's IRON ``vector_scalar_mul`` example.

    aiedsl build designs/vector_scalar_mul.py
"""

import numpy as np

from aiedsl import Tensor, define, design, fifo, herd, i16, i32, loop, runtime
from aiedsl.kernels import scale

N = define("N", 4096, doc="elements of the vector")
TILE = define("TILE", 1024, doc="elements per kernel call")


@design(device="npu1_1col")
def vector_scalar_mul(inp: Tensor[N, i16], factor: Tensor[1, i32], out: Tensor[N, i16]):
    of_factor = fifo(Tensor[1, i32], name="infactor")
    of_in = fifo(Tensor[TILE, i16], name="in")
    of_out = fifo(Tensor[TILE, i16], name="out")
    scale_k = scale(TILE)

    @herd()
    def core():
        with of_factor.consume() as f:
            for _ in loop(N // TILE):
                with of_out.produce() as dst, of_in.consume() as src:
                    scale_k(src, dst, f, TILE // 2)

    with runtime() as rt:
        rt.fill(of_in, inp)
        rt.fill(of_factor, factor)
        rt.drain(of_out, out)


@vector_scalar_mul.reference
def reference(inp: np.ndarray, factor: np.ndarray) -> np.ndarray:
    return (inp.astype(np.int64) * int(factor[0])).astype(np.int16)
