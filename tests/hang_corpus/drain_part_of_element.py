"""Hang: a drain issued for part of an element, waited on before the rest is drained.

Cause: the core produces 1024-element tiles of 'b'; the runtime drains the first 512 values,
waits (``rt.sync()``), then drains the rest. A drain moves whole fifo elements: half an element
leaves the other half of the stream for a transfer the runtime has not issued, and the
transfer boundaries no longer match the elements.

(Draining whole elements in two waited batches is fine: tests/test_hangs.py shows it passes.)

Mirrors: Xilinx/mlir-aie#2653 (where the runtime sequence waits between drains decides whether
the application deadlocks).

Reported: statically, [fill/drain size].
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def drain_part_of_element(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
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
        rt.drain(b, out, (0, [512], [1]))
        rt.sync()
        rt.drain(b, out, (512, [3584], [1]))


@drain_part_of_element.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
