"""Timing results of a simulated run: totals, utilisation, the bottleneck, and Perfetto traces."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from aiedsl.sim.machine import Machine
from aiedsl.targets import get_target
from aiedsl.version import __version__


@dataclass(frozen=True)
class Bottleneck:
    """What limits a simulated run, as data; :meth:`sentence` says it for people."""

    kind: Literal["compute", "dram", "dma"]
    """``compute`` (a core), ``dram`` (host memory bandwidth) or ``dma`` (one DMA channel)."""
    resource: str
    """The busiest core or DMA channel by name, or ``"DRAM"``."""
    utilisation: float
    """Busy fraction of that resource over the run (0..1)."""
    dram_bytes: int
    """Bytes the shims moved to and from host memory."""
    dram_bytes_per_s: float
    """The DRAM bandwidth the model assumes."""

    def sentence(self) -> str:
        """One sentence naming the limit and what would help."""
        if self.kind == "compute":
            return (f"compute: the busiest core computes {self.utilisation:.0%} of the time; "
                    "faster kernels or more cores would help")
        if self.kind == "dram":
            return (f"DRAM: the shim moves {self.dram_bytes / 1e6:.2f} MB at "
                    f"{self.utilisation:.0%} of {self.dram_bytes_per_s / 1e9:g} GB/s; reuse "
                    "data on chip (larger tiles, memtile staging) to need less")
        return (f"data movement: DMA '{self.resource}' is busy {self.utilisation:.0%} of the "
                "time; spread its traffic over more channels or broadcast instead of sending "
                "twice")


@dataclass(frozen=True)
class Timing:
    """What the clocked run says about performance; every figure is a field.

    Example
    -------
    >>> t = simulate(handle).timing                      # doctest: +SKIP
    >>> t.seconds, t.gops, t.bottleneck.kind, t.core_busy["core[0,0]"]   # doctest: +SKIP
    (0.000232, 1157.6, 'dram', 0.41)
    """

    cycles: float
    """Core clock cycles from the first transfer to the last (one run)."""
    clock_hz: float
    """The clock the cycles are counted at."""
    ops: float
    """Operations the kernels declare (``ops=``) over the run; 0 when none declare any."""
    core_busy: dict[str, float]
    """Busy fraction per core, by core name."""
    channel_busy: dict[str, float]
    """Busy fraction per DMA channel process, by name."""
    dram_bytes: int
    """Bytes moved between host memory and the shims."""
    dram_utilisation: float
    """Fraction of the DRAM bandwidth used over the run."""
    bottleneck: Bottleneck

    @property
    def seconds(self) -> float:
        """Modelled wall time of one run."""
        return self.cycles / self.clock_hz

    @property
    def gops(self) -> float:
        """Achieved GFLOPS/GOPS (operations the kernels declare)."""
        return self.ops / self.seconds / 1e9 if self.cycles else 0.0

    def lines(self) -> list[str]:
        """Human-readable summary, rendered from the fields."""
        busy = sorted(self.core_busy.values())
        out = [f"time: {self.seconds * 1e6:.2f} us ({self.cycles:,.0f} cycles at "
               f"{self.clock_hz / 1e9:g} GHz)"]
        if self.ops:
            out.append(f"throughput: {self.gops:,.1f} GOPS (GFLOPS for float kernels)")
        if busy:
            out.append(f"cores busy: min {busy[0]:.0%}, median {busy[len(busy) // 2]:.0%}, "
                       f"max {busy[-1]:.0%} of the run")
        top = sorted(self.channel_busy.items(), key=lambda kv: -kv[1])[:3]
        if top:
            out.append("busiest DMA channels: " + ", ".join(f"{n} {b:.0%}" for n, b in top))
        out.append(f"DRAM: {self.dram_utilisation:.0%} of its bandwidth")
        out.append(f"bottleneck: {self.bottleneck.sentence()}")
        return out


def timing(m: Machine, clock_hz: float | None = None) -> Timing:
    """Summarise the clocked run of ``m``."""
    target = get_target(m.design.device)
    clock = clock_hz or target.clock_hz
    procs = m.engine.procs
    cycles = max((p.time for p in procs), default=0.0)
    if m.runtime is not None and m.runtime.finished:
        cycles = max(m.runtime.time, max((p.time for p in procs if p.kind == "core"), default=0))
    total = cycles or 1.0
    core_busy = {p.name: p.busy / total for p in procs if p.kind == "core"}
    channel_busy = {p.name: p.busy / total for p in procs if p.kind in ("mm2s", "s2mm")}
    dram_bpc = target.dram_bytes_per_s / clock
    dram = m.dram.moved / (total * dram_bpc)
    top_core = max(core_busy.items(), key=lambda kv: kv[1], default=("", 0.0))
    top_chan = max(channel_busy.items(), key=lambda kv: kv[1], default=("", 0.0))
    if top_core[1] >= max(dram, top_chan[1]) and top_core[1] > 0.5:
        kind, what, busy = "compute", top_core[0], top_core[1]
    elif dram >= top_chan[1]:
        kind, what, busy = "dram", "DRAM", dram
    else:
        kind, what, busy = "dma", top_chan[0], top_chan[1]
    why = Bottleneck(kind, what, busy, int(m.dram.moved), target.dram_bytes_per_s)
    return Timing(cycles, clock, m.ops, core_busy, channel_busy, int(m.dram.moved), dram, why)


def chrome_trace(m: Machine, clock_hz: float) -> dict[str, Any]:
    """A Chrome trace-event document (opens in Perfetto): a track per core and DMA channel."""
    events: list[dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "pid": 1, "tid": 0,
         "args": {"name": f"{m.design.name} on {m.design.device}"}}]
    us = 1e6 / clock_hz
    tracks = [p for p in m.engine.procs if p.spans]
    for tid, p in enumerate(tracks, start=1):
        events.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": tid,
                       "args": {"name": p.name}})
        for start, end, label in p.spans:
            events.append({"name": label, "cat": p.kind, "ph": "X", "pid": 1, "tid": tid,
                           "ts": round(start * us, 4), "dur": round((end - start) * us, 4)})
    # otherData first: it says who wrote the file within its first bytes (is_aiedsl_trace).
    return {"otherData": {"generator": f"aiedsl {__version__}"}, "traceEvents": events,
            "displayTimeUnit": "ns"}


def is_aiedsl_trace(head: str) -> bool:
    """Was this trace (its first characters) written by aiedsl? Its otherData says so."""
    return head.startswith('{"otherData": {"generator": "aiedsl ')


def write_trace(m: Machine, clock_hz: float, path: str) -> None:
    """Write :func:`chrome_trace` as JSON to ``path``, whole or not at all.

    An existing file there that aiedsl did not write is refused (DesignError "output file").
    """
    from aiedsl.outdir import write_file

    write_file(path, json.dumps(chrome_trace(m, clock_hz)), design=m.design.name,
               ours=is_aiedsl_trace, option="--trace")
