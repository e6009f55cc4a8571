"""Per-tile resource use of a placed design, and the checks against the target's limits.

The same :class:`TileUsage` table feeds ``report.txt``. What counts is what mlir-aie's objectfifo
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

from fractions import Fraction

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from math import ceil

from aiedsl.ir.program import calls
from aiedsl.ir.sequence import Retired, retirements, shim_bd_ids
from aiedsl.errors import DesignError, counted
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.ir.runtime import Transfer, Wait
from aiedsl.checks.buffer_setters import Setter, setter
from aiedsl.checks.spill_fix import spill_fix
from aiedsl.place.alloc import local_buffer_name
from aiedsl.place.objectfifo import Lowering, Store, lower
from aiedsl.targets import DEVICES, TargetModel

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
        low = lower(d)
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

    def add_buffers(u: TileUsage, s: Store, loc: Loc, by: Setter | None = None) -> None:
        # a memtile buffer that spilled counts where it lives (objectfifo rule 3), named so
        for tile in dict.fromkeys(s.tiles):
            here = tuple((b, s.nbytes) for b, t in zip(s.buffers, s.tiles) if t == tile)
            away = "" if tile == s.tile else f" spilled from memtile {s.tile}"
            at(tile).memory.append(Use(f"{s.fifo} {len(here)} x {s.nbytes} B{away}",
                                       len(here) * s.nbytes, loc, fifo=s.fifo, buffers=here,
                                       setter=by if tile == s.tile else None))
        if not s.buffers:
            u.memory.append(Use(f"{s.fifo} 0 x {s.nbytes} B", 0, loc, fifo=s.fifo, setter=by))

    def add_locks(u: TileUsage, label: str, s: Store, loc: Loc) -> None:
        u.locks.append(Use(label, len(s.locks), loc, fifo=s.fifo, locks=s.locks))

    for c in d.cores:
        u = at(c.tile)
        u.runs = f"{c.name}: " + ", ".join(sorted({op.kernel for op in calls(c)})) \
            if calls(c) else c.name
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
                add_buffers(u, s, f.loc)  # where its depth is given: what the fix changes
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


def queue_fix(op: str) -> str:
    """How to keep a shim channel's task queue from overflowing, for fills or drains (said by
    the check and by the simulator's count)."""
    if op == "fill":
        return ("a sync retires what it waits for (drains, and fills given wait=True), what the "
                "same channel did before, and the fills the waited drains needed: give every "
                "fourth of these fills wait=True and rt.sync() after it, or move more data per "
                "transfer")
    return "rt.sync() after every fourth drain, or move more data per transfer"


def check_task_queues(d: Design, target: TargetModel,
                      retired: Callable[[], Retired] | None = None) -> None:
    """At most ``shim_task_queue`` transfers are pushed onto one shim channel between waits.

    A wait retires what :func:`aiedsl.ir.sequence.retirements` says (its own transfer and the
    earlier ones of its fifo; for a drain also the fills it is shown to have needed); until then
    every transfer issued on a channel may still be queued, and the NPU drops a fifth. The
    simulator counts again on the run's own clocks
    (:func:`aiedsl.sim.runtime.check_task_queues`). ``retired`` as for :func:`usage`.
    """
    queued: dict[tuple[Coord, str], list[Transfer]] = defaultdict(list)
    waits = retired() if retired else retirements(d)
    for i, op in enumerate(d.runtime):
        if isinstance(op, Wait):
            gone = {id(d.runtime[t]) for t in waits[i]}
            for q in queued.values():
                q[:] = [t for t in q if id(t) not in gone]
            continue
        if not isinstance(op, Transfer):  # an rtp write pushes no task
            continue
        e = d.shim_end(op)
        assert e.tile is not None
        q = queued[(e.tile, op.fifo)]
        q.append(op)
        if len(q) > target.shim_task_queue:
            raise DesignError(
                "shim task queue", f"{len(q)} transfers ({'fills' if op.op == 'fill' else 'drains'}"
                f" of '{op.fifo}') are pushed onto one DMA channel of shim tile {e.tile} before a "
                "wait shows the first done", loc=op.loc,
                limit=f"{target.shim_task_queue} queued tasks per channel: the NPU drops a push "
                "onto a full queue and the run hangs (mlir-aie PR 3734)", found=str(len(q)),
                related=[(f"rt.{t.op} {i + 1}", t.loc) for i, t in enumerate(q[:-1])
                         if t.loc != op.loc],
                fix=queue_fix(op.op))


