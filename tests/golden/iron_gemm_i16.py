"""IRON's whole-array GEMM (512^3 i16, 64x64x64 tiles, 4x4 cores), re-expressed in aiedsl.

The golden test compares it with ``iron-generated-2025__GEMM.mlir``: the same tiles, fifos, links,
layouts, kernel declarations and runtime DMA patterns. Its structure is ``designs/gemm_bf16.py``'s
with IRON's types (i16 in and out, 4x4x4 mmul blocks, double-buffered C).
"""

import numpy as np

from aiedsl import Tensor, channel, design, herd, i16, loop, memtile, runtime, tiles
from aiedsl.kernels import block_dims, buffer, declare, unblock_dims

M = K = N = 512
m = k = n = 64
ROWS = COLS = 4
R = S = T = 4


def _unused(*args: np.ndarray) -> None:
    raise NotImplementedError("golden-test design: compared as MLIR, never simulated")


@design(device="npu1")
def iron_gemm_i16(A: Tensor[M, K, i16], B: Tensor[K, N, i16], C: Tensor[M, N, i16]):
    tile = Tensor[m, k, i16]
    zero = declare("zero_i16", source="iron_mm_i16.cc", entry="zero", args=[buffer("c", tile, "out")],
                   reference=_unused, cycles=256, cost="-")
    mm = declare("matmul_i16_i16", source="iron_mm_i16.cc", entry="matmul",
                 args=[buffer("a", tile), buffer("b", tile), buffer("c", tile, "inout")],
                 reference=_unused, cycles=256, cost="-")
    a = channel(tile, shape=[ROWS], via=memtile, dims_to_stream=block_dims(m, k, R, S), name="A")
    b = channel(tile, shape=[COLS], via=memtile, dims_to_stream=block_dims(k, n, S, T), name="B")
    c = channel(tile, shape=[COLS, ROWS], via=memtile, join=1,
                dims_to_stream=unblock_dims(m, n, R, T), name="C")

    @herd(cols=COLS, rows=ROWS)
    def core(x, y):
        for _ in loop(4):
            with c[x, y].produce() as acc:
                zero(acc)
                for _ in loop(K // k):
                    with a[y].consume() as ta, b[x].consume() as tb:
                        mm(ta, tb, acc)

    with runtime() as rt:
        for i in range(COLS):
            rt.drain(c[i, :], C, tiles(C, (m, n), cols=range(i, N // n, COLS),
                                       order="grouped", group=ROWS))
            for rg in range(2):
                rt.fill(a[i], A, tiles(A, (m, k), rows=rg * ROWS + i, repeat=2))
                rt.fill(b[i], B, tiles(B, (k, n), cols=range(i, N // n, COLS),
                                       order="col"))
