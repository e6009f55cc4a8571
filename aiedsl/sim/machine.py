"""Build a runnable model of a placed design: buffers, locks, DMA processes, cores, runtime.

What it models (mlir-aie's objectfifo lowering, ``../shared/reference/mlir-aie/objectfifo-lowering__*``):

* each fifo endpoint on a core is a ring of buffers with a producer lock (starts at the number
  of buffers) and a consumer lock (starts at 0); a DMA channel moves whole elements between the
  ring and a stream, applying the endpoint's ``dims`` as an n-d address generator whose outermost
  dimension repeats until the element is done;
* a memtile link is a ring of parent-sized buffers with one lock pair per part: a split's input
  DMA fills the parts of each buffer in order and each output DMA sends its part; a join mirrors it;
  a forward is a split of one part, its buffers as large as the larger element (the stream
  regroups elements when the two sizes differ);
* a broadcast element moves only while every receiver still lacking it is receiving (the stream
  is circuit-switched: one receiver with full buffers stalls the others), and leaves its sender
  when every receiver has taken it;
* shim DMAs move host elements in the runtime's n-d pattern order, in the order the runtime issued
  them; DRAM read bandwidth is shared by every MM2S shim channel and write bandwidth by every
  S2MM one;
* cores run their traced programs: object-fifo acquire/release semantics (an acquire of n when k
  are held waits for n - k more; a release frees the oldest), kernels by their numpy references
  on the real buffers;
* a runtime-parameter write lands in its core's buffer at its point of the runtime sequence; a
  call reads the slot's value at the call's cycle (the last write at or before it), after every
  earlier event has run, and reading a slot nothing has written yet is a :class:`SimFault`.

Timing (the target's :class:`~aiedsl.targets.TimingModel`): a stream runs at its slower DMA's
rate; a shim channel also spends ``shim_burst_cycles`` per AXI burst of its host pattern; the
runtime spends ``shim_task_s`` issuing each transfer, which starts no earlier, and
``register_write_s`` on each rtp write; a core spends
``lock_acquire_cycles``/``lock_release_cycles`` per fifo acquire/release and
``kernel_call_cycles`` around each call besides the kernel's own cycles. All of it is charged per
transfer, piece, call or lock operation, never per element. The fixed invocation cost is not
simulated: :func:`aiedsl.sim.stats.timing` adds it once.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from aiedsl.place.objectfifo import lower
from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.errors import DesignError, user_exception
from aiedsl.ir import (
    Acquire, BarrierWait, BufferArg, Call, Core, Design, Fifo, Link, Loop, Op, Release, RtpArg,
)
from aiedsl.ir.types import dims_index
from aiedsl.sim.dma import Receive, Send
from aiedsl.sim.engine import Conn, Engine, Lock, Port, Proc, Token, WorkQueue
from aiedsl.sim.shim import ShimRtpWrite, ShimSetLock, ShimTransfer, shim_program
from aiedsl.targets import TimingModel, get_target
from aiedsl.targets.model import TileKind


def pattern_steps(pattern: Any, numel: int) -> Any:
    """Element offsets of a runtime pattern in transfer order, ``numel`` at a time.

    Offsets are built one outermost step at a time (int32: host tensors are < 2^31 elements), so
    a long transfer never holds all of its indices at once.
    """
    inner = np.array(0, dtype=np.int32)
    for size, stride in zip(pattern.sizes[1:], pattern.strides[1:]):
        inner = inner[..., None] + np.arange(size, dtype=np.int32) * np.int32(stride)
    inner = inner.ravel()
    carry = np.empty(0, dtype=np.int32)
    for step in range(pattern.sizes[0]):
        block = inner + np.int32(pattern.offset + step * pattern.strides[0])
        if carry.size:
            block = np.concatenate([carry, block])
        whole = block.size - block.size % numel
        for off in range(0, whole, numel):
            yield block[off:off + numel]
        carry = block[whole:]
    if carry.size:
        yield carry


def _piece_views(flat: np.ndarray, pattern: Any, numel: int, write: bool
                 ) -> list[np.ndarray] | None:
    """The pieces of :func:`pattern_steps` as strided views of ``flat``, when every piece is one
    regular block of the pattern (``r`` steps of one dimension times all the inner ones); None
    otherwise. A strided copy of such a block costs a fraction of an index gather.

    Views that would leave ``flat``, run backwards, or (for writing) hit an element twice are
    refused: the index arrays then do it as before.
    """
    sizes, strides = tuple(pattern.sizes), tuple(pattern.strides)
    total = int(np.prod(sizes))
    if numel <= 0 or total % numel or min(strides) < 0 or pattern.offset < 0:
        return None
    suffix = [1] * (len(sizes) + 1)
    for j in range(len(sizes) - 1, -1, -1):
        suffix[j] = suffix[j + 1] * sizes[j]
    j = next(j for j in range(len(sizes) + 1) if numel % suffix[j] == 0)
    if j == 0:  # numel == total: the whole pattern is one piece
        shape, vstrides, outer = sizes, strides, [pattern.offset]
    else:
        r = numel // suffix[j]
        if sizes[j - 1] % r:
            return None
        shape = (r, *sizes[j:])
        vstrides = (strides[j - 1], *strides[j:])
        outer_idx = np.array(pattern.offset, dtype=np.int64)
        for size, stride in [*zip(sizes[:j - 1], strides[:j - 1]),
                             (sizes[j - 1] // r, strides[j - 1] * r)]:
            outer_idx = outer_idx[..., None] + np.arange(size, dtype=np.int64) * stride
        outer = outer_idx.ravel().tolist()
    span = sum((n - 1) * st for n, st in zip(shape, vstrides))
    if max(outer) + span >= flat.size:
        return None
    if write:  # injective: each stride passes over everything the smaller ones cover
        reach = 0
        for st, n in sorted((st, n) for n, st in zip(shape, vstrides) if n > 1):
            if st <= reach:
                return None
            reach += (n - 1) * st
    item = flat.itemsize
    bstrides = tuple(st * item for st in vstrides)
    return [np.ndarray(shape, flat.dtype, flat, off * item, bstrides) for off in outer]


def pattern_reader(flat: np.ndarray, pattern: Any, numel: int) -> Any:
    """Copies of the pieces of :func:`pattern_steps` read from ``flat``, in transfer order."""
    views = _piece_views(flat, pattern, numel, write=False)
    if views is None:
        for idx in pattern_steps(pattern, numel):
            yield flat[idx]
        return
    for v in views:
        yield v.copy().reshape(-1)


def pattern_writer(flat: np.ndarray, pattern: Any, numel: int) -> Any:
    """One store per piece of :func:`pattern_steps` into ``flat``, in transfer order: called
    with the piece's elements (``flat``'s dtype)."""
    views = _piece_views(flat, pattern, numel, write=True)
    if views is None:
        for idx in pattern_steps(pattern, numel):
            yield lambda data, idx=idx: flat.__setitem__(idx, data)
        return
    for v in views:
        yield lambda data, v=v: v.__setitem__(Ellipsis, data.reshape(v.shape))


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


def bursts_per_byte(pattern: Any, itemsize: int, burst_bytes: int) -> float:
    """AXI bursts per byte a shim DMA issues for ``pattern`` over elements of ``itemsize`` bytes.

    The innermost dimensions that continue one another contiguously form one run; every run is
    ``ceil(run / burst_bytes)`` bursts (runs are taken as starting on a burst boundary).
    """
    span = 1  # elements of one contiguous run
    for size, stride in zip(reversed(pattern.sizes), reversed(pattern.strides)):
        if stride == span:
            span *= size
        elif size > 1:
            break
    run = span * itemsize
    return -(-run // burst_bytes) / run


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


def build_machine(d: Design, host: dict[str, np.ndarray], kernels: dict[str, Any],
                  trace: bool = False, compute: bool = True,
                  clock_hz: float | None = None) -> Machine:
    """Model placed design ``d`` over host arrays ``host`` (modified in place by drains);
    cycles count ``clock_hz`` (the target's clock by default)."""
    target = get_target(d.device)
    clock = clock_hz or target.clock_hz
    tm = target.timing
    engine = Engine(trace)
    dram = Dram(DramPort(tm.dram_read_bytes_per_s / clock),
                DramPort(tm.dram_write_bytes_per_s / clock))
    m = Machine(d, engine, host, dram, Costs.of(tm, clock), clock, compute=compute)

    def rate(*ends: TileKind) -> float:
        # A stream runs at its slowest DMA channel (and never faster than a stream port).
        return float(min(target.stream_bytes_per_cycle, *(tm.dma_bytes_per_cycle[k]
                                                          for k in ends)))
    ends = lower(d)  # how many buffers each end has, as mlir-aie's lowering gives them
    links_in = {n: link for link in d.links for n in link.srcs}
    links_out = {n: link for link in d.links for n in link.dsts}
    rings: dict[tuple[str, str, str], Ring] = {}

    shared = d.physical.shared if d.physical else {}
    for f in d.fifos:
        np_dtype = np.dtype(lookup_dtype(f.elem.dtype).numpy)
        if f.name in shared:  # neighbours share the buffers: the cores' locks are the only sync
            ring = _ring(f"{f.name}@{shared[f.name]}", f.producer.depth, f.elem.shape, np_dtype)
            rings[(f.name, "produce", f.producer.core)] = ring
            rings[(f.name, "consume", f.consumers[0].core)] = ring
            continue
        sides: list[TileKind] = [f.producer.kind, *(c.kind for c in f.consumers)]  # type: ignore
        conn = m.conns[f.name] = Conn(f.name, rate(*sides))
        # receivers first, so every port exists before the sender can send
        for ci, c in enumerate(f.consumers):
            port = conn.port(f"{f.name}->{c.label()}")
            if c.kind == "core":
                nbuf = ends.end(f.name, "consume", ci).size
                ring = _ring(f"{f.name}@{c.core}", nbuf, f.elem.shape, np_dtype)
                rings[(f.name, "consume", c.core)] = ring
                p = Proc(f"dma {c.core} <- {f.name}", "s2mm", info={
                    "fifo": f.name, "tile": c.tile, "core": c.core, "ring": ring})
                engine.spawn_step(p, Receive(
                    engine, p, ring.bufs, [(0, f.elem.numel)], [ring.prod], [ring.cons], port,
                    dims_index(c.dims, f.elem.numel)).step)
                ring.cons.releaser = p
                port_owner(port, p)
            elif c.kind == "shim":
                q = m.drain_queues[f.name] = WorkQueue(f.name)
                p = engine.spawn(Proc(f"shim {c.tile} <- {f.name}", "s2mm", info={
                    "fifo": f.name, "tile": c.tile, "shim": True, "queue": q}),
                    lambda p, q=q, port=port, n=f.elem.nbytes, dt=np_dtype:
                    _shim_drain(engine, m, p, q, port, n, dt))
                m.drain_procs[f.name] = p
                port_owner(port, p)
        if f.producer.kind == "core":
            core = f.producer.core
            nbuf = ends.end(f.name, "produce").size
            ring = _ring(f"{f.name}@{core}", nbuf, f.elem.shape, np_dtype)
            rings[(f.name, "produce", core)] = ring
            p = Proc(f"dma {core} -> {f.name}", "mm2s", info={
                "fifo": f.name, "tile": f.producer.tile, "core": core, "ring": ring})
            engine.spawn_step(p, Send(
                engine, p, ring.bufs, [(0, f.elem.numel)], [ring.prod], [ring.cons], conn,
                dims_index(f.producer.dims, f.elem.numel)).step)
            ring.prod.releaser = p
            conn.sender = p
            p.info["conn"] = conn
        elif f.producer.kind == "shim":
            q = m.fill_queues[f.name] = WorkQueue(f.name)
            conn.sender = engine.spawn(Proc(f"shim {f.producer.tile} -> {f.name}", "mm2s", info={
                "fifo": f.name, "tile": f.producer.tile, "shim": True, "queue": q,
                "conn": conn}),
                lambda p, q=q, conn=conn, n=f.elem.nbytes, dt=np_dtype:
                _shim_fill(engine, m, p, q, conn, n, dt))

    for link in d.links:
        _build_link(m, link, links_in, links_out)

    for r in d.rtps:
        m.rtps[r.name] = RtpMemory(r.name, r.core, [[] for _ in range(r.type.numel)])
    for b in d.barriers:
        for core in b.cores:
            m.barrier_locks[(b.name, core)] = Lock(f"barrier {b.name}@{core}", b.init)
    for c in d.cores:
        p = Proc(c.name, "core", info={"tile": c.tile, "loc": c.loc})
        for (fifo, port, core), ring in rings.items():
            if core == c.name:
                (ring.prod if port == "consume" else ring.cons).releaser = p
        m.cores[c.name] = engine.spawn(p, lambda p, c=c: _core(m, p, c, rings, kernels))
    m.runtime = engine.spawn(Proc("runtime", "runtime", info={"loc": d.loc}),
                             lambda p: _runtime(m, p))
    for lock in m.barrier_locks.values():
        lock.releaser = m.runtime  # only the runtime sets a barrier
    return m


def port_owner(port: Port, p: Proc) -> None:
    """Remember which process receives on ``port`` (explanations follow it)."""
    port.owner = p


def _ring(name: str, depth: int, shape: tuple[int, ...], np_dtype: np.dtype) -> Ring:
    return Ring(name, np.zeros((depth, *shape), dtype=np_dtype), Lock(f"{name}.prod", depth),
                Lock(f"{name}.cons", 0))


def _build_link(m: Machine, link: Link, links_in: dict[str, Link], links_out: dict[str, Link]
                ) -> None:
    d, engine = m.design, m.engine
    srcs = [d.fifo(n) for n in link.srcs]
    dsts = [d.fifo(n) for n in link.dsts]
    np_dtype = np.dtype(lookup_dtype(srcs[0].elem.dtype).numpy)
    if link.kind == "forward":
        size = max(srcs[0].elem.numel, dsts[0].elem.numel)
        parts = [(0, size)]
        depth = next(c for c in srcs[0].consumers if c.kind == "memtile").depth
    elif link.kind == "split":
        size = srcs[0].elem.numel
        parts = [(off, f.elem.numel) for off, f in zip(link.offsets, dsts)]
        depth = next(c for c in srcs[0].consumers if c.kind == "memtile").depth
    else:
        size = dsts[0].elem.numel
        parts = [(off, f.elem.numel) for off, f in zip(link.offsets, srcs)]
        depth = dsts[0].producer.depth
    bufs = np.zeros((depth, size), dtype=np_dtype)
    tag = f"memtile {link.memtile} {link.kind}"
    prod = [Lock(f"{tag}.part{i}.prod", depth) for i in range(len(parts))]
    cons = [Lock(f"{tag}.part{i}.cons", 0) for i in range(len(parts))]
    info = {"tile": link.memtile, "link": link, "loc": link.loc}

    def port_for(f: Fifo) -> Port:
        conn = m.conns[f.name]
        return next(pt for pt, c in zip(conn.ports, f.consumers) if c.kind == "memtile")

    if link.kind == "join":
        for i, f in enumerate(srcs):
            p = Proc(f"{tag} <- {f.name}", "s2mm", info={**info, "fifo": f.name})
            engine.spawn_step(p, Receive(engine, p, bufs, [parts[i]], [prod[i]], [cons[i]],
                                         port_for(f), None).step)
            cons[i].releaser = p
            port_owner(port_for(f), p)
        out = dsts[0]
        p = Proc(f"{tag} -> {out.name}", "mm2s", info={
            **info, "fifo": out.name, "conn": m.conns[out.name]})
        engine.spawn_step(p, Send(engine, p, bufs, parts, prod, cons, m.conns[out.name],
                                  dims_index(out.producer.dims, parts[0][1])).step)
        m.conns[out.name].sender = p
        for lk in prod:
            lk.releaser = p
        return
    src = srcs[0]
    p = Proc(f"{tag} <- {src.name}", "s2mm", info={**info, "fifo": src.name})
    engine.spawn_step(p, Receive(engine, p, bufs, parts, prod, cons, port_for(src), None).step)
    port_owner(port_for(src), p)
    for lk in cons:
        lk.releaser = p
    for i, f in enumerate(dsts):
        q = Proc(f"{tag} -> {f.name}", "mm2s", info={
            **info, "fifo": f.name, "conn": m.conns[f.name]})
        engine.spawn_step(q, Send(engine, q, bufs, [parts[i]], [prod[i]], [cons[i]],
                                  m.conns[f.name], dims_index(f.producer.dims, parts[i][1])).step)
        m.conns[f.name].sender = q
        prod[i].releaser = q


# -- shim DMA processes (the on-chip ones are in aiedsl.sim.dma) ------------------------

def _shim_fill(engine: Engine, m: Machine, p: Proc, q: WorkQueue, conn: Conn, nbytes: int,
               np_dtype: np.dtype):
    """The shim DMA sending a fill: host elements in pattern order, one fifo element's bytes
    at a time, reinterpreted (never converted) as the fifo's element type."""
    burst = m.costs.burst
    read = m.dram.read
    rate = conn.rate
    while True:
        flat, pattern, _, issued, per_byte = yield ("work", q)
        p.time = max(p.time, issued)
        for piece in pattern_reader(flat, pattern, nbytes // flat.itemsize):
            if piece.dtype != np_dtype:
                piece = piece.view(np_dtype)
            # host memory serves the piece, then the channel issues its bursts and streams it;
            # the stream cannot end before host memory has delivered the piece's last byte
            start = read.reserve(p.time, piece.nbytes)
            lag = piece.nbytes / read.bytes_per_cycle - piece.nbytes / rate
            p.time = start + max(piece.nbytes * per_byte * burst, lag)
            chunk = engine.send(conn, piece, p)
            yield ("sent", chunk)
            p.busy += p.time - start


def _shim_drain(engine: Engine, m: Machine, p: Proc, q: WorkQueue, port: Port, nbytes: int,
                np_dtype: np.dtype):
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
            written = write.reserve(arrived, data.nbytes) + data.nbytes / write.bytes_per_cycle
            overhead = data.nbytes * per_byte * burst
            p.time = max(p.time, written) + overhead
            p.busy += overhead
        if token is not None:
            engine.complete(token, p.time)


# -- cores and the runtime ------------------------------------------------------------------

@dataclass(eq=False)
class _End:
    """One fifo end of a core while its program runs: the ring, the locks its acquires and
    releases use, the slots it holds (oldest first) and the slot its next acquire gets."""

    key: tuple[str, str]
    ring: Ring
    acquire: Lock
    release: Lock
    held: list[int] = field(default_factory=list)
    next: int = 0
    depth: int = 0


_ACQ, _REL, _CALL, _LOOP, _NEXT, _BAR = range(6)
"""Opcodes of a compiled core program."""
_PAUSE = ("pause",)
"""What a core yields after an acquire it made itself when an earlier clock must go first."""


def _compile(m: Machine, core: Core, rings: dict[tuple[str, str, str], Ring],
             kernels: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Flatten a core program into instructions with every lookup done once.

    Loops become ``(_LOOP, n, end)`` / ``(_NEXT, start)``. An acquire stores what it got in the
    cell of its result name (``[end, slots]``, the latest acquire of that name wins, as the
    program reads it); a call's buffer argument reads that cell through views of every slot of
    every end acquired under the name, already in the kernel parameter's shape.
    """
    ends: dict[tuple[str, str], _End] = {}
    cells: dict[str, list[Any]] = {}
    acquired: dict[str, list[_End]] = {}
    kdecl = {k.symbol: k for k in m.design.kernels}
    refs = {k.symbol: _reference(k, kernels) for k in m.design.kernels}
    out: list[tuple[Any, ...]] = []

    def end(fifo: str, port: str) -> _End:
        key = (fifo, port)
        if key not in ends:
            ring = rings[(fifo, port, core.name)]
            ends[key] = (_End(key, ring, ring.cons, ring.prod, depth=ring.depth)
                         if port == "consume" else
                         _End(key, ring, ring.prod, ring.cons, depth=ring.depth))
        return ends[key]

    def scan(ops: tuple[Op, ...]) -> None:
        for op in ops:
            if isinstance(op, Loop):
                scan(op.body)
            elif isinstance(op, Acquire):
                acquired.setdefault(op.result, []).append(end(op.fifo, op.port))

    def emit(ops: tuple[Op, ...]) -> None:
        for op in ops:
            if isinstance(op, Loop):
                at = len(out)
                out.append((_LOOP, op.count, 0))
                emit(op.body)
                out.append((_NEXT, at))
                out[at] = (_LOOP, op.count, len(out))
            elif isinstance(op, BarrierWait):
                out.append((_BAR, m.barrier_locks[(op.barrier, core.name)], op.value, op))
            elif isinstance(op, Acquire):
                cell = cells.setdefault(op.result, [None, None])
                out.append((_ACQ, end(op.fifo, op.port), op.count, cell, op))
            elif isinstance(op, Release):
                out.append((_REL, end(op.fifo, op.port), op.count, op))
            elif isinstance(op, Call):
                k = kdecl[op.kernel]
                args: list[tuple[Any, ...]] = []
                for a, param in zip(op.args, k.args):
                    if isinstance(a, BufferArg):
                        shape = param.type.shape
                        views = {id(e): [b if b.shape == shape else b.reshape(shape)
                                         for b in e.ring.bufs]
                                 for e in acquired.get(a.value, [])}
                        args.append((cells.setdefault(a.value, [None, None]), a.index, views))
                    elif isinstance(a, RtpArg):
                        args.append((_RTP, a, m.rtps[a.rtp]))
                    else:
                        args.append((None, 0, a.value))
                out.append((_CALL, k, refs[op.kernel], args, op,
                            any(isinstance(a, RtpArg) for a in op.args)))

    scan(core.body)
    emit(core.body)
    return out


def _core(m: Machine, p: Proc, core: Core, rings: dict[tuple[str, str, str], Ring],
          kernels: dict[str, Any]):
    """Interpret a core's program (one invocation), compiled so each step is a few list
    operations."""
    engine = m.engine
    costs = m.costs
    code = _compile(m, core, rings, kernels)
    held: dict[tuple[str, str], list[int]] = {}
    p.info["held"] = held  # what the core holds, for deadlock explanations
    info = p.info
    compute = m.compute
    release = engine.release
    wake = engine.wake
    heap = engine.heap
    counters: list[int] = []
    pc = 0
    n_code = len(code)
    while pc < n_code:
        ins = code[pc]
        tag = ins[0]
        if tag == _ACQ:
            e, count, cell = ins[1], ins[2], ins[3]
            h = e.held
            if e.key not in held:
                held[e.key] = h
            need = count - len(h)
            if need > 0:  # elements already held take no lock operation
                units = e.acquire.units
                if len(units) >= need:  # Engine.acquire inlined, then its yield point
                    t = p.time
                    for _ in range(need):
                        u = units.popleft()
                        if u > t:
                            t = u
                    p.time = t
                    if heap and heap[0][0] < t:
                        yield _PAUSE
                else:
                    info["waiting"] = ins[4]
                    yield ("acq", e.acquire, need)
                    del info["waiting"]
                p.time += costs.acquire
                first = e.next
                depth = e.depth
                h.extend((first + i) % depth for i in range(need))
                e.next = (first + need) % depth
            cell[0] = id(e)
            cell[1] = h[:count]
        elif tag == _CALL:
            k = ins[1]
            if ins[5] and heap and heap[0][0] < p.time:
                # an rtp is read at this cycle: let every earlier event (a runtime write) go first
                yield _PAUSE
            if compute:
                args = [views[cell[0]][cell[1][i]] if cell.__class__ is list
                        else _read_rtp(core, p, i, views, ins[4]) if cell is _RTP
                        else views for cell, i, views in ins[3]]
                try:
                    ins[2](*args)
                except Exception as err:  # the user's reference (or a native build) failed
                    raise user_exception(err, f"running kernel '{k.symbol}' for {core.name} "
                                         f"(called at {ins[4].loc})", k.loc) from err
            start = p.time
            p.time += k.cycles + costs.call
            p.busy += k.cycles + costs.call
            m.kernel_calls += 1
            m.ops += k.ops
            if engine.trace:
                p.spans.append((start, p.time, k.symbol))
        elif tag == _REL:
            e, count = ins[1], ins[2]
            h = e.held
            if count > len(h):
                op = ins[3]
                raise SimFault(
                    "release", f"{core.name} releases {count} element(s) of "
                    f"'{op.fifo}' ({op.port}) but holds {len(h)}", loc=op.loc,
                    limit=f"at most the {len(h)} held", found=str(count),
                    fix="release only what was acquired")
            del h[:count]
            p.time += costs.release
            lock = e.release
            if count == 1:
                lock.units.append(p.time)
                if lock.waiters:
                    wake(lock.waiters)
            else:
                release(lock, count, p.time)
        elif tag == _BAR:
            # AcquireGreaterEqual: wait for the value, take it; the same lock cost as a fifo's
            info["waiting"] = ins[3]
            yield ("acq", ins[1], ins[2])
            del info["waiting"]
            p.time += costs.acquire
        elif tag == _LOOP:
            counters.append(ins[1])
        else:  # _NEXT
            counters[-1] -= 1
            if counters[-1]:
                pc = ins[1]  # back to the loop head's body
            else:
                counters.pop()
        pc += 1


_RTP = object()
"""Marks a compiled call argument read from a runtime parameter when the call runs."""


def _read_rtp(core: Core, p: Proc, a: RtpArg, mem: RtpMemory, call: Call) -> int:
    """The value of rtp slot ``a`` when ``core``'s call runs (at its clock); a SimFault when
    the runtime has not written it by then (the core would read whatever the memory held)."""
    value = mem.read(a.index, p.time)
    if value is None:
        raise SimFault(
            "rtp", f"{core.name} reads rtp '{a.rtp}'[{a.index}] at cycle {p.time:.0f}, before "
            "the runtime writes it", loc=a.loc, limit="a slot is read after an rtp_write of it "
            "(the memory holds no value before)", found="no write by then",
            related=[(f"the call that reads it ({core.name})", call.loc)],
            fix=f"rt.rtp_write('{a.rtp}', {a.index}, ...) before the fills that feed this core")
    return value


def _reference(k: Any, kernels: dict[str, Any]) -> Callable[..., None]:
    obj = kernels.get(k.symbol)
    if obj is not None:
        return obj.run_reference
    module, _, name = k.reference.partition(":")
    fn = importlib.import_module(module)
    for part in name.split("."):
        fn = getattr(fn, part)
    return lambda *args: fn(*args, **k.params)


def _runtime(m: Machine, p: Proc):
    """Run the runtime sequence: the shim transfers, waits and rtp writes of
    :func:`shim_program`.

    Issuing a transfer takes the firmware ``shim_task_s`` (its BD, address patch and queue
    push); the transfer starts no earlier. An rtp write takes ``register_write_s`` and lands
    when it is done. Waits cost nothing beyond waiting.
    """
    engine = m.engine
    costs = m.costs
    pending: dict[str, list[Token]] = {}
    for op in shim_program(m.design):
        if isinstance(op, ShimSetLock):
            # one register write: the lock takes the value, whatever it held
            p.time += costs.register_write
            p.busy += costs.register_write
            if engine.heap and engine.heap[0][0] < p.time:
                # a core may take the lock's value before this set replaces it: earlier first
                yield _PAUSE
            lock = m.barrier_locks[(op.barrier, op.core)]
            lock.units.clear()
            if op.value:
                engine.release(lock, op.value, p.time)
            continue
        if isinstance(op, ShimRtpWrite):
            # one register write into the core's memory; nothing waits for it
            p.time += costs.register_write
            p.busy += costs.register_write
            m.rtps[op.rtp].writes[op.index].append((p.time, op.value))
            continue
        if isinstance(op, ShimTransfer):
            flat = m.host[op.tensor].reshape(-1)
            p.time += costs.task
            p.busy += costs.task
            per_byte = bursts_per_byte(op.pattern, flat.itemsize, costs.burst_bytes)
            token = None
            if op.token:  # a wait takes the oldest token of its channel, waited for or not
                token = Token(f"{op.op} {op.fifo}", op.loc, m.drain_procs.get(op.fifo))
                pending.setdefault(op.fifo, []).append(token)
            q = (m.fill_queues if op.op == "fill" else m.drain_queues)[op.fifo]
            engine.enqueue(q, (flat, op.pattern, token, p.time, per_byte))
        else:
            token = pending[op.fifo].pop(0)
            p.info["waiting"] = m.design.runtime[op.order]  # the IR's Wait, for explanations
            yield ("done", token)
            p.info.pop("waiting", None)
    p.info["done"] = True
