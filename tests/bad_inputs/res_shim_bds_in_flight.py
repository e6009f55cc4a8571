# expect: shim buffer descriptors 25
# why: 17 fills before the first wait: a shim tile has 16 BDs.
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def direct(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
    a = fifo(Tensor[256, i32], name="a")
    b = fifo(Tensor[1024, i32], name="b")

    @herd()
    def core():
        for _ in loop(4):
            with b.produce() as y:
                for _ in loop(4):
                    with a.consume():
                        pass

    with runtime() as rt:
        for i in range(16):
            rt.fill(a, inp, (i * 256, [256], [1]))
        rt.drain(b, out)


@direct.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
