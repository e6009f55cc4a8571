# expect: tiles 22
# why: one-element-wide tiles of a 2-byte type: each row of a tile is 2 bytes, and a shim DMA moves whole 4-byte words, so no pattern walks them.
import numpy as np

from aiedsl import Tensor, bf16, design, fifo, herd, loop, runtime, tiles
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def direct(inp: Tensor[64, 64, bf16], out: Tensor[4096, bf16]):
    a = fifo(Tensor[1024, bf16], name="a")
    b = fifo(Tensor[1024, bf16], name="b")
    copy = passthrough(Tensor[1024, bf16])

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as x, b.produce() as y:
                copy(x, y)

    with runtime() as rt:
        rt.fill(a, inp, tiles(inp, (2, 1), cols=range(0, 64, 2), repeat=2))
        rt.drain(b, out)


@direct.reference
def reference(inp: np.ndarray) -> np.ndarray:
    return inp.reshape(-1)
