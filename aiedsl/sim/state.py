"""The parts of a simulated machine: buffer rings, host-memory ports, the timing constants in
cycles, runtime-parameter memories, core-local buffers, and :class:`Machine`, which holds them
for one run.

Plain data: the processes that act on them live in :mod:`aiedsl.sim.dma` (on-chip DMAs),
:mod:`aiedsl.sim.shim_dma`, :mod:`aiedsl.sim.core` and :mod:`aiedsl.sim.runtime`;
:mod:`aiedsl.sim.machine` wires them together.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from aiedsl.dtypes import unwritten
from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.sim.engine import Engine
from aiedsl.sim.processes import Chunk, Conn, Lock, Proc, WorkQueue
from aiedsl.targets import TargetModel, TimingModel


def initial_local(init: str | None, shape: tuple[int, ...], np_dtype: np.dtype) -> np.ndarray:
    """A core's copy of a core-local buffer as the design's load leaves it: the bytes of its
    initial value (hex, little-endian, as :attr:`aiedsl.ir.Local.init` holds them), or
    :func:`unwritten` memory when it has none."""
    if init is None:
        return unwritten(shape, np_dtype)
    raw = np.frombuffer(bytes.fromhex(init), dtype=np_dtype.newbyteorder("<"))
    return raw.astype(np_dtype).reshape(shape)  # a copy of its own: the core writes it



@dataclass
class Ring:
    """``depth`` buffers of one endpoint, with its producer and consumer locks."""

    name: str
    bufs: np.ndarray
    prod: Lock
    cons: Lock
    fills: list[Any] | None = None
    """For a ring a DMA fills whole from its stream: per buffer, the chunk its contents are a
    copy of (None once anything else wrote it). Cores that got the same chunk share the
    operands a kernel prepares from it (:class:`aiedsl.kernels.prepared.Prepared`)."""
    pending: list[np.ndarray | Chunk | None] | None = None
    """For a core's input ring a DMA fills whole: per buffer, data received but not yet
    written (None when the buffer holds it), or the chunk itself when its gather is deferred
    (:attr:`aiedsl.sim.processes.Chunk.deferred`). A broadcast puts one element into several cores,
    and cores that share a kernel's operands made from it need not read their own copy: the
    copy is made when something reads the buffer (:class:`aiedsl.sim.operands.LazyViews`)."""

    @property
    def depth(self) -> int:
        """Number of buffers."""
        return self.bufs.shape[0]


@dataclass
class DramPort:
    """One direction of host-memory bandwidth (reads or writes), shared by the shim channels of
    that direction, served in the order requests are ready.

    The engine may run a channel whose clock is behind one that has already reserved (a woken
    process carries its own clock), so a request can arrive after a later-ready one. It then
    takes the idle time left before that one (``gaps``), piece by piece, and only what does not
    fit there goes after everything reserved: no request waits behind one that was ready later
    while host memory stood idle.
    """

    bytes_per_cycle: float
    free: float = 0.0
    """When everything reserved so far is served."""
    moved: int = 0
    gap_start: list[float] = field(default_factory=list)
    gap_end: list[float] = field(default_factory=list)
    """Idle intervals before ``free``, in time order (parallel lists, for bisect)."""

    def reserve(self, time: float, nbytes: int) -> float:
        """Serve ``nbytes`` ready at ``time``; returns when its last byte is served."""
        need = nbytes / self.bytes_per_cycle
        self.moved += nbytes
        if time < self.free and self.gap_end:
            gs, ge = self.gap_start, self.gap_end
            i = bisect_right(ge, time)
            while i < len(ge):
                s = gs[i] if gs[i] > time else time
                avail = ge[i] - s
                if avail > need:  # ends inside this gap
                    end = s + need
                    if s == gs[i]:
                        gs[i] = end
                    else:  # the gap splits around it
                        gs.insert(i + 1, end)
                        ge.insert(i + 1, ge[i])
                        ge[i] = s
                    return end
                need -= avail
                if s > gs[i]:  # uses the gap's tail
                    ge[i] = s
                    i += 1
                else:
                    del gs[i], ge[i]
                if need <= 0:
                    return s + avail
        start = time if time > self.free else self.free
        if start > self.free:
            self.gap_start.append(self.free)
            self.gap_end.append(start)
        self.free = start + need
        return self.free


@dataclass
class Dram:
    """Host memory as the shims see it: a read port (fills) and a write port (drains)."""

    read: DramPort
    write: DramPort

    @property
    def moved(self) -> int:
        """Bytes read and written."""
        return self.read.moved + self.write.moved


@dataclass(frozen=True)
class Costs:
    """The target's timing constants in the simulator's unit (cycles of the simulated clock)."""

    task: float
    """Cycles the runtime spends issuing one shim transfer."""
    burst: float
    """Cycles a shim channel spends per AXI burst beyond its data."""
    burst_bytes: int
    """Largest burst, bytes."""
    acquire: int
    release: int
    call: int
    register_write: float = 0.0
    """Cycles the runtime spends on one register write (an rtp write)."""

    @staticmethod
    def of(timing: TimingModel, clock_hz: float) -> "Costs":
        """``timing``'s constants at ``clock_hz``."""
        return Costs(timing.shim_task_s * clock_hz, timing.shim_burst_cycles,
                     timing.shim_burst_bytes, timing.lock_acquire_cycles,
                     timing.lock_release_cycles, timing.kernel_call_cycles,
                     timing.register_write_s * clock_hz)


