"""What one invocation of a loaded design leaves the next: the barriers' locks at the value the
runtime sequence set last (a lock's initial value is written only at load), and the cores
already in their next pass. The barrier and rtp checks of every invocation after the first
(:mod:`aiedsl.checks.reruns`) start from here.

A core's program is the body of a loop that never ends (aiedsl's ``aie.mlir.j2`` wraps it in an
``scf.for`` to ``c_forever``, as IRON does: mlir-aie's ``python/iron/worker.py``,
``Worker.resolve``): it starts again as soon as it ends, which may be well before the runtime's
last instructions (a drain completes after the core's release, and the sequence's waits only
watch shim channels: ``AIEDmaToNpu.cpp``, ``DmaWaitToSyncPattern``). Its next pass runs, with no
new data, as far as the barrier values held from then on let it: a wait it passes on a value
set before the sequence's last set is passed for the next invocation, whatever that set does
later. :func:`left_over` takes that value as where the barrier starts the next invocation."""

from __future__ import annotations

from typing import NamedTuple

from aiedsl.ir.core_ops import BarrierWait
from aiedsl.ir.cores import Barrier
from aiedsl.ir.design import Design
from aiedsl.ir.progress import Held, Progress, until_blocked
from aiedsl.ir.reach import Reach
from aiedsl.ir.runtime import RuntimeOp, SetBarrier


CARRIED = ("a lock takes its initial value only when the design is loaded (mlir-aie's "
            "AIERTControl::addInitConfig writes aie.lock's init into the array's configuration), "
            "while each invocation runs the runtime sequence, whose aiex.set_lock replaces the "
            "value: every invocation after the first starts with the value the sequence set last")
"""Why a barrier starts the second invocation elsewhere than the first."""

RESTARTS = ("and a core's program starts again as soon as it ends (it is the body of a loop "
            "that never ends), whatever the runtime sequence is still to do: nothing in it "
            "waits for a core, only for shim transfers")
"""Why a core's next pass may see a value the sequence replaces before its end."""


def carried_limit(left: dict[str, Left]) -> str:
    """:data:`CARRIED`, and :data:`RESTARTS` when a core's next pass passes a wait early."""
    return CARRIED + (f", {RESTARTS}" if any(end.core for end in left.values()) else "")


def back_fix(left: dict[str, Left]) -> str:
    """How to have every invocation start as the first: each barrier of ``left`` given its
    initial value back where that holds the cores' next passes."""
    parts = []
    for name, end in left.items():
        if end.core and end.wait is not None and end.ends is end.set:
            # the set that lets the core past its last wait also lets it end: no sync can
            # come between, so the value itself must not be what the first wait takes
            parts.append(
                f"have {end.core}'s last wait be for a value its first wait (line "
                f"{end.wait.loc.line}) does not take, set where that pass should go on (the "
                f"barrier then holds that value when {end.core} starts its program again, and "
                f"its first wait holds it until the next invocation sets {end.value})")
        elif end.core and end.ends is not None:
            parts.append(
                f"rt.set_barrier('{name}', {end.initial}) before line {end.ends.loc.line}, after "
                f"an rt.sync() that shows {end.core} past its last wait for {end.value}: from "
                f"that line {end.core} may end its program and start it again, and a set after "
                "it (at the end of the sequence) may come too late to hold its next pass")
        else:
            parts.append(f"rt.set_barrier('{name}', {end.initial}) at the end of the runtime "
                         "sequence, after an rt.sync() on its last drains")
    return " and ".join(parts)


class Left(NamedTuple):
    """What an invocation leaves in a barrier's locks for the next one."""

    value: int
    """The value the sequence's last set gives the locks."""
    set: SetBarrier
    """That set."""
    initial: int
    """The barrier's initial value, which only the load gives."""
    core: str = ""
    """A core that passes a wait on ``value`` in its next pass before the sequence's last set
    ("" when the value is that set's)."""
    ends: RuntimeOp | None = None
    """For ``core``: the runtime op from which it may have ended its program (and started it
    again)."""
    wait: BarrierWait | None = None
    """For ``core``: the wait its next pass gets past on ``value``."""
    timing: bool = False
    """A core's next pass may get past a wait on the initial value before the sequence's last
    set replaces it: whether the next invocation finds it past that wait depends on timing."""


