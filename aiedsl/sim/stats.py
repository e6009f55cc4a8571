"""Timing results of a simulated run: totals, utilisation, the bottleneck, and Perfetto traces."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from aiedsl.ir import RtpWrite, Transfer
from aiedsl.sim.state import Machine
from aiedsl.version import __version__


DRAM_SATURATED = 0.95
"""A DRAM direction busy at least this fraction of the device time is named the bottleneck even
when a DMA channel reads busier: a channel's busy time includes the time it stalls behind host
memory or behind its receivers, DRAM's counts only bytes moved."""
TRACE_TICKS_PER_US = 10_000
"""A trace's times are whole tenths of a nanosecond, written in microseconds as the format
asks."""
ISSUING_NOTED = 0.3
"""A runtime issuing shim DMA tasks this fraction of the device time is named beside a busy DMA
channel: the channel may only be waiting for its tasks (it counts as busy meanwhile)."""


def significant(x: float, digits: int = 3) -> str:
    """``x`` with at least ``digits`` significant digits and one decimal, without an exponent:
    ``698.6``, ``12.3``, ``0.0325`` (a small design's throughput printed as ``0.0`` said
    nothing)."""
    if x <= 0:
        return "0"
    decimals = max(1, digits - 1 - math.floor(math.log10(x)))
    return f"{x:,.{decimals}f}"


@dataclass(frozen=True)
class Bottleneck:
    """What limits a simulated run on the device, as data; :meth:`sentence` says it for people.

    It names a device resource; the fixed invocation cost (:attr:`Timing.invocation_s`) is not a
    bottleneck of the design, and :meth:`Timing.lines` says how much of the time it is.
    """

    kind: Literal["compute", "dram", "dma", "runtime"]
    """``compute`` (a core), ``dram`` (host memory bandwidth), ``dma`` (one DMA channel) or
    ``runtime`` (the firmware issuing the runtime sequence's shim DMA tasks one after another)."""
    resource: str
    """The busiest core or DMA channel by name, ``"DRAM read"`` / ``"DRAM write"``, or
    ``"runtime"``."""
    utilisation: float
    """Busy fraction of that resource over the device-side time (0..1)."""
    dram_bytes: int
    """Bytes the shims moved to and from host memory."""
    dram_bytes_per_s: float
    """The bandwidth the model assumes for the busier DRAM direction."""
    rtp_writes: int = 0
    """Runtime-parameter writes in the runtime sequence (the firmware issues them too)."""
    issuing: float = 0.0
    """Busy fraction of the runtime issuing shim DMA tasks (whatever the bottleneck's kind)."""
    one_task_each: bool = False
    """Every transfer is a tensor's only transfer in its direction: no fewer tasks are possible."""
    direction_bytes: int = 0
    """Bytes the busier DRAM direction moved (what its utilisation counts)."""

    def sentence(self) -> str:
        """One sentence naming the limit and what would help."""
        if self.kind == "compute":
            return (f"compute: the busiest core computes {self.utilisation:.0%} of the time; "
                    "faster kernels or more cores would help")
        if self.kind == "dram":
            verb, noun = (("reads", "read") if self.resource == "DRAM read" else
                          ("writes", "written"))
            moved = self.direction_bytes or self.dram_bytes
            return (f"DRAM: the shims' host-memory {verb} ({moved / 1e6:.2f} MB {noun}) are "
                    f"busy {self.utilisation:.0%} of the time at "
                    f"{self.dram_bytes_per_s / 1e9:g} GB/s; reuse data on chip (larger tiles, "
                    "memtile staging) to need less, if the design moves any twice")
        if self.kind == "runtime":
            what = "shim DMA tasks and rtp writes" if self.rtp_writes else "shim DMA tasks"
            help_ = ("each tensor already moves in one task per direction: a fixed cost, which "
                     "more work per invocation spreads thinner" if self.one_task_each else
                     "fewer, longer transfers (each task covering more of a tensor) would help")
            return (f"runtime: issuing the {what} one by one takes "
                    f"{self.utilisation:.0%} of the time; {help_}")
        text = (f"data movement: DMA '{self.resource}' is busy {self.utilisation:.0%} of the "
                "time; spread its traffic over more channels, send longer contiguous runs from "
                "host memory, or broadcast instead of sending twice")
        if self.issuing >= ISSUING_NOTED:  # a channel waiting for its next task counts as busy
            text += (f" (the runtime issues shim DMA tasks one by one for {self.issuing:.0%} of "
                     "the time, and a channel that waits for a task counts as busy: fewer, "
                     "longer transfers may help more)")
        return text


