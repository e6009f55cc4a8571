"""Runtime parameters: every slot a core reads is written, and no write races a read.

An rtp slot is plain memory: ``aiex.npu.rtp_write`` is one register write from the NPU's
firmware, and the core reads the slot (``memref.load``) whenever its program reaches the call,
with no lock between them. What orders the two is the data the core waits for: a call runs only
once its inputs arrived, and they arrive only after the runtime issued the fills. So aiedsl asks
of a design (IRON's designs do the same: parameters first, then the transfers):

* every slot a core reads is written by the runtime sequence, before its first transfer (the
  memory holds no value before: mlir-aie gives the buffer no initial value), and before any
  call reading it can start (:func:`_check_first_write`, ``rtp order``): a core that consumes
  no fifo the runtime fills is held by nothing and runs from the load, before the sequence
  starts, as does one whose barrier wait takes the barrier's initial value. No order of the
  sequence's steps holds it; a runtime barrier set after the write does (mlir-aie's
  programming guide, ``section-2d/RuntimeTasks.md``: workers may read runtime parameters
  before they are available, and ``WorkerRuntimeBarrier`` is the remedy);
* a slot is rewritten only when no call reading it can run on either side of the write: every
  call the data filled before the write lets start must be shown finished by the drains waited
  for before it (:mod:`aiedsl.ir.reach` bounds both from the core programs, links and
  transfers). A wait retires only the drain it waits for: data filled for later calls may
  already be in the core, and those calls may run before the new value lands, or after.

The simulator keeps the first rule at run time: a core reading a slot the runtime has not
written by then is a :class:`~aiedsl.sim.state.SimFault` naming the slot and the call (its fix
the barrier of :func:`hold_fix` when no fill before the write feeds the core).

A core that waits on a runtime barrier (IRON's ``WorkerRuntimeBarrier``, :func:`aiedsl.barrier`)
is ordered by the barrier instead: its slots are written before the barrier's first set, a
rewrite is held to the second rule with the sets counted among what lets a call start (a call
past a wait for v needs the barrier to have held v; a wait leaves the value in the lock, so
every later wait for v passes too, until a set replaces it), and
:func:`~aiedsl.checks.barrier_values.check_barriers` finds the waits for a value the barrier
never holds (a static hang). A set that may replace a value
before a core got past its wait for it is :mod:`aiedsl.checks.barriers`' (``barrier race``).

Every invocation after the first (:func:`aiedsl.checks.reruns.check_rtp_reruns`). An rtp buffer,
like a barrier's lock, keeps what the last invocation left: nothing but the runtime sequence writes
it (IRON's ``use_write_rtp`` buffer is an ``aie.buffer`` with no initial value;
``aiex.npu.rtp_write`` is the only write). So when a slot's first write in the sequence gives
another value than its last, the first write of each later invocation is a rewrite, and no call
reading the slot may start before it. Only a barrier changes that from the first invocation: with
the data as the first invocation has it, no call can start before the first write (the rules above),
but a barrier the sequence leaves at another value than its initial one
(:func:`aiedsl.checks.carried.left_over`) may let a core past its first waits at once. The rewrites
are judged again with the barriers starting there too.
"""

from __future__ import annotations

from aiedsl.checks.barrier_values import (
    check_barriers, next_step, passed_before_reset, same_value_again,
)
from aiedsl.checks.carried import Left, back_fix, carried_limit, where_it_starts
from aiedsl.ir.program import calls, walk
from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import Acquire, RtpArg
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.ir.progress import waits_on_barrier
from aiedsl.ir.reach import Reach
from aiedsl.ir.runtime import RtpWrite, SetBarrier, Transfer
from aiedsl.targets import TargetModel


