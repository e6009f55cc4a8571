"""VVOp(Mul): IRON's ``basic/vector_vector_mul`` re-expressed in aiedsl.

Two 256-element int32 vectors multiplied elementwise on core (0, 2): two depth-2 fifos of
16-element buffers in, one out, shim <-> core directly (three shim tasks, the drain waited
for). The core runs 16 iterations of: acquire both inputs and the output, multiply 16
elements, release all three: 48 acquires and 48 releases per run, the most lock operations
per byte of the calibration set.

Kernel: IRON's loop is an MLIR ``scf.for`` of two loads, ``arith.muli`` and a store inlined into
the core (no call), compiled by Peano, not vectorised. Cost estimate: 3 cycles per element
(two loads share the two load slots, the 32-bit scalar multiply's latency, one store) plus 8
for the loop: 56 cycles per 16 elements, under 1 us per run in all.

Measured on npu1: 120.18 / 119.95 us (npu1-measured.md).
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import buffer, declare

N = 256
TILE = 16


def mul_ref(a: np.ndarray, b: np.ndarray, c: np.ndarray, **_: object) -> None:
    c[...] = (a.astype(np.int64) * b.astype(np.int64)).astype(np.int32)


@design(device="npu1_1col")
def vvop_mul(a: Tensor[N, i32], b: Tensor[N, i32], c: Tensor[N, i32]):
    t = Tensor[TILE, i32]
    mul = declare(
        f"mul_elems_i32_{TILE}", source="iron_kernels.cc", entry=f"mul_elems_i32<{TILE}>",
        args=[buffer("a", t), buffer("b", t), buffer("c", t, "out")], reference=mul_ref,
        cycles=3 * TILE + 8, ops=TILE,
        cost="3 cycles per element + 8: IRON's inline scalar multiply loop compiled by Peano "
             "(bench/calibration/vvop_mul.py)")
    in1 = fifo(t, depth=2, name="in1")
    in2 = fifo(t, depth=2, name="in2")
    of_out = fifo(t, depth=2, name="out")

    @herd()
    def core():
        for _ in loop(N // TILE):
            with in1.consume() as x, in2.consume() as y, of_out.produce() as z:
                mul(x, y, z)

    with runtime() as rt:
        rt.fill(in1, a)
        rt.fill(in2, b)
        rt.drain(of_out, c)


@vvop_mul.reference
def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.astype(np.int64) * b.astype(np.int64)).astype(np.int32)
