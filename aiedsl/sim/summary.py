"""What a simulated run's timing holds and how it reads: :class:`Timing` (totals, utilisation,
its :class:`~aiedsl.sim.bottleneck.Bottleneck`), with the words the summary prints."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aiedsl.errors import listed
from aiedsl.sim.bottleneck import DRAM_BOTH_NOTED, DRAM_SHARED_NOTED, Bottleneck

if TYPE_CHECKING:
    from aiedsl.ir.design import Design


def ops_unit(d: Design) -> str:
    """What a throughput of ``d`` counts: ``GFLOPS`` when every kernel declaring ``ops=``
    computes on floating-point buffers, ``GOPS`` when none does, both words when mixed; and,
    when a kernel the cores call declares no ``ops=``, which kernels it counts (a three-stage
    pipeline whose one stage declares ``ops=`` is not that fast as a whole)."""
    from aiedsl.dtypes import dtype as lookup_dtype
    from aiedsl.ir.core_ops import Call
    from aiedsl.ir.program import walk

    floats = {any(a.kind == "buffer" and lookup_dtype(a.dtype).is_float for a in k.args)
              for k in d.kernels if k.counts_ops}
    unit = ("GFLOPS" if floats == {True} else "GOPS" if floats == {False}
            else "GOPS (GFLOPS for float kernels)")
    called = {op.kernel for c in d.cores for op, _ in walk(c.body) if isinstance(op, Call)}
    counted = [k.symbol for k in d.kernels if k.counts_ops and k.symbol in called]
    # a kernel that only copies (exact) or only writes (zero: no input) does no arithmetic
    uncounted = [k.symbol for k in d.kernels if not k.counts_ops and k.symbol in called
                 and not k.exact and any(a.kind == "buffer" and a.access != "out"
                                         for a in k.args)]
    if not counted or not uncounted:
        return unit
    return (f"{unit} of {listed(counted)} only ({listed(uncounted)} "
            f"declare{'s' if len(uncounted) == 1 else ''} no ops=)")


def significant(x: float, digits: int = 3) -> str:
    """``x`` with at least ``digits`` significant digits and one decimal, without an exponent:
    ``698.6``, ``12.3``, ``0.0325`` (a small design's throughput printed as ``0.0`` said
    nothing)."""
    if x <= 0:
        return "0"
    decimals = max(1, digits - 1 - math.floor(math.log10(x)))
    return f"{x:,.{decimals}f}"


@dataclass(frozen=True)
class KernelTime:
    """One kernel's calls in one run of a design, on every core together."""

    symbol: str
    calls: int
    """Its calls in one run."""
    cycles: int
    """What they take: each call's cycles (declared, or its profile's) and the fixed cost of a
    call (:attr:`~aiedsl.targets.timing.TimingModel.kernel_call_cycles`)."""
    share: float
    """Of all kernels' :attr:`cycles`."""

    def text(self) -> str:
        """``matmul_bf16_f32_64x64x64 512 calls, 3,778,560 cycles (99%)``."""
        return (f"{self.symbol} {self.calls:,} call{'s' * (self.calls != 1)}, "
                f"{self.cycles:,} cycles ({self.share:.0%})")


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
    """Busy fraction per core, by core name: of the device time, or, for a core that works past
    the host's wait (:attr:`core_until`), of the time until it stops."""
    channel_busy: dict[str, float]
    """Busy fraction per DMA channel process, by name: moving data (:attr:`channel_moving`)
    plus, for a sending channel, the time it held an element its receivers did not take yet
    (waiting for a free buffer at the other end)."""
    dram_bytes: int
    """Bytes moved between host memory and the shims."""
    dram_utilisation: float
    """Fraction of the busier direction's DRAM bandwidth used over the device-side time
    (:attr:`dram_read_utilisation`, :attr:`dram_write_utilisation`: each direction)."""
    bottleneck: Bottleneck
    device_cycles: float = 0.0
    """Cycles on the device: from the runtime's first instruction to the last completion it
    waits for (no host or firmware fixed cost)."""
    invocation_s: float = 0.0
    """The fixed cost of one invocation (the target's ``TimingModel.invocation_s``)."""
    invocation_spread_s: float = 0.0
    """How far the measured runs that fit :attr:`invocation_s` lie from the model at most
    (``TimingModel.invocation_spread_s``)."""
    after_cycles: float = 0.0
    """Cycles a core still works after the host's wait returns (after
    :attr:`device_cycles`): calls past the last output the runtime waits for, which the next
    invocation, started at once, overlaps; 0 when every core is done by then."""
    after_core: str = ""
    """The core that works longest past the host's wait ("" when none does)."""
    after_next_pass: bool = False
    """Whether that work is all the next invocation's: each core's program ends its pass before
    the wait and starts again at once (the core loops), its first calls needing nothing the
    host sends; False when a core's own pass goes on past the wait."""
    core_until: dict[str, float] = field(default_factory=dict)
    """Per core that works past the host's wait: cycles from the device's start until it stops
    (its :attr:`core_busy` is a fraction of these, not of the device time)."""
    back_to_back_cycles: float | None = None
    """When a core works past the host's wait: cycles from the end of one invocation to the end
    of the next when the host starts each as the one before returns, simulated in the steady
    state (invocations on one timeline, the last two ends apart: the fixed invocation cost
    between them included; see :func:`aiedsl.sim.invocations.back_to_back`); None when no
    core works past the wait, or when those invocations did not run to their end
    (:attr:`back_to_back_stopped`)."""
    back_to_back_stopped: bool = False
    """A core works past the host's wait, and the invocations simulated to time back-to-back
    runs did not run to their end (``simulate(design, invocations=3)`` reports why)."""
    runs_once: bool = False
    """A core works past the host's wait, in a design that runs once per load (a core of
    ``forever=False``): there are no back-to-back runs to time."""
    dram_read_bytes: int = 0
    """Bytes the shims read from host memory (fills); ``dram_bytes`` counts these and the
    writes."""
    dram_write_bytes: int = 0
    """Bytes the shims wrote to host memory (drains)."""
    profiled: tuple[str, ...] = ()
    """Kernels whose cycles per call come from their profile (no ``cycles=`` declared)."""
    profiled_charges: tuple[str, ...] = ()
    """Of :attr:`profiled`, what each call is charged and with which scalars it was profiled
    (``scale_n: 128 cycles per call with n=1024``)."""
    assumed: str = ""
    """What the times rest on that no measurement of this device supports ("" if nothing)."""
    channel_moving: dict[str, float] = field(default_factory=dict)
    """Fraction of the device time each DMA channel moved data (a shim's AXI-burst overhead
    and host-memory lag included), by name; ``channel_busy`` less this is its waiting."""
    dram_read_utilisation: float = 0.0
    """Fraction of the DRAM read bandwidth (``dram_read_bytes_per_s``) the reads used."""
    dram_write_utilisation: float = 0.0
    """Fraction of the DRAM write bandwidth (``dram_write_bytes_per_s``) the writes used."""
    dram_read_bytes_per_s: float = 0.0
    """The read bandwidth the model assumes (a pool separate from the writes', by assumption)."""
    dram_write_bytes_per_s: float = 0.0
    """The write bandwidth the model assumes."""
    ops_unit: str = "GOPS (GFLOPS for float kernels)"
    """What :attr:`gops` counts: ``GFLOPS`` when every kernel declaring ``ops=`` computes on
    floating-point buffers, ``GOPS`` when none does, both words when the kernels are mixed."""
    unmodelled: str = ""
    """What the design uses whose time the model assumes with no measurement, or leaves out
    (runtime-parameter writes, packet headers, cascade calls faster than the core moves words;
    "" if nothing)."""
    task_basis: str = ""
    """When the runtime issues shim DMA tasks a large share of the time (at least
    :data:`~aiedsl.sim.bottleneck.ISSUING_NOTED`): what the per-task cost rests on ("" when
    not)."""
    driver_timeout_s: float = 0.0
    """The NPU driver's job timeout (:attr:`~aiedsl.targets.timing.TimingModel.driver_timeout_s`):
    a modelled run longer than this would be stopped on the NPU (0: not judged)."""
    kernel_time: tuple[KernelTime, ...] = ()
    """Per kernel, the time its calls of one run take on every core together, the most first
    (what each kernel costs, for a kernel tuner; () when a core loops without end)."""
    busiest_core: str = ""
    """The core with the largest :attr:`core_busy`, as reports name it (``stage2[0,0] (0,3)``),
    with how many more are as busy to the percent (``core[0,0] (0,2) and 3 more``; ``all 16
    alike`` when every core is); "" when not known."""

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
        """Achieved GFLOPS/GOPS per invocation (operations the kernels declare), one run as the
        host times it."""
        return self.ops / self.seconds / 1e9 if self.cycles else 0.0

    @property
    def hidden(self) -> bool:
        """Back-to-back runs end no further apart than one run takes: the work past the host's
        wait (if any) costs nothing then (also True when that is not known)."""
        b = self.back_to_back_cycles
        return b is None or b <= self.cycles + 0.5

    @property
    def back_to_back_gops(self) -> float:
        """Achieved GFLOPS/GOPS with invocations run back to back, one per
        :attr:`back_to_back_cycles` (:attr:`gops` when that is not known)."""
        b = self.back_to_back_cycles
        if b is None or b <= 0:
            return self.gops
        return self.ops / (b / self.clock_hz) / 1e9

    @property
    def back_to_back_busy(self) -> float | None:
        """When back-to-back invocations end further apart than one run takes (a core's work
        past the host's wait outlasts the next invocation's fixed cost and start): the share
        of that period :attr:`after_core` computes, which then bounds the throughput rather
        than :attr:`bottleneck` (one run's limit); else None."""
        b = self.back_to_back_cycles
        if b is None or self.hidden or not self.after_core or b <= 0:
            return None
        until = self.core_until.get(self.after_core)
        busy = self.core_busy.get(self.after_core)
        if until is None or busy is None:
            return None
        return busy * until / b

    def lines(self) -> list[str]:
        """Human-readable summary, rendered from the fields."""
        busy = sorted(self.core_busy.values())
        out = [f"time: {self.seconds * 1e6:.2f} us per invocation ({self.invocation_s * 1e6:.2f}"
               f" us fixed cost + {self.device_seconds * 1e6:.2f} us on the device: "
               f"{self.device_cycles:,.0f} cycles at {self.clock_hz / 1e9:g} GHz)"]
        if self.after_cycles:
            more = (f"after the host's wait: {self.after_core} works "
                    f"{significant(self.after_cycles / self.clock_hz * 1e6)} us more (" + (
                        "the next invocation's first calls: its program starts again as its "
                        "pass ends, and they wait for no data from the host"
                        if self.after_next_pass else
                        "calls after the last output the runtime waits for")
                    + "; the time above stops at that wait)")
            b = self.back_to_back_cycles
            if self.runs_once:
                out.append(f"{more}; the design runs once per load (a core of forever=False)")
            elif b is None and self.back_to_back_stopped:
                out.append(f"{more}; back to back, the next invocation waits for it as far as "
                           "it needs the core: how long is not known, as the invocations "
                           "simulated to time it did not run to their end (simulate(design, "
                           "invocations=3) from Python says why)")
            elif self.hidden:
                out.append(f"{more}; back-to-back invocations overlap that work with the next "
                           f"one's {self.invocation_s * 1e6:.2f} us fixed cost and its start")
            else:
                assert b is not None, "hidden when not known"
                out.append(f"{more}, longer than the next invocation's "
                           f"{self.invocation_s * 1e6:.2f} us fixed cost and its start "
                           f"overlap: back to back, invocations end {b / self.clock_hz * 1e6:.2f}"
                           f" us apart, not {self.seconds * 1e6:.2f} us (simulated: each "
                           "invocation started as the one before returns, on one timeline, "
                           "in the steady state)")
        if self.ops:
            both = "" if self.hidden else (
                f" for one run; back to back {significant(self.back_to_back_gops)} "
                f"{self.ops_unit}")
            out.append(f"throughput: {significant(self.gops)} {self.ops_unit}{both}")
        if busy:
            of = "of the device time"
            who = f"; the busiest: {self.busiest_core}" if self.busiest_core else ""
            if len(self.core_until) == 1:
                (name, end), = self.core_until.items()
                of = (f"({of}; {name}'s of the {end / self.clock_hz * 1e6:.2f} us until it "
                      f"stops, past the host's wait{who})")
            elif self.core_until:
                of = (f"({of}; those of {', '.join(sorted(self.core_until))}, which work past "
                      f"the host's wait, of the time until each stops{who})")
            elif who:
                of = f"{of} (the busiest: {self.busiest_core})"
            # the true median: of two stages, a core idle and one busy are 50% apart, not the
            # busy one's (the upper middle hid the idle half of a pipeline)
            half = len(busy) // 2
            median = busy[half] if len(busy) % 2 else (busy[half - 1] + busy[half]) / 2
            out.append(f"cores busy: min {busy[0]:.0%}, median {median:.0%}, "
                       f"max {busy[-1]:.0%} {of}")
        if self.kernel_time:
            listed = "; ".join(k.text() for k in self.kernel_time[:4])
            rest = len(self.kernel_time) - 4
            out.append(f"kernel time: {listed}" + (f"; {rest} more" if rest > 0 else "")
                       + " (one run's calls on every core, each call's cycles and its fixed "
                       "cost)")
        moving = self.channel_moving or self.channel_busy
        top = sorted(moving.items(), key=lambda kv: (-kv[1], -self.channel_busy[kv[0]]))[:3]
        if top:
            said = []
            for n, mv in top:
                wait = self.channel_busy[n] - mv
                said.append(f"{n} {mv:.0%}" + (f" (+{wait:.0%} waiting)" if wait >= 0.005
                                                 else ""))
            out.append("busiest DMA channels, moving data (waiting for the other end): "
                       + ", ".join(said))
        out.append(self.dram_line())
        share = self.back_to_back_busy
        if share is None:
            out.append(f"bottleneck: {self.bottleneck.sentence()}")
        else:
            b = self.back_to_back_cycles or 0.0
            out.append(f"bottleneck: back to back, {self.after_core}: it computes {share:.0%} "
                       f"of the {b / self.clock_hz * 1e6:.2f} us between invocations' ends, "
                       "its calls past the host's wait included; faster kernels on it, or "
                       "its work spread over more cores, would help. For one run: "
                       f"{self.bottleneck.sentence()}")
        if self.profiled:
            out.append("cycles per call from `aiedsl kernel profile` (no cycles= declared, a "
                       "bound at best): " + "; ".join(self.profiled_charges or self.profiled))
        if self.task_basis:
            out.append(f"note: {self.task_basis}")
        if self.invocation_spread_s and self.invocation_s >= 0.5 * self.seconds:
            # a tester: two small designs 13.6 us apart when measured model 0.07 us apart
            out.append(
                f"note: {self.invocation_s * 1e6:.2f} us of the {self.seconds * 1e6:.2f} is the "
                "fixed invocation cost, fitted to five small designs measured on npu1 whose "
                f"modelled times are up to {self.invocation_spread_s * 1e6:.1f} us off their "
                "measured ones (bench/calibrate.py): compare small designs by their time on "
                "the device")
        if self.assumed:
            out.append(f"note: {self.assumed}")
        if self.unmodelled:
            out.append(f"note: {self.unmodelled}")
        if self.driver_timeout_s and self.seconds > self.driver_timeout_s:
            out.append(f"warning: one invocation would take {significant(self.seconds)} s on "
                       f"the NPU, past the {self.driver_timeout_s:g} s some Linux NPU drivers "
                       "let one run take (AMD's xdna-driver has stopped runs at 10 or 16 s; the "
                       "upstream kernel's amdxdna at 60 s): the driver would stop it and its "
                       "outputs would not be written; split the work over several invocations")
        return out

    def dram_line(self) -> str:
        """The DRAM line of :meth:`lines`: each direction's share of its own bandwidth, and
        where both are heavy, what sharing one pool would make of them."""
        r, w = self.dram_read_utilisation, self.dram_write_utilisation
        rb, wb = self.dram_read_bytes_per_s / 1e9, self.dram_write_bytes_per_s / 1e9
        if not (self.dram_read_bytes or self.dram_write_bytes):
            return "DRAM: nothing moved"
        if not self.dram_write_bytes:
            return f"DRAM: reads use {r:.0%} of their {rb:g} GB/s (nothing written)"
        if not self.dram_read_bytes:
            return f"DRAM: writes use {w:.0%} of their {wb:g} GB/s (nothing read)"
        line = (f"DRAM: reads use {r:.0%} of their {rb:g} GB/s, writes {w:.0%} of theirs"
                if rb == wb else
                f"DRAM: reads use {r:.0%} of their {rb:g} GB/s, writes {w:.0%} of their "
                f"{wb:g} GB/s")
        if min(r, w) >= DRAM_BOTH_NOTED and r + w >= DRAM_SHARED_NOTED and rb == wb:
            line += (f"; the two are separate pools by assumption (no measurement tells): if "
                     f"they share one {rb:g} GB/s, together {r + w:.0%}")
        return line
