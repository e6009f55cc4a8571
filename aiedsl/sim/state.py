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
from typing import Any

import numpy as np

from aiedsl.dtypes import numpy_kind
from aiedsl.errors import DesignError
from aiedsl.ir import Design
from aiedsl.sim.engine import Conn, Engine, Lock, Proc, WorkQueue
from aiedsl.targets import TargetModel, TimingModel


def initial_local(init: str | None, shape: tuple[int, ...], np_dtype: np.dtype) -> np.ndarray:
    """A core's copy of a core-local buffer as the design's load leaves it: the bytes of its
    initial value (hex, little-endian, as :attr:`aiedsl.ir.Local.init` holds them), or
    :func:`unwritten` memory when it has none."""
    if init is None:
        return unwritten(shape, np_dtype)
    raw = np.frombuffer(bytes.fromhex(init), dtype=np_dtype.newbyteorder("<"))
    return raw.astype(np_dtype).reshape(shape)  # a copy of its own: the core writes it


def unwritten(shape: tuple[int, ...], np_dtype: np.dtype) -> np.ndarray:
    """Memory nothing has written yet: NaN for a float type, the smallest signed integer, the
    largest unsigned one (never 0).

    On the NPU a buffer holds whatever was there before (the last run's data, on a second
    run); zeros would let a kernel that reads before it writes (an accumulator never zeroed)
    look right.
    """
    if numpy_kind(np_dtype) == "f":
        return np.full(shape, np.nan, dtype=np_dtype)
    info = np.iinfo(np_dtype)
    return np.full(shape, info.max if info.min == 0 else info.min, dtype=np_dtype)


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
    pending: list[np.ndarray | None] | None = None
    """For a core's input ring a DMA fills whole: per buffer, data received but not yet
    written (None when the buffer holds it). A broadcast puts one element into several cores,
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
    ops: float = 0.0
    compute: bool = True
    """Run kernel references (False: kernels only take their time)."""
    rtps: dict[str, "RtpMemory"] = field(default_factory=dict)
    """Runtime-parameter buffers by name."""
    barrier_locks: dict[tuple[str, str], Lock] = field(default_factory=dict)
    """Each runtime barrier's lock in each core that waits on it, by (barrier, core)."""
    cascades: dict[tuple[str, str], "CascadeLink"] = field(default_factory=dict)
    """Each core's cascade links by (core, "in" | "out")."""
    chains: dict[str, "CascadeChain"] = field(default_factory=dict)
    """The cascade chain each linked core belongs to."""
    locals: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    """Each core's copy of each core-local buffer it uses, by (local, core): its initial value
    when the run starts (the design was just loaded), then what the core's kernels wrote."""


@dataclass(eq=False)
class CascadeLink:
    """The accumulator cascade from core ``src`` to core ``dst``. ``data`` orders the two
    references (the getter reads what the putter wrote, at the call's start); ``payloads``
    carries it."""

    src: str
    dst: str
    data: Lock
    payloads: "deque[np.ndarray]" = field(default_factory=deque)


@dataclass(eq=False)
class CascadeChain:
    """Cores chained by cascade links: blocking streams of 512-bit words whose FIFOs hold a
    few words, far less than one call moves, so the chain's calls run together (lockstep),
    word by word: each core's i-th cascade call starts when every core of the chain has reached
    its own (``arrived[(a, b)]``: a's arrivals, one unit per call at a's clock, taken by b).
    ``pace`` is the slowest cascade kernel's cycles per call; core ``order[k]`` ends ``k *
    hop`` after the chain's head (a word's share of the call per link)."""

    order: list[str]
    arrived: dict[tuple[str, str], Lock]
    pace: int
    hop: int


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
