"""What tracing a design records: the :class:`DesignTrace` of the design function (its fifos and
links, as the records of :mod:`aiedsl.lang.records`, its herds, kernels and runtime sequence)
and the :class:`CoreTrace` of each core's program.

The tracing context (:mod:`aiedsl.lang.context`) holds the :class:`DesignTrace` and the
:class:`CoreTrace` being written; the handles a design function works with (fifos, channels,
``rt``) write into them; :func:`aiedsl.lang.to_ir.to_ir` makes the IR from a finished trace.
Nothing here knows those handles, so the front end's modules all import this one and it imports
none of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Literal, Protocol

from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import Acquire, Op, Port, Release
from aiedsl.ir.cores import Core, Herd
from aiedsl.ir.fifos import EndpointKind
from aiedsl.ir.kernel import Kernel
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import TensorType
from aiedsl.lang.placement import TilePin
from aiedsl.lang.records import (
    EndpointUse, FifoRecord, LinkKind, LinkRecord, RuntimeRecord,
)
from aiedsl.lang.tensor import HostTensorRef
from aiedsl.targets import TargetModel
from aiedsl.values import as_int, shown

if TYPE_CHECKING:
    from aiedsl.ir.design import Design


WINDOWS_DEVICES = frozenset({"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)),
                             *(f"LPT{i}" for i in range(1, 10))})
"""File names Windows keeps for devices, whatever their extension (``kernels/CON.cc``)."""


class Bundle(Protocol):
    """What a channel (:class:`~aiedsl.lang.channel.Channel`) still has to do once the design
    function has returned and every use of it is known."""

    def materialize(self) -> None:
        """Add its memtile links, now that tracing tells which way data flows."""

    def check_broadcast(self) -> None:
        """Check that each of its fifos reaches the declared number of cores."""

    def spell(self, f: FifoRecord) -> str | None:
        """How a design writes fifo ``f`` of this channel (``a[0]``, ``c[:]``); None when ``f``
        is not one of its fifos."""


@dataclass(frozen=True)
class LeftEarly:
    """How a ``loop()`` body was left before its end, as its iterator saw it go: by ``break``
    or ``return``, or by an exception caught outside the loop."""

    by: Literal["break", "exception"]
    """``break`` (``break`` or ``return``: Python drops the iterator alike) or ``exception``."""
    at: Loc
    """The line of the body it was left from: the break or return, or where the exception
    passed (raised there, or by a call there)."""
    exception: str | None = None
    """The exception, ``RuntimeError: boom``, when a ``with`` of the body saw it go by."""
    within: tuple[Loc, ...] = ()
    """When ``at`` is the line of a ``with`` left by one of several ``break`` or ``return``
    statements inside it, their lines (which one ran, Python does not say)."""


@dataclass
class Scope:
    """The ops of one nesting level of a core's program: its body, or a ``loop()``'s."""

    ops: list[Op] = field(default_factory=list)
    opener: object | None = None
    """What opened it: a token of the ``for`` over a ``loop()`` whose body this is (None for
    the core's body)."""
    loc: Loc | None = None
    """Where that loop was written."""
    left: LeftEarly | None = None
    """How the body was left before its end, when it was and that was seen."""


@dataclass
class CoreTrace:
    """One core's program, recorded while its herd function runs."""

    name: str
    scopes: list[Scope] = field(default_factory=lambda: [Scope()])
    counter: int = 0
    max_ops: int = 1 << 62
    """Ops the program may reach while traced: more than its program memory could hold even at
    one 4-byte instruction each (a Python loop that never ends, ``while True:``, would trace
    for ever; the unrolled-loop check judges a finished trace)."""
    emitted: int = 0
    raised: BaseException | None = None
    """The latest exception a ``with`` block of the core function saw leave it: what a loop()
    body left by an exception names."""

    def emit(self, op: Op) -> None:
        """Append ``op`` to the innermost open scope."""
        self.emitted += 1
        if self.emitted > self.max_ops:
            raise DesignError(
                "unrolled loop", f"{self.name}'s program passed {self.max_ops:,} ops while its "
                "core function was traced: a Python loop (while True:, for ... in range(n)) "
                "runs its body once per iteration while tracing, and this one has not ended",
                loc=op.loc, limit=f"{self.max_ops:,} ops, more than the core's program memory "
                "holds at one 4-byte instruction each", found=f"{self.emitted:,} ops and counting",
                fix="write `for _ in loop(n):` for n elements (traced once, a scf.for); a core "
                "that repeats for ever (IRON's Worker) is here a loop() over what the runtime "
                "sequence sends it")
        self.scopes[-1].ops.append(op)

    def acquire(self, fifo: str, port: Port, n: int, loc: Loc) -> str:
        """Record an acquire of ``fifo``; the name of the value it yields."""
        value = f"v{self.counter}"
        self.counter += 1
        self.emit(Acquire(fifo=fifo, port=port, count=n, result=value, loc=loc))
        return value

    def release(self, fifo: str, port: Port, n: int, loc: Loc) -> None:
        """Record a release."""
        self.emit(Release(fifo=fifo, port=port, count=n, loc=loc))


@dataclass
class DesignTrace:
    """Everything one design function declared, while and after it is traced."""

    name: str
    target: TargetModel
    loc: Loc
    tensors: list[HostTensorRef] = field(default_factory=list)
    fifos: dict[str, FifoRecord] = field(default_factory=dict)
    links: list[LinkRecord] = field(default_factory=list)
    channels: list[Bundle] = field(default_factory=list)
    herds: list[Herd] = field(default_factory=list)
    cores: list[Core] = field(default_factory=list)
    kernels: dict[str, Kernel] = field(default_factory=dict)
    kernel_objs: dict[str, Any] = field(default_factory=dict)
    runtime: list[RuntimeRecord] | None = None
    """The runtime sequence; None until ``with runtime()`` opens it."""
    runtime_loc: Loc | None = None
    tiled: dict[int, tuple[Any, str, tuple[int, ...]]] = field(default_factory=dict)
    """Patterns ``tiles()`` made, by id: (the pattern, kept alive so its id stays its own, the
    tensor it walks, that tensor's shape)."""
    rtps: dict[str, Any] = field(default_factory=dict)
    """Runtime-parameter buffers by name (:class:`aiedsl.lang.rtp.RtpRef`)."""
    barriers: dict[str, Any] = field(default_factory=dict)
    """Runtime barriers by name (:class:`aiedsl.lang.rtp.BarrierRef`)."""
    locals: dict[str, Any] = field(default_factory=dict)
    """Core-local buffers by name (:class:`aiedsl.lang.local.LocalRef`)."""
    finish: dict[str, Callable[[Design, dict[str, Any]], Design]] = field(default_factory=dict)
    """Steps that complete the design's IR once it is traced, by name (each runs once), given
    the IR and :attr:`kernel_objs`: what a kernel adds that needs the design's calls (one
    declared without ``cycles=`` is profiled with their scalars), registered by the kernel
    when called, so the language imports nothing of the kernels package."""
    _names: dict[str, int] = field(default_factory=dict)
    chosen: set[str] = field(default_factory=set)
    """The fifo names aiedsl chose (:meth:`fresh_name`: a variable's, or ``of``...), not the
    user's ``name=``: a later ``name=`` meeting one is told where the first came from."""

    # -- declarations ----------------------------------------------------------------------------
    def written(self, f: FifoRecord) -> str:
        """Fifo ``f`` as the design writes it, for a fix's code: ``a[0]``, ``c[:]`` for a
        channel's, its name for any other (the variable a design names a fifo after)."""
        return next((w for ch in self.channels if (w := ch.spell(f)) is not None), f.name)

    def fresh_name(self, stem: str) -> str:
        """A fifo name not used yet, from ``stem``."""
        n = self._names.get(stem, 0)
        self._names[stem] = n + 1
        name = stem if n == 0 else f"{stem}{n}"
        if name in self.fifos:
            return self.fresh_name(stem)
        self.chosen.add(name)
        return name

    def check_depth(self, owner: str, what: str, d: object, loc: Loc,
                    key: str | None = None) -> int:
        """A depth is an int from 1 to the largest lock value (numpy's integers too); returns
        it as a plain int (``key``: the consumer ``what={key: d}`` gives it to).

        The producer lock starts at the depth, and a lock counts to 63 (AIE2 lock values are 6
        bits: mlir-aie ``AIETargetModel::getMaxLockValue``). A list of depths (mlir-aie's and
        IRON's per-end ``[producer, consumer, ...]``) is refused with the keywords that say it.
        """
        top = self.target.max_lock_value
        depth = as_int(d)
        if depth is None or not 1 <= depth <= top:
            fix = "use 1 (single), 2 (double buffering) or a few more"
            listed = isinstance(d, (list, tuple)) and len(d) > 1 and all(
                as_int(x) is not None for x in d)
            if listed and owner.startswith("fifo ") and what == "depth":
                # mlir-aie's per-end list [producer, consumer, ...] (IRON's depth=[1, 3])
                assert isinstance(d, (list, tuple))
                first, rest = as_int(d[0]), [as_int(x) for x in d[1:]]
                fix = (f"give the producer's depth as depth= and the consumers' as "
                       f"consumer_depth=: depth={first}, consumer_depth={rest[0]}"
                       if len(set(rest)) == 1 else
                       f"give the producer's depth as depth={first} and each consumer's in "
                       "consumer_depth={'core[0,1]': 3, ...}, keyed by the consuming core's "
                       "name")
                fix += " (aiedsl writes mlir-aie's per-end list from them)"
            elif listed and owner.startswith("channel ") and what == "depth":
                fix = ("a channel takes one depth for its cores' ends (depth=) and one for its "
                       "memtile side (host_depth=)")
            said = f'{{"{key}": {shown(d)}}}' if key is not None else shown(d)
            raise DesignError("fifo depth", f"{owner} has {what}={said}", loc=loc,
                              limit=f"an integer from 1 to {top} (a lock starts at the depth "
                              f"and counts to {top})", found=shown(d), fix=fix)
        return depth

    def check_repeat(self, owner: str, n: object, loc: Loc) -> int:
        """A ``repeat=`` is an int from 1 to the largest lock value (the memtile's producer
        lock starts at its buffers times the repeat: :mod:`aiedsl.checks.repeat`); returns it
        as a plain int (numpy's integers too)."""
        top = self.target.max_lock_value
        times = as_int(n)
        if times is None or not 1 <= times <= top:
            more = times is not None and times > top
            raise DesignError("repeat", f"{owner} has repeat={shown(n)}", loc=loc,
                              limit=f"an integer from 1 to {top} (the memtile's producer lock "
                              f"starts at its buffers x repeat and counts to {top})",
                              found=shown(n), fix=(
                                  "reuse each element fewer times from the memtile (its "
                                  f"producer lock counts its buffers x repeat to {top}, and "
                                  "`aiedsl check` says how many of the memtile's BDs fit); for "
                                  "more, let the core keep it: acquire it once outside the loop "
                                  "that reuses it (L1 reuse), or fill it again from the host")
                              if more else
                              "give the number of times the memtile sends each element, e.g. "
                              "repeat=2 (1: once)")
        return times

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
            fix = "put every shape parameter (and define) into the symbol name"
            reshaped = _reshaped(prev, k)
            if reshaped is not None:
                # a library kernel named by dtype and size: passthrough(Tensor[32, 64, i32])
                # and passthrough(Tensor[128, 16, i32]) are both passthrough_i32_2048
                a, b = reshaped
                fix = (f"the symbol takes one memref type per argument, and the two differ in "
                       f"shape only ({a} and {b}): declare the fifos of both calls with one "
                       f"shape, e.g. Tensor[{a.numel}, {a.dtype}] (the same bytes), and make the "
                       "kernel for that shape")
            elif prev.shipped != k.shipped:  # one is aiedsl's own
                ours = prev if prev.shipped else k
                fix = (f"'{k.symbol}' is a kernel of aiedsl's library ({ours.source}): give "
                       "yours a symbol of its own")
            elif k.entry is None and prev.entry is None:  # the name is the C++ file's own
                fix = ("the file's extern \"C\" function has one name: call its template "
                       "through entry= under a symbol of your own with the shape in it, or "
                       "give both the same defines=")
            elif prev.loc == k.loc:  # one declare() run twice (a function making kernels)
                fix = ("put every shape parameter (and define) into the symbol name: the "
                       "declare() at that line makes both, so its symbol must tell them apart "
                       f"(an f-string, e.g. f\"{k.symbol}_{{n}}\")")
            differ = [f"{name}: {_brief(getattr(prev, name))} and {_brief(getattr(k, name))}"
                      for name in type(k).model_fields
                      if name != "loc" and getattr(prev, name) != getattr(k, name)]
            raise DesignError("kernel", f"two different kernels use the symbol '{k.symbol}'",
                              loc=k.loc, related=[("the first", prev.loc)],
                              found="; ".join(differ[:3]) or None, fix=fix)
        if prev is None and k.symbol.upper() in WINDOWS_DEVICES:
            # kernels/CON.cc is no file on Windows but the console (a reviewer)
            raise DesignError(
                "kernel", f"kernel symbol '{k.symbol}' is a device name on Windows", loc=k.loc,
                limit=f"a symbol other than {', '.join(sorted(WINDOWS_DEVICES))} (in any case): "
                "it names the build's kernels/<symbol>.cc", found=f"'{k.symbol}'",
                fix=f"give it another name, e.g. '{k.symbol}_k'")
        if prev is None:
            # a symbol names the build's kernels/<symbol>.cc and <symbol>.o: two that differ
            # in case only are one file on Windows and macOS, the second kernel's C++ compiled
            # for both (a Windows tester)
            other = next((o for s, o in self.kernels.items()
                          if s.casefold() == k.symbol.casefold()), None)
            if other is not None:
                raise DesignError(
                    "kernel", f"kernels '{other.symbol}' and '{k.symbol}' differ in case only",
                    loc=k.loc, related=[("the first", other.loc)],
                    limit="symbols that differ in more than case: each names its build files "
                    "(kernels/<symbol>.cc, <symbol>.o), which Windows and macOS take for one",
                    found=f"'{other.symbol}' and '{k.symbol}'",
                    fix=f"give one another name, e.g. '{k.symbol}_2'")
        self.kernels.setdefault(k.symbol, k)
        self.kernel_objs.setdefault(k.symbol, obj)

    def add_link(self, kind: LinkKind, srcs: Sequence[FifoRecord], dsts: Sequence[FifoRecord],
                 offsets: list[int], via: TilePin, loc: Loc) -> None:
        """Register a link and the memtile (or core tile) endpoints it gives its fifos."""
        given = [as_int(o) for o in offsets]  # numpy's integers too, as plain ints
        if not all(o is not None and o >= 0 for o in given):
            raise DesignError(f"{kind} offsets", f"{kind} offsets {shown(list(offsets))}",
                              loc=loc, limit="element offsets: non-negative ints",
                              found=shown(offsets),
                              fix="give one int offset per part, in elements of the parent")
        offsets = [o for o in given if o is not None]
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
        # a fifo in a second link is refused once the design is traced (check_links_once),
        # when the whole chain of links is known and the fix can name what does the job
        pin = via.coord(self.target.memtile_rows[0] if via.kind == "memtile"
                        else self.target.core_rows[0])
        end: EndpointKind = "memtile" if via.kind == "memtile" else "coretile"
        self.links.append(LinkRecord(kind, list(srcs), list(dsts), offsets, pin, loc, end))
        for f in srcs:
            self.add_consumer(f, EndpointUse(end, None, loc, pin))
        for f in dsts:
            self.set_producer(f, EndpointUse(end, None, loc, pin))

    # -- endpoint inference ----------------------------------------------------------------------
    def use_core(self, f: FifoRecord, port: Port, core: str, loc: Loc) -> None:
        """Record that ``core`` uses ``f`` on ``port``."""
        if port == "produce":
            self.set_producer(f, EndpointUse("core", core, loc))
        else:
            self.add_consumer(f, EndpointUse("core", core, loc))

    def set_producer(self, f: FifoRecord, use: EndpointUse) -> None:
        """Make ``use`` the producer of ``f``; a second, different producer is an error."""
        p = f.producer
        if p is None:
            f.producer = use
        elif (p.kind, p.core) != (use.kind, use.core):
            link = next((rec for rec in self.links if any(d is f for d in rec.dsts)), None)
            if link is not None and use.kind == "core":
                # the common slip: a core writing into a split's part (or a forward's output)
                made = (f"part {next(i for i, d in enumerate(link.dsts) if d is f)} of the "
                        f"split of '{link.srcs[0].name}'" if link.kind == "split" else
                        f"the {link.kind} of {', '.join(repr(s.name) for s in link.srcs)}")
                raise DesignError(
                    "fifo producer", f"fifo '{f.name}' is {made}, which {_who(p)} produces; "
                    f"{_who(use)} cannot produce it too", loc=use.loc,
                    limit="a fifo has exactly one producer, and a link's outputs are its "
                    "tile's", found=f"{_who(use)} produces '{f.name}'",
                    related=[(f"the {link.kind}", link.loc)],
                    fix=f"give what {_who(use)} makes a fifo of its own (e.g. out = fifo("
                    f"Tensor[{', '.join(map(str, f.elem.shape))}, {f.elem.dtype}])) and drain or "
                    f"consume that; '{f.name}' reaches its consumers from the link")
            handle = _handle(f)
            if "shim" in (p.kind, use.kind) and "core" in (p.kind, use.kind):
                # a core producing what the host fills: the slip is produce() for consume()
                core, fill = (p, use) if p.kind == "core" else (use, p)
                raise DesignError(
                    "fifo producer", f"{_who(core)} produces fifo '{f.name}', which the "
                    "runtime fills", loc=use.loc,
                    limit="a fifo has exactly one producer: a core's produce(), or the host's "
                    "rt.fill", found=f"{handle}.produce() by {_who(core)} (line "
                    f"{core.loc.line}) and rt.fill (line {fill.loc.line})",
                    related=[(f"{_who(p)} produces it here" if p is core else
                              "the runtime fills it here", p.loc)],
                    fix=f"if {_who(core)} reads what the host sends, consume it: "
                    f"`with {handle}.consume() as ...` (line {core.loc.line}); if it makes what "
                    "the host reads back, give that a fifo of its own and rt.drain it")
            raise DesignError(
                "fifo producer", f"fifo '{f.name}' has two producers: {_who(p)} and "
                f"{_who(use)}", loc=use.loc, limit="a fifo has exactly one producer",
                found=f"{_who(p)} (line {p.loc.line}) and {_who(use)} (line {use.loc.line})",
                related=[(f"{_who(p)} produces it here", p.loc)],
                fix="give each producer its own fifo (a channel index per core), or join them at "
                "a memtile" + ("" if f.channel is None or "core" not in (p.kind, use.kind) else
                               f"; if the cores read {handle} (the host or another core fills "
                               f"it), they consume it: `with {handle}.consume() as ...`"))

    def add_consumer(self, f: FifoRecord, use: EndpointUse) -> None:
        """Add ``use`` to the consumers of ``f``, once per endpoint."""
        for c in f.consumers:
            if (c.kind, c.core) == (use.kind, use.core):
                return  # another drain or acquire by the same endpoint
        f.consumers.append(use)


def _reshaped(a: Kernel, b: Kernel) -> tuple[TensorType, TensorType] | None:
    """The first two buffer types that make kernels ``a`` and ``b`` differ, when nothing else
    does and each such pair holds the same elements in another shape."""
    if len(a.args) != len(b.args) or a.model_copy(update={"loc": b.loc, "args": b.args}) != b:
        return None
    pairs = [(x, y) for x, y in zip(a.args, b.args) if x != y]
    for x, y in pairs:
        if (x.type is None or y.type is None or x.model_copy(update={"type": y.type}) != y
                or (x.type.numel, x.type.dtype) != (y.type.numel, y.type.dtype)):
            return None
    first = pairs[0] if pairs else None
    return None if first is None or first[0].type is None or first[1].type is None else (
        first[0].type, first[1].type)


def _handle(f: FifoRecord) -> str:
    """How the design file names ``f``: ``b[0]`` for a fifo of channel ``b``, else its name."""
    if f.channel is not None and f.index:
        return f"{f.channel}[{', '.join(map(str, f.index))}]"
    return f.name


def _who(use: EndpointUse) -> str:
    return use.core if use.kind == "core" and use.core else f"the {use.kind}"


def _brief(value: object) -> str:
    """A kernel field's value in a message: an argument list as names and types, anything
    else as its text, cut at 80 characters."""
    if isinstance(value, tuple) and value and all(hasattr(a, "kind") for a in value):
        text = "(" + ", ".join(f"{a.name}: {a.type if a.type is not None else a.dtype}"
                               for a in value) + ")"
    else:
        text = str(value)
    return text if len(text) <= 80 else text[:77] + "..."
