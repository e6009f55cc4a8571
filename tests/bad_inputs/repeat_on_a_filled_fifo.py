# expect: repeat 11
# why: repeat= on the fifo the runtime fills: mlir-aie's ObjectFifoCreateOp::verify refuses repeat_count on a shim producer; the memtile's forward is where to repeat.
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def reuse(inp: Tensor[2048, i32], out: Tensor[4096, i32]):
    l2 = fifo(Tensor[1024, i32], name="l2", repeat=2)
    l1 = l2.forward(name="l1")
    o = fifo(Tensor[1024, i32], name="o")
    copy = passthrough(Tensor[1024, i32])

    @herd()
    def core():
        for _ in loop(4):
            with l1.consume() as x, o.produce() as y:
                copy(x, y)

    with runtime() as rt:
        rt.fill(l2, inp)
        rt.drain(o, out)


@reuse.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return np.repeat(inp.reshape(2, 1024), 2, axis=0).reshape(-1)
