"""Per-tile resource use of a placed design, and the checks against the target's limits.

The same :class:`TileUsage` table feeds ``report.txt``. What counts (mlir-aie's objectfifo
lowering, ``aie2-facts.md`` s2):

* a core endpoint holds ``buffers_held(depth, max acquire)`` buffers in L1, two locks, one BD per
  buffer and one DMA channel (S2MM to consume, MM2S to produce); plus the core's stack;
* a memtile link holds ``depth`` buffers of the whole parent element, one S2MM per source, one
  MM2S per destination, two locks and ``depth`` BDs per part on each side;
* a shim endpoint holds one DMA channel and, per runtime transfer in flight, one BD.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from aiedsl.checks.program import buffers_held, calls, max_acquire
from aiedsl.errors import DesignError
from aiedsl.ir import Design, Loc, Transfer, Wait
from aiedsl.targets import TargetModel, get_target

Coord = tuple[int, int]


@dataclass
class Use:
    """One user of a resource: a label in the design's terms and its line."""

    label: str
    amount: int
    loc: Loc


@dataclass
class TileUsage:
    """Everything placed on one tile."""

    tile: Coord
    kind: str
    memory: list[Use] = field(default_factory=list)
    dma_in: list[Use] = field(default_factory=list)
    dma_out: list[Use] = field(default_factory=list)
    locks: list[Use] = field(default_factory=list)
    bds: list[Use] = field(default_factory=list)
    bds_by_parity: list[list[Use]] = field(default_factory=lambda: [[], []])
    runs: str = ""

    @staticmethod
    def total(uses: list[Use]) -> int:
        """Sum of amounts."""
        return sum(u.amount for u in uses)


def usage(d: Design) -> dict[Coord, TileUsage]:
    """Resource use per tile of a placed design, tiles in (row, col) order."""
    assert d.placed, "usage() needs a placed design"
    target = get_target(d.device)
    tiles: dict[Coord, TileUsage] = {}

    def at(tile: Coord | None) -> TileUsage:
        assert tile is not None
        if tile not in tiles:
            tiles[tile] = TileUsage(tile, target.kind_of(tile) or "?")
        return tiles[tile]

    def add_dma(u: TileUsage, direction: str, label: str, loc: Loc, bds: int) -> None:
        chans = u.dma_in if direction == "in" else u.dma_out
        chans.append(Use(label, 1, loc))
        if bds:  # a shim endpoint's BDs are counted per runtime transfer (_shim_bds)
            u.bds.append(Use(label, bds, loc))
            u.bds_by_parity[(len(chans) - 1) % 2].append(Use(label, bds, loc))

    core_by_name = {c.name: c for c in d.cores}
    for c in d.cores:
        u = at(c.tile)
        u.runs = f"{c.name}: " + ", ".join(sorted({op.kernel for op in calls(c)})) \
            if calls(c) else c.name
        u.memory.append(Use("stack", c.stack, c.loc))
    for f in d.fifos:
        ends = [(f.producer, "produce")] + [(c, "consume") for c in f.consumers]
        for e, port in ends:
            if e.kind != "core":
                continue
            u = at(e.tile)
            n_acq = max_acquire(core_by_name[e.core])[(f.name, port)] if e.core else 1
            nbuf = buffers_held(e.depth, n_acq)
            u.memory.append(Use(f"{f.name} {nbuf} x {f.elem.nbytes} B", nbuf * f.elem.nbytes,
                                e.loc))
            u.locks.append(Use(f.name, 2, e.loc))
            add_dma(u, "out" if port == "produce" else "in", f.name, e.loc, nbuf)
        for e, port in ends:
            if e.kind == "shim":
                add_dma(at(e.tile), "out" if port == "produce" else "in", f.name, e.loc, 0)
    for link in d.links:
        u = at(link.memtile)
        parent_name = link.dsts[0] if link.kind == "join" else link.srcs[0]
        parent = d.fifo(parent_name)
        end = parent.producer if link.kind == "join" else next(
            c for c in parent.consumers if c.kind == "memtile")
        depth = end.depth
        # A forward may regroup elements; the memtile buffers hold the larger of the two.
        nbytes = max(d.fifo(n).elem.nbytes for n in (*link.srcs, *link.dsts)) \
            if link.kind == "forward" else parent.elem.nbytes
        u.memory.append(Use(f"{parent.name} {depth} x {nbytes} B", depth * nbytes, link.loc))
        parts = link.dsts if link.kind == "split" else link.srcs
        u.locks.append(Use(f"{link.kind} {parent.name}", 2 * len(parts), link.loc))
        n_parts = len(parts)
        for s in link.srcs:
            add_dma(u, "in", s, link.loc, depth * (n_parts if link.kind == "split" else 1))
        for t in link.dsts:
            add_dma(u, "out", t, link.loc, depth * (n_parts if link.kind == "join" else 1))
    _shim_bds(d, at)
    return dict(sorted(tiles.items(), key=lambda kv: (kv[0][1], kv[0][0])))


