"""The simulator's engine: processes, locks, streams, and a time-ordered scheduler.

Every actor of a design (a core, a DMA channel, the runtime sequence) is a :class:`Proc` wrapping
a generator. A generator does non-blocking work directly (release a lock, push data) and yields a
request when it must block: ``("acq", lock, n)``, ``("get", port, n)``, ``("sent", chunk)``,
``("work", queue)`` or ``("done", token)``. The engine resumes the runnable process with the
smallest local time; a blocked process waits on the object that can satisfy it and is retried when
that object changes. When nothing can run, the caller inspects who waits on what.

Time: each process carries its own clock (cycles). A lock unit carries the time it was released;
acquiring it moves the acquirer's clock forward to that time. Data carries the time it entered a
stream; receiving it takes ``bytes / rate`` after that, where a connection's rate is the slower of
its two DMA channels and the stream port (the target's ``TimingModel.dma_bytes_per_cycle``).
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Generator

import numpy as np

Request = tuple[Any, ...]
Gen = Generator[Request, Any, None]


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

    __slots__ = ("data", "start", "pending", "done", "sender")

    def __init__(self, data: np.ndarray, start: float, receivers: int, sender: "Proc") -> None:
        self.data = data
        self.start = start
        self.pending = receivers
        self.done = start
        self.sender = sender


class Port:
    """One receiver's end of a stream connection: elements queued in arrival order."""

    __slots__ = ("name", "queue", "avail", "waiters", "conn", "owner")

    def __init__(self, name: str, conn: "Conn") -> None:
        self.name = name
        self.queue: deque[list[Any]] = deque()  # [chunk, offset]
        self.avail = 0
        self.waiters: list[Proc] = []
        self.conn = conn
        self.owner: Proc | None = None
        """The receiving process."""


class Conn:
    """A stream from one sending DMA to one or more receiving DMAs (a broadcast)."""

    __slots__ = ("name", "ports", "sender", "bytes", "rate")

    def __init__(self, name: str, rate: float) -> None:
        self.name = name
        self.ports: list[Port] = []
        self.sender: Proc | None = None
        self.bytes = 0
        self.rate = rate
        """Bytes per cycle the stream delivers to each receiver."""

    def port(self, name: str) -> Port:
        """Add a receiver."""
        p = Port(name, self)
        self.ports.append(p)
        return p


class WorkQueue:
    """Transfers queued on a shim DMA channel by the runtime sequence."""

    __slots__ = ("name", "items", "waiters")

    def __init__(self, name: str) -> None:
        self.name = name
        self.items: deque[Any] = deque()
        self.waiters: list[Proc] = []


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


@dataclass(eq=False)
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
    """Cycles spent working (kernel calls or transfers), for utilisation."""
    spans: list[tuple[float, float, str]] = field(default_factory=list)
    """(start, end, label) of work, for traces (kept only when tracing)."""
    partial: list[np.ndarray] = field(default_factory=list)
    """Data of a ``get`` received so far: streams deliver words as they come."""
    got: int = 0


