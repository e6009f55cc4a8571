"""The cycles of a kernel declared with ``cycles=None``: its C++ run once on the host and
profiled (:func:`~aiedsl.kernels.profile.profile_case`), between guard bytes; a run that crashes
or hangs, writes outside its buffers or counts nothing the profile can time is a design error
at the declaration."""

from __future__ import annotations

from typing import Any, Callable

from aiedsl.errors import DesignError, counted
from aiedsl.ir.kernel import Kernel as KernelIR
from aiedsl.kernels.faults import Stray


def _profiled(ir: KernelIR, reference: Callable[..., Any]) -> KernelIR:
    """``ir`` with the cycles its profile gives (the kernel declared no ``cycles=``): its C++
    run once on the host, on random inputs, with the scalars of its ``params``."""
    from aiedsl.kernels.text import kernel_text
    from aiedsl.kernels.cases import KernelCase
    from aiedsl.kernels.profile import profile_case
    from aiedsl.kernels.params import kernel_target

    # a scalar's value: its params= entry, or the one value equals= allows
    given = {a.name: ir.params[a.name] if a.name in ir.params else a.equals
             for a in ir.args if a.kind == "scalar"}
    missing = [n for n, v in given.items() if v is None]
    if missing:
        raise DesignError(
            "kernel cost", f"kernel '{ir.symbol}' has no cycles= and no value for its scalar "
            f"{', '.join(repr(m) for m in missing)} to profile it with", loc=ir.loc,
            found="cycles=None", fix="give cycles=, or params={"
            + ", ".join(f"'{m}': ..." for m in missing) + "} to profile it with")
    target = kernel_target(None)
    scalars = dict(given)
    case = KernelCase(ir, kernel_text(None, ir), reference, scalars)  # type: ignore[arg-type]
    prof = profile_case(case, target)
    if not prof.ran:  # crashed or hung in its child: no counts to take cycles from
        raise DesignError(
            "kernel cost", f"kernel '{ir.symbol}' has no cycles=, and the run of its C++ that "
            f"profiles it {prof.faults[0]}", loc=ir.loc,
            limit="a kernel profiled for its cycles (cycles=None) returns from its call on the "
            "host", found=f"cycles=None; {prof.faults[0]}",
            fix="fix the C++; to look into it, declare cycles= for now and run `aiedsl kernel "
                "test` on the design: it says what the kernel reads or writes outside its "
                "buffers")
    if prof.strays:
        raise _stray_error(ir, prof.strays, scalars)
    # what else it did wrong (an input written, a misaligned access, a bf16 conversion under
    # another rounding mode; it ran to its end, so the counts stand) is left to `aiedsl kernel
    # test` and `sim --kernels native`, which report it as they do with cycles= given
    if not prof.counted:
        raise DesignError(
            "kernel cost", f"kernel '{ir.symbol}' has no cycles= and its profile counts no AIE "
            "API vector operation, load or store (scalar C++ is not modelled)", loc=ir.loc,
            limit="cycles= for a kernel the profile cannot estimate", found="cycles=None",
            fix="give cycles= per call, estimated from the kernel's loop")
    return ir.model_copy(update={
        "cycles": prof.cycles, "cycles_source": "profile", "arch": target.arch,
        "cost": f"{ir.cost} [cycles from its profile on {target.name}: bound by "
                f"{prof.binding}; no cycles= declared]"})


def _stray_error(ir: KernelIR, strays: tuple[Stray, ...],
                 scalars: dict[str, Any]) -> DesignError:
    """The design error for the writes outside its buffers that the run profiling kernel
    ``ir`` made: on a core they land on whatever is placed next to the buffer (another buffer,
    an rtp), which neither ``check`` nor the simulator would say."""
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
        f"{'after' if after else 'before'} '{s.buffer}'", loc=ir.loc,
        limit="a kernel writes only inside its buffers (the bytes around each are checked "
        "after the profiled call)", found=found,
        fix=f"{size}; to see more, declare cycles= for now and run `aiedsl kernel test` on the "
            "design: it runs the kernel alone with the design's scalars and says what it reads "
            "or writes outside its buffers")
