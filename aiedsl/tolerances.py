"""The tolerances a comparison holds an output's elements to: each float dtype's
(:data:`TOLERANCE`), a bf16 sum's by the roundings it went through (:func:`bf16_sum_bound`),
and what an element may be off by besides: npu2's bfp16 quantization (:class:`Allowance`) and,
for an f32 product, its own terms' size (:class:`Terms`). :func:`aiedsl.compare.compare`
applies them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

SLICE = 1 << 18
"""Elements read at a time (float64 copies of a slice, to bound memory)."""

TOLERANCE = {
    "f32": (1e-4, 1e-4),
    "bf16": (2.0 ** -7, 2.0 ** -7),
}
"""(rtol, atol relative to the largest |expected|) per float dtype; integers must match exactly.

f32 results of bf16 products accumulate in a different order per K tile than numpy's matmul, so
they agree to about 1e-6 relative; 1e-4 leaves room without hiding a wrong element. bf16 results
carry 8 bits of mantissa: half an ulp at 1.0 is 2^-8, one ulp is allowed. The absolute part
depends on how many roundings an element may carry (``rounds``, from
:func:`aiedsl.ir.program.rounding`):

* ``"sum"``, a kernel sums into it: a sum rounded at every K step may be an ulp of its partial
  sums off, which near zero is many ulps of the element itself. For f32: atol of the largest
  |expected| (the partial sums scale with the inputs, as the result does). For bf16, the error
  of each element is bounded by the roundings it really went through (:func:`bf16_sum_bound`):
  ``roundings`` of them, each of a partial sum of that element. (A floor of 1 here, once meant
  for the seeded inputs, passed zeros and transposed products for a GEMM of inputs scaled by
  0.01; a floor of the largest |input| passed half of C for inputs scaled by 0.002, as a
  product's result scales with the square of its inputs: no floor fits every design.) Where
  large terms cancel (a GEMM of ``[X|X]`` by ``[W; -W]`` is rounding noise), the partial sums
  are far larger than the result and a correct run can FAIL; its note then says that every
  error is within the rounding of terms of the inputs' size (``scale``, the largest |input|).
* ``"chain"``, float kernels in a chain: an intermediate rounding of a value of the output's own
  scale: atol of the largest |expected|;
* ``"once"``: nothing beyond the smallest normal number (subnormals flush to zero): a single
  element-wise kernel's wrong small element must not hide behind the largest one.
"""

BF16_ULP = 2.0 ** -7
"""bf16's ulp relative to a value's magnitude, at most (8 significant bits: the ulp of x is
2^(e - 7) for 2^e <= |x| < 2^(e + 1))."""


def sum_flips(roundings: int) -> float:
    """How many ulps of its partial sums a bf16 element rounded ``roundings`` times may differ
    by between two correct computations: 1 + log2(roundings) / 4 (1 for one rounding, 1.75 for
    8, 2.5 for 64). See :func:`bf16_sum_bound`."""
    return 1 + math.log2(max(roundings, 1)) / 4


def bf16_sum_bound(want: np.ndarray, roundings: int, floor: float = 0.0
                   ) -> tuple[float, float]:
    """The per-element tolerance of a bf16 output that a kernel sums into, rounding it
    ``roundings`` times (a GEMM's K/k calls into a bf16 C), as ``(coefficient, magnitude)``:
    element i may be off by ``coefficient * max(|want_i|, magnitude)``.

    Why. The kernel and the reference round at the same points (bf16, to nearest even, once
    per call) and differ only in the order their f32 sums are added (the mmul's blocks against
    numpy's; a real NPU's order is another). Those f32 sums differ by about 2^-20 of the sum, a
    bf16 ulp is 2^-8 of it: a rounding comes out one ulp apart only when the f32 sum lies within
    ~2^-12 of an ulp of a rounding boundary, for one rounding in thousands. Such a flip leaves
    the element one ulp of the partial sum where it happened apart, at most ``BF16_ULP`` times
    that partial sum's magnitude, and the later steps carry it along (they add the same terms
    to both). So an element may be off by a few such ulps: one, plus a quarter for each doubling
    of ``roundings`` (:func:`sum_flips`: the chance that two flips meet in one element grows
    with the square of their number), each of the largest partial sum the element went
    through. That magnitude is not known per element: it is at least |want_i|, and where an
    element's terms cancelled, its partial sums were of the size of any element's (the seeded
    inputs are independent: every element sums terms of the same kind), bounded by twice the
    RMS of all the outputs for all but a few percent of them (and a flip in those few is itself
    rare), or by ``floor`` when given. Measured on gemm_bf16 (512x512 C, k=64, K from 64 to
    4096, several seeds), the host-built mm.cc and another f32 order both stay within 0.6 of
    this bound, while a kernel that truncates instead of rounding to nearest (K=128) reaches
    1.5 to 1.7 of it and one rounding to bf16 after every 8-wide block (K=64) 2: both FAIL. A
    truncating kernel with one rounding (K=k) is one ulp off, as a flip is, and passes.
    """
    flat = np.asarray(want).reshape(-1)
    total, count = 0.0, 0
    for lo in range(0, flat.size, SLICE):
        part = flat[lo:lo + SLICE].astype(np.float64)
        part = part[np.isfinite(part)]
        total += float(np.dot(part, part))
        count += part.size
    rms = math.sqrt(total / count) if count else 0.0
    return sum_flips(roundings) * BF16_ULP, max(2 * rms, floor)


@dataclass(frozen=True)
class Allowance:
    """An absolute error the elements of an output may have besides its dtype's tolerance, and
    the words that name it in the comparison's line (npu2's bfp16 quantization of a product's
    inputs: :mod:`aiedsl.bfp16_allowance`)."""

    value: float
    """The allowance of every element, or with ``elements`` the largest of theirs."""
    what: str
    """``the bfp16 quantization of 'A' and 'B' (npu2's bf16 mmul, floor)``."""
    elements: np.ndarray | None = field(default=None, compare=False)
    """Each element's own allowance, in the output's shape; None: ``value`` for every one."""


def allowed_bf16(rtol: float, magnitude: float, allowance: Allowance | None
                 ) -> tuple[float, float]:
    """A bf16 sum's tolerance ``rtol * max(|want_i|, magnitude)`` widened to cover
    ``allowance`` on every element besides: ``rtol + value / magnitude`` times the same
    maximum is at least ``rtol * max(|want_i|, magnitude) + value`` for every |want_i| (a
    magnitude of 0, all expected values zero, becomes the one that makes it exactly that)."""
    if allowance is None or allowance.value <= 0:
        return rtol, magnitude
    if magnitude <= 0:
        return rtol, allowance.value / rtol
    return rtol + allowance.value / magnitude, magnitude


def allowed(atol: float, tol: str, allowance: Allowance, add: bool) -> tuple[float, str]:
    """A float comparison's absolute tolerance with ``allowance`` added (``add``; a bf16 sum's
    was widened by :func:`allowed_bf16` instead, and one of each element's own is added element
    by element), and its text ``tol`` naming it::

        tolerance 0.0001 relative + 0.0102 absolute + up to 1.77 per element for the bfp16
        quantization of 'A' and 'B' (npu2's bf16 mmul, floor)
    """
    if allowance.elements is not None:
        return atol, f"{tol} + up to {allowance.value:.3g} per element for {allowance.what}"
    if add:
        return atol + allowance.value, f"{tol} + {allowance.value:.3g} for {allowance.what}"
    return atol, f"{tol} and {allowance.value:.3g} for {allowance.what}"


@dataclass(frozen=True)
class Terms:
    """The bound of each element's sum of |terms| in an f32 output that is the product of host
    tensors ``a`` (M x K) and ``b`` (K x N): ``rows[i] * cols[j]`` (``K * max|A[i]|`` and
    ``max|B[:, j]|``, :mod:`aiedsl.product_terms`)."""

    rows: np.ndarray = field(compare=False)
    cols: np.ndarray = field(compare=False)
    a: str
    b: str
    k: int = 1
    """K, the terms each element sums."""

    def atol(self, lo: int, size: int, atol: float, atol_rel: float) -> np.ndarray:
        """The absolute tolerances of the ``size`` elements from flat index ``lo``:
        ``atol_rel`` of their bound, at most ``atol``, and at least what the cores' flushing
        of subnormal values to zero may take from the sum: :data:`TINY` of each term, of each
        term's A and of each term's B (``TINY * (K + K max|B[:, j]| + K max|A[i]|)``)."""
        n = self.cols.size
        first = lo // n
        last = (lo + size - 1) // n + 1
        rows = self.rows[first:last]
        bound = np.multiply.outer(rows, self.cols) * atol_rel
        np.maximum(bound, TINY * np.add.outer(rows, self.k * (1 + self.cols)), out=bound)
        bound = bound.reshape(-1)[lo - first * n:lo - first * n + size]
        return np.minimum(bound, max(atol, TINY), out=bound)


TINY = 2.0 ** -126
"""The smallest normal f32 and bf16 magnitude: the absolute tolerance of an output with one
rounding per element (the cores flush subnormals to zero)."""


def transposed_allowance(allowance: Allowance | None) -> Allowance | None:
    """``allowance`` of an output compared with its reference transposed: each element's own
    allowance goes with its expected value."""
    if allowance is None or allowance.elements is None:
        return allowance
    return Allowance(allowance.value, allowance.what, np.asarray(allowance.elements).T)
