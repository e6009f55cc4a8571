"""A compute core's traced program compiled once into a flat instruction list for
:mod:`aiedsl.sim.core` to interpret: every lookup (fifo ends and their locks, buffer views in
each kernel parameter's shape, the kernel's reference and how it reads its operands) done
ahead, loops as jumps."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aiedsl.dtypes import held
from aiedsl.ir.core_ops import (Acquire, BarrierWait, BufferArg, Call, IndexArg, LocalArg, Loop, Op,
                                Release, RtpArg)
from aiedsl.ir.cores import Core
from aiedsl.sim.call_time import call_body_cycles
from aiedsl.sim.call_refs import (
    INDEX, RTP, before_the_call, reference, timed_only, trial_reference,
)
from aiedsl.sim.processes import Lock
from aiedsl.sim.operands import accumulating, accumulating_call, fill_tracking, ring_views
from aiedsl.sim.state import Machine, Ring


@dataclass(eq=False, slots=True)
class End:
    """One fifo end of a core while its program runs: the ring, the locks its acquires and
    releases use, the slots it holds (oldest first) and the slot its next acquire gets."""

    key: tuple[str, str]
    ring: Ring
    acquire: Lock
    release: Lock
    held: list[int] = field(default_factory=list)
    next: int = 0
    depth: int = 0
    listed: bool = False
    """Whether the core's ``held`` (for explanations) lists this end yet: in the order the
    ends were first acquired."""
    stalled: float = 0.0
    """Cycles the core waited at this end's acquires (for data, or for a free buffer)."""


ACQ, REL, CALL, LOOP, NEXT, BAR = range(6)
"""Opcodes of a compiled core program."""


