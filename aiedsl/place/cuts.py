"""Cuts: rectangles of tiles that more streams must enter (or leave) than wires lead in (out).

A circuit-switched stream holds each wire it uses alone, and a stream whose sender is outside a
rectangle of tiles and a receiver inside it must cross into it on at least one wire (a
broadcast tree too: once at least). So when the streams that must enter a rectangle outnumber
the wires into it, no legal routing exists; the same holds for leaving. aiedsl's packet-switched
streams count the same: mlir-aie's router lets packet flows share wires only within a packet
group, flows with a common source or destination port, and no two of aiedsl's fifos share a
DMA port, so each is a group alone (:func:`aiedsl.place.pathfinder._groups`; mlir-aie's
``Pathfinder::findPaths``); its router then fails where a rectangle has too few wires. The
wires between two tiles are :meth:`~aiedsl.targets.TargetModel.link_capacity`.

The test is cheap (every rectangle of the device, vectorised), so the placer judges its memtile
choices with it before anything is routed, and the routing check states the cut it finds as
the proof that no routing exists. Passing it proves nothing: a design may still not route.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from aiedsl.targets import TargetModel
from aiedsl.targets.model import direction_of

Coord = tuple[int, int]
Ends = tuple[Coord, tuple[Coord, ...]]
"""One stream as the test sees it: sender tile, receiver tiles."""


@dataclass(frozen=True)
class Cut:
    """A rectangle that too many streams must cross one way."""

    cols: tuple[int, int]
    """First and last column, inclusive."""
    rows: tuple[int, int]
    """First and last row, inclusive."""
    entering: bool
    """True when the streams must enter the rectangle, False when they must leave it."""
    wires: int
    """Wires leading in (``entering``) or out."""
    need: int
    """Wires the crossing streams need at least: one each."""
    streams: tuple[int, ...]
    """Indices (in the list given) of the streams that must cross."""

    @property
    def excess(self) -> int:
        """How many more wires the crossing streams need than there are."""
        return self.need - self.wires


@dataclass(frozen=True)
class _Rects:
    c0: npt.NDArray[np.int64]
    c1: npt.NDArray[np.int64]
    r0: npt.NDArray[np.int64]
    r1: npt.NDArray[np.int64]
    into: npt.NDArray[np.int64]
    out: npt.NDArray[np.int64]


_CACHE: dict[str, tuple[TargetModel, _Rects]] = {}


def _rects(target: TargetModel) -> _Rects:
    """Every rectangle of ``target`` short of the whole device, with its wires in and out
    (kept per device: a target model is not hashable)."""
    kept = _CACHE.get(target.name)
    if kept is not None and kept[0] == target:
        return kept[1]
    tiles = target.tiles()
    cols = sorted({c for c, _ in tiles})
    rows = sorted({r for _, r in tiles})
    links = [(a, b, target.link_capacity(a, direction_of(a, b))) for a in tiles
             for b in ((a[0] + 1, a[1]), (a[0] - 1, a[1]), (a[0], a[1] + 1), (a[0], a[1] - 1))
             if target.kind_of(b) is not None]
    spans = np.array([(c0, c1, r0, r1) for c0 in cols for c1 in cols if c1 >= c0
                      for r0 in rows for r1 in rows if r1 >= r0
                      if (c0, c1, r0, r1) != (cols[0], cols[-1], rows[0], rows[-1])],
                     dtype=np.int64).reshape(-1, 4)
    # per wire bundle (row) and rectangle (column): does the rectangle hold its start, its end
    ends = np.array([(*a, *b) for a, b, _ in links], dtype=np.int64).reshape(-1, 4)
    wires = np.array([n for _, _, n in links], dtype=np.int64)

    def inside(col: npt.NDArray[np.int64], row: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        c, r = col[:, None], row[:, None]
        return (spans[:, 0] <= c) & (c <= spans[:, 1]) & (spans[:, 2] <= r) & (r <= spans[:, 3])
    start, end = inside(ends[:, 0], ends[:, 1]), inside(ends[:, 2], ends[:, 3])
    into = wires @ (end & ~start)
    out = wires @ (start & ~end)
    a = np.column_stack([spans, into, out]).astype(np.int64)
    rects = _Rects(*(a[:, k] for k in range(6)))
    _CACHE[target.name] = (target, rects)
    return rects


def worst(streams: list[Ends], target: TargetModel) -> Cut | None:
    """The cut most over its wires (ties: the smallest rectangle, then the first found,
    entering before leaving), or None when every rectangle has wires enough."""
    r = _rects(target)
    n = len(r.c0)
    enter = np.zeros((len(streams), n), dtype=bool)
    leave = np.zeros((len(streams), n), dtype=bool)
    # every stream with a receiver at once: which rectangles hold its sender, and which hold
    # any (all) of its receivers, its receivers' rows of ``inside`` reduced together
    sent = [k for k, (_, dsts) in enumerate(streams) if dsts]
    if sent:
        src = _inside_all(r, [streams[k][0] for k in sent])
        dsts = _inside_all(r, [d for k in sent for d in streams[k][1]])
        first = np.cumsum([0] + [len(streams[k][1]) for k in sent[:-1]])
        enter[sent] = ~src & np.logical_or.reduceat(dsts, first)
        leave[sent] = src & ~np.logical_and.reduceat(dsts, first)
    best: tuple[int, int, int, int] | None = None  # (-excess, area, side, index)
    area = (r.c1 - r.c0 + 1) * (r.r1 - r.r0 + 1)
    for side, (crossing, lead) in enumerate(((enter, r.into), (leave, r.out))):
        need = crossing.sum(axis=0)
        excess = need - lead
        for j in np.flatnonzero(excess > 0):
            key = (-int(excess[j]), int(area[j]), side, int(j))
            if best is None or key < best:
                best = key
    if best is None:
        return None
    _, _, side, i = best
    cross = enter if side == 0 else leave
    wires = int((r.into if side == 0 else r.out)[i])
    return Cut(cols=(int(r.c0[i]), int(r.c1[i])), rows=(int(r.r0[i]), int(r.r1[i])),
               entering=side == 0, wires=wires, need=wires - best[0],
               streams=tuple(int(k) for k in np.flatnonzero(cross[:, i])))


def _inside_all(r: _Rects, tiles: list[Coord]) -> npt.NDArray[np.bool_]:
    """Which of the rectangles ``r`` hold each of ``tiles`` (a row per tile)."""
    at = np.array(tiles, dtype=np.int64).reshape(-1, 2)
    col, row = at[:, :1], at[:, 1:]
    return (r.c0 <= col) & (col <= r.c1) & (r.r0 <= row) & (row <= r.r1)


def wires_by_side(cut: Cut, target: TargetModel) -> list[tuple[str, int]]:
    """The wires of ``cut`` by the side of the rectangle they cross, for a message:
    ``[("from row 2 above", 16), ("from column 4 to the east", 4)]``, sides with none left
    out."""
    (c0, c1), (r0, r1) = cut.cols, cut.rows

    def count(pairs: list[tuple[Coord, Coord]]) -> int:
        """Wires from the outer tile to the inner one of each pair (or back, leaving)."""
        total = 0
        for outer, inner in pairs:
            if target.kind_of(outer) is None or target.kind_of(inner) is None:
                continue
            a, b = (outer, inner) if cut.entering else (inner, outer)
            total += target.link_capacity(a, direction_of(a, b))
        return total

    cols = range(c0, c1 + 1)
    rows = range(r0, r1 + 1)
    word = "from" if cut.entering else "to"
    sides = [(f"{word} row {r1 + 1} above", count([((c, r1 + 1), (c, r1)) for c in cols])),
             (f"{word} row {r0 - 1} below", count([((c, r0 - 1), (c, r0)) for c in cols])),
             (f"{word} column {c1 + 1} to the east",
              count([((c1 + 1, r), (c1, r)) for r in rows])),
             (f"{word} column {c0 - 1} to the west",
              count([((c0 - 1, r), (c0, r)) for r in rows]))]
    return [(s, n) for s, n in sides if n]
