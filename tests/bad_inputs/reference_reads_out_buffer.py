# expect: kernel reference 13
# run: sim
# why: the kernel's reference accumulates into b (b[...] += ...), so it reads it, but b is declared "out", and a zero kernel before it hid that from check and sim alike; the fix is "inout".
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import buffer, declare, scalar, zero


def acc_ref(a, b, n):
    b[...] += a + 1

acc_k = declare("add_one_i32_16", source="kernels_ok.cc", entry="add_one<16>",
                args=[buffer("a", Tensor[16, i32]), buffer("b", Tensor[16, i32], "out"),
                      scalar("n", i32)], reference=acc_ref, cycles=30, cost="one vector add")


@design(device="npu1_1col")
def rowsum(inp: Tensor[512, i32], out: Tensor[64, i32]):
    a = fifo(Tensor[16, i32], name="a")
    s = fifo(Tensor[16, i32], name="s")
    z = zero(Tensor[16, i32])

    @herd()
    def core():
        for _ in loop(4):
            with s.produce() as acc:
                z(acc)
                for _ in loop(8):
                    with a.consume() as t:
                        acc_k(t, acc, 16)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(s, out)


@rowsum.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return (inp.reshape(4, 8, 16) + 1).sum(axis=1).reshape(-1)