def check_resources(d: Design, target: TargetModel, low: Lowering | None = None,
                    retired: Callable[[], Retired] | None = None) -> dict[Coord, TileUsage]:
    """Check every tile's use against ``target``; return the usage table (``low`` and
    ``retired`` as for :func:`usage`)."""
    table = usage(d, target, low, retired)
    links = {f: k for k, link in enumerate(d.links) for f in (*link.srcs, *link.dsts)}
    repeats = {f.name: f.repeat for f in d.fifos if f.repeat > 1}
    _check_shim_totals(table, target)
    plan = low if low is not None else lower(d)
    for u in table.values():
        _check_tile(u, target, links, repeats,
                    lambda tile: spill_fix(d, plan, target, tile) if target.cols > 1 else None)
    _check_neighbour_channels(plan, target)
    check_task_queues(d, target, retired)
    if len(d.tensors) > target.runtime_buffers:
        raise DesignError(
            "runtime buffers", f"design '{d.name}' takes {len(d.tensors)} host tensors",
            loc=d.loc, limit=f"{target.runtime_buffers}, the host buffers every aiecc builds a "
            "kernel for (XRT groups 3..7: aiecc's kernels.json declared bo0..bo4 until mlir-aie "
            "PR 3252, and XRT crashes on a sixth there; the firmware translates only those five "
            "addresses)", found=str(len(d.tensors)),
            fix="pack tensors together into fewer host buffers (one tensor holding several, "
            "each fill or drain at its own offset)")
    return table


SHOWN_USES = 8
"""The most host ends the device-wide shim channel error lists under its count: more are cut
to one fewer, and the count says how many are left out."""


def _check_shim_totals(table: dict[Coord, TileUsage], target: TargetModel) -> None:
    """Refuse host ends no placement fits: more fills (or drains) than every shim tile of the
    device has channels together, where pinning a fifo to another column cannot help."""
    shims = [u for u in table.values() if u.kind == "shim"]
    for direction, field_, per, fewer in (
            ("output (MM2S)", "dma_out", target.shim.dma_out,
             "fill fewer fifos from the host: one fifo filled once can feed several cores, "
             "split at a memtile (f.split(...)) or consumed by each (a broadcast)"),
            ("input (S2MM)", "dma_in", target.shim.dma_in,
             "drain fewer fifos to the host: one fifo drained once can gather several cores' "
             "results, joined at a memtile (join([...]))")):
        uses = sorted((x for u in shims for x in getattr(u, field_)),
                      key=lambda x: (x.loc.file, x.loc.line))
        have = per * target.cols
        if len(uses) <= have:
            continue
        # every host end that needs a channel, so the user sees all the fifos to merge (three
        # were listed under "found: 4"); a long list is cut, and says how many it leaves out
        shown = uses if len(uses) <= SHOWN_USES else uses[:SHOWN_USES - 1]
        left = len(uses) - len(shown)
        raise DesignError(
            f"shim DMA {direction} channels",
            f"the design's host ends need {len(uses)} shim DMA {direction} channels, and the "
            f"{counted(target.cols, 'shim tile')} of {target.name} "
            f"{'has' if target.cols == 1 else 'have'} {have}",
            loc=uses[have].loc, limit=f"{have} ({per} per shim tile, "
            f"{counted(target.cols, 'shim tile')}): no choice of columns can fit them",
            found=str(len(uses)) + (f" (the first {len(shown)} below, and {left} more)"
                                    if left else ""),
            related=[(x.label, x.loc) for x in shown],
            fix=fewer + (f", or a device with more columns than {target.name}"
                               if target.cols < max(t.cols for t in DEVICES.values()
                                                    if t.family == target.family) else ""))


