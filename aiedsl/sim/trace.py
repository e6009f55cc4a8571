"""A simulated run as a Chrome trace-event file (opens in Perfetto): a track per core, per DMA
channel and for the runtime's firmware steps; written whole or not at all, never over a file
aiedsl did not write."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aiedsl.sim.processes import NEXT_INVOCATION, WAITING
from aiedsl.sim.state import Machine
from aiedsl.version import __version__

TRACE_TICKS_PER_US = 10_000
"""A trace's times are whole tenths of a nanosecond, written in microseconds as the format
asks."""


def category(kind: str, label: str) -> str:
    """A span's ``cat``: its track's kind (``core``, ``mm2s``, ``runtime``, ...), told apart
    where the span is not that track's own work, so that filtering or summing by category does
    not mix waiting with working: ``core stall`` (a cascade's), ``core next invocation`` (a
    later pass), ``core waiting`` (for a fifo's element or buffer), ``mm2s waiting`` (an
    element no receiver has taken yet), ``runtime waiting`` (for a transfer).

    >>> category("core", "matmul (next invocation)"), category("mm2s", "a (waiting for receivers)")
    ('core next invocation', 'mm2s waiting')
    """
    if label.endswith(NEXT_INVOCATION):
        return f"{kind} next invocation"
    if label.startswith("cascade stall"):
        return f"{kind} stall"
    if label.endswith(WAITING) or label.startswith("waits for "):
        return f"{kind} waiting"
    return kind


def chrome_trace(m: Machine, clock_hz: float) -> dict[str, Any]:
    """A Chrome trace-event document (opens in Perfetto): a track per core, per DMA channel
    (sending and receiving) and for the runtime's firmware steps."""
    events: list[dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "pid": 1, "tid": 0,
         "args": {"name": f"{m.design.name} on {m.design.device}"}}]
    tick = TRACE_TICKS_PER_US / clock_hz * 1e6  # trace ticks per cycle
    finished = m.runtime is not None and m.runtime.finished
    # a run that stopped (a hang) draws each send still in progress to the end: the blocked
    # channels of its wait-for chain, which never finished a span of their own
    stop = max((p.time for p in m.engine.procs), default=0.0)
    blocked = {id(p): [(p.open[0], max(stop, p.open[0]), f"{p.open[1]} (blocked)")]
               for p in m.engine.procs if not finished and p.open is not None}
    tracks = [p for p in m.engine.procs if p.spans or id(p) in blocked]
    for tid, p in enumerate(tracks, start=1):
        events.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": tid,
                       "args": {"name": p.name}})
        spans = [(*span, False) for span in p.spans] + \
            [(*span, True) for span in blocked.get(id(p), [])]
        for start, end, label, stuck in spans:
            # both ends rounded, the duration their difference: spans that meet stay met (each
            # rounded on its own, one overlapped the next by a tick, which the format forbids)
            first, last = round(start * tick), round(end * tick)
            if last == first:
                if stuck:  # blocked at the very end: a moment, not a span
                    events.append({"name": label, "cat": category(p.kind, label), "ph": "i",
                                   "s": "t", "pid": 1, "tid": tid,
                                   "ts": first / TRACE_TICKS_PER_US})
                continue  # (a wait shorter than a tick, before a send: nothing to draw)
            events.append({"name": label, "cat": category(p.kind, label), "ph": "X", "pid": 1,
                           "tid": tid, "ts": first / TRACE_TICKS_PER_US,
                           "dur": (last - first) / TRACE_TICKS_PER_US})
    # otherData first: it says who wrote the file within its first bytes (is_aiedsl_trace).
    return {"otherData": {"generator": f"aiedsl {__version__}", "clock_hz": clock_hz,
                          "origin": "ts 0 is the device's start: the invocation's fixed cost, "
                          "before it, is not drawn",
                          "complete": finished},
            "traceEvents": events, "displayTimeUnit": "ns"}


def is_aiedsl_trace(head: str) -> bool:
    """Was this trace (its first characters) written by aiedsl? Its otherData says so."""
    return head.startswith('{"otherData": {"generator": "aiedsl ')


def check_trace(path: str | Path, design: str) -> None:
    """Refuse (DesignError "output file") a trace file :func:`write_trace` would refuse: called
    before simulating, so a refusal costs no simulation."""
    from aiedsl.builddir.outfile import check_file

    check_file(path, ours=is_aiedsl_trace, option="--trace", example=f"{design}.json")


def write_trace(m: Machine, clock_hz: float, path: str) -> None:
    """Write :func:`chrome_trace` as JSON to ``path``, whole or not at all.

    An existing file there that aiedsl did not write is refused (DesignError "output file").
    """
    from aiedsl.builddir.outfile import write_file

    write_file(path, json.dumps(chrome_trace(m, clock_hz)), design=m.design.name,
               ours=is_aiedsl_trace, option="--trace", example=f"{m.design.name}.json")
