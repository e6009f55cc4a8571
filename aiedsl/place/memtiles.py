"""Which memtile each memtile link goes to, so that no memtile runs out of DMA channels, data
memory or buffer descriptors.

A link keeps all its channels on its memtile: one S2MM per input fifo, one MM2S per output
fifo (mlir-aie's objectfifo lowering puts a link's ends on its shared tile, and its
``DMAChannelAnalysis`` hands out a tile's channels one by one until none is left: "number of
input/output DMA channel exceeded!"). Its buffers are there too, and the BDs its channels chain.
What a link takes is the same on every memtile (:class:`Demand`, read off the objectfifo
lowering's plan the resource check counts), except which channel numbers its ends get: the
lowest free, fifo by fifo, so that whether a memtile's BDs fit its even and odd channels (24
each on AIE2) depends on every link there. Placing links is then packing them into the device's
memtiles by several sizes at once. :func:`fit` searches for a packing, trying the columns in the
order the caller prefers, so the first packing it finds is the caller's greedy choice whenever
that choice fits; :mod:`aiedsl.checks.memtiles` asks it whether any packing exists.
"""

from __future__ import annotations

import operator
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from aiedsl.ir.base import Coord
from aiedsl.ir.design import Design
from aiedsl.ir.fifos import Link
from aiedsl.place.objectfifo import Lowering, spill
from aiedsl.targets import TargetModel

Need = tuple[int, ...]
"""What a link takes of its memtile, each size against the memtile's own: its channels
(S2MM, MM2S), and for a :class:`Demand` also its bytes of data memory and its BDs."""

BUDGET = 200_000
"""Search steps before :func:`fit` gives up (a packing of a few dozen links into at most eight
memtiles takes a few hundred; an impossible one is usually settled by the memo long before,
except when only BDs per channel parity rule the packings out: those are not remembered, and
a dozen such links run to the budget, a few seconds, before check says which memtile is over)."""


def channels(link: Link) -> tuple[int, int]:
    """The DMA channels memtile link ``link`` takes on its memtile: (S2MM, MM2S)."""
    return len(link.srcs), len(link.dsts)


@dataclass(frozen=True)
class Demand:
    """What one memtile link takes of whichever memtile it goes to."""

    channels: tuple[int, int]
    """DMA channels: (S2MM, MM2S)."""
    memory: int
    """Bytes of the buffers it creates there (those of the end that owns them)."""
    bds: tuple[tuple[int, int, int], ...]
    """Per DMA channel of its ends: (place in the lowering's channel order, 0 for S2MM or 1 for
    MM2S, BDs it chains): which channel number it gets depends on the memtile's other links."""
    store: tuple[int, int, int] = (0, 0, 0)
    """Its buffers: (place in the lowering's creation order, how many, bytes of one), for
    :func:`aiedsl.place.objectfifo.spill`."""

    @property
    def need(self) -> Need:
        """Its sizes for :func:`fit`: (S2MM, MM2S, bytes, BDs)."""
        return (*self.channels, self.memory, sum(n for _, _, n in self.bds))


def demands(d: Design, low: Lowering) -> list[Demand]:
    """What each memtile link of placed design ``d`` takes (core-tile forwards left out), in
    ``d.links`` order, from ``low``, its lowering's plan: the buffers and BD chains the resource
    check counts (:func:`aiedsl.checks.tile_usage.usage`), which do not depend on the memtile."""
    order = {id(ch): i for i, ch in enumerate(low.channels)}
    out = []
    for link in d.links:
        if link.via == "core":
            continue
        # (found by identity: comparing stores field by field to find its place cost more)
        at, store = next((i, s) for i, s in enumerate(low.stores) if s.link is link)
        bds = tuple((order[id(ch)], 0 if ch.direction == "S2MM" else 1, len(ch.chain))
                    for ch in low.channels if ch.end.link is link)
        out.append(Demand(channels(link), store.footprint, bds,
                          (at, len(store.buffers), store.nbytes)))
    return out