@dataclass(frozen=True)
class Timing:
    """What the clocked run says about performance; every figure is a field.

    ``cycles`` and ``seconds`` are one invocation as the host times it: the target's fixed
    invocation cost (:attr:`invocation_s`) plus the device-side run (:attr:`device_cycles`).
    Utilisations are fractions of the device-side time.

    Example
    -------
    >>> t = simulate(handle).timing                      # doctest: +SKIP
    >>> t.seconds, t.device_seconds, t.gops, t.bottleneck.kind   # doctest: +SKIP
    (0.000349, 0.000234, 769.2, 'compute')
    """

    cycles: float
    """One invocation as the host times it, counted in cycles of ``clock_hz``:
    ``device_cycles`` plus ``invocation_s * clock_hz``."""
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
    """Fraction of the busier direction's DRAM bandwidth used over the device-side time."""
    bottleneck: Bottleneck
    device_cycles: float = 0.0
    """Cycles on the device: from the runtime's first instruction to the last completion it
    waits for (no host or firmware fixed cost)."""
    invocation_s: float = 0.0
    """The fixed cost of one invocation (the target's ``TimingModel.invocation_s``)."""
    dram_read_bytes: int = 0
    """Bytes the shims read from host memory (fills); ``dram_bytes`` counts these and the
    writes."""
    dram_write_bytes: int = 0
    """Bytes the shims wrote to host memory (drains)."""
    profiled: tuple[str, ...] = ()
    """Kernels whose cycles per call come from their profile (no ``cycles=`` declared)."""
    assumed: str = ""
    """What the times rest on that no measurement of this device supports ("" if nothing)."""

    @property
    def seconds(self) -> float:
        """Modelled wall time of one invocation, as the host measures it."""
        return self.cycles / self.clock_hz

    @property
    def device_seconds(self) -> float:
        """Modelled time on the device alone (:attr:`device_cycles`)."""
        return self.device_cycles / self.clock_hz

    @property
    def gops(self) -> float:
        """Achieved GFLOPS/GOPS per invocation (operations the kernels declare)."""
        return self.ops / self.seconds / 1e9 if self.cycles else 0.0

    def lines(self) -> list[str]:
        """Human-readable summary, rendered from the fields."""
        busy = sorted(self.core_busy.values())
        out = [f"time: {self.seconds * 1e6:.2f} us per invocation ({self.invocation_s * 1e6:.2f}"
               f" us fixed cost + {self.device_seconds * 1e6:.2f} us on the device: "
               f"{self.device_cycles:,.0f} cycles at {self.clock_hz / 1e9:g} GHz)"]
        if self.ops:
            out.append(f"throughput: {significant(self.gops)} GOPS (GFLOPS for float kernels)")
        if busy:
            out.append(f"cores busy: min {busy[0]:.0%}, median {busy[len(busy) // 2]:.0%}, "
                       f"max {busy[-1]:.0%} of the device time")
        top = sorted(self.channel_busy.items(), key=lambda kv: -kv[1])[:3]
        if top:
            out.append("busiest DMA channels: " + ", ".join(f"{n} {b:.0%}" for n, b in top))
        out.append(f"DRAM: {self.dram_utilisation:.0%} of its bandwidth")
        out.append(f"bottleneck: {self.bottleneck.sentence()}")
        if self.profiled:
            out.append("cycles per call from `aiedsl kernel profile` (no cycles= declared, a "
                       "bound at best): " + ", ".join(self.profiled))
        if self.assumed:
            out.append(f"note: {self.assumed}")
        return out


