# expect: balance 20
# why: mlir-aie's two_col shape: 2048 x i32 on the host are 8192 bytes, sixteen 512 x u8 fifo elements; a loop of 4 takes 4 (counting host elements would balance it, and the NPU would hang).
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, join, loop, runtime, u8
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def two_col(inp: Tensor[2048, i32], out: Tensor[2048, i32]):
    in0 = fifo(Tensor[512, u8], name="in0")
    ins = in0.split(4, names=["in1", "in2", "in3", "in4"])
    outs = [fifo(Tensor[128, u8], name=f"out{i + 1}") for i in range(4)]
    out0 = join(outs, name="out0")
    copy = passthrough(Tensor[128, u8])

    @herd(rows=4)
    def core(x, y):
        for _ in loop(4):
            with ins[y].consume() as src, outs[y].produce() as dst:
                copy(src, dst)

    with runtime() as rt:
        rt.fill(in0, inp)
        rt.drain(out0, out, wait=True)


@two_col.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
