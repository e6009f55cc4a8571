"""Timing results of a simulated run: :func:`timing` counts a finished machine's busy times, DRAM
traffic and runtime issuing into a :class:`~aiedsl.sim.summary.Timing` and chooses its
bottleneck."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from aiedsl.ir.core_ops import Call
from aiedsl.ir.design import Design
from aiedsl.ir.program import walk
from aiedsl.ir.runtime import RtpWrite, SetBarrier, Transfer
from aiedsl.targets import TargetModel
from aiedsl.kernels.host_notes import conversions_left_out
from aiedsl.sim.blocked import proc_words
from aiedsl.sim.call_time import call_body_cycles
from aiedsl.sim.freed import Kind, saving
from aiedsl.sim.one_buffer import one_buffer_ends
from aiedsl.sim.patterns import bursts_per_byte
from aiedsl.sim.stalls import buffer_stall
from aiedsl.sim.state import Machine, Watch
from aiedsl.sim.bottleneck import (DRAM_SATURATED, FEW_ELEMENTS, FEW_ELEMENTS_SHARE,
                                   FREED_NOTED, ISSUING_NOTED, TASK_COST_BASIS, UNSATURATED,
                                   Bottleneck, Freed)
from aiedsl.sim.summary import KernelTime, Timing, ops_unit


def timing(m: Machine, watch: Watch | None = None) -> Timing:
    """Summarise the clocked run of ``m`` (cycles of ``m.clock_hz``). ``watch`` hears each run
    again that measures what limits it (:mod:`aiedsl.sim.freed`)."""
    target = m.target
    clock = m.clock_hz
    procs = m.engine.procs
    cycles = max((p.time for p in procs), default=0.0)
    after, late, next_pass = 0.0, "", False
    cores = [p for p in procs if p.kind == "core"]
    # where each core's timed work ends: its last counted pass (a later one, which its program
    # starts at once, is the next invocation's)
    ends = {p.name: p.info.get("counted_end", p.time) for p in cores}
    if m.runtime is not None and m.runtime.finished:
        # the host's wait returns with the sequence's last instruction: nothing in it waits
        # for a core (run_runtime), so a core's work past it is not the invocation's time
        cycles = m.ends[0] if m.ends else m.runtime.time
        # the core whose own pass goes on longest past the wait is the one said; failing one,
        # the core whose next pass does (a reviewer: one core's next pass was said as another's
        # calls after the last output)
        own = {name: end for name, end in ends.items() if end > cycles}
        last = max(cores, key=lambda p: p.time, default=None)
        if own:
            late = max(own, key=lambda n: own[n])
            after = next(p.time for p in cores if p.name == late) - cycles
        elif last is not None and last.time > cycles:
            after, late, next_pass = last.time - cycles, last.name, True
    total = cycles or 1.0
    # a core whose timed work goes on past the host's wait is busy over the time until it
    # stops: over the device time alone its share could pass 100%
    until = {name: end for name, end in ends.items() if after and end > cycles}
    core_busy = {p.name: p.busy / until.get(p.name, total) for p in cores}
    # and what bounds one run is its work before the wait (a tester: a slow call after the
    # last output was named the bottleneck of a run it did not lengthen)
    before = {p.name: _busy_before(p.info.get("calls", ()), cycles) / total
              for p in cores if p.name in until}
    channels = [p for p in procs if p.kind in ("mm2s", "s2mm")]
    channel_busy = {p.name: p.busy / total for p in channels}
    channel_moving = {p.name: (p.busy - p.waited) / total for p in channels}
    tm = target.timing
    use = {"DRAM read": m.dram.read.moved / (total * m.dram.read.bytes_per_cycle),
           "DRAM write": m.dram.write.moved / (total * m.dram.write.bytes_per_cycle)}
    dram_dir = max(use, key=lambda k: use[k])
    dram = use[dram_dir]
    one_run = {**core_busy, **before}  # each core's share of one run's time
    top_core = max(one_run.items(), key=lambda kv: kv[1], default=("", 0.0))
    # like with like: a channel's time moving data, not its waiting for a receiver to be ready
    # (a core waiting for data is not busy either)
    top_chan = max(channel_moving.items(), key=lambda kv: kv[1], default=("", 0.0))
    issuing = m.runtime.busy / total if m.runtime is not None else 0.0
    kind: Kind
    if top_core[1] >= max(dram, top_chan[1], issuing) and top_core[1] > 0:
        kind = "compute"
    elif issuing > max(dram, top_chan[1]) and dram < DRAM_SATURATED:
        kind = "runtime"
    elif dram >= top_chan[1] or dram >= DRAM_SATURATED:
        kind = "dram"
    else:
        kind = "dma"
    busiest_of = {"compute": top_core, "runtime": ("runtime", issuing), "dram": (dram_dir, dram),
                  "dma": top_chan}
    freed: tuple[Freed, ...] = ()
    others: tuple[tuple[str, float], ...] = ()
    # every kind busy a tenth of the time or more is a candidate: the one that saves most
    # freed may be neither the busiest nor the next (a reviewer: passthrough's DMA channel,
    # busiest at 39%, and DRAM were measured; the runtime's issuing, freed, saves 46%)
    # as printed: a share shown as 10% is measured (a reviewer: 9.6%, shown 10%, was not)
    measured = [k for k in KINDS if k == kind or round(busiest_of[k][1], 2) >= FREED_NOTED]
    if busiest_of[kind][1] < UNSATURATED and len(measured) > 1 and (
            m.runtime is not None and m.runtime.finished):
        # nothing is busy most of the time: busy shares no longer tell what the time waits
        # for, so each candidate is made free in a run of its own, and the one whose freeing
        # saves most is named (ties keep the busiest)
        freed = tuple(sorted((Freed(k, saving(m, k, total, watch)) for k in measured),
                             key=lambda f: (f.saved is None, -(f.saved or 0.0), f.kind != kind)))
        if freed[0].saved is not None:
            kind = freed[0].kind
        # a bottleneck's sentence names a busy runtime with its share: not twice
        said = "runtime" if issuing >= ISSUING_NOTED else ""
        others = tuple(sorted((_words(k, busiest_of[k]) for k in measured
                               if k not in (kind, said)), key=lambda o: -o[1]))
    # a core working past the host's wait bounds no saving of the device time: its share is of
    # its own time, and what it computed before the wait bounds the run only if the wait
    # depended on it (a tester: "no change ... by more than 33%" of a run that free task issue
    # made 60% shorter; a reviewer: its work before the wait said 9% where 43% was saved)
    runner_up = _runner_up(kind, {n: b for n, b in core_busy.items() if n not in until},
                           channel_moving, use, issuing)
    what, busy = busiest_of[kind]
    # whatever limits the run, a one-buffer end that a second would overlap is said
    single, receiver, receiver_words, room, receiver_also = one_buffer_ends(
        m, kind, what, busy, total, core_busy, channel_busy)
    # fifos whose too few buffers make a core wait on another, anywhere (the busiest core's
    # one-buffer ends and the channel's receiver are said above): measured by runs with more
    named = ({e.fifo for e in single} | {f for e in single for f, _ in e.also}
             | {e.memtile for e in single if e.memtile} | {receiver})
    stall = buffer_stall(m, total, named - {""})
    busiest, tied = _busiest(m, one_run)
    bandwidth = tm.dram_read_bytes_per_s if dram_dir == "DRAM read" else tm.dram_write_bytes_per_s
    rtp_writes = sum(1 for op in m.design.runtime if isinstance(op, RtpWrite))
    barrier_sets = sum(1 for op in m.design.runtime if isinstance(op, SetBarrier))
    # a tensor spread over several shims takes a task per shim: only fewer columns cut those
    moves = [(op.tensor, op.op, m.design.shim_end(op).tile) for op in m.design.runtime
             if isinstance(op, Transfer)]
    spread = len({(t, o) for t, o, _ in moves}) < len(moves)
    # the host tensors the busier direction moves, each once (what a DRAM bottleneck's reuse
    # could save beyond)
    way = "fill" if dram_dir == "DRAM read" else "drain"
    host_bytes = sum(t.type.nbytes for t in m.design.tensors
                     if any(isinstance(op, Transfer) and op.op == way and op.tensor == t.name
                            for op in m.design.runtime))
    why = Bottleneck(kind, what, busy, int(m.dram.moved), bandwidth, rtp_writes,
                     barrier_sets=barrier_sets, issuing=issuing,
                     one_task_each=len(set(moves)) == len(moves), over_columns=spread,
                     direction_bytes=int((m.dram.read if dram_dir == "DRAM read" else
                                          m.dram.write).moved),
                     waiting=channel_busy[what] - busy if kind == "dma" else 0.0,
                     runner_up=runner_up, single_buffered=tuple(single),
                     one_buffer_receiver=receiver_words, receiver_room=room,
                     receiver_also=receiver_also,
                     busiest=busiest if kind == "compute" else "",
                     tied=tied if kind == "compute" else 0, stall=stall, freed=freed,
                     measured=others, host_bytes=host_bytes,
                     **_shim_traffic(m, what if kind == "dma" else "", total))
    fixed = tm.invocation_s
    # rounded past any cycle: 103.2 us x 1 GHz is 103200.00000000001 in floats
    return Timing(round(cycles + fixed * clock, 6), clock, m.ops, core_busy, channel_busy,
                  int(m.dram.moved), dram, why, device_cycles=cycles, invocation_s=fixed,
                  invocation_spread_s=tm.invocation_spread_s,
                  after_cycles=after, after_core=late, after_next_pass=next_pass,
                  core_until=until,
                  dram_read_bytes=int(m.dram.read.moved), dram_write_bytes=int(m.dram.write.moved),
                  profiled=tuple(k.symbol for k in m.design.kernels
                                 if k.cycles_source == "profile"),
                  profiled_charges=tuple(f"{k.symbol}: {k.charged()}" for k in m.design.kernels
                                         if k.cycles_source == "profile"),
                  assumed=_assumed(m), channel_moving=channel_moving,
                  dram_read_utilisation=use["DRAM read"],
                  dram_write_utilisation=use["DRAM write"],
                  dram_read_bytes_per_s=tm.dram_read_bytes_per_s,
                  dram_write_bytes_per_s=tm.dram_write_bytes_per_s,
                  task_basis=_task_basis(m, issuing, total), unmodelled=_unmodelled(m),
                  ops_unit=ops_unit(m.design), driver_timeout_s=tm.driver_timeout_s,
                  busiest_core=busiest, kernel_time=kernel_time(m.design, target))


KERNEL_TIME_CALLS = 1 << 40
"""More calls in one run than any run makes to its end: a core looping without end (IRON's
``2**63 - 1``), whose kernel time is not said."""


def kernel_time(d: Design, target: TargetModel) -> tuple[KernelTime, ...]:
    """Each kernel's calls in one run of ``d`` on ``target`` and the cycles they take (each
    call's body as the run charges it, and the fixed cost of a call), counted from the cores'
    programs, the most first."""
    kernels = {k.symbol: k for k in d.kernels}
    call_cycles = target.timing.kernel_call_cycles
    calls: dict[str, int] = {}
    cycles: dict[str, int] = {}
    for core in d.cores:
        for op, mult in walk(core.body):
            if isinstance(op, Call):
                calls[op.kernel] = calls.get(op.kernel, 0) + mult
                cycles[op.kernel] = cycles.get(op.kernel, 0) + mult * (
                    call_body_cycles(kernels[op.kernel], op.args, target) + call_cycles)
    total = sum(cycles.values())
    if not total or sum(calls.values()) > KERNEL_TIME_CALLS:
        return ()
    return tuple(KernelTime(s, calls[s], cycles[s], cycles[s] / total)
                 for s in sorted(cycles, key=lambda s: (-cycles[s], s)))


KINDS: tuple[Kind, ...] = ("compute", "dram", "dma", "runtime")
"""The kinds of resource a bottleneck names, in the order ties between them are broken."""


def _words(kind: Kind, busiest: tuple[str, float]) -> tuple[str, float]:
    """The busiest resource of ``kind`` (its name and busy share), as the summary's words."""
    name, share = busiest
    return ({"compute": f"{name} computing", "dma": f"DMA '{name}' moving data",
             "dram": f"DRAM {name[5:]}s", "runtime": "the runtime issuing shim DMA tasks"}[kind],
            share)


