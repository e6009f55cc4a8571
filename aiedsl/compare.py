"""Arrays a run computed against the ones its reference expects, at each dtype's tolerance:
what the simulator, the NPU run and the host kernel tests report as PASS or FAIL. A design's
outputs, with the notes its structure gives a FAIL, are judged in :mod:`aiedsl.output_checks`."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aiedsl.ir.program import Rounding
from aiedsl.poison import poison as _poison
from aiedsl.poison import beyond_chance, poison_marked, poison_note, reference_holds
from aiedsl.tolerances import (  # noqa: F401 (what compare() applies, named here too)
    TINY, TOLERANCE, Allowance, Terms, allowed, allowed_bf16, bf16_sum_bound,
    transposed_allowance,
)
from aiedsl.values import masked as unmasked

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
    call: bool = False
    """A kernel call's results against the kernel's own reference (``sim --kernels native``,
    :mod:`aiedsl.sim.call_check`), not an output's against the design's."""

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
    :func:`bf16_sum_bound`); otherwise, how many roundings a kernel declares each result goes
    through in one call (``declare(..., roundings=2)``), each allowed its relative tolerance.
    NaN or infinity anywhere fails, unless ``nonfinite``: then they must sit where the reference
    has the same (NaN for NaN, an infinity of the same sign for an infinity). ``scale``: the
    largest |input| of the run: a FAIL of a sum whose every error is within the rounding of
    terms that size says so in its note (see :data:`TOLERANCE`); ``floor`` is the least value
    the absolute tolerance is a fraction of. A square FAIL that equals the reference transposed
    says so in its note (``transposed=False`` does not look). ``poison``: ``got`` comes from the
    simulator, whose memory starts as :func:`aiedsl.dtypes.unwritten`: a FAIL counts its wrong
    elements that look like that value (:func:`poison_marked`) and, when there are any, says so
    in its note (:func:`poison_note`). ``allowance``: an absolute error every element may have
    besides (npu2's bfp16 quantization of a product's inputs, :mod:`aiedsl.bfp16_allowance`),
    added to the float tolerance and named in its text (:func:`allowed`). An output whose every
    element equals the reference's is a PASS "exact", naming no worst element. ``terms``: for an
    f32 sum that is a matrix product, the bound of each element's sum of |terms|
    (:mod:`aiedsl.product_terms`): an element's absolute tolerance is the same fraction of it
    where it is below the largest |expected|.
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
        if rounds != "sum" and roundings > 1:  # a kernel's declared roundings=: an ulp each
            rtol *= roundings
        if rounds == "once":
            atol = TINY
            tol = f"tolerance {rtol:g} relative (" + (
                "one rounding per element)" if roundings <= 1 else
                f"{roundings} roundings per element)")
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
                    transposed=False, roundings=roundings, allowance=transposed_allowance(allowance)
                    ).passed:
        note = ("it equals the reference transposed: rows and columns are swapped on the way "
                "(a tiles() order, a dims_to_stream, or the reference's own layout)")
    elif not passed and rounds == "sum" and transposed and scale > 0:
        note = cancel_note(name, got, want, dtype, nonfinite=nonfinite, scale=scale,
                           roundings=roundings)
    return OutputCheck(name, passed, idx, float(g_all[worst]), float(w_all[worst]), worst_err,
                       tol, note, wrong=wrong, region=region, shape=got.shape, poisoned=marked,
                       masked=masked)


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


def run_lines(checks: Sequence[OutputCheck], timing: Any) -> list[str]:
    """What the command line prints of a run (a :class:`~aiedsl.run_result.RunResult`'s or a
    simulated one's ``lines()``): one line per comparison (a FAIL's wrong elements and notes
    under it), then ``timing``'s lines, indented."""
    return [c.line() for c in checks] + ["  " + t for t in timing.lines()]


def outputs_summary(outputs: Mapping[str, np.ndarray], checks: Sequence[OutputCheck]) -> str:
    """A run's outputs in a few words, for a result's ``repr``: each one's name, dtype and
    shape, with PASS or FAIL when it was compared (``C float32[256, 512] PASS``)."""
    verdict = {c.name: "PASS" if c.passed else "FAIL" for c in checks if not c.call}
    parts = []
    for name, arr in outputs.items():
        text = f"{name} {arr.dtype}[{', '.join(map(str, arr.shape))}]"
        parts.append(f"{text} {verdict[name]}" if name in verdict else text)
    # a call that differs from its kernel's reference fails the run, whatever the outputs say
    calls = sorted({c.name.split(".")[0] for c in checks if c.call and not c.passed})
    if calls:
        parts.append(f"FAIL of kernel {', '.join(calls)} against its reference" if len(calls) == 1
                     else f"FAIL of kernels {', '.join(calls)} against their references")
    return ", ".join(parts) or "no outputs"
