"""The shim DMA processes: fills read host memory in the runtime's pattern order, drains write
it; both share host-memory bandwidth (:class:`~aiedsl.sim.state.DramPort`) with the other shim
channels of their direction and pay the channel's AXI-burst overhead. The on-chip DMAs are in
:mod:`aiedsl.sim.dma`."""

from __future__ import annotations

import numpy as np

from aiedsl.sim.engine import Engine
from aiedsl.sim.processes import BURSTS, WAITING, Conn, Gen, Port, Proc, WorkQueue
from aiedsl.sim.patterns import pattern_reader, pattern_writer
from aiedsl.sim.state import Machine


def shim_fill(engine: Engine, m: Machine, p: Proc, q: WorkQueue, conn: Conn, nbytes: int,
              np_dtype: np.dtype) -> Gen:
    """The shim DMA sending a fill: host elements in pattern order, one fifo element's bytes
    at a time, reinterpreted (never converted) as the fifo's element type.

    Back-pressure: a piece streams after its lead (its AXI bursts' overhead, or host memory's
    lag behind the stream when that is longer) from the moment both ends are ready. When its
    receiver is not ready (its buffers are all full), the channel does not read the piece ahead
    meanwhile: the receiver gets it the lead after it frees a buffer, then at stream speed. The
    real channel holds only what is in flight (its internal buffering and a few words in each
    stream switch; no source we found gives the size: AM020 gives the task queue's depth, four,
    and AM009, for the first-generation AIE, 4-deep FIFOs per stream switch port), so this is
    the conservative reading: nothing read ahead. Host-memory bandwidth is still reserved
    when the channel is ready to read, not when the late receiver is; that shifts only when
    other shim channels see it in use, never how much is moved.
    """
    burst = m.costs.burst
    read = m.dram.read
    rate = conn.rate
    while True:
        flat, pattern, token, issued, per_byte = yield ("work", q)
        p.time = max(p.time, issued)
        for piece in pattern_reader(flat, pattern, nbytes // flat.itemsize):
            if piece.dtype != np_dtype:
                piece = piece.view(np_dtype)
            # host memory serves the piece, then the channel issues its bursts and streams it;
            # the stream cannot end before host memory has delivered the piece's last byte
            served = read.reserve(p.time, piece.nbytes)
            start = served - piece.nbytes / read.bytes_per_cycle
            lag = piece.nbytes / read.bytes_per_cycle - piece.nbytes / rate
            lead = max(piece.nbytes * per_byte * burst, lag)
            p.time = start + lead
            chunk = engine.send(conn, piece, p)
            # No read-ahead while the stream is blocked: a receiver not ready for the piece
            # gets it ``lead`` after it becomes ready (see the docstring)
            chunk.lead = lead
            if engine.trace:
                p.open = (start, conn.name)
            yield ("sent", chunk)
            p.open = None
            p.busy += p.time - start
            stalled = p.time - start - lead - piece.nbytes / rate  # a receiver was not ready
            if stalled > 0:
                p.waited += stalled
            if engine.trace:  # waiting for the receiver first (see the docstring)
                if stalled > 0:
                    p.spans.append((start, start + stalled, conn.name + WAITING))
                p.spans.append((start + max(stalled, 0.0), p.time, conn.name))
        q.finished.append(p.time)
        if token is not None:  # rt.fill(..., wait=True): done once its last byte is sent
            engine.complete(token, p.time)


def shim_drain(engine: Engine, m: Machine, p: Proc, q: WorkQueue, port: Port, nbytes: int,
               np_dtype: np.dtype) -> Gen:
    """The shim DMA receiving a drain into host memory, bytes reinterpreted as the host type."""
    burst = m.costs.burst
    write = m.dram.write
    rate = port.conn.rate
    while True:
        flat, pattern, token, issued, per_byte = yield ("work", q)
        p.time = max(p.time, issued)
        per = nbytes // np_dtype.itemsize
        for store in pattern_writer(flat, pattern, nbytes // flat.itemsize):
            data = yield ("get", port, per)
            store(data if data.dtype == flat.dtype else data.view(flat.dtype))
            # Host memory takes the bytes as they stream in (it is a throughput limit shared by
            # the drains, not a second copy); then the channel's write bursts cost their
            # overhead.
            arrived = p.time - data.nbytes / rate
            written = write.reserve(arrived, data.nbytes)
            overhead = data.nbytes * per_byte * burst
            p.time = max(p.time, written) + overhead
            p.busy += overhead
            if engine.trace and overhead:  # the busy time a trace shows, as a fill's does
                p.spans.append((p.time - overhead, p.time, port.conn.name + BURSTS))
        q.finished.append(p.time)
        if token is not None:
            engine.complete(token, p.time)
