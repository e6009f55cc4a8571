"""What a core's kernel call runs and reads, found once when the core's program is compiled:
the kernel's numpy reference (from the design handle, or aiedsl's own library), a copy of an
input the same call also writes, and the runtime parameters read when the call runs."""

from __future__ import annotations

from typing import Any, Callable

from aiedsl.checks.rtp import hold_fix, unheld
from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import BufferArg, Call, LocalArg, RtpArg
from aiedsl.ir.cores import Core
from aiedsl.ir.design import Design
from aiedsl.ir.reach import Reach
from aiedsl.ir.runtime import RtpWrite, Transfer
from aiedsl.sim.processes import Proc
from aiedsl.sim.state import RtpMemory, SimFault


def before_the_call(ref: Callable[..., None], k: Any, op: Call) -> Callable[..., None]:
    """``ref`` for call ``op`` of kernel ``k``: when the call passes one buffer as an "in"
    argument and as one it writes (a local as both, IRON's ``compute_max(tmp, nextC,
    nextC)``), the reference gets a copy of that input as it was before the call, so a
    reference sees its inputs unchanged whatever it writes first. The core's C++ reads the one
    memory: an in-place kernel that reads what it already wrote (a shift) differs, which only
    ``--kernels native`` shows. Other calls: ``ref`` itself."""
    def buffer(a: Any) -> tuple[Any, ...] | None:
        if isinstance(a, BufferArg):
            return ("fifo", a.value, a.index)
        return ("local", a.local) if isinstance(a, LocalArg) else None

    names = [buffer(a) for a in op.args]
    written = {n for n, p in zip(names, k.args) if n is not None and p.access != "in"}
    copied = tuple(i for i, (n, p) in enumerate(zip(names, k.args))
                   if n in written and p.access == "in")
    if not copied:
        return ref

    def call(*args: Any) -> None:
        given = list(args)
        for i in copied:
            given[i] = given[i].copy()
        ref(*given)

    return call



RTP = object()
"""Marks a compiled call argument read from a runtime parameter when the call runs."""

INDEX = object()
"""Marks a compiled call argument that is a loop's index: ``(INDEX, level, count)``, the loop
``level`` deep (0: outermost) of ``count`` iterations, whose index is ``count`` less the
iterations it has left."""


def read_rtp(core: Core, p: Proc, a: RtpArg, mem: RtpMemory, call: Call, d: Design) -> int:
    """The value of rtp slot ``a`` when ``core``'s call runs (at its clock); a SimFault when
    the runtime has not written it by then (the core would read whatever the memory held)."""
    value = mem.read(a.index, p.time)
    if value is None:
        raise SimFault(
            "rtp", f"{core.name} reads rtp '{a.rtp}'[{a.index}] at cycle {p.time:.0f}, before "
            "the runtime writes it", loc=a.loc, limit="a slot is read after an rtp_write of it "
            "(the memory holds no value before)", found="no write by then",
            related=[(f"the call that reads it ({core.name})", call.loc)],
            fix=_unwritten_fix(d, core, a))
    return value


def _unwritten_fix(d: Design, core: Core, a: RtpArg) -> str:
    """How to have the slot written before ``core``'s call reads it: the write before the
    fills that feed the core, when one of them comes first; else (no fill feeds it, or the
    write already comes before them) the data cannot order it: a runtime barrier."""
    write = f"rt.rtp_write('{a.rtp}', {a.index}, ...)"
    writes = [i for i, op in enumerate(d.runtime)
              if isinstance(op, RtpWrite) and (op.rtp, op.index) == (a.rtp, a.index)]
    reach = Reach(d)
    feeds = reach.upstream(core.name)
    if not writes:
        if feeds:
            return f"{write} before the fills that feed this core"
        return (f"{write} in the runtime sequence; the core consumes no fifo the runtime "
                f"fills, so it runs from the load: {hold_fix(d, None, a.loc)}")
    first = d.runtime[writes[0]]
    assert isinstance(first, RtpWrite)
    fill = next((op for op in d.runtime[:writes[0]]
                 if isinstance(op, Transfer) and op.op == "fill" and op.fifo in feeds), None)
    if fill is not None:
        return (f"{write} before the fills that feed this core (the fill of '{fill.fifo}' at "
                f"line {fill.loc.line} comes before the write at line {first.loc.line})")
    # the write comes before every fill that feeds the core: no order of the sequence's steps
    # holds the call, only a barrier does (check refuses this as rtp order)
    why, fix = unheld(d, reach, core.name, writes[0], first, a.loc)
    return f"moving the rt.rtp_write (line {first.loc.line}) cannot help ({why}); {fix}"


