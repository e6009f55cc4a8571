"""int8 GEMM on the whole array: C = A @ B with int8 A and B, and int8 (default), int16 or int32 C.

The dataflow of designs/gemm_bf16.py: herd row y gets its rows of A through a memtile, broadcast
to the row's cores; herd column x its columns of B, broadcast down the column; a column's C tiles
are joined at its memtile, which packs A and B into the int8 mmul's blocks (4x8x8 on npu1, 8x8x8
on npu2) and unpacks C's. C is single-buffered, A and B double-buffered.

Knobs:
- OUT: C's type. ``i8`` (the default): C = sat8(round(A @ B / 2^SHIFT)), the exact sum shifted
  right by SHIFT, rounded to nearest (ties to even) and saturated to [-128, 127], where ACC says
  how often. ``i16``: the same, saturated to [-32768, 32767]. ``i32``: the exact sums (SHIFT
  must then be 0).
- ACC (OUT=i8 or i16): where a core sums its C tile over the K loop. ``i32``: in a core-local
  int32 tile (4 m n bytes of L1), narrowed into C once, after the last K step: the rounding
  above, once. ``c``: in C itself, which every one of the K/k matmul calls loads (shifted
  left), adds its K step to and narrows again (Taka et al.'s int8 GEMMs: a 112x112 or 144x144
  int32 tile does not fit 64 KB of L1 beside double-buffered A and B), so C is rounded and
  saturated K/k times: C_{j+1} = sat8(round((C_j 2^SHIFT + A_j B_j) / 2^SHIFT)), a partial sum
  clipped at 127 stays clipped whatever the later steps add, and the rounding errors of the K/k
  steps add up (``aiedsl check`` and ``sim`` say so in a note). Default: ``i32`` where it fits
  L1 with A, B and C, else ``c``.
- SHIFT: a narrow C's scale (0..23 for i8, 0..15 for i16). Default: round(log2(sqrt(K) 5461 /
  32)) for i8, 12 at K=512, which gives C a standard deviation of about 32 (a quarter of its
  range: some elements saturate, most do not) for A and B drawn uniformly over -128..127, as
  ``aiedsl sim`` draws them; for i16 the same with 8192, 4 at K=512.
- m, k, n: the core tile (m a multiple of 2r, k of s, n of 2t for the r x s x t mmul).
- K_MT: a run of K_MT (a multiple of k) of A's tile row and B's tile column staged in each
  memtile element and read from DRAM in runs of K_MT (Taka et al.'s k_mt); k: one core tile.

    aiedsl sim designs/gemm_i8.py
    aiedsl check designs/gemm_i8.py -D M=4032 -D K=4032 -D N=4032 -D m=112 -D k=112 -D n=112 \
        -D K_MT=672 -D SHIFT=9
    aiedsl check designs/gemm_i8.py --device npu2 -D COLS=8 -D M=4032 -D K=4032 -D N=4608 \
        -D m=144 -D k=72 -D n=144 -D K_MT=576 -D SHIFT=9
"""
import math

import numpy as np

from aiedsl import (
    Tensor, channel, define, design, gemm_runtime, herd, i8, i32, local, loop, memtile, refuse,
    runtime,
)
from aiedsl.kernels import block_dims, matmul, unblock_dims, zero
from aiedsl.kernels.library import matmul_narrow, srs
from aiedsl.lang.gemm import staged_inputs

M = define("M", 512, doc="rows of A and C")
K = define("K", 512, doc="columns of A, rows of B")
N = define("N", 512, doc="columns of B and C")
m = define("m", 64, doc="rows of a core's tile")
k = define("k", 64, doc="K step of a core")
n = define("n", 64, doc="columns of a core's tile")
ROWS = define("ROWS", 4, doc="herd rows")
COLS = define("COLS", 4, doc="herd columns")
OUT = define("OUT", "i8", doc="C's type: i8 or i16 (scaled by 2^-SHIFT, saturated) or i32")
narrow = OUT in ("i8", "i16")
C_BYTES = {"i8": 1, "i16": 2}.get(OUT, 4)
# a K-deep dot product of int8 drawn uniformly over -128..127 (what aiedsl sim draws) has a
# standard deviation of 5461 sqrt(K): this shift brings C's to a quarter of its range (32 for i8)
FULL_RANGE_SHIFT = round(math.log2(math.sqrt(K) * 5461.25 / 2 ** (8 * C_BYTES - 3)))
SHIFT = define("SHIFT", FULL_RANGE_SHIFT if narrow else 0,
               doc="an i8 or i16 C holds the sum shifted right by SHIFT bits (default for i8: "
               "12 at K=512, C's standard deviation about 32 for full-range random A and B)")