class SimFault(DesignError):
    """A design error found while simulating (e.g. releasing more than a core holds)."""


class CallLimit(Exception):
    """A run reached its machine's :attr:`Machine.call_limit`."""


@dataclass
class Machine:
    """The model of one design, ready to run."""

    design: Design
    target: TargetModel
    """The device it runs on."""
    engine: Engine
    host: dict[str, np.ndarray]
    dram: Dram
    costs: Costs
    clock_hz: float
    """The clock the run counts cycles at."""
    cores: dict[str, Proc] = field(default_factory=dict)
    runtime: Proc | None = None
    fill_queues: dict[str, WorkQueue] = field(default_factory=dict)
    drain_queues: dict[str, WorkQueue] = field(default_factory=dict)
    drain_procs: dict[str, Proc] = field(default_factory=dict)
    fill_procs: dict[str, Proc] = field(default_factory=dict)
    conns: dict[str, Conn] = field(default_factory=dict)
    kernel_calls: int = 0
    call_limit: int = -1
    """The count of kernel calls at which the run stops with :class:`CallLimit` (-1: none).
    A core whose calls never wait (a loop of 2^63 - 1 calls, IRON's forever) makes them all in
    one step of the engine, which ``Engine.run(limit=)`` cannot bound."""
    ops: float = 0.0
    compute: bool = True
    """Run kernel references (False: kernels only take their time)."""
    rtps: dict[str, "RtpMemory"] = field(default_factory=dict)
    """Runtime-parameter buffers by name."""
    barrier_locks: dict[tuple[str, str], Lock] = field(default_factory=dict)
    """Each runtime barrier's lock in each core that waits on it, by (barrier, core)."""
    cascades: dict[tuple[str, str], "CascadeLink"] = field(default_factory=dict)
    """Each core's cascade links by (core, "in" | "out")."""
    invocations: int = 1
    """How many times the runtime runs its sequence, back to back on one timeline (the cores
    carry on between them, as on the NPU)."""
    hosts: list[dict[str, np.ndarray]] = field(default_factory=list)
    """The host arrays of each invocation after the first (``host`` is the first's)."""
    ends: list[float] = field(default_factory=list)
    """The cycle each invocation's runtime sequence ended (the host's wait returned)."""
    barriers_at: list[dict[tuple[str, str], int]] = field(default_factory=list)
    """Per invocation, each barrier lock's value as its sequence started."""
    locals: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    """Each core's copy of each core-local buffer it uses, by (local, core): its initial value
    when the run starts (the design was just loaded), then what the core's kernels wrote."""


