"""Scalars the library kernels' C++ does not take as they are: an element count ``n`` the C++
ignores (it is compiled for N), checked to be N; the reference computing exactly what the C++
computes for any value it can be given (a literal, or an rtp slot read at run time)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.kernels import Kernel, library
from aiedsl.kernels.host import KernelCase, check_kernel
from aiedsl.kernels.text import kernel_text
from aiedsl.loader import load_design
from aiedsl.sim import simulate

DesignFile = Callable[..., Path]
ROOT = Path(__file__).resolve().parents[1]


def check_error(path: Path) -> str:
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    return str(e.value)


def _design(design_file: DesignFile, name: str, *edits: tuple[str, str]) -> Path:
    """A shipped design with ``edits`` (old, new) made, written as ``d.py``."""
    text = (ROOT / "designs" / name).read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    return design_file(text)


# -- n: the value the C++ is compiled for -------------------------------------------------------

def test_scale_refuses_an_n_that_is_not_its_size(design_file: DesignFile) -> None:
    path = _design(design_file, "vector_scalar_mul.py",
                   ("scale_k(src, dst, f, TILE)", "scale_k(src, dst, f, TILE // 2)"))
    assert check_error(path) == (
        "d.py:30: error [kernel signature]: argument 3 ('n') of 'scale_i16_1024' must be 1024, "
        "but core[0,0] passes 512\n"
        "  limit: exactly 1024: the kernel's C++ is compiled for 1024 and does not read 'n' "
        "(another value would not change what it does)\n"
        "  found: 512\n"
        "  fix: pass 1024; for another size, declare the kernel (and its buffers) for that size")


def test_threshold_refuses_an_n_that_is_not_its_size(design_file: DesignFile) -> None:
    path = _design(design_file, "threshold_rtp.py",
                   ("trunc(src, dst, thr[x][0], LINE)", "trunc(src, dst, thr[x][0], 2 * LINE)"))
    assert check_error(path) == (
        "d.py:39: error [kernel signature]: argument 3 ('n') of 'threshold_u8_512' must be 512, "
        "but core[0,0] passes 1024\n"
        "  limit: exactly 512: the kernel's C++ is compiled for 512 and does not read 'n' "
        "(another value would not change what it does)\n"
        "  found: 1024\n"
        "  fix: pass 512; for another size, declare the kernel (and its buffers) for that size")


N_FROM_RTP = (("trunc(src, dst, thr[x][0], LINE)", "trunc(src, dst, thr[x][0], thr[x][1])"),
              ("                rt.rtp_write(thr[c], 0, level)\n",
               "                rt.rtp_write(thr[c], 0, level)\n"
               "                rt.rtp_write(thr[c], 1, N_VALUE)\n"))


def test_an_n_written_into_an_rtp_slot_is_checked_at_the_write(design_file: DesignFile) -> None:
    """The runtime sequence's writes are known when the design is checked: each is held to N."""
    path = _design(design_file, "threshold_rtp.py", *N_FROM_RTP,
                   ("N_VALUE", "LINE if p == 0 else LINE - 64"))
    assert check_error(path) == (
        "d.py:45: error [kernel signature]: rt.rtp_write of 'thr0'[1] writes 448, but core[0,0] "
        "passes that slot as argument 3 ('n') of 'threshold_u8_512', which must be 512\n"
        "  limit: exactly 512: the kernel's C++ is compiled for 512 and does not read 'n' "
        "(another value would not change what it does)\n"
        "  found: 448\n"
        "  d.py:39: core[0,0] passes it to 'threshold_u8_512'\n"
        "  fix: write 512; for another size, declare the kernel (and its buffers) for that size")


@pytest.mark.parametrize("kernels", ["reference", "native"])
def test_an_n_from_an_rtp_slot_that_is_its_size_runs(design_file: DesignFile,
                                                     kernels: str) -> None:
    path = _design(design_file, "threshold_rtp.py", *N_FROM_RTP, ("N_VALUE", "LINE"))
    inp = np.arange(8192, dtype=np.uint8)  # every pixel value: both thresholds cut something
    result = simulate(load_design(path), {"inp": inp}, kernels=kernels)
    assert result.passed
    want = np.concatenate([np.minimum(inp, np.uint8(50)), np.minimum(inp, np.uint8(200))])
    assert np.array_equal(result.outputs["out"], want)


@pytest.mark.parametrize("make, scalars", [
    (lambda: library.scale(1024), {"n": 7}),
    (lambda: library.scale(64), {"n": 0}),
    (lambda: library.threshold(512), {"n": 5, "thr": 60}),
    (lambda: library.threshold(128), {"n": -1, "thr": 60}),
])
def test_the_reference_does_what_the_cpp_does_whatever_n_says(make: Callable[[], Kernel],
                                                              scalars: dict[str, int]) -> None:
    """The C++ runs to its compile-time N whatever n is; so does the reference (it used to
    stop at n, leaving the rest of the output unwritten where the NPU writes it)."""
    k = make()
    case = KernelCase(k.ir, kernel_text(None, k.ir), k.bound_reference(), scalars)
    result = check_kernel(case, seed=1)
    assert result.passed, result.lines


def test_the_scale_reference_writes_every_element() -> None:
    src = np.arange(-32, 32, dtype=np.int16)
    dst = np.zeros(64, dtype=np.int16)
    library.scale_ref(src, dst, np.array([3], dtype=np.int32), 8)
    assert np.array_equal(dst, src * 3)


def test_n_in_a_kernel_declaration_is_an_int() -> None:
    from aiedsl.kernels import scalar

    with pytest.raises(DesignError) as e:
        scalar("n", "f32", equals=3)
    assert str(e.value).split(": ", 1)[1] == (
        "error [kernel signature]: scalar 'n' has equals=3\n"
        "  limit: an int, for an integer scalar (n is f32)\n"
        "  found: 3\n"
        "  fix: give the one value the C++ is compiled for")
