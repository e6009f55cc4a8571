"""What each tile of a placed design holds: the :class:`TileUsage` table, one :class:`Use` per
user of a tile's memory, DMA channels, locks and BDs.

The resource checks (:mod:`aiedsl.checks.resources`) hold it against the target's limits, and
the same table feeds ``report.txt`` and ``map.svg``. What counts is what mlir-aie's objectfifo
lowering creates (:func:`aiedsl.place.objectfifo.lower`, which allocation numbers and places):

* a core endpoint holds its end's buffers in L1 (its depth, or when the fifo has one depth for
  every end, one more than the most elements its core acquires at once), two locks, one BD per
  buffer and one DMA channel (S2MM to consume, MM2S to produce); plus the core's stack;
* a memtile link holds the buffers of the end that creates them (the joined output, the split
  input, the larger side of a forward), one S2MM per source, one MM2S per destination, two locks
  per part, and on each channel one BD per buffer (per part on the parent's side);
* a shim endpoint holds one DMA channel, two locks and, per runtime transfer in flight, one BD;
* a fifo between neighbouring cores in shared memory holds its buffers and two locks in the
  memory both cores reach, and no DMA;
* a runtime parameter, and each core's copy of a core-local buffer, is one buffer in its core's
  memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

from aiedsl.checks.buffer_setters import Setter, setter
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.ir.program import calls
from aiedsl.ir.runtime import Transfer
from aiedsl.ir.sequence import Retired, shim_bd_ids
from aiedsl.place.alloc import local_buffer_name
from aiedsl.place.objectfifo import Lowering, Store, lower
from aiedsl.targets import TargetModel

Coord = tuple[int, int]


@dataclass
class Use:
    """One user of a resource: a label in the design's terms and its line.

    The details say what stands behind it: ``fifo`` owns it; ``buffers`` are the (name, bytes) of
    each buffer a memory use stands for; ``locks`` the (name, initial value) of each lock;
    ``bds`` the buffer descriptors a DMA channel chains.
    """

    label: str
    amount: int
    loc: Loc
    fifo: str = ""
    buffers: tuple[tuple[str, int], ...] = ()
    locks: tuple[tuple[str, int], ...] = ()
    bds: int = 0
    order: int = 0
    """When it was made, per tile (DMA channels: the transform's channel order)."""
    setter: Setter | None = None
    """For a memtile link's buffers: how the design sets their number."""
    in_all: int = 0
    """For a memtile link's buffers, where they are made: how many there are, with those
    spilled to a neighbour (``buffers`` holds this tile's alone)."""


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

    @staticmethod
    def memory_text(used: int, limit: int) -> str:
        """``used`` of ``limit`` bytes as tables show it, ``17.1 / 64 KB``: to a tenth of a KB,
        but never shown at the limit when under or over it (524,256 of 524,288 bytes read
        ``512.0 / 512 KB``, as if full)."""
        tenths = round(Fraction(used * 10, 1024))  # exact: half to even, as :.1f rounds
        if used < limit:
            tenths = min(tenths, -(-limit * 10 // 1024) - 1)
        elif used > limit:
            tenths = max(tenths, limit * 10 // 1024 + 1)
        return f"{tenths / 10:.1f} / {limit // 1024} KB"


def usage(d: Design, target: TargetModel, low: Lowering | None = None,
          retired: Callable[[], Retired] | None = None) -> dict[Coord, TileUsage]:
    """Resource use per tile of a placed design on ``target``, tiles in (row, col) order, read
    off ``low`` (the plan of its objectfifo lowering, made here when not given); ``retired``
    gives :func:`~aiedsl.ir.sequence.retirements` of the design when it is known (the checks
    of one design share it), else it is worked out here."""
    assert d.placed, "usage() needs a placed design"
    shared = d.physical.shared if d.physical else {}
    if low is None:
        low = lower(d, target)
    tiles: dict[Coord, TileUsage] = {}

    def at(tile: Coord | None) -> TileUsage:
        assert tile is not None
        if tile not in tiles:
            tiles[tile] = TileUsage(tile, target.kind_of(tile) or "?")
        return tiles[tile]

    def add_dma(u: TileUsage, symbol: str, fifo: str, loc: Loc) -> None:
        ch = low.channel_of[symbol]
        bds = len(ch.chain)
        chans = u.dma_in if ch.direction == "S2MM" else u.dma_out
        chans.append(Use(fifo, 1, loc, fifo=fifo, bds=bds, order=len(u.dma_in) + len(u.dma_out)))
        if bds:  # a shim endpoint's BDs are counted per runtime transfer (_shim_bds)
            u.bds.append(Use(fifo, bds, loc, fifo=fifo))
            u.bds_by_parity[ch.channel % 2].append(Use(fifo, bds, loc, fifo=fifo))

    def add_buffers(u: TileUsage, s: Store, loc: Loc, by: Setter | None = None,
                    why: str = "") -> None:
        # a memtile buffer that spilled counts where it lives (objectfifo rule 3), named so
        for tile in dict.fromkeys(s.tiles):
            here = tuple((b, s.nbytes) for b, t in zip(s.buffers, s.tiles) if t == tile)
            away = "" if tile == s.tile else f" spilled from memtile {s.tile}"
            at(tile).memory.append(Use(f"{s.fifo} {len(here)} x {s.nbytes} B{away}{why}",
                                       len(here) * s.nbytes, loc, fifo=s.fifo, buffers=here,
                                       setter=by if tile == s.tile else None,
                                       in_all=len(s.buffers) if tile == s.tile else 0))
        if not s.buffers:
            u.memory.append(Use(f"{s.fifo} 0 x {s.nbytes} B", 0, loc, fifo=s.fifo, setter=by))

    def add_locks(u: TileUsage, label: str, s: Store, loc: Loc) -> None:
        u.locks.append(Use(label, len(s.locks), loc, fifo=s.fifo, locks=s.locks))

    for c in d.cores:
        u = at(c.tile)
        who = c.name if c.forever else f"{c.name} (once)"  # forever=False: runs its program once
        u.runs = f"{who}: " + ", ".join(sorted({op.kernel for op in calls(c)})) \
            if calls(c) else who
        u.memory.append(Use("stack", c.stack, c.loc, buffers=((f"{c.name} stack", c.stack),)))
    for f in d.fifos:  # in emitted order, as mlir-aie numbers DMA channels
        if f.name in shared:
            s = low.store_of[f.name]
            u = at(s.tile)
            add_buffers(u, s, f.loc)
            add_locks(u, f"{f.name} (shared)", s, f.loc)
            continue
        ends = [low.end(f.name, "produce")] + [low.end(f.name, "consume", i)
                                               for i in range(len(f.consumers))]
        for e in ends:
            u = at(e.tile)
            if e.endpoint.kind == "shim":
                add_dma(u, e.symbol, f.name, e.endpoint.loc)
                add_locks(u, f.name, low.store_of[e.symbol], e.endpoint.loc)
            elif e.link is not None:  # buffers and locks belong to the link (below)
                add_dma(u, e.symbol, f.name, e.endpoint.loc)
            else:
                s = low.store_of[e.symbol]
                # a newcomer's tester: 'rows 4 x 32768 B' under depth=3, said nowhere why
                why = (f" (depth={e.endpoint.depth}: across a DMA a core's end gets one more "
                       "than the most it acquires at once)" if e.endpoint.kind == "core"
                       and len(s.buffers) != e.endpoint.depth and not f.depth_per_end else "")
                add_buffers(u, s, f.loc, why=why)  # where its depth is given: what a fix changes
                add_locks(u, f.name, s, e.endpoint.loc)
                add_dma(u, e.symbol, f.name, e.endpoint.loc)
    for link in d.links:
        s = next(x for x in low.stores if x.link is link)
        u = at(s.tile)
        add_buffers(u, s, link.loc, setter(d, link) if link.via == "memtile" else None)
        add_locks(u, f"{link.kind} {s.fifo}", s, link.loc)
    tiles_of = {c.name: c.tile for c in d.cores}
    for b in d.barriers:  # a lock of its own in each core that waits on it
        for core in b.cores:
            at(tiles_of[core]).locks.append(Use(f"barrier {b.name}", 1, b.loc,
                                                locks=((b.name, b.init),)))
    for r in d.rtps:  # a runtime parameter is an aie.buffer in its core's memory
        nbytes = r.type.nbytes
        at(tiles_of[r.core]).memory.append(Use(f"rtp {r.name} {nbytes} B", nbytes, r.loc,
                                               buffers=((r.name, nbytes),)))
    for lb in d.locals:  # each core that passes it to a kernel holds a copy of its own
        nbytes = lb.type.nbytes
        for core in lb.cores:
            sym = local_buffer_name(lb, at(tiles_of[core]).tile)
            at(tiles_of[core]).memory.append(Use(f"local {sym} {nbytes} B", nbytes, lb.loc,
                                                 buffers=((sym, nbytes),)))
    _shim_bds(d, at, retired)
    return dict(sorted(tiles.items(), key=lambda kv: (kv[0][1], kv[0][0])))


def _shim_bds(d: Design, at: Callable[[Coord | None], TileUsage],
              retired: Callable[[], Retired] | None) -> None:
    """A runtime transfer takes a shim BD until a wait retires it (:mod:`aiedsl.ir.sequence`:
    the ids codegen gives, so the count is of the ids the MLIR uses)."""
    peak: dict[Coord, tuple[int, Loc]] = {}
    for i, bd in shim_bd_ids(d, retired() if retired else None).items():
        op = d.runtime[i]
        assert isinstance(op, Transfer)
        e = d.shim_end(op)
        assert e.tile is not None
        if bd + 1 > peak.get(e.tile, (0, op.loc))[0]:
            peak[e.tile] = (bd + 1, op.loc)
    for tile, (n, loc) in peak.items():
        at(tile).bds.append(Use("runtime transfers in flight", n, loc))
