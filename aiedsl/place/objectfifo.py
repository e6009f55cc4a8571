"""What mlir-aie's objectfifo lowering makes of a placed design: ends, buffers, locks, channels.

A model of ``AIEObjectFifoStatefulTransform`` (mlir-aie ``lib/Dialect/AIE/Transforms/
AIEObjectFifoStatefulTransform.cpp``) for the objectfifos and links aiedsl emits, so that
allocation (:mod:`aiedsl.place.alloc`) and the resource checks (:mod:`aiedsl.checks.resources`)
count and name exactly what the real lowering will create. It decides *what* exists and in
which order it is created; :func:`aiedsl.place.alloc.allocate` then numbers and places it as
the transform's lock analysis, ``aie-assign-bd-ids`` and ``aie-assign-buffer-addresses`` do.

The rules, in the transform's own order:

1. **Split.** Every fifo that needs a DMA (all but the shared-memory ones of
   :func:`aiedsl.place.placer.place`) becomes one objectfifo per end: the producer keeps the
   fifo's name (``a``), each consumer gets ``a_cons``, or ``a_<i>_cons`` when the fifo has more
   than one consumer (``i`` counts every consumer, whatever its tile kind). The transform
   inserts each consumer's objectfifo right after the original, so the op order is
   ``a, a_<n-1>_cons, ..., a_0_cons`` -- the order in which buffers and locks are created, hence
   lock ids and the buffers' order in the IR. A link's input is renamed to its memtile end
   (``a_l3`` -> ``a_l3_cons``).
2. **Sizes.** When aiedsl emits one depth for the whole fifo, a memtile or shim end keeps it and
   a core end gets one more than the largest number of elements its core acquires at once
   (``findObjectFifoSize``: 1 when that core acquires one element of a depth-1 fifo). When the
   depths differ, aiedsl emits mlir-aie's per-end list and every end gets exactly its own
   depth. A shared-memory fifo has the producer's depth.
3. **Elements.** Each end creates its buffers (``<end>_buff_<i>``) and a lock pair
   (``<end>_prod_lock_0`` starting at the number of buffers, ``<end>_cons_lock_0`` at 0) on its
   own tile -- except that a shim end creates only its two locks, both at 0, and that of a
   link's ends only one creates the memtile's buffers: the joined output of a join, the split
   input of a split (``distribute``), and for a 1-to-1 link the end with the larger element
   (the input on a tie). A join or split creates one lock pair per part
   (``_prod_lock_<k>``/``_cons_lock_<k>``, interleaved). A shared-memory fifo creates ``<fifo>_
   buff_<i>`` and one lock pair in the memory both cores reach. Elements are created in op
   order, memtile ones included: later mlir-aie sources create memtile objectfifos largest
   first, but the lowering the fixtures were made with (upstream 1e400306) does not -- its
   ``c_l3_0`` join, the largest, takes memtile locks 4-11 after ``a_l3_0_cons`` (0-1) and
   ``b_l3_0_cons`` (2-3). **A memtile buffer that does not fit spills** to a neighbouring
   memtile (:func:`spill`; ``createObjectFifoElements`` since mlir-aie PR 2432, memtiles only
   since PR 2660): buffer by buffer, in creation order, a buffer goes on its own memtile when
   the bytes of the buffers already created there plus its own fit the memtile
   (``calculateCurrentUsedMemory`` against ``getMemTileSize``), else on the left memtile, else
   on the right one, whichever first has room counted the same way (``findOrCreateTile``;
   memtiles reach both neighbours' memory, ``isLegalMemAffinity``), else on its own memtile
   anyway, where address assignment then fails (``memtile data memory``). A one-column device
   has no neighbour. Its locks, DMA channels and BDs stay on its own memtile. Since PR 3116
   (May 2026) mlir-aie sorts memtile fifos largest first and tries the emptier neighbour
   first; 1e400306, aiedsl's target, does neither.
4. **Channels.** Fifo by fifo in emitted order, the producer end takes the lowest free MM2S
   channel of its tile, then each consumer, in order, the lowest free S2MM channel of its own
   (``DMAChannelAnalysis``; a shim end's is its ``aie.shim_dma_allocation``) -- except that
   the memtile ends of a link with a spilled buffer go first, in the same order, and only to
   channels below :attr:`~aiedsl.targets.limits.TileLimits.neighbour_channels`
   (``analyzeCrossTileFIFOBuffers``, then ``assignDMAChannelIndices`` twice: those ends, then
   the rest); one that finds none free there is refused (``memtile DMA channels``: mlir-aie
   fails "number of ... DMA channel exceeded!").
5. **BD chains.** A core or memtile channel chains one BD per buffer of the end that owns the
   buffers, in buffer order, as a ring; a join's output and a split's input chain one BD per
   part per buffer (buffer-major) at the link's offsets, each part's BDs on its own lock pair;
   a join's input or a split's output chains one BD per buffer at its own offset on its part's
   lock pair; through a memtile the ends of a 1-to-1 link both move the whole (larger) element
   (``createMemTileDMA`` gives the end without the buffers the owner's count and length).
   Through a core tile (``createAIETileDMA``) each end keeps its own: one BD per buffer of its
   own depth, stopping where the link's buffers end, each moving its own element; aiedsl
   refuses a core-tile forward whose ends differ in depth or element size
   (:func:`aiedsl.checks.links.check_core_tile_forward`), so there both chains are the owner's.
   An S2MM BD acquires the producer lock and releases the consumer lock (by 1), an MM2S BD the
   reverse.
   ``dimensionsToStream`` lands on the producer end's BDs, a consumer's ``dimensionsFromStream``
   on its own. A shim channel has no BDs here (runtime transfers take those).
6. **Repeats** (a fifo's ``repeat_count``, ``repeat`` in aiedsl; ``ObjectFifoLinkOp::
   getRepeatCount`` gives a link the first of its outputs' repeats). The end that sends a fifo
   of repeat ``n`` chains each of its BDs ``n`` times in a row (buffer 0 ``n`` times, then
   buffer 1 ...), each acquiring and releasing 1; the link's first input end acquires and
   releases ``n`` per BD; and the link's producer locks start at ``n`` times the number of
   buffers. That is upstream 1e400306's lowering (``createMemTileDMA``, ``createAIETileDMA``,
   ``createObjectFifoLocks``); since mlir-aie PR 3115 (opened May 2026) a sending end of one buffer
   outside a join or split's parent takes one BD and the channel's start repeats it
   (``aie.dma_start(..., repeat_count = n - 1)``): fewer BDs, so a design that fits the older
   count fits both.

Example
-------
>>> low = lower(placed, get_target(placed.device))             # doctest: +SKIP
>>> [s.symbol for s in low.stores if s.tile == (0, 1)]        # doctest: +SKIP
['a_l3_0_cons', 'b_l3_0_cons', 'c_l3_0']
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from aiedsl.ir.core_ops import Acquire, Loop, Op
from aiedsl.ir.design import Design
from aiedsl.ir.fifos import Endpoint, Fifo, Link
from aiedsl.ir.loc import Loc
from aiedsl.ir.lowered_names import buffer_name, consumer_end, lock_names
from aiedsl.ir.types import Dim
from aiedsl.targets import TargetModel

Coord = tuple[int, int]
Direction = Literal["S2MM", "MM2S"]


@dataclass(frozen=True)
class End:
    """One end of a fifo as the transform splits it: an objectfifo of its own on one tile."""

    symbol: str
    """mlir-aie's name for it: ``a`` (producer), ``a_cons``, ``a_1_cons``."""
    fifo: Fifo
    endpoint: Endpoint
    port: Literal["produce", "consume"]
    index: int
    """Which consumer (0 for the producer)."""
    size: int
    """Elements (buffers) it has after the split."""
    link: Link | None = None
    """The memtile link this end belongs to."""

    @property
    def tile(self) -> Coord:
        """Its tile."""
        assert self.endpoint.tile is not None
        return self.endpoint.tile


