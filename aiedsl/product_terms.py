"""How large the terms of each element of a traced matrix product are: the scale an f32 sum's
rounding follows, element by element.

An f32 output that a kernel sums into is compared with an absolute tolerance of 1e-4 of the
largest |expected| (:data:`aiedsl.tolerances.TOLERANCE`): the partial sums scale with the inputs,
and where terms cancel they are larger than the element itself. But the largest |expected| is
one element's. A few rows of A far larger than the rest (outlier activations) made it theirs,
and every other element's check then allowed errors of their size: with one row of A ten
thousand times the rest, a reference with half of C zeroed passed. Where the output is a
product of host tensors A (M x K) and B (K x N) that the library's matmul kernels store
(traced as :func:`aiedsl.bfp16_allowance.bfp16_product` traces npu2's), element (i, j) sums K
terms of at most ``max|A[i]| * max|B[:, j]|`` each: its absolute tolerance is 1e-4 of that
bound, ``K * max|A[i]| * max|B[:, j]|``, where it is below the largest |expected|. The bound
is at least the element's own sum of |terms|, which its rounding follows, so no correct run
fails for it that passed before unless its terms' rounding errors add up over thousands of
terms without cancelling (which the relative part covers where the terms share a sign); a
wrong element in an ordinary row is no longer hidden by the largest row. The tolerance is at
least what the cores' flushing of subnormal values takes from a sum
(:meth:`aiedsl.tolerances.Terms.atol`), and it applies only where the result or the reference
holds the product row-major (:func:`holds_product`): a drain that writes C transposed or tile
by tile puts another element there.

>>> a = np.array([[1.0, 1.0], [1000.0, 1.0]], np.float32)
>>> rows, cols = term_bounds(a, np.ones((2, 3), np.float32))
>>> rows.tolist(), cols.tolist()
([2.0, 2000.0], [1.0, 1.0, 1.0])
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from aiedsl.bfp16_allowance import bfp16_operands, bfp16_product, reference_name
from aiedsl.distinct import distinct
from aiedsl.tolerances import Terms
from aiedsl.ir.design import Design
from aiedsl.ir.kernel import Kernel
from aiedsl.kernels.bfp16 import to_bfp16
from aiedsl.kernels.cascade import matmul_cascade_ref
from aiedsl.kernels.matmul import matmul_ref
from aiedsl.operand_largest import row_col_largest

__all__ = ["holds_product", "laid_out", "matmul_operands", "product_terms", "term_bounds"]


def matmul_operands(k: Kernel) -> tuple[int, int, int | None, str] | None:
    """For a library matmul kernel (npu1's exact ones and npu2's bfp16 ones): the positions of
    its A, B and stored C arguments (None: it puts its sums on the cascade), and the rounding
    mode of its quantization ("" where there is none); None for any other kernel."""
    found = bfp16_operands(k)
    if found is not None or not k.shipped:
        return found
    names = [a.name for a in k.args]
    if k.reference in (reference_name(matmul_ref), reference_name(matmul_cascade_ref)):
        return names.index("a"), names.index("b"), names.index("c") if "c" in names else None, ""
    return None


def term_bounds(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(K * max|A[i]|, max|B[:, j]|)`` as float64 vectors: their outer product bounds the sum
    of |terms| of each element of ``A @ B`` (non-finite values left out)."""
    rows, cols = row_col_largest(a, b)
    return rows * a.shape[1], cols


SAMPLES = 16
"""Rows and columns of an output at which :func:`holds_product` judges its layout."""


