"""Hangs that can be found without running: unbalanced acquire/release in core programs.

A core's program runs again and again (mlir-aie wraps it in an endless loop) and every loop body
runs many times, so what a body acquires it must release: a body that keeps one more element
each iteration soon holds every buffer and stalls its producer; one that releases what it does not
hold corrupts the lock counts. (Fills that do not match consumption, and broadcast consumers that
take different counts, are found by :func:`aiedsl.checks.structure.check_balance`.)
"""

from __future__ import annotations

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


def _body(core: Core, ops: tuple[Op, ...], held: Held, loop: Loop | None) -> None:
    for op in ops:
        if isinstance(op, Acquire):
            key = (op.fifo, op.port)
            held[key] = max(held.get(key, 0), op.count)
        elif isinstance(op, Release):
            key = (op.fifo, op.port)
            have = held.get(key, 0)
            if op.count > have:
                raise DesignError(
                    "hang: release", f"{core.name} releases {op.count} element(s) of "
                    f"'{op.fifo}' ({op.port}) but holds {have} there", loc=op.loc,
                    limit=f"at most the {have} held", found=str(op.count),
                    fix="release only what was acquired, after acquiring it")
            held[key] = have - op.count
        elif isinstance(op, Loop):
            before = dict(held)
            _body(core, op.body, held, op)
            for key in sorted(set(before) | set(held)):
                a, b = before.get(key, 0), held.get(key, 0)
                if a != b:
                    fifo, port = key
                    grows = b > a
                    raise DesignError(
                        "hang: unbalanced loop", f"each iteration of the loop in {core.name} "
                        f"{'keeps' if grows else 'gives back'} {abs(b - a)} more element(s) of "
                        f"'{fifo}' ({port}) than it {'releases' if grows else 'acquired'}",
                        loc=op.loc,
                        limit="what a loop body acquires, it releases", found=f"held {a} "
                        f"before an iteration, {b} after",
                        fix=(f"release '{fifo}' inside the loop" if grows else
                             f"acquire '{fifo}' inside the loop, or release it after the loop"))
            held.update(before)  # the body is balanced: leave it as it was


def _last_acquire(ops: tuple[Op, ...], fifo: str, port: str) -> Loc | None:
    found = None
    for op in ops:
        if isinstance(op, Acquire) and (op.fifo, op.port) == (fifo, port):
            found = op.loc
        elif isinstance(op, Loop):
            found = _last_acquire(op.body, fifo, port) or found
    return found
