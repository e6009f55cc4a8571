"""GEMM: IRON's ``basic/matrix_multiplication/whole_array`` (``-M 512 -K 512 -N 512``, i16)
re-expressed in aiedsl.

C = A @ B on 512x512 int16 matrices, C int16 (the low 16 bits of the sums), on the 4x4
cores of npu1 with 64x64x64 core tiles (the 4x4x4 i16 mmul). Shim column i reads row block i
of A (as 64x64 tiles, 128-byte runs) into memtile i, which packs it into 4x4 blocks and
broadcasts it to the four cores of core row i; and column block i of B into memtile i, packed
and broadcast down core column i; a column's four 64x64 C tiles are joined in its memtile,
unpacked to row-major order and written back in 128-byte runs. Every fifo is double-buffered,
as in the MLIR that ran. The runtime sequence is IRON's: per shim column, one drain of C (both
row groups), then per row group one fill of A and one of B: 20 tasks, four waits. Each core
computes 4 C tiles (2 row groups x 2 column groups): zero C, then 8 K steps of acquire A and
B, multiply-accumulate, release both.

Kernels: ``zero`` is the library's (IRON's ``zero_i16`` on 64x64: one 256-bit store per
cycle). ``matmul_i16_i16`` is IRON's ``mm.cc`` 2x2-unrolled mmul loop: per 2x2 patch of C (64
patches of 8x8) it loads four C blocks, runs K/4 = 16 steps of two A and two B block loads and
four 4x4x4 mmuls (one per cycle at 64 MACs/cycle: 4 cycles per step), then shifts, rounds and
stores the four blocks. We take 16 cycles per patch outside the inner loop (the C loads, four
``srs`` and stores, and the loop's prologue and epilogue, which Peano does not overlap with the
neighbouring patches), plus 20 per call: 64 * (4 * 16 + 16) + 20 = 5140 cycles, 80% of the
4096-cycle peak. mlir-aie issue #2735 traced this kernel (64x64x64 i16 on npu1) at "at most
~80%" of its ideal cycles. The estimate comes from the kernel, not from this row.

Measured on npu1: 413.04 / 422.93 us, min-max 326-571 / 322-585 (npu1-measured.md; also
``iron-generated-2025__GEMM.measured-npu1.txt``).
"""

import numpy as np

from aiedsl import Tensor, channel, design, gemm_runtime, herd, i16, loop, memtile, runtime
from aiedsl.kernels import block_dims, buffer, declare, unblock_dims, zero
from aiedsl.kernels.library import matmul_ref

M = K = N = 512
m = k = n = 64
R = S = T = 4  # the i16 mmul of AIE2
ROWS = COLS = 4
PATCH = 4 * (k // S) + 16  # cycles per 2x2 patch: 16 K steps of 4 mmuls, 16 outside the loop
row_groups, col_groups = M // (m * ROWS), N // (n * COLS)


def matmul_wrap_ref(a: np.ndarray, b: np.ndarray, c: np.ndarray, **params: int) -> None:
    """C += A @ B on blocked tiles, keeping the low 16 bits (as iron_kernels.cc does)."""
    wide = c.astype(np.int32)
    matmul_ref(a, b, wide, **params)
    c[...] = wide.astype(np.int16)


@design(device="npu1")
def gemm_i16(A: Tensor[M, K, i16], B: Tensor[K, N, i16], C: Tensor[M, N, i16]):
    mm = declare(
        f"matmul_i16_blocked_{m}x{k}x{n}", source="iron_kernels.cc",
        entry=f"matmul_i16_blocked<{m}, {k}, {n}>",
        args=[buffer("a", Tensor[m, k, i16]), buffer("b", Tensor[k, n, i16]),
              buffer("c", Tensor[m, n, i16], "inout")],
        reference=matmul_wrap_ref, cycles=(m // (2 * R)) * (n // (2 * T)) * PATCH + 20,
        ops=2 * m * k * n, params={"m": m, "k": k, "n": n, "r": R, "s": S, "t": T},
        cost="(m/8)(n/8)(4(k/4) + 16) + 20: IRON's 2x2-unrolled 4x4x4 i16 mmul loop, 80% "
             "of peak as mlir-aie #2735 traced it (bench/calibration/gemm_i16.py)")
    a = channel(Tensor[m, k, i16], shape=[ROWS], via=memtile, broadcast=COLS,
                dims_to_stream=block_dims(m, k, R, S), name="A")
    b = channel(Tensor[k, n, i16], shape=[COLS], via=memtile, broadcast=ROWS,
                dims_to_stream=block_dims(k, n, S, T), name="B")
    c = channel(Tensor[m, n, i16], shape=[COLS, ROWS], via=memtile, join=1, depth=2,
                dims_to_stream=unblock_dims(m, n, R, T), name="C")
    zero_c = zero(Tensor[m, n, i16])

    @herd(cols=COLS, rows=ROWS)
    def core(x, y):
        for _ in loop(row_groups * col_groups):
            with c[x, y].produce() as acc:
                zero_c(acc)
                for _ in loop(K // k):
                    with a[y].consume() as ta, b[x].consume() as tb:
                        mm(ta, tb, acc)

    with runtime() as rt:
        gemm_runtime(rt, a, b, c, A, B, C, tile=(m, k, n), herd=(COLS, ROWS))


@gemm_i16.reference
def reference(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return (A.astype(np.int64) @ B.astype(np.int64)).astype(np.int16)
