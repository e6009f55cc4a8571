"""Hangs that can be found without running: unbalanced acquire/release in core programs.

A core's program runs again and again (mlir-aie wraps it in an endless loop) and every loop body
runs many times, so what a body acquires it must release: a body that keeps one more element
each iteration soon holds every buffer and stalls its producer; one that releases what it does not
hold corrupts the lock counts. (Fills that do not match consumption, and broadcast consumers that
take different counts, are found by :func:`aiedsl.checks.balance.check_balance`.)
"""

from __future__ import annotations

from aiedsl.ir.program import walk
from aiedsl.errors import DesignError
from aiedsl.ir import Acquire, Core, Design, Loc, Loop, Op, Release

Held = dict[tuple[str, str], int]


def check_hangs(d: Design) -> None:
    """Every loop body and every core program leaves what it holds unchanged."""
    for core in d.cores:
        held: Held = {}
        _body(core, core.body, held, None)
        left = {k: v for k, v in held.items() if v}
        if left:
            (fifo, port), n = sorted(left.items())[0]
            raise DesignError(
                "hang: held at end", f"{core.name} ends its program still holding {n} "
                f"element(s) of '{fifo}' ({port}); the next run starts without them and the "
                f"{'producer' if port == 'consume' else 'consumer'} waits forever",
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
                    raise DesignError(
                        "hang: unbalanced loop", f"each iteration of the loop in {core.name} "
                        f"acquires {most} element(s) of '{fifo}' ({port}) but releases {rel}",
                        loc=op.loc, limit="what a loop body acquires, it releases",
                        found=f"held {a} before the first iteration, {b} after it",
                        fix=(f"release '{fifo}' inside the loop" if rel == 0 else
                             f"if the loop slides a window across its iterations, acquire the "
                             f"first {b - a} element(s) of the window before the loop (and "
                             f"release them after it), so each iteration acquires only the "
                             f"{rel} it releases; if each iteration should start afresh (a "
                             f"window swept inside it), release the {b - a} it still holds at "
                             f"its end"))
            held.update(before)  # the body is balanced: leave it as it was


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
