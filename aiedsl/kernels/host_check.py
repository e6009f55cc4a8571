"""``aiedsl kernel test``: a kernel's C++ run on the host against its numpy reference, on the
same random inputs, its writes compared.

Example
-------
(needs g++; ``handle`` a loaded design)

>>> [check_kernel(case).passed for case in design_cases(handle)]   # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from aiedsl.dtypes import dtype as lookup_dtype, unwritten
from aiedsl.ir.kernel import Kernel
from aiedsl.ir.program import Rounding
from aiedsl.kernels.cases import KernelCase, case_args, input_range
from aiedsl.kernels.faults import FILLS, call_limit
from aiedsl.kernels.guarded import GuardedCall, differs, in_child
from aiedsl.kernels.host import native
from aiedsl.kernels.host_notes import bfp16_note
from aiedsl.kernels.reference import left_unwritten, partly_unwritten_error
from aiedsl.kernels.ties import tie_pass


@dataclass
class KernelTest:
    """One kernel run on the host against its reference."""

    symbol: str
    passed: bool
    lines: list[str]


def check_kernel(case: KernelCase, seed: int = 0, full_range: bool = False) -> KernelTest:
    """Run the kernel's C++ and its reference on the same random inputs; compare what they
    write. The C++ runs in a child process (a crash is a FAIL naming it, not the end of the
    command), twice, its buffers between guard bytes filled one way and then another: a write
    outside a buffer, a write to an input, or a result that depends on the guard bytes (a read
    outside) fails too. A scalar parameter with no value, or a reference that raises, is a
    DesignError naming it. An infinity where the reference has the same agrees. A FAIL
    of a C++ that runs a bf16 mmul on npu2's bfp16 unit says so
    (:mod:`aiedsl.kernels.host_notes`): its reference may be one of exact products.
    ``full_range``: integer inputs over their types' whole range
    (:func:`~aiedsl.kernels.cases.case_args`)."""
    from aiedsl.compare import compare

    k = case.kernel
    args_ref, args_cpp = case_args(case, np.random.default_rng(seed), full_range)
    # as drawn, before any run: the scalars and the inputs the ties pass keeps
    args_ref_first = [a.copy() if isinstance(a, np.ndarray) else a for a in args_ref]
    args_cpp_first = [a.copy() if isinstance(a, np.ndarray) else a for a in args_cpp]
    # once more with its "out" buffers poisoned, as the simulator gives them: the reference
    # then says if it left one unwritten (see aiedsl.kernels.reference.run_checked)
    poisoned = [unwritten(v.shape, v.dtype) if i < len(k.args) and k.args[i].access == "out"
                and isinstance(v, np.ndarray) else v.copy() if isinstance(v, np.ndarray) else v
                for i, v in enumerate(args_ref)]
    # the random run first: a reference that reads an "out" buffer is told so about data it
    # was given, not about the poison this test put there
    for args in (args_ref, poisoned):
        case.run_reference(args)
    # elements of an "out" buffer the reference left as they were, in both runs
    left = {i: left_unwritten(args_cpp[i], args_ref[i], poisoned[i])
            for i, a in enumerate(k.args) if a.access == "out" and a.kind == "buffer"}
    run = native(k, case.cpp, case.aie_arch)  # built here: a compile error is the design's
    runs = []
    for fill in FILLS:
        outcome = in_child(GuardedCall(k, run, args_cpp, fill), call_limit(k))
        if isinstance(outcome, str):  # it crashed
            return KernelTest(k.symbol, False, [f"FAIL {k.symbol}: {outcome}"])
        runs.append(outcome)
    (results, faults, _), (again, _, _) = runs
    # once more with other contents in its "out" buffers: an element that comes out otherwise
    # was left as it was (or read before it was written); on the core it holds the ring's
    # previous element there. The elements the reference leaves too are its to leave.
    outs = [i for i, a in enumerate(k.args) if a.kind == "buffer" and a.access == "out"]
    stale: dict[int, np.ndarray] = {}
    if outs:
        other = [_inverted(v) if i in outs else v for i, v in enumerate(args_cpp)]
        outcome = in_child(GuardedCall(k, run, other, FILLS[0]), call_limit(k))
        if isinstance(outcome, str):  # it crashed this time (on what the buffer held)
            return KernelTest(k.symbol, False, [f"FAIL {k.symbol}: {outcome}"])
        for i in outs:
            mask = differs(results[i], outcome[0][i]) & ~left[i]
            if mask.any():
                stale[i] = mask
    for i, mask in left.items():
        # where the C++ wrote what the reference left: the "want" there is what the buffer held
        # before, which no reference computed
        error = partly_unwritten_error(k, _users(case.reference), k.args[i].name, mask,
                                       results[i], args_cpp[i])
        if error is not None:
            raise error
    lines = [f"FAIL {k.symbol}: {f}" for f in faults]
    lines += [f"FAIL {k.symbol}: {_stale_text(k.args[i].name, mask)}"
              for i, mask in stale.items()]
    depends = [i for i, a in enumerate(k.args)
               if a.kind == "buffer" and not np.array_equal(results[i], again[i], equal_nan=True)]
    if depends:
        read = _read_around(k, run, args_cpp, results, depends)
        for i in depends:
            lines.append(f"FAIL {k.symbol}: '{k.args[i].name}' depends on memory outside the "
                         f"kernel's buffers: {read.get(i) or _READ_SOME}")
    tolerance = kernel_tolerance(k, args_ref)
    # The same infinity where the reference has it agrees (a mask's -inf): the test compares
    # two versions of one function, and no element here stands for a design's result. One
    # where the other is finite fails, and so does any NaN the reference writes: both NaN
    # everywhere passed as "exact" (a reviewer), and random inputs give no reason for one.
    checks = [compare(f"{k.symbol}.{a.name}", results[i], args_ref[i], a.dtype,
                      nonfinite=not _has_nan(args_ref[i]), **tolerance)
              for i, a in enumerate(k.args) if a.kind == "buffer" and a.access != "in"]
    if k.cascade_out is not None:
        checks.append(compare(f"{k.symbol}.cascade_out", results[-1], args_ref[-1],
                              k.cascade_out.dtype, nonfinite=not _has_nan(args_ref[-1]),
                              **tolerance))
    shown = [c.line() + _inputs_at(k, args_cpp, c, seed) for c in checks]
    if lines:  # a FAIL above: what it wrote inside its buffers is not a PASS of the kernel
        shown = [f"  within its buffers, {t[5:]}" if c.passed else t
                 for c, t in zip(checks, shown)]
    passed = not lines and all(c.passed for c in checks)
    if passed:  # and on inputs that are nothing but rounding ties, if it narrows (ties.py)
        tied = tie_pass(case, run, args_ref_first, args_cpp_first, seed, tolerance["rounds"])
        passed = not tied
        shown += tied
    # under a FAIL, how its C++ computes on the NPU, which a reference of exact products does
    # not model (aiedsl's own kernels' references do); a PASS agrees with it already
    shapes = getattr(run, "bfp16", ())
    notes = ([f"  note: {bfp16_note(k.symbol, shapes)}"]
             if shapes and not passed and not k.shipped else [])
    if not full_range:
        notes += [f"  note: {n}" for n in _scalars_outside(case)]
    # "got nan want nan" reads as a contradiction (a false-alarm hunter's rsqrt): say why
    notes += [f"  note: {_nan_text(k.args[i].name, args_ref[i])}"
              for i, a in enumerate(k.args)
              if a.kind == "buffer" and a.access != "in" and _has_nan(args_ref[i])]
    return KernelTest(k.symbol, passed, lines + shown + notes)


def _nan_text(name: str, want: Any) -> str:
    """What a reference that writes NaN into ``name`` on the test's inputs means for it."""
    count = int(np.isnan(np.asarray(want).astype(np.float32)).sum())
    return (f"the reference writes NaN in {count:,} of the {np.asarray(want).size:,} elements "
            f"of '{name}' on these inputs (float inputs are drawn from [-1, 1]), and NaN equals "
            "nothing, so they fail whatever the C++ writes: a kernel defined on part of that "
            "range (a sqrt, a log) is tested through a design (aiedsl sim --inputs with inputs "
            "in its range, and --kernels native)")