def _runner_up(kind: Kind, core_busy: dict[str, float], channel_moving: dict[str, float],
               use: dict[str, float], issuing: float) -> tuple[str, float]:
    """The busiest resource of another kind than ``kind`` (another channel as busy says
    nothing new), as words with its busy share (``("", 0.0)`` when there is none)."""
    others = [_words("compute", c) for c in core_busy.items() if kind != "compute"]
    others += [_words("dma", c) for c in channel_moving.items() if kind != "dma"]
    others += [_words("dram", d) for d in use.items() if kind != "dram"]
    # a bottleneck's sentence already names a busy runtime (ISSUING_NOTED): not twice
    said = kind == "runtime" or issuing >= ISSUING_NOTED
    others += [] if said else [_words("runtime", ("runtime", issuing))]
    return max(others, key=lambda o: o[1], default=("", 0.0))


def _busiest(m: Machine, core_busy: dict[str, float]) -> tuple[str, int]:
    """The busiest core as reports name it (``stage2[0,0] (0,3)``; ``core[0,0] (0,2) and 3
    more`` with the others as busy to the percent the summary prints, ``all 16 alike`` when
    every core is), and how many others are that busy ("", 0 when there is no core)."""
    if len(core_busy) < 2:  # no core, or one: naming it says nothing the summary does not
        return "", 0
    top = max(core_busy.values())
    ties = [n for n, b in core_busy.items() if f"{b:.0%}" == f"{top:.0%}"]
    if len(ties) > 1 and len(ties) == len(core_busy):
        return f"all {len(ties)} alike", len(ties) - 1
    first = max(ties, key=lambda n: core_busy[n])
    proc = next(p for p in m.engine.procs if p.kind == "core" and p.name == first)
    more = f" and {len(ties) - 1} more" if len(ties) > 1 else ""
    return proc_words(proc) + more, len(ties) - 1


