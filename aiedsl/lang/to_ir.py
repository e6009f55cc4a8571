"""The design IR made from a finished trace: channels become links, runtime transfers find the
fifos the shim talks to, every fifo gets its endpoints, and what was never used is refused.
"""

from __future__ import annotations

from aiedsl.errors import DesignError
from aiedsl.ir.cores import Barrier, Cascade, Herd, Local, Rtp
from aiedsl.ir.design import Design
from aiedsl.ir.fifos import Endpoint, Fifo, Link
from aiedsl.ir.loc import Loc
from aiedsl.ir.runtime import HostTensor, RtpWrite, SetBarrier, Transfer, Wait
from aiedsl.ir.types import Dim
from aiedsl.lang.link_chains import check_links_once
from aiedsl.lang.local import LocalRef
from aiedsl.lang.rtp import BarrierRef, RtpRef
from aiedsl.source_loc import assigned_at
from aiedsl.lang.records import (
    EndpointUse, FifoRecord, LinkRecord, RtpWriteRecord, SetBarrierRecord,
)
from aiedsl.lang.trace import DesignTrace


def to_ir(trace: DesignTrace, defines: dict[str, int | float | str]) -> Design:
    """The :class:`Design` of a finished trace: channels and runtime transfers resolved.

    ``defines`` are the design parameters the trace used (the IR records them).
    """
    for ch in trace.channels:
        ch.materialize()
    check_links_once(trace.links, trace.runtime)
    runtime_ops = _resolve_runtime(trace)
    for ch in trace.channels:
        ch.check_broadcast()
    fifos = [_fifo_ir(f, trace) for f in trace.fifos.values()]
    links = [Link(kind=r.kind, srcs=tuple(f.name for f in r.srcs),
                  dsts=tuple(f.name for f in r.dsts), offsets=tuple(r.offsets),
                  via="core" if r.end == "coretile" else "memtile", tile=r.pin,
                  loc=r.loc) for r in trace.links]
    tensors = [HostTensor(name=t.name, index=t.index, type=t.type, loc=t.loc)
               for t in trace.tensors]
    return Design(
        name=trace.name, device=trace.target.name, loc=trace.loc, defines=defines,
        tensors=tuple(tensors), fifos=tuple(fifos), links=tuple(links),
        herds=tuple(trace.herds), cores=tuple(trace.cores),
        kernels=tuple(trace.kernels.values()), runtime=tuple(runtime_ops),
        rtps=tuple(_rtp_ir(trace, r) for r in trace.rtps.values()),
        barriers=tuple(_barrier_ir(trace, b) for b in trace.barriers.values()),
        locals=tuple(_local_ir(trace, b) for b in trace.locals.values()),
        cascades=tuple(c for h in trace.herds for c in herd_cascades(h)))


def _barrier_ir(trace: DesignTrace, b: BarrierRef) -> Barrier:
    if not b.cores:
        raise DesignError(
            "barrier unused", f"barrier '{b.name}' is never waited on by a core",
            loc=b.loc, limit="a barrier is a lock in each core that waits on it",
            fix="call wait_for_value on it in a core function, or remove it")
    order = {c.name: i for i, c in enumerate(trace.cores)}
    return Barrier(name=b.name, init=b.init, cores=tuple(sorted(b.cores, key=order.__getitem__)),
                   loc=b.loc)


def _rtp_ir(trace: DesignTrace, r: RtpRef) -> Rtp:
    if r.core is None:
        raise DesignError(
            "rtp unused", f"rtp '{r.name}' is never read by a core", loc=r.loc,
            limit="an rtp lives in the memory of the core that reads it",
            fix="read it in a core function (thr[0]) and pass it to a kernel call, or "
            "remove it")
    # one MLIR symbol table holds fifos, kernels and buffers: a shared name would not parse
    for what, names in (("fifo", trace.fifos), ("kernel", trace.kernels)):
        if r.name in names:
            raise DesignError(
                "name", f"rtp '{r.name}' has the name of a {what}", loc=r.loc,
                limit="fifos, kernels and rtps share one MLIR symbol table",
                found=r.name, fix="rename the rtp")
    return Rtp(name=r.name, type=r.type, core=r.core, loc=r.loc, read_at=r.read_at or r.loc)


