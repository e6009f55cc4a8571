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
from aiedsl.ir import Design, Fifo, Link, Loc, Transfer, Wait
from aiedsl.targets import TargetModel, get_target

Coord = tuple[int, int]


@dataclass
class Use:
    """One user of a resource: a label in the design's terms and its line.

    Allocation (:mod:`aiedsl.place.alloc`) reads the details: ``fifo`` owns it; ``buffers`` are
    the (name, bytes) of each buffer a memory use stands for; ``locks`` the (name, initial value)
    of each lock; ``bds`` the buffer descriptors a DMA channel chains.
    """

    label: str
    amount: int
    loc: Loc
    fifo: str = ""
    buffers: tuple[tuple[str, int], ...] = ()
    locks: tuple[tuple[str, int], ...] = ()
    bds: int = 0
    order: int = 0
    """When it was made: mlir-aie hands out BD ids in that order (fifo by fifo)."""


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
    shared = d.physical.shared if d.physical else {}
    tiles: dict[Coord, TileUsage] = {}

    def at(tile: Coord | None) -> TileUsage:
        assert tile is not None
        if tile not in tiles:
            tiles[tile] = TileUsage(tile, target.kind_of(tile) or "?")
        return tiles[tile]

    def add_dma(u: TileUsage, direction: str, fifo: str, loc: Loc, bds: int) -> None:
        chans = u.dma_in if direction == "in" else u.dma_out
        chans.append(Use(fifo, 1, loc, fifo=fifo, bds=bds, order=len(u.dma_in) + len(u.dma_out)))
        if bds:  # a shim endpoint's BDs are counted per runtime transfer (_shim_bds)
            u.bds.append(Use(fifo, bds, loc, fifo=fifo))
            u.bds_by_parity[(len(chans) - 1) % 2].append(Use(fifo, bds, loc, fifo=fifo))

    def add_buffers(u: TileUsage, fifo: str, base: str, n: int, nbytes: int, loc: Loc) -> None:
        u.memory.append(Use(f"{fifo} {n} x {nbytes} B", n * nbytes, loc, fifo=fifo,
                            buffers=tuple((f"{base}_buff_{i}", nbytes) for i in range(n))))

    def add_locks(u: TileUsage, label: str, fifo: str, base: str, depth: int, loc: Loc,
                  parts: int = 1) -> None:
        names = tuple(lock for i in range(parts) for lock in
                      ((f"{base}_prod_lock_{i}", depth), (f"{base}_cons_lock_{i}", 0)))
        u.locks.append(Use(label, len(names), loc, fifo=fifo, locks=names))

    core_by_name = {c.name: c for c in d.cores}
    for c in d.cores:
        u = at(c.tile)
        u.runs = f"{c.name}: " + ", ".join(sorted({op.kernel for op in calls(c)})) \
            if calls(c) else c.name
        u.memory.append(Use("stack", c.stack, c.loc, buffers=((f"{c.name} stack", c.stack),)))
    link_bds = _memtile_bds(d)
    for f in d.fifos:  # in emitted order: mlir-aie numbers DMA channels fifo by fifo
        if f.name in shared:
            _shared_fifo(f, at(shared[f.name]), add_buffers, add_locks)
            continue
        n_core_cons = sum(c.kind == "core" for c in f.consumers)
        cons_i = 0
        for e, port in [(f.producer, "produce")] + [(c, "consume") for c in f.consumers]:
            u = at(e.tile)
            direction = "out" if port == "produce" else "in"
            if e.kind == "shim":
                add_dma(u, direction, f.name, e.loc, 0)
                add_locks(u, f.name, f.name, _side(f.name, port, None), 1, e.loc)
            elif e.kind == "memtile":  # buffers and locks belong to the link (below)
                add_dma(u, direction, f.name, e.loc, link_bds[f.name])
            else:
                assert e.core is not None
                nbuf = buffers_held(e.depth, max_acquire(core_by_name[e.core])[(f.name, port)])
                index = None
                if port == "consume" and n_core_cons > 1:
                    index, cons_i = cons_i, cons_i + 1
                base = _side(f.name, port, index)
                add_buffers(u, f.name, base, nbuf, f.elem.nbytes, e.loc)
                add_locks(u, f.name, f.name, base, nbuf, e.loc)
                add_dma(u, direction, f.name, e.loc, nbuf)
    for link in d.links:
        u = at(link.memtile)
        parent = d.fifo(_parent(link))
        depth = _link_depth(d, link)
        # A forward may regroup elements; the memtile buffers hold the larger of the two.
        nbytes = max(d.fifo(n).elem.nbytes for n in (*link.srcs, *link.dsts)) \
            if link.kind == "forward" else parent.elem.nbytes
        base = _side(parent.name, "produce" if link.kind == "join" else "consume", None)
        add_buffers(u, parent.name, base, depth, nbytes, link.loc)
        parts = link.dsts if link.kind == "split" else link.srcs
        add_locks(u, f"{link.kind} {parent.name}", parent.name, base, depth, link.loc,
                  parts=len(parts))
    _shim_bds(d, at)
    return dict(sorted(tiles.items(), key=lambda kv: (kv[0][1], kv[0][0])))


def _parent(link: Link) -> str:
    """The fifo whose whole elements the memtile holds: the joined one, or the split/forwarded one."""
    return link.dsts[0] if link.kind == "join" else link.srcs[0]


def _link_depth(d: Design, link: Link) -> int:
    parent = d.fifo(_parent(link))
    end = parent.producer if link.kind == "join" else next(
        c for c in parent.consumers if c.kind == "memtile")
    return end.depth


def _memtile_bds(d: Design) -> dict[str, int]:
    """BDs of each memtile DMA channel: one per buffer, per part on the parent's side."""
    out = {}
    for link in d.links:
        depth = _link_depth(d, link)
        n_parts = len(link.dsts if link.kind == "split" else link.srcs)
        for s in link.srcs:
            out[s] = depth * (n_parts if link.kind == "split" else 1)
        for t in link.dsts:
            out[t] = depth * (n_parts if link.kind == "join" else 1)
    return out


def _side(fifo: str, port: str, index: int | None) -> str:
    """mlir-aie's base name for one side of a fifo: ``a`` (producer), ``a_cons`` or ``a_1_cons``."""
    if port == "produce":
        return fifo
    return f"{fifo}_{index}_cons" if index is not None else f"{fifo}_cons"


def _shared_fifo(f: Fifo, u: TileUsage, add_buffers, add_locks) -> None:  # type: ignore[no-untyped-def]
    """A fifo between neighbouring cores in shared memory: no DMA, one set of buffers and locks.

    mlir-aie sizes it by the producer's depth and gives it one lock pair (aie2-facts.md s2).
    """
    depth = f.producer.depth
    add_buffers(u, f.name, f.name, depth, f.elem.nbytes, f.loc)
    add_locks(u, f"{f.name} (shared)", f.name, f.name, depth, f.loc)


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