def _task_basis(m: Machine, issuing: float, total: float) -> str:
    """What the per-task issue cost rests on, when issuing is a large share of the run
    (``issuing``: the runtime's busy share, its register writes too; ``total``: cycles)."""
    if issuing < ISSUING_NOTED:
        return ""
    tm = m.target.timing
    rows = ", ".join(TASK_COST_BASIS)
    count = "one measured row" if len(TASK_COST_BASIS) == 1 else \
        f"{len(TASK_COST_BASIS)} measured rows"
    tasks = sum(1 for op in m.design.runtime if isinstance(op, Transfer))
    share = tasks * tm.shim_task_s * m.clock_hz / total
    writes = issuing - share  # rtp writes and barrier sets: the firmware's register writes
    names = " and ".join(w for w, kind in (("rtp writes", RtpWrite), ("barrier sets", SetBarrier))
                         if any(isinstance(op, kind) for op in m.design.runtime))
    besides = f" (its {names} take another {writes:.0%})" if writes >= 0.005 and names else ""
    return (f"issuing shim DMA tasks takes {share:.0%} of the device time{besides} at "
            f"{tm.shim_task_s * 1e6:g} us per task, a cost fitted to {count} ({rows} on "
            f"{tm.measured_on}) and the model's least certain figure: this time, and any "
            "comparison with a design that issues a different number of tasks (another "
            "topology, other tile sizes), rests on it")


