"""A design run's outputs against its reference: each compared at its dtype's tolerance
(:func:`aiedsl.compare.compare`), then the notes the design gives a FAIL (a tensor both filled
and drained, a host tensor never moved, the design's own notes, a core-local buffer whose sums
pile up, a reference of a narrower type) and a PASS that may still be wrong. What the simulator
and a run on the NPU report alike."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from aiedsl.bfp16_allowance import bfp16_allowance
from aiedsl.compare import OutputCheck, cancel_note, compare, largest
from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.ir.core_ops import Call, LocalArg, Loop, Op
from aiedsl.ir.design import Design
from aiedsl.ir.program import rounding
from aiedsl.ir.roundings import declared_roundings, sum_roundings
from aiedsl.ir.runtime import Transfer
from aiedsl.notes import zero_example
from aiedsl.product_terms import laid_out, product_terms
from aiedsl.tolerances import Allowance


def note_aliases(checks: list[OutputCheck], inputs: Iterable[str]) -> None:
    """Note, under each FAIL of a tensor the runtime also fills from, that the tensor may race
    itself: a drain can overwrite elements before a fill has read them."""
    for c in checks:
        if not c.passed and c.name in inputs and not c.poisoned:  # unwritten memory is sure
            c.note = (f"'{c.name}' is both filled from and drained into: a drain may overwrite "
                      "elements before a fill has read them, and then the result depends on "
                      "timing, on the NPU too; use separate input and output tensors")


def compare_outputs(d: Design, outputs: Mapping[str, np.ndarray],
                    expected: Mapping[str, np.ndarray], inputs: Mapping[str, np.ndarray], *,
                    nonfinite: bool = False, poison: bool = False) -> list[OutputCheck]:
    """Compare every output of design ``d`` with the reference's, each at its dtype's
    tolerance and as many roundings as its elements may carry, with the note of
    :func:`cancel_note` under a FAIL of a summing output (measured against the run's
    ``inputs``) and of :func:`note_aliases` under a FAIL of a tensor also among ``inputs``
    (what the simulator and a run on the NPU report alike). ``poison``: the outputs are the
    simulator's, whose unwritten memory holds a known value (see :func:`compare`)."""
    rounds = {n: rounding(d, n) for n in outputs}
    times = {n: sum_roundings(d, n) if rounds[n] == "sum" else declared_roundings(d, n)
             for n in outputs}
    bfp16 = {n: bfp16_allowance(d, n, inputs) for n in outputs}
    terms = {n: product_terms(d, n, inputs) if rounds[n] == "sum" else None for n in outputs}
    for n in outputs:  # per-element tolerances only where C[i, j] is row i times column j
        allowance = bfp16[n][1]
        each = allowance is not None and allowance.elements is not None
        if (each or terms[n] is not None) and not laid_out(d, n, outputs[n], expected[n],
                                                            inputs):
            terms[n] = None
            if allowance is not None and each:
                bfp16[n] = (bfp16[n][0], Allowance(allowance.value, allowance.what))
    checks = [compare(n, outputs[n], expected[n], d.tensor(n).type.dtype, nonfinite=nonfinite,
                      rounds=rounds[n], poison=poison, roundings=times[n],
                      allowance=bfp16[n][1], terms=terms[n])
              for n in outputs]
    note_nonfinite_inputs(checks, d, inputs, bfp16)
    failed = [c for c in checks if not c.passed and c.note is None and rounds[c.name] == "sum"]
    if failed:  # the inputs' scale, read only for the note of a FAIL
        scale = largest(inputs.values())
        for c in failed:
            c.note = cancel_note(c.name, outputs[c.name], expected[c.name],
                                 d.tensor(c.name).type.dtype, nonfinite=nonfinite, scale=scale,
                                 roundings=times[c.name])
    note_aliases(checks, inputs)
    note_untouched(checks, d)
    note_design(checks, d)
    note_bfp16(checks, d, bfp16)
    note_carried_locals(checks, d)
    note_narrow_reference(checks, d, expected)
    note_saturated(checks, d, expected)
    return checks