@dataclass(eq=False)
class CascadeLink:
    """The accumulator cascade from core ``src`` to its neighbour ``dst``: a blocking stream of
    512-bit words that holds ``room`` words ``dst`` has not taken (the two cores' two-word
    FIFOs, :attr:`~aiedsl.targets.TargetModel.cascade_fifo_words`). Nothing else on the chain
    takes part: a put waits only for its own neighbour's gets, a get only for its neighbour's
    puts, and how the words are grouped into calls on either side does not matter.

    Words are numbered from the run's start. A call that puts records ``(first word, end word,
    start, end)``: it puts its words evenly over that time, had nothing held it up. A get takes
    its words piece by piece, one piece per put call they came from, each piece recorded the
    same way as the getter took it (``gets``). A put call ends once its last word fits, i.e.
    once ``dst`` has taken the word ``room`` before it; a get once its last word has arrived.
    """

    src: str
    dst: str
    room: int
    data: Lock
    """A unit for each put call (of no time: the waiter's clock is set from the records), so
    a getter waiting for words wakes; ``src`` releases it."""
    taken: Lock
    """A unit for each piece the getter takes, so a putter waiting for room wakes; ``dst``
    releases it."""
    put: int = 0
    """Words put so far (by the calls ``src`` has reached)."""
    got: int = 0
    """Words whose taking is settled (``dst``'s get calls reached them)."""
    puts: "deque[tuple[int, int, float, float]]" = field(default_factory=deque)
    """Put calls whose words are not all taken, oldest first."""
    gets: "deque[tuple[int, int, float, float]]" = field(default_factory=deque)
    """Pieces taken, oldest first (those a putter may still ask about)."""
    values: "deque[np.ndarray]" = field(default_factory=deque)
    """The words put and not yet taken, as flat bytes (``uint8``), in stream order (when
    kernels compute): the stream moves bits, which each side reads as its own type."""
    early: Any = None
    """The call of ``src`` that gets and puts whose puts went out before its kernel ran (its
    gets were not all in), while it runs (:class:`~aiedsl.sim.cascade_stream.Early`): what
    ``dst`` takes of its words before then is made from what the call got so far."""

    def emitted(self, word: int) -> float:
        """When the put call holding ``word`` put it (its calls put their words evenly)."""
        for first, end, start, stop in self.puts:
            if first <= word < end:
                return start + (word - first + 1) * (stop - start) / (end - first)
        raise AssertionError(f"word {word} of {self.src} -> {self.dst} is not put")

    def took(self, word: int) -> float:
        """When ``dst`` took ``word``, forgetting the pieces before it (a putter asks about
        ever later words)."""
        gets = self.gets
        while gets and gets[0][1] <= word:
            gets.popleft()
        first, end, start, stop = gets[0]
        return start + (word - first + 1) * (stop - start) / (end - first)

    def _have(self, n: int) -> None:
        """Make the next ``n`` bytes' values known: those of words the putter's running call
        put before its kernel ran are made now (:attr:`early`)."""
        queued = sum(v.size for v in self.values)
        if queued < n:
            assert self.early is not None, "a get takes only words put"
            self.early.hand(self, n - queued)

    def peek(self, n: int) -> np.ndarray:
        """The next ``n`` bytes of the stream, flat ``uint8``, left in it (what a call that
        gets and puts has got so far, for making its early words)."""
        self._have(n)
        parts, left = [], n
        for head in self.values:
            if not left:
                break
            parts.append(head[:left])
            left -= parts[-1].size
        return np.concatenate(parts) if parts else np.zeros(0, np.uint8)

    def take_values(self, n: int) -> np.ndarray:
        """The next ``n`` bytes of the stream, flat ``uint8`` (a get's input, made of what one
        or more put calls put)."""
        if self.early is not None:
            self._have(n)
        parts = []
        while n:
            head = self.values[0]
            if head.size <= n:
                parts.append(self.values.popleft())
                n -= head.size
            else:
                parts.append(head[:n])
                self.values[0] = head[n:]
                n = 0
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


@dataclass
class RtpMemory:
    """A runtime-parameter buffer in a core's memory: per slot, the runtime's writes as (cycle,
    value), oldest first. A read at cycle t sees the last write at or before t (the runtime and
    the core run as separate processes; a write the core's clock has not reached yet is not
    seen)."""

    name: str
    core: str
    writes: list[list[tuple[float, int]]]

    def read(self, index: int, t: float) -> int | None:
        """The value of slot ``index`` at cycle ``t``; None if nothing was written by then."""
        seen = [v for when, v in self.writes[index] if when <= t]
        return seen[-1] if seen else None


Watch = Callable[[str, Machine], None]
"""Told each stage of a run as it starts, with the machine that runs it: ``"run"`` (the
engine starts; ``machine.kernel_calls`` counts the calls made so far), ``"free <kind>"`` (a
run again with kernels timed only and one kind of resource made free, to measure what limits
the run: :mod:`aiedsl.sim.freed`'s kinds) and ``"check"`` (the outputs are compared with the
design's reference). It must not change the machine: a progress display reads it (see
:mod:`aiedsl.cli.progress`)."""