def _check_tile(u: TileUsage, target: TargetModel, links: dict[str, int],
                repeats: dict[str, int],
                spill_fix: Callable[[Coord], str | None] = lambda tile: None) -> None:
    """Refuse the first limit ``u`` exceeds (``links``: each linked fifo's link; ``repeats``:
    each repeated fifo's repeat; ``spill_fix``: the fix for an overfull memtile whose buffers
    may spill to a neighbour, None where none can)."""
    lim = target.limits(u.kind)  # type: ignore[arg-type]
    mem = TileUsage.total(u.memory)
    if u.kind != "shim" and mem > lim.memory:
        spilling = spill_fix(u.tile) if u.kind == "memtile" else None
        fix = spilling if spilling is not None else (f"free {mem - lim.memory:,} bytes: " + (
            ("lower a fifo's depth (depth=1 single-buffers it), use smaller tiles"
             + (", declare smaller locals" if any(x.label.startswith("local ")
                                                   for x in u.memory) else "")
             + (", or give the core a smaller stack" if u.runs else ""))
            if u.kind == "core" else _memtile_memory_fix(u.memory, mem - lim.memory)))
        room = f"{lim.memory:,} bytes"
        if u.kind == "memtile" and target.cols > 1:  # objectfifo rule 3: none had room either
            room += (", and no neighbouring memtile has room for what does not fit (mlir-aie "
                      "moves such a buffer to the left or right memtile where it fits)")
        _over(u, "data memory", room, f"{mem:,} bytes", u.memory, fix, at_largest=True)
    move = {"core": "use fewer fifos in this core (pack two inputs or two outputs into one fifo "
            "element), or move some work to another core",
            # check_memtile_channels refuses links no placement fits, and the placer finds one
            # when it exists: reached only if its search gave up
            "memtile": "pin links to memtiles with via=memtile(col) so that no memtile's links "
            "need more channels than it has, or split/join over fewer parts",
            "shim": "pin a fifo's host end to another column with shim=shim(col) (fifo() "
            "and channel() take it)"}[u.kind]
    if target.cols == 1 and u.kind != "core":  # no other column to move to
        move = ("use fewer fifos with a host end here (a fill or a drain takes a shim channel)"
                if u.kind == "shim" else "split/join over fewer parts, or use fewer links")
        move += f", or a device with more columns than {target.name}"
    for direction, uses, limit in (("input (S2MM)", u.dma_in, lim.dma_in),
                                   ("output (MM2S)", u.dma_out, lim.dma_out)):
        if len(uses) > limit:
            _over(u, f"DMA {direction} channels", str(limit), str(len(uses)), uses, move)
    if TileUsage.total(u.locks) > lim.locks:
        _over(u, "locks", str(lim.locks), str(TileUsage.total(u.locks)), u.locks,
              "use fewer fifos on this tile or move one elsewhere")
    repeated = sorted({x.fifo for x in u.bds if x.fifo in repeats})
    # each BD of a repeated fifo's sender is chained `repeat` times (mlir-aie 1e400306)
    also = "" if not repeated else "; " + ", ".join(
        f"'{r}' (repeat={repeats[r]})" for r in repeated) + " takes as many BDs per buffer as " \
        "its repeat (mlir-aie chains each BD that many times; since PR 3115 one for a fifo of " \
        "one buffer): a lower repeat takes fewer"
    if lim.bds_per_channel_parity is not None:
        for parity, uses in enumerate(u.bds_by_parity):
            n = TileUsage.total(uses)
            if n > lim.bds_per_channel_parity:
                owners = {links.get(x.fifo or "", -1 - i) for i, x in enumerate(uses)}
                names = " and ".join(f"'{x.label}'" for x in uses)
                _over(u, f"buffer descriptors of {'even' if parity == 0 else 'odd'} channels",
                      f"{lim.bds_per_channel_parity} (BDs {0 if parity == 0 else 24}-"
                      f"{23 if parity == 0 else 47})", str(n), uses,
                      (_elsewhere(target) if len(owners) > 1 else
                       f"one link takes them all ({names}), so another memtile would not "
                       "help: lower the depth the link has here") + also)
    elif TileUsage.total(u.bds) > lim.bds:
        _over(u, "buffer descriptors", str(lim.bds), str(TileUsage.total(u.bds)), u.bds,
              "move a tiled tensor in one transfer (rt.fill(f, t, tiles(t, (th, tw))) is one "
              "BD for all its tiles), wait (rt.sync()) between batches of runtime transfers, or "
              "spread the fifos' host ends over more columns (shim=shim(col))"
              if u.kind == "shim" else
              "lower fifo depths, acquire fewer elements at once (given one depth, a core's end "
              "of a fifo it consumes takes one buffer, and BD, more than its largest acquire), "
              "or move a fifo to another core" + also)


