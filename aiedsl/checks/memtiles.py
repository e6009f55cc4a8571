"""Whether the design's memtile links can be placed at all, before the placer tries.

Each memtile link takes one S2MM channel per input fifo and one MM2S channel per output fifo,
all on its own memtile (:mod:`aiedsl.place.memtiles`); a memtile has ``dma_in`` and ``dma_out``
of them (6 and 6 on AIE2: mlir-aie's ``getNumDestSwitchboxConnections``/
``getNumSourceSwitchboxConnections`` for DMA on a memtile; the lowering's
``DMAChannelAnalysis`` fails with "number of input/output DMA channel exceeded!" past them).
So no placement exists when one link needs more than a memtile has, when all links together
need more than the device's memtiles have, or when they do not pack into the memtiles; and
pins to a column can leave no room where a free placement would fit. Each is said here in
those terms, with the fix that works. When a placement gives every memtile the channels its
links take, the placer finds one, and among those one that also leaves every memtile the data
memory and BDs its links take whenever one does (:func:`aiedsl.place.memtiles.fit` tries them
all, within a budget of search steps): so the per-tile channel check after placement
(:mod:`aiedsl.checks.resources`) is not reached, and a memtile it finds short of memory or BDs
has no placement that would spare it -- unless pins stand in the way, which
:func:`check_memtile_room` says first, naming the pins that would.
"""

from __future__ import annotations

import math
from collections import Counter

from aiedsl.errors import DesignError, counted
from aiedsl.ir.design import Design
from aiedsl.ir.fifos import Link
from aiedsl.ir.loc import Loc
from aiedsl.place.memtiles import (Demand, channels, demands, fit, fit_demands, over,
                                   parity_shares)
from aiedsl.place.objectfifo import Lowering
from aiedsl.place.placer import link_name
from aiedsl.targets import TargetModel, wider_device

_DIRECTIONS = (("input (S2MM)", 0, "dma_in"), ("output (MM2S)", 1, "dma_out"))


def check_memtile_channels(d: Design, target: TargetModel, placed: Design | None = None
                           ) -> None:
    """Refuse memtile links that no placement on ``target`` can give enough DMA channels.
    ``placed``: ``d`` as the placer placed it; where its links have their channels, a placement
    that gives them is known without a search for one (some thousand steps on an 8-column
    device)."""
    links = [link for link in d.links if link.via != "core"]
    if not links:
        return
    needs = [channels(link) for link in links]
    memtiles = target.cols * len(target.memtile_rows)
    for direction, side, field in _DIRECTIONS:
        per = getattr(target.memtile, field)
        for link, need in zip(links, needs):
            if need[side] > per:
                _too_big(link, need[side], per, direction)
        total = sum(n[side] for n in needs)
        if total > per * memtiles:
            _too_many(d, links, needs, side, direction, per, memtiles, target)
    cap = (target.memtile.dma_in, target.memtile.dma_out)
    pins = [link.tile[0] if link.tile is not None else None for link in links]
    if any(p is not None and not 0 <= p < target.cols for p in pins):
        return  # the placer refuses the pin itself
    if placed is not None and _packed(links, needs, pins, placed, cap, target):
        return
    found = fit(needs, pins, target.cols, cap)
    if found.columns is not None or not found.settled:
        return
    free = fit(needs, [None] * len(links), target.cols, cap)
    if free.columns is not None:
        _pinned(links, needs, pins, free.columns, target, _by_channel(d, links))
    _no_packing(d, links, needs, target)


def _packed(links: list[Link], needs: list[tuple[int, int]], pins: list[int | None],
            placed: Design, cap: tuple[int, int], target: TargetModel) -> bool:
    """Do the placed design's memtile links (``links`` placed) keep their pins and leave no
    memtile short of DMA channels: a packing :func:`~aiedsl.place.memtiles.fit` would find?"""
    mine = [link for link in placed.links if link.via != "core"]
    if len(mine) != len(links) or any((a.srcs, a.dsts) != (b.srcs, b.dsts)
                                      for a, b in zip(links, mine)):
        return False
    cols = [link.tile[0] if link.tile is not None else -1 for link in mine]
    if any(not 0 <= c < target.cols or p not in (None, c) for c, p in zip(cols, pins)):
        return False
    load = [[0, 0] for _ in range(target.cols)]
    for c, (s2mm, mm2s) in zip(cols, needs):
        load[c][0] += s2mm
        load[c][1] += mm2s
    return all(a <= cap[0] and b <= cap[1] for a, b in load)


