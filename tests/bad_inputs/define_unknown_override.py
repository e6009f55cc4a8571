# expect: define 9
# defines: M=3
# why: -D M=3 names no define() of the design (a typo for N): said at its first define().
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
        rt.fill(to_mem, inp)
        rt.drain(from_mem, out)


@passthrough.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
