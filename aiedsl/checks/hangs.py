"""Hangs that can be found without running: unbalanced acquire/release in core programs.

A core's program runs again and again (mlir-aie wraps it in an endless loop) and every loop body
runs many times, so what a body acquires it must release: a body that keeps one more element
each iteration soon holds every buffer and stalls its producer; one that releases what it does not
hold corrupts the lock counts. (Fills that do not match consumption, and broadcast consumers that
take different counts, are found by :func:`aiedsl.checks.balance.check_balance`.)

A sliding window acquired inside the loop (acquire 3, release 1, with nothing held before the loop)
is one such body, though an acquire of n while the core holds k takes only n - k new elements: the
count of new elements is what the lowering fixes, and in the mlir-aie aiedsl targets (upstream
1e400306, March 2026, and every later one before PR 3298, August 2026, unless its opt-in dynamic
lowering is chosen) it is fixed at compile time. ``aie-objectFifo-stateful-transform`` unrolls a
loop by the least common multiple of the depths of the fifos it acquires (``unrollForLoops``), then
gives each acquire the count of new elements its program-order predecessor leaves it (``numCreate``,
from ``acquiresPerFifo``): the first copy of the body is counted from what the core held where the
loop is entered (0), so it takes 3 new elements on every pass of the unrolled loop, also when the
core holds 2, and the core runs out of buffers (Xilinx/mlir-aie#2463; the pinned reference lowerings
show this static, unrolled form: constant ``AcquireGreaterEqual`` counts, no ``scf.index_switch``).
PR 3144 (June 2026) peels iteration 0 only on the opt-in dynamic lowering; PR 3308 (July 2026) has
that lowering count at run time (max(n - held, 0), from a per-fifo held counter) and PR 3298 (August
2026) makes it every core's, so newer mlir-aie lowers the loop as written, as aiedsl's simulator
runs it. The check refuses it for the version aiedsl targets and says so; the fix (acquire the
window's first elements before the loop) lowers the same in both. A loop short enough to be unrolled
whole (no more iterations than that least common multiple) would lower correctly even in 1e400306,
but the factor depends on the depths the lowering gives each end, so it is refused too; a loop
of one iteration, which no factor leaves a second pass, is read as straight-line code.
"""

from __future__ import annotations

from aiedsl.ir.program import walk
from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import Acquire, Loop, Op, Release
from aiedsl.ir.cores import Core
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc

Held = dict[tuple[str, str], int]


def check_hangs(d: Design) -> None:
    """Every loop body and every core program leaves what it holds unchanged."""
    for core in d.cores:
        held: Held = {}
        _body(core, core.body, held, None)
        left = {k: v for k, v in held.items() if v}
        if left:
            (fifo, port), n = sorted(left.items())[0]
            # a core that runs once has no next run to hold up
            why = (f"the next run starts without them and the "
                   f"{'producer' if port == 'consume' else 'consumer'} waits forever"
                   if core.forever else
                   "they are never handed on, and their consumer waits for them forever"
                   if port == "produce" else
                   "harmless on the NPU, where the core has stopped, but aiedsl counts what a "
                   "core takes by its releases (the balance of fills and drains)")
            raise DesignError(
                "hang: held at end", f"{core.name} ends its program still holding {n} "
                f"element(s) of '{fifo}' ({port}); {why}",
                loc=_last_acquire(core.body, fifo, port) or core.loc,
                fix=f"release '{fifo}' ({port}) before the program ends")


def _body(core: Core, ops: tuple[Op, ...], held: Held, loop: Loop | None,
          again: dict[tuple[str, str], tuple[Acquire, int]] | None = None) -> None:
    again = {} if again is None else again  # acquires that got no new element, by (fifo, port)
    for op in ops:
        if isinstance(op, Acquire):
            key = (op.fifo, op.port)
            have = held.get(key, 0)
            if op.count <= have:
                again[key] = (op, have)
            else:
                again.pop(key, None)
            held[key] = max(have, op.count)
        elif isinstance(op, Release):
            key = (op.fifo, op.port)
            have = held.get(key, 0)
            if op.count > have:
                message = (f"{core.name} releases {op.count} element(s) of '{op.fifo}' "
                           f"({op.port}) but holds {have} there")
                fix = "release only what was acquired, after acquiring it"
                if key in again:
                    acq, had = again[key]
                    message += (f"; its acquire at line {acq.loc.line} asked for {acq.count} "
                                f"while it held {had}, so it got the held element(s) again")
                    fix = (f"an acquire holds at least n elements, it does not take n more: to "
                           f"hold {had + acq.count}, acquire them at once "
                           f"(.{op.port}({had + acq.count}))")
                raise DesignError("hang: release", message, loc=op.loc,
                                  limit=f"at most the {have} held", found=str(op.count), fix=fix)
            held[key] = have - op.count
        elif isinstance(op, Loop) and op.count == 1:
            # one iteration is straight-line code in every lowering (1e400306's unrollForLoops
            # unrolls a loop of no more iterations than its factor whole): no second iteration
            # starts holding what the first kept, so what it holds after is simply held
            _body(core, op.body, held, loop, again)
        elif isinstance(op, Loop):
            before = dict(held)
            _body(core, op.body, held, op, again)
            for both in sorted(set(before) | set(held)):
                a, b = before.get(both, 0), held.get(both, 0)
                if a != b:
                    fifo, port = both
                    if b < a:
                        raise DesignError(
                            "hang: unbalanced loop", f"each iteration of the loop in "
                            f"{core.name} gives back {a - b} more element(s) of '{fifo}' "
                            f"({port}) than it acquired", loc=op.loc,
                            limit="what a loop body acquires, it releases",
                            found=f"held {a} before an iteration, {b} after",
                            fix=f"acquire '{fifo}' inside the loop, or release it after the loop")
                    most, rel = _per_iteration(op, both)
                    if rel == 0:
                        raise DesignError(
                            "hang: unbalanced loop", f"each iteration of the loop in "
                            f"{core.name} acquires {most} element(s) of '{fifo}' ({port}) but "
                            f"releases {rel}", loc=op.loc,
                            limit="what a loop body acquires, it releases",
                            found=f"held {a} before the first iteration, {b} after it",
                            fix=f"release {b - a} element(s) of '{fifo}' in each iteration: "
                            f"call .release(\"{port}\", {b - a}) on '{fifo}' at the end of the "
                            "loop body")
                    _sliding_window(core, op, both, a, b, most, rel)
            held.update(before)  # the body is balanced: leave it as it was


