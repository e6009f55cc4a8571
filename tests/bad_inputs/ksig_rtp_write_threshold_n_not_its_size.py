# expect: kernel signature 47
# why: the threshold kernel's n comes from rtp slot 1, which the runtime writes LINE // 2: threshold.cc is compiled for LINE pixels and does not read n, so the NPU would truncate whole lines; the value is known when the design is checked.
"""Threshold with a runtime parameter: two columns truncate uint8 pixels at a threshold the host
writes while the design runs, so one xclbin serves every threshold.

Each column's core truncates its half of the image line by line (``min(pixel, threshold)``,
mlir-aie's ``two_col`` threshold kernel), reading the threshold from a runtime-parameter buffer
in its own memory (``rtp``, IRON's ``Buffer(..., use_write_rtp=True)``) before every call. The
runtime sequence runs the image twice in one invocation: it writes threshold A, sends the image
and waits for the result, then writes threshold B and does it again. ``out`` holds both
results, A's then B's.

    aiedsl sim designs/threshold_rtp.py
    aiedsl sim designs/threshold_rtp.py -D THR_A=10 -D THR_B=250
"""

import numpy as np

from aiedsl import Tensor, define, design, fifo, herd, i32, loop, rtp, runtime, shim, u8
from aiedsl.kernels import threshold

N = define("N", 8192, doc="pixels of the image")
LINE = define("LINE", 512, doc="pixels per kernel call")
THR_A = define("THR_A", 50, doc="threshold of the first pass")
THR_B = define("THR_B", 200, doc="threshold of the second pass")
COLS = 2
HALF = N // COLS


@design(device="npu1_2col")
def threshold_rtp(inp: Tensor[N, u8], out: Tensor[2 * N, u8]):
    ins = [fifo(Tensor[LINE, u8], name=f"in{c}", shim=shim(c)) for c in range(COLS)]
    outs = [fifo(Tensor[LINE, u8], name=f"out{c}", shim=shim(c)) for c in range(COLS)]
    thr = [rtp(Tensor[16, i32], name=f"thr{c}") for c in range(COLS)]  # one per core
    trunc = threshold(LINE)

    @herd(cols=COLS)
    def core(x, y):
        for _ in loop(2 * HALF // LINE):  # both passes
            with ins[x].consume() as src, outs[x].produce() as dst:
                trunc(src, dst, thr[x][0], thr[x][1])  # n from the rtp too

    with runtime() as rt:
        for p, level in enumerate((THR_A, THR_B)):
            for c in range(COLS):
                rt.rtp_write(thr[c], 0, level)
                rt.rtp_write(thr[c], 1, LINE // 2)
            for c in range(COLS):
                rt.fill(ins[c], inp, (c * HALF, [HALF], [1]))
                rt.drain(outs[c], out, (p * N + c * HALF, [HALF], [1]))
            rt.sync()  # every call of this pass is done before the threshold changes


@threshold_rtp.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return np.concatenate([np.minimum(inp, np.uint8(THR_A)), np.minimum(inp, np.uint8(THR_B))])
