# expect: herd placement 20
# defines: COLS=2000 ROWS=2000
# why: -D COLS=2000 -D ROWS=2000: a 4,000,000-core herd.
import numpy as np

from aiedsl import Tensor, define, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


COLS = define("COLS", 1)
ROWS = define("ROWS", 1)


@design(device="npu1_1col")
def direct(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    b = fifo(Tensor[1024, i32], name="b")
    copy = passthrough(Tensor[1024, i32])

    @herd(cols=COLS, rows=ROWS)
    def core(col, row):
        for _ in loop(4):
            if (col, row) == (0, 0):
                with a.consume() as x, b.produce() as y:
                    copy(x, y)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)


@direct.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
