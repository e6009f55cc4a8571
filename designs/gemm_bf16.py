"""bf16 GEMM on the whole npu1 array: C (f32) = A @ B on a 4x4 herd with 64x64x64 core tiles.

Each herd row y gets its rows of A through its own memtile, broadcast to every core of the row;
each herd column x gets its columns of B through a memtile, broadcast down the column; the four
C tiles of a column are joined at the memtile. The memtiles pack A and B into the 4x8 and 8x4
blocks of the bf16 mmul and unpack C's 4x4 blocks, so the host sees plain row-major matrices.
C is single-buffered (double-buffering it would not fit 64 KB of L1; Taka et al. found single
buffered C faster anyway).

    aiedsl build designs/gemm_bf16.py
    aiedsl build designs/gemm_bf16.py -D M=1024 -D N=1024
    aiedsl build designs/gemm_bf16.py --device npu2 -D COLS=8
"""

import numpy as np

from aiedsl import (
    Tensor, bf16, channel, define, design, f32, gemm_runtime, herd, loop, memtile, runtime,
)
from aiedsl.kernels import block_dims, matmul, unblock_dims, zero

M = define("M", 512, doc="rows of A and C")
K = define("K", 512, doc="columns of A, rows of B")
N = define("N", 512, doc="columns of B and C")
m = define("m", 64, doc="rows of a core's tile")
k = define("k", 64, doc="K step of a core")
n = define("n", 64, doc="columns of a core's tile")
ROWS = define("ROWS", 4, doc="herd rows")
COLS = define("COLS", 4, doc="herd columns")

row_groups = M // (m * ROWS)  # passes of the herd over C's tile rows
col_groups = N // (n * COLS)  # and over its tile columns


@design(device="npu1")
def gemm_bf16(A: Tensor[M, K, bf16], B: Tensor[K, N, bf16], C: Tensor[M, N, f32]):
    mm = matmul(m, k, n, bf16, f32)
    r, s, t = mm.ir.params["r"], mm.ir.params["s"], mm.ir.params["t"]
    zero_c = zero(Tensor[m, n, f32])

    a = channel(Tensor[m, k, bf16], shape=[ROWS], via=memtile, broadcast=COLS,
                dims_to_stream=block_dims(m, k, r, s), name="a")
    b = channel(Tensor[k, n, bf16], shape=[COLS], via=memtile, broadcast=ROWS,
                dims_to_stream=block_dims(k, n, s, t), name="b")
    c = channel(Tensor[m, n, f32], shape=[COLS, ROWS], via=memtile, join=1, depth=1,
                dims_to_stream=unblock_dims(m, n, r, t), name="c")

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


@gemm_bf16.reference
def reference(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return A.astype(np.float32) @ B.astype(np.float32)
