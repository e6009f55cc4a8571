"""Fifo ends with one buffer, where a core's kernel calls and its transfers take turns: which
a run's bottleneck names (:func:`one_buffer_ends`), and what a second buffer there would take
and meet (:func:`aiedsl.sim.stats.timing` says them)."""

from __future__ import annotations

from typing import NamedTuple

from aiedsl.ir.core_ops import Acquire
from aiedsl.ir.design import Design
from aiedsl.ir.program import walk
from aiedsl.sim.bottleneck import SINGLE_BUFFER_NOTED, SingleBuffered
from aiedsl.sim.state import Machine

__all__ = ["OneBufferEnds", "one_buffer_ends"]


class OneBufferEnds(NamedTuple):
    """What :func:`one_buffer_ends` finds."""

    single: list[SingleBuffered]
    """Per core, its one-buffer ends a second buffer would overlap, most first."""
    receiver: str
    """The busiest channel's receiving fifo with one buffer ("" when none is named)."""
    receiver_words: str
    """That end, as words."""
    room: str
    """Why a second buffer there would not fit ("": it fits)."""
    receiver_also: tuple[tuple[str, str], ...]
    """The receiving core's other one-buffer ends it acquires again, ``(fifo, port)``."""


def one_buffer_ends(m: Machine, kind: str, what: str, busy: float, total: float,
                    core_busy: dict[str, float], channel_busy: dict[str, float]
                    ) -> OneBufferEnds:
    """The one-buffer ends of finished run ``m`` (``total`` device cycles) that a bottleneck of
    ``kind`` on ``what`` (busy ``busy`` of the time) names: each core's (the busiest's alone
    for a compute bottleneck) where a second buffer could overlap
    :data:`~aiedsl.sim.bottleneck.SINGLE_BUFFER_NOTED` of the run or more, and a busy DMA
    channel's receiver when the channel waits on it that much."""
    single: list[SingleBuffered] = []
    for p in m.engine.procs:
        if p.kind != "core" or (kind == "compute" and p.name != what):
            continue
        # one clause a core, naming every one-buffer end it acquires again: the overlap
        # needs them all
        ends = sorted(((min(e.stalled / total, core_busy[p.name]), e)
                       for e in p.info.get("ends", {}).values() if e.depth == 1),
                      key=lambda oe: -oe[0])
        if ends and ends[0][0] >= SINGLE_BUFFER_NOTED:
            overlap, e = ends[0]
            again = _acquired_again(m.design, p.name)
            # (however little it waits there now: deepened, the other end's wait moves
            # here, a tester's 1.5% alone and 42% together)
            also = tuple((x.key[0], x.key[1]) for _, x in ends[1:] if x.key in again)
            single.append(_single(m, p.name, p.info["tile"], e.key[0], e.key[1], overlap,
                                  also))
    single.sort(key=lambda c: -c.overlap)
    receiver, receiver_words, room = "", "", ""
    receiver_also: tuple[tuple[str, str], ...] = ()
    if kind == "dma" and channel_busy[what] - busy >= SINGLE_BUFFER_NOTED:
        receiver, receiver_words, room = _one_buffer_receiver(m, what)
        # named once, as the receiver, with its core's other one-buffer ends acquired again
        for p in m.engine.procs:
            ends_at = p.info.get("ends", {}).values() if p.kind == "core" else ()
            if any(x.depth == 1 and x.key[0] == receiver for x in ends_at):
                again = _acquired_again(m.design, p.name)
                receiver_also = tuple((x.key[0], x.key[1]) for x in ends_at
                                      if x.depth == 1 and x.key[0] != receiver
                                      and x.key in again)
        single = [e for e in single
                  if e.fifo != receiver and all(f != receiver for f, _ in e.also)]
    return OneBufferEnds(single, receiver, receiver_words, room, receiver_also)


def _single(m: Machine, core: str, tile: tuple[int, int], fifo: str, port: str,
            overlap: float, also: tuple[tuple[str, str], ...] = ()) -> SingleBuffered:
    """What a second buffer at ``core``'s one-buffer end of ``fifo`` (and at its ends
    ``also``) would take and meet."""
    d = m.design
    f = d.fifo(fifo)
    # the memtile fifo on the other side of a link, when its memtile end has one buffer too
    memtile = ""
    for link in d.links:
        others = link.srcs if fifo in link.dsts else link.dsts if fifo in link.srcs else ()
        for name in others:
            g = d.fifo(name)
            ends = [g.producer] if port == "produce" else list(g.consumers)
            if any(x.kind == "memtile" and x.depth == 1 for x in ends):
                memtile = name
    needed = f.elem.nbytes + sum(d.fifo(name).elem.nbytes for name, _ in also)
    free = _free(m, tile)
    return SingleBuffered(core, fifo, port, overlap, memtile,
                          free if free is not None and free < needed else None, needed, also)


def _acquired_again(d: Design, core: str) -> set[tuple[str, str]]:
    """The fifo ends ``(fifo, port)`` core ``core`` acquires more than once a run: a second
    buffer at one acquired once (a configuration, around the loop) overlaps nothing (a
    reviewer)."""
    times: dict[tuple[str, str], int] = {}
    c = next((c for c in d.cores if c.name == core), None)
    for op, mult in walk(c.body) if c is not None else ():
        if isinstance(op, Acquire):
            times[(op.fifo, op.port)] = times.get((op.fifo, op.port), 0) + mult
    return {key for key, n in times.items() if n > 1}


def _one_buffer_receiver(m: Machine, channel: str) -> tuple[str, str, str]:
    """The receiving end of sending DMA ``channel``'s fifo that has one buffer: its fifo, as
    words, and why a second buffer would not fit there ("" when it fits); all "" when there is
    none (or ``channel`` does not send)."""
    p = next((p for p in m.engine.procs if p.name == channel and p.kind == "mm2s"), None)
    name = p.info.get("fifo") if p is not None else None
    if name is None:
        return "", "", ""
    f = m.design.fifo(name)
    c = next((c for c in f.consumers if c.depth == 1 and c.tile is not None), None)
    if c is None or c.tile is None:
        return "", "", ""
    kind = m.target.kind_of(c.tile)
    free = _free(m, c.tile)
    room = ""
    if free is not None and free < f.elem.nbytes:
        room = (f"a second ({f.elem.nbytes:,} B) does not fit: {free:,} B free; smaller "
                "elements would make room")
    return name, f"'{name}' on {kind} {c.tile}", room


def _free(m: Machine, tile: tuple[int, int]) -> int | None:
    """Bytes of ``tile``'s memory past its last buffer (None: not allocated)."""
    kind = m.target.kind_of(tile)
    if m.design.physical is None or kind is None:
        return None
    top = max((b.address + b.nbytes for b in m.design.physical.buffers if b.tile == tile),
              default=0)
    return m.target.limits(kind).memory - top
