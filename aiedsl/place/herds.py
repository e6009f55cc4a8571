"""Where unanchored herds go: each the first free rectangle of core tiles (columns left to
right, rows bottom up), in declaration order; when that leaves one no room though the herds could
share the array, a bounded search places them largest first (:func:`place_herds`). A refusal
says which case holds: a herd larger than the device, more tiles than it has, herds that do not
pack, or anchors in the way (naming anchors that work)."""

from __future__ import annotations

from aiedsl.errors import DesignError, counted
from aiedsl.ir.cores import Herd
from aiedsl.targets import DEVICES, TargetModel

Coord = tuple[int, int]


def place_herds(herds: tuple[Herd, ...], target: TargetModel) -> list[Herd]:
    """Every herd's anchor: its own, else a free rectangle.

    The unanchored herds first take the first free rectangle each, in declaration order
    (:func:`_anchors`' order); when one finds none though the herds could share the array, a
    search places them largest first, trying every anchor in that order and backing off when a
    later herd finds no room (within :data:`HERD_BUDGET` steps). So a design that first-fit
    places keeps its placement, and one it would refuse is placed when any placement exists.
    """
    used: dict[Coord, Herd] = {}
    for h in herds:  # pinned herds claim tiles first
        if h.anchor is None:
            continue
        cells = _cells(h.anchor, h)
        bad = [c for c in cells if target.kind_of(c) != "core"]
        if bad:
            raise DesignError(
                "herd placement", f"herd '{h.name}' ({h.cols}x{h.rows}) anchored at "
                f"{h.anchor} leaves the compute tiles of {target.name}", loc=h.loc,
                limit=f"columns 0..{target.cols - 1}, rows {target.core_rows[0]}.."
                f"{target.core_rows[-1]}", found=f"tile {bad[0]}",
                fix="move the anchor or shrink the herd")
        overlap = sorted(set(used).intersection(cells))
        if overlap:
            other = used[overlap[0]]
            raise DesignError("herd placement", f"herd '{h.name}' ({h.cols}x{h.rows} at "
                              f"{h.anchor}) overlaps herd '{other.name}' ({other.cols}x"
                              f"{other.rows} at {other.anchor}) at tile {overlap[0]}",
                              loc=h.loc, related=[(f"herd '{other.name}'", other.loc)],
                              fix="anchor the herds on disjoint tiles")
        used.update(dict.fromkeys(cells, h))
    free = [h for h in herds if h.anchor is None]
    anchors, stuck = _first_fit(free, set(used), target)
    if stuck is not None:
        found = _search(sorted(free, key=lambda h: -h.cols * h.rows), set(used), {}, target)
        if found is None or found is _GAVE_UP:
            _no_room(herds, stuck, found is _GAVE_UP, target)
        assert isinstance(found, dict)
        anchors = found
    return [h if h.anchor is not None else h.model_copy(update={"anchor": anchors[h.name]})
            for h in herds]


HERD_BUDGET = 20_000
"""Anchors the herd search tries before giving up (a handful of herds on at most 8x4 core tiles
settles in a few hundred)."""

_GAVE_UP: dict[str, Coord] = {}
"""What :func:`_search` returns when it ran past :data:`HERD_BUDGET`."""


def _fits(h: Herd, anchor: Coord, taken: set[Coord], target: TargetModel) -> bool:
    return all(target.kind_of(c) == "core" and c not in taken for c in _cells(anchor, h))


def _first_fit(free: list[Herd], taken: set[Coord], target: TargetModel
               ) -> tuple[dict[str, Coord], Herd | None]:
    """Each herd in turn on the first free rectangle: the anchors, and the first herd that
    found none (None when all fit)."""
    taken = set(taken)
    out: dict[str, Coord] = {}
    for h in free:
        anchor = next((a for a in _anchors(target) if _fits(h, a, taken, target)), None)
        if anchor is None:
            return out, h
        out[h.name] = anchor
        taken.update(_cells(anchor, h))
    return out, None


def _search(order: list[Herd], taken: set[Coord], first: dict[str, Coord],
            target: TargetModel) -> dict[str, Coord] | None:
    """Anchors for the herds of ``order`` on disjoint free core tiles, herd by herd in that
    order, each trying ``first[name]`` (when given) and then :func:`_anchors`' order; None when
    no placement exists, :data:`_GAVE_UP` past :data:`HERD_BUDGET` steps."""
    steps = 0
    out: dict[str, Coord] = {}
    room = sum(1 for t in target.tiles() if target.kind_of(t) == "core") - len(taken)

    def go(k: int, room: int) -> bool:
        nonlocal steps
        if k == len(order):
            return True
        h = order[k]
        if sum(g.cols * g.rows for g in order[k:]) > room:
            return False
        tries = ([first[h.name]] if h.name in first else []) + _anchors(target)
        for a in dict.fromkeys(tries):
            steps += 1
            if steps > HERD_BUDGET:
                raise _GaveUp
            if _fits(h, a, taken, target):
                cells = _cells(a, h)
                taken.update(cells)
                out[h.name] = a
                if go(k + 1, room - len(cells)):
                    return True
                taken.difference_update(cells)
                del out[h.name]
        return False

    try:
        return dict(out) if go(0, room) else None
    except _GaveUp:
        return _GAVE_UP


