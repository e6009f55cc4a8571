# expect: shim task queue 34
# why: the sync waits for the drain of c, which needs none of the fills of a: the core takes no a before the second b, issued after the second batch of fills of a, so the queue of a's shim channel still holds fills 3 and 4 when four more are pushed; the NPU drops the fifth push and the run hangs. check once took the wait to retire every earlier transfer (only the simulator's count on its clocks found it); a waited drain now retires only the fills it is shown to have needed.
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def d(A: Tensor[8, 64, i32], B: Tensor[2, 64, i32], C: Tensor[64, i32], D: Tensor[9, 64, i32]):
    a = fifo(Tensor[64, i32], name="a")
    b = fifo(Tensor[64, i32], name="b")
    c = fifo(Tensor[64, i32], name="c")
    dd = fifo(Tensor[64, i32], name="dd")
    copy = passthrough(Tensor[64, i32])

    @herd()
    def core():
        with b.consume() as x, c.produce() as y:
            copy(x, y)
        with b.consume() as x, dd.produce() as y:
            copy(x, y)
        for _ in loop(8):
            with a.consume() as s, dd.produce() as t:
                copy(s, t)

    with runtime() as rt:
        for i in range(4):
            rt.fill(a, A, (i * 64, [64], [1]))
        rt.fill(b, B, (0, [64], [1]))
        rt.drain(c, C)
        rt.sync()
        for i in range(4, 8):
            rt.fill(a, A, (i * 64, [64], [1]))
        rt.fill(b, B, (64, [64], [1]))
        rt.drain(dd, D)


@d.reference
def reference(A, B):
    return B[0].copy(), np.concatenate([B[1:], A])