@dataclass(frozen=True)
class Store:
    """The buffers and locks one objectfifo creates (``createObjectFifoElements``)."""

    symbol: str
    """The creating objectfifo (``a_cons``, ``c_l3_0``, or the shared fifo ``s``)."""
    fifo: str
    """The aiedsl fifo they belong to."""
    tile: Coord
    kind: str
    """Kind of ``tile``: shim, memtile or core."""
    nbytes: int
    """Bytes of one buffer."""
    numel: int
    """Elements of one buffer."""
    buffers: tuple[str, ...]
    locks: tuple[tuple[str, int], ...]
    """(name, initial value), in creation (= id) order: prod, cons per part."""
    loc: Loc
    link: Link | None = None
    shared: bool = False
    repeat: int = 1
    """The repeat its producer locks are scaled by: its link's (the first repeat of the link's
    outputs), or the fifo's own for a producer end outside a link; 1 for a consumer's."""
    homes: tuple[Coord, ...] = ()
    """The tile each buffer lives on, when one spilled to a neighbouring memtile (rule 3);
    empty when all are on :attr:`tile`."""

    @property
    def footprint(self) -> int:
        """Bytes of all its buffers: what it takes of its tile's data memory."""
        return len(self.buffers) * self.nbytes

    @property
    def tiles(self) -> tuple[Coord, ...]:
        """The tile of each buffer, in buffer order."""
        return self.homes or (self.tile,) * len(self.buffers)

    @property
    def spilled(self) -> bool:
        """Whether a buffer lives on another memtile than its locks and DMAs."""
        return any(t != self.tile for t in self.tiles)

    def lock_pair(self, part: int) -> tuple[str, str]:
        """(producer lock, consumer lock) of part ``part``."""
        return self.locks[2 * part][0], self.locks[2 * part + 1][0]


