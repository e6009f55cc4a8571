"""The library's rgba2gray: BT.601 luma of RGBA pixels in 8-bit fixed point, the vision kernel
Riallto's and mlir-aie's edge-detect pipelines start with (kernels_cpp/rgba2gray.cc)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from aiedsl.errors import DesignError
from aiedsl.kernels import rgba2gray
from aiedsl.kernels.library import rgba2gray_ref
from aiedsl.loader import load_design
from aiedsl.sim import simulate

DesignFile = Callable[..., Path]


def _luma(r: int, g: int, b: int) -> int:
    """(77 R + 150 G + 29 B) / 256 rounded to nearest, ties to even (Python's round)."""
    return round(Fraction(77 * r + 150 * g + 29 * b, 256))


def test_the_reference_is_bt601_luma_rounded_to_nearest_even() -> None:
    rng = np.random.default_rng(3)
    px = rng.integers(0, 256, size=(4096, 4), dtype=np.uint8)
    # white stays white, black black; pure channels at their weights; sums exactly half-way
    # (s = 128: 0.5 -> 0, s = 384: 1.5 -> 2) round to even
    px[:6] = [[255, 255, 255, 0], [0, 0, 0, 255], [255, 0, 0, 7], [0, 255, 0, 7],
              [0, 0, 255, 7], [1, 0, 0, 0]]
    ties = [(r, g, b) for r in range(64) for g in range(64) for b in range(64)
            if (77 * r + 150 * g + 29 * b) % 256 == 128][:64]
    assert len(ties) == 64 and {_luma(*t) % 2 for t in ties} == {0}
    assert {(77 * r + 150 * g + 29 * b) // 256 % 2 for r, g, b in ties} == {0, 1}  # both ways
    px[6:6 + len(ties), :3] = ties
    out = np.empty(4096, np.uint8)
    rgba2gray_ref(px.reshape(-1), out)
    assert out.tolist() == [_luma(int(r), int(g), int(b)) for r, g, b, _ in px]
    assert out[:5].tolist() == [255, 0, 77, 149, 29]


def test_its_signature_and_cost() -> None:
    k = rgba2gray(1920)
    assert k.symbol == "rgba2gray_u8_1920"
    assert [(a.name, a.type.shape, a.type.dtype) for a in k.ir.args] == [
        ("src", (7680,), "u8"), ("dst", (1920,), "u8")]
    assert k.ir.cycles == 5 * 60 + 20
    with pytest.raises(DesignError) as e:
        rgba2gray(100)
    assert str(e.value).splitlines()[1:] == [
        "  limit: a multiple of 32 elements", "  found: 100",
        "  fix: use a size that is a multiple of 32"]


GRAY = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, loop, runtime, u8
from aiedsl.kernels import rgba2gray

H, W = 16, 256

@design(device="npu1_1col")
def gray(img: Tensor[H, 4 * W, u8], out: Tensor[H, W, u8]):
    rgba = fifo(Tensor[4 * W, u8], name="rgba")
    g = fifo(Tensor[W, u8], name="g")
    k = rgba2gray(W)

    @herd()
    def core():
        for _ in loop(H):
            with rgba.consume() as line, g.produce() as y:
                k(line, y)

    with runtime() as rt:
        rt.fill(rgba, img)
        rt.drain(g, out)

@gray.reference
def reference(img):
    px = img.reshape(H, W, 4).astype(np.float64)
    # exact in float64 (a multiple of 1/256), and np.rint rounds halves to even
    return np.rint((77 * px[..., 0] + 150 * px[..., 1] + 29 * px[..., 2]) / 256).astype(np.uint8)
'''


@pytest.mark.parametrize("kernels", ["reference", "native"])
def test_an_image_to_gray_line_by_line_matches_numpy(design_file: DesignFile,
                                                     kernels: str) -> None:
    """A 16-line image through one core, against the design's own numpy (float) luma: the
    kernel's numpy reference in the simulator, and its C++ built for the host."""
    r = simulate(load_design(design_file(GRAY)), seed=1, kernels=kernels)
    assert r.passed, [c.summary() for c in r.checks]
    assert r.outputs["out"].shape == (16, 256)
    assert len(np.unique(r.outputs["out"])) > 100  # a real image of grays, not a constant
    # 16 calls of 5*8 + 20 cycles each, plus the call site's
    assert r.timing.cycles > 16 * (5 * 8 + 20)
