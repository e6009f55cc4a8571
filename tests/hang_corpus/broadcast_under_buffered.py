"""Hang: a broadcast whose consumers are coupled through a second fifo runs out of buffers.

Cause: 'w' is broadcast to two cores. core[0,0] sums 3 elements of 'w' into 's' (in the shared
memory of the two neighbours) before it releases 's'; core[0,1] needs 's' before it takes any 'w'.
core[0,1]'s end of 'w' holds only 2 elements, and a broadcast element moves only when every
receiver takes it, so the third 'w' never reaches core[0,0]: a cycle through the broadcast. Every
count balances per run; depth 3 on core[0,1]'s end (``consumer_depth={"core[0,1]": 3}``) runs.

Mirrors: Xilinx/mlir-aie PR #3257 (a coupled multicast object fifo whose outstanding elements
outrun its buffer slack deadlocks; dropping the fan-out or the replay makes the same design run).

Reported: by running (exit code 3): the chain ends in a cycle through the broadcast.
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import add, zero


@design(device="npu1_1col")
def broadcast_under_buffered(w_in: Tensor[6, 256, i32], out: Tensor[6, 256, i32]):
    w = fifo(Tensor[256, i32], name="w")
    s = fifo(Tensor[256, i32], name="s")
    o = fifo(Tensor[256, i32], name="o")
    add_k = add(Tensor[256, i32])
    zero_k = zero(Tensor[256, i32])

    @herd(rows=2)
    def core(x, y):
        for _ in loop(2):
            if y == 0:
                with s.produce() as acc:
                    zero_k(acc)
                    for _ in loop(3):
                        with w.consume() as a:
                            add_k(a, acc, acc)
            else:
                with s.consume() as t:
                    for _ in loop(3):
                        with w.consume() as a, o.produce() as r:
                            add_k(a, t, r)

    with runtime() as rt:
        rt.fill(w, w_in)
        rt.drain(o, out)


@broadcast_under_buffered.reference
def reference(w_in: np.ndarray) -> np.ndarray:
    groups = w_in.reshape(2, 3, 256)
    return (groups + groups.sum(axis=1, keepdims=True)).reshape(6, 256)
