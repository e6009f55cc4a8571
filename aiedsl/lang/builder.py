"""The design builder: collects what a design function declares, then produces the IR."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aiedsl.errors import DesignError
from aiedsl.ir import (
    Barrier, Cascade, Core, Design, Dim, Endpoint, Fifo, Herd, HostTensor, Kernel, Link, Loc, Rtp, RtpWrite,
    SetBarrier, TensorType, Transfer, Wait,
)
from aiedsl.lang.channel import Channel
from aiedsl.lang.fifo import DimsSpec, EndpointUse, ObjectFifo, to_dims
from aiedsl.lang.names import check_name
from aiedsl.lang.placement import TilePin
from aiedsl.lang.runtime import RtpWriteRecord, RuntimeBuilder, SetBarrierRecord
from aiedsl.lang.tensor import HostTensorRef
from aiedsl.targets import TargetModel


@dataclass
class _LinkRec:
    kind: str
    srcs: list[ObjectFifo]
    dsts: list[ObjectFifo]
    offsets: list[int]
    pin: tuple[int, int] | None
    loc: Loc
    end: str = "memtile"


@dataclass
class DesignBuilder:
    """Mutable state of one design while its function is traced."""

    name: str
    target: TargetModel
    loc: Loc
    tensors: list[HostTensorRef] = field(default_factory=list)
    fifos: dict[str, ObjectFifo] = field(default_factory=dict)
    links: list[_LinkRec] = field(default_factory=list)
    channels: list[Channel] = field(default_factory=list)
    herds: list[Herd] = field(default_factory=list)
    cores: list[Core] = field(default_factory=list)
    kernels: dict[str, Kernel] = field(default_factory=dict)
    kernel_objs: dict[str, Any] = field(default_factory=dict)
    runtime: RuntimeBuilder | None = None
    runtime_loc: Loc | None = None
    rtps: dict[str, Any] = field(default_factory=dict)
    """Runtime-parameter buffers by name (:class:`aiedsl.lang.rtp.RtpRef`)."""
    barriers: dict[str, Any] = field(default_factory=dict)
    """Runtime barriers by name (:class:`aiedsl.lang.rtp.BarrierRef`)."""
    _names: dict[str, int] = field(default_factory=dict)

    # -- declarations ----------------------------------------------------------------------------
    def fresh_name(self, stem: str) -> str:
        """A fifo name not used yet, from ``stem``."""
        n = self._names.get(stem, 0)
        self._names[stem] = n + 1
        name = stem if n == 0 else f"{stem}{n}"
        return name if name not in self.fifos else self.fresh_name(stem)

    def new_fifo(self, elem: TensorType, *, depth: int, name: str | None, loc: Loc,
                 dims_to_stream: DimsSpec = None,
                 dims_from_stream: DimsSpec | dict[str, DimsSpec] = None,
                 consumer_depth: int | dict[str, int] | None = None) -> ObjectFifo:
        """Register a fifo; its endpoints come from later uses."""
        if not isinstance(elem, TensorType):
            raise DesignError("fifo", f"fifo element type {elem!r} is not a Tensor[...] type",
                              loc=loc, fix="write e.g. fifo(Tensor[1024, i16])")
        name = check_name(name or self.fresh_name("of"), "fifo name", loc)
        if name in self.fifos:
            raise DesignError("fifo", f"two fifos are named '{name}'", loc=loc,
                              related=[("the first", self.fifos[name].loc)],
                              fix="give each fifo its own name")
        if isinstance(consumer_depth, dict) and not all(
                isinstance(k, str) for k in consumer_depth):
            raise DesignError("fifo depth", f"fifo '{name}' has consumer_depth="
                              f"{consumer_depth!r}", loc=loc,
                              limit="a depth, or {consumer name: depth} with names such as "
                              "'core[0,1]', 'memtile' or 'shim'", found=repr(consumer_depth),
                              fix="key it by the consuming core's name, e.g. {'core[0,1]': 3}")
        per_end = consumer_depth.items() if isinstance(consumer_depth, dict) else [
            ("consumer_depth", consumer_depth)]
        self.check_depth(f"fifo '{name}'", "depth", depth, loc)
        for what, d in per_end:
            if d is not None:
                self.check_depth(f"fifo '{name}'", what, d, loc)
        per_consumer = None
        if isinstance(dims_from_stream, dict):
            if not all(isinstance(k, str) for k in dims_from_stream):
                raise DesignError(
                    "dma dims", f"fifo '{name}' has dims_from_stream={dims_from_stream!r}",
                    loc=loc, limit="dims, or {consumer name: dims} with names such as "
                    "'core[0,1]'", found=repr(dims_from_stream),
                    fix="key it by the consuming core's name, e.g. {'core[0,1]': [(16, 4)]}")
            per_consumer = {k: to_dims(v, f"dims_from_stream['{k}']", loc)
                            for k, v in dims_from_stream.items()}
            dims_from_stream = None
        f = ObjectFifo(self, name, elem, depth, loc,
                       dims_to_stream=to_dims(dims_to_stream, "dims_to_stream", loc),
                       dims_from_stream=to_dims(dims_from_stream, "dims_from_stream", loc),
                       dims_per_consumer=per_consumer, consumer_depth=consumer_depth)
        self.fifos[name] = f
        return f

    def check_depth(self, owner: str, what: str, d: object, loc: Loc) -> None:
        """A depth is an int from 1 to the largest lock value.

        The producer lock starts at the depth, and a lock counts to 63 (AIE2 lock values are 6
        bits: mlir-aie ``AIETargetModel::getMaxLockValue``).
        """
        top = self.target.max_lock_value
        if not isinstance(d, int) or isinstance(d, bool) or not 1 <= d <= top:
            raise DesignError("fifo depth", f"{owner} has {what}={d!r}", loc=loc,
                              limit=f"an integer from 1 to {top} (a lock starts at the depth "
                              f"and counts to {top})", found=repr(d),
                              fix="use 1 (single), 2 (double buffering) or a few more")

    def add_herd(self, h: Herd) -> None:
        """Register a herd (names are unique)."""
        for other in self.herds:
            if other.name == h.name:
                raise DesignError("herd", f"two herds are named '{h.name}'", loc=h.loc,
                                  related=[("the first", other.loc)],
                                  fix="give each herd its own name (name=...)")
        self.herds.append(h)

    def add_kernel(self, k: Kernel, obj: Any) -> None:
        """Register a kernel declaration (and its Python object); one per C symbol."""
        prev = self.kernels.get(k.symbol)
        if prev is not None and prev.model_copy(update={"loc": k.loc}) != k:
            raise DesignError("kernel", f"two different kernels use the symbol '{k.symbol}'",
                              loc=k.loc, related=[("the first", prev.loc)],
                              fix="put every shape parameter into the symbol name")
        self.kernels.setdefault(k.symbol, k)
        self.kernel_objs.setdefault(k.symbol, obj)

    def add_link(self, kind: str, srcs: list[ObjectFifo], dsts: list[ObjectFifo],
                 offsets: list[int], via: TilePin, loc: Loc) -> None:
        """Register a link and the memtile (or core tile) endpoints it gives its fifos."""
        if not all(isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in offsets):
            raise DesignError(f"{kind} offsets", f"{kind} offsets {list(offsets)!r}", loc=loc,
                              limit="element offsets: non-negative ints", found=repr(offsets),
                              fix="give one int offset per part, in elements of the parent")
        if not isinstance(via, TilePin) or via.kind not in ("memtile", "coretile"):
            raise DesignError("link", f"a {kind} goes through a memtile or a core tile, not "
                              f"{via!r}", loc=loc,
                              fix="use via=memtile, via=memtile(col) or (a forward) "
                              "via=coretile(col, row)")
        if via.kind == "coretile" and kind != "forward":
            # mlir-aie ObjectFifoLinkOp::verify: join and distribute need a memtile
            raise DesignError("link", f"a {kind} goes through a core tile", loc=loc,
                              limit="a core tile's DMA forwards 1 -> 1 only; splits and joins "
                              "go through a memtile (mlir-aie: join and distribute are "
                              "unavailable on compute or shim tiles)", found=repr(via),
                              fix="use via=memtile, or forward through the core tile and "
                              f"{kind} at a memtile")
        for f in srcs + dsts:
            for rec in self.links:
                if f in rec.srcs or f in rec.dsts:
                    raise DesignError(
                        "link", f"fifo '{f.name}' takes part in two links", loc=loc,
                        related=[("the first link", rec.loc)],
                        fix="a fifo joins at most one link (mlir-aie's rule): forward into a "
                        "new fifo instead")
        pin = via.coord(self.target.memtile_rows[0] if via.kind == "memtile"
                        else self.target.core_rows[0])
        end = "memtile" if via.kind == "memtile" else "coretile"
        self.links.append(_LinkRec(kind, srcs, dsts, offsets, pin, loc, end))
        for f in srcs:
            self._add_consumer(f, EndpointUse(end, None, loc, pin))
        for f in dsts:
            self._set_producer(f, EndpointUse(end, None, loc, pin))

    # -- endpoint inference ----------------------------------------------------------------------
    def use_core(self, f: ObjectFifo, port: str, core: str, loc: Loc) -> None:
        """Record that ``core`` uses ``f`` on ``port``."""
        if port == "produce":
            self._set_producer(f, EndpointUse("core", core, loc))
        else:
            self._add_consumer(f, EndpointUse("core", core, loc))

    def _set_producer(self, f: ObjectFifo, use: EndpointUse) -> None:
        p = f.producer
        if p is None:
            f.producer = use
        elif (p.kind, p.core) != (use.kind, use.core):
            raise DesignError(
                "fifo producer", f"fifo '{f.name}' has two producers: {_who(p)} and "
                f"{_who(use)}", loc=use.loc, related=[(f"{_who(p)} produces it here", p.loc)],
                fix="a fifo has exactly one producer: give each producer its own fifo (a "
                "channel index per core), or join them at a memtile")

    def _add_consumer(self, f: ObjectFifo, use: EndpointUse) -> None:
        for c in f.consumers:
            if (c.kind, c.core) == (use.kind, use.core):
                return  # another drain or acquire by the same endpoint
        f.consumers.append(use)

    # -- the IR ----------------------------------------------------------------------------------
    def finalize(self, defines: dict[str, int | float | str]) -> Design:
        """Resolve channels and runtime transfers and build the :class:`Design`."""
        for ch in self.channels:
            ch.materialize()
        runtime_ops = self._resolve_runtime()
        for ch in self.channels:
            ch.check_broadcast()
        fifos = [self._fifo_ir(f) for f in self.fifos.values()]
        links = [Link(kind=r.kind, srcs=tuple(f.name for f in r.srcs),
                      dsts=tuple(f.name for f in r.dsts), offsets=tuple(r.offsets),
                      via="core" if r.end == "coretile" else "memtile", tile=r.pin,
                      loc=r.loc) for r in self.links]
        tensors = [HostTensor(name=t.name, index=t.index, type=t.type, loc=t.loc)
                   for t in self.tensors]
        return Design(
            name=self.name, device=self.target.name, loc=self.loc, defines=defines,
            tensors=tuple(tensors), fifos=tuple(fifos), links=tuple(links),
            herds=tuple(self.herds), cores=tuple(self.cores),
            kernels=tuple(self.kernels.values()), runtime=tuple(runtime_ops),
            rtps=tuple(self._rtp_ir(r) for r in self.rtps.values()),
            barriers=tuple(self._barrier_ir(b) for b in self.barriers.values()),
            cascades=tuple(c for h in self.herds for c in _cascades(h)))

    def _barrier_ir(self, b: Any) -> Barrier:
        if not b.cores:
            raise DesignError(
                "barrier unused", f"barrier '{b.name}' is never waited on by a core",
                loc=b.loc, limit="a barrier is a lock in each core that waits on it",
                fix="call wait_for_value on it in a core function, or remove it")
        order = {c.name: i for i, c in enumerate(self.cores)}
        return Barrier(name=b.name, init=b.init, cores=tuple(sorted(b.cores, key=order.get)),
                       loc=b.loc)

    def _rtp_ir(self, r: Any) -> Rtp:
        if r.core is None:
            raise DesignError(
                "rtp unused", f"rtp '{r.name}' is never read by a core", loc=r.loc,
                limit="an rtp lives in the memory of the core that reads it",
                fix="read it in a core function (thr[0]) and pass it to a kernel call, or "
                "remove it")
        # one MLIR symbol table holds fifos, kernels and buffers: a shared name would not parse
        for what, names in (("fifo", self.fifos), ("kernel", self.kernels)):
            if r.name in names:
                raise DesignError(
                    "name", f"rtp '{r.name}' has the name of a {what}", loc=r.loc,
                    limit="fifos, kernels and rtps share one MLIR symbol table",
                    found=r.name, fix="rename the rtp")
        return Rtp(name=r.name, type=r.type, core=r.core, loc=r.loc, read_at=r.read_at)

    def _resolve_runtime(self) -> list[Transfer | Wait | RtpWrite | SetBarrier]:
        ops: list[Transfer | Wait | RtpWrite | SetBarrier] = []
        if self.runtime is None:
            return ops
        for rec in self.runtime.records:
            if isinstance(rec, RtpWriteRecord):
                ops.append(RtpWrite(rtp=rec.rtp, index=rec.index, value=rec.value, loc=rec.loc))
                continue
            if isinstance(rec, SetBarrierRecord):
                ops.append(SetBarrier(barrier=rec.barrier, value=rec.value, loc=rec.loc))
                continue
            f = self._host_end(rec.fifo, rec.op, rec.loc)
            if rec.op == "wait":
                ops.append(Wait(fifo=f.name, loc=rec.loc))
                continue
            use = EndpointUse("shim", None, rec.loc, f.shim_pin)
            if rec.op == "fill":
                self._set_producer(f, use)
            else:
                self._add_consumer(f, use)
            assert rec.tensor is not None and rec.pattern is not None
            ops.append(Transfer(op=rec.op, fifo=f.name, tensor=rec.tensor.name,
                                pattern=rec.pattern, wait=rec.wait, loc=rec.loc))
        return ops

    def _host_end(self, f: ObjectFifo, op: str, loc: Loc) -> ObjectFifo:
        """Follow forward links from ``f`` to the fifo the shim talks to."""
        inbound = op == "fill"  # waits only follow drains
        while True:
            step = None
            for rec in self.links:
                if inbound and f in rec.dsts:
                    step = rec.srcs[0] if rec.kind == "forward" else None
                    if step is None:
                        raise DesignError(
                            "runtime", f"rt.fill of '{f.name}', one part of a {rec.kind} at a "
                            "memtile", loc=loc, related=[(f"the {rec.kind}", rec.loc)],
                            fix="fill the fifo the parts come from (for a channel with split=, "
                            "index it with ':' on the split axis)")
                if not inbound and f in rec.srcs:
                    step = rec.dsts[0] if rec.kind == "forward" else None
                    if step is None:
                        raise DesignError(
                            "runtime", f"rt.drain of '{f.name}', one part of a {rec.kind} at a "
                            "memtile", loc=loc, related=[(f"the {rec.kind}", rec.loc)],
                            fix="drain the joined fifo (for a channel with join=, index it "
                            "with ':' on the join axis)")
            if step is None:
                return f
            f = step

    def _fifo_ir(self, f: ObjectFifo) -> Fifo:
        if f.producer is None and not f.consumers:
            raise DesignError(
                "fifo unused", f"fifo '{f.name}' is never used: it has no producer and no "
                "consumer", loc=f.loc, fix="remove it, or fill it (rt.fill) or produce it in a "
                "core, and drain it (rt.drain) or consume it in a core")
        if f.producer is None or not f.consumers:
            missing = "producer" if f.producer is None else "consumer"
            hint = ("fill it in the runtime sequence (rt.fill), or produce it in a core"
                    if missing == "producer" else
                    "drain it in the runtime sequence (rt.drain), or consume it in a core")
            raise DesignError(
                f"fifo {missing}", f"fifo '{f.name}' has no {missing}", loc=f.loc,
                fix=hint + "; remove it if it is not needed")
        def cons_depth(who: str) -> int:
            if isinstance(f.consumer_depth, dict):
                return f.consumer_depth.get(who, f.depth)
            return f.depth if f.consumer_depth is None else f.consumer_depth

        known = {c.core if c.kind == "core" else c.kind for c in f.consumers}
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
                     depth=cons_depth(c.core if c.kind == "core" else c.kind),
                     dims=cons_dims(c.core if c.kind == "core" else c.kind),
                     loc=c.loc)  # checks reject them off a core
            for c in f.consumers)
        return Fifo(name=f.name, elem=f.elem, producer=producer, consumers=consumers,
                    loc=f.loc, channel=f.channel, index=f.index)


def _cascades(h: Herd) -> list[Cascade]:
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


def _who(use: EndpointUse) -> str:
    return use.core if use.kind == "core" else f"the {use.kind}"
