"""Object fifos and memtile links: how data moves between L3, L2 and L1.

A fifo's endpoints are inferred from use: a core that ``consume()``s it is a consumer, a core
that ``produce()``s it is the producer, ``rt.fill`` makes the shim its producer, ``rt.drain`` the
shim its consumer, and ``forward``/``split``/``join`` put a memtile between two fifos.

Example
-------
::

    a_l3 = fifo(Tensor[4096, i16], name="a_l3")
    a = a_l3.forward(Tensor[64, 64, i16], dims_to_stream=[(16, 256), (16, 4), (4, 64), (4, 1)])
"""

from __future__ import annotations

from typing import NoReturn, Sequence

from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import Port
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import Dim, TensorType
from aiedsl.lang.buffer import Acquisition, Buffer
from aiedsl.lang.context import current_core, current_design
from aiedsl.lang.described import array_type, call_text, described, iron_type
from aiedsl.lang.names import check_name
from aiedsl.lang.link_parts import DimsSpec, back_to_back, part_types, per_part
from aiedsl.lang.placement import TilePin, memtile
from aiedsl.lang.records import FifoRecord
from aiedsl.lang.trace import DesignTrace
from aiedsl.source_loc import assigned_name, caller_loc
from aiedsl.values import array_text, as_int, shown



def to_dims(spec: DimsSpec, what: str, loc: Loc) -> tuple[Dim, ...]:
    """Turn ``[(size, stride), ...]`` (outermost first) into IR dimensions."""
    if spec is None or (isinstance(spec, (list, tuple)) and not spec):
        return ()
    if not isinstance(spec, (list, tuple)):
        raise DesignError("dma dims", f"{what}={shown(spec)} is not a list of (size, stride) "
                          "pairs", loc=loc, found=shown(spec),
                          fix="write dims as [(size, stride), ...], outermost first")
    out = []
    for d in spec:
        pair = [as_int(v) for v in d] if isinstance(d, tuple) else []  # numpy's ints too
        if len(pair) != 2 or not all(v is not None and v >= 0 for v in pair) or pair[0] == 0:
            raise DesignError(
                "dma dims", f"{what} entry {shown(d)} is not a (size, stride) pair of ints",
                loc=loc, found=shown(d),
                fix="write dims as [(size, stride), ...], outermost first",
            )
        size, stride = pair
        assert size is not None and stride is not None
        out.append(Dim(size=size, stride=stride))
    return tuple(out)


