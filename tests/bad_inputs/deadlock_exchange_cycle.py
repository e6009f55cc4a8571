# expect: hang: core cycle 31
# run: sim
# why: two cores each hold their outgoing element while waiting for the other's (mlir-aie#2670).
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import add, passthrough


@design(device="npu1_1col")
def exchange(in0: Tensor[4096, i32], in1: Tensor[4096, i32],
             out0: Tensor[4096, i32], out1: Tensor[4096, i32]):
    a0 = fifo(Tensor[1024, i32], name="a0")
    a1 = fifo(Tensor[1024, i32], name="a1")
    e01 = fifo(Tensor[1024, i32], depth=1, name="e01")
    e10 = fifo(Tensor[1024, i32], depth=1, name="e10")
    r0 = fifo(Tensor[1024, i32], name="r0")
    r1 = fifo(Tensor[1024, i32], name="r1")
    copy = passthrough(Tensor[1024, i32])
    add_k = add(Tensor[1024, i32])

    @herd(rows=2)
    def core(x, y):
        mine, send, recv, res = (a0, e01, e10, r0) if y == 0 else (a1, e10, e01, r1)
        for _ in loop(4):
            with send.produce() as s, recv.consume() as n, mine.consume() as m:
                copy(m, s)
                with res.produce() as r:
                    add_k(m, n, r)

    with runtime() as rt:
        rt.fill(a0, in0)
        rt.fill(a1, in1)
        rt.drain(r0, out0)
        rt.drain(r1, out1)


@exchange.reference
def reference(in0: np.ndarray, in1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return in0 + in1, in1 + in0
