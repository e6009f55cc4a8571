"""Hang: the runtime waits for a drain before issuing the fill that feeds it.

Cause: the runtime sequence drains 'b', waits for it (``rt.sync()``), and only then fills 'a'.
The core cannot produce 'b' without 'a', and the fill of 'a' is never issued: the runtime
blocks its own input.

Mirrors: Xilinx/mlir-air PR #1705 (issuing a later transfer first blocks the control program
before the transfer a consumer transitively waits on is issued, deadlocking the sequence; the PR
adds ``air.runtime_hoist``) and Xilinx/mlir-aie#2653 (a wait emitted right after the first of two
drains freed a fill that the second drain depended on, and the application deadlocked).

Reported: statically, [hang: wait before fill]: from the fills issued before the sync, no
element of 'b' can be made, and the sync waits for four. (``aiedsl sim`` finds the same cycle:
its wait-for chain leads from the runtime's wait back to the runtime itself.)
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def sync_before_fill(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    b = fifo(Tensor[1024, i32], name="b")
    copy = passthrough(Tensor[1024, i32])

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as x, b.produce() as y:
                copy(x, y)

    with runtime() as rt:
        rt.drain(b, out)
        rt.sync()
        rt.fill(a, inp)


@sync_before_fill.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
