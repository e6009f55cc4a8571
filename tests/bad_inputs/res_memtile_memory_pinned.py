# expect: memtile data memory 20
# defines: TILE=49152
# why: three forwards of 384 KB each on the two 512 KB memtiles of npu1_2col (two pinned to one): what does not fit a memtile spills to its neighbour, as in mlir-aie, but neither has room for the last.
import numpy as np

from aiedsl import Tensor, define, design, fifo, i32, memtile, runtime

N = define("N", 98304, doc="elements moved per tensor")
TILE = define("TILE", 1024, doc="elements per fifo element")


@design(device="npu1_2col")
def two(x: Tensor[N, i32], y: Tensor[N, i32], ox: Tensor[N, i32], oy: Tensor[N, i32],
        oz: Tensor[N, i32]):
    a = fifo(Tensor[TILE, i32], name="a")
    fa = a.forward(name="fa", via=memtile(0))
    b = fifo(Tensor[TILE, i32], name="b")
    fb = b.forward(name="fb", via=memtile(0))
    c = fifo(Tensor[TILE, i32], name="c")
    fc = c.forward(name="fc", via=memtile(1))
    with runtime() as rt:
        rt.fill(a, x)
        rt.fill(b, y)
        rt.fill(c, x)
        rt.drain(fa, ox)
        rt.drain(fb, oy)
        rt.drain(fc, oz, wait=True)


@two.reference
def reference(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return x.copy(), y.copy(), x.copy()
