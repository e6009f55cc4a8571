"""What the simulator's engine schedules and what its processes wait on: a process
(:class:`Proc`, a generator or a step function with its own clock), the locks it acquires, the
chunks of data a stream connection (:class:`Conn`) carries to each receiver's :class:`Port`, the
work queues of the shim channels and the tokens of waited transfers. The engine that runs them
is :mod:`aiedsl.sim.engine`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Generator

import numpy as np

Request = tuple[Any, ...]
Gen = Generator[Request, Any, None]

PAUSE: Request = ("pause",)
"""What a process yields after a lock it took itself moved its clock past an earlier runnable
one: it waits for nothing, it only lets earlier clocks go first."""

WAITING = " (waiting for receivers)"
"""The suffix of a sending channel's trace span while its element waits for a receiver to take
it: the channel is busy (it holds the element) but moves nothing."""

NEXT_INVOCATION = " (next invocation)"
"""The suffix of a core's trace span of a later pass: the next invocation's work, which the
core's program starts as this one's ends; drawn, not counted in the run's figures."""

BURSTS = " (write bursts)"
"""The suffix of a shim drain's trace span of its write bursts' overhead, after the element
streamed in."""


class Lock:
    """A counting semaphore as AIE2 locks are used by object fifos; units carry release times."""

    __slots__ = ("name", "units", "waiters", "releaser")

    def __init__(self, name: str, init: int) -> None:
        self.name = name
        self.units: deque[float] = deque([0.0] * init)
        self.waiters: list[Proc] = []
        self.releaser: Proc | None = None
        """The process whose releases feed this lock (for deadlock explanations)."""


class Chunk:
    """Data one sender put on a stream for every receiver of a connection."""

    __slots__ = ("data", "start", "pending", "done", "sender", "seq", "waiter", "prepared",
                 "origin", "lead", "deferred")

    def __init__(self, data: np.ndarray, start: float, receivers: int, sender: "Proc",
                 seq: int = 0) -> None:
        self.seq = seq
        """Position on its stream: every receiver takes chunks in this order."""
        self.waiter: Proc | None = None
        """The sender once it waits for every receiver to take the chunk."""
        self.data = data
        self.start = start
        """When the chunk can start streaming to a receiver that is ready for it."""
        self.lead = 0.0
        """Cycles its sender spends before the first byte streams (a shim fill's AXI bursts and
        host-memory latency; 0 for an on-chip sender, whose data sits in its buffer): a receiver
        not ready by ``start - lead`` gets it ``lead`` after it becomes ready, not at ``start``.
        A shim cannot read a whole element ahead while its stream is blocked
        (:func:`~aiedsl.sim.shim_dma.shim_fill`)."""
        self.pending = receivers
        self.done = start
        self.sender = sender
        self.prepared: dict[Any, Any] | None = None
        """Kernel operands made from ``data``, by the function that made them (shared by the
        cores whose buffers hold a copy of it)."""
        self.origin: tuple[np.ndarray, np.ndarray] | None = None
        """``(source, order)`` when the chunk is ``source`` gathered in ``order`` (a link's send
        of what it received), ``source`` never changed: an operand that reorders it may be made
        from ``source`` in one step (:class:`~aiedsl.kernels.prepared.Reorder`)."""
        self.deferred = False
        """Whether the gather is still to be done: ``data`` is then ``origin``'s source (of the
        same size and type), and :meth:`content` gathers it when something first reads the
        elements. A core whose operands are made from ``origin`` never does (a matmul's)."""

    def content(self) -> np.ndarray:
        """The elements the chunk carries, in stream order (gathered now if still deferred)."""
        if self.deferred:
            assert self.origin is not None, "a deferred gather has its origin"
            order = self.origin[1]
            # its size stood for the gather's while deferred (the streamed bytes' timing)
            assert order.size == self.data.size, "a deferred gather keeps the size"
            self.data = self.data.reshape(-1)[order]
            self.deferred = False
        return self.data


