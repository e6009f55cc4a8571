"""bf16 GEMM on a row of four cores that split K and pass partial sums by the cascade.

C = A @ B, bf16 in, f32 out, as mlir-aie's ``matrix_multiplication_using_cascade``: core j
multiplies A's j-th quarter of columns by B's j-th quarter of rows. Core 0 puts its product on
the accumulator cascade, cores 1 and 2 add theirs and pass it on, and core 3 adds the last and
writes the C tile, which its memtile unpacks for the host. No partial sum goes through memory.

    aiedsl run designs/matmul_cascade.py
    aiedsl run designs/matmul_cascade.py -D M=256 -D N=256
    aiedsl sim designs/matmul_cascade.py --device npu2    (4x8x8 mmuls: two words a C block)
"""

import numpy as np

from aiedsl import Tensor, bf16, channel, define, design, f32, herd, loop, memtile, runtime, tiles
from aiedsl.kernels import block_dims, matmul_cascade, unblock_dims

M = define("M", 128, doc="rows of A and C")
K = define("K", 256, doc="columns of A, rows of B (split over the four cores)")
N = define("N", 128, doc="columns of B and C")
m = define("m", 64, doc="rows of a C tile")
n = define("n", 64, doc="columns of a C tile")
CORES = 4
KC = K // CORES  # each core's share of K
ROLES = ["put"] + ["put_get"] * (CORES - 2) + ["get"]


@design(device="npu1")
def gemm_cascade(A: Tensor[M, K, bf16], B: Tensor[K, N, bf16], C: Tensor[M, N, f32]):
    stages = [matmul_cascade(m, KC, n, role) for role in ROLES]
    r, s, t = (stages[0].ir.params[p] for p in "rst")
    # core j's quarter of A's columns and of B's rows, packed into mmul blocks at the memtile
    a = channel(Tensor[m, KC, bf16], shape=[CORES], via=memtile,
                dims_to_stream=block_dims(m, KC, r, s), name="a")
    b = channel(Tensor[KC, n, bf16], shape=[CORES], via=memtile,
                dims_to_stream=block_dims(KC, n, s, t), name="b")
    c = channel(Tensor[m, n, f32], shape=[1], via=memtile, depth=1,
                dims_to_stream=unblock_dims(m, n, r, t), name="c")

    @herd(cols=CORES, rows=1, cascade="east")
    def core(x, _):
        for _ in loop((M // m) * (N // n)):  # C's tiles, column by column
            with a[x].consume() as ta, b[x].consume() as tb:
                if x < CORES - 1:
                    stages[x](ta, tb)
                else:
                    with c[0].produce() as tc:
                        stages[x](ta, tb, tc)

    with runtime() as rt:
        for j in range(CORES):
            # A's column of tiles, once per column of C; B's tile of each C column, once per
            # C tile in that column
            rt.fill(a[j], A, tiles(A, (m, KC), cols=j, repeat=N // n))
            for cn in range(N // n):
                rt.fill(b[j], B, tiles(B, (KC, n), rows=j, cols=cn, repeat=M // m))
        rt.drain(c[0], C, tiles(C, (m, n), order="col"))


@gemm_cascade.reference
def reference(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return A.astype(np.float32) @ B.astype(np.float32)
