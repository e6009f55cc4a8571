"""What limits a simulated run, as data: its :class:`Bottleneck` and the :class:`SingleBuffered`
fifo ends it names, each with the words the summary prints, and the thresholds that decide what
the summary names (:mod:`aiedsl.sim.stats` chooses them; :class:`~aiedsl.sim.summary.Timing`
holds them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

DRAM_SATURATED = 0.95
"""A DRAM direction busy at least this fraction of the device time is named the bottleneck even
when a DMA channel moves data longer: a shim channel's moving time includes its lag behind host
memory, DRAM's counts only bytes moved."""
DRAM_BOTH_NOTED = 0.1
DRAM_SHARED_NOTED = 0.5
"""The DRAM line says what one shared pool would make of reads and writes when each direction
uses at least ``DRAM_BOTH_NOTED`` of its bandwidth and the two together at least
``DRAM_SHARED_NOTED``: the model's separate pools are an assumption no measurement decides
(``TimingModel.dram_write_bytes_per_s``)."""
ISSUING_NOTED = 0.2
"""A runtime issuing shim DMA tasks this fraction of the device time is named beside a busy DMA
channel, and the summary says what the per-task cost rests on (:data:`TASK_COST_BASIS`)."""
FEW_ELEMENTS = 8
"""A shim channel filling a fifo with this many elements or fewer per invocation is said to
move few, large ones: the stages after it wait for each whole element, and idle while the first
fills the pipeline and the last drains it, which smaller elements overlap (a tester: 4
elements of 256 KB left a channel 21% idle, and 64 of 16 KB ran 18% faster on the same
channel)."""
FEW_ELEMENTS_SHARE = 0.1
"""... when one element takes this fraction of the device time to stream, or more: a short
element fills the pipeline in a moment, whatever their number."""
UNSATURATED = 0.6
"""A bottleneck busy less than this fraction of the time is named with the next busiest
resource: nothing is busy most of the time, so the run goes to waits between resources more
than to any one of them, and the summary measures what each kind of resource costs instead
(:data:`FREED_NOTED`)."""
FREED_NOTED = 0.1
"""When nothing is busy :data:`UNSATURATED` of the time, each kind of resource whose busiest is
busy this fraction of the time or more is made free in a run of its own
(:mod:`aiedsl.sim.freed`), and the kind that saves most is the bottleneck."""
SINGLE_BUFFER_NOTED = 0.1
"""A core waiting this fraction of the device time at a fifo end with one buffer is named in the
bottleneck: transfers and kernel calls take turns there, and a second buffer would overlap
them."""
TASK_COST_BASIS = ("GEMM i16 512^3",)
"""The npu1 calibration rows that determine ``TimingModel.shim_task_s`` (``bench/calibrate.py``
lists them; a test keeps the two the same)."""


@dataclass(frozen=True)
class SingleBuffered:
    """A core's fifo end with one buffer, where its kernel calls and transfers take turns."""

    core: str
    fifo: str
    port: str
    overlap: float
    """The most of the run a second buffer could overlap: the smaller of the core's waiting at
    this end and its computing (overlap hides one behind the other, never more)."""
    memtile: str = ""
    """The memtile fifo that feeds (or drains) this end, when it has one buffer too: a second
    buffer here alone would wait on it."""
    free: int | None = None
    """Bytes of the core's memory past its last buffer, when a second buffer would not fit
    there (None: it fits)."""
    needed: int = 0
    """Bytes of the second buffer (of one at each end named)."""
    also: tuple[tuple[str, str], ...] = ()
    """The core's other ends with one buffer that it acquires more than once a run (one
    acquired once, a configuration around the loop, overlaps nothing: a reviewer), ``(fifo,
    port)``: the overlap needs a second buffer at each (a tester deepened the one end named
    and saved 7%, not the 42% said; both together saved 42%)."""

    def clause(self) -> str:
        """The summary's words for it."""
        ends = [f"'{self.fifo}' ({self.port})"] + [f"'{f}' ({p})" for f, p in self.also]
        text = (f"{self.core} and its transfers take turns at {_listed(ends)}, "
                + ("ends with one buffer each: " if self.also else "an end with one buffer: "))
        if self.free is not None and self.also:
            return text + (f"a second buffer at each would overlap up to {self.overlap:.0%} of "
                           f"the run, but they ({self.needed:,} B) do not fit ({self.free:,} B "
                           "free in the core); smaller elements would make room")
        if self.free is not None:
            return text + (f"a second ({self.needed:,} B) would overlap up to "
                           f"{self.overlap:.0%} of the run but does not fit ({self.free:,} B "
                           "free in the core); smaller elements would make room")
        both = (f" with '{self.memtile}' on the memtile, which has one buffer too"
                if self.memtile else "")
        each = " at each" if self.also else ""
        return text + (f"a second buffer (depth=2){each}{both} could overlap up to "
                       f"{self.overlap:.0%} of the run")


