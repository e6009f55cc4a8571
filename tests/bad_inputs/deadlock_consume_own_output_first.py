# expect: hang: core cycle 26
# run: sim
# why: a core consumes, before producing it, a fifo it produces itself.
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def direct(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    b = fifo(Tensor[1024, i32], name="b")
    loopback = fifo(Tensor[1024, i32], name="loopback")
    copy = passthrough(Tensor[1024, i32])

    @herd()
    def core():
        for _ in loop(4):
            with loopback.consume() as prev, a.consume() as x:
                with loopback.produce() as nxt:
                    copy(x, nxt)
                with b.produce() as y:
                    copy(prev, y)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)


@direct.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