def _local_ir(trace: DesignTrace, b: LocalRef) -> Local:
    if not b.cores:
        raise DesignError(
            "local unused", f"local '{b.name}' is never passed to a kernel", loc=b.loc,
            limit="a local is a buffer in the memory of each core that passes it to a kernel",
            fix="pass it to a kernel call in a core function, or remove it")
    for what, names in (("fifo", trace.fifos), ("kernel", trace.kernels)):
        if b.name in names:
            raise DesignError(
                "name", f"local '{b.name}' has the name of a {what}", loc=b.loc,
                limit="fifos, kernels, rtps and locals share one MLIR symbol table",
                found=b.name, fix="rename the local")
    order = {c.name: i for i, c in enumerate(trace.cores)}
    return Local(name=b.name, type=b.type, init=b.init,
                 cores=tuple(sorted(b.cores, key=order.__getitem__)), loc=b.loc)


def _resolve_runtime(trace: DesignTrace) -> list[Transfer | Wait | RtpWrite | SetBarrier]:
    ops: list[Transfer | Wait | RtpWrite | SetBarrier] = []
    if trace.runtime is None:
        return ops
    for rec in trace.runtime:
        if isinstance(rec, RtpWriteRecord):
            ops.append(RtpWrite(rtp=rec.rtp, index=rec.index, value=rec.value, loc=rec.loc))
            continue
        if isinstance(rec, SetBarrierRecord):
            ops.append(SetBarrier(barrier=rec.barrier, value=rec.value, loc=rec.loc))
            continue
        f = _host_end(trace, rec.fifo, rec.waits_for if rec.op == "wait" else rec.op, rec.loc,
                      rec.tensor.name if rec.tensor is not None else "...")
        if rec.op == "wait":
            ops.append(Wait(fifo=f.name, loc=rec.loc, by=rec.by))
            continue
        use = EndpointUse("shim", None, rec.loc, f.shim_pin)
        if rec.op == "fill":
            trace.set_producer(f, use)
        else:
            trace.add_consumer(f, use)
        assert rec.tensor is not None and rec.pattern is not None
        ops.append(Transfer(op=rec.op, fifo=f.name, tensor=rec.tensor.name,
                            pattern=rec.pattern, wait=rec.wait, loc=rec.loc))
    return ops


def _host_end(trace: DesignTrace, f: FifoRecord, op: str, loc: Loc,
              tensor: str = "...") -> FifoRecord:
    """Follow forward links from ``f`` to the fifo the shim talks to. ``tensor`` is the host
    tensor of the transfer, for a fix's example."""
    inbound = op == "fill"
    given = f
    while True:
        step = None
        for rec in trace.links:
            if inbound and f in rec.dsts:
                step = rec.srcs[0] if rec.kind == "forward" else None
                if step is None:
                    raise _wrong_end(trace, "fill", given, f, rec, tensor, loc)
            if not inbound and f in rec.srcs:
                step = rec.dsts[0] if rec.kind == "forward" else None
                if step is None:
                    raise _wrong_end(trace, "drain", given, f, rec, tensor, loc)
        if step is None:
            return f
        f = step


def _wrong_end(trace: DesignTrace, op: str, fifo: FifoRecord, f: FifoRecord, rec: LinkRecord,
               tensor: str, loc: Loc) -> DesignError:
    """The error of an ``rt.fill`` or ``rt.drain`` of ``fifo`` (which leads to ``f``), a fifo
    of split or join ``rec`` that the host does not talk to: a part (the host moves the whole),
    or the end that flows the other way (a join's output is drained, a split's input filled)."""
    given = trace.written(fifo)  # as the design wrote it: c[:], a[0], of_out
    whole = trace.written((rec.srcs if rec.kind == "split" else rec.dsts)[0])
    end = "input" if rec.kind == "split" else "output"
    if (rec.kind == "split") == (op == "fill"):  # a split's part filled, a join's drained
        what = f"one part of a {rec.kind} at a memtile"
        limit = ("the host fills a split's input, which the memtile splits into its parts"
                 if op == "fill" else "the host drains a join's output, which the memtile "
                 "joins from its parts")
        fix = f"{op} the {end} of the {rec.kind}: rt.{op}({whole}, {tensor})"
    else:  # a join's output filled, a split's input drained: it flows the other way
        other = "drain" if op == "fill" else "fill"
        what = f"the {end} of a {rec.kind} at a memtile"
        limit = ("a join's parts are produced by cores and joined at the memtile into its "
                 "output, which the host drains" if rec.kind == "join" else
                 "the host fills a split's input, which the memtile splits into parts that "
                 "cores consume")
        fix = f"a {rec.kind}'s host end is {other}ed: rt.{other}({given}, {tensor})"
    named = f"'{f.name}'" if given == f.name else f"{given} ('{f.name}')"
    return DesignError(
        "runtime", f"rt.{op} of {named}, {what}", loc=loc, limit=limit,
        found=f"rt.{op}({given}, {tensor})", related=[(f"the {rec.kind}", rec.loc)], fix=fix)