@dataclass(frozen=True)
class FewBuffers:
    """A fifo whose buffers are too few for the cores on its two sides to overlap: one end holds
    every buffer of its ring at once, or an end has one buffer (:mod:`aiedsl.sim.stalls`)."""

    fifo: str
    depth: int
    """Its ``depth=`` now (every end the same)."""
    trial_depth: int
    """The depth it was simulated with (one more)."""
    line: int
    """The line of the design that declares it."""
    why: str
    """What holds the cores back, as words (``stage1[0,0] (0,2) waits 75% of the time for a
    free buffer of 'gray', all 3 of which stage2[0,0] (0,3) holds at once``)."""
    handle: str = ""
    """How the design file names it when it is a channel's fifo (``gray[0] of channel 'gray'``;
    the channel's depth= sets every fifo of it, the trial this one only)."""

    def knob(self) -> str:
        """The change, as words."""
        what = self.handle or f"'{self.fifo}'"
        return f"depth={self.trial_depth} for {what} (line {self.line}; now {self.depth})"


@dataclass(frozen=True)
class BufferStall:
    """Fifos with too few buffers, and the run simulated again with one more each (kernels
    timed only): what it measured, never a guess."""

    fifos: tuple[FewBuffers, ...]
    cycles: float
    """Device cycles of the run with every one of :attr:`fifos` at its trial depth."""
    base: float
    """Device cycles of this run."""
    clock_hz: float
    alone: tuple[float, ...] = ()
    """For two fifos needed together: the share of the run each alone saves, in order."""

    @property
    def saved(self) -> float:
        """The share of this run's device time the trial depths save."""
        return (self.base - self.cycles) / self.base

    def clause(self) -> str:
        """The summary's words for it."""
        whys = ", and ".join(x.why for x in self.fifos)
        knobs = " and ".join(x.knob() for x in self.fifos)
        together = " together" if len(self.fifos) > 1 else ""
        alone = ""
        if self.alone:
            alone = "; alone, " + ", ".join(f"'{x.fifo}' saves {a:.0%}"
                                            for x, a in zip(self.fifos, self.alone))
        us = 1e6 / self.clock_hz
        return (f"too few buffers make the cores wait on each other: {whys}; with {knobs}"
                f"{together} the run takes {self.cycles * us:.2f} us on the device, not "
                f"{self.base * us:.2f} ({self.saved:.0%} less, simulated{alone})")


_NAMED = {"compute": "kernels", "dram": "host memory's bandwidth", "dma": "channel",
          "runtime": "runtime's issuing"}
"""What a bottleneck's bound says a change would be to."""

FREED_WORDS = {"compute": "with kernels that take no time",
               "dram": "with host memory of unlimited bandwidth",
               "dma": "with DMA channels and streams of unlimited rate",
               "runtime": "with shim DMA tasks issued at no cost"}
"""How the summary names each kind of resource made free (:mod:`aiedsl.sim.freed`)."""


def _listed(items: list[str], last: str = " and ") -> str:
    """``items`` as a list in words: ``a``, ``a and b``, ``a, b and c``."""
    return last.join(filter(None, (", ".join(items[:-1]), items[-1]))) if items else ""


