"""The fix for a memtile full even after spilling to its neighbours: depth changes the spill
model (:func:`aiedsl.place.objectfifo.spill`, as mlir-aie places memtile buffers) accepts,
searched a buffer at a time, or what else would fit when no depth does."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from aiedsl.checks.buffer_setters import Setter, setter
from aiedsl.ir.design import Design
from aiedsl.place.objectfifo import Lowering, Store, spill
from aiedsl.targets import DEVICES, TargetModel

Coord = tuple[int, int]


SPILL_FIX_STEPS = 64
"""The most buffers :func:`spill_fix` takes away one at a time before it stops looking: each
step re-runs the spill model once per depth it could lower, so the search stays cheap."""


@dataclass
class _Knob:
    """One depth of the design that sizes memtile buffers, and the memtile stores it sizes (a
    channel's host_depth= sizes one link per index)."""

    setter: Setter
    stores: list[int]
    """Indices into the memtile stores, in creation order."""
    count: int
    """Buffers it gives each store today."""
    step: int
    """Bytes one buffer fewer frees: one buffer of each store."""


def spill_fix(d: Design, low: Lowering, target: TargetModel, tile: Coord) -> str:
    """The fix for memtile ``tile``, over its memory although buffers may spill to a neighbour.

    Fitting is decided by the spill model, not by the memtile's own excess: with neighbours, one
    buffer fewer on the memtile can leave room only for a buffer that then spills back into it
    (:func:`aiedsl.place.objectfifo.spill`, mlir-aie 1e400306's ``createObjectFifoElements``).
    So the fix is searched (:func:`_fewer_buffers`) and says the depths that fit in the design's
    own terms; the device with more columns it offers is searched the same way, the memtiles
    pinned where they are.
    """
    mem = [s for s in low.stores if s.kind == "memtile" and s.buffers]
    knobs: list[_Knob] = []
    keyed: dict[tuple[str, str], _Knob] = {}
    for i, s in enumerate(mem):
        if s.link is None or s.link.via != "memtile":
            continue
        by = setter(d, s.link)
        key = (by.how, by.name if by.how == "host_depth" else by.fifo)
        if key not in keyed:
            keyed[key] = _Knob(by, [], 0, 0)
            knobs.append(keyed[key])
        k = keyed[key]
        k.stores.append(i)
        k.count = max(k.count, len(s.buffers))
        k.step += s.nbytes
    col, row = tile
    near = [(c, row) for c in (col - 1, col, col + 1) if 0 <= c < target.cols]
    names = _joined([str(t) for t in near], "and")
    counts, fitted = _fewer_buffers(mem, knobs, near, target)
    rest = ["use smaller tiles"]
    if target.cols * len(target.memtile_rows) > len(near):
        rest.append(f"pin some of memtiles {names}' links to another memtile with "
                    "via=memtile(col)")
    wider = sorted((t for t in DEVICES.values() if t.family == target.family
                    and t.cols > target.cols), key=lambda t: (t.cols, t.name))
    if wider:  # the nearest wider device, the pins kept: does it fit, and with what depths?
        more = wider[0]
        there, ok = _fewer_buffers(mem, knobs, [(c, row) for c in (col - 1, col, col + 1)
                                                if 0 <= c < more.cols], more)
        # offered only where it asks fewer buffers away than the depths that fit here
        if ok and (not fitted or _freed(mem, knobs, there) < _freed(mem, knobs, counts)):
            changes = _changes(knobs, there)
            rest.append(f"use {more.name}, a device with more columns" +
                        (f", together with: {_joined(changes, '; and')}" if changes else ""))
    others = _joined(rest, ", or")
    if fitted:
        depths = _joined(_changes(knobs, counts), "; and")
        return (f"free {_freed(mem, knobs, counts):,} bytes, so that every buffer finds room "
                f"on its own memtile or a neighbour's as mlir-aie places them: {depths}; else "
                f"{others}")
    if all(n == 1 for n in counts):
        return (f"no depth fits: even one buffer for each fifo with buffers on memtiles {names} "
                f"leaves a buffer no memtile has room for, as mlir-aie places them; {others}")
    return (f"give the fifos with buffers on memtiles {names} fewer buffers (aiedsl found no "
            f"depths that fit within {SPILL_FIX_STEPS} buffers fewer), or {others}")


def _sizes(mem: list[Store], knobs: list[_Knob], counts: list[int]) -> list[int]:
    """The buffers of each memtile store when each knob gives ``counts`` (in knob order)."""
    n = [len(s.buffers) for s in mem]
    for k, c in zip(knobs, counts):
        for i in k.stores:
            n[i] = min(n[i], c)
    return n


def _freed(mem: list[Store], knobs: list[_Knob], counts: list[int]) -> int:
    """Bytes of memtile buffers that knob ``counts`` take away."""
    return sum((len(s.buffers) - n) * s.nbytes for s, n in zip(mem, _sizes(mem, knobs, counts)))


def _changes(knobs: list[_Knob], counts: list[int]) -> list[str]:
    """The depths ``counts`` changes, in the design's terms, in creation order."""
    return [k.setter.to(c) for k, c in zip(knobs, counts) if c < k.count]


def _fits(mem: list[Store], n: list[int], target: TargetModel) -> bool:
    """Whether memtile stores ``mem`` of ``n`` buffers each fit ``target`` as mlir-aie spills
    them: no memtile over its memory, and on each no more spilled links' ends per direction
    than its low channels (``neighbour_channels``, mlir-aie
    ``getMaxChannelNumForAdjacentMemTile``: those ends take channels first)."""
    homes = spill([(s.tile, k, s.nbytes) for s, k in zip(mem, n)], target)
    used: dict[Coord, int] = defaultdict(int)
    ends: dict[tuple[Coord, str], int] = defaultdict(int)
    for s, at in zip(mem, homes):
        for t in at:
            used[t] += s.nbytes
        if s.link is not None and any(t != s.tile for t in at):
            ends[(s.tile, "S2MM")] += len(s.link.srcs)
            ends[(s.tile, "MM2S")] += len(s.link.dsts)
    cap = target.memtile.neighbour_channels
    return max(used.values(), default=0) <= target.memtile.memory and \
        (cap is None or all(e <= cap for e in ends.values()))


def _fewer_buffers(mem: list[Store], knobs: list[_Knob], near: list[Coord],
                   target: TargetModel) -> tuple[list[int], bool]:
    """Each knob's buffers after taking one at a time from the knobs with buffers on memtiles
    ``near`` until ``mem`` fits ``target`` (a knob whose step then fits, the one freeing least;
    else the one freeing most, of equals the one with most buffers, then the last made), and
    whether it fits: at most :data:`SPILL_FIX_STEPS` steps, each one spill model run per knob."""
    mine = [j for j, k in enumerate(knobs)
            if any({mem[i].tile, *mem[i].tiles} & set(near) for i in k.stores)]
    counts = [k.count for k in knobs]
    for _ in range(SPILL_FIX_STEPS):
        if _fits(mem, _sizes(mem, knobs, counts), target):
            return counts, True
        open_ = sorted((j for j in mine if counts[j] > 1),
                       key=lambda j: (-knobs[j].step, -counts[j], -knobs[j].stores[-1]))
        if not open_:
            return counts, False
        done = [j for j in open_ if _fits(mem, _sizes(mem, knobs, [
            c - (i == j) for i, c in enumerate(counts)]), target)]
        counts[min(done, key=lambda j: knobs[j].step) if done else open_[0]] -= 1
    return counts, _fits(mem, _sizes(mem, knobs, counts), target)


def _joined(items: list[str], last: str) -> str:
    """``a``, ``a <last> b``, ``a, b <last> c``: ``last`` joins the final item (``and``,
    ``, or``, ``; and``), the others a comma, or a semicolon when ``last`` has one."""
    sep = "; " if last.startswith(";") else ", "
    tail = f"{last} " if last[0] in ",;" else f" {last} "
    return items[0] if len(items) == 1 else sep.join(items[:-1]) + tail + items[-1]
