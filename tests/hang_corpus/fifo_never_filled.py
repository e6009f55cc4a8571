"""Hang: a core consumes a fifo that no runtime transfer fills.

Cause: the runtime sequence fills 'x' but the fill of 'y' was forgotten. The core blocks on its
first acquire of 'y'.

Mirrors: KULeuven-MICAS/stream PR #115 (a shim-produced object fifo with no transfer filling it:
the cores behind it blocked on their first acquire; the PR makes it a build error).

Reported: statically, while loading the design, [fifo producer].
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import add


@design(device="npu1_1col")
def fifo_never_filled(xs: Tensor[4096, i32], ys: Tensor[4096, i32], zs: Tensor[4096, i32]):
    x = fifo(Tensor[1024, i32], name="x")
    y = fifo(Tensor[1024, i32], name="y")
    z = fifo(Tensor[1024, i32], name="z")
    add_k = add(Tensor[1024, i32])

    @herd()
    def core():
        for _ in loop(4):
            with x.consume() as a, y.consume() as b, z.produce() as c:
                add_k(a, b, c)

    with runtime() as rt:
        rt.fill(x, xs)
        rt.drain(z, zs)


@fifo_never_filled.reference
def reference(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    return xs + ys
