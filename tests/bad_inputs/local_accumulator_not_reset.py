# expect: local 22
# why: an accumulator local is read by the inner loop's first call with nothing written into it; it must be zeroed at the top of each outer iteration (initial= would set it once per load only).
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, local, loop, runtime
from aiedsl.kernels import add, passthrough


@design(device="npu1_1col")
def rowsum(inp: Tensor[512, i32], out: Tensor[64, i32]):
    a = fifo(Tensor[16, i32], name="a")
    s = fifo(Tensor[16, i32], name="s")
    acc = local(Tensor[16, i32])
    addk = add(Tensor[16, i32])
    copy = passthrough(Tensor[16, i32])

    @herd()
    def core():
        for _ in loop(4):
            for _ in loop(8):
                with a.consume() as t:
                    addk(acc, t, acc)
            with s.produce() as o:
                copy(acc, o)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(s, out)


@rowsum.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.reshape(4, 8, 16).sum(axis=1).reshape(-1)