def _join_part_consumed(f: FifoRecord, trace: DesignTrace) -> None:
    """Refuse a part of a join that has no producer because a core consumes it (``c[y]
    .consume()`` on a channel with ``join=``): a join's parts flow from cores to the host."""
    link = next((r for r in trace.links if r.kind == "join" and f in r.srcs), None)
    cores = [c for c in f.consumers if c.kind == "core"]
    if link is None or not cores:
        return
    part, whole = trace.written(f), trace.written(link.dsts[0])
    named = f"'{f.name}'" if part == f.name else f"{part} ('{f.name}')"
    # the index a core function writes (c[y]), not this core's own (c[0])
    letters = "y" if len(f.index) == 1 else "x, y" if len(f.index) == 2 else "ijkl"[:len(f.index)]
    written = f"{f.channel}[{letters}]" if f.channel is not None else part
    raise DesignError(
        "fifo producer", f"fifo {named}, one part of a join, has no producer: "
        f"{cores[0].core} consumes it", loc=cores[0].loc,
        limit="a join's parts are produced by cores; the memtile joins them into its output, "
        "which the host drains (rt.drain)", found=f"{cores[0].core} consumes {part}",
        related=[("the join", link.loc)],
        fix=f"produce it in the core, `with {written}.produce() as e:`, and drain the joined "
        f"output, rt.drain({whole}, ...); to bring data from the host into cores, use a "
        "channel with split= (or none), filled by rt.fill")


def _consumed_unproduced(f: FifoRecord, trace: DesignTrace) -> None:
    """Refuse a fifo nothing produces that a core consumes, at the core's acquire: with the
    runtime draining it too, ``consume()`` was written where ``produce()`` was meant (both ends
    consume); else it is a fill left out. Said at the fifo's line it named neither."""
    cores = [c for c in f.consumers if c.kind == "core"]
    if not cores:
        return
    core = cores[0]
    written = trace.written(f)
    drains = [c for c in f.consumers if c.kind == "shim"]
    if drains:
        raise DesignError(
            "fifo producer", f"fifo '{f.name}' is consumed at both ends and produced by none: "
            f"{core.core} consumes it and the runtime drains it", loc=core.loc,
            limit="a fifo has one producer: a core (produce) or the runtime (rt.fill)",
            found=f"{core.core}: {written}.consume(); the runtime: rt.drain",
            related=[("the drain", drains[0].loc), (f"fifo '{f.name}'", f.loc)],
            fix=f"produce it in {core.core}, `with {written}.produce() as e:`, for the runtime "
                "to drain what the core writes")
    raise DesignError(
        "fifo producer", f"fifo '{f.name}' has no producer: {core.core} consumes it, and "
        "nothing fills it", loc=f.loc, related=[(f"{core.core} consumes it", core.loc)],
        limit="a fifo a core consumes is filled by the runtime (rt.fill) or produced by a core",
        found="no rt.fill and no produce()",
        fix=f"fill it in the runtime sequence, rt.fill({written}, <host tensor>), or produce it "
            "in a core")