class Port:
    """One receiver's end of a stream connection: elements queued in arrival order."""

    __slots__ = ("name", "queue", "avail", "waiters", "conn", "owner", "taken", "others", "holds")

    def __init__(self, name: str, conn: "Conn") -> None:
        self.name = name
        self.holds = False
        """Whether the receiving DMA keeps what it gets past taking it (a core's, until the core
        reads the buffer): its sender then sends a copy, not a view of a buffer it will refill.
        (A shim drain, a generator, keeps it too; :class:`~aiedsl.sim.dma.Send` sees that.)"""
        self.taken = 0
        """Whole chunks this receiver has taken (a chunk's ``seq`` says which it is)."""
        self.others: list[Port] = []
        """The other receivers of a broadcast (empty for a point-to-point stream)."""
        self.queue: deque[list[Any]] = deque()  # [chunk, offset]
        self.avail = 0
        self.waiters: list[Proc] = []
        self.conn = conn
        self.owner: Proc | None = None
        """The receiving process."""


class Conn:
    """A stream from one sending DMA to one or more receiving DMAs (a broadcast)."""

    __slots__ = ("name", "ports", "sender", "bytes", "rate", "sent")

    def __init__(self, name: str, rate: float) -> None:
        self.name = name
        self.ports: list[Port] = []
        self.sender: Proc | None = None
        self.bytes = 0
        self.sent = 0
        """Chunks sent so far."""
        self.rate = rate
        """Bytes per cycle the stream delivers to each receiver."""

    def port(self, name: str) -> Port:
        """Add a receiver."""
        p = Port(name, self)
        self.ports.append(p)
        for q in self.ports:
            q.others = [o for o in self.ports if o is not q]
        return p


class WorkQueue:
    """Transfers queued on a shim DMA channel by the runtime sequence."""

    __slots__ = ("name", "items", "waiters", "issued", "finished")

    def __init__(self, name: str) -> None:
        self.name = name
        self.items: deque[Any] = deque()
        self.waiters: list[Proc] = []
        self.issued: list[tuple[float, Any]] = []
        """(clock, runtime op) of each transfer pushed, in order."""
        self.finished: list[float] = []
        """The clock each transfer was done at, in the same order (the channel takes them in
        turn): with :attr:`issued`, how many were outstanding at each push."""


class Token:
    """Completion of one waited runtime transfer."""

    __slots__ = ("name", "time", "waiters", "done", "loc", "owner")

    def __init__(self, name: str, loc: Any = None, owner: "Proc | None" = None) -> None:
        self.name = name
        self.loc = loc
        self.owner = owner
        self.time = 0.0
        self.done = False
        self.waiters: list[Proc] = []


@dataclass(eq=False, slots=True)
class Proc:
    """One actor: a generator, its clock, and what it waits for when blocked."""

    name: str
    kind: str
    """``core``, ``mm2s``, ``s2mm``, ``runtime``."""
    gen: Gen | None = None
    time: float = 0.0
    request: Request | None = None
    value: Any = None
    finished: bool = False
    info: dict[str, Any] = field(default_factory=dict)
    """What explanations need: tile, fifo, loc, ..."""
    busy: float = 0.0
    """Cycles spent working (kernel calls or transfers), for utilisation. A sending channel
    counts each element from when it has it until every receiver took it: :attr:`waited` of
    those cycles went on waiting for a receiver to be ready (back-pressure)."""
    waited: float = 0.0
    """Cycles of :attr:`busy` a sending DMA channel spent with an element in hand but its
    receivers not taking it (their buffers full): the rest of ``busy`` moved data (a shim's
    AXI bursts and host-memory lag included)."""
    spans: list[tuple[float, float, str]] = field(default_factory=list)
    """(start, end, label) of work, for traces (kept only when tracing)."""
    open: tuple[float, str] | None = None
    """(start, label) of a send in progress, for traces: a run that stops there (a hang)
    draws it to its end, where the sender is blocked."""
    partial: list[np.ndarray] = field(default_factory=list)
    """Data of a ``get`` received so far: streams deliver words as they come."""
    got: int = 0
    step: Callable[[], None] | None = None
    """Set for a channel driven by a step function instead of a generator
    (:mod:`aiedsl.sim.dma`): the engine calls it whenever the channel may move."""
