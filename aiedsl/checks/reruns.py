"""The barrier and rtp rules of every invocation after the first: the same checks, with each
barrier starting where the runtime sequence leaves it (:mod:`aiedsl.checks.carried`), and what
only the load gives (a barrier's initial value, an rtp's first value) not taken for granted."""

from __future__ import annotations

from aiedsl.checks.barriers import check_order
from aiedsl.checks.carried import CARRIED, Left, left_over, next_invocation, where_it_starts
from aiedsl.checks.rtp import check_rewrite
from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import BarrierWait, RtpArg
from aiedsl.ir.design import Design
from aiedsl.ir.program import calls, walk
from aiedsl.ir.reach import Reach
from aiedsl.ir.runtime import RtpWrite, SetBarrier
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
        why = (f"{where_it_starts(w.barrier, end)}, which lets {c} past its wait for "
               f"{w.value} (line {w.loc.line}) at once; ")
        related.append((f"{c}'s wait for {w.value}", w.loc))
    starts = "calls that read" if may > 1 else "call that reads"
    back = " and ".join(f"rt.set_barrier('{name}', {end.initial})" for name, end in left.items())
    raise DesignError(
        "rtp race", f"on every invocation after the first, rt.rtp_write of '{first.rtp}'"
        f"[{first.index}] races {core}'s calls that read it: they may see its {first.value} or "
        f"the {last.value} the invocation before left (line {last.loc.line})", loc=first.loc,
        limit="an rtp buffer keeps what the last invocation wrote (nothing but the runtime "
        "sequence writes it), and " + CARRIED + ", so no call reading a slot may start before "
        "the slot's first write when that write changes its value",
        found=f"{why}the fills and barrier values before the write let {core} start {may} "
        f"{starts} the slot", related=related,
        fix=f"{back} at the end of the runtime sequence, after an rt.sync() on its last drains "
        "(every invocation then starts as the first does), or have the calls that should see "
        "the new value wait for a value the barrier does not hold when an invocation starts, "
        "set after the rtp_write")