class ObjectFifo(FifoRecord):
    """A fifo handle in a design function (see :func:`fifo`): its record, and what a design
    function does with it."""

    def __new__(cls, *args: object, **kwargs: object) -> "ObjectFifo":
        # aiedsl makes its records with the name first; IRON's ObjectFifo(obj_type, depth=,
        # name=) is a user's declaration, which is fifo(...) here
        # (copy, pickle and deepcopy make one with no arguments; dataclasses.replace names
        # every field, loc too)
        if args and not isinstance(args[0], str) or not args and kwargs and "loc" not in kwargs:
            raise DesignError(
                "fifo", "ObjectFifo(...) is how IRON declares a fifo; aiedsl declares one with "
                "fifo(...), which returns an ObjectFifo", loc=caller_loc(),
                found=f"ObjectFifo({call_text(args, kwargs)})",
                fix=f"write fifo({call_text(args, kwargs, iron=True)}) (from aiedsl import "
                "fifo)")
        return super().__new__(cls)

    # -- core side -----------------------------------------------------------------------------
    def consume(self, n: int = 1) -> "Acquisition":
        """Acquire ``n`` elements to read, release them at the end of the ``with`` block.

        Example: ``with a.consume() as ta: kernel(ta, ...)``
        """
        return Acquisition(self, "consume", n, caller_loc())

    def produce(self, n: int = 1) -> "Acquisition":
        """Acquire ``n`` free elements to write, release (publish) them at the end of the block."""
        return Acquisition(self, "produce", n, caller_loc())

    def prod(self) -> NoReturn:
        """IRON's producer handle, which aiedsl has no use for: a clear error saying so."""
        self._iron_handle("prod", "produce")

    def cons(self) -> NoReturn:
        """IRON's consumer handle, which aiedsl has no use for: a clear error saying so."""
        self._iron_handle("cons", "consume")

    def set_repeat_count(self, *args: object) -> NoReturn:
        """IRON's repeat of what a memtile sends: here a knob of the link that sends it."""
        raise DesignError(
            "fifo", f"fifo '{self.name}' has no set_repeat_count(): aiedsl repeats what a "
            "memtile sends with repeat= on the link that makes the fifo", loc=caller_loc(),
            fix="write e.g. f.forward(repeat=2) or f.split(4, repeat=2) where the fifo is made "
            "(a fifo the runtime fills or a core produces takes no repeat)")

    def set_via_shared_mem(self, *args: object) -> NoReturn:
        """IRON's choice of a fifo's memory: aiedsl makes it as mlir-aie's lowering does."""
        raise DesignError(
            "fifo", f"fifo '{self.name}' has no set_via_shared_mem(): aiedsl places a fifo's "
            "buffers as mlir-aie's lowering does, in the shared memory of neighbouring cores "
            "(one consumer, no layout change) and through DMAs otherwise", loc=caller_loc(),
            fix="leave the call out; a build's report.txt lists the fifos in shared memory")

    def _iron_handle(self, handle: str, port: str) -> NoReturn:
        raise DesignError(
            "fifo", f"fifo '{self.name}' has no {handle}(): aiedsl uses a fifo itself where IRON "
            "takes a handle of it", loc=caller_loc(),
            fix=f"pass '{self.name}' itself (rt.fill({self.name}, ...), rt.drain({self.name}, "
            f"...), {self.name}.forward(), {self.name}.split(...), {self.name}.join(...)); in a "
            f"core function, `with {self.name}.{port}() as e:`")

    def acquire(self, port: Port, n: int = 1, *, _loc: Loc | None = None) -> "Buffer":
        """Acquire ``n`` elements on ``port`` (``"produce"`` or ``"consume"``) without releasing.

        Pair it with :meth:`release`; the ``with`` forms do both.
        """
        loc = _loc or caller_loc()
        core = current_core(f"acquiring fifo '{self.name}'")
        _check_port(port, loc, f"{self.name}.acquire")
        count = as_int(n)  # numpy's integers too; never a bool
        if count is None or count < 1:
            raise DesignError("acquire", f"cannot acquire {shown(n)} elements of fifo "
                              f"'{self.name}'", loc=loc, found=shown(n),
                              fix="acquire 1 or more elements")
        current_design(f"acquiring fifo '{self.name}'").use_core(self, port, core.name, loc)
        return Buffer(self, core.acquire(self.name, port, count, loc), count,
                      acquired_by=core, acquired_at=loc)

    def release(self, port: Port, n: int = 1, *, _loc: Loc | None = None) -> None:
        """Release ``n`` elements on ``port``, handing them to the other side."""
        loc = _loc or caller_loc()
        core = current_core(f"releasing fifo '{self.name}'")
        _check_port(port, loc, f"{self.name}.release")
        count = as_int(n)  # numpy's integers too; never a bool
        if count is None or count < 1:
            raise DesignError("release", f"cannot release {shown(n)} elements of fifo "
                              f"'{self.name}'", loc=loc, found=shown(n),
                              fix="release 1 or more elements, as many as were acquired")
        core.release(self.name, port, count, loc)

    # -- memtile links ---------------------------------------------------------------------------
    def forward(self, elem: TensorType | None = None, *, depth: int | None = None,
                dims_to_stream: DimsSpec = None, dims_from_stream: DimsSpec = None,
                via: TilePin = memtile, name: str | None = None,
                repeat: int = 1,
                consumer_depth: int | dict[str, int] | None = None) -> "ObjectFifo":
        """Send this fifo's elements through a memtile into a new fifo (``objectfifo.link``).

        ``elem`` is the new fifo's element: the same dtype, in any shape and size (the stream is
        regrouped: 64-element memtile objects forwarded as 32-element core objects, as with
        IRON's ``forward(obj_type=...)``); ``depth`` is its buffers per end (this fifo's depth
        unless given: a single-buffered L2 fifo forwards into a single-buffered core fifo);
        ``consumer_depth`` overrides it for the consumers, as :func:`fifo`'s does
        (``a.forward(depth=2, consumer_depth={"core[0,0]": 4})``: the memtile keeps 2 buffers,
        the core 4); ``dims_to_stream`` is applied as the memtile sends.
        ``via=coretile(col, row)`` forwards through a compute tile's memory instead
        (``a.forward(via=coretile(0, 2))``).
        ``repeat=n`` sends each of the memtile's buffers ``n`` times in a row without receiving
        it again (mlir-aie's ``repeat_count``, IRON's ``set_repeat_count``; MLIR-AIR's L2
        reuse): its consumers take ``n`` times what this fifo brings in.
        """
        loc = caller_loc()
        b = current_design(f"forwarding fifo '{self.name}'")
        out = new_fifo(
            b, elem or self.elem, depth=self.depth if depth is None else depth,
            name=f"{self.name}_fwd" if name is None else name,
            dims_to_stream=dims_to_stream, dims_from_stream=dims_from_stream, loc=loc,
            consumer_depth=consumer_depth)
        out.repeat = b.check_repeat(f"forward '{out.name}'", repeat, loc)
        b.add_link("forward", [self], [out], [], via, loc)
        return out

    def split(self, parts: Sequence[TensorType] | int, *, offsets: Sequence[int] | None = None,
              depth: int | None = None, dims_to_stream: DimsSpec = None,
              dims_from_stream: DimsSpec = None, via: TilePin = memtile,
              names: Sequence[str] | None = None, repeat: int = 1) -> list["ObjectFifo"]:
        """Distribute each element over several fifos through a memtile, at element offsets.

        ``parts`` is a count (equal parts) or the part types; offsets default to back to back.
        ``dims_to_stream`` / ``dims_from_stream`` apply to every part, or, as a list with one
        layout (or None) per part, each to its own (IRON's per-output lists), e.g.
        ``f.split(2, dims_to_stream=[None, [(32, 1), (32, 32)]])``.
        ``repeat=n`` sends every part ``n`` times in a row (mlir-aie's ``repeat_count``, which
        one link takes for all its parts). The parts are named ``<this fifo>_0``, ``_1``, ...
        unless ``names=`` gives one name per part: the variable a split is assigned to holds
        the list, not a fifo, and the parent's name says whose parts they are.
        """
        loc = caller_loc()
        b = current_design(f"splitting fifo '{self.name}'")
        times = b.check_repeat(f"split of '{self.name}'", repeat, loc)
        outs, offs = _make_parts(b, self, "split", parts, offsets, depth, dims_to_stream,
                                 dims_from_stream, names, loc)
        for out in outs:
            out.repeat = times
        b.add_link("split", [self], outs, offs, via, loc)
        return outs

    def join(self, parts: Sequence[TensorType] | int, *, offsets: Sequence[int] | None = None,
             depth: int | None = None, dims_to_stream: DimsSpec = None,
             dims_from_stream: DimsSpec = None, via: TilePin = memtile,
             names: Sequence[str] | None = None) -> list["ObjectFifo"]:
        """Make the fifos whose elements a memtile gathers into each element of this one, at
        element offsets: :meth:`split` the other way (IRON's ``of.prod().join(...)``).

        ``parts`` is a count (equal parts) or the part types; offsets default to back to back.
        ``dims_to_stream`` is each part's producer's layout (the core's DMA sending it),
        ``dims_from_stream`` where the memtile writes each part's elements in its slot; each
        is one layout for every part or a list of one per part. The parts are named
        ``<this fifo>_0``, ``_1``, ... unless ``names=`` gives one name per part. The
        function :func:`join` gathers fifos made already into a new one.

        Example: ``outs = c.join(4)``, then core ``y`` writes ``with outs[y].produce() as t:``.
        """
        loc = caller_loc()
        b = current_design(f"joining into fifo '{self.name}'")
        # the join makes this fifo: one made already, or in another link, is refused here (the
        # check of link chains reads a second link as one that takes the fifo: a reviewer)
        linked = next((rec for rec in b.links if any(f is self for f in (*rec.srcs, *rec.dsts))),
                      None)
        if linked is not None:
            raise DesignError(
                "join", f"fifo '{self.name}' takes part in the {linked.kind} at line "
                f"{linked.loc.line} already, and a join would make it", loc=loc,
                limit="a fifo takes part in one memtile link (mlir-aie's objectfifo.link)",
                related=[(f"the {linked.kind}", linked.loc)],
                fix="join into a fifo of its own (g = fifo(...); parts = g.join(...)), or "
                "forward what the other link makes")
        if self.producer is not None:
            raise DesignError(
                "join", f"fifo '{self.name}' is made already, by {self.producer.kind} "
                f"{self.producer.core or ''}".rstrip() + ", and a join would make it too",
                loc=loc, limit="a fifo has exactly one producer",
                related=[("its producer", self.producer.loc)],
                fix="join into a fifo of its own (g = fifo(...); parts = g.join(...))")
        ins, offs = _make_parts(b, self, "join", parts, offsets, depth, dims_to_stream,
                                dims_from_stream, names, loc)
        b.add_link("join", ins, [self], offs, via, loc)
        return ins

    def __repr__(self) -> str:
        return f"<fifo {self.name}: {self.elem}>"

    def written(self) -> str:
        """The fifo as a core function writes it: ``a[0]`` for index 0 of channel ``a``, else
        its name (the variable a design names a fifo after)."""
        if self.channel is None:
            return self.name
        return f"{self.channel}[{', '.join(map(str, self.index))}]"


