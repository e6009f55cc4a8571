"""MVAdd: IRON's ``basic/row_wise_bias_add`` re-expressed in aiedsl.

A 768x2304 f32 matrix plus a bias row of 2304 f32, on core (0, 2), shim <-> core directly:
the matrix is read in column blocks of 32 (72 blocks), each block's 768 rows as eight
depth-2 fifo elements of 96x32 (3072 f32); the bias as 72 elements of 32 f32 through its own
depth-2 fifo; the result goes back in the same column-block order. Three shim tasks (matrix,
bias, result; the result waited for), each one BD. The host pattern's contiguous run is one
block row, 32 f32 = 128 bytes: the channel issues 128-byte bursts (55,296 each way). The core
runs 72 x (acquire bias; 8 x (acquire input, acquire output, add, release both); release
bias).

Kernel: IRON's ``row_wise_bias_add_f32_f32`` adds the bias row to each of the 96 rows of the
tile with 16-lane f32 vectors: per row two loads, two adds and two 512-bit stores, which take
two cycles each on AIE2's 256-bit store path: 4 cycles per row, + 20 for the call and loop
fill: 4 * 96 + 20 = 404 cycles. The row cannot resolve it: each tile takes 3072 cycles to
arrive on one 4-byte-per-cycle channel.

Measured on npu1: 2375.98 / 2998.89 us (npu1-measured.md; a loose point: the two front ends
differ by 26% with the same dataflow).
"""

import numpy as np

from aiedsl import Tensor, design, f32, fifo, herd, loop, runtime
from aiedsl.kernels import buffer, declare

ROWS, COLS = 768, 2304
TR, TC = 96, 32  # one fifo element: 96 rows of one 32-column block
BLOCKS = COLS // TC
PER_BLOCK = ROWS // TR


def bias_add_ref(src: np.ndarray, bias: np.ndarray, dst: np.ndarray, **_: object) -> None:
    dst[...] = (src.reshape(TR, TC) + bias.reshape(1, TC)).reshape(dst.shape)


@design(device="npu1_1col")
def mvadd(inp: Tensor[ROWS, COLS, f32], bias: Tensor[COLS, f32], out: Tensor[ROWS, COLS, f32]):
    tile = Tensor[TR * TC, f32]
    add = declare(
        f"bias_add_rows_f32_{TR}x{TC}", source="iron_kernels.cc",
        entry=f"bias_add_rows_f32<{TR}, {TC}>",
        args=[buffer("src", tile), buffer("bias", Tensor[TC, f32]), buffer("dst", tile, "out")],
        reference=bias_add_ref, cycles=4 * TR + 20, ops=TR * TC,
        cost="4 per row + 20: IRON's 16-lane f32 row add, bound by two 512-bit stores per "
             "32-wide row (bench/calibration/mvadd.py)")
    in_fifo = fifo(tile, depth=2, name="in_fifo")
    bias_fifo = fifo(Tensor[TC, f32], depth=2, name="bias_fifo")
    out_fifo = fifo(tile, depth=2, name="out_fifo")

    @herd()
    def core():
        for _ in loop(BLOCKS):
            with bias_fifo.consume() as b:
                for _ in loop(PER_BLOCK):
                    with in_fifo.consume() as src, out_fifo.produce() as dst:
                        add(src, b, dst)

    blocks = (0, [BLOCKS, ROWS, TC], [TC, COLS, 1])  # column block, row, element
    with runtime() as rt:
        rt.fill(in_fifo, inp, blocks)
        rt.fill(bias_fifo, bias)
        rt.drain(out_fifo, out, blocks)


@mvadd.reference
def reference(inp: np.ndarray, bias: np.ndarray) -> np.ndarray:
    return inp + bias.reshape(1, COLS)
