"""bf16 GEMM on the whole array: C = A @ B with bf16 A and B, and f32 (default) or bf16 C.

Herd row y gets its rows of A through a memtile, broadcast to the row's cores; herd column x its
columns of B, broadcast down the column; a column's C tiles are joined at its memtile, which packs
A and B into the mmul's blocks and unpacks C's (the host sees row-major matrices). C is single-,
A and B double-buffered. Knobs (defaults: the 64x64x64 f32 GEMM): OUT=f32|bf16 (bf16: f32 sums
rounded at every K step, half the L1), the core tile m x k x n, and K_MT: a K run (a multiple of
k) of A and B per memtile element, read from DRAM in runs of K_MT (Taka et al.'s k_mt). Taka's:
    aiedsl check designs/gemm_bf16.py -D M=4224 -D K=4032 -D N=4224 -D m=96 -D k=56 -D n=96 \
        -D OUT=bf16 -D K_MT=448     (npu2: --device npu2 -D COLS=8 -D M=4032 -D K=4032 \
        -D N=4608 -D m=112 -D k=48 -D n=96 -D OUT=bf16 -D K_MT=336; README "The GEMM designs")
"""

import numpy as np

from aiedsl import Tensor, bf16, channel, define, design, gemm_runtime, herd, loop, memtile, runtime
from aiedsl.kernels import block_dims, matmul, unblock_dims, zero
from aiedsl.lang.gemm import staged_inputs

M = define("M", 512, doc="rows of A and C")
K = define("K", 512, doc="columns of A, rows of B")
N = define("N", 512, doc="columns of B and C")
m = define("m", 64, doc="rows of a core's tile")
k = define("k", 64, doc="K step of a core")
n = define("n", 64, doc="columns of a core's tile")
ROWS = define("ROWS", 4, doc="herd rows")
COLS = define("COLS", 4, doc="herd columns")
OUT = define("OUT", "f32", doc="C's type: f32, or bf16 (f32 sums rounded at every K step)")
K_MT = define("K_MT", k, doc="K run of A and B staged in each memtile (a multiple of k)")
row_groups, col_groups = max(M // (m * ROWS), 1), max(N // (n * COLS), 1)  # see gemm_runtime


@design(device="npu1")
def gemm_bf16(A: Tensor[M, K, bf16], B: Tensor[K, N, bf16], C: Tensor[M, N, OUT]):
    mm = matmul(m, k, n, bf16, OUT)
    r, s, t = mm.ir.params["r"], mm.ir.params["s"], mm.ir.params["t"]
    if K_MT != k:  # a K run of K_MT per memtile element, handed to the cores k at a time
        a, b = staged_inputs(Tensor[m, k, bf16], Tensor[k, n, bf16], k_run=K_MT,
                             herd=(COLS, ROWS), mmul=(r, s, t))
    else:  # one core tile per memtile element
        a = channel(Tensor[m, k, bf16], shape=[ROWS], via=memtile, broadcast=COLS,
                    dims_to_stream=block_dims(m, k, r, s), name="a")
        b = channel(Tensor[k, n, bf16], shape=[COLS], via=memtile, broadcast=ROWS,
                    dims_to_stream=block_dims(k, n, s, t), name="b")
    c = channel(Tensor[m, n, OUT], shape=[COLS, ROWS], via=memtile, join=1, depth=1,
                dims_to_stream=unblock_dims(m, n, r, t), name="c")
    zero_c = zero(Tensor[m, n, OUT])
    @herd(cols=COLS, rows=ROWS)  # noqa: E306 (the lowering fixtures pin these lines)
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
    A32, B32 = A.astype(np.float32), B.astype(np.float32)
    if OUT != "bf16":
        return A32 @ B32
    # a bf16 C is rounded (to nearest even) as the kernel stores it, after every K step
    acc = np.zeros((M, N), dtype=A.dtype)
    for j in range(0, K, k):
        acc = (acc.astype(np.float32) + A32[:, j:j + k] @ B32[j:j + k]).astype(A.dtype)
    return acc