def capacity(target: TargetModel, spilling: bool = False) -> Need:
    """A memtile of ``target`` in :attr:`Demand.need`'s terms; with ``spilling``, its memory
    as what it and its neighbours hold, since a buffer that does not fit spills to one
    (:func:`over` then counts exactly)."""
    m = target.memtile
    reach = 1 + max(len(target.memtile_neighbours(c)) for c in range(target.cols))
    return m.dma_in, m.dma_out, m.memory * (reach if spilling else 1), m.bds


def spills(columns: Sequence[int], links: Sequence[Demand], target: TargetModel
           ) -> list[tuple[Coord, ...]]:
    """Where mlir-aie puts each buffer of each link when link ``i`` goes to column
    ``columns[i]``: :func:`aiedsl.place.objectfifo.spill` of the links' stores in creation
    order, given back per link."""
    order = sorted(range(len(links)), key=lambda i: links[i].store[0])
    row = target.memtile_rows[0]
    homes: list[tuple[Coord, ...]] = [()] * len(links)
    for i, tiles in zip(order, spill([((columns[i], row), links[i].store[1],
                                       links[i].store[2]) for i in order], target)):
        homes[i] = tiles
    return homes


def parity_shares(columns: Sequence[int], links: Sequence[Demand], target: TargetModel,
                  homes: Sequence[tuple[Coord, ...]] | None = None) -> list[tuple[int, int]]:
    """The BDs each link takes on its memtile's even and odd channels when link ``i`` goes to
    column ``columns[i]``: an end's channel number counts the ends of its direction on its
    memtile that the lowering numbers before it (:func:`aiedsl.place.objectfifo.lower`, step
    4): those of links with a buffer spilled to a neighbour first, then the others, each in the
    lowering's order. ``homes``: :func:`spills` of the same placement, when known."""
    if homes is None:
        homes = spills(columns, links, target)
    row = target.memtile_rows[0]
    ends: dict[tuple[int, int], list[tuple[bool, int, int, int]]] = defaultdict(list)
    for i, (col, link) in enumerate(zip(columns, links)):
        later = all(t == (col, row) for t in homes[i])  # no buffer spilled: numbered after
        for order, side, n in link.bds:
            ends[(col, side)].append((later, order, i, n))
    out = [[0, 0] for _ in links]
    for got in ends.values():
        for number, (_, _, i, n) in enumerate(sorted(got)):
            out[i][number % 2] += n
    return [(even, odd) for even, odd in out]


def over(columns: Sequence[int], links: Sequence[Demand], target: TargetModel,
         spilling: bool = False) -> tuple[int, str] | None:
    """The first memtile that links placed in ``columns`` overfill and what it runs out of
    (``"memory"``, ``"even"`` or ``"odd"`` channels' BDs, or ``"bds"`` on a target without
    that split), or None when each has room.
    Channels are left to :func:`fit`'s callers, which refuse those first. Memory is counted
    where mlir-aie puts each buffer (:func:`aiedsl.place.objectfifo.spill`), or without
    ``spilling`` all on the link's own memtile."""
    homes = spills(columns, links, target)
    parity = [[0, 0] for _ in range(target.cols)]
    for col, (even, odd) in zip(columns, parity_shares(columns, links, target, homes)):
        parity[col][0] += even
        parity[col][1] += odd
    per = target.memtile.bds_per_channel_parity
    used = [0] * target.cols
    for i, tiles in enumerate(homes):
        for col, _ in tiles:
            used[col if spilling else columns[i]] += links[i].store[2]
    for col in range(target.cols):
        here = [link for c, link in zip(columns, links) if c == col]
        if used[col] > target.memtile.memory:
            return col, "memory"
        if per is None and sum(link.need[3] for link in here) > target.memtile.bds:
            return col, "bds"
        for k, name in enumerate(("even", "odd")):
            if per is not None and parity[col][k] > per:
                return col, name
    return None


