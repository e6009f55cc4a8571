# expect: herd 16
# why: an async def core function only makes a coroutine when @herd calls it: none of its body is traced (Python warned, from inside aiedsl, that it was never awaited).
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def direct(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    b = fifo(Tensor[1024, i32], name="b")
    copy = passthrough(Tensor[1024, i32])

    @herd()
    async def core():
        for _ in loop(4):
            with a.consume() as x, b.produce() as y:
                copy(x, y)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)


@direct.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
