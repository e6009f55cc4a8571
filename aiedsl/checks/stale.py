"""What a core's produced elements hold: a kernel reads, and the DMA sends, only what a
kernel call wrote first.

An element a core acquires by ``produce()`` is a buffer of the fifo's ring as its DMA left it:
it holds whatever was last sent from it (an earlier tile, or an earlier run's), not anything
this core computed. A kernel that reads it before a call writes it (input and output swapped
in the call, or an accumulator added into without zeroing it first) computes from stale data;
the result is wrong with no hint of the cause (the simulator only FAILs the comparison).

Only fifo elements acquired by ``produce()`` are judged: a consumed element holds what its
producer sent, a local what :func:`~aiedsl.checks.locals.check_locals` judges, and a cascade
is not a buffer.
"""

from __future__ import annotations

from itertools import count

from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import Acquire, BufferArg, Call, Loop, Op, Release
from aiedsl.ir.cores import Core
from aiedsl.ir.design import Design
from aiedsl.ir.kernel import Kernel
from aiedsl.kernels.paths import KERNEL_TEMPLATES, KERNELS_CPP
from aiedsl.kernels.source import source_file
from aiedsl.ir.program import acquires

READS = ("in", "inout")
"""The accesses that read what the element holds. ``inout`` too, for aiedsl's own kernels:
an accumulator a library matmul adds into holds stale partial sums unless a call wrote it
first (the shipped GEMMs zero it, then multiply-accumulate into it). A kernel of the user's
may take an element "inout" and overwrite it on some calls (a flag for the first K step), so
its "inout" is not judged."""

WRITES = ("out", "inout")
"""The accesses after which the element holds what a kernel computed."""

Window = dict[str, list[int]]
"""Per fifo: the elements a core holds of it on its produce side, oldest first, each a number
of its own."""

View = tuple[list[int], Acquire]
"""The elements one acquire hands the core, and the acquire."""


def check_stale_reads(d: Design) -> None:
    """A kernel argument that reads (``"in"``, ``"inout"``) an element acquired by
    ``produce()`` comes after a call that wrote it (``"out"``, ``"inout"``) since its acquire,
    in program order. Run after :func:`~aiedsl.checks.held.check_held_buffers` (every element
    passed is held) and :func:`~aiedsl.checks.calls.check_kernel_calls` (the arguments
    match the signature). Each loop body is walked as often as it runs, at most twice: the
    first pass is its first iteration (what it reads before writing is stale there at least),
    the second meets what the first left held (a sliding window's new element)."""
    for core in d.cores:
        _walk(d, core, core.body, {}, {}, set(), count(), False)


def unwritten_inout_reads(d: Design) -> list[tuple[Core, Call, str]]:
    """Each call of a kernel of the user's taking "inout" an element its core acquired by
    ``produce()`` before any call wrote it, walked as :func:`check_stale_reads` walks: the call
    reads stale data unless the kernel writes before it reads, which ``check`` cannot see (not
    judged there; :func:`aiedsl.notes.stale_inout_notes` says it). Each with its core and the
    note's text. Raises nothing, whatever the design."""
    found: list[tuple[Core, Call, str]] = []
    for core in d.cores:
        _walk(d, core, core.body, {}, {}, set(), count(), False, found)
    return found


def check_unwritten_releases(d: Design) -> None:
    """An element acquired by ``produce()`` is released only after a call wrote it
    (``"out"``, ``"inout"``), in program order, walked as :func:`check_stale_reads` walks.
    Run last of the checks: a design sketched to try out resources or placement (fifos
    acquired and released around ``pass``) hears of its limits first."""
    for core in d.cores:
        _walk(d, core, core.body, {}, {}, set(), count(), True)


def _walk(d: Design, core: Core, ops: tuple[Op, ...], held: Window, views: dict[str, View],
          written: set[int], ids: count, releases: bool,
          soft: list[tuple[Core, Call, str]] | None = None) -> None:
    for op in ops:
        if isinstance(op, Acquire):
            if op.port != "produce":
                continue
            window = held.setdefault(op.fifo, [])  # the held ones first, new ones after them
            window.extend(next(ids) for _ in range(op.count - len(window)))
            views[op.result] = (window[:op.count], op)
        elif isinstance(op, Release):
            if op.port == "produce":
                window = held.get(op.fifo, [])
                if releases and soft is None:
                    _released(core, op, window[:op.count], views, written)
                del window[:op.count]
        elif isinstance(op, Call):
            _call(d, core, op, views, written, not releases, soft)
        elif isinstance(op, Loop):
            for _ in range(min(op.count, 2)):
                _walk(d, core, op.body, held, views, written, ids, releases, soft)