def check_rtps(d: Design, target: TargetModel) -> None:
    """The rules of the module docstring, for every slot a core reads and every barrier."""
    check_barriers(d)
    read: dict[tuple[str, int], tuple[str, Loc]] = {}
    read_by: dict[tuple[str, int], list[str]] = {}  # slot -> the ungated cores reading it
    gated: dict[str, set[str]] = {}  # core -> the barriers it waits on
    for b in d.barriers:
        for core_name in b.cores:
            gated.setdefault(core_name, set()).add(b.name)
    for core in d.cores:
        for call in calls(core):
            for a in call.args:
                if not isinstance(a, RtpArg):
                    continue
                if core.name not in read_by.setdefault((a.rtp, a.index), []):
                    read_by[(a.rtp, a.index)].append(core.name)
                if core.name not in gated:
                    read.setdefault((a.rtp, a.index), (core.name, a.loc))
    _check_gated(d, gated)
    first_transfer: Transfer | None = None
    written: dict[tuple[str, int], RtpWrite] = {}
    reach = Reach(d)
    for i, op in enumerate(d.runtime):
        if isinstance(op, Transfer):
            first_transfer = first_transfer or op
        elif isinstance(op, RtpWrite):
            slot = (op.rtp, op.index)
            if slot in read and slot not in written and first_transfer is not None:
                reader, at = read[slot]
                raise DesignError(
                    "rtp order", f"rt.rtp_write of '{op.rtp}'[{op.index}] comes after the "
                    "runtime's first transfer", loc=op.loc, limit="a slot a core reads is "
                    "written before the sequence's first transfer (the core may run as soon as "
                    "data arrives, and the slot holds no value before its first write)",
                    found=f"rt.{first_transfer.op} of '{first_transfer.fifo}' first",
                    related=[("the first transfer", first_transfer.loc),
                             (f"{reader} reads the slot", at)],
                    fix="move the rtp_write before the first rt.fill")
            if slot in written:
                check_rewrite(d, i, op, written[slot], read_by.get(slot, []), reach,
                               target.max_lock_value)
            else:
                _check_first_write(d, i, op, read_by.get(slot, []), reach)
            written.setdefault(slot, op)
    for slot, (reader, at) in read.items():
        if slot not in written:
            rtp = d.rtp(slot[0])
            raise DesignError(
                "rtp unwritten", f"{reader} reads rtp '{slot[0]}'[{slot[1]}], which the runtime "
                "never writes", loc=at, limit="every slot a core reads is written by "
                "rt.rtp_write (the buffer has no initial value)", found="no rt.rtp_write of it",
                related=[(f"rtp '{rtp.name}' is declared", rtp.loc)],
                fix=f"rt.rtp_write({slot[0]!r}, {slot[1]}, value) at the start of the runtime "
                "sequence")


_HELD_LIMIT = (
    "a slot a core reads is written before any call reading it can start: the slot holds no "
    "value before its first write, and a core's calls wait only for the data they acquire and "
    "the barrier values they wait for, not for the runtime sequence (mlir-aie's programming "
    "guide, section-2d/RuntimeTasks.md: workers may read runtime parameters before they are "
    "available, and a WorkerRuntimeBarrier holds them)")
"""The rule a refusal of a first write that a call may precede states."""


def _check_first_write(d: Design, point: int, op: RtpWrite, readers: list[str],
                       reach: Reach) -> None:
    """No call reading the slot of ``op``, its first write (runtime op ``point``), can start
    before it: a core that waits for no filled data and no barrier value runs from the load."""
    slot = (op.rtp, op.index)
    for core in readers:
        may = reach.could_run(core, point).reads[slot]
        if not may:
            continue
        program = next(p for p in d.cores if p.name == core)
        call = next(a for c in calls(program)
                    for a in c.args if isinstance(a, RtpArg) and (a.rtp, a.index) == slot)
        why, fix = unheld(d, reach, core, point, op, call.loc)
        starts = f"{may} call{'s' * (may != 1)} that read{'s' * (may == 1)}"
        if any(isinstance(o, Acquire) and o.port == "produce" for o, _ in walk(program.body)):
            # the bound takes a produce acquire as granted: with its buffers full and no drain
            # issued, fewer may start (a tester: 12 said, 2 possible)
            starts = f"up to {starts}"
            bound = " (an upper bound: its output buffers are taken to be free)"
        else:
            bound = ""
        raise DesignError(
            "rtp order", f"{core} may read rtp '{op.rtp}'[{op.index}] before the runtime writes "
            f"it (line {op.loc.line}): {why}", loc=call.loc, limit=_HELD_LIMIT,
            found=f"before the write, {core} may start {starts} the slot{bound}",
            related=[("the first rt.rtp_write of the slot", op.loc)], fix=fix)


