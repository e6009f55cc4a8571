"""Cores held back by too few buffers: a fifo whose every buffer one end holds at once (a core's
sliding window over a ring as large as the window), or with one buffer at an end, makes the
core on its other side wait while a core elsewhere is stalled on it; the cores then take turns
instead of overlapping. :func:`buffer_stall` finds such fifos anywhere in a finished run and
says what more buffers would do, measured: the run again with them (kernels timed only), never
a guess.

The runs are few and only made when a stall is plausible: a core waiting at least
:data:`~aiedsl.sim.bottleneck.SINGLE_BUFFER_NOTED` of the run at an end of such a fifo. One run
with every candidate given one more buffer (at most :data:`STALL_FIFOS` of them: those a core
waits at first, then other fifos with such an end, as a stall can need two at once); when it
is shorter by ``SINGLE_BUFFER_NOTED`` of the run or more, one run without each candidate tells
which are needed (at most one more run for the needed ones alone).
"""

from __future__ import annotations

from typing import Any

from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import Acquire
from aiedsl.ir.design import Design
from aiedsl.ir.program import walk
from aiedsl.sim.blocked import proc_words
from aiedsl.sim.bottleneck import SINGLE_BUFFER_NOTED, BufferStall, FewBuffers
from aiedsl.sim.state import Machine

STALL_FIFOS = 4
"""Fifos at most given more buffers at once in the runs of :func:`buffer_stall`."""
STALL_PART = 0.02
"""A fifo of the joint run is needed when leaving its depth as it was loses this fraction of
the run or more of what the joint run saves."""


def buffer_stall(m: Machine, total: float, named: set[str]) -> BufferStall | None:
    """The fifos whose buffers make a core of ``m``'s finished run wait on another, with what
    one more buffer each saves, simulated; None when no such run is shorter by
    :data:`~aiedsl.sim.bottleneck.SINGLE_BUFFER_NOTED` of the device time ``total`` (cycles)
    or more. ``named``: fifos the summary already names (left out)."""
    if m.runtime is None or not m.runtime.finished or total <= 0:
        return None
    d = m.design
    most: dict[tuple[str, str, str], int] = {}
    for c in d.cores:
        for op, _ in walk(c.body):
            if isinstance(op, Acquire):
                key = (c.name, op.fifo, op.port)
                most[key] = max(most.get(key, 0), op.count)
    # each core's ends, by fifo: (process, port, buffers of its ring, stalled share)
    ends: dict[str, list[tuple[Any, str, int, float]]] = {}
    for p in m.engine.procs:
        if p.kind == "core":
            for e in p.info.get("ends", {}).values():
                ends.setdefault(e.key[0], []).append((p, e.key[1], e.depth, e.stalled / total))
    triggers: list[tuple[float, FewBuffers]] = []
    companions: list[tuple[float, FewBuffers]] = []
    for f in d.fifos:
        if f.name in named or f.name not in ends:
            continue
        if f.depth_per_end:
            continue  # depths per end: one depth= for the fifo is not the knob
        few = _few(f, ends[f.name], most)
        if few is None:
            continue
        stall = max(s for _, _, _, s in ends[f.name])
        (triggers if stall >= SINGLE_BUFFER_NOTED else companions).append((stall, few))
    if not triggers:
        return None
    chosen = [x for _, x in sorted(triggers, key=lambda t: -t[0])]
    chosen += [x for _, x in sorted(companions, key=lambda t: -t[0])]
    # each on its own must fit (memory, locks): one that does not is left as it is
    chosen = [x for x in chosen if _placed(d, (x,)) is not None][:STALL_FIFOS]
    if not chosen:
        return None
    return _measure(m, total, tuple(chosen))


