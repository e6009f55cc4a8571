"""An f32 product's absolute tolerance follows each element's own terms where they are smaller
than the largest |expected|: a few large rows of A (outlier activations) no longer hide a wrong
element elsewhere (a numerics tester's find)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import ml_dtypes
import numpy as np

from aiedsl.compare import compare
from aiedsl.tolerances import Terms
from aiedsl.loader import load_design
from aiedsl.output_checks import compare_outputs
from aiedsl.product_terms import holds_product, product_terms, term_bounds
from aiedsl.sim import simulate

ROOT = Path(__file__).resolve().parents[1]
GEMM = ROOT / "designs" / "gemm_bf16.py"
SMALL = {"M": "128", "K": "256", "N": "128", "ROWS": "2", "COLS": "2"}


def _inputs(scale: float) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((128, 256)).astype(np.float32)
    a[0] *= scale  # one row of large activations
    b = rng.standard_normal((256, 128)).astype(np.float32)
    return {"A": a.astype(ml_dtypes.bfloat16), "B": b.astype(ml_dtypes.bfloat16)}


def test_a_reference_with_half_of_c_zeroed_fails_beside_one_large_row() -> None:
    handle = load_design(GEMM, SMALL)
    inputs = _inputs(1e4)
    got = simulate(handle, inputs, check=False).outputs["C"]
    want = handle.expected(inputs)["C"]
    assert compare_outputs(handle.ir, {"C": got}, {"C": want}, inputs)[0].passed
    want[64:] = 0
    check = compare_outputs(handle.ir, {"C": got}, {"C": want}, inputs)[0]
    assert check.line() == (
        "FAIL C: worst element [90, 94] got 56.8262 want 0 (|error| 56.8; tolerance 0.0001 "
        "relative + 46.7 absolute, or 0.0001 of K x max|A[i]| x max|B[:, j]| where less)\n"
        "  wrong: 8,085 of 16,384 elements (49.3%), all within [64:128, 0:128]")
    # the largest |expected| alone (46.7 absolute) let all but 32 of them pass
    assert compare("C", got, want, "f32").wrong == 32


def test_inputs_of_one_scale_keep_the_tolerance_of_the_largest_expected_value() -> None:
    result = simulate(load_design(GEMM, SMALL))
    assert [c.line() for c in result.checks] == [
        "PASS C: worst element [73, 32] got 38.9619 want 38.9619 (|error| 1.53e-05; tolerance "
        "0.0001 relative + 0.00658 absolute)"]


def test_the_bound_is_k_times_a_rows_largest_times_b_columns_largest() -> None:
    a = np.array([[1.0, -3.0], [np.inf, 0.5]], np.float32)
    b = np.array([[2.0, 0.0], [-1.0, 4.0]], np.float32)
    rows, cols = term_bounds(a, b)
    assert rows.tolist() == [6.0, 1.0] and cols.tolist() == [2.0, 4.0]
    # every element's sum of |terms| is within it
    terms = np.abs(np.nan_to_num(a, posinf=0))[:, :, None] * np.abs(b)[None]
    assert (terms.sum(axis=1) <= np.multiply.outer(rows, cols)).all()


def test_an_output_that_is_no_traced_product_has_no_terms() -> None:
    handle = load_design(ROOT / "designs" / "passthrough.py")
    name = handle.outputs[0]
    assert product_terms(handle.ir, name, {}) is None


def test_an_element_whose_terms_are_all_zero_is_held_to_the_smallest_normal_value() -> None:
    terms = Terms(np.array([0.0, 8.0]), np.array([1.0, 1.0]), "A", "B")
    want = np.array([[0.0, 0.0], [100.0, 1.0]], np.float32)
    off = want.copy()
    off[0, 0] = 1e-3  # a row of A of zeros makes no error (but a flushed subnormal's)
    check = compare("C", off, want, "f32", terms=terms)
    assert not check.passed and check.worst_index == (0, 0)
    assert compare("C", want.copy(), want, "f32", terms=terms).passed


def _transposed_cascade() -> str:
    """designs/matmul_cascade.py with C drained transposed, tile by tile, into CT (N x M)."""
    text = (ROOT / "designs" / "matmul_cascade.py").read_text()
    for old, new in [
            ("C: Tensor[M, N, f32])", "CT: Tensor[N, M, f32])"),
            ('rt.drain(c[0], C, tiles(C, (m, n), order="col"))',
             "rt.drain(c[0], CT, (0, [N // n, M // m, m, n], [n * M, m, 1, M]))"),
            ("return A.astype(np.float32) @ B.astype(np.float32)",
             "return (A.astype(np.float32) @ B.astype(np.float32)).T.copy()")]:
        assert old in text
        text = text.replace(old, new)
    return text


def test_a_product_drained_transposed_keeps_the_tolerance_of_the_largest_values(
        design_file: Callable[..., Path]) -> None:
    """Element (i, j) of CT is C[j, i]: its own tolerance, taken from row i of A and column j
    of B, failed a correct run on npu2 (278 of 16,384 elements; a reviewer's find). The
    layout is judged first, and only a row-major product gets tolerances of its own."""
    result = simulate(load_design(design_file(_transposed_cascade()), device="npu2"))
    assert result.passed, result.checks[0].line()
    assert "per element" not in result.checks[0].line()


def test_the_layout_is_judged_at_samples_of_the_product() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 32)).astype(np.float32)
    b = rng.standard_normal((32, 48)).astype(np.float32)
    c = a @ b
    assert holds_product(c, a, b)
    assert not holds_product(np.ascontiguousarray(c[::-1]), a, b)  # rows in another order
    assert not holds_product(c[:, :47], a, b)  # not the product's shape
    assert holds_product(c + 1e-3, a, b) and not holds_product(np.zeros_like(c), a, b)


def test_a_product_the_cores_flush_to_zero_passes() -> None:
    """A core flushes subnormal inputs and products to zero: rows of A whose products with B
    are about 1e-40 come out 0, which an element's own tolerance (1e-4 of its terms, far
    below the smallest normal value) failed (a tester's find, with a flushing kernel)."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((8, 256)).astype(np.float32)
    a[1::2] *= np.float32(1e-21)
    b = (rng.standard_normal((256, 8)) * 1e-19).astype(np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    got = want.astype(np.float32)
    got[1::2] = 0  # flushed
    terms = Terms(*term_bounds(a, b), "A", "B", 256)
    check = compare("C", got, want.astype(np.float32), "f32", terms=terms)
    assert check.passed, check.line()
    got[1::2] = 1e-33  # far beyond what flushing takes (256 x 2^-126 = 3e-36)
    assert not compare("C", got, want.astype(np.float32), "f32", terms=terms).passed


def test_a_wrong_result_keeps_its_elements_own_tolerances() -> None:
    """Judged by the result alone, a wrong result failed the layout test and went back to the
    largest values' tolerance: with row 5 of A (no sampled row) ten thousand times the rest,
    a C with a quarter zeroed failed at 86 elements, one 10% off in half its rows passed (a
    reviewer's find). The reference tells the layout too."""
    handle = load_design(GEMM, {"M": "256", "K": "512", "N": "256", "ROWS": "2", "COLS": "2"})
    rng = np.random.default_rng(1)
    a = rng.standard_normal((256, 512)).astype(np.float32)
    a[5] *= 1e4
    inputs = {"A": a.astype(ml_dtypes.bfloat16),
              "B": rng.standard_normal((512, 256)).astype(np.float32).astype(ml_dtypes.bfloat16)}
    got = simulate(handle, inputs, check=False).outputs["C"]
    want = handle.expected(inputs)
    for wrong, count in [((slice(128, 256), slice(128, 256)), 16077), (slice(128, 256), 26633)]:
        bad = got.copy()
        bad[wrong] = 0 if count == 16077 else bad[wrong] * np.float32(0.9)
        check = compare_outputs(handle.ir, {"C": bad}, want, inputs, poison=True)[0]
        assert (check.passed, check.wrong) == (False, count)


def test_the_layout_allows_an_f32_sum_its_rounding_noise_and_refuses_a_symmetric_square() -> None:
    """A sampled row whose large terms cancel carries f32 rounding noise far beyond 5% of the
    samples' RMS: the reference then failed the layout test, and a wrong result, failing it
    too, lost its elements' own tolerances (a tester's find). A square product that fits its
    own transpose cannot tell a transposed drain (another's find: a Gram matrix's C^T failed
    at 1% of the elements, judged by rows and columns it did not hold)."""
    rng = np.random.default_rng(0)
    w1, w2 = rng.standard_normal((2, 32, 32)).astype(np.float32)
    b = np.concatenate([w1, w2, -(w1 + w2)])
    a = rng.standard_normal((32, 96)).astype(np.float32)
    x = a[0, :32].copy()
    a[0] = 1e6 * np.concatenate([x, x, x])  # row 0: large terms that cancel
    want = a @ b  # numpy's f32 sums: row 0 is rounding noise, far beyond 5% of the RMS
    assert np.abs(want[0]).max() > 0.05 * np.sqrt(np.mean(want[1:] ** 2))
    assert holds_product(want, a, b)
    g = rng.standard_normal((32, 64)).astype(np.float32)
    gram = g @ g.T
    assert not holds_product(gram, g, g.T)  # it fits its transpose: no per-element values
    other = rng.standard_normal((64, 32)).astype(np.float32)
    assert holds_product(g @ other, g, other)
