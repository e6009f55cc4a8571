"""Arrays a run computed against the ones its reference expects, at each dtype's tolerance:
what the simulator, the NPU run and the host kernel tests report as PASS or FAIL. A design's
outputs, with the notes its structure gives a FAIL, are judged in :mod:`aiedsl.output_checks`."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from aiedsl.ir.program import Rounding
from aiedsl.poison import poison as _poison
from aiedsl.poison import beyond_chance, poison_marked, poison_note, reference_holds
from aiedsl.values import masked as unmasked

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
    for lo in range(0, flat.size, _SLICE):
        part = flat[lo:lo + _SLICE].astype(np.float64)
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


@dataclass
class OutputCheck:
    """How one output compares with the reference."""

    name: str
    passed: bool
    worst_index: tuple[int, ...] | None
    """The index of the element furthest from the reference; None when every element is equal
    (then :attr:`got`, :attr:`want` and :attr:`error` are 0.0: no element's values)."""
    got: float
    """The output's value at :attr:`worst_index`."""
    want: float
    """The reference's value there."""
    error: float
    """``|got - want|`` there."""
    tolerance: str
    note: str | None = None
    """Said under the line: what may explain a FAIL that the comparison cannot see."""
    wrong: int = 0
    """How many elements are out of tolerance."""
    region: tuple[tuple[int, int], ...] | None = None
    """The smallest box holding every wrong element: per axis, its first and one past its last
    index."""
    shape: tuple[int, ...] = ()
    """The output's shape."""
    poisoned: int = 0
    """How many wrong elements look like memory nothing wrote (see :func:`poison_marked`),
    counted when the comparison was asked to (a simulated run's)."""
    hints: list[str] = field(default_factory=list)
    """Under a FAIL, the design's notes that may explain it (:mod:`aiedsl.notes`: a host
    tensor's bytes reinterpreted, a block of another shape), each ``file:line: text``."""
    masked: int = 0
    """Elements the reference masked (a ``numpy.ma`` result): not compared."""

    def line(self) -> str:
        """One line for the CLI (with, under a FAIL, where its wrong elements lie, and an
        indented note for its note and each hint)."""
        text = self._line()
        where = self.where()
        if where is not None:
            text = f"{text}\n  {where}"
        notes = ([] if self.note is None else [self.note]) + self.hints
        return "".join([text] + [f"\n  note: {n}" for n in notes])

    def where(self) -> str | None:
        """Where a FAIL's wrong elements lie: how many, and the box holding them when it is not
        the whole output (``[64:128, 0:64]``, numpy's slice of them)."""
        if self.passed or not self.wrong or self.region is None:
            return None
        total = math.prod(self.shape)
        if self.wrong == total:
            return f"wrong: all {total:,} elements"
        tenths = 1000 * self.wrong // total  # rounded down: 65,522 of 65,536 is not 100%
        share = "<0.1%" if tenths == 0 else f"{tenths / 10:g}%"
        text = f"wrong: {self.wrong:,} of {total:,} elements ({share})"
        if any(hi - lo != n for (lo, hi), n in zip(self.region, self.shape)):
            box = ", ".join(f"{lo}:{hi}" for lo, hi in self.region)
            text += f", all within [{box}]"
        return text

    def _line(self) -> str:
        text = self._compared()
        if not self.masked:
            return text
        total = math.prod(self.shape)
        return (f"{text[:-1]}; {self.masked:,} of {total:,} elements masked by the reference, "
                "not compared)")

    def _compared(self) -> str:
        status = "PASS" if self.passed else "FAIL"
        if self.worst_index is None:
            if self.tolerance == EXACT:
                return f"{status} {self.name}: exact ({self.tolerance})"
            # "exact (tolerance ...)" read as a contradiction (a newcomer's tester)
            return f"{status} {self.name}: exact, every element equal (allowed: {self.tolerance})"
        if self.tolerance == EXACT:  # integers in full: -2147483648, not -2.14748e+09
            return (f"{status} {self.name}: worst element {list(self.worst_index)} got "
                    f"{int(self.got)} want {int(self.want)} (|error| {int(self.error)}; "
                    f"{self.tolerance})")
        return (f"{status} {self.name}: worst element {list(self.worst_index)} got {self.got:.6g}"
                f" want {self.want:.6g} (|error| {self.error:.3g}; {self.tolerance})")


EXACT = "integers must match exactly"
"""The tolerance of an integer output, as a check's line says it."""

_SLICE = 1 << 18
"""Elements compared at a time: float64 copies of a slice, never of a whole tensor."""


def compare(name: str, got: np.ndarray, want: np.ndarray, dtype: str, *,
            nonfinite: bool = False, rounds: Rounding = "sum", scale: float = 0.0,
            transposed: bool = True, floor: float = 0.0, poison: bool = False,
            roundings: int = 1, allowance: Allowance | None = None,
            terms: Terms | None = None) -> OutputCheck:
    """Compare ``got`` with ``want`` at the tolerance of ``dtype`` (in slices, to bound memory).

    ``rounds``: how many roundings an element may carry (see :data:`TOLERANCE`); ``"sum"``, the
    most lenient, when nothing is known; for a bf16 sum, ``roundings`` is how many times a
    kernel rounded each element's partial sums (:func:`aiedsl.ir.roundings.sum_roundings`; see
    :func:`bf16_sum_bound`). NaN or infinity anywhere fails, unless ``nonfinite``:
    then they must sit where the reference has the same (NaN for NaN, an infinity of the same
    sign for an infinity). ``scale``: the largest |input| of the run: a FAIL of a sum whose
    every error is within the rounding of terms that size says so in its note (see
    :data:`TOLERANCE`); ``floor`` is the least value the absolute tolerance is a fraction of.
    A square FAIL that equals the reference transposed says so in its note
    (``transposed=False`` does not look). ``poison``: ``got`` comes from the simulator, whose
    memory starts as :func:`aiedsl.dtypes.unwritten`: a FAIL counts its wrong elements that
    look like that value (:func:`poison_marked`) and, when there are any, says so in its note
    (:func:`poison_note`). ``allowance``: an absolute error every element may have besides
    (npu2's bfp16 quantization of a product's inputs, :mod:`aiedsl.bfp16_allowance`), added to
    the float tolerance and named in its text (:func:`allowed`). An output whose every element
    equals the reference's is a PASS "exact", naming no worst element.
    ``terms``: for an f32 sum that is a matrix product, the bound of each element's sum of
    |terms| (:mod:`aiedsl.product_terms`): an element's absolute tolerance is the same fraction
    of it where it is below the largest |expected|.
    """
    g_all = got.reshape(-1)
    cap: Terms | None = None  # per-element absolute tolerances (of an f32 product's terms)
    mask, data = unmasked(want)  # a numpy.ma reference result: its masked elements are skipped
    skip = None if mask is None else np.asarray(mask).reshape(-1)
    if skip is not None and not skip.any():
        skip = None
    w_all = np.asarray(data).reshape(-1)
    magnitude = None  # a bf16 sum's: each element is held to rtol * max(|want_i|, magnitude)
    if dtype in TOLERANCE:
        rtol, atol_rel = TOLERANCE[dtype]
        if rounds == "once":
            atol = TINY
            tol = f"tolerance {rtol:g} relative (one rounding per element)"
        elif rounds == "sum" and dtype == "bf16":
            rtol, magnitude = bf16_sum_bound(w_all, roundings, floor)
            if allowance is not None and allowance.elements is None:
                rtol, magnitude = allowed_bf16(rtol, magnitude, allowance)
            atol = rtol * magnitude
            tol = (f"tolerance {rtol:.3g} x max(|expected|, {magnitude:.3g}) per element, for "
                   f"{roundings} rounding{'s' if roundings != 1 else ''} of its partial sums")
        else:
            atol = atol_rel * max(largest([w_all]), floor)
            tol = f"tolerance {rtol:g} relative + {atol:.3g} absolute"
            if terms is not None and rounds == "sum" and got.ndim == 2 and \
                    (terms.rows.size, terms.cols.size) == got.shape and \
                    float(terms.rows.min()) * float(terms.cols.min()) < atol / atol_rel:
                cap = terms  # some element's terms are smaller than the largest |expected|
                tol += (f", or {atol_rel:g} of K x max|{terms.a}[i]| x max|{terms.b}[:, j]| "
                        "where less")
        if allowance is not None:
            atol, tol = allowed(atol, tol, allowance, magnitude is None)
    else:
        rtol, atol = 0.0, 0.0
        tol = EXACT
    # The worst element is the one nearest to failing: the largest share of its own tolerance
    # used (err / tol), a failing one before any passing one, ties to the larger error, then to
    # the first index. Ranking by err - tol instead named a zero-error element whose tolerance
    # is relative and whose expected value is 0 (-TINY) over one 0.5 off at 100.
    each = None if allowance is None or allowance.elements is None else \
        np.asarray(allowance.elements).reshape(-1)
    worst, worst_key = 0, (False, -np.inf, -np.inf)
    wrong, marked, equal = 0, 0, True
    p = _poison(dtype) if poison else None
    low = [math.inf] * got.ndim  # per axis, the least and greatest index of a wrong element
    # every element's bound is above 0 (the share of its tolerance an error uses is a plain
    # quotient) unless the tolerance is exact or relative to a value that may be 0
    positive = atol > 0 and (magnitude is None or rtol > 0)
    high = [-1] * got.ndim
    for lo in range(0, g_all.size, _SLICE):
        g = g_all[lo:lo + _SLICE].astype(np.float64)
        w = w_all[lo:lo + _SLICE].astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            err = np.subtract(g, w)
            np.abs(err, out=err)
            bound = np.abs(w)
            if magnitude is not None:
                np.maximum(bound, magnitude, out=bound)
                bound *= rtol
            else:
                bound *= rtol
                bound += atol if cap is None else cap.atol(lo, g.size, atol, atol_rel)
            if each is not None:
                bound += each[lo:lo + _SLICE]
            fails = err > bound
            if positive:  # no bound is 0 (a NaN one is a non-finite element's, set below)
                share = np.divide(err, bound, out=bound)
            else:
                # an exact tolerance (0) is used not at all by a zero error, without end by any
                # other
                share = np.where(bound > 0, err / np.where(bound > 0, bound, 1.0),
                                 np.where(err > 0, np.inf, 0.0))
        if not np.isfinite(err).all():  # a NaN compares false with everything: it would pass
            wild = ~(np.isfinite(g) & np.isfinite(w))
            same = nonfinite & ((np.isnan(g) & np.isnan(w)) | (np.isinf(g) & (g == w)))
            err[wild] = np.where(same[wild], 0.0, np.inf)
            share[wild] = np.where(same[wild], 0.0, np.inf)
            fails[wild] = ~same[wild]
        if skip is not None:
            out = skip[lo:lo + _SLICE]
            err[out], share[out], fails[out] = 0.0, 0.0, False
        equal = equal and not err.any()
        any_fails = bool(fails.any())
        i = _nearest_to_failing(share, err, fails if any_fails else None)
        key = (any_fails, float(share[i]), float(err[i]))
        if key > worst_key:
            worst, worst_key = lo + i, key
        if any_fails:
            bad = np.flatnonzero(fails)
            wrong += bad.size
            if p is not None:
                marked += int(np.count_nonzero(poison_marked(g[bad], w[bad], dtype, p)))
            for axis, at in enumerate(np.unravel_index(bad + lo, got.shape)):
                low[axis] = min(low[axis], int(at.min()))
                high[axis] = max(high[axis], int(at.max()))
    worst_err = worst_key[2]
    passed = wrong == 0
    masked = 0 if skip is None else int(np.count_nonzero(skip))
    if g_all.size == 0 or (passed and equal):
        return OutputCheck(name, passed, None, 0.0, 0.0, 0.0, tol, shape=got.shape,
                           masked=masked)
    if marked and p is not None and reference_holds(w_all, dtype, p, _SLICE):
        marked = 0  # the reference itself holds such values: they tell nothing
    if marked and not beyond_chance(marked, wrong, dtype):
        marked = 0  # as many as a kernel's own wrong numbers land there by chance
    idx = tuple(int(i) for i in np.unravel_index(worst, got.shape))
    region = tuple((int(a), b + 1) for a, b in zip(low, high)) if wrong else None
    note = None
    if marked and p is not None:
        note = poison_note(marked, wrong, dtype, p)
    elif not passed and got.ndim == 2 and got.shape[0] == got.shape[1] > 1 and transposed and \
            compare(name, got, np.asanyarray(want).T, dtype, nonfinite=nonfinite, rounds=rounds,
                    transposed=False, roundings=roundings, allowance=_transposed(allowance)
                    ).passed:
        note = ("it equals the reference transposed: rows and columns are swapped on the way "
                "(a tiles() order, a dims_to_stream, or the reference's own layout)")
    elif not passed and rounds == "sum" and transposed and scale > 0:
        note = cancel_note(name, got, want, dtype, nonfinite=nonfinite, scale=scale,
                           roundings=roundings)
    return OutputCheck(name, passed, idx, float(g_all[worst]), float(w_all[worst]), worst_err,
                       tol, note, wrong=wrong, region=region, shape=got.shape, poisoned=marked,
                       masked=masked)


def _transposed(allowance: Allowance | None) -> Allowance | None:
    """``allowance`` of an output compared with its reference transposed: each element's own
    allowance goes with its expected value."""
    if allowance is None or allowance.elements is None:
        return allowance
    return Allowance(allowance.value, allowance.what, np.asarray(allowance.elements).T)


def _nearest_to_failing(share: np.ndarray, err: np.ndarray, among: np.ndarray | None) -> int:
    """The index of the element with the largest ``share`` of its tolerance used (of those in
    ``among`` when given), ties to the larger ``err``, then to the first index."""
    pick = share if among is None else np.where(among, share, -np.inf)
    top = np.flatnonzero(pick == pick[np.argmax(pick)])
    if top.size == 0:  # NaN shares (none reach here: non-finite elements are set before)
        return 0
    if top.size == 1:
        return int(top[0])
    return int(top[np.argmax(err[top])])  # argmax keeps the first of equal errors


def cancel_note(name: str, got: np.ndarray, want: np.ndarray, dtype: str, *, nonfinite: bool,
                scale: float, roundings: int = 1) -> str | None:
    """For a summing output ``name`` that FAILed: the note saying that every error is within the
    rounding of terms the size of the largest |input| (``scale``), when that is larger than any
    result (large terms may cancel); None otherwise."""
    peak = largest([want])
    if dtype not in TOLERANCE or scale <= peak or not compare(
            name, got, want, dtype, nonfinite=nonfinite, rounds="sum", transposed=False,
            floor=scale, roundings=roundings).passed:
        return None
    return (f"every error is within the rounding of terms the size of the largest |input| "
            f"({scale:.3g}), which is larger than any result here ({peak:.3g}): if large terms "
            f"cancel in '{name}', its values are rounding noise, which this check does not "
            "allow for")


def largest(arrays: Iterable[np.ndarray]) -> float:
    """The largest finite magnitude in ``arrays`` (0 for none), a slice at a time."""
    peak = 0.0
    for a in arrays:
        flat = np.asarray(a).reshape(-1)
        if flat.dtype.kind not in "fiu" and flat.dtype.name != "bfloat16":
            continue
        wide = np.float64 if flat.dtype == np.float64 else np.float32  # a scale: f32 will do
        for lo in range(0, flat.size, _SLICE):
            part = np.abs(flat[lo:lo + _SLICE].astype(wide))
            peak = max(peak, float(np.max(part, where=np.isfinite(part), initial=0)))
    return peak


def outputs_summary(outputs: Mapping[str, np.ndarray], checks: Sequence[OutputCheck]) -> str:
    """A run's outputs in a few words, for a result's ``repr``: each one's name, dtype and
    shape, with PASS or FAIL when it was compared (``C float32[256, 512] PASS``)."""
    verdict = {c.name: "PASS" if c.passed else "FAIL" for c in checks}
    parts = []
    for name, arr in outputs.items():
        text = f"{name} {arr.dtype}[{', '.join(map(str, arr.shape))}]"
        parts.append(f"{text} {verdict[name]}" if name in verdict else text)
    return ", ".join(parts) or "no outputs"