def _call(d: Design, core: Core, call: Call, views: dict[str, View], written: set[int],
          judge: bool, soft: list[tuple[Core, Call, str]] | None = None) -> None:
    k = d.kernel(call.kernel)
    wrote: list[int] = []
    for position, (arg, param) in enumerate(zip(call.args, k.args)):
        if not isinstance(arg, BufferArg) or arg.value not in views:
            continue
        elements, acq = views[arg.value]
        element = elements[arg.index]
        if param.access in WRITES:
            wrote.append(element)
        if not judge or param.access not in READS or element in written:
            continue
        what = (f"the element of '{acq.fifo}' it acquired by produce()" if acq.count == 1 else
                f"element {arg.index} of the {acq.count} of '{acq.fifo}' it acquired by "
                "produce()")
        if param.access == "inout" and not _library(k):
            if soft is not None and all(c is not call for _, c, _ in soft):
                soft.append((core, call, _inout_text(k, position, param.name, acq, arg.index)))
            continue
        if soft is not None:
            continue  # the check's to judge (a design run unchecked is not judged here)
        signature = f"{k.symbol}({', '.join(a.name for a in k.args)})"
        swapped = _consumed_output(d, core, call) if param.access == "in" else None
        if swapped:
            fifo, at, name = swapped
            fix = (f"the call passes the element it consumed from '{fifo}' as argument {at} "
                   f"('{name}', \"out\"): swap the two arguments ({signature})")
        elif param.access == "in":
            fix = (f"pass a consumed element there, or check the order of the call's arguments "
                   f"({signature}); if the kernel writes '{param.name}' before reading it, "
                   "declare it \"out\"")
        else:
            fix = ("write it first, with a call that takes it \"out\" (the GEMM designs zero "
                   "their accumulator before the matmuls add into it); if the kernel writes "
                   f"'{param.name}' before reading it, declare it \"out\"")
        raise DesignError(
            "stale read", f"{core.name} passes {what} to '{k.symbol}' as argument {position} "
            f"('{param.name}', \"{param.access}\"), which the kernel reads, before any call "
            "wrote it: the element holds stale data", loc=call.loc,
            limit="an element acquired by produce() holds whatever its DMA last sent from it "
            "until a kernel call takes it \"out\"; only then may a call read it (\"in\" or "
            "\"inout\")", found=f"no call since its acquire at line {acq.loc.line} wrote it",
            related=[(f"the produce() of '{acq.fifo}'", acq.loc)], fix=fix)
    written.update(wrote)


def _inout_text(k: Kernel, position: int, name: str, acq: Acquire, index: int) -> str:
    """The note on a kernel of the user's taking ``name`` "inout" from an element of ``acq``
    that no call wrote since (:func:`unwritten_inout_reads`)."""
    what = (f"the element of '{acq.fifo}' acquired by produce() at line {acq.loc.line}"
            if acq.count == 1 else f"element {index} of the {acq.count} of '{acq.fifo}' "
            f"acquired by produce() at line {acq.loc.line}")
    return (f"'{k.symbol}' takes {what} as argument {position} ('{name}', \"inout\") before any "
            "call wrote it: until a call does, it holds whatever its DMA last sent from it (an "
            "earlier element, or an earlier run's), so if the kernel reads "
            f"'{name}' before writing it, it computes from stale data; write it first with a "
            f"call that takes it \"out\", or, if the kernel writes '{name}' before reading it, "
            "declare it \"out\"")


def _released(core: Core, op: Release, elements: list[int], views: dict[str, View],
              written: set[int]) -> None:
    """A produced element is released only after a call wrote it: else its DMA sends what the
    buffer held before (an earlier tile's data, or an earlier run's)."""
    unwritten = [e for e in elements if e not in written]
    if not unwritten:
        return
    acq = next((a for window, a in views.values() if unwritten[0] in window
                and a.fifo == op.fifo), None)
    if acq is None:
        return  # acquired before this walk saw it: nothing known of its writes
    n = len(unwritten)
    what = (f"the element of '{op.fifo}' it acquired by produce()" if acq.count == 1 and n == 1
            else f"{n} of the elements of '{op.fifo}' it acquired by produce()")
    raise DesignError(
        "unwritten element", f"{core.name} releases {what} with nothing written into "
        f"{'it' if n == 1 else 'them'}: its DMA sends stale data", loc=op.loc,
        limit="an element acquired by produce() holds whatever its DMA last sent from it until "
        "a kernel call takes it \"out\" (or \"inout\")",
        found=f"no call between its acquire at line {acq.loc.line} and its release takes it "
        "\"out\" or \"inout\"", related=[] if acq.loc == op.loc else [
            (f"the produce() of '{op.fifo}'", acq.loc)],
        fix="pass it to the kernel that computes it, as an \"out\" argument, before it is "
        "released; if a kernel writes it through an argument declared \"in\", declare that "
        "argument \"out\"")


def _library(k: Kernel) -> bool:
    """Is ``k`` one of aiedsl's own kernels (a file of its kernels_cpp/ or one of its kernel
    templates; a user's template is the user's), whose "inout" arguments are added into on
    every call?"""
    path = source_file(k)
    return path is not None and any(path.is_relative_to(d) for d in (KERNELS_CPP,
                                                                       KERNEL_TEMPLATES))


def _consumed_output(d: Design, core: Core, call: Call) -> tuple[str, int, str] | None:
    """The fifo, position and parameter of an element acquired by consume() that ``call``
    passes as an ``"out"`` argument (an input and an output swapped in the call), if any."""
    acquired = acquires(core)
    for position, (arg, param) in enumerate(zip(call.args, d.kernel(call.kernel).args)):
        if (isinstance(arg, BufferArg) and param.access == "out" and arg.value in acquired
                and acquired[arg.value].port == "consume"):
            return acquired[arg.value].fifo, position, param.name
    return None
