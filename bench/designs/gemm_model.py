"""A whole-array GEMM of any dtypes and tile shape, for timing studies.

No longer used by bench/calibrate.py, whose GEMM rows run bench/calibration/gemm_i16.py (IRON's
measured GEMM, its kernel's cost reasoned from mm.cc) and the shipped designs/gemm_bf16.py and
designs/gemm_i8.py (Taka et al.'s settings); kept for quick what-if studies of an efficiency.

Same dataflow as designs/gemm_bf16.py; its matmul kernel is declared here with a cost model
instead of coming from the library, so dtypes and tiles the shipped C++ does not cover (IRON's
i16 GEMM, Taka et al.'s bf16-output tiles) can be timed. Not for building: there is no C++ for
these kernels.

Cost model (cycles per call): m*k*n / (peak MACs per cycle * EFF) + OVERHEAD, where EFF is the
kernel's fraction of peak in its inner loop and OVERHEAD the per-call cost; both are defines.
"""

import numpy as np

from aiedsl import (
    Tensor, channel, define, design, gemm_runtime, herd, loop, memtile, runtime,
)
from aiedsl.dtypes import dtype
from aiedsl.kernels import block, block_dims, buffer, declare, unblock, unblock_dims
from aiedsl.targets import get_target

M = define("M", 512)
K = define("K", 512)
N = define("N", 512)
m = define("m", 64)
k = define("k", 64)
n = define("n", 64)
ROWS = define("ROWS", 4)
COLS = define("COLS", 4)
IN = define("IN", "i16", doc="input dtype")
OUT = define("OUT", "i16", doc="output dtype")
EFF = define("EFF", 0.75, doc="kernel inner-loop fraction of peak MACs")
OVERHEAD = define("OVERHEAD", 400, doc="cycles per kernel call outside the inner loop")
C_DEPTH = define("C_DEPTH", 1, doc="buffers of C per core")
DEVICE = define("DEVICE", "npu1")

target = get_target(DEVICE)
R, S, T = target.mmul_shapes[IN]
acc = "f32" if IN == "bf16" else "i32"
PEAK = target.macs_per_cycle[f"{IN}_{acc}"]
row_groups = M // (m * ROWS)
col_groups = N // (n * COLS)


def mm_ref(a, b, c, **_):
    A = unblock(a.reshape(-1), m, k, R, S).astype(np.float64)
    B = unblock(b.reshape(-1), k, n, S, T).astype(np.float64)
    C = unblock(c.reshape(-1), m, n, R, T).astype(np.float64)
    c.reshape(-1)[...] = block(C + A @ B, R, T).astype(c.dtype)


def zero_ref(c, **_):
    c[...] = 0


@design(device=DEVICE)
def gemm_model(A: Tensor[M, K, IN], B: Tensor[K, N, IN], C: Tensor[M, N, OUT]):
    at, bt, ct = Tensor[m, k, IN], Tensor[k, n, IN], Tensor[m, n, OUT]
    mm = declare(f"mm_{IN}_{OUT}_{m}x{k}x{n}", source="-", entry="-",
                 args=[buffer("a", at), buffer("b", bt), buffer("c", ct, "inout")],
                 reference=mm_ref, cycles=int(m * k * n / (PEAK * EFF) + OVERHEAD),
                 ops=2 * m * k * n, cost=f"m*k*n/({PEAK}*{EFF}) + {OVERHEAD}")
    zero = declare(f"zero_{OUT}_{m * n}", source="-", entry="-", args=[buffer("c", ct, "out")],
                   reference=zero_ref, cycles=m * n * dtype(OUT).itemsize // 32 + 14,
                   cost="bytes/32 + 14")
    a = channel(at, shape=[ROWS], via=memtile, dims_to_stream=block_dims(m, k, R, S), name="a")
    b = channel(bt, shape=[COLS], via=memtile, dims_to_stream=block_dims(k, n, S, T), name="b")
    c = channel(ct, shape=[COLS, ROWS], via=memtile, join=1, depth=C_DEPTH,
                dims_to_stream=unblock_dims(m, n, R, T), name="c")

    @herd(cols=COLS, rows=ROWS)
    def core(x, y):
        for _ in loop(row_groups * col_groups):
            with c[x, y].produce() as tile_c:
                zero(tile_c)
                for _ in loop(K // k):
                    with a[y].consume() as ta, b[x].consume() as tb:
                        mm(ta, tb, tile_c)

    with runtime() as rt:
        gemm_runtime(rt, a, b, c, A, B, C, tile=(m, k, n), herd=(COLS, ROWS))


@gemm_model.reference
def reference(A, B):
    return (A.astype(np.float64) @ B.astype(np.float64)).astype(dtype(OUT).numpy)