def _check_neighbour_channels(low: Lowering, target: TargetModel) -> None:
    """A memtile DMA channel moving a buffer that spilled to a neighbouring memtile must be a
    low one (:attr:`~aiedsl.targets.model.TileLimits.neighbour_channels`; objectfifo rule 4)."""
    cap = target.memtile.neighbour_channels
    if cap is None:
        return
    for ch in low.channels:
        if not ch.neighbour or ch.channel < cap:
            continue
        same = [c for c in low.channels if c.neighbour and c.tile == ch.tile
                and c.direction == ch.direction]
        store = low.store_of[ch.end.symbol]
        away = sorted({t for t in store.tiles if t != store.tile})
        raise DesignError(
            "memtile DMA channels", f"memtile {ch.tile} needs {len(same)} {ch.direction} "
            f"channels for fifos with buffers spilled to a neighbouring memtile "
            f"({', '.join(f'memtile {t}' for t in away)}), and only channels 0-{cap - 1} reach "
            "a neighbour's memory", loc=ch.end.endpoint.loc,
            limit=f"{cap} {ch.direction} channels per memtile (mlir-aie "
            "getMaxChannelNumForAdjacentMemTile; its objectfifo lowering fails 'number of "
            f"{'output' if ch.direction == 'MM2S' else 'input'} DMA channel exceeded!')",
            found=str(len(same)),
            related=[(f"{c.end.fifo.name} ({c.direction} {c.channel})", c.end.endpoint.loc)
                     for c in same],
            fix="give the memtile's largest fifos fewer buffers so that they fit their own "
            "memtile, or split/join over fewer parts")


def _elsewhere(target: TargetModel) -> str:
    """The fix for a memtile whose links together take more BDs than it has: the placer puts
    links where they have room (:mod:`aiedsl.place.memtiles`), and pins that stand in its way
    are refused before (:func:`aiedsl.checks.memtiles.check_memtile_room`), so moving one
    would not help."""
    if target.cols * len(target.memtile_rows) > 1:
        return ("lower fifo depths: aiedsl finds no placement of the links that gives every "
                f"memtile of {target.name} room for its links' channels, memory and BDs")
    bigger = any(t.family == target.family and t.cols > target.cols for t in DEVICES.values())
    return "lower fifo depths" + (f", or use a device with more memtiles than {target.name}"
                                  if bigger else "")


def _largest(uses: list[Use]) -> Use:
    """The largest use, the last of equals: where a memory error is reported."""
    return max(reversed(uses), key=lambda x: x.amount)


def _memtile_memory_fix(uses: list[Use], excess: int) -> str:
    """How to free ``excess`` bytes of a memtile: fewer buffers for its largest link, said the
    way the design sets them (a forward's depth= does nothing when its input owns the buffers),
    else smaller or fewer tiles per memtile."""
    rest = "use smaller tiles, or split the data over more memtiles"
    big = _largest(uses)
    if big.setter is None or not big.buffers:
        return ("give the memtile's largest fifos fewer buffers (a channel's host_depth=, "
                "which sets its memtile side: its depth= sets only the cores'; a linked fifo's "
                "depth=, e.g. f.forward(depth=1)), " + rest)
    n, size = len(big.buffers), big.buffers[0][1]
    keep = n - ceil(excess / size)
    if keep >= 1:
        return f"{big.setter.to(keep)}, {rest}"
    steps = [f"{big.setter.to(1)} (that frees {(n - 1) * size:,} of them)"] if n > 1 else []
    if len(uses) > 1:
        steps.append("give the memtile's other fifos fewer buffers")
    return ", ".join(steps + [rest])


def _over(u: TileUsage, what: str, limit: str, found: str, uses: list[Use], fix: str,
          at_largest: bool = False) -> None:
    # memory is reported at its largest user (what the fix shrinks), the others at the last
    where = (_largest(uses) if at_largest else uses[-1]).loc if uses else None
    raise DesignError(
        f"{u.kind} {what}", f"{'memtile' if u.kind == 'memtile' else u.kind + ' tile'} {u.tile}"
        f"{' (' + u.runs + ')' if u.runs else ''} "
        f"needs more {what} than it has", loc=where, limit=limit,
        found=found, related=[(f"{x.label}: {x.amount}", x.loc) for x in uses], fix=fix)