def holds_product(got: np.ndarray, a: np.ndarray, b: np.ndarray, rounding: str = "") -> bool:
    """Does ``got`` hold ``A @ B`` laid out row-major, element (i, j) row i of A times column j
    of B, and not transposed? Judged at :data:`SAMPLES` x :data:`SAMPLES` elements spread over
    it, against the product (of A and B quantized to bfp16 in ``rounding``, when given) to 5%
    of the larger of the element and the samples' RMS, plus 1e-4 of the element's bound of its
    terms (an f32 sum of cancelling terms is their rounding noise). A drain that writes C
    transposed or tile after tile puts other products there (a reviewer's find: an element's
    own tolerance, taken from another row and column, then failed correct runs); a square C
    that fits its transpose as well (a nearly symmetric product) cannot tell. The tolerances
    per element apply only where the result or the reference holds the product.

    >>> a, b = np.eye(2, dtype=np.float32), np.array([[1, 2], [3, 4]], np.float32)
    >>> holds_product(a @ b, a, b), holds_product((a @ b).T.copy(), a, b)
    (True, False)
    """
    g = np.asarray(got)
    if g.ndim != 2 or g.shape != (a.shape[0], b.shape[1]):
        return False
    rows = distinct(np.linspace(0, g.shape[0] - 1, min(g.shape[0], SAMPLES)).astype(int))
    cols = distinct(np.linspace(0, g.shape[1] - 1, min(g.shape[1], SAMPLES)).astype(int))
    A = np.asarray(a[rows], dtype=np.float32)
    B = np.asarray(b[:, cols], dtype=np.float32)
    terms = np.multiply.outer(*term_bounds(A, B))
    if rounding:
        A = to_bfp16(A, axis=1, rounding=rounding)
        B = to_bfp16(B, axis=0, rounding=rounding)
    with np.errstate(invalid="ignore", over="ignore"):
        want = A.astype(np.float64) @ B.astype(np.float64)
        finite = np.isfinite(want)
        if not finite.any():
            return False
        scale = float(np.sqrt(np.mean(want[finite] ** 2)))
        room = 0.05 * (np.abs(want) + scale) + 1e-4 * terms

        def fits(have: np.ndarray) -> bool:
            ok = finite & np.isfinite(have)
            return bool(ok.any()) and bool(np.all(np.abs(have[ok] - want[ok]) <= room[ok]))

        if not fits(g[np.ix_(rows, cols)].astype(np.float64)):
            return False
        square = g.shape[0] == g.shape[1] and np.array_equal(rows, cols)
        return not (square and fits(g[np.ix_(cols, rows)].T.astype(np.float64)))


def laid_out(d: Design, tensor: str, got: np.ndarray, want: np.ndarray,
             inputs: Mapping[str, np.ndarray]) -> bool:
    """Is output ``tensor`` a product the library's matmuls store, of host tensors among the
    run's ``inputs``, laid out as :func:`holds_product` says in what the run wrote (``got``,
    the kernels' product, quantized as they quantize) or in the reference's ``want`` (exact,
    or as the kernels quantize)? Either: a wrong result fails the test, and a wrong reference
    too, and the other still tells the layout (judged by the result alone, a wrong kernel
    lost its elements' own tolerances, and half of C zeroed passed: a reviewer's find); a
    drain writing C transposed transposes both."""
    _, product = bfp16_product(d, tensor, matmul_operands)
    if product is None or product.a not in inputs or product.b not in inputs:
        return False
    a, b = np.asarray(inputs[product.a]), np.asarray(inputs[product.b])
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        return False
    return holds_product(got, a, b, product.rounding) or holds_product(want, a, b) or (
        product.rounding != "" and holds_product(want, a, b, product.rounding))


def product_terms(d: Design, tensor: str, inputs: Mapping[str, np.ndarray]) -> Terms | None:
    """:func:`term_bounds` of output ``tensor`` when it is an f32 product the library's matmuls
    store, from host tensors A (M x K) and B (K x N) among the run's ``inputs`` (one of each);
    None otherwise."""
    t = d.tensor(tensor).type
    if t.dtype != "f32" or len(t.shape) != 2:
        return None
    _, product = bfp16_product(d, tensor, matmul_operands)
    if product is None or product.a not in inputs or product.b not in inputs:
        return None
    a, b = np.asarray(inputs[product.a]), np.asarray(inputs[product.b])
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0] \
            or (a.shape[0], b.shape[1]) != tuple(t.shape):
        return None
    return Terms(*term_bounds(a, b), product.a, product.b, a.shape[1])
