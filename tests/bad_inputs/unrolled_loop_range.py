# expect: unrolled loop 20
# why: `for _ in range(720)` where `for _ in loop(720)` was meant: Python runs the body 720 times while the core function is traced, and the core program holds 720 identical copies (3,600 ops), which overflow the core's 16 KB of program memory only in aiecc or at load.
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels import passthrough

W, H = 256, 720


@design(device="npu1_1col")
def rows(img: Tensor[H, W, i32], out: Tensor[H, W, i32]):
    rin = fifo(Tensor[W, i32], name="rin")
    rout = fifo(Tensor[W, i32], name="rout")
    copy = passthrough(Tensor[W, i32])

    @herd()
    def core():
        for _ in range(H):
            with rin.consume() as a, rout.produce() as b:
                copy(a, b)

    with runtime() as rt:
        rt.fill(rin, img)
        rt.drain(rout, out)


@rows.reference
def reference(img: np.ndarray) -> np.ndarray:
    return img.copy()
