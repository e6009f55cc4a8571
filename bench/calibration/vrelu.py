"""VReLU: IRON's ``ml/relu`` re-expressed in aiedsl.

ReLU of 65536 bf16 on two cores, (0, 2) and (0, 3): one shim task fills a depth-2 fifo of
2048-element buffers that the memtile splits into two depth-2 fifos of 1024 elements, one per
core; each core's depth-2 output fifo of 1024 is joined in the memtile into 2048-element
buffers that one shim task drains (waited for). Each core runs 32 iterations of: acquire
output, acquire input, ReLU 1024 elements, release both.

Kernel: the library's ``relu`` on 1024 bf16 is IRON's ``bf16_relu`` (a 32-lane ``max`` with zero
per 512-bit vector, software-pipelined); cost 2(n/32) + 14 = 78 cycles (AIE2 stores 256 bits a
cycle, so a 512-bit result takes two).

Measured on npu1: 176.69 / 171.48 us, min-max 132-340 / 147-344 (npu1-measured.md).
"""

import numpy as np

from aiedsl import Tensor, bf16, design, fifo, herd, join, loop, runtime
from aiedsl.kernels import relu

N = 65536
PART = 1024
CORES = 2


@design(device="npu1_1col")
def vrelu(a: Tensor[N, bf16], c: Tensor[N, bf16]):
    in_a = fifo(Tensor[CORES * PART, bf16], depth=2, name="inA")
    mem_a = in_a.split(CORES, names=[f"memA{i}" for i in range(CORES)])
    mem_c = [fifo(Tensor[PART, bf16], depth=2, name=f"memC{i}") for i in range(CORES)]
    out_c = join(mem_c, name="outC")
    kernel = relu(Tensor[PART, bf16])

    @herd(rows=CORES)
    def core(x, y):
        for _ in loop(N // (CORES * PART)):
            with mem_c[y].produce() as dst, mem_a[y].consume() as src:
                kernel(src, dst)

    with runtime() as rt:
        rt.fill(in_a, a)
        rt.drain(out_c, c)


@vrelu.reference
def reference(a: np.ndarray) -> np.ndarray:
    return np.maximum(a, np.zeros((), dtype=a.dtype))
