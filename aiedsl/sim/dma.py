"""On-chip DMA channels as step functions: the core and memtile DMAs of object fifos.

Each channel repeats one short program per part of each buffer of its ring: a receiving channel
acquires a free part, receives it from its stream and releases it full; a sending channel
acquires a full part, sends it (in its endpoint's ``dims`` order), waits until every receiver has
taken it and releases it empty.

They are the simulator's most frequent processes, so instead of generators they are objects whose
:meth:`step` the engine calls when the channel is runnable. A step moves exactly as the generator
it replaces would under :meth:`Engine.run`: it first retries the request it waits on; after each
request it gets it stops and queues again if its clock passed the earliest runnable one; when it
must wait it leaves the same ``request`` (``("acq", lock, 1)``, ``("get", port, n)``,
``("sent", chunk)``) and is registered as the waiter, so the schedule, the timing and deadlock
explanations are those of the generators.
"""

from __future__ import annotations

import heapq
from typing import Any, Callable

import numpy as np

from aiedsl.sim.engine import Engine
from aiedsl.sim.processes import WAITING, Chunk, Conn, Lock, Port, Proc

_ACQ, _GET, _STORE, _SEND, _SENT, _FREE = range(6)
"""Where a channel stands: waiting for a lock (``_ACQ``), the stream (``_GET``) or its receivers
(``_SENT``), or about to store, send or free a part (the step after a request it got)."""