def note_nonfinite_inputs(checks: list[OutputCheck], d: Design,
                          inputs: Mapping[str, np.ndarray],
                          bfp16: Mapping[str, tuple[tuple[str, ...], Allowance | None]]) -> None:
    """Under a FAIL whose wrong NaNs looked like the simulator's unwritten memory, when an input
    holds an infinity or a NaN: say that they may come from it instead (npu2's bfp16 unit, as
    modelled, makes a block holding one all NaN) rather than that memory was read unwritten."""
    suspects = [c for c in checks if not c.passed and c.poisoned
                and lookup_dtype(d.tensor(c.name).type.dtype).is_float]
    if not suspects:
        return
    wild = {n: int(np.count_nonzero(~np.isfinite(np.asarray(a, np.float32))))
            for n, a in inputs.items()
            if np.asarray(a).dtype.kind == "f" or np.asarray(a).dtype.name == "bfloat16"}
    wild = {n: count for n, count in wild.items() if count}
    if not wild:
        return
    if len(wild) == 1:
        (name, count), = wild.items()
        held = f"input '{name}' holds {count:,} infinit{'y' if count == 1 else 'ies'} or NaN" \
            + ("" if count == 1 else "s")
    else:
        held = "inputs " + " and ".join(f"'{n}' ({count:,})" for n, count in wild.items()) \
            + " hold infinities or NaNs"
    for c in suspects:
        c.poisoned = 0
        c.note = f"{held}, from which the wrong NaNs may come"
        if bfp16.get(c.name, ((), None))[0]:
            c.note += (": npu2's bfp16 unit, as aiedsl models it, makes a block of 8 values "
                       "holding one all NaN (what the NPU does is not known: "
                       "aiedsl/kernels/bfp16.py)")


def note_bfp16(checks: list[OutputCheck], d: Design,
               bfp16: Mapping[str, tuple[tuple[str, ...], Allowance | None]]) -> None:
    """Give a FAIL of an output that kernels running their bf16 mmul on npu2's bfp16 unit
    reach, but whose tolerance could not allow for it (:mod:`aiedsl.bfp16_allowance`: no host
    A and B to measure the quantization's difference by), a hint saying so."""
    kernels = {k.symbol: k for k in d.kernels}
    for c in checks:
        found, allowance = bfp16.get(c.name, ((), None))
        if c.passed or not found or allowance is not None:
            continue
        k = kernels[found[0]]
        named = " and ".join(found)
        c.hints.append(
            f"{k.loc}: {named} run{'s' if len(found) == 1 else ''} its bf16 mmul on npu2's "
            "bfp16 unit, which quantizes A and B (aiedsl/kernels/bfp16.py), so an exact bf16 "
            "reference differs by more than a bf16 sum's rounding; aiedsl allows for that only "
            f"where '{c.name}' is a product it stores of a host A (M x K) and B (K x N), which "
            "it could not find here")


SATURATED = 0.5
"""The share of a narrow signed integer output's expected values at its type's limits above which
its comparison says it tells little (:func:`note_saturated`)."""


def note_saturated(checks: list[OutputCheck], d: Design,
                   expected: Mapping[str, np.ndarray]) -> None:
    """Note, under the comparison of a signed integer output narrower than 32 bits, that most
    of its expected values sit at the type's limits (more than :data:`SATURATED` of them): the
    inputs saturate it, and a kernel that rounds, shifts or sums wrongly below the limits may
    still pass. An int8 GEMM whose shift suits inputs of -8..7 saturates almost every element
    for inputs over the whole int8 range."""
    for c in checks:
        dt = lookup_dtype(d.tensor(c.name).type.dtype)
        if dt.is_float or dt.name.startswith("u") or dt.itemsize >= 4:
            continue
        want = np.asarray(expected[c.name]).reshape(-1)
        info = np.iinfo(dt.numpy)
        at = int(np.count_nonzero((want == info.min) | (want == info.max)))
        if not want.size or at <= SATURATED * want.size:
            continue
        text = (f"{at / want.size:.0%} of the expected values ({at:,} of {want.size:,}) sit at "
                f"{dt}'s limits, {info.min} and {info.max}: the inputs saturate '{c.name}', so "
                "this comparison says little of the values in between; give inputs of smaller "
                "magnitude, or scale the output down further (a larger shift)")
        if c.note is None:
            c.note = text
        else:
            c.hints.append(text)


def note_narrow_reference(checks: list[OutputCheck], d: Design,
                          expected: Mapping[str, np.ndarray]) -> None:
    """Give a FAIL of an integer output whose reference came in a narrower integer type (int16
    for an i32 output) a hint: the reference's values passed through that type, where they
    may have wrapped, though every one is a value the output holds."""
    for c in checks:
        if c.passed:
            continue
        want = np.asarray(expected[c.name])
        out = np.dtype(lookup_dtype(d.tensor(c.name).type.dtype).numpy)
        if want.dtype.kind in "iu" and out.kind in "iu" and want.dtype.itemsize < out.itemsize:
            c.hints.append(f"the reference returned {want.dtype} for this {out.name} output: its "
                           f"values passed through {want.dtype}, where they may have wrapped "
                           f"(compute in {out.name} and return .astype(np.{out.name}))")


