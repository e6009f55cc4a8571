"""What a runtime barrier holds over the runtime sequence, for :mod:`aiedsl.checks.barriers`
and the refusals and fixes it words (:mod:`aiedsl.checks.barrier_messages`): the values its
locks hold in turn (:func:`_histories`), those before a point, the set that replaced a value, and
the waits a core passes between two points of its progress.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import NamedTuple

from aiedsl.checks.carried import Left
from aiedsl.ir.core_ops import BarrierWait
from aiedsl.ir.design import Design
from aiedsl.ir.progress import Progress
from aiedsl.ir.runtime import SetBarrier


class _Held(NamedTuple):
    """One value a barrier's locks hold in turn."""

    value: int
    set: SetBarrier | None
    """The set that gave it; for the value the sequence starts with (point -1), None when that
    is the initial value, the last set of the sequence when an invocation left it."""
    point: int
    """The index of that set in the runtime sequence (-1 for the value it starts with)."""


def _histories(d: Design, left: dict[str, Left] | None = None) -> dict[str, list[_Held]]:
    """Per barrier, the values its locks hold in turn over the whole runtime sequence (starting
    with what ``left`` says the invocation before left, when given)."""
    out: dict[str, list[_Held]] = {}
    for b in d.barriers:  # the first of a name, as Design.barrier finds it
        gave = left[b.name].set if left and b.name in left else None
        out.setdefault(b.name, [_Held(b.init, gave, -1)])
    for i, op in enumerate(d.runtime):
        if isinstance(op, SetBarrier) and op.barrier in out:
            out[op.barrier].append(_Held(op.value, op, i))
    return out


def _before(held: list[_Held], point: int) -> list[_Held]:
    """The first of ``held`` (a barrier's :func:`_histories`): those held before runtime op
    ``point``."""
    return held[:bisect_left(held, point, key=lambda h: h.point)]


def _history(d: Design, barrier: str, point: int,
             left: dict[str, Left] | None = None) -> list[_Held]:
    """The values barrier ``barrier``'s locks hold in turn before runtime op ``point``."""
    return _before(_histories(d, left)[barrier], point)


def _crossed(before: Progress, after: Progress) -> list[BarrierWait]:
    """The waits a core passes going from ``before`` to ``after``."""
    return [w for w, n in after.passed.items() if n > before.passed[w]]


def _replaced(held: list[_Held], value: int) -> _Held | None:
    """The last of ``held`` that replaced ``value`` (the value before it), if any."""
    gone = [h for before, h in zip(held, held[1:]) if before.value == value != h.value]
    return gone[-1] if gone else None
