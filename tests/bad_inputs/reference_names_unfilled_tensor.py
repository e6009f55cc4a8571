# expect: reference 25
# why: the fill names the output C where A was meant: A is never moved, the core reads what C held, and the reference def reference(A) was handed C's array (the run said PASS).
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def e1(A: Tensor[1024, i32], C: Tensor[1024, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    c = fifo(Tensor[1024, i32], name="c")
    k = passthrough(Tensor[1024, i32])

    @herd()
    def core():
        with a.consume() as s, c.produce() as d:
            k(s, d)

    with runtime() as rt:
        rt.fill(a, C)
        rt.drain(c, C)


@e1.reference
def reference(A: np.ndarray) -> np.ndarray:
    return A
