"""Deterministic placement: herds, then memtile links, then shim endpoints.

Herds keep their anchor or take the first free rectangle (columns left to right, rows bottom up),
and when that leaves one no room, a search places them all (:func:`aiedsl.place.herds.place_herds`).
A memtile link goes to the column of the cores it feeds or drains, preferring the least-used
memtile among them, searching on when that choice would leave a later link no memtile with DMA
channels to spare, or leave a memtile short of the data memory or BDs its links take
(:mod:`aiedsl.place.memtiles`), or funnel more streams into a rectangle of tiles than wires
reach it (:mod:`aiedsl.place.cuts`); a shim endpoint goes to the column of the tile on its other
side, or the nearest column with a free DMA channel.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from aiedsl.errors import DesignError
from aiedsl.ir.cores import Core, Herd
from aiedsl.ir.design import Design
from aiedsl.ir.fifos import Endpoint, Fifo, Link
from aiedsl.ir.loc import Loc
from aiedsl.ir.physical import Physical
from aiedsl.place.cuts import Ends, worst
from aiedsl.place.herds import place_herds
from aiedsl.place.memtiles import BUDGET, Demand, capacity, channels, demands, fit, over
from aiedsl.place.objectfifo import Lowering, lower
from aiedsl.targets import TargetModel, wider_device

Coord = tuple[int, int]

WIRED_BUDGET = 2_000
"""Search steps the placer spends looking for memtiles that pass every cut (each complete
packing it tries is judged by :func:`aiedsl.place.cuts.worst`, about a millisecond) before it
takes the packing without that test."""
WIRED_TESTS = 64
"""Complete packings the placer judges by the cut test, at most (a few milliseconds each)."""


def place(design: Design, target: TargetModel) -> Design:
    """Return ``design`` with every tile of ``target`` it uses decided (``placed=True``)."""
    return place_lowered(design, target)[0]


def place_lowered(design: Design, target: TargetModel) -> tuple[Design, Lowering | None]:
    """:func:`place`, and the objectfifo lowering of the placed design when placing it lowered
    that design (to see what its memtile links take), else None."""
    herds = place_herds(design.herds, target)
    anchors = {h.name: h.anchor for h in herds if h.anchor is not None}  # every herd has one
    core_tile = {c.name: (anchors[c.herd][0] + c.index[0], anchors[c.herd][1] + c.index[1])
                 for c in design.cores}
    cores = tuple(c.model_copy(update={"tile": core_tile[c.name]}) for c in design.cores)
    fifos = {f.name: _place_cores(f, core_tile) for f in design.fifos}
    _check_shim_pins(fifos, target)  # before links: a link is placed near its ends' columns
    busy = set(core_tile.values())
    judged: list[tuple[list[Link], Design]] = []  # the last links the cut test judged

    def finish(links: list[Link]) -> Design:
        """:func:`_finish` of ``links``; the design the cut test made of them when it judged
        the same links last (the search's answer is the packing it accepted last)."""
        if judged and judged[0][0] == links:
            return judged[0][1]
        return _finish(design, herds, cores, fifos, links, target)

    def wired(links: list[Link]) -> bool:
        """Do the streams of the design with these links pass every cut (:mod:`.cuts`)?"""
        judged[:] = [(links, _finish(design, herds, cores, fifos, links, target))]
        return worst(streams(judged[0][1]), target) is None

    placed = finish(_place_links(design.links, fifos, target, busy, wired=wired))
    # what each memtile link takes of its memtile is known once a placement can be lowered;
    # where the channels-only packing leaves a memtile without room for it, search again
    mem = [link for link in placed.links if link.via != "core"]
    if not mem:
        return placed, None
    low = lower(placed, target)
    need = demands(placed, low)
    if over([link.tile[0] for link in mem if link.tile is not None], need, target) is None:
        return placed, low
    links = _place_links(design.links, fifos, target, busy, need, wired)
    return finish(links), None


def streams(d: Design) -> list[Ends]:
    """The streams of placed design ``d`` as :mod:`aiedsl.place.cuts` sees them: every fifo
    not in shared memory is one, from its producer's tile to its consumers'."""
    shared = d.physical.shared if d.physical else {}
    return [(f.producer.tile, tuple(c.tile for c in f.consumers if c.tile is not None))
            for f in d.fifos if f.name not in shared and f.producer.tile is not None]


def _finish(design: Design, herds: list[Herd], cores: tuple[Core, ...], fifos: dict[str, Fifo],
            links: list[Link], target: TargetModel) -> Design:
    """``design`` with its placed herds, cores and links, and the fifos' ends they fix."""
    fifos = dict(fifos)
    for link in links:
        for name in link.srcs:
            fifos[name] = _set_link_tile(fifos[name], "consumer", link.tile)
        for name in link.dsts:
            fifos[name] = _set_link_tile(fifos[name], "producer", link.tile)
    fifos = _place_shims(fifos, target)
    shared = _shared_memory(list(fifos.values()), links, target)
    return design.model_copy(update={"herds": tuple(herds), "cores": cores,
                                     "fifos": tuple(fifos.values()), "links": tuple(links),
                                     "placed": True, "physical": Physical(shared=shared)})


def _shared_memory(fifos: list[Fifo], links: list[Link], target: TargetModel
                   ) -> dict[str, Coord]:
    """Fifos mlir-aie puts in shared memory, and the tile holding their buffers.

    Its rule: one consumer, no layout change on either side, not part of a link, not repeated
    (``requiresDMAs``: a ``repeat_count`` takes a DMA), and one of the two cores reaches the
    other's memory. The buffers go in the producer's memory unless only the producer reaches the
    consumer's.
    """
    in_link = {n for link in links for n in (*link.srcs, *link.dsts)}
    out = {}
    for f in fifos:
        if len(f.consumers) != 1 or f.name in in_link or f.repeat > 1:
            continue
        p, c = f.producer, f.consumers[0]
        if p.kind != "core" or c.kind != "core" or p.dims or c.dims:
            continue
        assert p.tile is not None and c.tile is not None
        right = target.core_reaches(p.tile, c.tile)   # the producer writes the consumer's memory
        left = target.core_reaches(c.tile, p.tile)    # the consumer reads the producer's
        if right or left:
            out[f.name] = c.tile if right and not left else p.tile
    return out


def _place_cores(f: Fifo, core_tile: dict[str, Coord]) -> Fifo:
    def fix(e: Endpoint) -> Endpoint:
        if e.kind != "core" or e.core is None:
            return e
        return e.model_copy(update={"tile": core_tile[e.core]})
    return f.model_copy(update={"producer": fix(f.producer),
                                "consumers": tuple(fix(c) for c in f.consumers)})


def _set_link_tile(f: Fifo, side: str, tile: Coord | None) -> Fifo:
    if side == "producer":
        return f.model_copy(update={"producer": f.producer.model_copy(update={"tile": tile})})
    cons = tuple(c.model_copy(update={"tile": tile}) if c.is_link_end else c
                 for c in f.consumers)
    return f.model_copy(update={"consumers": cons})


def _place_links(links: tuple[Link, ...], fifos: dict[str, Fifo], target: TargetModel,
                 busy: set[Coord], need: list[Demand] | None = None,
                 wired: Callable[[list[Link]], bool] | None = None) -> list[Link]:
    """Each link's tile: a memtile link in the column of the tiles it serves when that memtile
    has room left, else the nearest column with some (the least-used first among equals),
    searching further when that greedy choice would leave a later link no memtile
    (:func:`aiedsl.place.memtiles.fit`); a core-tile forward on a free core tile.

    Room is DMA channels, and with ``need`` (what each memtile link takes, in order) also data
    memory and BDs; when no placement has room for ``need``, the channels-only one is taken (the
    resource check then names the memtile that is over).

    With ``wired``, a packing must also leave the streams wires enough across every rectangle
    of tiles (``wired(links)``; a packing that fails it cannot route, by any router), so
    unpinned links move to other memtiles when the preferred ones would funnel more streams
    into a corner of the array than its wires carry; when no packing passes, the one without
    that test is taken (the routing check then names the rectangle).
    """
    row = target.memtile_rows[0]
    mem = [i for i, link in enumerate(links) if link.via != "core"]
    pins: list[int | None] = []
    for i in mem:
        pinned = links[i].tile
        if pinned is not None:
            _check_pin(pinned, "memtile", _what(links[i]), links[i].loc, target)
        pins.append(None if pinned is None else pinned[0])
    needs = [channels(links[i]) for i in mem]
    far = [sorted(_far_columns(links[i], fifos)) or [0] for i in mem]

    def prefer(k: int, loads: list[tuple[int, int]]) -> list[int]:
        near = sorted(far[k], key=lambda c: (sum(loads[c]), c))
        rest = sorted((c for c in range(target.cols) if c not in far[k]),
                      key=lambda c: (min(abs(c - f) for f in far[k]), c))
        return near + rest

    busy = set(busy)  # core tiles a core program or an earlier core-tile link holds
    core_tiles: dict[int, Coord] = {}
    for i, link in enumerate(links):
        if link.via == "core":
            core_tiles[i] = _core_tile_for(link, fifos, target, busy)
            busy.add(core_tiles[i])

    def placed(found: list[int]) -> list[Link]:
        col_of = dict(zip(mem, found))
        return [link.model_copy(update={"tile": core_tiles[i] if link.via == "core"
                                        else (col_of[i], row)})
                for i, link in enumerate(links)]

    tries = [None] if wired is None or all(p is not None for p in pins) else [wired, None]
    found = None
    for test in tries:
        exact = None if test is None else _bounded(lambda cols: test(placed(cols)))
        budget = BUDGET if test is None else WIRED_BUDGET
        if need is not None:
            found = fit([n.need for n in need], pins, target.cols, capacity(target), prefer,
                        budget, _both(lambda cols: over(cols, need, target) is None,
                                      exact)).columns
        if found is None:
            found = fit(needs, pins, target.cols, (target.memtile.dma_in, target.memtile.dma_out),
                        prefer, budget, exact).columns
        if found is not None:
            break
    if found is None:  # no packing (check_memtile_channels says why): the greedy one, over-full
        found = _greedy(needs, pins, far, target)
    return placed(found)


def _bounded(test: Callable[[list[int]], bool]) -> Callable[[list[int]], bool]:
    """``test``, refusing without judging after :data:`WIRED_TESTS` calls (each places the
    design's fifos and judges every cut: the search stays within its step budget, but could
    reach that many complete packings)."""
    calls = 0

    def bounded(cols: list[int]) -> bool:
        nonlocal calls
        calls += 1
        return calls <= WIRED_TESTS and test(cols)
    return bounded


def _both(a: Callable[[list[int]], bool], b: Callable[[list[int]], bool] | None
          ) -> Callable[[list[int]], bool]:
    """``a`` and then ``b`` (when given) accept a packing."""
    return a if b is None else (lambda cols: a(cols) and b(cols))


def _greedy(needs: list[tuple[int, int]], pins: list[int | None], far: list[list[int]],
            target: TargetModel) -> list[int]:
    """Each link in turn to the least-used of its columns with room, else the nearest column
    with room, else its first column (over-full: for a map to draw)."""
    load_in: Counter[int] = Counter()
    load_out: Counter[int] = Counter()
    out = []
    for (n_in, n_out), pin, cols in zip(needs, pins, far):
        if pin is not None:
            col = pin
        else:
            def fits(c: int) -> bool:
                return (load_in[c] + n_in <= target.memtile.dma_in
                        and load_out[c] + n_out <= target.memtile.dma_out)

            pool = [c for c in cols if fits(c)]
            if not pool:  # spill to the nearest column with room
                pool = sorted((c for c in range(target.cols) if fits(c)),
                              key=lambda c: min(abs(c - k) for k in cols))[:1] or cols
            col = min(pool, key=lambda c: (load_in[c] + load_out[c], c))
        load_in[col] += n_in
        load_out[col] += n_out
        out.append(col)
    return out


def _core_tile_for(link: Link, fifos: dict[str, Fifo], target: TargetModel, busy: set[Coord]
                   ) -> Coord:
    """The core tile a forward goes through: as pinned (a core may also run there, as mlir-aie
    allows), else the lowest free one in the columns it serves, then in any column."""
    if link.tile is not None:
        _check_pin(link.tile, "core", f"forward of {_names(link)}", link.loc, target)
        return link.tile
    cols = sorted(_far_columns(link, fifos)) or [0]
    order = cols + [c for c in range(target.cols) if c not in cols]
    for col in order:
        for row in target.core_rows:
            if (col, row) not in busy:
                return (col, row)
    raise DesignError(
        "placement", f"forward of {_names(link)} needs a core tile, and every core tile is "
        "taken", loc=link.loc, limit=f"{target.cols * len(target.core_rows)} core tiles on "
        f"{target.name}", found="none free",
        fix="pin it with via=coretile(col, row) (a core tile may forward and compute), or "
        "forward through a memtile")


def _names(link: Link) -> str:
    return ", ".join(f"'{n}'" for n in (*link.srcs, *link.dsts))


def link_name(link: Link) -> str:
    """A memtile link as messages name it (:func:`_what`)."""
    return _what(link)


def _what(link: Link) -> str:
    """A memtile link as errors name it: ``split of 'a'``, ``join into 'c'``, ``forward of 'a',
    'b'`` (a split's or join's parts are named by it, not listed as if each were split)."""
    if link.kind == "split":
        return f"split of '{link.srcs[0]}'"
    if link.kind == "join":
        return f"join into '{link.dsts[0]}'"
    return f"forward of {_names(link)}"


def _check_pin(tile: Coord, kind: str, what: str, loc: Loc, target: TargetModel) -> None:
    """A pinned memtile, core tile or shim must be that kind of tile on the device."""
    if target.kind_of(tile) != kind:
        row: int | str = (target.memtile_rows[0] if kind == "memtile" else target.shim_row
                          if kind == "shim" else
                          f"{target.core_rows[0]}..{target.core_rows[-1]}")
        noun = {"memtile": "memtile", "shim": "shim tile", "core": "core tile"}[kind]
        cols = "column 0" if target.cols == 1 else f"columns 0..{target.cols - 1}"
        raise DesignError(
            "placement", f"{what} is pinned to tile {tile}, which is not a {noun} of "
            f"{target.name}", loc=loc, limit=f"{noun}s in {cols}, row {row}",
            found=f"tile {tile}", fix=(
                f"pin a core tile, e.g. coretile(0, {target.core_rows[0]})" if kind == "core"
                else "pin column 0" if target.cols == 1 else
                f"pin a column from 0 to {target.cols - 1}") + _wide_enough(tile, target))


def _wide_enough(tile: Coord, target: TargetModel) -> str:
    """``, or --device npu1 (4 columns)`` for a pin past ``target``'s last column, naming the
    narrowest device of its family that has the column; nothing for a pin inside it, or past
    the family's widest (a pin to column 7 of npu1_1col is more likely a slip than a wish for
    another machine)."""
    wider = wider_device(target, lambda t: t.cols > tile[0] and t.family == target.family) \
        if tile[0] >= target.cols else None
    return f", or use --device {wider.name} ({wider.cols} columns)" if wider else ""


def _far_columns(link: Link, fifos: dict[str, Fifo]) -> set[int]:
    """Columns of the tiles on the far side of a link (the cores it feeds or drains)."""
    cols: set[int] = set()
    for name in link.dsts:
        cols.update(c.tile[0] for c in fifos[name].consumers if c.tile)
    for name in link.srcs:
        p = fifos[name].producer
        if p.tile:
            cols.add(p.tile[0])
    return cols


def _check_shim_pins(fifos: dict[str, Fifo], target: TargetModel) -> None:
    """Every host end pinned with ``shim=`` is on a shim tile of the device."""
    for f in fifos.values():
        for e in (f.producer, *f.consumers):
            if e.kind == "shim" and e.tile is not None:
                _check_pin(e.tile, "shim", f"the host end of fifo '{f.name}'", f.loc, target)


def _place_shims(fifos: dict[str, Fifo], target: TargetModel) -> dict[str, Fifo]:
    used: Counter[tuple[int, str]] = Counter()
    row = target.shim_row
    for f in fifos.values():
        for e, d in [(f.producer, "out")] + [(c, "in") for c in f.consumers]:
            if e.kind == "shim" and e.tile is not None:  # (pins checked by _check_shim_pins)
                used[(e.tile[0], d)] += 1
    out = {}
    for name, f in fifos.items():
        if f.producer.kind == "shim" and f.producer.tile is None:
            want = [c.tile[0] for c in f.consumers if c.tile] or [0]
            col = _shim_col(want[0], "out", used, target)
            f = f.model_copy(update={"producer": f.producer.model_copy(
                update={"tile": (col, row)})})
        cons = []
        for c in f.consumers:
            if c.kind == "shim" and c.tile is None:
                want_col = f.producer.tile[0] if f.producer.tile else 0
                c = c.model_copy(update={"tile": (_shim_col(want_col, "in", used, target), row)})
            cons.append(c)
        out[name] = f.model_copy(update={"consumers": tuple(cons)})
    return out


def _shim_col(want: int, direction: str, used: Counter[tuple[int, str]],
              target: TargetModel) -> int:
    limit = target.shim.dma_out if direction == "out" else target.shim.dma_in
    order = sorted(range(target.cols), key=lambda c: (abs(c - want), c))
    col = next((c for c in order if used[(c, direction)] < limit), want)
    used[(col, direction)] += 1
    return col

