"""The barrier and rtp rules of every invocation after the first: the same checks, with each
barrier starting where the runtime sequence leaves it (:mod:`aiedsl.checks.carried`), and what
only the load gives (a barrier's initial value, an rtp's first value) not taken for granted."""

from __future__ import annotations

from aiedsl.checks.barriers import check_order
from aiedsl.checks.carried import (
    CARRIED, Left, back_fix, carried_limit, left_over, next_invocation, where_it_starts,
)
from aiedsl.checks.rtp import check_rewrite
from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import BarrierWait, Call, Release, RtpArg
from aiedsl.ir.cores import Core
from aiedsl.ir.design import Design
from aiedsl.ir.program import calls, walk
from aiedsl.ir.reach import Reach
from aiedsl.ir.runtime import RtpWrite, SetBarrier, Transfer, Wait
from aiedsl.targets import TargetModel


def check_barrier_reruns(d: Design) -> None:
    """The barrier checks again for every invocation after the first: no core waits for a value
    only the load gives its barrier, and no set there replaces a value before a core waits for
    it (``barrier rerun``)."""
    left = left_over(d)
    if not left:
        return
    _only_at_load(d, left)
    check_order(next_invocation(d, left), left)


def _only_at_load(d: Design, left: dict[str, Left]) -> None:
    """A wait for a barrier's initial value, which the sequence never sets and leaves the lock
    at another: it passes on the first invocation only."""
    for core in d.cores:
        for step, _ in walk(core.body):
            if not isinstance(step, BarrierWait) or step.barrier not in left:
                continue
            end = left[step.barrier]
            b = d.barrier(step.barrier)
            sets = [op for op in d.runtime
                    if isinstance(op, SetBarrier) and op.barrier == b.name]
            if step.value != b.init or any(op.value == b.init for op in sets):
                continue
            first: dict[int, SetBarrier] = {}
            for op in sets:
                first.setdefault(op.value, op)
            holds = ", ".join(f"{v} (line {op.loc.line})" for v, op in first.items())
            raise DesignError(
                "barrier rerun", f"{core.name} waits for barrier '{b.name}' to hold "
                f"{step.value}, its initial value, which it holds only on the first invocation: "
                f"the runtime never sets {step.value}, and its last set (line "
                f"{end.set.loc.line}) leaves {end.value} in the lock, where the next invocation "
                "starts, so there the wait never passes (a silent hang on the NPU from the "
                "second run on)", loc=step.loc,
                limit=f"a wait passes only while the barrier holds its value (aie.use_lock "
                f"Acquire, AIE2's acquire-equal); {CARRIED}",
                found=f"barrier '{b.name}' holds {step.value} from the load only; every later "
                f"invocation starts at {end.value}, and the sequence gives it {holds}",
                related=[(f"barrier '{b.name}' starts at {b.init}", b.loc),
                         (f"the sequence's last rt.set_barrier, to {end.value}", end.set.loc)],
                fix=f"rt.set_barrier('{b.name}', {step.value}) at the start of the runtime "
                "sequence, after its rtp_writes (each invocation then gives the value, where "
                "initial= gives it to the first only), or rt.set_barrier("
                f"'{b.name}', {step.value}) at its end, after an rt.sync() on its last drains "
                "(each invocation then leaves the lock as the load did)")


def check_rtp_reruns(d: Design, target: TargetModel) -> None:
    """The rtp rules of every invocation after the first (the module docstring's last part):
    no call reading a slot may start before the slot's first write when that write changes
    what the invocation before left, and no rewrite races a call, with each barrier starting
    where the sequence leaves it."""
    left = left_over(d)
    if not left:
        return  # the barriers start every invocation alike, the data orders it as the first
    later = next_invocation(d, left)
    reach = Reach(later)
    readers: dict[tuple[str, int], list[str]] = {}
    for program in d.cores:
        for call in calls(program):
            for a in call.args:
                if isinstance(a, RtpArg) and program.name not in readers.setdefault(
                        (a.rtp, a.index), []):
                    readers[(a.rtp, a.index)].append(program.name)
    writes: dict[tuple[str, int], list[tuple[int, RtpWrite]]] = {}
    for i, op in enumerate(d.runtime):
        if isinstance(op, RtpWrite):
            writes.setdefault((op.rtp, op.index), []).append((i, op))
    for slot, ws in writes.items():
        if slot not in readers:
            continue
        (point, first), (_, last) = ws[0], ws[-1]
        if first.value != last.value:
            for core in readers[slot]:
                may = reach.could_run(core, point).reads[slot]
                if may:
                    _refuse_stale(d, Reach(d), reach, point, first, last, core, may, left)
        for (i, op), (_, previous) in zip(ws[1:], ws):
            check_rewrite(later, i, op, previous, readers[slot], reach, target.max_lock_value,
                           left)