def timing(m: Machine) -> Timing:
    """Summarise the clocked run of ``m`` (cycles of ``m.clock_hz``)."""
    target = m.target
    clock = m.clock_hz
    procs = m.engine.procs
    cycles = max((p.time for p in procs), default=0.0)
    if m.runtime is not None and m.runtime.finished:
        cycles = max(m.runtime.time, max((p.time for p in procs if p.kind == "core"), default=0))
    total = cycles or 1.0
    core_busy = {p.name: p.busy / total for p in procs if p.kind == "core"}
    channel_busy = {p.name: p.busy / total for p in procs if p.kind in ("mm2s", "s2mm")}
    use = {"DRAM read": m.dram.read.moved / (total * m.dram.read.bytes_per_cycle),
           "DRAM write": m.dram.write.moved / (total * m.dram.write.bytes_per_cycle)}
    dram_dir = max(use, key=lambda k: use[k])
    dram = use[dram_dir]
    top_core = max(core_busy.items(), key=lambda kv: kv[1], default=("", 0.0))
    top_chan = max(channel_busy.items(), key=lambda kv: kv[1], default=("", 0.0))
    issuing = m.runtime.busy / total if m.runtime is not None else 0.0
    kind: Literal["compute", "dram", "dma", "runtime"]
    if top_core[1] >= max(dram, top_chan[1], issuing) and top_core[1] > 0.5:
        kind, what, busy = "compute", top_core[0], top_core[1]
    elif issuing > max(dram, top_chan[1]) and dram < DRAM_SATURATED:
        kind, what, busy = "runtime", "runtime", issuing
    elif dram >= top_chan[1] or dram >= DRAM_SATURATED:
        kind, what, busy = "dram", dram_dir, dram
    else:
        kind, what, busy = "dma", top_chan[0], top_chan[1]
    tm = target.timing
    bandwidth = tm.dram_read_bytes_per_s if dram_dir == "DRAM read" else tm.dram_write_bytes_per_s
    rtp_writes = sum(1 for op in m.design.runtime if isinstance(op, RtpWrite))
    moves = [(op.tensor, op.op) for op in m.design.runtime if isinstance(op, Transfer)]
    why = Bottleneck(kind, what, busy, int(m.dram.moved), bandwidth, rtp_writes,
                     issuing=issuing, one_task_each=len(set(moves)) == len(moves),
                     direction_bytes=int((m.dram.read if dram_dir == "DRAM read" else
                                          m.dram.write).moved))
    fixed = tm.invocation_s
    assumed = "" if tm.measured_on == target.family else (
        f"{target.family}'s invocation, task and burst-cycle costs are {tm.measured_on}'s, "
        f"assumed (no {target.family} measurement to fit them to): its times are estimates")
    return Timing(cycles + fixed * clock, clock, m.ops, core_busy, channel_busy,
                  int(m.dram.moved), dram, why, device_cycles=cycles, invocation_s=fixed,
                  dram_read_bytes=int(m.dram.read.moved), dram_write_bytes=int(m.dram.write.moved),
                  profiled=tuple(k.symbol for k in m.design.kernels
                                 if k.cycles_source == "profile"), assumed=assumed)


def chrome_trace(m: Machine, clock_hz: float) -> dict[str, Any]:
    """A Chrome trace-event document (opens in Perfetto): a track per core, per DMA channel
    (sending and receiving) and for the runtime's firmware steps."""
    events: list[dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "pid": 1, "tid": 0,
         "args": {"name": f"{m.design.name} on {m.design.device}"}}]
    tick = TRACE_TICKS_PER_US / clock_hz * 1e6  # trace ticks per cycle
    tracks = [p for p in m.engine.procs if p.spans]
    for tid, p in enumerate(tracks, start=1):
        events.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": tid,
                       "args": {"name": p.name}})
        for start, end, label in p.spans:
            # both ends rounded, the duration their difference: spans that meet stay met (each
            # rounded on its own, one overlapped the next by a tick, which the format forbids)
            first, last = round(start * tick), round(end * tick)
            events.append({"name": label, "cat": p.kind, "ph": "X", "pid": 1, "tid": tid,
                           "ts": first / TRACE_TICKS_PER_US,
                           "dur": (last - first) / TRACE_TICKS_PER_US})
    finished = m.runtime is not None and m.runtime.finished
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
    from aiedsl.outfile import check_file

    check_file(path, ours=is_aiedsl_trace, option="--trace", example=f"{design}.json")


def write_trace(m: Machine, clock_hz: float, path: str) -> None:
    """Write :func:`chrome_trace` as JSON to ``path``, whole or not at all.

    An existing file there that aiedsl did not write is refused (DesignError "output file").
    """
    from aiedsl.outfile import write_file

    write_file(path, json.dumps(chrome_trace(m, clock_hz)), design=m.design.name,
               ours=is_aiedsl_trace, option="--trace", example=f"{m.design.name}.json")
