"""Copy(Kern): IRON's ``basic/passthrough_pykernel`` re-expressed in aiedsl.

4096 bytes (ui8) host -> core (0, 2) -> host through two depth-2 fifos of 1024-byte buffers,
shim to core directly (no memtile), one shim task each way, the drain waited for. The core
runs 4 iterations: acquire an output buffer, acquire an input buffer, copy 1024 bytes,
release both.

Kernel: IRON's ``passThroughLine`` is an MLIR ``scf.for`` of byte loads and stores inlined into
the core, compiled by Peano: not vectorised, one byte per iteration. Cost estimate: 2 cycles
per byte (the core's single store slot and the loop's address updates, unrolled and scheduled
by LLVM but not vectorised; a bare software-pipelined loop would reach 1 cycle per byte, an
unpipelined one about 8) plus 16 for loop set-up; the row cannot tell these apart (the four
calls are 2-8 us of a 118 us measurement whose two runs differ by 1 us and whose design
siblings scatter by 15 us).

Measured on npu1: 118.39 / 117.15 us (npu1-measured.md).
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, loop, runtime, u8
from aiedsl.kernels import buffer, declare, scalar

N = 4096
LINE = N // 4


def copy_ref(src: np.ndarray, dst: np.ndarray, width: int, **_: object) -> None:
    dst[:width] = src[:width]


@design(device="npu1_1col")
def copy_kern(inp: Tensor[N, u8], out: Tensor[N, u8]):
    line = Tensor[LINE, u8]
    copy_line = declare(
        f"copy_line_u8_{LINE}", source="iron_kernels.cc", entry=f"copy_line_u8<{LINE}>",
        args=[buffer("src", line), buffer("dst", line, "out"), scalar("width", "i32")],
        reference=copy_ref, cycles=2 * LINE + 16,
        cost="2 cycles per byte + 16: IRON's inline scalar byte loop compiled by Peano "
             "(not vectorised; bench/calibration/copy_kern.py)")
    of_in = fifo(line, depth=2, name="in")
    of_out = fifo(line, depth=2, name="out")

    @herd()
    def core():
        for _ in loop(N // LINE):
            with of_out.produce() as dst, of_in.consume() as src:
                copy_line(src, dst, LINE)

    with runtime() as rt:
        rt.fill(of_in, inp)
        rt.drain(of_out, out)


@copy_kern.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