def _refuse_stale(d: Design, first_run: Reach, reach: Reach, point: int, first: RtpWrite,
                  last: RtpWrite, core: str, may: int, left: dict[str, Left]) -> None:
    """Refuse the first write of a slot (runtime op ``point``) that ``may`` calls of ``core``
    can start before on an invocation after the first (``reach`` of that invocation's design,
    ``first_run`` of the first's), reading what the last write left."""
    # the waits the barriers' starting values let a core past before the write, against the
    # first invocation's: what lets the calls start early (the reader's own first)
    early = [(c, w) for c in [core] + [c.name for c in d.cores if c.name != core]
             for w, n in reach.could_run(c, point).passed.items()
             if n > first_run.could_run(c, point).passed[w]]
    why = ""
    related = [(f"the last write, of {last.value}", last.loc)]
    if early:
        c, w = early[0]
        end = left[w.barrier]
        why = (f"{where_it_starts(w.barrier, end)}; " if end.core else
               f"{where_it_starts(w.barrier, end)}, which lets {c} past its wait for "
               f"{w.value} (line {w.loc.line}) at once; ")
        related.append((f"{c}'s wait for {w.value}", w.loc))
    starts = "calls that read" if may > 1 else "call that reads"
    raise DesignError(
        "rtp race", f"on every invocation after the first, rt.rtp_write of '{first.rtp}'"
        f"[{first.index}] races {core}'s calls that read it: they may see its {first.value} or "
        f"the {last.value} the invocation before left (line {last.loc.line})", loc=first.loc,
        limit="an rtp buffer keeps what the last invocation wrote (nothing but the runtime "
        "sequence writes it), and " + carried_limit(left) + ", so no call reading a slot may "
        "start before the slot's first write when that write changes its value",
        found=f"{why}the fills and barrier values before the write let {core} start {may} "
        f"{starts} the slot", related=related,
        fix=f"{back_fix(left)} (every invocation then starts as the first does), or have the "
        "calls that should see the new value wait for a value the barrier does not hold when "
        "an invocation starts, set after the rtp_write")


def check_late_reads(d: Design) -> None:
    """No call that may still run when the host's wait returns reads an rtp slot that the next
    invocation's writes may change before it reads it (``rtp race``).

    The host's wait ends with the sequence's last instruction, and nothing in the sequence
    waits for a core, only for shim transfers (mlir-aie lowers ``dma_wait`` to ``npu.sync``:
    ``AIEDmaToNpu.cpp``, ``DmaWaitToSyncPattern``): a call past the last output the drains
    waited for show released runs on while the next invocation starts, and that invocation's
    writes of the slot before its first wait showing the core past the call (a release of
    its next pass) may land before the call reads it. The call should read what the sequence
    wrote last; only a write among those of another value can change what it reads."""
    values: dict[tuple[str, int], list[tuple[int, RtpWrite]]] = {}
    for i, op in enumerate(d.runtime):
        if isinstance(op, RtpWrite):
            values.setdefault((op.rtp, op.index), []).append((i, op))
    varying = {slot: ws for slot, ws in values.items() if len({w.value for _, w in ws}) > 1}
    if not varying:
        return
    reach = Reach(d)
    left = left_over(d)
    # the next invocation, with each barrier where the first leaves it (the core's next pass
    # starts there too): what its drains waited for prove of that pass
    later = Reach(next_invocation(d, left)) if left else reach
    for core in d.cores:
        total: dict[tuple[str, int], int] = {}
        last: dict[tuple[str, int], Call] = {}
        for step, mult in walk(core.body):
            if isinstance(step, Call):
                for slot in {(a.rtp, a.index) for a in step.args if isinstance(a, RtpArg)}:
                    total[slot] = total.get(slot, 0) + mult
                    last[slot] = step
        done = reach.must_have_run(core.name, len(d.runtime)).reads
        for slot, ws in varying.items():
            if total.get(slot, 0) <= done[slot]:
                continue
            # the first point of the next invocation at which a drain waited for shows the
            # core's next pass released something: the late call, before it, has finished
            past = next((i for i in range(len(d.runtime) + 1)
                         if any(later.must_have_run(core.name, i).released.values())), None)
            final = ws[-1][1]
            early = [w for i, w in ws if past is None or i < past]
            other = next((w for w in early if w.value != final.value), None)
            if other is not None:
                _refuse_late(d, core, last[slot], other, final, early, past,
                             total[slot], done[slot])


