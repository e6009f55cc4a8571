"""Allocation: DMA channels, buffer descriptors, locks and data-memory addresses, tile by tile.

The plan is mlir-aie's own: :func:`aiedsl.place.objectfifo.lower` says which buffers, locks,
channels and BD chains the objectfifo lowering creates and in which order; this module numbers
and places them as the passes after it do.

* **DMA channels** (``AIEObjectFifoStatefulTransform``, ``DMAChannelAnalysis``): fifo by fifo in
  emitted order, the producer end takes its tile's lowest free MM2S channel, then each consumer
  its tile's lowest free S2MM channel. A shim end's channel is its ``aie.shim_dma_allocation``.
* **BD ids** (``AIEAssignBufferDescriptorIDs``): per tile, channel by channel in the order the
  transform created them (that order above), each BD of a chain in chain order takes the lowest
  id not yet taken that the channel can use: any of 16 on a core; on a memtile BDs 0-23 for
  channels 0, 2, 4 and 24-47 for channels 1, 3, 5, whatever the direction. Each BD's next is
  the following one, the last's the first (a ring). Shim BDs belong to runtime transfers.
* **lock ids** (the transform's ``LockAnalysis``): per tile, the lowest free id, in the order the
  locks are created (store by store in op order; per store producer then consumer lock, part by
  part). Producer locks start at the number of buffers on memtiles and cores, at 0 on shims.
  A core's runtime-barrier locks (``aie.lock`` ops of the design, numbered by
  ``aie-assign-lock-ids``, which aiecc runs before the lowering) take the lowest ids first.
* **addresses** (``aie-assign-buffer-addresses``): :mod:`aiedsl.place.addresses`: bank-aware
  round-robin over the buffers largest first, the stack at the bottom of a core's memory, and
  one-after-the-other as the fallback when a buffer fits no bank. A core's runtime-parameter
  buffers and its copies of core-local buffers (``aie.buffer`` ops of the design, initial value
  or not: the pass looks only at sizes) are placed with its fifo buffers, after them in IR
  order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiedsl.ir.cores import Local
from aiedsl.ir.design import Design
from aiedsl.ir.physical import Bd, BufferAlloc, DmaChannel, LockAlloc, Physical
from aiedsl.place.addresses import bank_aware, sequential
from aiedsl.place.objectfifo import Channel, Lowering, lower
from aiedsl.targets import TargetModel

Coord = tuple[int, int]


def allocate(d: Design, target: TargetModel, low: Lowering | None = None) -> Physical:
    """Channels, BDs, locks and addresses for placed design ``d`` on ``target``, read off
    ``low`` (the plan of its objectfifo lowering, made here when not given): the same plan the
    resource check counted, so what is allocated is what was counted."""
    if low is None:
        low = lower(d, target)
    return Physical(channels=tuple(_channels(low, target)), buffers=tuple(_buffers(d, low, target)),
                    locks=tuple(_locks(d, low)), shared=d.physical.shared if d.physical else {})


def barrier_lock_name(barrier: str, tile: Coord) -> str:
    """The ``sym_name`` of barrier ``barrier``'s lock in ``tile``."""
    return f"{barrier}_{tile[0]}_{tile[1]}"


def local_buffer_name(b: Local, tile: Coord) -> str:
    """The ``sym_name`` of local ``b``'s copy in the core of ``tile``: its name when one core
    uses it, else ``<name>_<col>_<row>`` (mlir-aie names an unnamed buffer ``buffer_<col>_<row>``
    after its tile the same way)."""
    return b.name if len(b.cores) == 1 else f"{b.name}_{tile[0]}_{tile[1]}"


def _locks(d: Design, low: Lowering) -> list[LockAlloc]:
    out = []
    next_id: dict[Coord, int] = {}
    # aiecc assigns ids to the design's own aie.lock ops (aie-assign-lock-ids) before the
    # objectfifo lowering, whose LockAnalysis then skips them: barrier locks come first
    tile_of = {c.name: c.tile for c in d.cores}
    for b in d.barriers:
        for core in b.cores:
            tile = tile_of[core]
            assert tile is not None
            lid = next_id.get(tile, 0)
            next_id[tile] = lid + 1
            out.append(LockAlloc(tile=tile, id=lid, name=barrier_lock_name(b.name, tile),
                                 init=b.init, fifo=""))
    for s in low.stores:
        for name, init in s.locks:
            lid = next_id.get(s.tile, 0)
            next_id[s.tile] = lid + 1
            out.append(LockAlloc(tile=s.tile, id=lid, name=name, init=init, fifo=s.fifo))
    return out


