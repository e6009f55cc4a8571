"""The parts of a simulated machine: buffer rings, host-memory ports, the timing constants in
cycles, runtime-parameter memories, and :class:`Machine`, which holds them for one run.

Plain data: the processes that act on them live in :mod:`aiedsl.sim.dma` (on-chip DMAs),
:mod:`aiedsl.sim.shim_dma`, :mod:`aiedsl.sim.core` and :mod:`aiedsl.sim.runtime`;
:mod:`aiedsl.sim.machine` wires them together.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from aiedsl.errors import DesignError
from aiedsl.ir import Design
from aiedsl.sim.engine import Conn, Engine, Lock, Proc, WorkQueue
from aiedsl.targets import TimingModel


@dataclass
class Ring:
    """``depth`` buffers of one endpoint, with its producer and consumer locks."""

    name: str
    bufs: np.ndarray
    prod: Lock
    cons: Lock

    @property
    def depth(self) -> int:
        """Number of buffers."""
        return self.bufs.shape[0]


@dataclass
class DramPort:
    """One direction of host-memory bandwidth (reads or writes), shared by the shim channels of
    that direction: transfers are served one after another in the order they ask."""

    bytes_per_cycle: float
    free: float = 0.0
    moved: int = 0

    def reserve(self, time: float, nbytes: int) -> float:
        """Start time of a transfer of ``nbytes`` that is ready at ``time``."""
        start = max(time, self.free)
        self.free = start + nbytes / self.bytes_per_cycle
        self.moved += nbytes
        return start


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
    conns: dict[str, Conn] = field(default_factory=dict)
    kernel_calls: int = 0
    ops: float = 0.0
    compute: bool = True
    """Run kernel references (False: kernels only take their time)."""
    rtps: dict[str, "RtpMemory"] = field(default_factory=dict)
    """Runtime-parameter buffers by name."""
    barrier_locks: dict[tuple[str, str], Lock] = field(default_factory=dict)
    """Each runtime barrier's lock in each core that waits on it, by (barrier, core)."""


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
