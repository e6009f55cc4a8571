"""Hang: the runtime fills fewer elements than the core consumes.

Cause: the host tensor holds 3 tiles but the core's loop takes 4: after the third tile the core
waits for a fourth that no transfer will send, and the drain of 'b' never completes.

Mirrors: KULeuven-MICAS/stream PR #115 (only the first fifo got a runtime transfer; the cores
behind the others blocked on their first acquire, and the design hung on hardware) and
Xilinx/mlir-air#1512 (data movement silently dropped, leaving consumers without data).

Reported: statically, [balance].
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def fill_fewer(inp: Tensor[3072, i32], out: Tensor[4096, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    b = fifo(Tensor[1024, i32], name="b")
    copy = passthrough(Tensor[1024, i32])

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as x, b.produce() as y:
                copy(x, y)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)


@fill_fewer.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return np.concatenate([inp, inp[:1024]])