class Receive:
    """A DMA filling a ring of buffers from a stream (a core's fifo input, a memtile link's
    input): per part of each buffer, take a free part, fill it, hand it on."""

    __slots__ = ("acqs", "bufs", "chunk", "cons", "dst", "dtype", "engine", "fills", "gets",
                 "idx", "n_bufs", "n_parts", "p", "part", "part_idx", "parts", "pending", "prod",
                 "slot", "state")

    def __init__(self, engine: Engine, p: Proc, bufs: np.ndarray, parts: list[tuple[int, int]],
                 prod: list[Lock], cons: list[Lock], port: Port, idx: np.ndarray | None,
                 part_idx: list[np.ndarray | None] | None = None,
                 fills: list[Any] | None = None,
                 pending: list[list[np.ndarray | Chunk | None]] | None = None) -> None:
        self.engine, self.p, self.idx = engine, p, idx
        self.pending = pending
        """Per part, per buffer: data received but not yet written (a core ring's
        :attr:`Ring.pending`, a link's parts): a whole chunk of the buffers' type goes there
        instead of into the buffer, to be written when something reads it; None to write at
        once."""
        if pending is not None:
            port.holds = True
        self.fills = fills
        """The ring's record of which chunk each buffer copies (:attr:`Ring.fills`), kept when
        a whole buffer is one chunk in order; None to keep none."""
        self.chunk: Chunk | None = None
        """The chunk ``data`` is, when it is one whole chunk."""
        self.part_idx = part_idx
        """Where each part's data goes inside the part (a BD's dims from its offset): None for
        the whole ring, or for a part, in order."""
        self.bufs = bufs.reshape(bufs.shape[0], -1)
        self.dtype = self.bufs.dtype
        self.dst = [[row[off:off + n] for off, n in parts] for row in self.bufs]
        """Per buffer, per part: where the part goes (views made once)."""
        self.parts, self.prod, self.cons = parts, prod, cons
        self.n_bufs, self.n_parts = self.bufs.shape[0], len(parts)
        self.acqs = [("acq", lock, 1) for lock in prod]
        self.gets = [("get", port, n) for _, n in parts]
        self.slot = self.part = 0
        self.state = _ACQ

    def step(self) -> None:
        """Move parts until a lock or the stream makes the channel wait."""
        p, engine = self.p, self.engine
        times, due = engine.times, engine.due
        state = self.state
        # A request retried when woken, or a step left for after requeueing, continues at once:
        # the generator this replaces checks the clock only after requests made while running.
        again = p.request is not None or state == _STORE
        while True:
            if state == _ACQ:
                lock = self.prod[self.part]
                units = lock.units
                if not units:
                    lock.waiters.append(p)
                    self.state, p.request = state, self.acqs[self.part]
                    return
                u = units.popleft()  # Engine.acquire of one unit, inlined
                if u > p.time:
                    p.time = u
                p.request = None
                state = _GET
            elif state == _GET:
                req = self.gets[self.part]
                port = req[1]
                queue = port.queue
                if not queue:  # Engine.get of an empty stream: wait for it
                    port.waiters.append(p)
                    self.state, p.request = state, req
                    return
                entry = queue[0] if not p.got else None
                if entry is not None and not entry[1] and entry[0].data.size == req[2]:
                    # one whole chunk: Engine.get, inlined
                    others = port.others
                    ready = p.time
                    if others:  # Engine.lockstep, inlined
                        seq = entry[0].seq
                        for q in others:
                            taken = q.taken
                            if taken > seq or q.owner is None:
                                continue
                            if taken < seq:  # q has an earlier element to take first
                                port.waiters.append(p)
                                self.state, p.request = state, req
                                return
                            if q.queue and q.queue[0][1]:  # q has begun this chunk
                                continue
                            r = q.owner.request
                            if r is None or r[0] != "get" or r[1] is not q:
                                port.waiters.append(p)
                                self.state, p.request = state, req
                                return
                            if q.owner.time > ready:  # Engine.broadcast_ready, inlined
                                ready = q.owner.time
                    chunk = entry[0]
                    data = chunk.data
                    queue.popleft()
                    port.avail -= req[2]
                    port.taken += 1
                    start = ready + chunk.lead  # late for it: its sender's lead follows
                    if start < chunk.start:
                        start = chunk.start
                    if others:  # a broadcast streams to every receiver at once
                        chunk.start = start
                    end = start + data.nbytes / port.conn.rate
                    chunk.pending -= 1
                    if end > chunk.done:
                        chunk.done = end
                    if chunk.pending == 0 and chunk.waiter is not None:
                        w = chunk.waiter  # Engine.ready, inlined
                        at = due.get(w.time)
                        if at is None:
                            due[w.time] = [w]
                            heapq.heappush(times, w.time)
                        else:
                            at.append(w)
                        chunk.waiter = None
                    p.busy += end - start
                    if engine.trace:
                        p.spans.append((start, end, port.conn.name))
                    p.time = end
                    for q in others:  # receivers held back by this one may now move
                        if q.waiters:  # Engine.wake, inlined
                            for w in q.waiters:
                                at = due.get(w.time)
                                if at is None:
                                    due[w.time] = [w]
                                    heapq.heappush(times, w.time)
                                else:
                                    at.append(w)
                            q.waiters.clear()
                    p.request = None
                    self.chunk = chunk
                elif engine.get(p, req):
                    data, p.value = p.value, None
                    self.chunk = None
                else:
                    self.state, p.request = state, req
                    return
                # A core's input ring and a link keep a whole chunk pending (its sender sent a
                # copy), to be written if something reads the buffer: the core, or the link's
                # sender, which sends what is pending. Anything else is written at once,
                # though handed on (released) only at the step below: the buffer is this
                # channel's until then, so nobody sees the difference, and the data may be a
                # view of the sender's buffer, which the sender frees once every receiver has it.
                i = self.part
                pending = self.pending
                chunk = self.chunk
                if pending is not None and chunk is not None and (
                        data.dtype is self.dtype or data.dtype == self.dtype) and (
                        self.part_idx is None):
                    # written when read (a whole chunk, in order): one whose gather is deferred
                    # is kept itself, its gather done when something reads it (Chunk.content)
                    pending[i][self.slot] = chunk if chunk.deferred else data
                else:
                    if chunk is not None and chunk.deferred:
                        data = chunk.content()
                    if self.idx is not None:
                        self.bufs[self.slot][self.idx] = data
                    elif self.part_idx is not None and self.part_idx[i] is not None:
                        self.dst[self.slot][i][self.part_idx[i]] = data
                    else:
                        self.dst[self.slot][i][...] = data
                    if pending is not None:
                        pending[i][self.slot] = None
                state = _STORE
            if not again and times and times[0] < p.time:  # let earlier clocks go first
                self.state = state
                at = due.get(p.time)  # Engine.ready, inlined
                if at is None:
                    due[p.time] = [p]
                    heapq.heappush(times, p.time)
                else:
                    at.append(p)
                return
            again = False
            if state == _STORE:
                i = self.part
                if self.fills is not None:
                    self.fills[self.slot] = self.chunk if self.idx is None else None
                self.chunk = None
                lock = self.cons[i]
                lock.units.append(p.time)  # Engine.release of one unit, inlined
                waiters = lock.waiters
                if waiters:  # Engine.wake, inlined
                    for w in waiters:
                        at = due.get(w.time)
                        if at is None:
                            due[w.time] = [w]
                            heapq.heappush(times, w.time)
                        else:
                            at.append(w)
                    waiters.clear()
                if i + 1 < self.n_parts:
                    self.part = i + 1
                else:
                    self.part = 0
                    slot = self.slot + 1
                    self.slot = slot if slot < self.n_bufs else 0
                state = _ACQ