def _unmodelled(m: Machine) -> str:
    """What this design's times rest on that no measurement supports, or that the model leaves
    out, beside what :func:`_assumed` and :func:`_task_basis` say ("" if nothing)."""
    d, target = m.design, m.target
    said = []
    writes = sum(1 for op in d.runtime if isinstance(op, RtpWrite))
    sets = sum(1 for op in d.runtime if isinstance(op, SetBarrier))
    if writes or sets:
        what = " and ".join(w for w, n in (("runtime-parameter write", writes),
                                           ("barrier set", sets)) if n)
        here = ", ".join(f"{n} {w}{'s' * (n > 1)}" for w, n in (("rtp write", writes),
                                                                  ("barrier set", sets)) if n)
        said.append(f"each {what} takes "
                    f"{target.timing.register_write_s * 1e6:.2g} us, a third of a task's issue "
                    f"cost by assumption (no row measures a register write; {here} here)")
    # npu2's bf16 mmuls on the bfp16 unit: the cycles= models count the multiplier only
    bfp16 = [k.symbol for k in d.kernels if k.on_bfp16_unit]
    if bfp16:
        named = ", ".join(bfp16[:2]) + (f" and {len(bfp16) - 2} more" if len(bfp16) > 2 else "")
        said.append(f"{named} {'run' if len(bfp16) > 1 else 'runs'} bf16 mmuls on "
                    f"{target.family}'s bfp16 unit: {conversions_left_out('the cycles')}")
    if d.flows == "packet":
        said.append("packet streams are timed as circuit ones: the 32-bit header each packet "
                    "carries is not modelled")
    rate = target.cascade_words_per_cycle
    bits = target.cascade_bits
    for k in d.kernels:
        words = max(t.nbytes * 8 // bits for t in (k.cascade_in, k.cascade_out)
                    if t is not None) if (k.cascade_in or k.cascade_out) else 0
        if words and k.cycles < -(-words // rate):
            said.append(f"{k.symbol} declares {k.cycles:,} cycles but moves {words:,} cascade "
                        f"words a call: it is timed at {rate} word a cycle, the most a core "
                        "moves by assumption")
    return "; ".join(said)


def _assumed(m: Machine) -> str:
    """What the times rest on that nothing measured on this device supports ("" if nothing)."""
    target, tm = m.target, m.target.timing
    family, on = target.family, tm.measured_on
    if family == on:
        return ""
    # library kernels' cycles come from aiedsl's cost formulas, made and calibrated on npu1;
    # a kernel the design declares carries its own cycles= (or a profile for this device)
    modelled = [k.symbol for k in m.design.kernels
                if k.cycles_source == "declared" and k.reference.startswith("aiedsl.kernels.")]
    kernels = ""
    if modelled:
        named = ", ".join(modelled[:3]) + (f" and {len(modelled) - 3} more"
                                           if len(modelled) > 3 else "")
        kernels = f", and so are the cycle models of the library kernels it calls ({named})"
    rate = sorted(set(tm.dma_bytes_per_cycle.values()))
    return (f"{family}'s invocation, task, burst, lock and kernel-call costs and its DMA "
            f"channels' {'/'.join(map(str, rate))} B a cycle are {on}'s, assumed{kernels} (no "
            f"{family} measurement to fit them to): its times are estimates"
            + (f", at {target.clock_hz / 1e9:g} GHz, the top of the driver's clock levels "
               "(--clock sets another)" if m.clock_hz == target.clock_hz else ""))


class _ShimTraffic(TypedDict, total=False):
    burst_fill: float
    resent: bool
    few_elements: tuple[int, int]
    channels_full: str
    wider: str


def _shim_traffic(m: Machine, channel: str, total: float) -> _ShimTraffic:
    """For a DMA bottleneck that is a shim channel filling a fifo: the bytes its AXI bursts
    carry on average when its runs are shorter than a full burst (longer runs would need fewer
    bursts), and whether its fills read more elements than their tensors hold (some are sent
    more than once, which a broadcast would send once). Other channels: nothing."""
    proc = next((p for p in m.engine.procs if p.name == channel), None)
    if proc is None or not proc.info.get("shim"):
        return {}
    out: _ShimTraffic = {}
    shim = m.target.limits("shim")
    used = sum(1 for p in m.engine.procs if p.kind == proc.kind and p.info.get("shim"))
    if used >= (shim.dma_out if proc.kind == "mm2s" else shim.dma_in) * m.target.cols:
        from aiedsl.targets.devices import wider_device

        out["channels_full"] = m.target.name
        wider = wider_device(m.target)
        out["wider"] = wider.name if wider is not None else ""
    fills = [op for op in m.design.runtime
             if isinstance(op, Transfer) and op.op == "fill" and op.fifo == proc.info["fifo"]]
    if proc.kind != "mm2s" or not fills:
        return out
    burst_bytes = m.costs.burst_bytes
    moved = bursts = 0.0
    for op in fills:
        nbytes = op.pattern.numel * m.design.tensor(op.tensor).type.dt.itemsize
        moved += nbytes
        bursts += nbytes * bursts_per_byte(op.pattern, m.design.tensor(op.tensor).type.dt
                                           .itemsize, burst_bytes)
    if bursts and moved / bursts < burst_bytes * 0.9:
        out["burst_fill"] = moved / bursts
    per_tensor: dict[str, int] = {}
    for op in fills:
        per_tensor[op.tensor] = per_tensor.get(op.tensor, 0) + op.pattern.numel
    out["resent"] = any(n > m.design.tensor(t).type.numel for t, n in per_tensor.items())
    elem = m.design.fifo(proc.info["fifo"]).elem
    count = sum(per_tensor.values()) // max(elem.numel, 1)
    # few, and each long enough to stream that filling and draining the pipeline shows
    # (``total``: the device cycles)
    one = elem.nbytes / m.target.timing.dma_bytes_per_cycle["shim"]
    if 0 < count <= FEW_ELEMENTS and one >= FEW_ELEMENTS_SHARE * total:
        out["few_elements"] = (count, elem.nbytes)
    return out


def _busy_before(calls: Sequence[float], when: float) -> float:
    """Cycles a core's counted calls (``calls``: start, end, start, end, ... in order) spent
    computing before ``when``."""
    busy = 0.0
    for i in range(0, len(calls), 2):
        start, end = calls[i], calls[i + 1]
        if start >= when:
            break
        busy += (end if end < when else when) - start
    return busy