def _make_parts(b: DesignTrace, parent: ObjectFifo, verb: str,
                parts: Sequence[TensorType] | int, offsets: Sequence[int] | None,
                depth: int | None, dims_to_stream: DimsSpec, dims_from_stream: DimsSpec,
                names: Sequence[str] | None, loc: Loc) -> tuple[list[ObjectFifo], list[int]]:
    """The fifos ``parent.split(...)`` (``verb``) or ``parent.join(...)`` makes, named and laid
    out as given, and their offsets in ``parent``'s element (back to back by default)."""
    types = part_types(parent, parts, b.target, loc, verb)
    n = len(types)
    link = (f"split of '{parent.name}' into {n} parts" if verb == "split" else
            f"join of {n} parts into '{parent.name}'")
    if names is not None and (not isinstance(names, (list, tuple)) or len(names) != n):
        raise DesignError(verb, f"{link} has names={names!r}", loc=loc, limit=f"{n} names",
                          found=repr(names), fix="give one name per part, or leave names out")
    if offsets is not None and not isinstance(offsets, (list, tuple)):
        which = f"split of '{parent.name}'" if verb == "split" else f"join into '{parent.name}'"
        raise DesignError(f"{verb} offsets", f"{which} has offsets={offsets!r}", loc=loc,
                          limit="a list of element offsets, one per part", found=repr(offsets),
                          fix="write e.g. offsets=[0, 1024]")
    to_parts = per_part(dims_to_stream, n, link, "dims_to_stream", loc)
    from_parts = per_part(dims_from_stream, n, link, "dims_from_stream", loc)
    made = [new_fifo(b, t, depth=parent.depth if depth is None else depth,
                     name=(names[i] if names else f"{parent.name}_{i}"),
                     dims_to_stream=to_parts[i], dims_from_stream=from_parts[i], loc=loc)
            for i, t in enumerate(types)]
    return made, list(offsets) if offsets is not None else back_to_back(types)


