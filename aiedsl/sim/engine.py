"""The simulator's engine: a time-ordered scheduler of processes, and what each kind of request
asks of the locks, streams and queues of :mod:`aiedsl.sim.processes`.

Every actor of a design (a core, a DMA channel, the runtime sequence) is a :class:`Proc` wrapping
a generator. A generator does non-blocking work directly (release a lock, push data) and yields a
request when it must block: ``("acq", lock, n)``, ``("acq_eq", lock, n)``, ``("get", port, n)``,
``("sent", chunk)``, ``("work", queue)``, ``("done", token)`` or ``("pause",)`` (after taking a
lock itself: it only lets earlier clocks go first). The engine resumes the runnable process with the
smallest local time; a blocked process waits on the object that can satisfy it and is retried when
that object changes. When nothing can run, the caller inspects who waits on what.

Time: each process carries its own clock (cycles). A lock unit carries the time it was released;
acquiring it moves the acquirer's clock forward to that time. Data carries the time it entered a
stream; receiving it takes ``bytes / rate`` after that, where a connection's rate is the slower of
its two DMA channels and the stream port (the target's ``TimingModel.dma_bytes_per_cycle``).
"""

from __future__ import annotations

import heapq
import itertools
from typing import Any, Callable

import numpy as np

from aiedsl.sim.processes import (PAUSE, Chunk, Conn, Gen, Lock, Port, Proc, Request, Token,
                                  WorkQueue)

__all__ = ["Engine"]


