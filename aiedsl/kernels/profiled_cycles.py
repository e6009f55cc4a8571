"""The cycles of a kernel declared with ``cycles=None``: its C++ run on the host and profiled
(:func:`~aiedsl.kernels.profile.profile_case`), between guard bytes, once per set of scalar
values the design's calls pass (:func:`~aiedsl.kernels.cases.scalar_sets`), as the design
loads; a run that crashes or hangs, writes outside its buffers or counts nothing the profile
can time is a design error at the declaration.

Each call is charged the profile of its own values: a call ``k(a, c, 1024)`` what the C++
does with n=1024, not what it does with ``params=``' n=16, which only stands in for a value
the design does not know until it runs (one read from an rtp slot). The report, the simulator
and ``aiedsl kernel profile`` say which values each profile ran with."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiedsl.errors import DesignError, counted
from aiedsl.ir.design import Design
from aiedsl.ir.kernel import Kernel as KernelIR, ProfiledCycles
from aiedsl.ir.loc import Loc
from aiedsl.kernels.faults import Stray

if TYPE_CHECKING:
    from aiedsl.kernels.cases import ScalarSet

MOST_PROFILES = 32
"""The most sets of scalar values one kernel declared without ``cycles=`` is profiled with:
each is a run of its C++ as the design loads, and a design that passes a kernel more
distinct values (a Python loop unrolled over them) takes a declared cost."""


def profiled_design(d: Design, kernels: dict[str, Any]) -> Design:
    """Design ``d`` with the cycles of each kernel declared without ``cycles=`` taken from its
    profile, one per set of scalar values its calls pass (``kernels``: the declared
    :class:`~aiedsl.kernels.base.Kernel` objects by symbol, whose references the cases
    hold)."""
    from aiedsl.targets import get_target

    if not any(k.cycles_source == "profile" and not k.profiles for k in d.kernels):
        return d
    target = get_target(d.device)
    return d.model_copy(update={"kernels": tuple(
        _profiled(d, k, kernels[k.symbol].run_reference, target)
        if k.cycles_source == "profile" and not k.profiles else k for k in d.kernels)})


def _profiled(d: Design, ir: KernelIR, reference: Any, target: Any) -> KernelIR:
    """``ir`` with the cycles its profiles give, one per set of scalar values design ``d``'s
    calls pass: its C++ run on the host on random inputs with each."""
    from aiedsl.kernels.cases import KernelCase, declared_set, scalar_sets
    from aiedsl.kernels.profile import profile_case
    from aiedsl.kernels.text import kernel_text

    # no call passing the kernel's arguments (check refuses each): its declaration's values
    sets = scalar_sets(d, ir) or [declared_set(ir)]
    for s in sets:
        if s.missing:
            raise _missing_error(ir, s)
    if len(sets) > MOST_PROFILES:
        raise DesignError(
            "kernel cost", f"kernel '{ir.symbol}' has no cycles=, and its calls pass "
            f"{len(sets)} different sets of scalar values to profile it with", loc=ir.loc,
            limit=f"at most {MOST_PROFILES} profiles of one kernel (one run of its C++ each, "
            "as the design loads)", found=f"{len(sets)}: {sets[0].shown()}; "
            f"{sets[1].shown()}; ...",
            fix="give cycles= (the cost per call, from the kernel's loop), or pass the value "
                "that varies from an rtp slot with params= giving the value to profile")
    text = kernel_text(None, ir)
    profiles = []
    for s in sets:
        case = KernelCase(ir, text, reference, s.scalars)
        prof = profile_case(case, target)
        if not prof.ran:  # crashed or hung in its child: no counts to take cycles from
            raise DesignError(
                "kernel cost", f"kernel '{ir.symbol}' has no cycles=, and the run of its C++ "
                f"that profiles it {prof.faults[0]}", loc=ir.loc,
                limit="a kernel profiled for its cycles (cycles=None) returns from its call on "
                "the host", found=f"cycles=None; {prof.faults[0]}"
                + (f"; the scalars it ran with: {s.shown()}" if s.scalars else ""),
                fix="fix the C++; to look into it, declare cycles= for now and run `aiedsl "
                    "kernel test` on the design: it says what the kernel writes outside its "
                    "buffers (a read outside them, when it changes the result)")
        if prof.strays:
            raise _stray_error(ir, prof.strays, s.scalars, _design_call(d, ir, s))
        # what else it did wrong (an input written, a misaligned access, a bf16 conversion
        # under another rounding mode; it ran to its end, so the counts stand) is left to
        # `aiedsl kernel test` and `sim --kernels native`, which report it as they do with
        # cycles= given
        if not prof.counted:
            raise DesignError(
                "kernel cost", f"kernel '{ir.symbol}' has no cycles= and its profile counts no "
                "AIE API vector operation, load or store (scalar C++ is not modelled)",
                loc=ir.loc, limit="cycles= for a kernel the profile cannot estimate",
                found="cycles=None", fix="give cycles= per call, estimated from the kernel's "
                "loop")
        missed = prof.misses_work()
        if missed:
            # a bound made of the little it counts: the simulator would charge that for a
            # call whose loop is scalar code (a tester's softmax was charged 2 cycles)
            raise DesignError(
                "kernel cost", f"kernel '{ir.symbol}' has no cycles=, and its profile misses "
                f"most of its work: {'; '.join(missed)}", loc=ir.loc,
                limit="cycles= for a kernel whose reads or writes are scalar C++: the profile "
                "counts only AIE API vector operations, loads and stores",
                found=f"cycles=None; the profile's bound: {prof.cycles:,} cycles per call"
                + (f" with {s.shown()}" if s.scalars else ""),
                fix="give cycles= per call, estimated from the kernel's loop (`aiedsl kernel "
                    "profile` shows what it counts), or read and write its buffers with "
                    "aie::load_v and aie::store_v")
        profiles.append(ProfiledCycles(constants=s.constants, scalars=s.scalars, given=s.given,
                                       cycles=prof.cycles, binding=prof.binding))
    bindings = " and ".join(dict.fromkeys(p.binding for p in profiles))
    each = f"its {len(profiles)} profiles, one per call's scalars," if len(profiles) > 1 else \
        "its profile"
    return ir.model_copy(update={
        "cycles": profiles[0].cycles, "cycles_source": "profile", "profiles": tuple(profiles),
        "arch": ir.arch or target.arch,
        "cost": f"{ir.cost} [cycles from {each} on {target.name}: bound by {bindings}; no "
                "cycles= declared]"})


def _missing_error(ir: KernelIR, s: ScalarSet) -> DesignError:
    """The design error for a kernel declared without ``cycles=`` whose calls leave scalars
    ``s.missing`` without a value to profile it with."""
    names = ", ".join(repr(m) for m in s.missing)
    related = [("the call", s.call.loc)] if s.call is not None else None
    return DesignError(
        "kernel cost", f"kernel '{ir.symbol}' has no cycles= and no value for its scalar "
        f"{names} to profile it with", loc=ir.loc,
        limit="a scalar a call passes as a constant is profiled with that value; one read "
        "from an rtp slot with its params= value, else the value the runtime sequence first "
        "writes into the slot", found="cycles=None", related=related,
        fix="give cycles=, or params={" + ", ".join(f"'{m}': ..." for m in s.missing)
        + "} to profile it with")


def _design_call(d: Design, ir: KernelIR, s: ScalarSet) -> list[tuple[str, Loc]]:
    """Design ``d``'s call of kernel ``ir`` whose scalars ``s`` were profiled, as a related
    line, when ``ir`` is declared in another file (a helper module): its declare() line alone
    does not say which design, or where, made the run."""
    if s.call is None or s.call.loc.file == ir.loc.file:
        return []
    return [(f"the call of '{ir.symbol}' in design '{d.name}'", s.call.loc)]


def _stray_error(ir: KernelIR, strays: tuple[Stray, ...], scalars: dict[str, Any],
                 related: list[tuple[str, Loc]] | None = None) -> DesignError:
    """The design error for the writes outside its buffers that the run profiling kernel
    ``ir`` made: on a core they land on whatever is placed next to the buffer (another buffer,
    an rtp), which neither ``check`` nor the simulator would say. ``related``: the design's
    call that made the run, when the kernel is declared in another file."""
    s = strays[0]
    after = s.side != "before"
    more = f" (and {counted(len(strays) - 1, 'more such write')})" if len(strays) > 1 else ""
    spans: dict[str, list[str]] = {}  # by buffer, in the order of the kernel's arguments
    notes: dict[str, str] = {}
    for w in strays:
        spans.setdefault(w.buffer, []).append(
            f"byte {w.first}" if w.first == w.last else f"bytes {w.first} to {w.last}")
        if w.whole:
            notes[w.buffer] = (f" (all the guard bytes {w.side} it: it may write further, "
                               "unseen)")
    sizes = {w.buffer: w.nbytes for w in strays}
    found = "; ".join(f"'{b}' holds {sizes[b]} bytes; {' and '.join(x)} from its start "
                      f"changed{notes.get(b, '')}" for b, x in spans.items())
    if scalars:
        found += "; the scalars it ran with: " + ", ".join(f"{n}={v!r}" for n, v in
                                                            scalars.items())
    if not after:
        size = f"make the C++ start writing at the first byte of '{s.buffer}'"
    else:
        # the size it needs runs to the last byte written (unknown past a whole guard)
        needs = "" if s.whole else f": {s.last + 1} bytes, to the last one it wrote"
        size = (f"size '{s.buffer}' for what the C++ writes{needs} (a vectorised loop writes "
                "whole vectors), or make the C++ stop at its end")
    return DesignError(
        "kernel bounds", f"kernel '{ir.symbol}' {s.text()}{more} in the run of its C++ that "
        "profiles it (cycles=None): on the core it would overwrite whatever is placed "
        f"{'after' if after else 'before'} '{s.buffer}'", loc=ir.loc, related=related,
        limit="a kernel writes only inside its buffers (the bytes around each are checked "
        "after the profiled call)", found=found,
        fix=f"{size}; to see more, declare cycles= for now and run `aiedsl kernel test` on the "
            "design: it runs the kernel alone with the design's scalars and says what it writes "
            "outside its buffers (a read outside them, when it changes the result)")
