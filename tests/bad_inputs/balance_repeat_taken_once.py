# expect: balance 19
# why: the memtile sends each element twice (repeat=2, mlir-aie's repeat_count) but the core takes each once: the memtile waits for a consumer that never comes.
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def reuse(inp: Tensor[2048, i32], out: Tensor[2048, i32]):
    l2 = fifo(Tensor[1024, i32], name="l2")
    l1 = l2.forward(name="l1", repeat=2)
    o = fifo(Tensor[1024, i32], name="o")
    copy = passthrough(Tensor[1024, i32])

    @herd()
    def core():
        for _ in loop(2):
            with l1.consume() as x, o.produce() as y:
                copy(x, y)

    with runtime() as rt:
        rt.fill(l2, inp)
        rt.drain(o, out)


@reuse.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
