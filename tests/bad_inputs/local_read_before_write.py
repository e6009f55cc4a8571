# expect: local 24
# why: a running sum kept in a core-local buffer declared with no initial value: the first add reads whatever the core's memory held (mlir-aie gives the aie.buffer no initial_value, and its memory is not cleared between designs or runs).
"""Running sum of tiles in a core-local buffer (IRON's Buffer handed to a Worker), copied out
at the end of the run."""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, local, loop, runtime
from aiedsl.kernels import add, passthrough


@design(device="npu1_1col")
def running_sum(inp: Tensor[128, i32], out: Tensor[16, i32]):
    a = fifo(Tensor[16, i32])
    b = fifo(Tensor[16, i32])
    acc = local(Tensor[16, i32])  # no initial=
    addk = add(Tensor[16, i32])
    copy = passthrough(Tensor[16, i32])

    @herd()
    def core():
        for _ in loop(8):
            with a.consume() as t:
                addk(acc, t, acc)
        with b.produce() as o:
            copy(acc, o)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)


@running_sum.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.reshape(8, 16).sum(axis=0)