@dataclass(frozen=True)
class Freed:
    """A kind of resource made free in a second run (kernels timed only): what it saves."""

    kind: Literal["compute", "dram", "dma", "runtime"]
    saved: float | None
    """The share of the run's device time it saves (0..1); None when that run does not end."""

    def words(self, register_writes: int = 0) -> str:
        """The summary's words for it; ``register_writes``: the rtp writes and barrier sets the
        runtime issues, which a free runtime issues at no cost too (a register write costs a
        share of a task: :attr:`~aiedsl.targets.timing.TimingModel.register_write_s`)."""
        how = FREED_WORDS[self.kind]
        if self.kind == "runtime" and register_writes:
            how = how.replace("shim DMA tasks", "shim DMA tasks and register writes")
        if self.saved is None:
            return f"it does not end {how}"
        return f"{self.saved:.0%} shorter {how}"


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
    """Busy fraction of that resource over the device-side time (0..1): a core's computing, a
    DMA channel's moving data (not its waiting for a receiver), a DRAM direction's bytes at its
    bandwidth, the runtime's issuing. Like is compared with like to choose the resource."""
    dram_bytes: int
    """Bytes the shims moved to and from host memory."""
    dram_bytes_per_s: float
    """The bandwidth the model assumes for the busier DRAM direction."""
    rtp_writes: int = 0
    """Runtime-parameter writes in the runtime sequence (the firmware issues them too)."""
    barrier_sets: int = 0
    """Barrier sets in the runtime sequence (register writes the firmware issues too)."""
    issuing: float = 0.0
    """Busy fraction of the runtime issuing shim DMA tasks (whatever the bottleneck's kind)."""
    one_task_each: bool = False
    """Every transfer is a tensor's only transfer in its direction through its shim tile: no
    fewer tasks are possible on those columns."""
    over_columns: bool = False
    """Some tensor moves through several shim tiles in one direction (a task on each)."""
    direction_bytes: int = 0
    """Bytes the busier DRAM direction moved (what its utilisation counts)."""
    waiting: float = 0.0
    """For a DMA channel: the fraction of the time it held an element its receivers were not
    ready to take (back-pressure), besides its :attr:`utilisation` moving data."""
    runner_up: tuple[str, float] = ("", 0.0)
    """The busiest resource of another kind, as words, and its busy fraction (compared like
    with like, as :attr:`utilisation`)."""
    one_buffer_receiver: str = ""
    """For a DMA channel waiting on its receivers at least :data:`SINGLE_BUFFER_NOTED` of the
    time: its fifo's receiving end with one buffer, as words (``'in_l3' on memtile (0, 1)``);
    "" otherwise."""
    receiver_room: str = ""
    """Why a second buffer at :attr:`one_buffer_receiver` would not fit, as words ("": it
    fits)."""
    receiver_also: tuple[tuple[str, str], ...] = ()
    """The receiving core's other one-buffer ends it acquires more than once a run, ``(fifo,
    port)``: the overlap takes a second buffer at each (a reviewer: the receiver's alone saved
    8% where both saved 37%)."""
    burst_fill: float = 0.0
    """For a shim channel filling a fifo: the bytes its AXI bursts carry on average, when its
    contiguous runs are shorter than a full burst (0: they fill their bursts, or another kind
    of channel)."""
    resent: bool = False
    """For a shim channel filling a fifo: its fills read more elements than their tensors hold,
    so some go more than once."""
    channels_full: str = ""
    """For a shim channel: the device's name when every shim channel of its direction there is
    in use already ("" otherwise: a tester was told to spread a copy over more channels with
    none left)."""
    wider: str = ""
    """With :attr:`channels_full`: the narrowest device with more columns ("" when none has:
    npu2's eight are the most)."""
    few_elements: tuple[int, int] = (0, 0)
    """For a shim channel filling a fifo with :data:`FEW_ELEMENTS` or fewer elements: how many,
    and the bytes of each ((0, 0) otherwise)."""
    single_buffered: tuple[SingleBuffered, ...] = ()
    """Fifo ends with one buffer where a core's kernel calls and its transfers take turns for
    at least :data:`SINGLE_BUFFER_NOTED` of the run, most first."""
    busiest: str = ""
    """For a compute bottleneck: the busiest core as the summary names it
    (``stage2[0,0] (0,3)``; ``core[0,0] (0,2) and 3 more`` when :attr:`tied`, ``all 16
    alike`` when every core is as busy); "" for another kind."""
    tied: int = 0
    """For a compute bottleneck: how many other cores compute as large a share (to the
    percent)."""
    stall: BufferStall | None = None
    """Fifos whose too few buffers make a core wait on another, anywhere in the design, and what
    one more buffer each saves, simulated (:mod:`aiedsl.sim.stalls`); None when no such run is
    shorter by :data:`SINGLE_BUFFER_NOTED` of the time or more."""
    freed: tuple[Freed, ...] = ()
    """When nothing is busy most of the time (:data:`UNSATURATED`): the run simulated again
    with each kind made free whose busiest resource is busy :data:`FREED_NOTED` of the time or
    more, most saved first; the one that saves most is the one named. Empty when not
    measured."""
    measured: tuple[tuple[str, float], ...] = ()
    """With :attr:`freed`: the busiest resource of each other kind made free, as words with
    its busy share, busiest first (the sentence names these, not :attr:`runner_up`)."""
    host_bytes: int = 0
    """For a DRAM bottleneck: the bytes of the host tensors its direction moves (those the
    runtime fills, for reads; drains, for writes), each counted once: when the shims move no
    more than that, no byte moves twice and reuse on chip has nothing to save."""

    def _turns(self) -> str:
        """What the single-buffered ends and too few buffers cost, as clauses ("" when
        none)."""
        return "".join("; " + e.clause() for e in self.single_buffered[:2]) + (
            "; " + self.stall.clause() if self.stall is not None else "")

    def sentence(self) -> str:
        """One sentence naming the limit and what would help."""
        text = self._sentence()
        what, share = self.runner_up
        # (the runtime, when the sentence names its issuing, is no runner-up, but bounds too)
        next_, most = ((what, share) if self.kind == "runtime" or self.issuing <= share else
                       ("the runtime issuing shim DMA tasks", self.issuing))
        if self.utilisation >= UNSATURATED and most >= UNSATURATED:
            # what a change to the named resource can save at most: the next busiest keeps
            # its busy time (its bytes, its kernels' cycles, its tasks), so the run cannot get
            # shorter than that (a tester: 'faster kernels would help' at 95% computing beside
            # a shim channel at 94%; halving the kernels saved 1.7%)
            verb = "are" if next_.startswith("DRAM") else "is"
            return (text + f"; but {next_} {verb} busy {most:.0%} of the time too: no change "
                    f"to the {_NAMED[self.kind]} alone shortens the run by more than "
                    f"{1 - most:.0%}")
        if self.utilisation >= UNSATURATED or not (what or self.measured):
            return text
        text += "; nothing is busy most of the time, though: "
        if not self.freed:
            return (text + f"next is {what} at {share:.0%}, and the run goes to waits between "
                    "them more than to either")
        named = [f"{w} at {b:.0%}" for w, b in self.measured]
        others = (f"the other kind{'s' * (len(named) > 1)} measured: {_listed(named)}; "
                  if named else "")
        writes = self.rtp_writes + self.barrier_sets
        ended = [f.words(writes) for f in self.freed if f.saved is not None]
        hung = "".join("; " + f.words(writes) for f in self.freed if f.saved is None)
        return (text + f"{others}simulated again with each made free (kernels timed only), the "
                f"run is {_listed(ended, ', and ' if len(ended) > 2 else ' and ')}{hung}")

    def _sentence(self) -> str:
        if self.kind == "compute":
            who, each = "the busiest core computes", ""
            if self.busiest and self.tied:
                who = f"the busiest cores, {self.busiest}, compute"
                each = " each"
            elif self.busiest:
                who = f"the busiest core, {self.busiest}, computes"
            return (f"compute: {who} {self.utilisation:.0%} of the time{each}; "
                    "faster kernels or more cores would help" + self._issuing()
                    + self._turns())
        if self.kind == "dram":
            verb, noun = (("reads", "read") if self.resource == "DRAM read" else
                          ("writes", "written"))
            moved = self.direction_bytes or self.dram_bytes
            once = 0 < moved <= self.host_bytes
            tensors = "fills" if verb == "reads" else "drains"
            times = moved / self.host_bytes if self.host_bytes else 0.0
            said = f"{times:.2f}" if times < 1.1 else f"{times:.1f}"
            over = f"the tensors the runtime {tensors} ({self.host_bytes / 1e6:.2f} MB) move " \
                f"{said} times over"
            help_ = (f"each byte of the tensors the runtime {tensors} moves once, so reuse on "
                     "chip has nothing to save: fewer bytes (a narrower type) would need less"
                     if once else
                     # (a tester: memtile staging along K read as much; larger tiles less)
                     f"{over}: reuse on chip would need less (a memtile can send what it holds "
                     "more than once, repeat=; in a product, larger tiles make fewer passes "
                     "over the other operand)" if times and verb == "reads" else
                     f"{over}: writing each byte once would need less" if times else
                     "reuse data on chip (larger tiles, memtile staging) to need less, if the "
                     "design moves any twice")
            return (f"DRAM: the shims' host-memory {verb} ({moved / 1e6:.2f} MB {noun}) are "
                    f"busy {self.utilisation:.0%} of the time at "
                    f"{self.dram_bytes_per_s / 1e9:g} GB/s; {help_}" + self._issuing()
                    + self._turns())
        if self.kind == "runtime":
            what = "shim DMA tasks" + "".join(
                f" and {w}" for w, n in (("rtp writes", self.rtp_writes),
                                         ("barrier sets", self.barrier_sets)) if n)
            help_ = ("fewer, longer transfers (each task covering more of a tensor) would help"
                     if not self.one_task_each else
                     # (fewer columns issue fewer tasks, but a tester found each column's
                     # DMAs then slower by far more, in every case tried: not offered)
                     "each tensor already moves in one task per direction per shim column: "
                     "more work per invocation spreads the fixed cost thinner"
                     if self.over_columns
                     else "each tensor already moves in one task per direction: a fixed cost, "
                     "which more work per invocation spreads thinner")
            return (f"runtime: issuing the {what} one by one takes "
                    f"{self.utilisation:.0%} of the time; {help_}" + self._turns())
        waits = (f", and waits {self.waiting:.0%} for its receivers to take data"
                 if self.waiting >= 0.005 else "")
        text = (f"data movement: DMA '{self.resource}' moves data {self.utilisation:.0%} of the "
                f"time{waits}; ")
        if self.one_buffer_receiver:
            # the channel could stream while the receiver's side empties a buffer
            room = f", where {self.receiver_room}" if self.receiver_room else ""
            also = [f"'{f}' ({p})" for f, p in self.receiver_also]
            text += (f"its receiver ({self.one_buffer_receiver}{room}) has one buffer, so each "
                     "element waits for the one before to be taken away" + (
                         "" if self.receiver_room else
                         f": a second buffer there and at the core's {_listed(also)}, which "
                         f"{'has' if len(also) == 1 else 'have'} one too (depth=2 each), would "
                         "let them overlap" if also else
                         ": a second buffer there (depth=2) would let the two overlap"))
        else:
            full = f"every shim channel of {self.channels_full} that way is in use already"
            ways = ([] if self.channels_full and not self.wider else
                    ["spread its traffic over more channels" + (
                        f" ({full}: {self.wider} has more)" if self.channels_full else "")])
            count, size = self.few_elements
            if count and self.utilisation < 0.9:
                ways.insert(0, f"send smaller elements (it moves {count} of {size:,} B: the "
                            "stages after it wait for each whole, and idle while the first "
                            "fills the pipeline and the last drains it)")
            if self.burst_fill:
                ways.append(f"send longer contiguous runs from host memory (its bursts carry "
                            f"{self.burst_fill:.0f} B on average)")
            if self.resent:
                ways.append("broadcast what it sends more than once")
            if not ways:  # no channel left, on any device
                ways.append(f"move fewer bytes ({full}, and no device has more)")
            text += (", ".join(ways[:-1]) + ", or " + ways[-1] if len(ways) > 2
                     else " or ".join(ways))
        return text + self._issuing() + self._turns()

    def _issuing(self) -> str:
        """What the runtime's issuing of shim DMA tasks takes, when it is :data:`ISSUING_NOTED`
        of the time or more, as a clause ("" otherwise): the transfers wait for it, whatever
        the bottleneck (a tester: a DRAM-bound copy spent 29% issuing, and freeing that saved
        19%, more than DRAM's idle share)."""
        if self.issuing < ISSUING_NOTED:
            return ""
        # a reviewer: with every tensor in one task already, "fewer, longer transfers" asked
        # for what cannot be done
        fewer = ("each tensor already moves in one task per direction" if
                 self.one_task_each and not self.over_columns else
                 "fewer, longer transfers would shorten that")
        return (f" (the runtime also spends {self.issuing:.0%} of the time issuing shim DMA "
                f"tasks one by one, which the transfers wait for: {fewer})")