def unheld(d: Design, reach: Reach, core: str, point: int, write: RtpWrite,
            read: Loc) -> tuple[str, str]:
    """Why nothing holds ``core``'s calls until ``write`` (runtime op ``point``), and the
    fix: a runtime barrier set after the write, or, for a core that waits on one already, a
    first wait for a value the barrier does not hold from the load."""
    passed = reach.could_run(core, point).passed
    taken = next((w for w in passed if passed[w] and w.value == d.barrier(w.barrier).init),
                 None)
    slot = f"rt.rtp_write('{write.rtp}', {write.index}, ...)"
    if taken is not None:
        b = d.barrier(taken.barrier)
        later = next((op for op in d.runtime[point + 1:] if isinstance(op, SetBarrier)
                      and op.barrier == b.name and op.value == taken.value), None)
        then = (f": the rt.set_barrier to {taken.value} at line {later.loc.line}, after the "
                "write, then lets the core past its wait, not the load" if later is not None
                else f", and rt.set_barrier('{b.name}', {taken.value}) after the {slot} (line "
                f"{write.loc.line}), so that the set, not the load, lets the core past its wait")
        return (f"the core's wait for {taken.value} (line {taken.loc.line}) passes on the initial "
                f"value of barrier '{b.name}', which the load gives, and nothing else it waits "
                "for before the call comes from the runtime",
                f"start barrier '{b.name}' at a value the core does not wait for (initial=0)"
                + then)
    if not reach.upstream(core):
        why = ("the core consumes no fifo the runtime fills, so it runs from the load, before "
               "the runtime sequence starts")
    else:
        why = "the calls that read it wait for no data the runtime fills before the write"
    return why, hold_fix(d, write, read)


def hold_fix(d: Design, write: RtpWrite | None, read: Loc) -> str:
    """The fix for a core whose call at ``read`` nothing holds until ``write`` (the slot's
    first; None: the one to add): IRON's WorkerRuntimeBarrier, which the core waits on and the
    runtime sets after the write."""
    # a name no fifo, rtp, local or barrier has: they share one MLIR symbol table
    taken = ({f.name for f in d.fifos} | {r.name for r in d.rtps} | {lb.name for lb in d.locals}
             | {b.name for b in d.barriers})
    name = next(n for n in ("go", *(f"go{i}" for i in range(1, 64))) if n not in taken)
    return (f"hold the core on a runtime barrier (IRON's WorkerRuntimeBarrier): {name} = "
            f"barrier(name=\"{name}\") in the design function, {name}.wait_for_value(1) in the "
            f"core function before the call that reads the slot (line {read.line}), and "
            f"rt.set_barrier({name}, 1) after the rt.rtp_write"
            + (f" at line {write.loc.line}" if write is not None else ""))