def _sliding_window(core: Core, loop: Loop, key: tuple[str, str], before: int, after: int,
                    most: int, rel: int) -> None:
    """Refuse ``loop``, whose iterations start holding ``before`` elements of ``key`` and end
    holding ``after``, its largest acquire ``most``, releasing ``rel``: a window that slides
    across iterations, which mlir-aie before August 2026 lowers with the first iteration's
    count of new elements on every pass (the module docstring has the sources)."""
    fifo, port = key
    more = after - before
    inner = next((op for op in loop.body if isinstance(op, Loop) and op.count > 1 and any(
        isinstance(o, Acquire) and (o.fifo, o.port) == key for o, _ in walk(op.body))), None)
    if inner is not None:  # a window swept by a loop inside: the body takes many new elements
        what = (f"it takes {rel + more} new ones (those of the window the loop at line "
                f"{inner.loc.line} sweeps among them) and releases {rel}")
        fix = (f"release the {more} element(s) of '{fifo}' it still holds at the end of each "
               f"iteration, so the window the loop at line {inner.loc.line} sweeps starts "
               "afresh in each")
    else:
        acq = next(op for op, _ in walk(loop.body) if isinstance(op, Acquire)
                   and (op.fifo, op.port) == key and op.count == most)
        what = f"it acquires {most} (line {acq.loc.line}) and releases {rel}"
        if port == "produce":  # a producer slides no window over what it makes
            fix = (f"acquire {rel} at line {acq.loc.line}, as many as the iteration writes and "
                   f"releases (a producer's extra {more} would be released unwritten, or make "
                   f"more elements than the consumers take); if it writes {most}, release "
                   f"{most}, and make its consumers take them all")
        else:
            fix = (f"if the loop slides a window across its iterations, acquire the first "
                   f"{more} element(s) of the window before the loop (and release them after "
                   f"it), so each iteration starts holding {after} and its acquire of {most} "
                   f"takes the {rel} it releases, which every mlir-aie lowers alike; if each "
                   f"iteration should start afresh (a window swept inside it), release the "
                   f"{more} it still holds at its end")
    raise DesignError(
        "hang: unbalanced loop", f"each iteration of the loop in {core.name} ends holding "
        f"{more} more element(s) of '{fifo}' ({port}) than it started with: {what}, and "
        "mlir-aie 1e400306, which aiedsl targets, fixes the number of new elements an acquire "
        f"takes when it compiles the loop, from the {before} held where the loop is entered, "
        + (f"so an iteration that starts holding {after} may take {most - before} new ones, not "
           f"{max(most - after, 0)}, " if inner is None else
           f"so an iteration that starts holding {after} takes new ones as if it held "
           f"{before}, ")
        + "and the core runs out of buffers", loc=loop.loc,
        limit="what a loop body acquires, it releases, so one count of new elements fits every "
        f"iteration (mlir-aie since PR 3298, August 2026, counts them at run time, max({most} "
        "- held, 0), and lowers this loop as written, as aiedsl's simulator runs it)",
        found=f"held {before} before the first iteration, {after} after it", fix=fix)


def _per_iteration(loop: Loop, key: tuple[str, str]) -> tuple[int, int]:
    """Largest acquire and elements released per iteration of ``loop``, on ``key``."""
    acq = rel = 0
    for op, mult in walk(loop.body):
        if isinstance(op, (Acquire, Release)) and (op.fifo, op.port) == key:
            if isinstance(op, Acquire):
                acq = max(acq, op.count)
            else:
                rel += op.count * mult
    return acq, rel


def _last_acquire(ops: tuple[Op, ...], fifo: str, port: str) -> Loc | None:
    found = None
    for op in ops:
        if isinstance(op, Acquire) and (op.fifo, op.port) == (fifo, port):
            found = op.loc
        elif isinstance(op, Loop):
            found = _last_acquire(op.body, fifo, port) or found
    return found
