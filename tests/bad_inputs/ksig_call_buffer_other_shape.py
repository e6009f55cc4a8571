# expect: kernel signature 17
# why: the fifo's element holds the kernel's 256 values as 16x16; mlir-aie's func.call wants the operand to be the declared memref<256xi32> exactly, so aiecc would refuse the call.
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def shape_call(A: Tensor[256, i32], C: Tensor[256, i32]):
    a = fifo(Tensor[16, 16, i32], name="a")
    c = fifo(Tensor[256, i32], name="c")
    k = passthrough(Tensor[256, i32])
    @herd()
    def core():
        with a.consume() as s, c.produce() as d:
            k(s, d)

    with runtime() as rt:
        rt.fill(a, A)
        rt.drain(c, C)


@shape_call.reference
def reference(A: np.ndarray) -> np.ndarray:
    return A