def _link_output_bypassed(f: FifoRecord, trace: DesignTrace) -> None:
    """Refuse a link's output that nothing reads because a core reads the link's input instead
    (``a.consume()`` where ``a1 = a.forward(...)`` was meant): said at the core's acquire,
    which is the mistake, rather than as an output with no consumer."""
    link = next((r for r in trace.links if f in r.dsts), None)
    if link is None:
        return
    for src in link.srcs:
        cores = [c for c in src.consumers if c.kind == "core"]
        if not cores:
            continue
        out, inp = trace.written(f), trace.written(src)
        # the variable the link's line assigns: a forward's output, or a split's list of them
        variable = assigned_at(link.loc, link.kind) if out == f.name else None
        if variable is not None and link.kind == "split":
            variable = f"{variable}[{link.dsts.index(f)}]"
        named = f"'{f.name}'" if out == f.name else f"{out} ('{f.name}')"
        out = variable or out
        raise DesignError(
            "fifo consumer", f"{cores[0].core} consumes '{src.name}', the input of the memtile "
            f"{link.kind} whose output {named} nothing consumes", loc=cores[0].loc,
            limit=f"a fifo a memtile {link.kind} reads goes to the memtile; cores read the "
            f"{link.kind}'s output", found=f"{cores[0].core} consumes {inp}",
            related=[(f"the {link.kind}", link.loc)],
            fix=f"consume {out} in the core (`with {out}.consume() as e:`), or remove the "
                f"{link.kind} if the core is to read '{src.name}' straight from the host")


