"""Allocation: DMA channels, buffer descriptors, locks and data-memory addresses, tile by tile.

It reads the checked usage table (:func:`aiedsl.checks.resources.usage`), so whatever it hands
out has already been counted against the target's limits; it decides *which* channel, BD, lock
and address each fifo endpoint gets, the way mlir-aie's objectfifo lowering and buffer
allocator would:

* DMA channels: lowest free index, fifo by fifo in emitted order (producer, then consumers);
* BDs: one per buffer of a channel's chain; memtile channels 0, 2, 4 draw from BDs 0-23 and
  channels 1, 3, 5 from BDs 24-47; shim BDs belong to runtime transfers, not to channels;
* locks: two per fifo side (producer lock starting at the depth, consumer lock at 0);
* addresses: the stack at 0, then the largest buffers first, each into the bank that keeps
  the buffers one kernel call reads or writes together, and a fifo's ping and pong, apart;
  when a buffer fits no bank, every buffer on the tile is laid out one after the other
  (mlir-aie's fallback from bank-aware to basic-sequential allocation).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from aiedsl.checks.program import acquires, calls
from aiedsl.checks.resources import TileUsage
from aiedsl.ir import BufferAlloc, BufferArg, Design, DmaChannel, LockAlloc, Physical
from aiedsl.targets import TargetModel, get_target

Coord = tuple[int, int]


@dataclass(frozen=True)
class _Item:
    name: str
    nbytes: int
    fifo: str | None
    order: int


def allocate(d: Design, table: dict[Coord, TileUsage]) -> Physical:
    """Channels, BDs, locks and addresses for placed design ``d`` with usage ``table``."""
    target = get_target(d.device)
    together = _used_together(d)
    channels: list[DmaChannel] = []
    locks: list[LockAlloc] = []
    buffers: list[BufferAlloc] = []
    for tile, u in table.items():
        channels += _channels(u, target)
        lock_id = 0
        for use in u.locks:
            for name, init in use.locks:
                locks.append(LockAlloc(tile=tile, id=lock_id, name=name, init=init,
                                       fifo=use.fifo))
                lock_id += 1
        if u.kind != "shim":
            buffers += _addresses(u, target, together.get(tile, []))
    shared = d.physical.shared if d.physical else {}
    return Physical(channels=tuple(channels), buffers=tuple(buffers), locks=tuple(locks),
                    shared=shared)


def _channels(u: TileUsage, target: TargetModel) -> list[DmaChannel]:
    lim = target.limits(u.kind)  # type: ignore[arg-type]
    parity = lim.bds_per_channel_parity
    next_bd = [0, parity or 0]  # memtile: even channels from BD 0, odd ones from BD 24
    chans = [(use.order, direction, ch, use)
             for direction, uses in (("S2MM", u.dma_in), ("MM2S", u.dma_out))
             for ch, use in enumerate(uses)]
    out = []
    for _, direction, ch, use in sorted(chans, key=lambda c: c[0]):
        pool = ch % 2 if parity else 0
        bds = tuple(range(next_bd[pool], next_bd[pool] + use.bds))
        next_bd[pool] += use.bds
        out.append(DmaChannel(tile=u.tile, direction=direction, channel=ch,  # type: ignore[arg-type]
                              fifo=use.fifo, bds=bds, loc=use.loc))
    return out


def _used_together(d: Design) -> dict[Coord, list[set[str]]]:
    """Per core tile, the sets of fifos whose buffers one kernel call touches at once."""
    out: dict[Coord, list[set[str]]] = defaultdict(list)
    for c in d.cores:
        assert c.tile is not None
        acq = acquires(c)
        for call in calls(c):
            fifos = {acq[a.value].fifo for a in call.args
                     if isinstance(a, BufferArg) and a.value in acq}
            if len(fifos) > 1:
                out[c.tile].append(fifos)
    return out


def _addresses(u: TileUsage, target: TargetModel, together: list[set[str]]
               ) -> list[BufferAlloc]:
    lim = target.limits(u.kind)  # type: ignore[arg-type]
    items = [_Item(name, nbytes, use.fifo or None, i)
             for i, (use, (name, nbytes)) in enumerate(
                 (use, b) for use in u.memory for b in use.buffers)]
    stack = [it for it in items if it.fifo is None]
    rest = [it for it in items if it.fifo is not None]
    # Greedy twice: once spreading a fifo's ping and pong over banks, once keeping them
    # together (which leaves more banks for other operands); keep the one with fewer clashes.
    tries = [_bank_aware(u.tile, stack, rest, lim.memory, lim.banks, together, pingpong)
             for pingpong in (1, -1)]
    done = [t for t in tries if t is not None]
    placed = min(done, key=lambda t: t[1])[0] if done else None
    if placed is None:
        placed = _sequential(u.tile, stack + rest, lim.memory // lim.banks)
    return sorted(placed, key=lambda b: b.address)


_CO_USE = 10
"""Weight of two operands of one kernel call in one bank (a stall every cycle both are read),
against 1 for a fifo's ping and pong (a DMA write beside a core read)."""


def _bank_aware(tile: Coord, stack: list[_Item], items: list[_Item], memory: int, banks: int,
                together: list[set[str]], pingpong: int
                ) -> tuple[list[BufferAlloc], int] | None:
    """Place each buffer whole into one bank; None when one does not fit any bank."""
    bank_size = memory // banks
    free = [b * bank_size for b in range(banks)]
    out = []
    for it in stack:  # the stack sits at address 0, as mlir-aie puts it
        out.append(BufferAlloc(tile=tile, name=it.name, nbytes=it.nbytes, address=free[0],
                               bank=0))
        free[0] += it.nbytes
    if free[0] > bank_size:
        return None
    in_bank: list[list[str | None]] = [[] for _ in range(banks)]

    def clashes(b: int, fifo: str | None, same: int) -> int:
        """Weight of what is already in bank ``b`` that ``fifo`` is accessed with."""
        n = 0
        for other in in_bank[b]:
            if other == fifo:
                n += same
            elif any(fifo in s and other in s for s in together):
                n += _CO_USE
        return n

    score = 0
    for it in sorted(items, key=lambda it: (-it.nbytes, it.order)):
        fits = [b for b in range(banks) if free[b] + it.nbytes <= (b + 1) * bank_size]
        if not fits:
            return None
        b = min(fits, key=lambda b: (clashes(b, it.fifo, pingpong), free[b] - b * bank_size, b))
        score += clashes(b, it.fifo, 1)
        out.append(BufferAlloc(tile=tile, name=it.name, nbytes=it.nbytes, address=free[b],
                               bank=b, fifo=it.fifo))
        in_bank[b].append(it.fifo)
        free[b] += it.nbytes
    return out, score


def _sequential(tile: Coord, items: list[_Item], bank_size: int) -> list[BufferAlloc]:
    out, addr = [], 0
    for it in items:
        out.append(BufferAlloc(tile=tile, name=it.name, nbytes=it.nbytes, address=addr,
                               bank=addr // bank_size, fifo=it.fifo))
        addr += it.nbytes
    return out