def _has_nan(values: Any) -> bool:
    """Whether a float array (bf16 too) holds a NaN; an integer one never does."""
    arr = np.asarray(values)
    return arr.dtype.kind not in "iub" and bool(np.isnan(arr.astype(np.float32)).any())


def kernel_tolerance(k: Kernel, args: list[Any]) -> dict[str, Any]:
    """How a call of ``k`` on ``args`` is compared with its reference alone (the ``rounds``,
    ``scale`` and ``roundings`` of :func:`~aiedsl.compare.compare`): a kernel that sums gets a
    sum's allowance, at the scale of its largest |input|; one that rounds within a call a
    chain's; any other none beyond the roundings of each element it declares (one unless
    ``roundings=``)."""
    from aiedsl.compare import largest

    rounds: Rounding = "sum" if k.sums else "chain" if k.chained else "once"
    scale = largest(args[i] for i, a in enumerate(k.args)
                    if a.kind == "buffer" and a.access == "in") if k.sums else 0.0
    return {"rounds": rounds, "scale": scale, "roundings": 1 if k.sums else k.roundings}


def _scalars_outside(case: KernelCase) -> list[str]:
    """For each integer scalar of the call that an input buffer's elements could equal, but
    the inputs drawn do not reach (``clip(src, dst, -100, 300)`` on i16 inputs drawn over
    -128..127): what the kernel does at it goes untested (a newcomer's tester: a clip wrong at
    its upper bound passed), and ``--full-range`` draws over the whole type."""
    k = case.kernel
    out = []
    for a in k.args:
        value = case.scalars.get(a.name) if a.kind == "scalar" else None
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            continue
        for b in k.args:
            if b.kind != "buffer" or b.access == "out" or b.type is None:
                continue
            dt = lookup_dtype(b.type.dtype)
            if dt.name in ("bf16", "f32"):
                continue
            lo, hi = input_range(b.type.dtype)
            info = np.iinfo(dt.numpy)
            if (value < lo or value > hi) and info.min <= value <= info.max:
                out.append(f"scalar '{a.name}' = {int(value)} lies outside the values drawn for "
                           f"'{b.name}' ({lo}..{hi}): what the kernel does there went untested; "
                           f"--full-range draws {dt.name} inputs over {info.min}..{info.max}")
                break
    return out