def _check_port(port: str, loc: Loc, call: str) -> None:
    count = as_int(port)
    if count is not None:  # IRON's of.acquire(1)
        raise DesignError("acquire", f"port {count} is neither 'produce' nor 'consume'", loc=loc,
                          found=str(count), fix=f"name the port before the count: "
                          f"{call}('consume', {count}) or {call}('produce', {count}) (IRON's "
                          f"count-only form is on a handle, which aiedsl does not have)")
    if not isinstance(port, str) or port not in ("produce", "consume"):
        raise DesignError("acquire", f"port {shown(port)} is neither 'produce' nor 'consume'",
                          loc=loc, found=shown(port), fix="use 'produce' or 'consume'")


def new_fifo(b: DesignTrace, elem: TensorType, *, depth: int, name: str | None, loc: Loc,
             dims_to_stream: DimsSpec = None,
             dims_from_stream: DimsSpec | dict[str, DimsSpec] = None,
             consumer_depth: int | dict[str, int] | None = None) -> ObjectFifo:
    """A fifo registered in ``b``; its endpoints come from later uses."""
    if not isinstance(elem, TensorType):
        raise DesignError("fifo", f"fifo element type {shown(elem)} is not a Tensor[...] type",
                          loc=loc, found=shown(elem),
                          fix=f"write e.g. fifo({array_type(elem)}) (a fifo takes an element's "
                          "type, not an array)" if array_text(elem) else
                          f"write fifo({iron_type(elem)}), IRON's type as aiedsl writes it"
                          if iron_type(elem) else "write e.g. fifo(Tensor[1024, i16])")
    given = name
    name = check_name(b.fresh_name("of") if name is None else name, "fifo name", loc)
    if name in b.fifos:
        first = "the first"
        fix = "give each fifo its own name"
        if given is not None and name in b.chosen:  # the first was named after its variable
            first = "the first, named after the variable its line assigns it to"
            fix = (f"give the first its own name= (or this one another): '{name}' was aiedsl's "
                   "choice for it, made before this name= asked for it")
        raise DesignError("fifo", f"two fifos are named '{name}'", loc=loc,
                          related=[(first, b.fifos[name].loc)], fix=fix)
    if isinstance(consumer_depth, dict) and not all(isinstance(k, str) for k in consumer_depth):
        raise DesignError("fifo depth", f"fifo '{name}' has consumer_depth="
                          f"{consumer_depth!r}", loc=loc,
                          limit="a depth, or {consumer name: depth} with names such as "
                          "'core[0,1]', 'memtile' or 'shim'", found=repr(consumer_depth),
                          fix="key it by the consuming core's name, e.g. {'core[0,1]': 3}")
    depth = b.check_depth(f"fifo '{name}'", "depth", depth, loc)
    if isinstance(consumer_depth, dict):
        consumer_depth = {k: b.check_depth(f"fifo '{name}'", "consumer_depth", d, loc, key=k)
                          for k, d in consumer_depth.items()}
    elif consumer_depth is not None:
        consumer_depth = b.check_depth(f"fifo '{name}'", "consumer_depth", consumer_depth, loc)
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
    f = ObjectFifo(name, elem, depth, loc,
                   dims_to_stream=to_dims(dims_to_stream, "dims_to_stream", loc),
                   dims_from_stream=to_dims(dims_from_stream, "dims_from_stream", loc),
                   dims_per_consumer=per_consumer, consumer_depth=consumer_depth)
    b.fifos[name] = f
    return f


