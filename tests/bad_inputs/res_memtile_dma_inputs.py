# expect: memtile DMA input (S2MM) channels 11
# why: a join of 7 parts: a memtile has 6 input channels.
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, join, runtime


@design(device="npu1_1col")
def join7(C: Tensor[7, 256, i32]):
    parts = [fifo(Tensor[256, i32], name=f"p{i}") for i in range(7)]
    out = join(parts, name="out")

    @herd(rows=4)
    def core(x, y):
        for i in range(7):
            if i % 4 == y:
                with parts[i].produce():
                    pass

    with runtime() as rt:
        rt.drain(out, C)