def _inputs_at(k: Kernel, args: list[Any], check: Any, seed: int) -> str:
    """Under a FAIL, what the kernel's input buffers of the output's shape hold at its worst
    element (an elementwise kernel's operands there: ``got`` in[254] + 1 shows an index off by
    one), and the seed that drew them; "" when none has that shape or the check passed."""
    if check.passed or check.worst_index is None:
        return ""
    at = tuple(check.worst_index)
    held = [f"'{a.name}' {_value(args[i][at])}" for i, a in enumerate(k.args)
            if a.kind == "buffer" and a.access == "in" and isinstance(args[i], np.ndarray)
            and args[i].shape == tuple(check.shape)]
    if not held:
        return ""
    return f"\n  inputs at {list(at)}: {', '.join(held)} (--seed {seed})"


def _value(x: Any) -> str:
    """An element as a FAIL line shows one: an integer in full, a float to 6 digits."""
    v = np.asarray(x)
    return str(int(v)) if v.dtype.kind in "iu" else f"{float(v):.6g}"


def _inverted(v: np.ndarray) -> np.ndarray:
    """``v`` with every bit flipped: each element other than it was."""
    return (~np.ascontiguousarray(v).view(np.uint8)).view(v.dtype).reshape(v.shape)


def _stale_text(name: str, mask: np.ndarray) -> str:
    """What a FAIL says of an "out" buffer ``name`` whose ``mask`` elements the C++ left as
    they were."""
    count, total = int(mask.sum()), mask.size
    text = (f"'{name}' is not all written: {count:,} of {total:,} elements keep what the "
            "buffer held before the call")
    if count < total:
        at = np.nonzero(mask)
        box = ", ".join(f"{int(i.min())}:{int(i.max()) + 1}" for i in at)
        text += f", all within [{box}]"
    return (text + " (a run with other contents there gives other values); on the core they "
            "would hold what the buffer's previous element left: write every element, or "
            "declare the buffer \"inout\" if the kernel adds to what it holds")


_READ_SOME = ("the C++ reads before or past one (two runs with other bytes around them "
              "disagree)")


def _read_around(k: Kernel, run: Callable[..., None], args: list[Any], results: list[Any],
                 depends: list[int]) -> dict[int, str]:
    """For each output ``depends`` names (an argument index) whose value changed with the
    guard bytes, the buffers whose guards it reads, in words: runs with the guards of one
    buffer at a time filled otherwise than in the run that gave ``results``."""
    buffers = [i for i, v in enumerate(args)
               if isinstance(v, np.ndarray) and i < len(k.args) and k.args[i].kind == "buffer"]
    read: dict[int, list[str]] = {i: [] for i in depends}
    for j, arg in enumerate(buffers):
        fills = tuple(FILLS[1] if b == j else FILLS[0] for b in range(len(buffers)))
        outcome = in_child(GuardedCall(k, run, args, fills), call_limit(k))
        if isinstance(outcome, str):  # crashed this time: the two runs said enough
            return {}
        for i in depends:
            if not np.array_equal(outcome[0][i], results[i], equal_nan=True):
                read[i].append(f"'{k.args[arg].name}'")
    return {i: (f"the C++ reads before or past {' and '.join(names)} (a run with other bytes "
                f"around {'it' if len(names) == 1 else 'them'} disagrees)")
            for i, names in read.items() if names}


def _users(reference: Callable[..., None]) -> Callable[..., Any]:
    """The user's own reference function behind a case's ``reference`` (a declared kernel's
    :meth:`~aiedsl.kernels.base.Kernel.run_reference`), whose ``def`` an error names."""
    kernel = getattr(reference, "__self__", None)
    return getattr(kernel, "reference", reference)
