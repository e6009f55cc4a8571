# expect: define 9
# defines: N=8192
# why: -D N=8192 on a design whose N is a plain constant (N = 4096), not a define(): it said only to remove -D N.
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough

N = 4096


@design(device="npu1_1col")
def direct(inp: Tensor[N, i32], out: Tensor[N, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    b = fifo(Tensor[1024, i32], name="b")
    copy = passthrough(Tensor[1024, i32])

    @herd()
    def core():
        for _ in loop(N // 1024):
            with a.consume() as x, b.produce() as y:
                copy(x, y)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)


@direct.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
