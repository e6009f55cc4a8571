"""Facts read off a runtime sequence: which transfers each wait retires, and the shim BD each
transfer takes.

A transfer holds its shim BD, and its place in its channel's task queue, until it is done; a
queued task reads its BD only when it starts, so a BD handed on while a task waits for it runs
the new transfer's descriptor on the old one's channel. aiedsl hands a BD on only once the
sequence has shown the transfer done:

* a wait takes the oldest completion token on its fifo's shim channel, and a channel finishes
  its tasks in order, so a wait retires its transfer and every earlier one on that fifo;
* a fill is also done once a consumer has certainly taken the last element it sends: from the
  drains waited for so far, :class:`aiedsl.ir.proven.Proven` bounds what every core has acquired
  (a drain received data a core released after its acquires), and a consumer holding an element
  whole was sent every byte before it. This is what lets a sync after a design's drains retire
  its fills, as mlir-aie's designs assume when they reuse BD ids after a sync (and IRON's task
  groups when they free a group's fills once its drains are awaited); a fill the drains did not
  need (another pipeline's, on the same shim) stays held until it is shown done.

A drain is done only when its own wait (or a later one on its fifo) returns: a core releasing
data does not tell when its channel lands it.

>>> from aiedsl.loader import load_design                          # doctest: +SKIP
>>> shim_bd_ids(load_design("designs/passthrough.py").ir)          # doctest: +SKIP
{0: 0, 1: 1}
"""

from __future__ import annotations

import heapq
from collections import Counter, deque
from typing import Callable

from aiedsl.ir.base import Coord
from aiedsl.ir.design import Design
from aiedsl.ir.reach import Reach
from aiedsl.ir.runtime import Transfer, Wait
from aiedsl.ir.tally import wait_tokens


Retired = dict[int, list[int]]
"""For each wait (by its index in the runtime sequence), the transfers it retires (their
indices, in issue order): :func:`retirements`."""


def retirements(d: Design) -> Retired:
    """For each wait (by its index in ``d.runtime``), the transfers it retires (their indices,
    in issue order): those not retired by an earlier wait."""
    out: Retired = {}
    # Per fifo, its transfers (and its fills) not yet retired, in issue order, with the retired
    # ones left in place until they reach the front: what a wait retires is a prefix of each
    # (its fifo's transfers up to its token; a fifo's fills up to the element its consumers
    # took, their last elements rising in issue order), so each transfer is looked at a few
    # times, not once per wait (a sequence of 16,000 transfers took seconds).
    issued: dict[str, deque[int]] = {}
    fills: dict[str, deque[int]] = {}
    retired: set[int] = set()
    token_of = {i: token for i, _, token in wait_tokens(d)}  # wait -> the transfer it waits for
    reach: Reach | None = None
    filled: Counter[str] = Counter()  # bytes sent into each fifo by the fills issued so far
    last_element: dict[int, int] = {}  # fill -> the elements of its fifo up to its last byte
    for i, op in enumerate(d.runtime):
        if isinstance(op, Transfer):
            issued.setdefault(op.fifo, deque()).append(i)
            if op.op == "fill":
                fills.setdefault(op.fifo, deque()).append(i)
                filled[op.fifo] += _bytes(d, op)
                last_element[i] = -(-filled[op.fifo] // d.fifo(op.fifo).elem.nbytes)
        elif isinstance(op, Wait):
            token = token_of.get(i)
            if token is None:
                out[i] = []
                continue
            gone = _retire(issued.get(op.fifo), retired, lambda t: t <= token)
            first = d.runtime[token]
            assert isinstance(first, Transfer)
            if first.op == "drain":
                reach = reach or Reach(d)
                proven = reach.proven(i + 1)  # the drains waited for up to this wait, and by it
                # fifo by fifo in the order of their oldest fill still held, as a walk of every
                # transfer held would ask them (Proven caches each answer as it first gives it)
                for name in sorted((f for f, q in fills.items() if _front(q, retired) is not None),
                                   key=lambda f: fills[f][0]):
                    took = proven.took(name)
                    gone += _retire(fills[name], retired, lambda t: last_element[t] <= took)
            out[i] = sorted(gone)
    return out


def _front(queue: deque[int], retired: set[int]) -> int | None:
    """The oldest transfer of ``queue`` not yet retired (those before it dropped), or None."""
    while queue and queue[0] in retired:
        queue.popleft()
    return queue[0] if queue else None


def _retire(queue: deque[int] | None, retired: set[int], done: Callable[[int], bool]
            ) -> list[int]:
    """The transfers from the front of ``queue`` that are ``done`` (retired ones skipped),
    taken off it and added to ``retired``."""
    gone: list[int] = []
    while queue:
        t = queue[0]
        if t not in retired:
            if not done(t):
                break
            gone.append(t)
            retired.add(t)
        queue.popleft()
    return gone


def _bytes(d: Design, t: Transfer) -> int:
    return t.pattern.numel * d.tensor(t.tensor).type.dt.itemsize


def _fifo(d: Design, i: int) -> str:
    op = d.runtime[i]
    assert isinstance(op, Transfer)
    return op.fifo


def shim_bd_ids(d: Design, retired: Retired | None = None) -> dict[int, int]:
    """The BD id each transfer takes on its shim tile (by its index in ``d.runtime``): the
    lowest id no unretired transfer of that tile holds. ``retired``: :func:`retirements` of
    ``d`` when it is already known (placement changes nothing it reads)."""
    if retired is None:
        retired = retirements(d)
    free: dict[Coord, list[int]] = {}  # tile -> ids handed back, below its fresh ones (a heap)
    fresh: Counter[Coord] = Counter()  # tile -> the lowest id never taken
    out: dict[int, int] = {}
    for i, op in enumerate(d.runtime):
        if isinstance(op, Transfer):
            tile = d.shim_end(op).tile
            assert tile is not None
            back = free.setdefault(tile, [])
            if back:
                out[i] = heapq.heappop(back)
            else:
                out[i] = fresh[tile]
                fresh[tile] += 1
        elif isinstance(op, Wait):
            for t in retired[i]:
                end = d.shim_end(d.runtime[t])  # type: ignore[arg-type]  # a transfer's index
                assert end.tile is not None
                heapq.heappush(free[end.tile], out[t])
    return out