class Send:
    """A DMA sending a ring of buffers on a stream (a core's fifo output, a memtile link's
    output): per part of each buffer, take a full part, send it in the endpoint's dims order
    (``repeat`` times in a row: mlir-aie's ``repeat_count``), wait until every receiver has it,
    free the part."""

    __slots__ = ("acqs", "bufs", "conn", "cons", "copy", "engine", "gather", "held", "n_bufs",
                 "n_parts", "order", "p", "part", "parts", "pending", "prod", "repeat", "req",
                 "sends", "slot", "src", "start", "state")

    def __init__(self, engine: Engine, p: Proc, bufs: np.ndarray, parts: list[tuple[int, int]],
                 prod: list[Lock], cons: list[Lock], conn: Conn,
                 gather: list[Callable[[np.ndarray], np.ndarray] | None],
                 order: list[np.ndarray | None] | None = None,
                 pending: list[list[np.ndarray | Chunk | None]] | None = None,
                 repeat: int = 1) -> None:
        self.engine, self.p, self.conn = engine, p, conn
        self.repeat = repeat
        """Times each part is sent before it is freed (its BD chained that many times in a row,
        each send a transfer of its own)."""
        self.sends = 0
        """Sends of the current part done so far."""
        self.held: np.ndarray | None = None
        """What the link's receiver left pending for the current part, kept for its further
        sends."""
        self.gather = gather
        """Per part: copies it in its endpoint's dims order
        (:func:`~aiedsl.sim.patterns.dims_gather`), None for plain order. Per part, because
        each part moves with a BD of its own length (a join's parts may differ in size), the
        outermost dimension stepping over that part alone."""
        self.order = order
        """Per part, that order as indices (:func:`~aiedsl.ir.types.dims_index`), when its
        ``gather`` is one; None when nothing needs it."""
        self.pending = pending
        """Per part, per buffer: what the link's receiver left pending (see :class:`Receive`),
        sent from there: it is the received data itself, which nobody changes."""
        self.bufs = bufs.reshape(bufs.shape[0], -1)
        self.src = [[row[off:off + n] for off, n in parts] for row in self.bufs]
        """Per buffer, per part: what the part is (views made once)."""
        self.parts, self.prod, self.cons = parts, prod, cons
        self.n_bufs, self.n_parts = self.bufs.shape[0], len(parts)
        self.acqs = [("acq", lock, 1) for lock in cons]
        self.slot = self.part = 0
        self.state = _ACQ
        self.start = 0.0
        self.req: tuple[str, Chunk] | None = None
        """``("sent", chunk)`` of the part being sent."""
        self.copy: bool | None = None
        """Whether a part in plain order is sent as a copy (known at the first send, once every
        receiver is in place): a receiver that writes what it gets at once may get a view of
        this buffer, which is not freed before every receiver has it; one that keeps what it
        gets for a while (:attr:`Port.holds`) needs a copy."""

    def step(self) -> None:
        """Move parts until a lock or a receiver makes the channel wait."""
        p, engine = self.p, self.engine
        times, due = engine.times, engine.due
        state = self.state
        again = p.request is not None or state == _SEND or state == _FREE  # as in Receive
        while True:
            if state == _ACQ:
                lock = self.cons[self.part]
                units = lock.units
                if not units:
                    lock.waiters.append(p)
                    self.state, p.request = state, self.acqs[self.part]
                    return
                u = units.popleft()  # Engine.acquire of one unit, inlined
                if u > p.time:
                    p.time = u
                p.request = None
                state = _SEND
            elif state == _SENT:
                req = self.req
                assert req is not None  # set by the send this waits for
                if not engine.sent(p, req):
                    self.state, p.request = state, req
                    return
                state = _FREE
            if not again and times and times[0] < p.time:  # let earlier clocks go first
                self.state = state
                at = due.get(p.time)  # Engine.ready, inlined
                if at is None:
                    due[p.time] = [p]
                    heapq.heappush(times, p.time)
                else:
                    at.append(p)
                return
            again = False
            if state == _SEND:
                held = self.held
                if self.pending is not None and self.sends == 0:
                    by_slot = self.pending[self.part]
                    got = by_slot[self.slot]
                    # a chunk received with its gather deferred: its elements are what this
                    # sends on (or gathers again), so they are gathered here
                    held = self.held = got.content() if isinstance(got, Chunk) else got
                    by_slot[self.slot] = None
                data = self.src[self.slot][self.part] if held is None else held
                self.start = p.time
                if engine.trace:
                    p.open = (p.time, self.conn.name)
                gather = self.gather[self.part]
                order = None if self.order is None else self.order[self.part]
                # what a link received, gathered in its order: the chunk carries it and the
                # order, gathered only if a receiver reads the elements (Chunk.content)
                defer = held is not None and gather is not None and order is not None
                if gather is not None and not defer:
                    data = gather(data)
                elif held is not None:
                    pass  # the received data itself: never changed, so never copied
                else:
                    copy = self.copy
                    if copy is None:
                        copy = self.copy = any(
                            port.holds or port.owner is None or port.owner.step is None
                            for port in self.conn.ports)  # (a shim drain is a generator)
                    if copy:
                        data = data.copy()
                chunk = engine.send(self.conn, data, p)
                if defer:
                    assert held is not None and order is not None
                    chunk.origin = (held, order)  # the elements are held[order]
                    chunk.deferred = True
                self.req = ("sent", chunk)
                state = _SENT
            else:  # _FREE
                i = self.part
                elapsed = p.time - self.start
                p.busy += elapsed
                req = self.req
                assert req is not None
                # beyond one stream of the element: waiting for a receiver to take it
                stalled = elapsed - req[1].data.nbytes / self.conn.rate
                if stalled > 0:
                    p.waited += stalled
                if engine.trace:
                    # the part before the element streams (all of it when every receiver
                    # was ready) is waiting, drawn apart so a tuner tells it from moving data
                    moving = req[1].done - req[1].data.nbytes / self.conn.rate
                    if moving > self.start:
                        p.spans.append((self.start, moving, self.conn.name + WAITING))
                    p.spans.append((max(moving, self.start), p.time, self.conn.name))
                    p.open = None
                self.sends += 1
                if self.sends < self.repeat:  # the same part again, still held
                    state = _SEND
                    continue
                self.sends, self.held = 0, None
                lock = self.prod[i]
                lock.units.append(p.time)  # Engine.release of one unit, inlined
                waiters = lock.waiters
                if waiters:  # Engine.wake, inlined
                    for w in waiters:
                        at = due.get(w.time)
                        if at is None:
                            due[w.time] = [w]
                            heapq.heappush(times, w.time)
                        else:
                            at.append(w)
                    waiters.clear()
                if i + 1 < self.n_parts:
                    self.part = i + 1
                else:
                    self.part = 0
                    slot = self.slot + 1
                    self.slot = slot if slot < self.n_bufs else 0
                state = _ACQ