K_MT = define("K_MT", k, doc="K run of A and B staged in each memtile (a multiple of k)")
L1 = 64 * 1024 - 1024  # a core's data memory (npu1 and npu2) less its stack
# double-buffered A and B, a C tile, and an int32 tile of sums
sums_fit = 2 * (m * k + k * n) + C_BYTES * m * n + 4 * m * n <= L1
ACC = define("ACC", "i32" if narrow and sums_fit else "c",
             doc="OUT=i8 or i16: where a core sums C over K: i32 (an int32 tile, narrowed once) "
             "or c (C itself, narrowed at every K step)")
row_groups, col_groups = max(M // (m * ROWS), 1), max(N // (n * COLS), 1)  # see gemm_runtime
if SHIFT and not narrow:
    refuse("SHIFT", f"SHIFT={SHIFT} with OUT={OUT}: an {OUT} C is not scaled",
           limit=f"0 with OUT={OUT}, whose C holds the exact sums; SHIFT scales an i8 or i16 C",
           fix=f"leave -D SHIFT out with OUT={OUT}, or give -D OUT=i8 (or i16) for C = "
           f"sat(round(A @ B / 2^{SHIFT}))")
shift = SHIFT
if ACC not in ("i32", "c"):
    refuse("ACC", f"ACC={ACC} is not a place to sum C", limit="i32 or c",
           fix="give -D ACC=i32 (an int32 tile, C narrowed once) or -D ACC=c (C, narrowed at "
           "every K step)")
if ACC == "i32" and not narrow:
    refuse("ACC", f"ACC=i32 with OUT={OUT}", limit="ACC=i32 only with OUT=i8 or i16: an i32 C "
           "is already the int32 sum", fix="leave -D ACC out")
once = ACC == "i32"  # C narrowed once, from a core-local int32 tile of sums


@design(device="npu1")
def gemm_i8(A: Tensor[M, K, i8], B: Tensor[K, N, i8], C: Tensor[M, N, OUT]):
    mm = matmul(m, k, n, i8, i32 if once else OUT, shift=0 if once else shift)
    r, s, t = mm.ir.params["r"], mm.ir.params["s"], mm.ir.params["t"]
    if once:  # the sums in an int32 tile of each core's own, narrowed into C after the K loop
        zero_c = zero(Tensor[m, n, i32])
        narrow = matmul_narrow(m, n, i8, OUT, shift=shift)
        acc = local(Tensor[m, n, i32])
    else:
        zero_c = zero(Tensor[m, n, OUT])

    if K_MT != k:  # a K run of K_MT per memtile element, handed to the cores k at a time
        a, b = staged_inputs(Tensor[m, k, i8], Tensor[k, n, i8], k_run=K_MT,
                             herd=(COLS, ROWS), mmul=(r, s, t))
    else:  # one core tile per memtile element
        a = channel(Tensor[m, k, i8], shape=[ROWS], via=memtile, broadcast=COLS,
                    dims_to_stream=block_dims(m, k, r, s), name="a")
        b = channel(Tensor[k, n, i8], shape=[COLS], via=memtile, broadcast=ROWS,
                    dims_to_stream=block_dims(k, n, s, t), name="b")
    c = channel(Tensor[m, n, OUT], shape=[COLS, ROWS], via=memtile, join=1, depth=1,
                dims_to_stream=unblock_dims(m, n, r, t), name="c")

    @herd(cols=COLS, rows=ROWS)
    def core(x, y):
        for _ in loop(row_groups * col_groups):
            if once:
                zero_c(acc)
                for _ in loop(K // k):
                    with a[y].consume() as ta, b[x].consume() as tb:
                        mm(ta, tb, acc)
                with c[x, y].produce() as tc:
                    narrow(acc, tc)
            else:
                with c[x, y].produce() as tc:
                    zero_c(tc)
                    for _ in loop(K // k):
                        with a[y].consume() as ta, b[x].consume() as tb:
                            mm(ta, tb, tc)

    with runtime() as rt:
        gemm_runtime(rt, a, b, c, A, B, C, tile=(m, k, n), herd=(COLS, ROWS))


@gemm_i8.reference
def reference(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    A64, B64 = A.astype(np.int64), B.astype(np.int64)
    if not narrow:
        return (A64 @ B64).astype(OUT == "i32" and np.int32 or np.int64)
    out = np.dtype(np.int8 if OUT == "i8" else np.int16)
    if once:  # the exact sum, rounded and saturated once
        return srs(A64 @ B64, shift, out)
    # C itself rescaled, rounded and saturated as the kernel stores it, after every K step
    acc = np.zeros((M, N), dtype=out)
    for j in range(0, K, k):
        acc = srs((acc.astype(np.int64) << shift) + A64[:, j:j + k] @ B64[j:j + k], shift, out)
    return acc
