"""The runtime sequence counted once: which transfer each wait waits for, and running totals of
what the fills and drains move, what the waits retire and what the barrier sets give.

A check asks about the state before many points of the sequence; with the totals kept per fifo
(:class:`Steps`), each question is a bisection, not a scan of the ops before the point.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from aiedsl.ir.design import Design
from aiedsl.ir.runtime import SetBarrier, Transfer, Wait


def wait_tokens(d: Design) -> Iterator[tuple[int, Wait, int]]:
    """Each wait of ``d``'s runtime sequence with a transfer to wait for: its index, the wait,
    and the index of the transfer (a drain, or a fill given ``wait=True``) it waits for.

    A wait takes the oldest completion token of its fifo's shim channel, and a channel finishes
    its tasks in order; a wait with no token left waits for nothing.
    """
    waited: dict[str, deque[int]] = {}  # fifo -> its waited transfers not yet waited for
    for i, op in enumerate(d.runtime):
        if isinstance(op, Transfer):
            if op.wait:
                waited.setdefault(op.fifo, deque()).append(i)
        elif isinstance(op, Wait):
            queue = waited.get(op.fifo)
            if queue:
                yield i, op, queue.popleft()


@dataclass
class Steps:
    """A number that changes at some ops of the runtime sequence: it is ``value[k]`` from just
    after op ``at[k]`` on (``at`` increasing)."""

    at: list[int] = field(default_factory=list)
    """The index of each op that changes it."""
    value: list[int] = field(default_factory=list)
    """What it is after each of those ops."""

    def count(self, point: int) -> int:
        """How many of the changes come before runtime op ``point``."""
        return bisect_left(self.at, point)

    def before(self, point: int) -> int | None:
        """What it is just before runtime op ``point``; None when no change comes before."""
        k = self.count(point)
        return self.value[k - 1] if k else None

    def add(self, at: int, more: int) -> None:
        """Count ``more`` on from the last value (from 0) after op ``at``."""
        self.at.append(at)
        self.value.append((self.value[-1] if self.value else 0) + more)


@dataclass
class Tally:
    """The runtime sequence's fills, drains, waits and barrier sets, tallied in one pass: the
    counts before a point are then a bisection per fifo, not a scan of the ops before it (a
    check asks at every wait, so a scan made it quadratic in the sequence's length)."""

    issued: dict[tuple[str, str], Steps] = field(default_factory=dict)
    """Per ("fill" or "drain", fifo): the elements its transfers move, running total."""
    drained: dict[str, Steps] = field(default_factory=dict)
    """Per fifo: the elements of the drains its waits took, running total (first waited for
    first, in :meth:`aiedsl.ir.reach.Reach.proven`'s order)."""
    sets: dict[str, Steps] = field(default_factory=dict)
    """Per barrier: the values its sets give (``value`` holds each, not a running total)."""


    @staticmethod
    def of(d: Design, elements: Callable[[Transfer], int]) -> Tally:
        """The tally of ``d``'s runtime sequence, counting each transfer's ``elements``."""
        tally = Tally(sets={b.name: Steps() for b in d.barriers})
        for i, op in enumerate(d.runtime):
            if isinstance(op, Transfer):
                tally.issued.setdefault((op.op, op.fifo), Steps()).add(i, elements(op))
            elif isinstance(op, SetBarrier):
                steps = tally.sets[op.barrier]
                steps.at.append(i)
                steps.value.append(op.value)
        for i, wait, token in wait_tokens(d):
            t = d.runtime[token]
            assert isinstance(t, Transfer)
            if t.op == "drain":
                tally.drained.setdefault(wait.fifo, Steps()).add(i, elements(t))
        return tally