def _too_big(link: Link, need: int, per: int, direction: str) -> None:
    if link.kind == "join":
        what = f"the join of {need} parts into '{link.dsts[0]}'"
        fix = (f"join at most {per} parts per link: share them out over two joins (each "
               "drained into its own part of the host tensor), or make fewer, larger parts")
    else:
        what = f"the split of '{link.srcs[0]}' into {need} parts"
        fix = (f"split into at most {per} parts per link: share them out over two splits (each "
               "filled from its own part of the host tensor), or make fewer, larger parts")
    raise DesignError(
        f"memtile DMA {direction} channels",
        f"{what} needs {need} DMA {direction} channels on one memtile, and a memtile has {per}",
        loc=link.loc, limit=f"{per} per memtile (a link's channels are all on its memtile)",
        found=str(need), fix=fix)


def _groups(links: list[Link], needs: list[tuple[int, int]], side: int
            ) -> list[tuple[str, Loc]]:
    """The links by the line that made them, with the channels each line's links take."""
    count: Counter[Loc] = Counter()
    kinds: dict[Loc, str] = {}
    used: Counter[Loc] = Counter()
    for link, need in zip(links, needs):
        count[link.loc] += 1
        kinds.setdefault(link.loc, link.kind)
        used[link.loc] += need[side]
    return [(f"{counted(count[loc], kinds[loc])}: {used[loc]}", loc) for loc in count]


def _too_many(d: Design, links: list[Link], needs: list[tuple[int, int]], side: int,
              direction: str, per: int, memtiles: int, target: TargetModel) -> None:
    total = sum(n[side] for n in needs)
    running = 0
    at = links[-1].loc
    for link, need in zip(links, needs):  # where the links run past what the device has
        running += need[side]
        if running > per * memtiles:
            at = link.loc
            break
    field = "dma_in" if side == 0 else "dma_out"
    bigger = wider_device(
        target, lambda t: getattr(t.memtile, field) * t.cols * len(t.memtile_rows) >= total)
    device = f", or a device with more memtiles (--device {bigger.name})" if bigger else ""
    raise DesignError(
        f"memtile DMA {direction} channels",
        f"the design's memtile links need {total} DMA {direction} channels, and the "
        f"{counted(memtiles, 'memtile')} of {target.name} "
        f"{'has' if memtiles == 1 else 'have'} {per * memtiles}",
        loc=at, limit=f"{per * memtiles} ({per} per memtile, {counted(memtiles, 'memtile')}): "
        "no placement of the links can fit them", found=str(total),
        related=_groups(links, needs, side),
        fix=_fixes(_fewer_parts(links, needs, side, per * memtiles),
                   "pass fewer fifos through memtiles: a fifo between two cores, or between the "
                   "host and a core, needs no memtile (leave out its forward, or the channel's "
                   "via=memtile)" + _grouped(d, links, needs, memtiles, target)) + device)


def _fixes(parts: tuple[str, bool] | None, fewer_fifos: str) -> str:
    """The fixes of too many memtile channels in order: fewer parts first where the parts of
    splits (or joins) are most of what the links take, else after fewer fifos."""
    if parts is None:
        return fewer_fifos
    text, first = parts
    return f"{text}, or {fewer_fifos}" if first else f"{fewer_fifos}; or {text}"


def _fewer_parts(links: list[Link], needs: list[tuple[int, int]], side: int, have: int
                 ) -> tuple[str, bool] | None:
    """The fix of too many memtile channels of one side (0: input, 1: output) that the parts
    of splits (outputs) or joins (inputs) take: fewer parts, each having a channel of its own
    (a tester's 8x4 herd of splits was told only to pass fewer fifos through memtiles, which
    its shims could not take either); whether it comes first, the parts being most of what the
    links take. None where even one part per link would not fit the ``have`` channels."""
    kind = "join" if side == 0 else "split"
    extra = sum(need[side] - 1 for link, need in zip(links, needs) if link.kind == kind)
    total = sum(need[side] for need in needs)
    if not extra or total - extra > have:
        return None
    way = "enters" if side == 0 else "leaves"
    return (f"{kind} over fewer parts (each part of a {kind} {way} its memtile on a DMA channel "
            f"of its own: a herd of fewer rows or columns, each core doing more)",
            2 * extra > total)