def timed_only(*args: Any) -> None:
    """What a call runs when kernels are timed only (``compute=False``): nothing."""


def reference(k: Any, kernels: dict[str, Any]) -> Callable[..., None]:
    """The numpy reference kernel ``k``'s calls run: its kernel object's from the handle. A
    design IR without its handle (read back from JSON, or another design's given as
    ``placed=``) names the reference only (``module:function``); one in aiedsl's own library is
    imported, but the user's code is not (importing it would run the user's module again, which
    the simulator never does)."""
    obj = kernels.get(k.symbol)
    if obj is not None:
        return obj.bound_reference()
    from aiedsl.kernels.base import Kernel
    from aiedsl.kernels.library_refs import is_aiedsl

    if not is_aiedsl(k.reference):
        raise DesignError(
            "kernel reference", f"kernel '{k.symbol}' is not among the kernels of the design "
            f"handle simulated, and its reference {k.reference} is the user's code, which the "
            "simulator does not import (that would run the user's module again)", loc=k.loc,
            limit="a kernel's reference comes from the handle its design was traced into (the "
            "design IR names it only), or is one of aiedsl's library references",
            found=f"reference {k.reference}, not in handle.kernels",
            fix="simulate the handle @design returned (or load_design gives) with the IR made "
            "from it: an IR read back from JSON, or another design's, has no references")
    fn = _library(k)
    return Kernel(k, fn).bound_reference()  # checked as a declared kernel's reference is


def _library(k: Any) -> Callable[..., None]:
    """The library reference kernel ``k`` (of an IR without its handle) names; a DesignError
    for any other name, which is never imported (validation refuses it first: this holds
    for an IR that skipped it)."""
    from aiedsl.kernels.library_refs import LIBRARY_FORM, library_reference

    fn = library_reference(k.reference)
    if fn is None:
        raise DesignError(
            "kernel reference", f"kernel '{k.symbol}' names reference {k.reference}, which is "
            "none of aiedsl's library references", loc=k.loc, limit=LIBRARY_FORM,
            found=k.reference, fix="simulate the handle the design was traced into, whose "
            "kernels hold their references, or name the library reference the kernel was "
            "declared with")
    return fn


def trial_reference(k: Any, kernels: dict[str, Any], core: str, call: Call
                    ) -> Callable[..., None]:
    """What a trial run of ``core``'s call ``call`` of kernel ``k`` runs (a call that gets
    and puts, making the words of its put its neighbour takes before its whole get is in:
    :class:`~aiedsl.sim.cascade_stream.Early`): the kernel on copies, unchecked (a reference's
    first-call checks look at the real call), a native one in a library copy and with rounding
    modes of its own, so the core's state is as if it had not run."""
    obj = kernels.get(k.symbol)
    if obj is None:  # a library kernel of an IR without its handle, as reference() finds it
        from aiedsl.kernels.base import Kernel

        obj = Kernel(k, _library(k))
    trial: Callable[..., None] = obj.trial_reference(core, call)
    if getattr(obj, "at_call", None) is None:  # a reference (a native kernel sees one memory)
        trial = before_the_call(trial, k, call)
    return trial
