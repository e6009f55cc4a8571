"""Hang: two nested ``consume()`` of one fifo, expecting two elements.

Cause: ``with w.consume() as a, w.consume() as b`` acquires 'w' twice. An object-fifo acquire
means "hold at least n elements", not "take n more": the second acquire returns the element
already held, and the second release gives back an element the core does not hold, corrupting
the lock count. The way to get two elements is ``w.consume(2)``.

Mirrors: Xilinx/mlir-aie PR #3144 and PR #3308 (the lowering acquires only the difference between
what is asked and what the core already holds, tracked in a per-fifo "held" counter) and
Xilinx/mlir-aie#3620 (object-fifo depth semantics it proposes to clarify).

Reported: statically, [hang: release].
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import add


@design(device="npu1_1col")
def nested_consume_same_fifo(w_in: Tensor[8, 256, i32], out: Tensor[4, 256, i32]):
    w = fifo(Tensor[256, i32], name="w")
    o = fifo(Tensor[256, i32], name="o")
    add_k = add(Tensor[256, i32])

    @herd()
    def core():
        for _ in loop(4):
            with w.consume() as x, w.consume() as y, o.produce() as r:
                add_k(x, y, r)

    with runtime() as rt:
        rt.fill(w, w_in)
        rt.drain(o, out)


@nested_consume_same_fifo.reference
def reference(w_in: np.ndarray) -> np.ndarray:
    return w_in[0::2] + w_in[1::2]