def _channels(low: Lowering, target: TargetModel) -> list[DmaChannel]:
    taken: dict[Coord, set[int]] = {}
    out = []
    for ch in low.channels:
        kind = ch.end.endpoint.kind
        ids = [_next_bd(taken.setdefault(ch.tile, set()), ch, target) for _ in ch.chain]
        chain = tuple(Bd(id=i, buffer=b.buffer, offset=b.offset, length=b.length, dims=b.dims,
                         next=ids[(k + 1) % len(ids)], acquire=b.acquire, release=b.release)
                      for k, (i, b) in enumerate(zip(ids, ch.chain)))
        out.append(DmaChannel(tile=ch.tile, direction=ch.direction, channel=ch.channel,
                              fifo=ch.end.fifo.name, bds=tuple(ids) if kind != "shim" else (),
                              loc=ch.end.endpoint.loc, chain=chain))
    return out


def _next_bd(taken: set[int], ch: Channel, target: TargetModel) -> int:
    """The lowest free BD id channel ``ch`` can use (``BdIdGenerator::nextBdId``).

    Past the tile's last BD (a design over its limits, drawn by :func:`aiedsl.checks.draft`)
    ids go on counting, so that the map still shows every chain.
    """
    lim = target.limits(ch.end.endpoint.tile_kind)
    parity = lim.bds_per_channel_parity
    if parity is not None:
        first = parity * (ch.channel % 2)
        usable: Any = range(first, first + parity)
    else:
        usable = range(lim.bds)
    bd = next((i for i in usable if i not in taken), None)
    if bd is None:
        bd = max(taken | {lim.bds - 1}) + 1
    taken.add(bd)
    return bd


@dataclass(frozen=True)
class _RtpStore:
    """What allocation needs of a runtime-parameter or core-local buffer: its size (it belongs
    to no fifo)."""

    nbytes: int
    fifo: str | None = None


def _buffers(d: Design, low: Lowering, target: TargetModel) -> list[BufferAlloc]:
    stacks = {c.tile: c for c in d.cores if c.tile is not None}
    tiles = sorted({t for s in low.stores for t in s.tiles} | set(stacks),
                   key=lambda t: (t[1], t[0]))
    in_order = low.buffers_by_tile()
    out = []
    for tile in tiles:
        kind = target.kind_of(tile)
        if kind is None or kind == "shim":
            continue
        lim = target.limits(kind)
        core = stacks.get(tile)
        stack = core.stack if core is not None else 0
        bufs: list[tuple[Any, str]] = list(in_order.get(tile, ()))
        # aie.mlir lists rtp buffers right after the tiles, and the objectfifo lowering inserts
        # its buffers right after the last tile, so the rtps come after every fifo buffer
        bufs += [(_RtpStore(r.type.nbytes), r.name) for r in d.rtps
                 if core is not None and r.core == core.name]
        # aie.mlir lists the core-local buffers after the rtps, local by local
        bufs += [(_RtpStore(b.type.nbytes), local_buffer_name(b, tile)) for b in d.locals
                 if core is not None and core.name in b.cores]
        sizes = [s.nbytes for s, _ in bufs]
        placed = bank_aware(sizes, lim.memory, lim.banks, stack)
        if placed is None:
            placed = sequential(sizes, lim.memory, lim.banks, stack)
        if core is not None:  # the stack: reserved at the bottom, not an aie.buffer
            out.append(BufferAlloc(tile=tile, name=f"{core.name} stack", nbytes=stack,
                                   address=0, bank=0))
        for i, addr, bank in placed:  # in the order they were placed: largest first
            s, name = bufs[i]
            out.append(BufferAlloc(tile=tile, name=name, nbytes=s.nbytes, address=addr,
                                   bank=bank, fifo=s.fifo))
    return out
