"""ColorThreshold: IRON's ``vision/color_threshold`` re-expressed in aiedsl.

A 1920x1080 single-channel u8 image (2,073,600 bytes) thresholded on four cores, (0, 2) to
(0, 5): one shim task reads the whole image contiguously into a depth-2 fifo of 7680-byte
buffers (four lines) that the memtile splits into four depth-2 fifos of 1920 bytes, one line
per core; each core's depth-2 output fifo of 1920 bytes is joined in the memtile into 7680-byte
buffers that one shim task writes back contiguously (waited for): two tasks, one shim channel
each way. Each core runs 270 iterations of: acquire input, acquire output, threshold 1920
bytes, release both. As in the MLIR that ran, each core reads its threshold, maximum and type
from a run-time parameter buffer of its own, which the runtime sequence writes first (50, 255,
0: binary): twelve register writes the firmware issues before the transfers. IRON's unused
second runtime argument is left out.

Kernel: IRON's ``thresholdLine`` (``aie_kernels/aie2/threshold.cc``) runs the binary threshold
over 64-lane u8 vectors: per vector one load, one compare against the threshold, one select
between the maximum and zero, one store; the store slot bounds it at one vector per cycle,
and we take 2 cycles per vector for the compare-select dependency left after software
pipelining, plus 20 for the call's set-up and loop fill: 2 * 1920/64 + 20 = 80 cycles per line.
The row cannot resolve it: a core's line arrives in 1920/4 = 480 cycles of a shim channel that
serves the four cores in turn, so each core has about 1920 cycles per line.

Measured on npu1: 672.07 / 677.56 us (npu1-measured.md).
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, join, loop, rtp, runtime, u8
from aiedsl.kernels import buffer, declare, scalar

WIDTH, HEIGHT = 1920, 1080
N = WIDTH * HEIGHT
CORES = 4
LANES = 64
THRESH, MAX_VALUE, BINARY = 50, 255, 0


def threshold_ref(src: np.ndarray, dst: np.ndarray, width: int, thresh: int, max_value: int,
                  kind: int, **_: object) -> None:
    dst[:width] = np.where(src[:width] > thresh, max_value, 0).astype(dst.dtype)


@design(device="npu1_1col")
def color_threshold(inp: Tensor[N, u8], out: Tensor[N, u8]):
    line = Tensor[WIDTH, u8]
    threshold = declare(
        f"threshold_line_u8_{WIDTH}", source="iron_kernels.cc",
        entry=f"threshold_line_u8<{WIDTH}>",
        args=[buffer("src", line), buffer("dst", line, "out"), scalar("width", "i32"),
              scalar("thresh", "i32", narrows_to="i16"),
              scalar("max_value", "i32", narrows_to="i16"), scalar("kind", "i32", narrows_to="i8")],
        reference=threshold_ref, cycles=2 * (WIDTH // LANES) + 20,
        cost="2(n/64) + 20: IRON's 64-lane u8 compare and select, one store per vector "
             "(bench/calibration/color_threshold.py)")
    in_l2 = fifo(Tensor[CORES * WIDTH, u8], depth=2, name="inOOB_L3L2")
    in_l1 = in_l2.split(CORES, names=[f"inOOB_L2L1_{i}" for i in range(CORES)])
    out_l1 = [fifo(line, depth=2, name=f"outOOB_L1L2_{i}") for i in range(CORES)]
    out_l2 = join(out_l1, name="outOOB_L2L3")
    params = [rtp(Tensor[16, i32], name=f"rtpComputeTile{2 + i}") for i in range(CORES)]

    @herd(rows=CORES)
    def core(x, y):
        for _ in loop(N // (CORES * WIDTH)):
            with in_l1[y].consume() as src, out_l1[y].produce() as dst:
                threshold(src, dst, WIDTH, params[y][0], params[y][1], params[y][2])

    with runtime() as rt:
        for p in params:
            for slot, value in enumerate((THRESH, MAX_VALUE, BINARY)):
                rt.rtp_write(p, slot, value)
        rt.fill(in_l2, inp)
        rt.drain(out_l2, out)


@color_threshold.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return np.where(inp > THRESH, MAX_VALUE, 0).astype(np.uint8)