def _shim_bds(d: Design, at) -> None:  # type: ignore[no-untyped-def]
    """A runtime transfer takes a shim BD until the next wait (mlir-aie reuses ids after it)."""
    in_flight: dict[Coord, int] = defaultdict(int)
    peak: dict[Coord, tuple[int, Loc]] = {}
    for op in d.runtime:
        if isinstance(op, Wait):
            in_flight.clear()
            continue
        assert isinstance(op, Transfer)
        f = d.fifo(op.fifo)
        e = f.producer if op.op == "fill" else next(c for c in f.consumers if c.kind == "shim")
        assert e.tile is not None
        in_flight[e.tile] += 1
        if in_flight[e.tile] > peak.get(e.tile, (0, op.loc))[0]:
            peak[e.tile] = (in_flight[e.tile], op.loc)
    for tile, (n, loc) in peak.items():
        at(tile).bds.append(Use("runtime transfers in flight", n, loc))


def check_resources(d: Design) -> dict[Coord, TileUsage]:
    """Check every tile's use against the target; return the usage table."""
    target = get_target(d.device)
    table = usage(d)
    for u in table.values():
        _check_tile(u, target)
    if len(d.tensors) > target.runtime_buffers:
        raise DesignError(
            "runtime buffers", f"design '{d.name}' takes {len(d.tensors)} host tensors",
            loc=d.loc, limit=f"{target.runtime_buffers} (XRT buffer groups 3..7)",
            found=str(len(d.tensors)), fix="pack tensors together into fewer host buffers")
    return table


def _check_tile(u: TileUsage, target: TargetModel) -> None:
    lim = target.limits(u.kind)  # type: ignore[arg-type]
    mem = TileUsage.total(u.memory)
    if u.kind != "shim" and mem > lim.memory:
        fix = ("lower a fifo's depth (depth=1 single-buffers it), use smaller tiles, or give "
               "the core a smaller stack") if u.kind == "core" else \
              "lower the depth of a memtile link or split the data over more memtiles"
        _over(u, "data memory", f"{lim.memory:,} bytes", f"{mem:,} bytes", u.memory, fix)
    move = {"core": "use fewer fifos in this core (pack two inputs or two outputs into one fifo "
            "element), or move some work to another core",
            "memtile": "pin a link to another memtile with via=memtile(col), or split/join over "
            "fewer parts",
            "shim": "pin a fifo's host end to another column with shim=shim(col)"}[u.kind]
    for direction, uses, limit in (("input (S2MM)", u.dma_in, lim.dma_in),
                                   ("output (MM2S)", u.dma_out, lim.dma_out)):
        if len(uses) > limit:
            _over(u, f"DMA {direction} channels", str(limit), str(len(uses)), uses, move)
    if TileUsage.total(u.locks) > lim.locks:
        _over(u, "locks", str(lim.locks), str(TileUsage.total(u.locks)), u.locks,
              "use fewer fifos on this tile or move one elsewhere")
    if lim.bds_per_channel_parity is not None:
        for parity, uses in enumerate(u.bds_by_parity):
            n = TileUsage.total(uses)
            if n > lim.bds_per_channel_parity:
                _over(u, f"buffer descriptors of {'even' if parity == 0 else 'odd'} channels",
                      f"{lim.bds_per_channel_parity} (BDs {0 if parity == 0 else 24}-"
                      f"{23 if parity == 0 else 47})", str(n), uses,
                      "lower fifo depths or move a link to another memtile")
    elif TileUsage.total(u.bds) > lim.bds:
        _over(u, "buffer descriptors", str(lim.bds), str(TileUsage.total(u.bds)), u.bds,
              "wait (rt.sync()) between batches of runtime transfers, or spread the fifos' "
              "host ends over more columns (shim=shim(col))" if u.kind == "shim" else
              "lower fifo depths or move a fifo to another core")


def _over(u: TileUsage, what: str, limit: str, found: str, uses: list[Use], fix: str) -> None:
    raise DesignError(
        f"{u.kind} {what}", f"{'memtile' if u.kind == 'memtile' else u.kind + ' tile'} {u.tile}"
        f"{' (' + u.runs + ')' if u.runs else ''} "
        f"needs more {what} than it has", loc=uses[-1].loc if uses else None, limit=limit,
        found=found, related=[(f"{x.label}: {x.amount}", x.loc) for x in uses], fix=fix)
