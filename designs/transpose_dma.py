"""DMA-only transpose: host -> core tile (0, 2) memory -> host, with no core program.

The shim DMA reads the M x K matrix column by column (K columns, each M elements K apart), the
core tile's memory holds it as K x M, and the tile's DMA sends it back to the host in order: the
host receives the transpose. No core runs: the compute tile lends its memory and its DMA, as in
IRON's ``dma_transpose`` (a link through a compute tile). The stepping across columns is the
runtime pattern's, as there (a tile BD may step 4-byte elements too: dims_to_stream).

    aiedsl run designs/transpose_dma.py
    aiedsl run designs/transpose_dma.py -D M=32 -D K=64
"""

import numpy as np

from aiedsl import Tensor, coretile, define, design, fifo, i32, runtime

M = define("M", 64, doc="rows of the input matrix")
K = define("K", 32, doc="columns of the input matrix")


@design(device="npu1_1col")
def transpose_dma(inp: Tensor[M * K, i32], out: Tensor[M * K, i32]):
    cols_in = fifo(Tensor[K, M, i32], name="cols_in")
    cols_out = cols_in.forward(via=coretile(0, 2), name="cols_out")

    with runtime() as rt:
        # K columns (stride 1 between them), each M elements K apart
        rt.fill(cols_in, inp, (0, [1, 1, K, M], [0, 0, 1, K]))
        rt.drain(cols_out, out)


@transpose_dma.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.reshape(M, K).T.copy().reshape(-1)