def left_over(d: Design) -> dict[str, Left]:
    """Per barrier that may start an invocation after the first at another value than its
    initial one: that value, and the set that gives it. That is the value the sequence's last
    set leaves, unless a core may end its program while the barrier holds a value set before
    and pass a wait on it in its next pass (the module docstring): then that value."""
    found, on_initial = _early(d)
    out: dict[str, Left] = {b.name: early for b, early in found.items()}
    for b in d.barriers:
        last = next((op for op in reversed(d.runtime)
                     if isinstance(op, SetBarrier) and op.barrier == b.name), None)
        if last is not None and last.value != b.init and b.name not in out:
            out[b.name] = Left(last.value, last, b.init, timing=b.name in on_initial)
    return out


def _early(d: Design) -> tuple[dict[Barrier, Left], set[str]]:
    """The barriers a core's next pass gets past a wait of on a value set before the
    sequence's last set, each with the first such (core, value); and the names of those it
    gets past on their initial value."""
    sets = [(i, op) for i, op in enumerate(d.runtime) if isinstance(op, SetBarrier)]
    if not sets or not d.barriers:
        return {}, set()
    reach = Reach(d)
    out: dict[Barrier, Left] = {}
    on_initial: set[str] = set()
    for core in d.cores:
        # the first point from which the core may have run its whole program
        end = next((point for point in range(len(d.runtime) + 1)
                    if reach.could_run(core.name, point).blocked is None), None)
        if end is None:
            continue
        held: Held = {}
        for b in d.barriers:
            before = [op for i, op in sets if op.barrier == b.name and i < end]
            after = [op for i, op in sets if op.barrier == b.name and i >= end]
            held[b.name] = (before[-1].value if before else b.init, *(op.value for op in after))
        p = Progress()
        until_blocked(core.body, {f: 0 for f in reach.consumed[core.name]}, held, p, reach.memo)
        for wait, n in p.passed.items():
            b = d.barrier(wait.barrier)
            at = held[b.name][p.gate[b.name]] if n else None
            if at is not None and at == b.init:
                on_initial.add(b.name)
            if at is None or at == b.init or b in out:
                continue
            # the set that gives it, at or before the window's start (its first in the window
            # when the window's later sets give it)
            before = [op for i, op in sets if op.barrier == b.name and i < end]
            giver = next((op for op in reversed(before) if op.value == at), None) or next(
                op for i, op in sets if op.barrier == b.name and i >= end and op.value == at)
            out[b] = Left(at, giver, b.init, core.name,
                          d.runtime[end - 1] if end else None, wait)
    return out, on_initial


def next_invocation(d: Design, left: dict[str, Left]) -> Design:
    """``d`` as every invocation after the first finds it: each barrier of ``left`` starting at
    what the sequence leaves (the cores at the start of their programs and the fifos' locks
    where the load put them, as in the first)."""
    return d.model_copy(update={"barriers": tuple(
        b.model_copy(update={"init": left[b.name].value}) if b.name in left else b
        for b in d.barriers)})


def where_it_starts(name: str, end: Left) -> str:
    """Where barrier ``name`` starts every invocation after the first, said for a refusal."""
    if end.core:
        assert end.wait is not None
        lets = f" from line {end.ends.loc.line}" if end.ends is not None else ""
        return (f"{end.core} may end its program{lets} and start it again at once (a core's "
                f"program loops forever) while barrier '{name}' holds {end.value} (set at line "
                f"{end.set.loc.line}), so it passes its wait for {end.value} (line "
                f"{end.wait.loc.line}) before the sequence's later sets: every invocation after "
                f"the first finds it past that wait, as if the barrier started at {end.value}, "
                f"not at its initial {end.initial}")
    unless = (f" (unless a core's next pass gets past its wait for {end.initial} first: it "
              "starts its program again as soon as it ends, and whether that comes before the "
              "last set depends on timing)" if end.timing else "")
    return (f"barrier '{name}' starts each invocation after the first at {end.value}, where "
            f"the sequence's last set (line {end.set.loc.line}) leaves it, not at its initial "
            f"{end.initial}{unless}")