def compile_core(m: Machine, core: Core, rings: dict[tuple[str, str, str], Ring],
             kernels: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Flatten a core program into instructions with every lookup done once.

    Loops become ``(LOOP, n, end)`` / ``(NEXT, start)``. An acquire stores what it got in the
    cell of its result name (``[end, slots]``, the latest acquire of that name wins, as the
    program reads it); a call's buffer argument reads that cell through views of every slot of
    every end acquired under the name, already in the kernel parameter's shape.
    """
    ends: dict[tuple[str, str], End] = {}
    cells: dict[str, list[Any]] = {}
    local_cells: dict[str, list[Any]] = {}
    """Per local the core uses, a cell as an acquire's (``[key, [slot]]``) that never changes:
    its one buffer, which the views of its arguments hold under ``key``."""
    acquired: dict[str, list[End]] = {}
    kdecl = {k.symbol: k for k in m.design.kernels}
    # kernels timed only run nothing: no reference is looked up (an IR read back from JSON
    # has none of the user's, and build's hang check runs it so)
    refs = {k.symbol: reference(k, kernels) if m.compute else timed_only
            for k in m.design.kernels}
    out: list[tuple[Any, ...]] = []

    def end(fifo: str, port: str) -> End:
        key = (fifo, port)
        if key not in ends:
            ring = rings[(fifo, port, core.name)]
            ends[key] = (End(key, ring, ring.cons, ring.prod, depth=ring.depth)
                         if port == "consume" else
                         End(key, ring, ring.prod, ring.cons, depth=ring.depth))
        return ends[key]

    def scan(ops: tuple[Op, ...]) -> None:
        for op in ops:
            if isinstance(op, Loop):
                scan(op.body)
            elif isinstance(op, Acquire):
                acquired.setdefault(op.result, []).append(end(op.fifo, op.port))

    def emit(ops: tuple[Op, ...], counts: tuple[int, ...] = ()) -> None:
        for op in ops:
            if isinstance(op, Loop):
                if op.count < 1:  # as scf.for: no iteration (the body ran once before its
                    continue      # count was tested; validation refuses such a loop first)
                at = len(out)
                out.append((LOOP, op.count, 0))
                emit(op.body, counts + (op.count,))
                if len(out) == at + 1:
                    # nothing to do however often: stepping loop(2**62) would never end, and
                    # the core's compiler deletes an empty loop (the timing model charges none)
                    out.pop()
                    continue
                out.append((NEXT, at))
                out[at] = (LOOP, op.count, len(out))
            elif isinstance(op, BarrierWait):
                out.append((BAR, m.barrier_locks[(op.barrier, core.name)], op.value, op))
            elif isinstance(op, Acquire):
                cell = cells.setdefault(op.result, [None, None])
                e = end(op.fifo, op.port)
                # (ACQ, end, count, cell, op, the end's id, what a trace calls its wait)
                wait = (f"waits for an element of '{op.fifo}'" if op.port == "consume" else
                        f"waits for a free buffer of '{op.fifo}'")
                out.append((ACQ, e, op.count, cell, op, id(e), wait))
            elif isinstance(op, Release):
                out.append((REL, end(op.fifo, op.port), op.count, op))
            elif isinstance(op, Call):
                k = kdecl[op.kernel]
                prepared = getattr(kernels.get(op.kernel), "prepared", None)
                args: list[tuple[Any, ...]] = []
                for pos, (a, param) in enumerate(zip(op.args, k.args)):
                    if isinstance(a, BufferArg):
                        assert param.type is not None, "a buffer parameter has a type"
                        shape = param.type.shape
                        # a prepared kernel's operand is only read, to make what it computes on
                        read = prepared is not None and pos in prepared.operands
                        views = {id(e): ring_views(e.ring, shape, read)
                                 for e in acquired.get(a.value, [])}
                        args.append((cells.setdefault(a.value, [None, None]), a.index, views))
                    elif isinstance(a, LocalArg):  # the core's own copy, read and written
                        assert param.type is not None, "a buffer parameter has a type"
                        buf = m.locals[(a.local, core.name)]
                        cell = local_cells.setdefault(a.local, [id(buf), [0]])
                        args.append((cell, 0, {cell[0]: [buf.reshape(param.type.shape)]}))
                    elif isinstance(a, RtpArg):
                        args.append((RTP, a, m.rtps[a.rtp]))
                    elif isinstance(a, IndexArg):  # its loop is never deleted: the call is in it
                        args.append((INDEX, a.loop, counts[a.loop]))
                    else:  # the constant as the C++ receives it (0.3 as bf16: 0.30078125)
                        args.append((None, 0, held(a.value, param.dtype)))
                casc = None
                bits = m.target.cascade_bits
                if k.cascade_in is not None or k.cascade_out is not None:
                    # (the link it gets from, the link it puts on, the words of each, how its
                    # C++ interleaves them, and for a call that gets and puts the kernel's
                    # unchecked callable for trial runs): each side meets only its own
                    # neighbour (a link missing is refused by check)
                    get = m.cascades.get((core.name, "in")) if k.cascade_in else None
                    put = m.cascades.get((core.name, "out")) if k.cascade_out else None
                    casc = (get, put,
                            k.cascade_in.nbytes * 8 // bits if k.cascade_in else 0,
                            k.cascade_out.nbytes * 8 // bits if k.cascade_out else 0,
                            k.cascade_step,
                            None if get is None or put is None else
                            trial_reference(k, kernels, core.name, op) if m.compute else
                            _timed_only)
                shared, dirty = fill_tracking(op, k, kernels.get(op.kernel), acquired, cells,
                                              local_cells)
                acc = accumulating(op, kernels.get(op.kernel))
                uses_cascade = k.cascade_in is not None or k.cascade_out is not None
                # its own cycles (a kernel profiled for them: the profile of this call's
                # scalars), and a cascade's words no faster than the core moves them
                body = call_body_cycles(k, op.args, m.target)
                # a kernel that tells its calls apart (a native one, to name the call that
                # crashed) gets a callable per call site
                at_call = getattr(kernels.get(op.kernel), "at_call", None)
                ref = refs[op.kernel] if at_call is None else at_call(core.name, op)
                if at_call is None:  # a reference (a native kernel sees the one memory)
                    ref = before_the_call(ref, k, op)
                # (CALL, kernel, reference, argument cells, op, reads an rtp, cascade,
                #  shared operands, written buffers, accumulator, uses the cascade, cycles,
                #  the whole call as one function of the kept outputs (or None),
                #  [appended by _mark_takers] takes a kept output's buffer)
                out.append((CALL, k, ref, args, op,
                            any(isinstance(a, RtpArg) for a in op.args), casc, shared, dirty,
                            acc, uses_cascade, body + m.costs.call,
                            None if uses_cascade or dirty is not None else
                            accumulating_call(acc, args, shared)))

    scan(core.body)
    emit(core.body)
    return mark_takers(out)


def mark_takers(code: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Append to each call whether it may take, as a plain buffer, one an accumulating call
    keeps its output for (it then writes that back first), and to each release whether its
    end may hold such an output; most cannot, and skip the look."""
    kept_ends: set[int] = set()
    for ins in code:
        if ins[0] == CALL and ins[9] is not None:
            kept_ends.update(ins[3][ins[9][0]][2])  # the views by end of its output
    out = []
    for ins in code:
        if ins[0] == CALL:
            keep = ins[9][0] if ins[9] is not None else -1
            takes = any(pos != keep and cell.__class__ is list and kept_ends.intersection(views)
                        for pos, (cell, _, views) in enumerate(ins[3]))
            ins = (*ins, takes)
        elif ins[0] == REL:
            ins = (*ins, id(ins[1]) in kept_ends)
        out.append(ins)
    return out


def _timed_only(*args: object) -> None:
    """A call that gets and puts in a run with kernels timed only: it streams as in any run
    (its puts going out as its gets come in), but nothing runs a trial of it (a reviewer: the
    stream was timed as a get then a put, 2% off a full run's time)."""
    raise AssertionError("a run with kernels timed only runs no trial")
