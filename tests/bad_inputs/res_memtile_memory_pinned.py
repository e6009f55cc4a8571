# expect: memtile data memory 17
# defines: TILE=49152
# why: two forwards of 384 KB each pinned to one 512 KB memtile of npu1, where the placer would put the second on the next memtile.
import numpy as np

from aiedsl import Tensor, define, design, fifo, i32, memtile, runtime

N = define("N", 98304, doc="elements moved per tensor")
TILE = define("TILE", 1024, doc="elements per fifo element")


@design(device="npu1")
def two(x: Tensor[N, i32], y: Tensor[N, i32], ox: Tensor[N, i32], oy: Tensor[N, i32]):
    a = fifo(Tensor[TILE, i32], name="a")
    fa = a.forward(name="fa", via=memtile(0))
    b = fifo(Tensor[TILE, i32], name="b")
    fb = b.forward(name="fb", via=memtile(0))
    with runtime() as rt:
        rt.fill(a, x)
        rt.fill(b, y)
        rt.drain(fa, ox)
        rt.drain(fb, oy, wait=True)


@two.reference
def reference(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return x.copy(), y.copy()
