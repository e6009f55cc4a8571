"""Build a runnable model of a placed design: buffers, locks, DMA processes, cores, runtime.

What it models (mlir-aie's objectfifo lowering,
``../shared/reference/mlir-aie/objectfifo-lowering__*``):

* each fifo endpoint on a core is a ring of buffers with a producer lock (starts at the number
  of buffers) and a consumer lock (starts at 0); a DMA channel moves whole elements between the
  ring and a stream, applying the endpoint's ``dims`` as an n-d address generator whose outermost
  dimension repeats until the element is done;
* a memtile link is a ring of parent-sized buffers with one lock pair per part: a split's input
  DMA fills the parts of each buffer in order and each output DMA sends its part; a join mirrors it;
  a forward is a split of one part, its buffers as large as the larger element (the stream
  regroups elements when the two sizes differ);
* a repeated fifo's sender (``repeat``, mlir-aie's ``repeat_count``) sends each part of each
  buffer that many times in a row, each a transfer of its own, and frees it after the last: a
  forward that regroups repeats its larger element, the memtile's buffer;
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
  earlier event has run, and reading a slot nothing has written yet is a :class:`SimFault`;
* each core's copy of a core-local buffer starts the run holding its initial value (the run is
  the first after the design's load), and kernels read and write it in place, call after call;
* the runtime runs its sequence once, or once per host-array set of ``later`` after that,
  back to back on one timeline (:func:`~aiedsl.sim.runtime.run_runtime`), and each core runs
  its program again as soon as it ends (:func:`~aiedsl.sim.core.run_core`): a later invocation
  finds the barrier locks, rtp slots, locals and cores where the one before left them, as on
  the NPU, where only the load sets them.

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

from functools import partial
from typing import Any

import numpy as np

from aiedsl.dtypes import dtype as lookup_dtype, unwritten
from aiedsl.ir.design import Design
from aiedsl.ir.fifos import Endpoint, Fifo, Link
from aiedsl.ir.types import dims_index
from aiedsl.place.objectfifo import lower
from aiedsl.sim.core import run_core
from aiedsl.sim.dma import Receive, Send
from aiedsl.sim.engine import Engine
from aiedsl.sim.processes import Chunk, Conn, Lock, Port, Proc, WorkQueue
from aiedsl.sim.patterns import dims_gather
from aiedsl.sim.runtime import run_runtime
from aiedsl.sim.shim_dma import shim_drain, shim_fill
from aiedsl.sim.state import (
    CascadeLink, Costs, Dram, DramPort, Machine, Ring, RtpMemory, SimFault,
    initial_local,
)
from aiedsl.targets import TargetModel
from aiedsl.targets.model import TileKind

__all__ = ["Machine", "SimFault", "build_machine"]


def build_machine(d: Design, target: TargetModel, host: dict[str, np.ndarray],
                  kernels: dict[str, Any], trace: bool = False, compute: bool = True,
                  clock_hz: float | None = None,
                  later: list[dict[str, np.ndarray]] | None = None) -> Machine:
    """Model placed design ``d`` on ``target`` over host arrays ``host`` (modified in place by
    drains); cycles count ``clock_hz`` (the target's clock by default). ``later``: the host
    arrays of each further invocation, run after the first on the same machine."""
    clock = clock_hz or target.clock_hz
    tm = target.timing
    engine = Engine(trace)
    dram = Dram(DramPort(tm.dram_read_bytes_per_s / clock),
                DramPort(tm.dram_write_bytes_per_s / clock))
    m = Machine(d, target, engine, host, dram, Costs.of(tm, clock), clock, compute=compute,
                invocations=1 + len(later or []), hosts=list(later or []))

    def rate(*ends: TileKind) -> float:
        # A stream runs at its slowest DMA channel (and never faster than a stream port).
        return float(min(target.stream_bytes_per_cycle, *(tm.dma_bytes_per_cycle[k]
                                                          for k in ends)))
    ends = lower(d, target)  # how many buffers each end has, as mlir-aie's lowering gives them
    links_in = {n: link for link in d.links for n in link.srcs}
    links_out = {n: link for link in d.links for n in link.dsts}
    rings: dict[tuple[str, str, str], Ring] = {}

    shared = d.physical.shared if d.physical else {}
    for f in d.fifos:
        np_dtype = np.dtype(lookup_dtype(f.elem.dtype).numpy)
        if f.name in shared:  # neighbours share the buffers: the cores' locks are the only sync
            ring = _ring(f"{f.name}@{shared[f.name]}", f.producer.depth, f.elem.shape, np_dtype)
            rings[(f.name, "produce", _core_of(f.producer))] = ring
            rings[(f.name, "consume", _core_of(f.consumers[0]))] = ring
            continue
        sides = [f.producer.tile_kind, *(c.tile_kind for c in f.consumers)]
        conn = m.conns[f.name] = Conn(f.name, rate(*sides))
        # receivers first, so every port exists before the sender can send
        for ci, c in enumerate(f.consumers):
            port = conn.port(f"{f.name}->{c.label()}")
            if c.kind == "core":
                nbuf = ends.end(f.name, "consume", ci).size
                ring = _ring(f"{f.name}@{c.core}", nbuf, f.elem.shape, np_dtype)
                ring.fills = [None] * nbuf
                rings[(f.name, "consume", _core_of(c))] = ring
                p = Proc(f"dma {c.core} <- {f.name}", "s2mm", info={
                    "fifo": f.name, "tile": c.tile, "core": c.core, "ring": ring})
                idx = dims_index(c.dims, f.elem.numel)
                if idx is None:
                    ring.pending = [None] * nbuf
                engine.spawn_step(p, Receive(
                    engine, p, ring.bufs, [(0, f.elem.numel)], [ring.prod], [ring.cons], port,
                    idx, fills=ring.fills,
                    pending=None if ring.pending is None else [ring.pending]).step)
                ring.cons.releaser = p
                port_owner(port, p)
            elif c.kind == "shim":
                q = m.drain_queues[f.name] = WorkQueue(f.name)
                p = engine.spawn(Proc(f"shim {c.tile} <- {f.name}", "s2mm", info={
                    "fifo": f.name, "tile": c.tile, "shim": True, "queue": q}),
                    partial(shim_drain, engine, m, q=q, port=port, nbytes=f.elem.nbytes,
                            np_dtype=np_dtype))
                m.drain_procs[f.name] = p
                port_owner(port, p)
        if f.producer.kind == "core":
            core = _core_of(f.producer)
            nbuf = ends.end(f.name, "produce").size
            ring = _ring(f"{f.name}@{core}", nbuf, f.elem.shape, np_dtype)
            rings[(f.name, "produce", core)] = ring
            p = Proc(f"dma {core} -> {f.name}", "mm2s", info={
                "fifo": f.name, "tile": f.producer.tile, "core": core, "ring": ring})
            engine.spawn_step(p, Send(
                engine, p, ring.bufs, [(0, f.elem.numel)], [ring.prod], [ring.cons], conn,
                [dims_gather(f.producer.dims, f.elem.numel, np_dtype)],
                repeat=f.repeat).step)
            ring.prod.releaser = p
            conn.sender = p
            p.info["conn"] = conn
        elif f.producer.kind == "shim":
            q = m.fill_queues[f.name] = WorkQueue(f.name)
            conn.sender = m.fill_procs[f.name] = engine.spawn(
                Proc(f"shim {f.producer.tile} -> {f.name}", "mm2s", info={
                    "fifo": f.name, "tile": f.producer.tile, "shim": True, "queue": q,
                    "conn": conn}),
                partial(shim_fill, engine, m, q=q, conn=conn, nbytes=f.elem.nbytes,
                        np_dtype=np_dtype))

    for link in d.links:
        src = d.fifo(link.srcs[0])
        end = ends.end(src.name, "consume",
                       next(i for i, c in enumerate(src.consumers) if c.is_link_end))
        # as many buffers as the end that creates the link's elements has: a split's input, a
        # join's output, a forward's bigger element's end (createObjectFifoElements)
        _build_link(m, link, len(ends.store_of[end.symbol].buffers), links_in, links_out)

    for r in d.rtps:
        m.rtps[r.name] = RtpMemory(r.name, r.core, [[] for _ in range(r.type.numel)])
    for lb in d.locals:  # one copy per core, as the design's load leaves it
        np_dtype = np.dtype(lookup_dtype(lb.type.dtype).numpy)
        for core in lb.cores:
            m.locals[(lb.name, core)] = initial_local(lb.init, lb.type.shape, np_dtype)
    for b in d.barriers:
        for core in b.cores:
            m.barrier_locks[(b.name, core)] = Lock(f"barrier {b.name}@{core}", b.init)
    _build_cascades(m, target.cascade_fifo_words)
    for program in d.cores:
        p = Proc(program.name, "core", info={"tile": program.tile, "loc": program.loc})
        for (_, side, user), ring in rings.items():
            if user == program.name:
                (ring.prod if side == "consume" else ring.cons).releaser = p
        m.cores[program.name] = engine.spawn(
            p, partial(run_core, m, core=program, rings=rings, kernels=kernels))
    for cascade in {id(v): v for v in m.cascades.values()}.values():
        cascade.data.releaser = m.cores[cascade.src]
        cascade.taken.releaser = m.cores[cascade.dst]
    m.runtime = engine.spawn(Proc("runtime", "runtime", info={"loc": d.loc}),
                             lambda p: run_runtime(m, p))
    for lock in m.barrier_locks.values():
        lock.releaser = m.runtime  # only the runtime sets a barrier
    return m


def _build_cascades(m: Machine, room: int) -> None:
    """Each cascade link: a stream between two neighbours holding ``room`` words untaken."""
    for cas in m.design.cascades:
        link = CascadeLink(cas.src, cas.dst, room,
                           Lock(f"cascade {cas.src} -> {cas.dst}: words put", 0),
                           Lock(f"cascade {cas.src} -> {cas.dst}: words taken", 0))
        m.cascades[(cas.src, "out")] = link
        m.cascades[(cas.dst, "in")] = link


def port_owner(port: Port, p: Proc) -> None:
    """Remember which process receives on ``port`` (explanations follow it)."""
    port.owner = p


def _core_of(e: Endpoint) -> str:
    """The core of a core endpoint (every core endpoint names one)."""
    assert e.core is not None, f"a {e.kind} endpoint has no core"
    return e.core


def _ring(name: str, depth: int, shape: tuple[int, ...], np_dtype: np.dtype) -> Ring:
    return Ring(name, unwritten((depth, *shape), np_dtype), Lock(f"{name}.prod", depth),
                Lock(f"{name}.cons", 0))


def _build_link(m: Machine, link: Link, depth: int, links_in: dict[str, Link],
                links_out: dict[str, Link]) -> None:
    d, engine = m.design, m.engine
    srcs = [d.fifo(n) for n in link.srcs]
    dsts = [d.fifo(n) for n in link.dsts]
    np_dtype = np.dtype(lookup_dtype(srcs[0].elem.dtype).numpy)
    if link.kind == "forward":
        size = max(srcs[0].elem.numel, dsts[0].elem.numel)
        parts = [(0, size)]
    elif link.kind == "split":
        size = srcs[0].elem.numel
        parts = [(off, f.elem.numel) for off, f in zip(link.offsets, dsts)]
    else:
        size = dsts[0].elem.numel
        parts = [(off, f.elem.numel) for off, f in zip(link.offsets, srcs)]
    bufs = unwritten((depth, size), np_dtype)
    tag = f"{'memtile' if link.via == 'memtile' else 'core tile'} {link.tile} {link.kind}"
    prod = [Lock(f"{tag}.part{i}.prod", depth) for i in range(len(parts))]
    cons = [Lock(f"{tag}.part{i}.cons", 0) for i in range(len(parts))]
    info = {"tile": link.tile, "link": link, "loc": link.loc}

    def port_for(f: Fifo) -> Port:
        conn = m.conns[f.name]
        return next(pt for pt, c in zip(conn.ports, f.consumers) if c.is_link_end)

    # Nothing but the link's senders reads its buffers: what a receiver gets whole waits
    # pending, per part and buffer, and its sender sends it from there (see sim/dma.py).
    pending: list[list[np.ndarray | Chunk | None]] = [[None] * depth for _ in parts]
    if link.kind == "join":
        for i, f in enumerate(srcs):
            p = Proc(f"{tag} <- {f.name}", "s2mm", info={**info, "fifo": f.name})
            engine.spawn_step(p, Receive(engine, p, bufs, [parts[i]], [prod[i]], [cons[i]],
                                         port_for(f), None, pending=[pending[i]]).step)
            cons[i].releaser = p
            port_owner(port_for(f), p)
        out = dsts[0]
        p = Proc(f"{tag} -> {out.name}", "mm2s", info={
            **info, "fifo": out.name, "conn": m.conns[out.name]})
        # one BD per part, of the part's length (mlir-aie's createMemTileDMA): the layout
        # applies to each part on its own, and parts may differ in size
        engine.spawn_step(p, Send(engine, p, bufs, parts, prod, cons, m.conns[out.name],
                                  [dims_gather(out.producer.dims, n, np_dtype) for _, n in parts],
                                  [dims_index(out.producer.dims, n) for _, n in parts],
                                  pending, repeat=out.repeat).step)
        m.conns[out.name].sender = p
        for lk in prod:
            lk.releaser = p
        return
    src = srcs[0]
    p = Proc(f"{tag} <- {src.name}", "s2mm", info={**info, "fifo": src.name})
    # a split's input may be written with dims_from_stream: each part's BD from its offset
    dims = next(c.dims for c in src.consumers if c.is_link_end)
    part_idx = [dims_index(dims, n) for _, n in parts] if dims else None
    engine.spawn_step(p, Receive(engine, p, bufs, parts, prod, cons, port_for(src), None,
                                 part_idx, pending=pending).step)
    port_owner(port_for(src), p)
    for lk in cons:
        lk.releaser = p
    for i, f in enumerate(dsts):
        q = Proc(f"{tag} -> {f.name}", "mm2s", info={
            **info, "fifo": f.name, "conn": m.conns[f.name]})
        engine.spawn_step(q, Send(engine, q, bufs, [parts[i]], [prod[i]], [cons[i]],
                                  m.conns[f.name],
                                  [dims_gather(f.producer.dims, parts[i][1], np_dtype)],
                                  [dims_index(f.producer.dims, parts[i][1])],
                                  [pending[i]], repeat=f.repeat).step)
        m.conns[f.name].sender = q
        prod[i].releaser = q
