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
  on the real buffers.

Timing (the target's :class:`~aiedsl.targets.TimingModel`): a stream runs at its slower DMA's
rate; a shim channel also spends ``shim_burst_cycles`` per AXI burst of its host pattern; the
runtime spends ``shim_task_s`` issuing each transfer, which starts no earlier; a core spends
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
    Acquire, BufferArg, Call, Core, Design, Fifo, Link, Loop, Op, Release,
)
from aiedsl.ir.types import dims_index
from aiedsl.sim.engine import Conn, Engine, Lock, Port, Proc, Token, WorkQueue
from aiedsl.sim.shim import ShimTransfer, shim_program
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

    @staticmethod
    def of(timing: TimingModel, clock_hz: float) -> "Costs":
        """``timing``'s constants at ``clock_hz``."""
        return Costs(timing.shim_task_s * clock_hz, timing.shim_burst_cycles,
                     timing.shim_burst_bytes, timing.lock_acquire_cycles,
                     timing.lock_release_cycles, timing.kernel_call_cycles)


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
                p = engine.spawn(Proc(f"dma {c.core} <- {f.name}", "s2mm", info={
                    "fifo": f.name, "tile": c.tile, "core": c.core, "ring": ring}),
                    lambda p, r=ring, port=port, idx=dims_index(c.dims, f.elem.numel):
                    _s2mm_ring(engine, p, r, port, idx))
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
            p = engine.spawn(Proc(f"dma {core} -> {f.name}", "mm2s", info={
                "fifo": f.name, "tile": f.producer.tile, "core": core, "ring": ring}),
                lambda p, r=ring, idx=dims_index(f.producer.dims, f.elem.numel), conn=conn:
                _mm2s_ring(engine, p, r, conn, idx))
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

    for c in d.cores:
        p = Proc(c.name, "core", info={"tile": c.tile, "loc": c.loc})
        for (fifo, port, core), ring in rings.items():
            if core == c.name:
                (ring.prod if port == "consume" else ring.cons).releaser = p
        m.cores[c.name] = engine.spawn(p, lambda p, c=c: _core(m, p, c, rings, kernels))
    m.runtime = engine.spawn(Proc("runtime", "runtime", info={"loc": d.loc}),
                             lambda p: _runtime(m, p))
    return m


def port_owner(port: Port, p: Proc) -> None:
    """Remember which process receives on ``port`` (explanations follow it)."""
    port.owner = p


def _ring(name: str, depth: int, shape: tuple[int, ...], np_dtype: np.dtype) -> Ring:
    return Ring(name, np.zeros((depth, *shape), dtype=np_dtype), Lock(f"{name}.prod", depth),
                Lock(f"{name}.cons", 0))


# -- DMA processes -----------------------------------------------------------------------------

def _mm2s_ring(engine: Engine, p: Proc, ring: Ring, conn: Conn, idx: np.ndarray | None):
    slot = 0
    while True:
        yield ("acq", ring.cons, 1)
        buf = ring.bufs[slot].reshape(-1)
        start = p.time
        chunk = engine.send(conn, buf[idx] if idx is not None else buf.copy(), p)
        yield ("sent", chunk)
        p.busy += p.time - start
        engine.release(ring.prod, 1, p.time)
        slot = (slot + 1) % ring.depth


def _s2mm_ring(engine: Engine, p: Proc, ring: Ring, port: Port, idx: np.ndarray | None):
    slot = 0
    numel = ring.bufs[0].size
    while True:
        yield ("acq", ring.prod, 1)
        data = yield ("get", port, numel)
        flat = ring.bufs[slot].reshape(-1)
        if idx is None:
            flat[:] = data
        else:
            flat[idx] = data
        engine.release(ring.cons, 1, p.time)
        slot = (slot + 1) % ring.depth


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
            p = engine.spawn(Proc(f"{tag} <- {f.name}", "s2mm", info={**info, "fifo": f.name}),
                             lambda p, i=i, port=port_for(f):
                             _link_in(engine, p, bufs, [parts[i]], [prod[i]], [cons[i]], port))
            cons[i].releaser = p
            port_owner(port_for(f), p)
        out = dsts[0]
        p = engine.spawn(Proc(f"{tag} -> {out.name}", "mm2s", info={
            **info, "fifo": out.name, "conn": m.conns[out.name]}),
                         lambda p: _link_out(engine, p, bufs, parts, prod, cons, m.conns[out.name],
                                             dims_index(out.producer.dims, parts[0][1])))
        m.conns[out.name].sender = p
        for lk in prod:
            lk.releaser = p
        return
    src = srcs[0]
    p = engine.spawn(Proc(f"{tag} <- {src.name}", "s2mm", info={**info, "fifo": src.name}),
                     lambda p, port=port_for(src):
                     _link_in(engine, p, bufs, parts, prod, cons, port))
    port_owner(port_for(src), p)
    for lk in cons:
        lk.releaser = p
    for i, f in enumerate(dsts):
        q = engine.spawn(Proc(f"{tag} -> {f.name}", "mm2s", info={
            **info, "fifo": f.name, "conn": m.conns[f.name]}),
                         lambda p, i=i, f=f: _link_out(
                             engine, p, bufs, [parts[i]], [prod[i]], [cons[i]], m.conns[f.name],
                             dims_index(f.producer.dims, parts[i][1])))
        m.conns[f.name].sender = q
        prod[i].releaser = q


