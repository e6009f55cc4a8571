# expect: fifo depth 14
# why: consumer_depth={"memtile": 6} on the input of a forward to larger elements: the memtile moves it through the output's buffers (mlir-aie's createObjectFifoElements keeps the larger end's), so the depth counted nowhere.
import numpy as np

from aiedsl import Tensor, define, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough as copy_kernel

N = define("N", 4096, doc="elements moved")
TILE = define("TILE", 1024, doc="elements per fifo element")


@design(device="npu1_1col")
def passthrough(inp: Tensor[N, i32], out: Tensor[N, i32]):
    to_mem = fifo(Tensor[TILE // 2, i32], name="in_l3", consumer_depth={"memtile": 6})
    to_core = to_mem.forward(Tensor[TILE, i32], name="in_l1")
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
        rt.drain(from_mem, out, wait=True)


@passthrough.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