@dataclass(frozen=True)
class BdPlan:
    """One BD of a chain before ids: what it moves and the locks around it."""

    buffer: str
    offset: int
    length: int
    dims: tuple[Dim, ...]
    acquire: tuple[str, int]
    release: tuple[str, int]


@dataclass(frozen=True)
class Channel:
    """One DMA channel of one end and its chain."""

    end: End
    direction: Direction
    channel: int
    chain: tuple[BdPlan, ...]
    neighbour: bool = False
    """Whether its buffers include one in a neighbouring memtile (rule 4: a low channel)."""

    @property
    def tile(self) -> Coord:
        """Its tile."""
        return self.end.tile


@dataclass
class Lowering:
    """Everything the transform decides, in its creation orders."""

    ends: list[End] = field(default_factory=list)
    """Every objectfifo after the split, in the transform's op order."""
    stores: list[Store] = field(default_factory=list)
    """Buffers and locks, in creation order (lock ids follow it per tile)."""
    channels: list[Channel] = field(default_factory=list)
    """DMA channels, in creation order (BD ids follow it per tile)."""
    by_end: dict[tuple[str, str, int], End] = field(default_factory=dict)
    store_of: dict[str, Store] = field(default_factory=dict)
    """The store each end's buffers live in, by end symbol (a link's ends share one)."""
    channel_of: dict[str, Channel] = field(default_factory=dict)
    """Each end's channel, by end symbol."""

    def end(self, fifo: str, port: str, index: int = 0) -> End:
        """The end of ``fifo`` on ``port`` (the ``index``-th consumer)."""
        return self.by_end[(fifo, port, index)]

    def buffers_by_tile(self) -> dict[Coord, list[tuple[Store, str]]]:
        """The buffers of each tile that holds any, in the order the lowered IR lists them.

        Each objectfifo's buffers are inserted right after the last ``aie.tile``, so a later
        store's buffers come before an earlier one's; within a store they keep their index order.
        """
        out: dict[Coord, list[tuple[Store, str]]] = {}
        for s in reversed(self.stores):
            for b, t in zip(s.buffers, s.tiles):
                out.setdefault(t, []).append((s, b))
        return out


def spill(stores: Sequence[tuple[Coord, int, int]], target: TargetModel
          ) -> list[tuple[Coord, ...]]:
    """Where mlir-aie 1e400306 puts each buffer of memtile stores ``(tile, buffers, bytes of
    one)``, given in creation order: the tile of each buffer (rule 3 of the module)."""
    used: dict[Coord, int] = defaultdict(int)
    room = target.memtile.memory
    out = []
    for (col, row), n, nbytes in stores:
        tiles = []
        for _ in range(n):
            at = (col, row)
            if used[at] + nbytes > room:
                at = next(((c, row) for c in target.memtile_neighbours(col)
                           if used[(c, row)] + nbytes <= room), at)
            used[at] += nbytes
            tiles.append(at)
        out.append(tuple(tiles))
    return out


