"""Hang: two cores exchange data, each holding its outgoing buffer while it waits for the other's.

Cause: a halo exchange between two neighbouring cores. Each core first acquires its outgoing
element ('e01' or 'e10', single-buffered), then waits for the incoming one before filling and
releasing the outgoing. Neither releases first: a wait-for cycle. More depth does not help; the
fix is to fill and release the outgoing element before acquiring the incoming one.

Mirrors: Xilinx/mlir-aie#2670 (a question on building a feedback loop in which two cores feed
each other through object fifos, each core reading the fifo the other one produces; the issue
settles on such a two-core exchange, proposed by the asker).

Reported: statically, [hang: core cycle]: each core stops at its acquire of the other's
element, in the bound of how far every core can get (the simulator's chain ends in the same cycle).
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import add, passthrough


@design(device="npu1_1col")
def halo_swap_cycle(in0: Tensor[4096, i32], in1: Tensor[4096, i32],
                    out0: Tensor[4096, i32], out1: Tensor[4096, i32]):
    a0 = fifo(Tensor[1024, i32], name="a0")
    a1 = fifo(Tensor[1024, i32], name="a1")
    e01 = fifo(Tensor[1024, i32], depth=1, name="e01")
    e10 = fifo(Tensor[1024, i32], depth=1, name="e10")
    r0 = fifo(Tensor[1024, i32], name="r0")
    r1 = fifo(Tensor[1024, i32], name="r1")
    copy = passthrough(Tensor[1024, i32])
    add_k = add(Tensor[1024, i32])

    @herd(rows=2)
    def core(x, y):
        mine, send, recv, res = (a0, e01, e10, r0) if y == 0 else (a1, e10, e01, r1)
        for _ in loop(4):
            with send.produce() as s, recv.consume() as n, mine.consume() as m:
                copy(m, s)
                with res.produce() as r:
                    add_k(m, n, r)

    with runtime() as rt:
        rt.fill(a0, in0)
        rt.fill(a1, in1)
        rt.drain(r0, out0)
        rt.drain(r1, out1)


@halo_swap_cycle.reference
def reference(in0: np.ndarray, in1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return in0 + in1, in1 + in0