def fifo(elem: TensorType, *, depth: int = 2, name: str | None = None,
         dims_to_stream: DimsSpec = None,
         dims_from_stream: DimsSpec | dict[str, DimsSpec] = None,
         consumer_depth: int | dict[str, int] | None = None,
         shim: TilePin | None = None, repeat: int = 1) -> ObjectFifo:
    """Declare an object fifo of elements of type ``elem``, ``depth`` buffers per endpoint.

    ``depth`` applies to the producer and every consumer; ``consumer_depth`` overrides it for all
    consumers (an int) or per consumer (``{"core[0,1]": 3, "memtile": 7}``), as mlir-aie's
    per-endpoint depth list ``[2, 2, 7]``. A memtile end has buffers of its own only as the
    input of a split or of a forward to elements no larger: a join's parts and a forward's
    smaller input move through the output's, whose depth the join or forward sets (``check``
    refuses a memtile depth there). ``shim=shim(col)`` pins the host end's column.
    ``dims_from_stream`` is one layout for every consuming core, or one per core
    (``{"core[0,0]": [(4, 64), (16, 1)], "core[1,0]": [...]}``), as mlir-aie's per-consumer
    ``fromStream`` layouts. ``repeat=n`` (mlir-aie's ``repeat_count``) has the producer's DMA
    send each element ``n`` times; a fifo a memtile sends takes it (``forward(..., repeat=n)``,
    ``split(..., repeat=n)``), one the runtime fills or a core produces does not (``check`` says
    why).

    Example
    -------
    ::

        of_in = fifo(Tensor[1024, i16], depth=2)       # double-buffered
        c = fifo(Tensor[64, 64, f32], depth=1)          # single-buffered
    """
    loc = caller_loc()
    b = current_design("fifo(...)")
    if name is None:  # named as the design calls it (a = fifo(...)), else of, of1, ...
        name = b.fresh_name(assigned_name("fifo") or "of")
    f = new_fifo(b, elem, depth=depth, name=name, dims_to_stream=dims_to_stream,
                   dims_from_stream=dims_from_stream, loc=loc, consumer_depth=consumer_depth)
    f.repeat = b.check_repeat(f"fifo '{f.name}'", repeat, loc)
    if shim is not None:
        f.shim_pin = shim_coord(shim, f"fifo '{f.name}'", b.target.shim_row, loc)
    return f