def lower(d: Design, target: TargetModel) -> Lowering:
    """The objectfifo lowering of placed design ``d`` on ``target``, its device's model."""
    assert d.placed, "lower() needs a placed design"
    shared = d.physical.shared if d.physical else {}
    out = Lowering()
    link_of: dict[tuple[str, str], Link] = {}
    for link in d.links:
        for name in link.srcs:
            link_of[(name, "consume")] = link
        for name in link.dsts:
            link_of[(name, "produce")] = link
    acquired = _max_acquires(d)

    # 1-2: the split, in op order, with each end's size
    for f in d.fifos:
        listed = f.depth_per_end
        prod = End(f.name, f, f.producer, "produce", 0,
                   f.producer.depth if f.name in shared
                   else _size(f.producer, "produce", f, listed, acquired),
                   link_of.get((f.name, "produce")) if f.producer.is_link_end else None)
        out.ends.append(prod)
        out.by_end[(f.name, "produce", 0)] = prod
        if f.name in shared:
            continue
        cons = []
        for i, c in enumerate(f.consumers):
            symbol = consumer_end(f.name, i, len(f.consumers))
            end = End(symbol, f, c, "consume", i, _size(c, "consume", f, listed, acquired),
                      link_of.get((f.name, "consume")) if c.is_link_end else None)
            cons.append(end)
            out.by_end[(f.name, "consume", i)] = end
        out.ends += reversed(cons)  # each is inserted right after the original

    # 3: elements
    made: dict[int, Store] = {}  # link id -> its store
    for e in out.ends:
        if e.link is not None:
            if id(e.link) in made or (e.fifo.name, e.port) != buffer_owner(d, e.link):
                continue
            parts = _parts(e.link)
        else:
            parts = 1
        tile = shared.get(e.fifo.name, e.tile)
        store = _store(e, tile, parts, shared=e.fifo.name in shared,
                       repeat=link_repeat(d, e.link) if e.link is not None else
                       e.fifo.repeat if e.port == "produce" else 1)
        out.stores.append(store)
        if e.link is not None:
            made[id(e.link)] = store
    mem = [i for i, s in enumerate(out.stores) if s.kind == "memtile" and s.buffers]
    for i, homes in zip(mem, spill([(out.stores[i].tile, len(out.stores[i].buffers),
                                     out.stores[i].nbytes) for i in mem], target)):
        if any(t != out.stores[i].tile for t in homes):
            out.stores[i] = replace(out.stores[i], homes=homes)
    for store in out.stores:
        if store.link is not None:
            made[id(store.link)] = store
    for e in out.ends:
        if e.link is not None:
            out.store_of[e.symbol] = made[id(e.link)]
    for s in out.stores:
        if s.link is None:
            out.store_of[s.symbol] = s

    # 4-5: channels and chains
    order = [e for f in d.fifos if f.name not in shared
             for e in [out.end(f.name, "produce")] + [out.end(f.name, "consume", i)
                                                      for i in range(len(f.consumers))]]
    near = {e.symbol for e in order if e.link is not None and out.store_of[e.symbol].spilled}
    taken: dict[tuple[Coord, str], set[int]] = defaultdict(set)
    number: dict[str, int] = {}
    for first in (True, False):  # the ends reaching a neighbour's memory take channels first
        for e in order:
            if (e.symbol in near) != first:
                continue
            held = taken[(e.tile, _direction(e))]
            cap = target.memtile.neighbour_channels if first else None
            # past the cap (refused by the resource check) the next free one, for the map
            n = next((c for c in range(cap or 0) if c not in held),
                     next(c for c in range(len(held) + 1) if c not in held))
            held.add(n)
            number[e.symbol] = n
    for e in order:
        direction = _direction(e)
        chain = () if e.endpoint.kind == "shim" else _chain(e, direction, out.store_of[e.symbol])
        ch = Channel(e, direction, number[e.symbol], chain, e.symbol in near)
        out.channels.append(ch)
        out.channel_of[e.symbol] = ch
    return out


def _direction(e: End) -> Direction:
    """The DMA direction of end ``e``: a producer sends (MM2S), a consumer receives (S2MM)."""
    return "MM2S" if e.port == "produce" else "S2MM"


# -- sizes -------------------------------------------------------------------------------------

def _walk(body: tuple[Op, ...]) -> Iterator[Op]:
    for op in body:
        yield op
        if isinstance(op, Loop):
            yield from _walk(op.body)


def _max_acquires(d: Design) -> dict[tuple[str, str, str], int]:
    """(core, fifo, port) -> the most elements one acquire of that core takes."""
    out: dict[tuple[str, str, str], int] = {}
    for core in d.cores:
        for op in _walk(core.body):
            if isinstance(op, Acquire):
                key = (core.name, op.fifo, op.port)
                out[key] = max(out.get(key, 0), op.count)
    return out


def _size(e: Endpoint, port: str, f: Fifo, listed: bool,
          acquired: dict[tuple[str, str, str], int]) -> int:
    """Buffers an end of a DMA fifo gets (``findObjectFifoSize``, or the per-end depth list)."""
    if listed or e.kind != "core":
        return e.depth
    n = acquired.get((e.core or "", f.name, port), 0)
    if n == 0:
        return e.depth
    return 1 if n == 1 and e.depth == 1 else n + 1


# -- elements ----------------------------------------------------------------------------------

def _parts(link: Link) -> int:
    """Lock pairs of a link's store: one per part of a join or split (mlir-aie tells a join
    and a distribute by their counts of inputs and outputs, not by how aiedsl built them)."""
    if len(link.srcs) > 1:
        return len(link.srcs)
    if len(link.dsts) > 1:
        return len(link.dsts)
    return 1