def note_carried_locals(checks: list[OutputCheck], d: Design) -> None:
    """Give a FAIL of an output a core feeds a hint for every core-local buffer that core's
    kernels sum into within a loop that also reads it out (each iteration a result) while
    nothing in that loop writes it afresh: a local keeps its value from call to call (its
    initial value is written once, at load), so each iteration's sums pile onto the last's.
    A sum over a loop whose result is read after it is not named: a reduction."""
    failed = [c for c in checks if not c.passed]
    if not failed:
        return
    kernels = {k.symbol: k for k in d.kernels}

    def uses(body: tuple[Op, ...]) -> tuple[dict[str, Call], set[str], set[str]]:
        """The locals a body sums into (with a call that does), reads only, writes afresh."""
        summed: dict[str, Call] = {}
        read: set[str] = set()
        fresh: set[str] = set()
        for op in body:
            if isinstance(op, Loop):
                s, r, f = uses(op.body)
                for name, call in s.items():
                    summed.setdefault(name, call)
                read |= r
                fresh |= f
            elif isinstance(op, Call):
                access: dict[str, set[str]] = {}  # local -> how this call passes it
                for a, param in zip(op.args, kernels[op.kernel].args):
                    if isinstance(a, LocalArg):
                        access.setdefault(a.local, set()).add(param.access)
                for name, ways in access.items():
                    if "inout" in ways or ways == {"in", "out"}:  # k(acc, x, acc) too
                        summed.setdefault(name, op)
                    elif ways == {"in"}:
                        read.add(name)
                    else:
                        fresh.add(name)
        return summed, read, fresh

    for core in d.cores:
        hints: dict[str, str] = {}

        def visit(body: tuple[Op, ...]) -> None:
            for op in body:
                if not isinstance(op, Loop):
                    continue
                if op.count > 1:
                    summed, read, fresh = uses(op.body)
                    for name, call in summed.items():
                        if name in read and name not in fresh:
                            hints.setdefault(name, (
                                f"{call.loc}: {call.kernel} sums into core-local '{name}' in the "
                                f"loop at line {op.loc.line} of {core.name}, which reads it out "
                                "each iteration, and nothing in that loop writes it afresh: a "
                                "local keeps its value from call to call (its initial value is "
                                "written once, at load), so each iteration's sums pile onto the "
                                "last's; zero it where each sum starts (a call taking it "
                                f"\"out\"{zero_example(d.local(name).type)})"))
                visit(op.body)

        visit(core.body)
        if hints:
            from aiedsl.ir.dataflow import Dataflow

            fed = Dataflow(d).downstream(core.name)
            for c in failed:
                if c.name in fed:
                    # the same local's note on runs after the first (notes.carried_local_notes)
                    # gives way to this, which says why this run failed
                    c.hints = [h for h in c.hints if not any(
                        f"reads core-local '{name}' (as" in h for name in hints)]
                    c.hints += [h for h in hints.values() if h not in c.hints]


def note_design(checks: list[OutputCheck], d: Design) -> None:
    """Give each FAIL the design's notes (:func:`aiedsl.notes.design_notes`) that may explain
    it: those of the drains into its tensor and those of every fill (any input may reach any
    output); and each PASS the notes about its tensor said under a PASS too (``always``: a
    kernel narrowing partial sums at every call, which a reference written the same way
    does as well)."""
    from aiedsl.notes import design_notes

    notes = design_notes(d)
    for c in checks:
        if not c.passed:
            c.hints = [f"{n.loc}: {n.text}" for n in notes
                       if n.op == "fill" or n.tensor == c.name]
        else:
            c.hints = [f"{n.loc}: {n.text}" for n in notes if n.always and n.tensor == c.name]


def note_untouched(checks: list[OutputCheck], d: Design) -> None:
    """Note, under a PASS of a tensor both filled from and drained into, the host tensors the
    runtime never moves: a drain that names the wrong tensor (the input, not the output) still
    compares its own and passes. (mlir-aie's designs keep such a tensor for the host's buffer
    layout, so it is not refused.)"""
    moved = {t.tensor for t in d.runtime if isinstance(t, Transfer)}
    untouched = [t.name for t in d.tensors if t.name not in moved]
    filled = {t.tensor for t in d.runtime if isinstance(t, Transfer) and t.op == "fill"}
    for c in checks:
        if c.passed and c.note is None and c.name in filled and untouched:
            names = " and ".join(f"'{n}'" for n in untouched)
            c.note = (f"'{c.name}' is filled from and drained into, while {names} "
                      f"{'is' if len(untouched) == 1 else 'are'} neither: does a drain name the "
                      "wrong tensor?")

