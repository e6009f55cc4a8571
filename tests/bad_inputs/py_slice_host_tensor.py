# expect: host tensor 22
# why: the runtime slices a host tensor like a numpy array; patterns select parts of tensors.
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def direct(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    b = fifo(Tensor[1024, i32], name="b")
    copy = passthrough(Tensor[1024, i32])

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as x, b.produce() as y:
                copy(x, y)

    with runtime() as rt:
        rt.fill(a, inp[0:4096])
        rt.drain(b, out)


@direct.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
