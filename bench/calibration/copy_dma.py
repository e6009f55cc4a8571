"""Copy(DMA): IRON's ``basic/passthrough_dmas`` (``-l 4096``) re-expressed in aiedsl.

The measured design moves 4096 i32 host -> array -> host with no core: one shim MM2S transfer
fills a depth-2 fifo of 1024-element buffers that an ``objectfifo.link`` forwards, unchanged,
into a depth-2 fifo back to one shim S2MM transfer, which the runtime waits for (2 tasks, 1
wait). As IRON does, the two fifos are linked in compute tile (0, 2)'s memory, with no core
program (``forward(via=coretile(0, 2))``). IRON's unused third runtime argument is left out.

Measured on npu1: 133.99 / 128.81 us (npu1-measured.md).
"""

import numpy as np

from aiedsl import Tensor, coretile, design, fifo, i32, runtime

N = 4096
TILE = 1024


@design(device="npu1_1col")
def copy_dma(inp: Tensor[N, i32], out: Tensor[N, i32]):
    to_link = fifo(Tensor[TILE, i32], depth=2, name="in")
    from_link = to_link.forward(name="out", via=coretile(0, 2))

    with runtime() as rt:
        rt.fill(to_link, inp)
        rt.drain(from_link, out)


@copy_dma.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.copy()