def _grouped(d: Design, links: list[Link], needs: list[tuple[int, int]], memtiles: int,
             target: TargetModel) -> str:
    """The fix's words for channels whose fifos each take a forward of their own (a channel
    with via=memtile and neither split= nor join=): a split or join serves a group of them on
    one link, filled or drained once from the host, along an axis no longer than a memtile's
    channels of that side (a split sends each part on a channel of its own). Said only when,
    so grouped, the links' channels of both sides fit the device's memtiles (a split saves
    inputs, not outputs: its parts still leave on a channel each)."""
    shapes: dict[tuple[str, str], list[int]] = {}
    for link in links:
        if link.kind != "forward":
            continue
        src, dst = d.fifo(link.srcs[0]), d.fifo(link.dsts[0])
        f = dst if dst.channel is not None else src
        into = src.producer.kind == "shim"
        if f.channel is None or not f.index or not (
                into or any(c.kind == "shim" for c in dst.consumers)):
            continue
        shape = shapes.setdefault((f.channel, "split" if into else "join"), [0] * len(f.index))
        shapes[(f.channel, "split" if into else "join")] = [
            max(n, i + 1) for n, i in zip(shape, f.index)]
    named = []
    left = [sum(n[0] for n in needs), sum(n[1] for n in needs)]  # S2MM, MM2S once grouped
    for (name, knob), shape in shapes.items():
        room = target.memtile.dma_out if knob == "split" else target.memtile.dma_in
        axes = [a for a, n in enumerate(shape) if 1 < n <= room]
        if axes:
            axis = max(axes, key=lambda a: shape[a])
            named.append(f"channel '{name}' {knob}={axis}")
            fifos = math.prod(shape)
            # a split's one input, a join's one output, per group along the axis
            left[0 if knob == "split" else 1] -= fifos - fifos // shape[axis]
    if not named or left[0] > target.memtile.dma_in * memtiles or \
            left[1] > target.memtile.dma_out * memtiles:
        return ""
    return ("; or give " + ", ".join(named) + " (one memtile link then feeds, or drains, the "
            "channel's fifos along that axis, where each of them now takes a forward of its "
            "own)")


def _pinned(links: list[Link], needs: list[tuple[int, int]], pins: list[int | None],
            free: list[int], target: TargetModel,
            channeled: set[int]) -> None:
    """The pins leave no room where a placement without them exists."""
    cap = (target.memtile.dma_in, target.memtile.dma_out)
    load = {c: [0, 0] for c in range(target.cols)}
    for need, p in zip(needs, pins):
        if p is not None:
            load[p][0] += need[0]
            load[p][1] += need[1]
    over = next(((c, side) for c in range(target.cols) for side in (0, 1)
                 if load[c][side] > cap[side]), None)
    pinned = [(link, p) for link, p in zip(links, pins) if p is not None]
    row = target.memtile_rows[0]
    if over is not None:
        c, side = over
        direction = _DIRECTIONS[side][0]
        here = [link for link, p in pinned if p == c]
        message = (f"the links pinned to memtile {(c, row)} need {load[c][side]} DMA "
                   f"{direction} channels, and a memtile has {cap[side]}")
        found = str(load[c][side])
        related = [(f"{_named(link)} pinned here: {counted(channels(link)[side], 'channel')}",
                    link.loc)
                   for link in here]
        at = here[-1].loc
    else:
        direction = "input (S2MM) and output (MM2S)"
        message = ("the pinned memtile links leave the others no memtile with DMA channels "
                   "to spare, though a placement without the pins exists")
        found = ", ".join(f"memtile {(p, row)}: {link.kind}" for link, p in pinned)
        related = [(f"{_named(link)} pinned to memtile {(p, row)}", link.loc)
                   for link, p in pinned]
        at = pinned[-1][0].loc
    raise DesignError(
        f"memtile DMA {direction} channels" if over is not None else "memtile DMA channels",
        message, loc=at,
        limit=f"{cap[over[1]]} per memtile" if over is not None else
        f"{cap[0]} DMA input (S2MM) and {cap[1]} output (MM2S) channels per memtile",
        found=found, related=related, fix=_unpin(links, pins, free, channeled))


