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


SIBLINGS = '''
    import ml_dtypes
    import numpy as np
    from aiedsl import Tensor, bf16, design, fifo, herd, runtime
    from aiedsl.kernels import buffer, declare

    BF = ml_dtypes.bfloat16

    def big_ref(a, out):
        out[...] = (a.astype(np.float32) * 2).astype(BF)

    def off_ref(a, out):  # 4% off what the design wants
        out[...] = (a.astype(np.float32) * 1.04).astype(BF)

    @design(device="npu1_1col")
    def d(x: Tensor[256, bf16], X: Tensor[256, bf16], Y: Tensor[256, bf16]):
        big = declare("big", source="third.cc", entry="third_bf16", args=[
            buffer("a", Tensor[256, bf16]), buffer("out", Tensor[256, bf16], "out")],
            reference=big_ref, cycles=100, cost="-", roundings=8)
        off = declare("off", source="third.cc", entry="third_bf16", args=[
            buffer("a", Tensor[256, bf16]), buffer("out", Tensor[256, bf16], "out")],
            reference=off_ref, cycles=100, cost="-")
        fa = fifo(Tensor[256, bf16], name="fa")
        fx = fifo(Tensor[256, bf16], name="fx")
        fy = fifo(Tensor[256, bf16], name="fy")

        @herd()
        def core():
            with fa.consume() as a, fx.produce() as o1, fy.produce() as o2:
                big(a, o1)
                off(a, o2)

        with runtime() as rt:
            rt.fill(fa, x)
            rt.drain(fx, X)
            rt.drain(fy, Y)

    @d.reference
    def reference(x):
        return (x.astype(np.float32) * 2).astype(BF), x
    '''


def test_an_output_takes_the_roundings_of_the_kernels_that_write_it_only(
        design_file: DesignFile) -> None:
    """(a reviewer) Every kernel a core called counted: a sibling's roundings=8 let Y, 4% off,
    pass at 8 ulps."""
    result = simulate(load_design(_with_cc(design_file(SIBLINGS))))
    x, y = result.checks
    assert x.passed and x.tolerance.endswith("(8 roundings per element)")
    assert not y.passed and y.tolerance.endswith("(one rounding per element)")


@pytest.mark.parametrize("change, why", [
    (("Tensor[1024, bf16], \"out\")", "Tensor[1024, bf16], \"inout\")"),
     "it sums into what it writes (an accumulator, a reduction or a cascade), whose outputs "
     "get a sum's allowance"),
    (("bf16", "i16"), "it writes no float buffer: integers must match exactly"),
])
def test_roundings_where_the_comparison_does_not_use_them_is_refused(
        design_file: DesignFile, change: tuple[str, str], why: str) -> None:
    """(a reviewer) roundings= on a kernel that sums, or writes integers, was taken and
    ignored."""
    source = SCALE.replace("roundings=ROUNDINGS", "roundings=2").replace(*change)
    with pytest.raises(DesignError) as e:
        load_design(_with_cc(design_file(source)))
    symbol = "third_i16" if change[1] == "i16" else "third_bf16"
    assert str(e.value).splitlines()[0] == (
        f"d.py:14: error [kernel signature]: kernel '{symbol}' declares roundings=2, which "
        f"its comparison does not use: {why}")


def test_a_design_json_is_held_to_the_same_roundings() -> None:
    from pydantic import ValidationError

    from aiedsl.ir.kernel import Kernel

    k = load_design(Path(__file__).resolve().parents[1] / "designs" / "passthrough.py").ir
    data = k.kernels[0].model_dump()
    for bad in (0, -3, 17):
        with pytest.raises(ValidationError):
            Kernel.model_validate({**data, "roundings": bad})
    assert Kernel.model_validate({**data, "roundings": 16}).roundings == 16