def _few(f: Any, ends: list[tuple[Any, str, int, float]],
         most: dict[tuple[str, str, str], int]) -> FewBuffers | None:
    """What makes fifo ``f``'s buffers too few, as words, given its core ends (process, port,
    ring buffers, stalled share); None when no end holds every buffer of its ring at once and
    none has one buffer."""
    for p, port, n, _ in ends:
        if n > 1 and most.get((p.name, f.name, port), 0) >= n:
            holder = proc_words(p)
            # the core that waits is another: the holder's own waits are for the others
            others = [x for x in ends if x[0] is not p]
            if not others:
                continue
            waiter, wport, _, share = max(others, key=lambda x: x[3])
            waits = share >= SINGLE_BUFFER_NOTED
            if waits and wport == "produce":
                why = (f"{proc_words(waiter)} waits {share:.0%} of the time for a free buffer "
                       f"of '{f.name}', all {n} of which {holder} holds at once")
            elif waits:
                why = (f"{proc_words(waiter)} waits {share:.0%} of the time for data from "
                       f"'{f.name}', all {n} of whose buffers {holder} holds at once")
            else:
                why = f"{holder} holds all {n} buffers of '{f.name}' at once"
            return FewBuffers(f.name, f.producer.depth, f.producer.depth + 1, f.loc.line, why,
                      _handle(f))
    waiter, _, _, share = max(ends, key=lambda x: x[3])
    waits = share >= SINGLE_BUFFER_NOTED
    one = [p for p, _, n, _ in ends if n == 1]
    memtile = [e for e in (f.producer, *f.consumers) if e.kind == "memtile" and e.depth == 1]
    if not one and not memtile:
        return None
    cores = [e for e in (f.producer, *f.consumers) if e.kind == "core"]
    if len(one) == len(cores) == len(ends) and len(cores) == 1 + len(f.consumers):
        where = "each end"
    else:
        where = " and ".join([f"{proc_words(p)}'s end" for p in one]
                             + ["the memtile"] * bool(memtile))
    why = f"'{f.name}' has one buffer at {where}"
    if waits:
        why += f" ({proc_words(waiter)} waits there {share:.0%} of the time)"
    return FewBuffers(f.name, f.producer.depth, f.producer.depth + 1, f.loc.line, why,
                      _handle(f))


def _placed(d: Design, few: tuple[FewBuffers, ...]) -> Design | None:
    """Placed design ``d`` with each of ``few`` at its trial depth, checked and placed again
    (None: a check refuses it, as too large for a tile's memory)."""
    from aiedsl.checks import check_design
    from aiedsl.sim.depth_fix import with_depth

    for x in few:
        d = with_depth(d, x.fifo, x.trial_depth)
    try:
        return check_design(d)[0]
    except DesignError:
        return None


def _cycles(m: Machine, few: tuple[FewBuffers, ...]) -> float | None:
    """Device cycles of ``m``'s run with each of ``few`` at its trial depth, simulated with
    kernels timed only; None when a check refuses the depths or the run does not end."""
    from aiedsl.sim.hang_run import timed_cycles

    placed = _placed(m.design, few)
    return None if placed is None else timed_cycles(placed, m.target, m.clock_hz)


def _measure(m: Machine, total: float, chosen: tuple[FewBuffers, ...]) -> BufferStall | None:
    """The run with ``chosen`` given more buffers, together; then which of them it needs."""
    def saved(c: float | None) -> float:
        return 0.0 if c is None else (total - c) / total

    every = _cycles(m, chosen)
    if every is None or saved(every) < SINGLE_BUFFER_NOTED:
        return None
    if len(chosen) == 1:
        return BufferStall(chosen, every, total, m.clock_hz)
    without = [_cycles(m, tuple(x for x in chosen if x is not y)) for y in chosen]
    needed = tuple(x for x, c in zip(chosen, without)
                   if saved(every) - saved(c) >= STALL_PART)
    if needed == chosen:
        alone = tuple(saved(c) for c in reversed(without)) if len(chosen) == 2 else ()
        return BufferStall(chosen, every, total, m.clock_hz, alone)
    if needed:
        rest = (without[[x not in needed for x in chosen].index(True)]
                if len(needed) == len(chosen) - 1 else _cycles(m, needed))
        if rest is not None and saved(rest) >= SINGLE_BUFFER_NOTED:
            return BufferStall(needed, rest, total, m.clock_hz)
        return BufferStall(chosen, every, total, m.clock_hz)
    # none is needed alone: any of several will do; of two, the one that saves the most
    if len(chosen) == 2:
        runs = [(c, x) for c, x in zip(without, reversed(chosen)) if c is not None]
        if runs:
            c, x = min(runs, key=lambda r: r[0])
            if saved(c) >= SINGLE_BUFFER_NOTED:
                return BufferStall((x,), c, total, m.clock_hz)
    return BufferStall(chosen, every, total, m.clock_hz)


def _handle(f: Any) -> str:
    """``gray[0] of channel 'gray'`` for a channel's fifo ``f``; "" for a fifo of its own."""
    if f.channel is None or not f.index:
        return ""
    return f"{f.channel}[{', '.join(map(str, f.index))}] of channel '{f.channel}'"
