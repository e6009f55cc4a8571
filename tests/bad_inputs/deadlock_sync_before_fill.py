# expect: hang: wait before fill 28
# why: the runtime waits for the drain before it issues the fill the drain depends on.
import numpy as np

from aiedsl import Tensor, define, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough as copy_kernel

N = define("N", 4096, doc="elements moved")
TILE = define("TILE", 1024, doc="elements per fifo element")


@design(device="npu1_1col")
def passthrough(inp: Tensor[N, i32], out: Tensor[N, i32]):
    to_mem = fifo(Tensor[TILE, i32], name="in_l3")
    to_core = to_mem.forward(name="in_l1")
    from_core = fifo(Tensor[TILE, i32], name="out_l1")
    from_mem = from_core.forward(name="out_l3")
    copy = copy_kernel(Tensor[TILE, i32])

    @herd()
    def core():
        for _ in loop(N // TILE):
            with to_core.consume() as src, from_core.produce() as dst:
                copy(src, dst)

    with runtime() as rt:
        rt.drain(from_mem, out)
        rt.sync()
        rt.fill(to_mem, inp)


@passthrough.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