def shim_coord(pin: object, what: str, row: int, loc: Loc) -> tuple[int, int] | None:
    """The tile a ``shim=`` pin names (None for a bare ``shim``: aiedsl chooses), or the
    DesignError ``what`` (``fifo 'a'``) has for anything but a shim pin."""
    if not isinstance(pin, TilePin) or pin.kind != "shim":
        raise DesignError("placement", f"{what} has shim={pin!r}", loc=loc,
                          limit="shim(col): the shim tile of a column", found=repr(pin),
                          fix="write shim=shim(0) (from aiedsl import shim)")
    return pin.coord(row)


def join(parts: Sequence[ObjectFifo], elem: TensorType | None = None, *,
         offsets: Sequence[int] | None = None, depth: int | None = None,
         dims_to_stream: DimsSpec = None, via: TilePin = memtile,
         name: str | None = None, repeat: int = 1) -> ObjectFifo:
    """Gather elements of several fifos into one fifo through a memtile, at element offsets.

    Example: ``c_col = join([c0, c1, c2, c3])`` stacks four 64x64 tiles into one 16384 element.
    Given no ``name``, the joined fifo is named as :func:`fifo` names one, after the variable
    its line assigns it to (``c_col``, then ``c_col1``, ... for joins made in a loop), so
    messages and the MLIR call it what the design does; ``<first part>_join`` when the line
    assigns it to no plain name. ``repeat=`` is refused by ``check``: mlir-aie cannot lower a
    repeated join.
    """
    loc = caller_loc()
    b = current_design("join(...)")
    times = b.check_repeat("join(...)", repeat, loc)
    if not isinstance(parts, (list, tuple)) or not parts or \
            not all(isinstance(p, ObjectFifo) for p in parts):
        given = described(parts)  # what was given (it said [] for anything but a list)
        raise DesignError("join", "join of no parts" if given in ("[]", "()") else
                          f"join of {given}", loc=loc, limit="a list of one or more fifos",
                          found=given, fix="give a list of the fifos it gathers, e.g. "
                          "join([c0, c1])")
    parts = list(parts)
    total = sum(p.elem.numel for p in parts)
    elem = elem or TensorType(shape=(total,), dtype=parts[0].elem.dtype)
    if name is None:  # named as the design calls it (c_l2 = join(...)), as fifo() names one
        variable = assigned_name("join")
        name = b.fresh_name(variable) if variable else f"{parts[0].name}_join"
    out = new_fifo(b, elem, depth=parts[0].depth if depth is None else depth, name=name,
                   dims_to_stream=dims_to_stream, loc=loc)
    if offsets is not None and not isinstance(offsets, (list, tuple)):
        raise DesignError("join offsets", f"join has offsets={offsets!r}", loc=loc,
                          limit="a list of element offsets, one per part", found=repr(offsets),
                          fix="write e.g. offsets=[0, 1024]")
    out.repeat = times
    offs = list(offsets) if offsets is not None else back_to_back([p.elem for p in parts])
    b.add_link("join", parts, [out], offs, via, loc)
    return out