def _unpin(links: list[Link], pins: list[int | None], free: list[int],
           channeled: set[int]) -> str:
    """The fix for pins in the way of placement ``free``: drop them, or pin as it does (but not
    a channel's links, ``channeled``: the channel's one ``via=memtile(col)`` pins all of them,
    and one pin per link is not what it can say)."""
    moves = [f"{_named(link)} via=memtile({col}) (line {link.loc.line})"
             for i, (link, p, col) in enumerate(zip(links, pins, free))
             if p is not None and p != col and i not in channeled]
    return ("leave the column out of the pins (via=memtile): aiedsl then places every link"
            + (f", or pin as it would: {', '.join(moves)}" if moves else ""))


def _by_channel(d: Design, links: list[Link]) -> set[int]:
    """The indices of ``links`` a channel made (its fifos on either side belong to one)."""
    return {i for i, link in enumerate(links)
            if any(d.fifo(n).channel is not None for n in (*link.srcs, *link.dsts))}


def _named(link: Link) -> str:
    """A link as these messages name it: ``forward 'h0' of 'o0'``, ``join into 'c'``,
    ``split of 'a'``."""
    if link.kind == "forward":
        return f"forward {_quoted(link.dsts)} of {_quoted(link.srcs)}"
    return link_name(link)


def _quoted(names: tuple[str, ...]) -> str:
    """``names`` quoted and comma-separated, as messages name fifos."""
    return ", ".join(f"'{n}'" for n in names)


_ROOM = {"memory": "data memory", "even": "buffer descriptors of even channels",
         "odd": "buffer descriptors of odd channels", "bds": "buffer descriptors"}
"""What :func:`aiedsl.place.memtiles.over` finds short, as the resource check's rules say it."""
_SPARE = {"memory": "data memory", "even": "BDs on even channels", "odd": "BDs on odd channels",
          "bds": "BDs"}
"""The same, as a message says it."""


def check_memtile_room(d: Design, placed: Design, low: Lowering, target: TargetModel) -> None:
    """Refuse pins (``via=memtile(col)``) that leave a memtile without the data memory or BDs
    its links take where a placement without them has room: the placer keeps pins, so the
    resource check would find the memtile over, and only moving a pin helps.

    ``d`` is the design as written (its pins), ``placed`` its placement and ``low`` that
    placement's lowering plan, which says what each link takes."""
    links = [link for link in d.links if link.via != "core"]
    pins = [link.tile[0] if link.tile is not None else None for link in links]
    if all(p is None for p in pins):
        return
    need = demands(placed, low)
    columns = [link.tile[0] for link in placed.links if link.via != "core" and link.tile]
    short = over(columns, need, target, spilling=True)
    if short is None:
        return
    free = fit_demands(need, [None] * len(links), target).columns
    if free is None:  # no placement has room: the resource check says what is over
        return
    row = target.memtile_rows[0]
    pinned = [i for i, p in enumerate(pins) if p is not None]
    alone = over([pins[i] or 0 for i in pinned], [need[i] for i in pinned], target,
                 spilling=True)
    if alone is not None:
        col, what = alone
        here = [i for i in pinned if pins[i] == col]
        shares = _shares(what, [col] * len(here), [need[i] for i in here], target)
        message = (f"the links pinned to memtile {(col, row)} need {_needed(what, sum(shares))},"
                   f" and a memtile has {_limit(what, target)}")
        found = _amount(what, sum(shares))
        related = [(f"{_named(links[i])} pinned here: {_amount(what, n)}", links[i].loc)
                   for i, n in zip(here, shares) if n]  # a link with none there is no cause
        at = links[here[-1]].loc
    else:
        what = short[1]
        message = (f"the pinned memtile links leave the others no memtile with {_SPARE[what]} "
                   "to spare, though a placement without the pins has room")
        found = ", ".join(f"memtile {(pins[i], row)}: {links[i].kind}" for i in pinned)
        related = [(f"{_named(links[i])} pinned to memtile {(pins[i], row)}", links[i].loc)
                   for i in pinned]
        at = links[pinned[-1]].loc
    raise DesignError(f"memtile {_ROOM[what]}", message, loc=at,
                      limit=f"{_limit(what, target)} per memtile", found=found, related=related,
                      fix=_unpin(links, pins, free, _by_channel(d, links)))


