# expect: dma pattern 15
# why: dims_from_stream on a join's part at the memtile (a forward's or split's input takes one).
import numpy as np

from aiedsl import Tensor, define, design, fifo, herd, i32, join, loop, runtime
from aiedsl.kernels import passthrough as copy_kernel

N = define("N", 4096, doc="elements moved")
TILE = define("TILE", 1024, doc="elements per fifo element")


@design(device="npu1_1col")
def passthrough(inp: Tensor[N, i32], out: Tensor[N, i32]):
    to_core = fifo(Tensor[TILE // 2, i32], name="in_l1")
    parts = [fifo(Tensor[TILE // 2, i32], name=f"part{i}", dims_from_stream=[(16, 32), (32, 1)])
             for i in range(2)]
    from_mem = join(parts, offsets=[0, TILE // 2], name="out_l3")
    copy = copy_kernel(Tensor[TILE // 2, i32])

    @herd(rows=2)
    def core(x, y):
        for _ in loop(N // TILE):
            with to_core.consume() as src, parts[y].produce() as dst:
                copy(src, dst)

    with runtime() as rt:
        rt.fill(to_core, inp)
        rt.drain(from_mem, out)


@passthrough.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
