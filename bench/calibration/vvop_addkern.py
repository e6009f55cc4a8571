"""VVOp(AddKern): IRON's ``ml/eltwise_add`` re-expressed in aiedsl.

Elementwise sum of two 65536-element bf16 vectors on two cores, (0, 2) and (0, 3): each input
is one shim task into a depth-2 fifo of 2048 elements that the memtile splits into two depth-2
fifos of 1024, one per core; the cores' depth-2 output fifos of 1024 are joined in the memtile
and drained by one shim task (waited for): three tasks on three shim channels. Each core runs
32 iterations of: acquire output, acquire A, acquire B, add 1024 elements, release all three.

Kernel: IRON's ``eltwise_add_bf16_vector`` loops over 16-lane (256-bit) bf16 vectors; AIE2 has
no bf16 vector adder, so each step widens both operands to the float accumulator, adds there
and rounds back (two loads, two widenings, one accumulator add, one narrowing, one store).
Estimate: 2 cycles per 16 elements, software-pipelined, plus 20 for fill, drain and call:
2 * 1024/16 + 20 = 148 cycles per call.

Measured on npu1: 179.44 / 171.35 us, min-max 148-360 / 148-363 (npu1-measured.md).
"""

import ml_dtypes
import numpy as np

from aiedsl import Tensor, bf16, design, fifo, herd, join, loop, runtime
from aiedsl.kernels import buffer, declare

N = 65536
PART = 1024
CORES = 2
LANES = 16


def add_ref(a: np.ndarray, b: np.ndarray, c: np.ndarray, **_: object) -> None:
    c[...] = (a.astype(np.float32) + b.astype(np.float32)).astype(ml_dtypes.bfloat16)


@design(device="npu1_1col")
def vvop_addkern(a: Tensor[N, bf16], b: Tensor[N, bf16], c: Tensor[N, bf16]):
    t = Tensor[PART, bf16]
    add = declare(
        f"add_elems_bf16_{PART}", source="iron_kernels.cc", entry=f"add_elems_bf16<{PART}>",
        args=[buffer("a", t), buffer("b", t), buffer("c", t, "out")], reference=add_ref,
        cycles=2 * (PART // LANES) + 20, ops=PART,
        cost="2(n/16) + 20: IRON's 16-lane bf16 add through the float accumulator "
             "(bench/calibration/vvop_addkern.py)")
    in_a = fifo(Tensor[CORES * PART, bf16], depth=2, name="inA")
    in_b = fifo(Tensor[CORES * PART, bf16], depth=2, name="inB")
    mem_a = in_a.split(CORES, names=[f"memA{i}" for i in range(CORES)])
    mem_b = in_b.split(CORES, names=[f"memB{i}" for i in range(CORES)])
    mem_c = [fifo(t, depth=2, name=f"memC{i}") for i in range(CORES)]
    out_c = join(mem_c, name="outC")

    @herd(rows=CORES)
    def core(x, y):
        for _ in loop(N // (CORES * PART)):
            with mem_c[y].produce() as dst, mem_a[y].consume() as xa, \
                    mem_b[y].consume() as xb:
                add(xa, xb, dst)

    with runtime() as rt:
        rt.fill(in_a, a)
        rt.fill(in_b, b)
        rt.drain(out_c, c)


@vvop_addkern.reference
def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.astype(np.float32) + b.astype(np.float32)).astype(ml_dtypes.bfloat16)