def _link_in(engine: Engine, p: Proc, bufs: np.ndarray, parts: list[tuple[int, int]],
             prod: list[Lock], cons: list[Lock], port: Port):
    slot = 0
    while True:
        for (off, n), pl, cl in zip(parts, prod, cons):
            yield ("acq", pl, 1)
            bufs[slot, off:off + n] = yield ("get", port, n)
            engine.release(cl, 1, p.time)
        slot = (slot + 1) % bufs.shape[0]


def _link_out(engine: Engine, p: Proc, bufs: np.ndarray, parts: list[tuple[int, int]],
              prod: list[Lock], cons: list[Lock], conn: Conn, idx: np.ndarray | None):
    slot = 0
    while True:
        for (off, n), pl, cl in zip(parts, prod, cons):
            yield ("acq", cl, 1)
            part = bufs[slot, off:off + n]
            start = p.time
            chunk = engine.send(conn, part[idx] if idx is not None else part.copy(), p)
            yield ("sent", chunk)
            p.busy += p.time - start
            engine.release(pl, 1, p.time)
        slot = (slot + 1) % bufs.shape[0]


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
        for idx in pattern_steps(pattern, nbytes // flat.itemsize):
            piece = flat[idx]
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
        for idx in pattern_steps(pattern, nbytes // flat.itemsize):
            data = yield ("get", port, per)
            flat[idx] = data if data.dtype == flat.dtype else data.view(flat.dtype)
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

def _compile(core: Core, ops: tuple[Op, ...], out: list[tuple[Any, ...]]) -> None:
    """Flatten a core program into instructions; loops become ("loop", n, end) / ("next", start)."""
    for op in ops:
        if isinstance(op, Loop):
            at = len(out)
            out.append(("loop", op.count, 0))
            _compile(core, op.body, out)
            out.append(("next", at))
            out[at] = ("loop", op.count, len(out))
        else:
            out.append(("op", op))


def _core(m: Machine, p: Proc, core: Core, rings: dict[tuple[str, str, str], Ring],
          kernels: dict[str, Any]):
    """Interpret a core's program (one invocation), flattened so each step is cheap."""
    engine = m.engine
    costs = m.costs
    held: dict[tuple[str, str], list[int]] = {}
    p.info["held"] = held  # what the core holds, for deadlock explanations
    nxt: dict[tuple[str, str], int] = {}
    views: dict[str, list[np.ndarray]] = {}
    kdecl = {k.symbol: k for k in m.design.kernels}
    refs = {k.symbol: _reference(k, kernels) for k in m.design.kernels}
    code: list[tuple[Any, ...]] = []
    _compile(core, core.body, code)
    counters: list[int] = []
    pc = 0
    while pc < len(code):
        ins = code[pc]
        tag = ins[0]
        if tag == "loop":
            counters.append(ins[1])
        elif tag == "next":
            counters[-1] -= 1
            if counters[-1]:
                pc = ins[1]  # back to the loop head's body
            else:
                counters.pop()
        else:
            op = ins[1]
            if isinstance(op, Acquire):
                key = (op.fifo, op.port)
                ring = rings[(op.fifo, op.port, core.name)]
                h = held.setdefault(key, [])
                need = op.count - len(h)
                if need > 0:  # elements already held take no lock operation
                    p.info["waiting"] = op
                    yield ("acq", ring.cons if op.port == "consume" else ring.prod, need)
                    del p.info["waiting"]
                    p.time += costs.acquire
                    first = nxt.get(key, 0)
                    h.extend((first + i) % ring.depth for i in range(need))
                    nxt[key] = (first + need) % ring.depth
                views[op.result] = [ring.bufs[x] for x in h[:op.count]]
            elif isinstance(op, Release):
                key = (op.fifo, op.port)
                ring = rings[(op.fifo, op.port, core.name)]
                h = held.get(key, [])
                if op.count > len(h):
                    raise SimFault(
                        "release", f"{core.name} releases {op.count} element(s) of "
                        f"'{op.fifo}' ({op.port}) but holds {len(h)}", loc=op.loc,
                        limit=f"at most the {len(h)} held", found=str(op.count),
                        fix="release only what was acquired")
                del h[:op.count]
                p.time += costs.release
                engine.release(ring.prod if op.port == "consume" else ring.cons, op.count, p.time)
            elif isinstance(op, Call):
                k = kdecl[op.kernel]
                if m.compute:
                    args: list[Any] = []
                    for a, param in zip(op.args, k.args):
                        if isinstance(a, BufferArg):
                            buf = views[a.value][a.index]
                            shape = param.type.shape
                            args.append(buf if buf.shape == shape else buf.reshape(shape))
                        else:
                            args.append(a.value)
                    try:
                        refs[op.kernel](*args)
                    except Exception as e:  # the user's reference (or a native build) failed
                        raise user_exception(e, f"running kernel '{k.symbol}' for {core.name} "
                                             f"(called at {op.loc})", k.loc) from e
                start = p.time
                p.time += k.cycles + costs.call
                p.busy += k.cycles + costs.call
                m.kernel_calls += 1
                m.ops += k.ops
                if engine.trace:
                    p.spans.append((start, p.time, k.symbol))
        pc += 1


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
    """Run the runtime sequence: the shim transfers and waits of :func:`shim_program`.

    Issuing a transfer takes the firmware ``shim_task_s`` (its BD, address patch and queue
    push); the transfer starts no earlier. Waits cost nothing beyond waiting.
    """
    engine = m.engine
    costs = m.costs
    pending: dict[str, list[Token]] = {}
    for op in shim_program(m.design):
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
