# expect: memtile DMA output (MM2S) channels 11
# why: a split into 7 parts: a memtile has 6 output channels.
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, runtime


@design(device="npu1_1col")
def split7(C: Tensor[7, 256, i32]):
    whole = fifo(Tensor[7 * 256, i32], name="whole")
    parts = whole.split(7, names=[f"p{i}" for i in range(7)])

    @herd(rows=4)
    def core(x, y):
        for i in range(7):
            if i % 4 == y:
                with parts[i].consume():
                    pass

    with runtime() as rt:
        rt.fill(whole, C)
