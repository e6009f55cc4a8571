"""A native run's kernel calls held to their numpy references (``aiedsl sim --kernels native``).

The design's outputs are compared with the design's reference, at a tolerance for everything
the values went through on the way: behind a bf16 GEMM, an element-wise kernel's output may be
off by the GEMM's partial sums' rounding, and a kernel that zeroed every |y| < 0.6 there passed
(a transformer engineer). So each core's first call of each kernel also has its C++ results
compared with what the kernel's own reference makes of the same inputs, at ``aiedsl kernel
test``'s tolerance for that kernel alone; a call that differs is a FAIL of its own, unless
every difference is within what summing the inputs in another order makes
(:func:`within_reordering`). The first only, as ``kernel test`` runs a kernel once: a kernel's
C++ may keep ``static`` state its reference does not (a call counter, which the design's
reference models, shared by the core's call sites), and a first call costs nothing to check.

Not checked: a kernel on the cascade (its words move while it runs), and a user's kernel whose
C++ runs a bf16 mmul on npu2's bfp16 unit (a reference of exact products differs from it by the
quantization, which the design's comparison allows for and ``kernel test`` notes).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import numpy as np

from aiedsl.compare import OutputCheck, compare, largest
from aiedsl.ir.core_ops import Call
from aiedsl.ir.kernel import Kernel
from aiedsl.kernels.bfp16 import ROUNDING_MODES
from aiedsl.kernels.faults import SATURATION_MODES
from aiedsl.kernels.host_check import kernel_tolerance
from aiedsl.kernels.host_load import RESET_MODES

__all__ = ["CallChecks"]

HINT = ("the C++ and the kernel's numpy reference differ on this call's own inputs, beyond the "
        "tolerance of that kernel alone (the design's outputs may pass still: theirs covers "
        "every rounding on the way there)")


class CallChecks:
    """The first call of each kernel whose C++ results differ from its reference's, over one
    native run (and the runs it makes again: a later invocation, a depth search), and the
    first whose differences :func:`within_reordering` excuses."""

    def __init__(self) -> None:
        self.found: dict[str, OutputCheck] = {}
        """By kernel symbol: the FAIL of its first call that differs; by ``<symbol>
        (excused)``, the PASS, with its note, of the first whose differences are excused."""

    def checked(self, k: Kernel, native: Callable[..., None], reference: Callable[..., None],
                core: str, call: Call, count: list[int], modes: list[int]
                ) -> Callable[..., None]:
        """``native`` for ``core``'s call ``call`` of ``k`` (``count[0]``: the core's calls of
        it so far, counted by ``native``; ``modes``: the core's rounding and saturation modes,
        which it runs under), its first call's results compared with ``reference``'s on
        copies of the same arguments, unless ``k`` has a FAIL already."""
        found = self.found
        symbol = k.symbol
        written = [i for i, a in enumerate(k.args) if a.kind == "buffer" and a.access != "in"]
        where = f"{core}'s call {{n}} ({call.loc.file}:{call.loc.line})"

        def run(*args: Any) -> None:
            # the core's first call of the kernel, whichever call site makes it: a static of
            # the C++ is the core's (a second call site's first call found a counter at 1)
            if count[0] or symbol in found:
                native(*args)
                return
            given = reference_args(k, args)
            found_modes = (modes[0], modes[1])
            native(*args)
            reference(*given)
            tolerance = kernel_tolerance(k, given)
            for i in written:
                c = compare(f"{symbol}.{k.args[i].name} at {where.format(n=count[0])}",
                            np.asarray(args[i]), np.asarray(given[i]), k.args[i].dtype,
                            nonfinite=True, transposed=False, **tolerance)
                if not c.passed and tolerance["rounds"] != "sum" and \
                        within_reordering(args[i], given[i], given, k):
                    # passed, and said: an excused difference is not hidden (a reviewer)
                    found.setdefault(f"{symbol} (excused)", dataclasses.replace(
                        c, passed=True, call=True, note=REORDERED))
                    continue
                if not c.passed:
                    c.call = True
                    c.hints.append(HINT)
                    if found_modes != RESET_MODES:
                        c.hints.append(inherited_modes_text(found_modes))
                    found[symbol] = c
                    return

        return run

    def fails(self) -> list[OutputCheck]:
        """Each kernel's first call that differs (a FAIL) or whose differences are excused (a
        PASS with a note), in the order they were found."""
        return list(self.found.values())


ORDER_EPS = 2.0 ** -23
"""An f32 rounding, relative: what a sum the C++ and its reference add in different orders may
differ by at each level of the sum (kernels sum in f32, bf16 inputs too)."""


def within_reordering(got: Any, want: Any, given: list[Any], k: Kernel) -> bool:
    """Whether every difference of float output ``got`` from ``want`` (one call of ``k``) is
    within what summing the inputs in another order than the reference may make: two f32
    roundings of the largest |input| per level of a pairwise sum of the largest input's
    elements (2 x log2 n of them). A correct x - mean(x) of inputs near 1000 differed by an
    f32 step there, beyond f32's 1e-4 relative near the mean, in 30% of its elements (a
    false-alarm hunter). An integer output is never excused, nor a non-finite element other
    than the reference's; a bound of n steps hid an off-by-one of i32 inputs near 2^24 and a
    flush of small values behind an outlier activation (a reviewer)."""
    g = np.asarray(got)
    if g.dtype.kind in "iub":
        return False
    ins = [v for v, a in zip(given, k.args)
           if a.kind == "buffer" and a.access == "in" and isinstance(v, np.ndarray)]
    n = max((v.size for v in ins), default=0)
    if n < 2:
        return False
    bound = 2 * math.ceil(math.log2(n)) * ORDER_EPS * largest(ins)
    g64 = g.astype(np.float64)
    w64 = np.asarray(want).astype(np.float64)
    finite = np.isfinite(w64)
    same = (g64 == w64) | (np.isnan(g64) & np.isnan(w64))
    if not (same | (finite & np.isfinite(g64))).all():
        return False  # a NaN or infinity the reference has not
    with np.errstate(invalid="ignore"):  # inf - inf where both are the same infinity
        err = np.abs(np.where(finite & np.isfinite(g64), g64 - w64, 0.0))
    return bool(err.max(initial=0.0) <= bound)


REORDERED = ("beyond the kernel's own tolerance, but within two f32 roundings of its largest "
             "input per level of a sum of its elements: the C++ and the reference add in "
             "different orders (near a mean subtracted, that is many ulps of the result); a "
             "kernel that rounds within a call says chained=True")
"""The note of a call whose every difference :func:`within_reordering` excuses."""


def reference_args(k: Kernel, args: tuple[Any, ...]) -> list[Any]:
    """Copies of a call's ``args`` for kernel ``k``'s reference, as the reference run of the
    call gets them (:func:`~aiedsl.sim.call_refs.before_the_call`): a buffer passed as more
    than one argument it writes is one copy for all of them, as the core has one memory (two
    copies FAILed a correct ``two(s, t, t)``); an "in" argument that is also written is a copy
    of its own, as it was before the call."""
    shared: dict[tuple[Any, ...], np.ndarray] = {}
    keys = [_memory(a) if isinstance(a, np.ndarray) else None for a in args]
    written = {keys[i] for i, a in enumerate(k.args[:len(args)])
               if a.kind == "buffer" and a.access != "in" and keys[i] is not None}
    out: list[Any] = []
    for i, a in enumerate(args):
        key = keys[i]
        if key is None:
            out.append(a)
        elif (i < len(k.args) and k.args[i].access == "in") or key not in written:
            out.append(a.copy())
        else:
            out.append(shared.setdefault(key, a.copy()))
    return out


def _memory(a: np.ndarray) -> tuple[Any, ...]:
    """What tells one buffer from another among a call's arguments: where its data starts, and
    how it is laid out (the simulator passes a buffer given twice as two views of it)."""
    return (a.__array_interface__["data"][0], a.shape, a.strides, a.dtype.str)


def inherited_modes_text(modes: tuple[int, int]) -> str:
    """What a call that found the core's rounding or saturation mode other than at reset
    (``modes``) ran under: an earlier call on the core left it (``sim --kernels native``).

    >>> inherited_modes_text((0, 1)).split(": ")[0]
    'it ran under the saturation mode saturate an earlier call on its core left'
    """
    names = (dict(enumerate(ROUNDING_MODES)), SATURATION_MODES)
    kinds = [f"{kind} mode {names[i].get(modes[i], str(modes[i]))}"
             for i, kind in enumerate(("rounding", "saturation")) if modes[i] != RESET_MODES[i]]
    return (f"it ran under the {' and '.join(kinds)} an earlier call on its core left: its "
            "reference computes as at reset (floor, none); aiedsl kernel test names the kernel "
            "that does not restore the modes it sets")