def fit_demands(links: Sequence[Demand], pins: Sequence[int | None], target: TargetModel,
                prefer: Callable[[int, list[tuple[int, int]]], list[int]] | None = None) -> Fit:
    """:func:`fit` for links taking ``links`` of their memtiles: channels, memory, BDs in all
    and, of each complete packing, BDs per channel parity. A packing where every link's buffers
    fit its own memtile is preferred (no DMA then reaches a neighbour's memory, so none is held
    to the low channels); failing that, one where mlir-aie spills some to a neighbour."""
    needs = [link.need for link in links]
    found = fit(needs, pins, target.cols, capacity(target), prefer,
                exact=lambda columns: over(columns, links, target) is None)
    if found.columns is not None or target.cols == 1:
        return found
    return fit(needs, pins, target.cols, capacity(target, spilling=True), prefer,
               exact=lambda columns: over(columns, links, target, spilling=True) is None)


@dataclass(frozen=True)
class Fit:
    """What :func:`fit` found: ``columns`` (one per link) when a packing exists, ``None``
    when none does; ``settled`` is False when it gave up before knowing."""

    columns: list[int] | None
    settled: bool = True


def fit(needs: Sequence[Need], pins: Sequence[int | None], cols: int, cap: Need,
        prefer: Callable[[int, list[tuple[int, int]]], list[int]] | None = None,
        budget: int = BUDGET, exact: Callable[[list[int]], bool] | None = None) -> Fit:
    """Columns for links needing ``needs`` of a memtile, in order, within ``cap`` per memtile.

    ``pins[i]`` fixes link ``i``'s column. ``prefer(i, loads)`` orders the columns to try for
    an unpinned link ``i`` given the channels (the first two sizes) the links before it in
    declaration order take of each column (pinned ones included as they come); the search tries
    only columns with room for the link beside every pinned link. Without ``prefer``, columns
    are tried left to right. ``exact(columns)``, when given, must also accept a complete
    packing (what sums cannot say: BDs per channel parity).
    """
    zero = (0,) * len(cap)
    base = [zero] * cols
    for n, p in zip(needs, pins):
        if p is not None:
            base[p] = _plus(base[p], n)
    if any(_full(load, cap) for load in base):
        return Fit(None)
    free = [i for i, p in enumerate(pins) if p is None]
    failed: set[tuple[int, tuple[Need, ...]]] = set()
    steps = 0
    refused = 0  # complete packings ``exact`` refused: a failure they caused is not the loads'
    out: list[int] = [p if p is not None else -1 for p in pins]

    def loads_before(i: int) -> list[tuple[int, int]]:
        """The channels the caller's greedy order sees at link ``i``: every link before it."""
        got = [[0, 0] for _ in range(cols)]
        for j in range(i):
            got[out[j]][0] += needs[j][0]
            got[out[j]][1] += needs[j][1]
        return [(a, b) for a, b in got]

    def search(k: int, strict: list[Need]) -> bool:
        nonlocal steps, refused
        if k == len(free):
            if exact is None or exact(out):
                return True
            refused += 1
            return False
        key = (k, tuple(sorted(strict)))
        if key in failed:
            return False
        steps += 1
        if steps > budget:
            raise _GaveUp
        before = refused
        i = free[k]
        order = prefer(i, loads_before(i)) if prefer else []
        order += [c for c in range(cols) if c not in order]  # every column, to be complete
        for c in order:
            was = strict[c]
            strict[c] = _plus(was, needs[i])
            if not _full(strict[c], cap):
                out[i] = c
                if search(k + 1, strict):
                    return True
            strict[c] = was
        out[i] = -1
        if refused == before:  # the loads alone settle it: memtiles are alike, so remember
            failed.add(key)
        return False

    try:
        found = search(0, base)
    except _GaveUp:
        return Fit(None, settled=False)
    return Fit(out if found else None)


def _plus(load: Need, need: Need) -> Need:
    return tuple(map(operator.add, load, need))


def _full(load: Need, cap: Need) -> bool:
    """Whether ``load`` exceeds ``cap`` in any size."""
    return any(map(operator.gt, load, cap))


class _GaveUp(Exception):
    """The search ran past its budget."""