def check_rewrite(d: Design, point: int, op: RtpWrite, previous: RtpWrite, readers: list[str],
                   reach: Reach, top: int, left: dict[str, Left] | None = None) -> None:
    """A rewrite at runtime op ``point`` races a reader when the data filled before it lets a
    call reading the slot start that the drains waited for before it do not show finished (``left``:
    on every invocation after the first, :func:`aiedsl.checks.reruns.check_rtp_reruns`' design,
    whose barriers start where the one before left them)."""
    slot = (op.rtp, op.index)
    for core in readers:
        may = reach.could_run(core, point).reads[slot]
        must = reach.must_have_run(core, point).reads[slot]
        if may <= must:
            continue
        feeds = reach.upstream(core)
        fill = next((t for t in reversed(d.runtime[:point])
                     if isinstance(t, Transfer) and t.op == "fill" and t.fifo in feeds), None)
        related = [("the previous write", previous.loc)]
        if fill is not None:
            related.insert(0, (f"the last rt.fill of '{fill.fifo}' before it", fill.loc))
        either = (f"call {may}" if may == must + 1 else f"calls {must + 1} and {may}"
                  if may == must + 2 else f"calls {must + 1} to {may}")
        started = f"{may} call{'s' * (may != 1)} that read{'s' * (may == 1)}"
        gated = waits_on_barrier(next(c for c in d.cores if c.name == core))
        given = "the fills and barrier sets" if gated else "the fills"
        # a new value to wait for holds the calls on the first invocation, and the next one
        # starts with it: its own fix is the set back to the initial value, below
        same = same_value_again(d, core, point, top) if gated and not left else None
        stale = passed_before_reset(d, core, point, top) if gated and not left else None
        hint = ""
        opening = ("before the rtp_write, rt.sync() on the drains of every call filled so far, "
                   "and issue the fills of the calls that should see the new value after it")
        reason = ""
        if stale is not None:
            wait, gave, reset, fresh = stale
            related.append((f"rt.set_barrier to {gave.value}", gave.loc))
            related.append((f"rt.set_barrier to {reset.value}, which may come too late",
                            reset.loc))
            reason = (f"; {core} goes from its release straight to its next wait for "
                      f"{wait.value} (line {wait.loc.line}), which passes on the {gave.value} "
                      f"set at line {gave.loc.line} if it gets there before the set to "
                      f"{reset.value} at line {reset.loc.line} lands (nothing orders that "
                      "register write with the core: the drains waited for show only what it "
                      "released)")
            hint = (f"have the calls that should see the new value wait for a value the "
                    f"barrier has not held (wait_for_value({fresh})) and "
                    f"rt.set_barrier('{wait.barrier}', {fresh}) after the rtp_write (line "
                    f"{op.loc.line}); setting it back to {reset.value} does not hold a core "
                    "that may already be past its wait")
            opening = opening + "; " if fill is not None else ""
        elif same is not None:
            again, fresh = same
            related.append((f"rt.set_barrier to {again.value}, which the lock already holds",
                            again.loc))
            hint = (f"; setting barrier '{again.barrier}' to {again.value} again (line "
                    f"{again.loc.line}) holds nothing, as a wait leaves the value in the lock: "
                    "to hold the calls that should see the new value, have them wait for a "
                    f"value the barrier has not held (wait_for_value({fresh})) and set it to "
                    "that after the rtp_write")
        elif gated and fill is None and not left:
            # nothing the runtime fills feeds the core: only its barrier holds its calls, so
            # syncing and moving fills does nothing (an MLIR-AIR user's tester)
            step = next_step(d, core, point, top)
            if step is not None:
                name, fresh = step
                opening = (f"hold the calls that should see the new value on barrier "
                           f"'{name}', which is all that holds {core} (it consumes nothing the "
                           f"runtime fills): {name}.wait_for_value({fresh}) in the core "
                           f"function before them, and rt.set_barrier({name}, {fresh}) after "
                           f"the rtp_write (line {op.loc.line})")
        limit = ("a slot is rewritten only when every call the data issued before it may "
                 "start has finished, as the drains waited for before it show (the write is one "
                 "register write: nothing else orders it with the core)")
        found = (f"{given} before it let {core} start {started} the slot; the drains "
                 f"waited for show {must} finished, so {either} may read either value{reason}")
        fix = opening + hint
        when = ""
        if left:  # the first invocation passed: only where the barriers start differs
            when = "on every invocation after the first, "
            limit += "; " + carried_limit(left)
            found = "; ".join(where_it_starts(name, end)
                              for name, end in left.items()) + "; " + found
            fix += "; or " + back_fix(left)
        raise DesignError(
            "rtp race", f"{when}rt.rtp_write of '{op.rtp}'[{op.index}] races {core}'s calls "
            "that read it: they may see the new value or the old one", loc=op.loc,
            limit=limit, found=found, related=related, fix=fix)


def _check_gated(d: Design, gated: dict[str, set[str]]) -> None:
    """A core that waits on a barrier reads its slots when the barrier lets it: each slot it
    reads must be written before the runtime first sets one of its barriers."""
    if not gated:
        return
    first_set: dict[str, int] = {}
    first_write: dict[tuple[str, int], int] = {}
    for i, op in enumerate(d.runtime):
        if isinstance(op, SetBarrier):
            first_set.setdefault(op.barrier, i)
        elif isinstance(op, RtpWrite):
            first_write.setdefault((op.rtp, op.index), i)
    for core in d.cores:
        if core.name not in gated:
            continue
        sets = [first_set[b] for b in gated[core.name] if b in first_set]
        for call in calls(core):
            for a in call.args:
                if not isinstance(a, RtpArg):
                    continue
                w = first_write.get((a.rtp, a.index))
                if w is None or (sets and w > min(sets)):
                    first = d.runtime[min(sets)] if sets else None
                    raise DesignError(
                        "rtp order", f"{core.name} reads rtp '{a.rtp}'[{a.index}], which the "
                        "runtime does not write before it first sets the barrier the core waits "
                        "on", loc=a.loc, limit="a slot a barrier-gated core reads is written "
                        "before the barrier's first set", found="no rt.rtp_write of it"
                        if w is None else f"its first write at line {d.runtime[w].loc.line}",
                        related=[("the first set", first.loc)] if first is not None else None,
                        fix=f"rt.rtp_write('{a.rtp}', {a.index}, value) before rt.set_barrier")