def _shares(what: str, columns: list[int], need: list[Demand], target: TargetModel
            ) -> list[int]:
    """What each link placed in ``columns`` takes of ``what``: its bytes, or its BDs (on the
    channels of that parity)."""
    if what == "memory":
        return [n.memory for n in need]
    if what == "bds":
        return [n.need[3] for n in need]
    return [share[what == "odd"] for share in parity_shares(columns, need, target)]


def _needed(what: str, n: int) -> str:
    """``n`` of ``what`` as a message says it: ``28 BDs on even channels``."""
    if what == "memory":
        return f"{n:,} bytes of data memory"
    return counted(n, "BD") + (f" on {what} channels" if what in ("even", "odd") else "")


def _amount(what: str, n: int) -> str:
    return f"{n:,} bytes" if what == "memory" else counted(n, "BD")


def _limit(what: str, target: TargetModel) -> str:
    m = target.memtile
    if what == "memory":
        return f"{m.memory:,} bytes"
    if what == "bds":
        return counted(m.bds, "BD")
    per = m.bds_per_channel_parity or 0
    first = 0 if what == "even" else per
    return f"{per} (BDs {first}-{first + per - 1})"


def _no_packing(d: Design, links: list[Link], needs: list[tuple[int, int]],
                target: TargetModel) -> None:
    """Enough channels in all, but no memtile can take the links as they are grouped."""
    cap = (target.memtile.dma_in, target.memtile.dma_out)
    memtiles = target.cols * len(target.memtile_rows)
    free = [None] * len(needs)
    sides = [side for side in (0, 1) if fit([(n[0] * (side == 0), n[1] * (side == 1))
                                             for n in needs], free, target.cols, cap).columns
             is None] or [0, 1]  # each direction packs alone: the two together do not
    biggest = max(range(len(links)), key=lambda i: sum(needs[i][s] for s in sides))
    if len(sides) == 1:
        side = sides[0]
        direction = _DIRECTIONS[side][0]
        rule = f"memtile DMA {direction} channels"
        message = (f"the design's memtile links need {sum(n[side] for n in needs)} DMA "
                   f"{direction} channels, which the {counted(memtiles, 'memtile')} of "
                   f"{target.name} {'has' if memtiles == 1 else 'have'} in all, but not as the "
                   "links group them: a link takes "
                   "all its channels on one memtile")
        limit = f"{cap[side]} per memtile, {counted(memtiles, 'memtile')}"
        found = ", ".join(str(n[side]) for n in needs)
        related = _groups(links, needs, side)
        takes = str(needs[biggest][side])
    else:
        rule = "memtile DMA channels"
        message = (f"the design's memtile links fit the {counted(memtiles, 'memtile')} of "
                   f"{target.name} in input (S2MM) channels and in output (MM2S) channels, but "
                   "not in both at once: a link takes all its channels on one memtile")
        limit = f"{cap[0]} input and {cap[1]} output channels per memtile"
        found = ", ".join(f"{a}+{b}" for a, b in needs)
        related = [(f"{link.kind}: {a} in, {b} out", link.loc)
                   for link, (a, b) in zip(links, needs)]
        takes = f"{needs[biggest][0]} + {needs[biggest][1]}"
    raise DesignError(
        rule, message, loc=links[biggest].loc, limit=limit, found=found, related=related,
        fix=f"split or join over fewer parts per link (the {links[biggest].kind} at line "
        f"{links[biggest].loc.line} takes {takes}), so the links pack into the memtiles")