class Engine:
    """Runs processes until none can move."""

    def __init__(self, trace: bool = False) -> None:
        self.trace = trace
        self.procs: list[Proc] = []
        self.times: list[float] = []
        """The clocks at which processes are runnable, a heap of each clock once: the earliest
        is ``times[0]``. (A heap of ``(clock, order, process)`` tuples cost a sixth of a GEMM's
        run in comparing its tuples; floats compare several times faster, and there are a
        third as many clocks as runnable processes.)"""
        self.due: dict[float, list[Proc]] = {}
        """The processes runnable at each clock of :attr:`times`, in the order they were made
        runnable: equal clocks run in that order (first made runnable, first run)."""
        self._handlers: dict[str, Callable[[Proc, Request], bool]] = {
            "acq": self.acquire, "acq_eq": self.acquire_equal, "get": self.get,
            "sent": self.sent, "work": self._work, "done": self._done, "pause": self._pause}

    def spawn(self, proc: Proc, gen_fn: Callable[[Proc], Gen]) -> Proc:
        """Start ``proc`` running ``gen_fn(proc)``."""
        proc.gen = gen_fn(proc)
        self.procs.append(proc)
        self.ready(proc)
        return proc

    def spawn_step(self, proc: Proc, step: Callable[[], None]) -> Proc:
        """Start ``proc`` driven by ``step``, which must move it exactly as a generator would
        (see :mod:`aiedsl.sim.dma`)."""
        proc.step = step
        self.procs.append(proc)
        self.ready(proc)
        return proc

    def ready(self, p: Proc) -> None:
        """Make ``p`` runnable at its current clock (after those already runnable then)."""
        t = p.time
        at = self.due.get(t)
        if at is None:
            self.due[t] = [p]
            heapq.heappush(self.times, t)
        else:
            at.append(p)

    def wake(self, waiters: list[Proc]) -> None:
        """Make every waiter runnable, in the order they came."""
        due, times = self.due, self.times
        for p in waiters:  # Engine.ready, inlined
            t = p.time
            at = due.get(t)
            if at is None:
                due[t] = [p]
                heapq.heappush(times, t)
            else:
                at.append(p)
        waiters.clear()

    # -- non-blocking operations, called from inside generators --------------------------------
    def release(self, lock: Lock, n: int, time: float) -> None:
        """Add ``n`` units released at ``time``."""
        if n == 1:
            lock.units.append(time)
        else:
            lock.units.extend([time] * n)
        if lock.waiters:
            self.wake(lock.waiters)

    def send(self, conn: Conn, data: np.ndarray, sender: Proc) -> Chunk:
        """Put ``data`` on every receiver's queue; the sender then yields ``("sent", chunk)``."""
        seq = conn.sent
        ports = conn.ports
        chunk = Chunk(data, sender.time, len(ports), sender, seq)
        conn.sent = seq + 1
        conn.bytes += data.nbytes
        size = data.size
        held: list[Port] | None = None
        for port in ports:
            queue = port.queue
            queue.append([chunk, 0])
            port.avail += size
            waiters = port.waiters
            if not waiters:
                continue
            if port.others and len(queue) == 1:
                # a broadcast receiver held back by one that is not receiving stays asleep:
                # that one wakes it when it takes the element. Engine.lockstep(port, seq)
                # asks each other receiver the same question, whose answer nothing here
                # changes (a queue just given this element still begins it at offset 0), so
                # it is asked once per receiver: ``held`` are those not taking the element
                if held is None:
                    held = []
                    for q in ports:
                        r = q.owner.request if q.owner is not None else None
                        if q.taken == seq and r is not None and r[1] is q and r[0] == "get":
                            continue  # waiting to take it (the common case of _taking)
                        if not self._taking(q, seq):
                            held.append(q)
                if held and (len(held) > 1 or held[0] is not port):
                    continue
            self.wake(waiters)
        return chunk

    def enqueue(self, q: WorkQueue, item: Any) -> None:
        """Queue a transfer on a shim channel."""
        q.items.append(item)
        if q.waiters:
            self.wake(q.waiters)

    def complete(self, token: Token, time: float) -> None:
        """Mark a waited transfer complete."""
        token.done, token.time = True, time
        self.wake(token.waiters)

    # -- the scheduler ------------------------------------------------------------------------
    def run(self, limit: int | None = None) -> bool:
        """Resume runnable processes, earliest clock first, until every one is blocked or done
        (True), or ``limit`` of them have been resumed (False: the run can go on, by another
        ``run``).

        A process runs until it blocks, or until a request it got moved its clock past the
        earliest runnable one (it then queues again behind it). Which process reserves a
        shared resource first (DRAM, a broadcast stream) follows from this order, so every
        shortcut below keeps it exactly.
        """
        times, due = self.times, self.due
        handlers = self._handlers
        pop = heapq.heappop
        # the steps counted by the for loop itself: an unlimited run pays no more than it did
        # for `while times`
        for _ in itertools.repeat(None) if limit is None else range(limit):
            if not times:
                return True
            t = times[0]
            at = due[t]
            p = at.pop(0)  # the first made runnable at the earliest clock
            if not at:
                pop(times)
                del due[t]
            if p.step is not None:  # an on-chip DMA (never finishes)
                p.step()
                continue
            if p.finished:
                continue
            req = p.request
            if req is not None and not handlers[req[0]](p, req):
                continue  # woken, but still blocked: it re-registered
            send = p.gen.send  # type: ignore[union-attr]
            while True:
                try:
                    req = send(p.value)
                except StopIteration:
                    p.finished, p.request = True, None
                    break
                p.value = None
                if req is PAUSE or handlers[req[0]](p, req):
                    if times and times[0] < p.time:
                        p.request = None
                        self.ready(p)  # let earlier clocks go first
                        break
                    continue
                p.request = req
                break
        return not times

    # -- requests: satisfy one now if possible (True), else register ``p`` as a waiter ---------
    # (Hot paths compare floats with ``if`` rather than calling ``max``: a call costs more, and
    # the value is the same.)
    def acquire(self, p: Proc, req: Request) -> bool:
        """``("acq", lock, n)``: take ``n`` units; the clock moves to the latest release."""
        lock, n = req[1], req[2]
        units = lock.units
        if len(units) >= n:
            t = p.time
            for _ in range(n):
                u = units.popleft()
                if u > t:
                    t = u
            p.time = t
            p.request = None
            return True
        lock.waiters.append(p)
        return False

    @staticmethod
    def acquire_equal(p: Proc, req: Request) -> bool:
        """``("acq_eq", lock, n)``: wait until the lock holds exactly ``n`` units and take none
        (AIE2's acquire-equal, a runtime barrier's wait); the clock moves to when it took that
        value. Only the runtime's sets change such a lock: each replaces every unit with units
        of its own time, and wakes the waiters."""
        lock, n = req[1], req[2]
        units = lock.units
        if len(units) == n:
            if units and units[-1] > p.time:
                p.time = units[-1]
            p.request = None
            return True
        lock.waiters.append(p)
        return False

    def get(self, p: Proc, req: Request) -> bool:
        """``("get", port, n)``: receive ``n`` elements (into ``p.value``)."""
        port, n = req[1], req[2]
        queue = port.queue
        others = port.others
        if others and queue and not self.lockstep(port, queue[0][0].seq, queue[0][1]):
            port.waiters.append(p)
            return False
        if queue and not p.got:
            entry = queue[0]
            chunk = entry[0]
            data = chunk.content()
            if not entry[1] and data.size == n:  # one whole chunk: the common case
                # when the others are ready for this chunk, asked before it leaves the queue
                # (a shim drain gets here; an on-chip receiver inlines the same in sim/dma.py)
                ready = self.broadcast_ready(port, chunk.seq, p.time) if others else p.time
                queue.popleft()
                port.avail -= n
                port.taken += 1
                start = ready + chunk.lead  # a late receiver waits out its sender's lead
                if start < chunk.start:
                    start = chunk.start
                if others:  # a broadcast streams to every receiver at once (see lockstep)
                    chunk.start = start
                end = start + data.nbytes / port.conn.rate
                self._finish_chunk(chunk, end)
                p.busy += end - start
                if self.trace:
                    p.spans.append((start, end, port.conn.name))
                p.time = end
                if others:  # receivers held back by this one may now move
                    for q in others:
                        if q.waiters:
                            self.wake(q.waiters)
                p.value = data
                p.request = None
                return True
        take = min(port.avail, n - p.got)
        if take:
            part = self._take(p, port, take)
            p.got += take
            # what waits for the rest is copied: a chunk may be a view of its sender's buffer,
            # freed (and refilled) once every receiver has taken all of it
            p.partial.append(part if p.got == n else part.copy())
            if others:
                for q in others:
                    if q.waiters:
                        self.wake(q.waiters)
        if p.got == n:
            parts = p.partial
            p.value = parts[0] if len(parts) == 1 else np.concatenate(parts)
            p.partial, p.got, p.request = [], 0, None
            return True
        port.waiters.append(p)
        return False

    def sent(self, p: Proc, req: Request) -> bool:
        """``("sent", chunk)``: wait until every receiver has taken ``chunk``."""
        chunk = req[1]
        if chunk.pending == 0:
            if chunk.done > p.time:
                p.time = chunk.done
            p.request = None
            return True
        chunk.sender = p
        if chunk.waiter is None:
            chunk.waiter = p
        return False

    def _work(self, p: Proc, req: Request) -> bool:
        q = req[1]
        if q.items:
            p.value = q.items.popleft()
            p.request = None
            return True
        q.waiters.append(p)
        return False

    def _done(self, p: Proc, req: Request) -> bool:
        token = req[1]
        if token.done:
            p.time = max(p.time, token.time)
            p.request = None
            return True
        token.waiters.append(p)
        return False

    @staticmethod
    def _pause(p: Proc, req: Request) -> bool:
        """``("pause",)``: nothing to wait for; the process only lets earlier clocks go first."""
        return True

    @staticmethod
    def lockstep(port: Port, seq: int, off: int = 0) -> bool:
        """Whether broadcast element ``seq`` can move to ``port``'s receiver now: it moves only
        while every receiver that still lacks it takes it.

        The stream is circuit-switched: a receiver whose DMA is not receiving (e.g. all of its
        buffers are full, or a shim drain the runtime has not issued yet) stalls the whole
        broadcast, so the others cannot take the element ahead. (The element is named, as in
        :meth:`broadcast_ready`, rather than read off a queue that may be empty.)
        """
        for q in port.others:
            # where q stands in the stream: its next chunk, and how far into it (a receiver
            # taking a chunk in parts: a memtile element of several core tiles)
            taken = q.taken
            if taken > seq or q.owner is None:
                continue  # q has taken this chunk already
            if taken < seq:  # q has earlier words still to take, which the stream carries
                return False  # first: these cannot pass them (receivers kept in step)
            begun = q.queue[0][1] if q.queue else 0
            if begun > off:
                continue  # q has taken this piece already
            if begun < off:
                return False
            r = q.owner.request
            if r is None or r[0] != "get" or r[1] is not q:
                return False
        return True

    @staticmethod
    def _taking(q: Port, seq: int) -> bool:
        """Whether receiver ``q`` lets broadcast element ``seq`` move from its start (offset 0),
        as :meth:`lockstep` asks of each other receiver: it has taken it, or has no owner, or
        its owner waits to get from ``q`` with nothing earlier left to take."""
        taken = q.taken
        if taken > seq or q.owner is None:
            return True
        if taken < seq:
            return False
        begun = q.queue[0][1] if q.queue else 0  # (offsets are never negative)
        if begun > 0:
            return True  # q has taken this piece already
        r = q.owner.request
        return not (r is None or r[0] != "get" or r[1] is not q)

    @staticmethod
    def broadcast_ready(port: Port, seq: int, time: float, off: int = 0) -> float:
        """When every receiver of ``port``'s broadcast that still lacks its element ``seq`` is
        ready for it (``time``: this receiver's): the circuit-switched stream moves to all of
        them at once, so none takes it before the last is ready (a receiver's clock may run
        ahead of the others', its request made at a later time).

        The element is named, not read off ``port``'s queue: a receiver that has just taken
        it may have left the queue empty, or holding the next element, whose receivers differ.
        """
        for q in port.others:
            owner = q.owner
            if owner is None or owner.time <= time or q.taken > seq:
                continue
            if q.taken < seq or (q.queue[0][1] if q.queue else 0) <= off:
                time = owner.time
        return time

    def _take(self, p: Proc, port: Port, n: int) -> np.ndarray:
        parts = []
        need = n
        start = p.time
        nbytes = 0
        rate = port.conn.rate
        queue = port.queue
        while need:
            entry = queue[0]
            chunk, off = entry
            take = min(need, chunk.data.size - off)
            parts.append(chunk.content()[off:off + take])
            nbytes += take * chunk.data.itemsize
            # a chunk's first piece: a receiver late for it waits out its sender's lead
            if port.others:  # a broadcast streams every piece to every receiver at once
                start = max(self.broadcast_ready(port, chunk.seq, start, off)
                            + (0 if off else chunk.lead), chunk.start)
                chunk.start = start
            else:
                start = max(start if off else start + chunk.lead, chunk.start)
            need -= take
            if off + take == chunk.data.size:
                queue.popleft()
                port.taken += 1
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
        if time > chunk.done:
            chunk.done = time
        if chunk.pending == 0:
            waiter = chunk.waiter
            if waiter is not None:
                chunk.waiter = None
                self.ready(waiter)
