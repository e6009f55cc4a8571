"""``declare(..., roundings=N)``: a kernel whose every result goes through N roundings in one
call (an RMSNorm rounding its 1/rms to bf16 for a bf16 multiply, then the product) is allowed
N ulps of each element, relative. A transformer engineer's correct norm failed 3% of its
elements at one, and ``chained=True``, the only way out, made the allowance absolute: the norm
missing 16 of its 1024 squares then passed."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import ml_dtypes
import numpy as np
import pytest

from aiedsl.compare import compare
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.sim import simulate

DesignFile = Callable[..., Path]
BF16 = ml_dtypes.bfloat16

SCALE = '''
    import ml_dtypes
    import numpy as np
    from aiedsl import Tensor, bf16, define, design, fifo, herd, runtime
    from aiedsl.kernels import buffer, declare

    ROUNDINGS = define("ROUNDINGS", 1)
    BF = ml_dtypes.bfloat16

    def third_ref(src, dst):  # 1/3 as a bf16 estimate gives it (a step high), then the product
        dst[...] = (src.astype(np.float32) * np.float32(0.3359375)).astype(BF)

    @design(device="npu1_1col")
    def d(x: Tensor[1024, bf16], y: Tensor[1024, bf16]):
        k = declare("third_bf16", source="third.cc", args=[
            buffer("src", Tensor[1024, bf16]), buffer("dst", Tensor[1024, bf16], "out")],
            reference=third_ref, cycles=600, cost="-", roundings=ROUNDINGS)
        a = fifo(Tensor[1024, bf16], name="a")
        b = fifo(Tensor[1024, bf16], name="b")

        @herd()
        def core():
            with a.consume() as s, b.produce() as t:
                k(s, t)

        with runtime() as rt:
            rt.fill(a, x)
            rt.drain(b, y)

    @d.reference
    def reference(x):
        return (x.astype(np.float32) / 3).astype(BF)
    '''


def _with_cc(path: Path) -> Path:
    """``path``, with the kernel's C++ beside it (the runs here are of its reference)."""
    (path.parent / "third.cc").write_text(
        'extern "C" void third_bf16(const void *src, void *dst) {}\n')
    return path


@pytest.mark.parametrize("roundings, passed", [(1, False), (2, True)])
def test_an_output_is_allowed_the_roundings_its_kernel_declares(
        design_file: DesignFile, roundings: int, passed: bool) -> None:
    path = _with_cc(design_file(SCALE))
    result = simulate(load_design(path, {"ROUNDINGS": str(roundings)}))
    (check,) = result.checks
    assert check.passed is passed
    tol = ("tolerance 0.0078125 relative (one rounding per element)" if roundings == 1 else
           "tolerance 0.015625 relative (2 roundings per element)")
    assert check.line().splitlines()[0].endswith(f"; {tol})")


def test_each_rounding_is_an_ulp_relative_and_no_more() -> None:
    want = np.full(4, 1.0, dtype=np.float32).astype(BF16)
    got = want.copy()
    got[1] = BF16(1.0 + 2 * 2 ** -7)  # two ulps
    assert not compare("y", got, want, "bf16", rounds="once").passed
    assert compare("y", got, want, "bf16", rounds="once", roundings=2).passed
    got[1] = BF16(1.0 + 3 * 2 ** -7)  # three
    assert not compare("y", got, want, "bf16", rounds="once", roundings=2).passed


@pytest.mark.parametrize("given, message", [
    ("0", "kernel 'third_bf16': roundings=0"),
    ("17", "kernel 'third_bf16': roundings=17"),
    ("1.5", "kernel 'third_bf16': roundings=1.5"),
    ("True", "kernel 'third_bf16': roundings=True"),
])
def test_roundings_is_a_small_whole_number(design_file: DesignFile, given: str,
                                           message: str) -> None:
    path = _with_cc(design_file(SCALE.replace("roundings=ROUNDINGS", f"roundings={given}")))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value).splitlines() == [
        f"d.py:14: error [kernel signature]: {message}",
        "  limit: a whole number from 1 to 16: how many roundings each result goes through in "
        "one call",
        f"  found: {given}",
        "  fix: count the result's own rounding and that of each value it is a product or "
        "quotient of (a scale rounded to bf16, then the product: roundings=2)"]


def test_an_exact_kernel_rounds_nothing(design_file: DesignFile) -> None:
    path = _with_cc(design_file(SCALE.replace("roundings=ROUNDINGS",
                                              "roundings=2, exact=True")))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value).splitlines()[0] == (
        "d.py:14: error [kernel signature]: kernel 'third_bf16' is declared exact=True and "
        "roundings=2")
