# expect: kernel signature 21
# why: 70000 for the scalar of an i16 vector_scalar: its C++ casts the i32 scalar to int16_t, so the NPU would add 4464; the reference crashed with numpy's OverflowError.
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i16, loop, runtime
from aiedsl.kernels import vector_scalar

VALUE = 70000


@design(device="npu1_1col")
def vs(inp: Tensor[4096, i16], out: Tensor[4096, i16]):
    a = fifo(Tensor[1024, i16], name="a")
    c = fifo(Tensor[1024, i16], name="c")
    k = vector_scalar("add", Tensor[1024, i16])

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as x, c.produce() as y:
                k(x, y, VALUE)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(c, out)


@vs.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return (inp.astype(np.int64) + VALUE).astype(np.int16)