def buffer_owner(d: Design, link: Link) -> tuple[str, Literal["produce", "consume"]]:
    """The (fifo, port) of the end of ``link`` that creates its buffers
    (``createObjectFifoElements``): the joined output of a join, the split input of a split
    (mlir-aie tells them by their counts of inputs and outputs), and for a 1-to-1 link the end
    with the larger element, the input on a tie. The other ends have no buffers of their own:
    their DMAs move the owner's, so a depth given to one of them counts nowhere."""
    if len(link.srcs) > 1:
        return link.dsts[0], "produce"
    if len(link.dsts) > 1:
        return link.srcs[0], "consume"
    into, outof = d.fifo(link.srcs[0]), d.fifo(link.dsts[0])
    if into.elem.numel >= outof.elem.numel:
        return into.name, "consume"
    return outof.name, "produce"


def link_repeat(d: Design, link: Link) -> int:
    """The repeat mlir-aie gives link ``link`` (``ObjectFifoLinkOp::getRepeatCount``: the first
    of its outputs' that has one), 1 when none repeats."""
    return next((r for r in (d.fifo(n).repeat for n in link.dsts) if r > 1), 1)


def _store(e: End, tile: Coord, parts: int, shared: bool, repeat: int) -> Store:
    kind = e.endpoint.tile_kind
    symbol = e.symbol
    if kind == "shim":  # no buffers; the lock pair counts none
        buffers: tuple[str, ...] = ()
        init = 0
    else:
        buffers = tuple(buffer_name(symbol, i) for i in range(e.size))
        init = e.size * repeat  # createObjectFifoLocks: (elements - init values) x repeat
    locks = tuple(lock for k in range(parts)
                  for lock in zip(lock_names(symbol, k), (init, 0)))
    loc = e.link.loc if e.link is not None else (e.fifo.loc if shared else e.endpoint.loc)
    return Store(symbol, e.fifo.name, tile, kind, e.fifo.elem.nbytes, e.fifo.elem.numel, buffers,
                 locks, loc, e.link, shared, repeat)


# -- chains ------------------------------------------------------------------------------------

def _chain(e: End, direction: Direction, store: Store) -> tuple[BdPlan, ...]:
    link = e.link
    own = e.fifo.elem.numel
    # a repeated fifo's sender chains each BD `copies` times in a row; a repeated link's first
    # input end takes and gives `n` per BD (its producer locks start n times higher)
    copies = e.fifo.repeat if e.port == "produce" else 1
    n = store.repeat if link is not None and e.port == "consume" and \
        e.fifo.name == link.srcs[0] else 1
    if link is None or _parts(link) == 1:
        buffers, length = store.buffers, own
        if link is not None and store.symbol != e.symbol:  # the other end of a 1-to-1 link
            if link.via == "memtile":  # createMemTileDMA: the owner's buffers and length
                length = max(own, store.numel)
            else:
                # createAIETileDMA: this end's own depth, cut at the link's buffers, and its own
                # length; a design where these differ from the owner's is refused
                # (checks.links), so only a map of one draws this chain
                buffers = store.buffers[:e.size]
        return tuple(_bd(e, direction, store, b, 0, length, 0, n)
                     for b in buffers for _ in range(copies))
    lengths = _transfer_lengths(link, store)
    if store.symbol == e.symbol:  # the join's output or the split's input: every part
        # (a repeated join output is refused: mlir-aie's lowering of one reads past the link's
        # offsets, so a draft of it shows each part's BD once)
        return tuple(_bd(e, direction, store, b, link.offsets[k], lengths[k], k, n)
                     for b in store.buffers for k in range(len(lengths)))
    k = (link.srcs if len(link.srcs) > 1 else link.dsts).index(e.fifo.name)
    return tuple(_bd(e, direction, store, b, link.offsets[k], lengths[k], k, n)
                 for b in store.buffers for _ in range(copies))


def _transfer_lengths(link: Link, store: Store) -> list[int]:
    """Elements each part moves: up to the next part's offset, the last to the element's end
    (``getJoinTransferLengths`` / ``getDistributeTransferLengths``)."""
    offs = list(link.offsets)
    return [b - a for a, b in zip(offs, offs[1:] + [store.numel])]


def _bd(e: End, direction: Direction, store: Store, buffer: str, offset: int, length: int,
        part: int, n: int = 1) -> BdPlan:
    prod, cons = store.lock_pair(part)
    take, give = (prod, cons) if direction == "S2MM" else (cons, prod)
    return BdPlan(buffer, offset, length, e.endpoint.dims, (take, n), (give, n))
