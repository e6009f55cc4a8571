"""What value a runtime barrier holds at a point of the runtime sequence, and the waits for a
value it never holds.

A barrier is a core's lock (IRON's ``WorkerRuntimeBarrier``): its initial value, then each
``rt.set_barrier`` replaces it, and a wait for v passes while it holds v. The rtp checks
(:mod:`aiedsl.checks.rtp`) ask what a barrier has held by a write, to offer the next step of a
barrier as a fix; :func:`check_barriers` refuses a wait for a value it never holds.
"""

from __future__ import annotations

from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import BarrierWait
from aiedsl.ir.design import Design
from aiedsl.ir.program import walk
from aiedsl.ir.runtime import SetBarrier


def next_step(d: Design, core: str, point: int, top: int) -> tuple[str, int] | None:
    """A barrier ``core`` waits on, and the least value it has not held by runtime op
    ``point`` (from the load or a set before it): the value a new wait can be held at until
    the runtime sets it; None when the core waits on none or every value was held."""
    waits = {w.barrier for w, _ in walk(next(c for c in d.cores if c.name == core).body)
             if isinstance(w, BarrierWait)}
    for b in d.barriers:
        if b.name not in waits:
            continue
        sets = [op for op in d.runtime[:point]
                if isinstance(op, SetBarrier) and op.barrier == b.name]
        fresh = unheld_value(b.init, sets, top)
        if fresh is not None:
            return b.name, fresh
    return None


def unheld_value(init: int, sets: list[SetBarrier], top: int) -> int | None:
    """The least value from 1 to ``top`` a barrier starting at ``init`` has not held after
    ``sets``; None when it has held them all."""
    held = {init} | {op.value for op in sets}
    return next((v for v in range(1, top + 1) if v not in held), None)


def passed_before_reset(d: Design, core: str, point: int, top: int
                         ) -> tuple[BarrierWait, SetBarrier, SetBarrier, int] | None:
    """When a barrier ``core`` waits on holds, at ``point``, another value than an earlier set
    gave it, and the core waits for that earlier value: the wait, the earlier set, the last
    set before ``point`` (which replaced it) and the least value the barrier has not held.
    A core reaches its next wait as soon as it has released what the drains show, so it may
    pass that wait on the earlier value before the replacing set lands."""
    waits = [w for w, _ in walk(next(c for c in d.cores if c.name == core).body)
             if isinstance(w, BarrierWait)]
    for b in d.barriers:
        if core not in b.cores:
            continue
        sets = [op for op in d.runtime[:point]
                if isinstance(op, SetBarrier) and op.barrier == b.name]
        if len(sets) < 2:
            continue
        reset = sets[-1]
        fresh = unheld_value(b.init, sets, top)
        for w in waits:
            gave = next((op for op in reversed(sets[:-1]) if op.value == w.value), None)
            if (w.barrier == b.name and gave is not None and w.value != reset.value
                    and fresh is not None):
                return w, gave, reset, fresh
    return None


def same_value_again(d: Design, core: str, point: int, top: int
                      ) -> tuple[SetBarrier, int] | None:
    """When the runtime's next set, after ``point``, of a barrier ``core`` waits on gives it a
    value it already held before ``point``: that set, and the least value the barrier has not
    held (a wait for it would hold the core until a set of it); ``top``: the largest value a
    lock holds."""
    for b in d.barriers:
        if core not in b.cores:
            continue
        before = [op for op in d.runtime[:point]
                  if isinstance(op, SetBarrier) and op.barrier == b.name]
        now = before[-1].value if before else b.init  # what the lock holds at the write
        again = next((op for op in d.runtime[point:]
                      if isinstance(op, SetBarrier) and op.barrier == b.name), None)
        fresh = unheld_value(b.init, before, top)
        if again is not None and again.value == now and fresh is not None:
            return again, fresh
    return None


def check_barriers(d: Design) -> None:
    """A static hang: a core that waits for a value its barrier never holds waits forever.

    A wait is ``aie.use_lock(lock, Acquire, v)``: it blocks until the lock holds v and leaves
    it there. Only the initial value and ``rt.set_barrier`` (which replaces the value) give the
    lock a value, so a wait for any other value never passes. Which of the values it holds a
    wait finds depends on timing (a set to 2 before the core reached its wait for 1):
    :func:`aiedsl.checks.barriers.check_barrier_order` refuses a set that may come first.
    """
    sets: dict[str, list[SetBarrier]] = {}
    for op in d.runtime:
        if isinstance(op, SetBarrier):
            sets.setdefault(op.barrier, []).append(op)
    for core in d.cores:
        for step, _ in walk(core.body):
            if not isinstance(step, BarrierWait):
                continue
            b = d.barrier(step.barrier)
            given = sets.get(b.name, [])
            if step.value == b.init or any(s.value == step.value for s in given):
                continue
            first: dict[int, SetBarrier] = {}
            for s in given:
                first.setdefault(s.value, s)
            holds = [f"{b.init} (initial)"] + [
                f"{v} (line {s.loc.line})" for v, s in first.items() if v != b.init]
            other = [str(v) for v in first if v != b.init]
            raise DesignError(
                "hang: barrier", f"{core.name} waits for barrier '{b.name}' to hold "
                f"{step.value}, which it never holds", loc=step.loc,
                limit="a wait passes while the barrier holds its value (aie.use_lock Acquire: "
                "it blocks until the core's lock equals the value, and leaves it); the lock "
                "holds only its initial value and the values rt.set_barrier gives it",
                found="it holds " + ", ".join(holds),
                related=[(f"rt.set_barrier to {s.value}", s.loc) for s in first.values()][:3],
                fix=f"rt.set_barrier('{b.name}', {step.value}) in the runtime sequence where "
                "the core may go on" + (f", or wait for a value the runtime sets ("
                                        f"{', '.join(other)})" if other else ""))