class _GaveUp(Exception):
    """The herd search ran past its budget."""


def _no_room(herds: tuple[Herd, ...], stuck: Herd, gave_up: bool, target: TargetModel) -> None:
    """Say why no placement gives every herd its own tiles, with a fix that works."""
    too_big = next((h for h in herds if h.cols > target.cols or h.rows > target.rows), None)
    if too_big is not None:
        h = too_big
        raise DesignError(
            "herd placement", f"herd '{h.name}' ({h.cols}x{h.rows}) does not fit on "
            f"{target.name}", loc=h.loc,
            limit=f"{counted(target.cols, 'column')} x {counted(target.rows, 'core row')}",
            found=f"{counted(h.cols, 'column')} x {counted(h.rows, 'row')}",
            fix=_bigger_device(h, target) + "a smaller herd")
    tiles = target.cols * target.rows
    shapes = ", ".join(f"'{h.name}' ({h.cols}x{h.rows})" for h in herds)
    need = sum(h.cols * h.rows for h in herds)
    others = [(f"herd '{h.name}'", h.loc) for h in herds if h is not stuck]
    grid = f"{counted(target.cols, 'column')} x {counted(target.rows, 'core row')}"
    if gave_up:
        raise DesignError(
            "herd placement", f"herd '{stuck.name}' ({stuck.cols}x{stuck.rows}) found no free "
            f"tiles on {target.name}, and aiedsl gave up searching for a placement of the herds "
            f"({shapes}) after {HERD_BUDGET} tries", loc=stuck.loc,
            limit=f"{grid}, {tiles} core tiles", found=f"{need} tiles in {len(herds)} herds",
            related=others, fix="anchor the herds yourself on disjoint tiles "
            "(@herd(..., anchor=(col, row)))")
    if need > tiles:
        raise DesignError(
            "herd placement", f"the herds need {need} core tiles together, and {target.name} "
            f"has {tiles}", loc=stuck.loc, limit=f"{grid}, {tiles} core tiles",
            found=f"{need} tiles: {shapes}", related=others,
            fix=_bigger_device(stuck, target, need, herds) + "smaller herds")
    pinned = [h for h in herds if h.anchor is not None]
    moved = None
    if pinned:  # would other anchors make room? keep each where it is when that works
        order = pinned + sorted((h for h in herds if h.anchor is None),
                                key=lambda h: -h.cols * h.rows)
        got = _search(order, set(), {h.name: h.anchor for h in pinned if h.anchor}, target)
        if got is not None and got is not _GAVE_UP:
            moved = [(h, got[h.name]) for h in pinned if got[h.name] != h.anchor]
    if moved:
        raise DesignError(
            "herd placement", f"herd '{stuck.name}' ({stuck.cols}x{stuck.rows}) does not fit "
            f"on {target.name} beside the anchored herds", loc=stuck.loc,
            limit=f"{grid}, {tiles} core tiles; the anchored herds leave no free "
            f"{stuck.cols}x{stuck.rows} rectangle", found=f"{need} tiles: {shapes}",
            related=[(f"herd '{h.name}' anchored at {h.anchor}", h.loc) for h in pinned],
            fix="move the anchors: " + ", ".join(
                f"herd '{h.name}' anchor={a} (line {h.loc.line})" for h, a in moved)
            + "; aiedsl then places the others")
    raise DesignError(
        "herd placement", f"the herds do not fit on {target.name} together: no placement "
        "gives each its own rectangle of core tiles", loc=stuck.loc,
        limit=f"{grid}, {tiles} core tiles", found=f"{need} tiles: {shapes}", related=others,
        fix=_bigger_device(stuck, target, need, together=herds) + "smaller herds")


def _bigger_device(h: Herd, target: TargetModel, tiles: int = 0,
                   together: tuple[Herd, ...] = ()) -> str:
    """'use --device X or ' for the smallest device the herd fits, preferring the same family
    (with ``tiles``, one with that many core tiles; with ``together``, one those herds are
    placed on)."""
    def placed(t: TargetModel) -> bool:
        # by identity: _GAVE_UP is an empty dict, which an empty placement equals
        found = _search(sorted(together, key=lambda g: -g.cols * g.rows), set(), {}, t)
        return found is not None and found is not _GAVE_UP

    fits = sorted((t for t in DEVICES.values() if t.cols >= h.cols and t.rows >= h.rows
                   and t.cols > target.cols and t.cols * t.rows >= tiles
                   and (not together or placed(t))),
                  key=lambda t: (t.family != target.family, t.cols))
    return f"use a larger device (--device {fits[0].name}) or " if fits else "use "



def _anchors(target: TargetModel) -> list[Coord]:
    return [(col, row) for col in range(target.cols) for row in target.core_rows]


def _cells(anchor: Coord, h: Herd) -> list[Coord]:
    return [(anchor[0] + x, anchor[1] + y) for y in range(h.rows) for x in range(h.cols)]
