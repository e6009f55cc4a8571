# expect: fifo ends 13
# why: filled and drained by the runtime with nothing between: both ends of 'a' are the shim, one shim DMA allocation named after the fifo would need an MM2S and an S2MM channel, and mlir-aie cannot lower it; the simulator passed it as a copy.
import numpy as np

from aiedsl import Tensor, design, fifo, i32, runtime


@design(device="npu1_1col")
def loopback(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(a, out)


@loopback.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