class Engine:
    """Runs processes until none can move."""

    def __init__(self, trace: bool = False) -> None:
        self.trace = trace
        self.procs: list[Proc] = []
        self._heap: list[tuple[float, int, Proc]] = []
        self._seq = 0
        self._chunk_waiters: dict[int, tuple[Chunk, Proc]] = {}

    def spawn(self, proc: Proc, gen_fn: Callable[[Proc], Gen]) -> Proc:
        """Start ``proc`` running ``gen_fn(proc)``."""
        proc.gen = gen_fn(proc)
        self.procs.append(proc)
        self._ready(proc)
        return proc

    def _ready(self, p: Proc) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (p.time, self._seq, p))

    def _wake(self, waiters: list[Proc]) -> None:
        for p in waiters:
            self._ready(p)
        waiters.clear()

    # -- non-blocking operations, called from inside generators --------------------------------
    def release(self, lock: Lock, n: int, time: float) -> None:
        """Add ``n`` units released at ``time``."""
        lock.units.extend([time] * n)
        if lock.waiters:
            self._wake(lock.waiters)

    def send(self, conn: Conn, data: np.ndarray, sender: Proc) -> Chunk:
        """Put ``data`` on every receiver's queue; the sender then yields ``("sent", chunk)``."""
        chunk = Chunk(data, sender.time, len(conn.ports), sender)
        conn.bytes += data.nbytes
        for port in conn.ports:
            port.queue.append([chunk, 0])
            port.avail += data.size
            if port.waiters:
                self._wake(port.waiters)
        return chunk

    def enqueue(self, q: WorkQueue, item: Any) -> None:
        """Queue a transfer on a shim channel."""
        q.items.append(item)
        if q.waiters:
            self._wake(q.waiters)

    def complete(self, token: Token, time: float) -> None:
        """Mark a waited transfer complete."""
        token.done, token.time = True, time
        self._wake(token.waiters)

    # -- the scheduler ------------------------------------------------------------------------
    def run(self) -> None:
        """Resume runnable processes, earliest clock first, until every one is blocked or done."""
        heap = self._heap
        while heap:
            _, _, p = heapq.heappop(heap)
            if p.finished:
                continue
            if p.request is not None and not self._try(p, p.request):
                continue  # woken, but still blocked: it re-registered
            while True:
                try:
                    req = p.gen.send(p.value)  # type: ignore[union-attr]
                except StopIteration:
                    p.finished, p.request = True, None
                    break
                p.value = None
                if self._try(p, req):
                    if heap and heap[0][0] < p.time:
                        p.request = None
                        self._ready(p)  # let earlier clocks go first
                        break
                    continue
                p.request = req
                break

    def _try(self, p: Proc, req: Request) -> bool:
        """Satisfy ``req`` now if possible; otherwise register ``p`` as a waiter. True if done."""
        kind = req[0]
        if kind == "acq":
            lock, n = req[1], req[2]
            if len(lock.units) >= n:
                t = p.time
                for _ in range(n):
                    t = max(t, lock.units.popleft())
                p.time = t
                p.request = None
                return True
            lock.waiters.append(p)
            return False
        if kind == "get":
            port, n = req[1], req[2]
            broadcast = len(port.conn.ports) > 1
            if broadcast and port.queue and not self._lockstep(port):
                port.waiters.append(p)
                return False
            take = min(port.avail, n - p.got)
            if take:
                p.partial.append(self._take(p, port, take))
                p.got += take
                if broadcast:  # receivers held back by this one may now move
                    for q in port.conn.ports:
                        if q is not port and q.waiters:
                            self._wake(q.waiters)
            if p.got == n:
                parts = p.partial
                p.value = parts[0] if len(parts) == 1 else np.concatenate(parts)
                p.partial, p.got, p.request = [], 0, None
                return True
            port.waiters.append(p)
            return False
        if kind == "sent":
            chunk = req[1]
            if chunk.pending == 0:
                p.time = max(p.time, chunk.done)
                p.request = None
                return True
            chunk.sender = p
            self._chunk_waiters.setdefault(id(chunk), (chunk, p))
            return False
        if kind == "work":
            q = req[1]
            if q.items:
                p.value = q.items.popleft()
                p.request = None
                return True
            q.waiters.append(p)
            return False
        if kind == "done":
            token = req[1]
            if token.done:
                p.time = max(p.time, token.time)
                p.request = None
                return True
            token.waiters.append(p)
            return False
        raise ValueError(f"unknown request {req!r}")

    @staticmethod
    def _lockstep(port: Port) -> bool:
        """A broadcast element moves only while every receiver that still lacks it takes it.

        The stream is circuit-switched: a receiver whose DMA is not receiving (e.g. all of its
        buffers are full) stalls the whole broadcast, so the others cannot take the element ahead.
        """
        chunk = port.queue[0][0]
        for q in port.conn.ports:
            if q is port or q.owner is None or not any(e[0] is chunk for e in q.queue):
                continue
            r = q.owner.request
            if r is None or r[0] != "get" or r[1] is not q:
                return False
        return True

    def _take(self, p: Proc, port: Port, n: int) -> np.ndarray:
        parts = []
        need = n
        start = p.time
        nbytes = 0
        rate = port.conn.rate
        while need:
            entry = port.queue[0]
            chunk, off = entry
            take = min(need, chunk.data.size - off)
            parts.append(chunk.data[off:off + take])
            nbytes += take * chunk.data.itemsize
            start = max(start, chunk.start)
            need -= take
            if off + take == chunk.data.size:
                port.queue.popleft()
                self._finish_chunk(chunk, start + nbytes / rate)
            else:
                entry[1] = off + take
        port.avail -= n
        end = start + nbytes / rate
        p.busy += end - start
        if self.trace:
            p.spans.append((start, end, port.conn.name))
        p.time = end
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _finish_chunk(self, chunk: Chunk, time: float) -> None:
        chunk.pending -= 1
        chunk.done = max(chunk.done, time)
        if chunk.pending == 0:
            entry = self._chunk_waiters.pop(id(chunk), None)
            if entry is not None:
                self._ready(entry[1])
