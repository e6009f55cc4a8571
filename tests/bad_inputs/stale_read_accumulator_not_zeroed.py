# expect: stale read 31
# why: no zero_c(acc) before the matmuls: their "inout" C accumulates into a buffer just acquired by produce(), which holds whatever its DMA last sent from it (an earlier tile's sums), not zeros.
import numpy as np

from aiedsl import Tensor, bf16, channel, design, f32, gemm_runtime, herd, loop, memtile, runtime
from aiedsl.kernels import block_dims, matmul, unblock_dims, zero

M, K, N = 128, 128, 128
m, k, n = 64, 64, 64
ROWS, COLS = 2, 2


@design(device="npu1_2col")
def gemm(A: Tensor[M, K, bf16], B: Tensor[K, N, bf16], C: Tensor[M, N, f32]):
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
        with c[x, y].produce() as acc:
            for _ in loop(K // k):
                with a[y].consume() as ta, b[x].consume() as tb:
                    mm(ta, tb, acc)

    with runtime() as rt:
        gemm_runtime(rt, a, b, c, A, B, C, tile=(m, k, n), herd=(COLS, ROWS))


@gemm.reference
def reference(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return A.astype(np.float32) @ B.astype(np.float32)
