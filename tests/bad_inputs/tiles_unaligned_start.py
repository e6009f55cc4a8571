# expect: tiles 22
# why: the first 16x2 i8 tile starts at byte 2, not on a 4-byte word.
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i8, i32, loop, runtime, tiles
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def direct(inp: Tensor[64, 64, i8], out: Tensor[4096, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    b = fifo(Tensor[1024, i32], name="b")
    copy = passthrough(Tensor[1024, i32])

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as x, b.produce() as y:
                copy(x, y)

    with runtime() as rt:
        rt.fill(a, inp, tiles(inp, (16, 2), cols=1))
        rt.drain(b, out)


@direct.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.reshape(-1)