def _fifo_ir(f: FifoRecord, trace: DesignTrace) -> Fifo:
    if f.producer is None and not f.consumers:
        raise DesignError(
            "fifo unused", f"fifo '{f.name}' is never used: it has no producer and no "
            "consumer", loc=f.loc, fix="remove it, or fill it (rt.fill) or produce it in a "
            "core, and drain it (rt.drain) or consume it in a core")
    if f.producer is None:
        _join_part_consumed(f, trace)
        _consumed_unproduced(f, trace)
    if f.producer is not None and not f.consumers:
        _link_output_bypassed(f, trace)
    if f.producer is not None and not f.consumers and f.channel is not None:
        # one part of a channel: the user wrote the channel's shape, not this fifo, so neither
        # draining nor removing it is theirs to do (an MLIR-AIR user's tester)
        part = trace.written(f)
        raise DesignError(
            "fifo consumer", f"{part} of channel '{f.channel}' (fifo '{f.name}') has no "
            f"consumer: no core consumes it and the runtime does not drain it", loc=f.loc,
            limit="every part of a channel goes somewhere: its shape makes one fifo per index",
            found=f"nothing takes {part}",
            fix=f"consume {part} in a core (`with {part}.consume() as e:`; a herd's core "
                f"function reaches every index of the channel's shape when the two agree), or "
                f"give channel '{f.channel}' the shape of the cores that consume it")
    if f.producer is None or not f.consumers:
        missing = "producer" if f.producer is None else "consumer"
        hint = ("fill it in the runtime sequence (rt.fill), or produce it in a core"
                if missing == "producer" else
                "drain it in the runtime sequence (rt.drain), or consume it in a core")
        raise DesignError(
            f"fifo {missing}", f"fifo '{f.name}' has no {missing}", loc=f.loc,
            fix=hint + "; remove it if it is not needed")
    looped = [c for c in f.consumers if c.kind == "shim"]
    if f.shim_pin is not None and f.producer.kind != "shim" and not looped:
        col = f.shim_pin[0]
        whose = f"channel '{f.channel}'" if f.channel else f"fifo '{f.name}'"
        raise DesignError(
            "placement", f"{whose} pins its host end to shim({col}), but the runtime neither "
            f"fills nor drains '{f.name}'", loc=f.loc, found=f"shim=shim({col})",
            fix="leave shim= out (a fifo between cores or tiles has no host end), or fill or "
            "drain it in the runtime sequence")
    if f.producer.kind == "shim" and looped:
        # both ends would be the same shim allocation, an MM2S and an S2MM channel under one
        # symbol (mlir-aie names a fifo's shim DMA allocation after the fifo): it cannot lower
        others = [_end_name(c) for c in f.consumers if c.kind != "shim"]
        if others:
            # a core consumes it too: the drain is most likely of the wrong fifo (rt.drain(xin,
            # y) for rt.drain(yout, y)), which one produced and nobody takes would say
            undrained = [g.name for g in trace.fifos.values()
                         if g.producer is not None and g.producer.kind != "shim"
                         and not g.consumers]
            raise DesignError(
                "fifo ends", f"fifo '{f.name}' is filled by the runtime and consumed by "
                f"{' and '.join(others)}, and the runtime drains it too: a fifo the runtime "
                "fills cannot also be drained by it", loc=looped[0].loc,
                related=[("the fill", f.producer.loc)],
                limit="one host end per fifo: the runtime fills it or drains it",
                found=f"shim -> {', '.join(others)} and shim",
                fix=(f"drain the fifo that carries the result: "
                     f"{' or '.join(repr(n) for n in undrained)}, which a core produces and "
                     "nothing takes, " if undrained else
                     "drain the fifo that carries the result, ") + f"not '{f.name}'")
        raise DesignError(
            "fifo ends", f"fifo '{f.name}' is filled and drained by the runtime with nothing "
            "between: both of its ends are the shim", loc=looped[0].loc,
            related=[("the fill", f.producer.loc)],
            limit="a fifo runs between a shim and a core, memtile or core tile, or between "
            "those", found="shim -> shim",
            fix=f"to copy host data through the NPU, forward it through a memtile: "
                f"b = {f.name}.forward(name=\"b\"), and drain b")

    def cons_depth(who: str) -> int:
        if isinstance(f.consumer_depth, dict) and who in f.consumer_depth:
            return f.consumer_depth[who]
        if who == "memtile" and f.memtile_depth is not None:
            return f.memtile_depth
        if isinstance(f.consumer_depth, dict):
            return f.depth
        return f.depth if f.consumer_depth is None else f.consumer_depth

    known = {_end_name(c) for c in f.consumers}
    for what, per in (("consumer_depth", f.consumer_depth),
                      ("dims_from_stream", f.dims_per_consumer)):
        stray = sorted(set(per) - known) if isinstance(per, dict) else []
        if stray:
            raise DesignError(
                "fifo depth" if what == "consumer_depth" else "dma dims",
                f"{what} of fifo '{f.name}' names {', '.join(stray)}, which do not consume "
                "it", loc=f.loc, found=", ".join(stray),
                fix="key it by the consuming core's name (e.g. 'core[0,1]') or 'memtile'/"
                "'shim'; consumers: " + ", ".join(sorted(known)))

    def cons_dims(who: str) -> tuple[Dim, ...]:
        if f.dims_per_consumer is not None:
            return f.dims_per_consumer.get(who, ())
        return f.dims_from_stream

    producer = Endpoint(kind=f.producer.kind, core=f.producer.core, tile=f.producer.pin,
                        depth=f.depth, dims=f.dims_to_stream, loc=f.producer.loc)
    consumers = tuple(
        Endpoint(kind=c.kind, core=c.core, tile=c.pin,
                 depth=cons_depth(_end_name(c)), dims=cons_dims(_end_name(c)),
                 loc=c.loc)  # checks reject them off a core
        for c in f.consumers)
    return Fifo(name=f.name, elem=f.elem, producer=producer, consumers=consumers,
                loc=f.loc, channel=f.channel, index=f.index, repeat=f.repeat,
                depths_given=f.consumer_depth is not None)


def _end_name(e: EndpointUse) -> str:
    """How ``consumer_depth`` and per-consumer dims name an endpoint: a core by its name, any
    other end by its kind."""
    return e.core if e.kind == "core" and e.core else e.kind


def herd_cascades(h: Herd) -> list[Cascade]:
    """The cascade links of herd ``h``: each core to its neighbour in ``h.cascade``."""
    if h.cascade is None:
        return []
    dx, dy = {"east": (1, 0), "west": (-1, 0), "north": (0, 1), "south": (0, -1)}[h.cascade]
    out = []
    for y in range(h.rows):
        for x in range(h.cols):
            if 0 <= x + dx < h.cols and 0 <= y + dy < h.rows:
                out.append(Cascade(src=f"{h.name}[{x},{y}]", dst=f"{h.name}[{x + dx},{y + dy}]",
                                   loc=h.loc))
    # in chain order (each link after the one feeding it), so reports read down the chain
    def order(c: Cascade) -> tuple[int, int]:
        x, y = _index(c.src)
        return (y, x * dx) if dx else (x, y * dy)
    return sorted(out, key=order)


def _index(core: str) -> tuple[int, int]:
    x, y = core[core.rindex("[") + 1:-1].split(",")
    return int(x), int(y)