def _refuse_late(d: Design, core: Core, call: Call, other: RtpWrite, final: RtpWrite,
                 early: list[RtpWrite], past: int | None, total: int, done: int) -> None:
    """Refuse ``core``'s ``call``, which reads a slot whose last write is ``final`` and which no
    drain waited for shows finished (``done`` of ``total`` reads are): the next invocation's
    writes ``early`` (those before runtime op ``past``, the first its drains show the core's
    next pass started at; None: none does) may land before it reads, ``other`` first of them
    writing another value."""
    rel = next((op for op, _ in reversed(list(walk(core.body))) if isinstance(op, Release)
                and op.port == "produce" and _drained(d, op.fifo)), None)
    where = (f" (inside its `with {rel.fifo}.produce()` of line {rel.loc.line})"
             if rel is not None else "")
    out = f"its last release of '{rel.fifo}'" if rel is not None else "a release of an output"
    if past is None:
        until = f"no wait of the sequence shows {core.name} past the call"
        instead = ""
    else:
        wait = d.runtime[past - 1]
        at = (f"line {wait.loc.line}" if isinstance(wait, Wait) and wait.by != "end" else
              "the sequence's end")
        until = f"the first wait that shows {core.name} past the call ({at})"
        instead = (f", or give the slot {final.value} in every write before that wait ({at}): "
                   "the next invocation's writes that may land before the call reads then "
                   "leave the value it reads")
    given = ", ".join(f"{w.value} (line {w.loc.line})" for w in early)
    raise DesignError(
        "rtp race", f"{core.name}'s call of '{call.kernel}' reads rtp '{final.rtp}'"
        f"[{final.index}] after the last of its outputs the runtime waits for: it may run "
        "after the host's wait returns, and back-to-back invocations then overlap it with the "
        f"next one, whose rt.rtp_write of {other.value} (line {other.loc.line}) may land "
        f"before it reads the {final.value} of line {final.loc.line}", loc=call.loc,
        limit="a call that may run after the sequence's last wait returns reads what the next "
        "invocation's writes that land first leave, so either those all write the value the "
        "call should read or the call finishes before that wait returns, as the drains waited "
        "for show: the host's wait ends with the sequence's last instruction, and nothing in "
        "the sequence waits for a core, only for shim transfers (mlir-aie lowers dma_wait to "
        "npu.sync on a shim channel)",
        found=f"the drains waited for show {done} of the {total} calls of {core.name} that "
        f"read the slot finished per invocation; the next invocation writes {given} before "
        f"{until}",
        related=[(f"the first write of another value, {other.value}", other.loc),
                 (f"the last write, of {final.value}", final.loc)],
        fix=f"make the call at line {call.loc.line} come before {out}{where}, so that the "
        f"rt.sync() on that drain shows it finished{instead}")


def _drained(d: Design, fifo: str) -> bool:
    """Fifo ``fifo``'s elements end in a drain of the runtime (through links too)."""
    seen, todo = set(), [fifo]
    drains = {op.fifo for op in d.runtime if isinstance(op, Transfer) and op.op == "drain"}
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in drains:
            return True
        todo += [n for link in d.links if name in link.srcs for n in link.dsts]
    return False
