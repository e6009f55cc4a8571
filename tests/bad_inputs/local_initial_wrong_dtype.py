# expect: local 16
# why: the initial value of a core-local buffer is an int64 array (np.array's default) for an i32 buffer: its bytes are not the buffer's, and aiedsl converts no array (a value that does not fit would wrap).
"""Running sum of tiles in a core-local buffer (IRON's Buffer handed to a Worker), from a bias
given as its initial value."""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, local, loop, runtime
from aiedsl.kernels import add, passthrough


@design(device="npu1_1col")
def running_sum(inp: Tensor[128, i32], out: Tensor[16, i32]):
    a = fifo(Tensor[16, i32])
    b = fifo(Tensor[16, i32])
    acc = local(Tensor[16, i32], initial=np.arange(16))
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
    return inp.reshape(8, 16).sum(axis=0) + np.arange(16)
