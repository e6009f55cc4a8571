"""``aiedsl kernel test`` of a kernel whose results hold infinities: a causal mask's -inf where
its reference has -inf too agrees (it was 496 "wrong" elements of |error| inf, and a correct
masking kernel could never pass); an infinity where the reference is finite still fails."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from aiedsl.kernels.cases import design_cases
from aiedsl.kernels.host_check import check_kernel
from aiedsl.loader import load_design

DesignFile = Callable[..., Path]

MASK = '''
    import numpy as np
    from aiedsl import Tensor, design, f32, fifo, herd, runtime
    from aiedsl.kernels import buffer, declare

    def mask_ref(src, dst):
        dst[...] = np.where(np.arange(64) < 32, src, -np.inf)

    @design(device="npu1_1col")
    def d(X: Tensor[64, f32], Y: Tensor[64, f32]):
        k = declare("mask_f32_64", source="mask.cc", entry="mask",
                    args=[buffer("src", Tensor[64, f32]), buffer("dst", Tensor[64, f32], "out")],
                    reference=mask_ref, cycles=80, cost="-")
        a = fifo(Tensor[64, f32], name="a")
        b = fifo(Tensor[64, f32], name="b")

        @herd()
        def core():
            with a.consume() as s, b.produce() as t:
                k(s, t)

        with runtime() as rt:
            rt.fill(a, X)
            rt.drain(b, Y)

    @d.reference(nonfinite=True)
    def reference(X):
        return np.where(np.arange(64) < 32, X, -np.inf).astype(np.float32)
    '''

MASK_CC = '''
#include <limits>
void mask(const float *__restrict in, float *__restrict out) {
  for (int i = 0; i < 64; i++)
    out[i] = i < LAST ? in[i] : -std::numeric_limits<float>::infinity();
}
'''


@pytest.mark.parametrize("last, wrong", [(32, 0), (33, 1), (31, 1)])
def test_a_mask_of_minus_inf_agrees_where_its_reference_has_it(
        design_file: DesignFile, last: int, wrong: int) -> None:
    path = design_file(MASK)
    (path.parent / "mask.cc").write_text(MASK_CC.replace("LAST", str(last)))
    (case,) = design_cases(load_design(path))
    result = check_kernel(case)
    assert result.passed is (wrong == 0), result.lines
    if wrong:
        assert result.lines[0].startswith("FAIL mask_f32_64.dst: worst element [")
        assert "|error| inf" in result.lines[0]
        assert f"wrong: {wrong} of 64 elements" in "\n".join(result.lines)
    else:
        assert result.lines[0].startswith("PASS mask_f32_64.dst")


NAN_CC = '''
#include <cmath>
void mask(const float *__restrict in, float *__restrict out) {
  for (int i = 0; i < 64; i++) out[i] = std::sqrt(-std::fabs(in[i]) - 1.0f);
}
'''


def test_a_nan_the_reference_writes_fails_even_where_the_cpp_writes_one(
        design_file: DesignFile) -> None:
    """(a reviewer) Both NaN everywhere passed as "exact": infinities agree, NaN never does."""
    path = design_file(MASK.replace("np.where(np.arange(64) < 32, src, -np.inf)",
                                    "np.sqrt(-np.abs(src) - 1)"))
    (path.parent / "mask.cc").write_text(NAN_CC)
    (case,) = design_cases(load_design(path))
    with pytest.warns(RuntimeWarning):  # the reference's own sqrt of a negative
        result = check_kernel(case)
    assert not result.passed
    assert result.lines[0].startswith(
        "FAIL mask_f32_64.dst: worst element [0] got nan want nan (|error| inf; ")
    assert result.lines[-1] == (
        "  note: the reference writes NaN in 64 of the 64 elements of 'dst' on these inputs "
        "(float inputs are drawn from [-1, 1]), and NaN equals nothing, so they fail whatever "
        "the C++ writes: a kernel defined on part of that range (a sqrt, a log) is tested "
        "through a design (aiedsl sim --inputs with inputs in its range, and --kernels native)")
