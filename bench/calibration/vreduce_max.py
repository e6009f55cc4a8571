"""VReduce(Max): IRON's ``basic/vector_reduce_max`` re-expressed in aiedsl.

The maximum of 1024 int32 on core (0, 2): one depth-2 fifo of a 1024-element buffer in, a
depth-2 fifo of one int32 out, shim <-> core directly (two shim tasks, the 4-byte drain waited
for). The core acquires the output, then the input, reduces, releases both, once per run.

Kernel: the library's ``reduce_max`` over one row of 1024 is IRON's ``reduce_max_vector`` (a
16-lane running max over the buffer, then a log-step reduction across lanes); its cost,
rows * (cols/16 + 8) + 14 = 86 cycles, is the library's estimate of that loop.

Measured on npu1: 118.24 / 112.78 us, min-max 104-199 / 105-130 (npu1-measured.md).
"""

import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels import reduce_max

N = 1024


@design(device="npu1_1col")
def vreduce_max(inp: Tensor[1, N, i32], out: Tensor[1, i32]):
    of_in = fifo(Tensor[1, N, i32], depth=2, name="in")
    of_out = fifo(Tensor[1, i32], depth=2, name="out")
    red = reduce_max(1, N, i32)

    @herd()
    def core():
        with of_out.produce() as dst, of_in.consume() as src:
            red(src, dst)

    with runtime() as rt:
        rt.fill(of_in, inp)
        rt.drain(of_out, out)


@vreduce_max.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.max(axis=1)
