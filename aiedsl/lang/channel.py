"""Channels: indexed bundles of fifos that a herd addresses by its tile index.

As MLIR-AIR's ``air.channel``: ``a = channel(Tensor[64, 64, bf16], shape=[ROWS], via=memtile)``
declares ``ROWS`` fifos; the core at herd index ``(x, y)`` uses ``a[y]``. Every core that consumes
``a[y]`` receives the same elements (a broadcast along the herd's other dimension). With
``via=memtile`` each fifo passes through a memtile; ``split=axis`` feeds a group of fifos from one
host-side fifo split at the memtile, ``join=axis`` gathers them into one. ``a[y]`` names the
core-side fifo; ``c[x, :]`` names the host-side fifo of a split or joined group.

Example
-------
::

    a = channel(Tensor[64, 64, bf16], shape=[ROWS], via=memtile, broadcast=COLS)
    c = channel(Tensor[64, 64, f32], shape=[COLS, ROWS], via=memtile, join=1, depth=1)
    ...
    rt.fill(a[0], A, pattern)       # the host end of a[0]
    rt.drain(c[0, :], C, pattern)   # the joined host end of column 0
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import NoReturn, Sequence

from aiedsl.errors import DesignError
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import TensorType
from aiedsl.lang.context import current_design
from aiedsl.lang.described import call_text
from aiedsl.lang.fifo import DimsSpec, ObjectFifo, new_fifo, shim_coord, to_dims
from aiedsl.lang.link_parts import back_to_back
from aiedsl.lang.names import check_name
from aiedsl.lang.placement import TilePin
from aiedsl.lang.records import FifoRecord
from aiedsl.lang.trace import DesignTrace
from aiedsl.source_loc import assigned_name, caller_loc
from aiedsl.values import as_int, shown


@dataclass(eq=False)
class Channel:
    """A bundle of fifos indexed like the herd that uses it (see :func:`channel`)."""

    def __new__(cls, *args: object, **kwargs: object) -> "Channel":
        # channel() makes one for the design being traced; a design calling the class means
        # channel(...) (MLIR-AIR's air.channel is a declaration too)
        # (copy, pickle and deepcopy make one with no arguments; dataclasses.replace names
        # every field, trace too)
        if args and not isinstance(args[0], DesignTrace) or \
                not args and kwargs and "trace" not in kwargs:
            raise DesignError(
                "channel", "Channel(...) is the type channel() returns; a design declares one "
                "with channel(...)", loc=caller_loc(),
                found=f"Channel({call_text(args, kwargs)})",
                fix=f"write channel({call_text(args, kwargs)}) (from aiedsl import channel)")
        return super().__new__(cls)

    trace: DesignTrace
    name: str
    elem: TensorType
    shape: tuple[int, ...]
    via: TilePin | None
    join_axis: int | None
    """``join=``: the axis whose fifos one host-side fifo gathers, or None."""
    split_axis: int | None
    """``split=``: the axis whose fifos one host-side fifo feeds, or None."""
    broadcast: int | None
    dims_to_stream: DimsSpec
    host_depth: int
    loc: Loc
    repeat: int = 1
    fifos: dict[tuple[int, ...], ObjectFifo] = field(default_factory=dict)
    groups: dict[tuple[int, ...], ObjectFifo] = field(default_factory=dict)
    hosts: dict[tuple[int, ...], ObjectFifo] = field(default_factory=dict)

    @property
    def axis(self) -> int | None:
        """The split or join axis, if any."""
        return self.join_axis if self.join_axis is not None else self.split_axis

    def __getitem__(self, key: object) -> ObjectFifo:
        loc = caller_loc()
        items = key if isinstance(key, tuple) else (key,)
        letters = "ijkl"[:len(self.shape)]
        if len(items) != len(self.shape):
            raise DesignError(
                "channel index", f"channel '{self.name}' has {len(self.shape)} dimension(s) "
                f"{list(self.shape)} but was indexed with {len(items)}", loc=loc,
                found=self._text(items), fix=f"index it as {self.name}[{', '.join(letters)}]")
        for v in items:
            if not isinstance(v, slice) and as_int(v) is None:
                raise DesignError(
                    "channel index", f"channel '{self.name}' was indexed with {shown(v)}",
                    loc=loc, limit="ints (and ':' on a split or join axis)", found=shown(v),
                    fix=f"index it with the core's index, e.g. {self.name}[y]")
        # numpy's integers as plain ints: the index names fifos (and messages) as written
        items = tuple(v if isinstance(v, slice) else as_int(v) for v in items)
        slices = [i for i, v in enumerate(items) if isinstance(v, slice)]
        if slices:
            if self.axis is None:
                raise DesignError(
                    "channel index", f"channel '{self.name}' has no split or join, so it cannot "
                    "be sliced", loc=loc, found=self._text(items),
                    fix=f"index every dimension, e.g. {self.name}[{', '.join(letters)}]; to "
                    "gather a group of its fifos into one host fifo, declare it with join= "
                    "(outputs) or split= (inputs) and via=memtile")
            if slices != [self.axis] or items[self.axis] != slice(None):
                kind = "join" if self.join_axis is not None else "split"
                example = ", ".join(":" if i == self.axis else c for i, c in enumerate(letters))
                raise DesignError(
                    "channel index", f"'{self.name}[...]' may take ':' only on its {kind} axis "
                    f"({kind}={self.axis})", loc=loc, found=self._text(items),
                    fix=f"slice only the {kind} axis, with a plain ':', e.g. "
                    f"{self.name}[{example}]")
            group = tuple(v for i, v in enumerate(items) if i != self.axis)
            return self._checked(self.groups, group, items, loc)
        return self._checked(self.fifos, tuple(items), items, loc)

    def _checked(self, table: dict[tuple[int, ...], ObjectFifo], idx: tuple, items: tuple,
                 loc: Loc) -> ObjectFifo:
        if idx not in table:
            raise DesignError(
                "channel index", f"{self._text(items)} is outside channel '{self.name}' of shape "
                f"{list(self.shape)}", loc=loc,
                fix="index each dimension from 0 to its size - 1 ("
                + ", ".join(f"0..{n - 1}" for n in self.shape) + ")" + (
                    f"; every core a broadcast fifo reaches consumes the one index (broadcast="
                    f"{self.broadcast}: its consumers share it, not each its own)"
                    if self.broadcast is not None else ""))
        return table[idx]

    def spell(self, f: FifoRecord) -> str | None:
        """How a design writes fifo ``f`` of this channel: ``a[0]``, ``c[1, 0]`` for a core's
        fifo or a forward's host end, ``c[:]``, ``c[1, :]`` for a split's or join's host end;
        None when ``f`` is not one of its fifos."""
        for idx, g in [*self.fifos.items(), *self.hosts.items()]:
            if g is f:
                return self._text(idx)
        for group, g in self.groups.items():
            if g is f:
                return self._text(self._with_slice(group))
        return None

    def host_end(self) -> str:
        """The first of its host ends as a design writes it: ``a[:]`` (``c[0, :]``) for a split
        or join, ``a[0]`` (``a[0, 0]``) otherwise."""
        if self.axis is None:
            return self._text((0,) * len(self.shape))
        return self._text(self._with_slice((0,) * (len(self.shape) - 1)))

    def host_ends(self) -> str:
        """Every host end, for a message: ``a[:]``; ``a[0]`` to ``a[3]``; ``c[0, :]`` to
        ``c[3, :]``."""
        if self.axis is None:
            ends = [self._text(idx) for idx in self.fifos]
        else:
            ends = [self._text(self._with_slice(g)) for g in self.groups]
        return ends[0] if len(ends) == 1 else f"{ends[0]} to {ends[-1]}"

    def described(self) -> str:
        """The channel as a message names it: ``channel 'a' (shape [4], split=0)``."""
        kind = (f", split={self.split_axis}" if self.split_axis is not None else
                f", join={self.join_axis}" if self.join_axis is not None else "")
        return f"channel '{self.name}' (shape {list(self.shape)}{kind})"

    def _with_slice(self, group: tuple[int, ...]) -> tuple:
        """A group's index (the other axes') with ':' put back on the split or join axis."""
        assert self.axis is not None
        return group[:self.axis] + (slice(None),) + group[self.axis:]

    # -- what a fifo does, refused on the bundle: a core uses one of its fifos, by index ------
    def consume(self, *args: object, **kwargs: object) -> NoReturn:
        """A channel is not consumed itself: one of its fifos is (``a[y].consume()``)."""
        self._whole("consume", "consume()")

    def produce(self, *args: object, **kwargs: object) -> NoReturn:
        """A channel is not produced itself: one of its fifos is (``c[y].produce()``)."""
        self._whole("produce", "produce()")

    def acquire(self, *args: object, **kwargs: object) -> NoReturn:
        """A channel is not acquired itself: one of its fifos is (``a[y].acquire(...)``)."""
        self._whole("acquire", "acquire(...)")

    def release(self, *args: object, **kwargs: object) -> NoReturn:
        """A channel is not released itself: one of its fifos is (``a[y].release(...)``)."""
        self._whole("release", "release(...)")

    def cons(self) -> NoReturn:
        """IRON's consumer handle, on a channel: index it, and consume that fifo."""
        self._whole("cons", "consume()", "; aiedsl has no handles: `with a[y].consume() as "
                    "e:` acquires an element")

    def prod(self) -> NoReturn:
        """IRON's producer handle, on a channel: index it, and produce that fifo."""
        self._whole("prod", "produce()", "; aiedsl has no handles: `with c[y].produce() as "
                    "e:` acquires an element")

    def forward(self, *args: object, **kwargs: object) -> NoReturn:
        """A channel passes through a memtile when declared with ``via=memtile``; one of its
        fifos may be forwarded itself (``a[0].forward()``)."""
        self._whole("forward", "forward()", "; or declare the channel with via=memtile, "
                    "which passes each of its fifos through a memtile")

    def split(self, *args: object, **kwargs: object) -> NoReturn:
        """A channel splits when declared with ``split=axis``; one of its fifos may be split
        itself (``a[0].split(2)``)."""
        self._whole("split", "split(...)", "; or declare the channel with split=<axis> and "
                    f"via=memtile, whose host end ({self.name}[:]) the memtile splits into the "
                    "fifos of that axis")

    def join(self, *args: object, **kwargs: object) -> NoReturn:
        """A channel joins when declared with ``join=axis``; one of its fifos may be joined
        itself (``c[0].join(2)``)."""
        self._whole("join", "join(...)", "; or declare the channel with join=<axis> and "
                    f"via=memtile, whose host end ({self.name}[:]) the memtile joins from the "
                    "fifos of that axis")

    def _whole(self, method: str, call: str, more: str = "") -> NoReturn:
        """Refuse fifo method ``method`` called on the whole channel, naming its shape and how
        a core indexes it (``call`` is the method as the fix writes it)."""
        letters = "y" if len(self.shape) == 1 else "xy" if len(self.shape) == 2 else "ijkl"
        pairs = list(zip(letters, self.shape))
        one = f"{self.name}[{', '.join(c for c, _ in pairs)}]"
        ranges = " and ".join(f"{c} from 0 to {n - 1}" for c, n in pairs)
        total = math.prod(self.shape)
        where = f"index it by the core's index, {ranges}: {one}" if total > 1 else \
            f"index its one fifo: {self.name}[{', '.join('0' for _ in self.shape)}]"
        raise DesignError(
            "channel index", f"{self.name}.{method}() on {self.described()}, a bundle of "
            f"{total} fifo{'' if total == 1 else 's'}", loc=caller_loc(),
            limit=f"{method}() is a fifo's: a core uses the channel's fifo at its own index",
            found=f"{self.name}.{method}()",
            fix=f"{where}.{call}{more}")

    def _text(self, items: tuple) -> str:
        """An index as the user wrote it: ``c[1, :]``."""
        def one(v: object) -> str:
            if isinstance(v, slice):
                parts = ["" if x is None else str(x) for x in (v.start, v.stop)]
                return ":".join(parts) + ("" if v.step is None else f":{v.step}")
            return repr(v)
        return f"{self.name}[{', '.join(one(v) for v in items)}]"

    def materialize(self) -> None:
        """Add the memtile links once tracing tells which way data flows."""
        if self.via is None:
            return
        b = self.trace
        if self.axis is not None:
            for group, parent in self.groups.items():
                members = [self.fifos[group[:self.axis] + (i,) + group[self.axis:]]
                           for i in range(self.shape[self.axis])]
                offs = back_to_back([m.elem for m in members])
                if self.split_axis is not None:
                    b.add_link("split", [parent], members, offs, self.via, self.loc)
                else:
                    b.add_link("join", members, [parent], offs, self.via, self.loc)
            return
        for idx, f in self.fifos.items():
            host = self.hosts[idx]
            inbound = any(c.kind == "core" for c in f.consumers)
            outbound = f.producer is not None and f.producer.kind == "core"
            if inbound == outbound:
                raise DesignError(
                    "channel direction", f"{f.name} (channel '{self.name}' index {list(idx)}) "
                    + ("is both produced and consumed by cores" if inbound else
                       "is never produced or consumed by a core"), loc=self.loc,
                    fix="a channel with via=memtile carries data between the host and cores; "
                    "use each index from a core, in one direction" + (
                        " (from one core to another through a memtile, as an air.segment's L2 "
                        "buffer does: f = fifo(T); g = f.forward(), the first core producing f "
                        "and the second consuming g)" if inbound else ""))
            if inbound:
                f.dims_to_stream = to_dims(self.dims_to_stream, "dims_to_stream", self.loc)
                f.repeat = self.repeat
                b.add_link("forward", [host], [f], [], self.via, self.loc)
            else:
                host.dims_to_stream = to_dims(self.dims_to_stream, "dims_to_stream", self.loc)
                host.repeat = self.repeat
                b.add_link("forward", [f], [host], [], self.via, self.loc)

    def check_broadcast(self) -> None:
        """Every fifo has the declared number of consumers."""
        if self.broadcast is None:
            return
        for idx, f in self.fifos.items():
            n = sum(1 for c in f.consumers if c.kind == "core")
            if n != self.broadcast:
                raise DesignError(
                    "broadcast", f"{f.name} (channel '{self.name}' index {list(idx)}) is "
                    f"consumed by {n} core(s), but the channel declares broadcast="
                    f"{self.broadcast}", loc=self.loc, limit=f"{self.broadcast} consumers",
                    found=f"{n}: " + ", ".join(c.core for c in f.consumers
                                               if c.kind == "core" and c.core),
                    fix="make every core that should receive it consume it, or correct "
                    "broadcast=")


def channel(elem: TensorType, shape: Sequence[int] = (1,), *, depth: int = 2,
            via: TilePin | None = None, split: int | None = None, join: int | None = None,
            broadcast: int | None = None, dims_to_stream: DimsSpec = None,
            dims_from_stream: DimsSpec = None, host_depth: int | None = None,
            name: str | None = None, repeat: int = 1,
            shim: TilePin | None = None) -> Channel:
    """Declare a channel: ``prod(shape)`` fifos of ``elem``, one per index, indexed like the
    herd that uses it (MLIR-AIR's ``air.channel``).

    A core uses the fifo at its own index, ``with a[y].consume() as t:`` (``c[x, y].produce()``
    for a 2-D shape); every core that consumes ``a[y]`` gets the same elements (a broadcast).
    The host moves a channel's data through its host ends: ``rt.fill(a[i], A)`` fills core
    fifo ``a[i]`` (through a memtile with ``via=memtile``, else from the shim directly). With
    ``split=axis`` the memtile splits one host fifo into the fifos along that axis: fill it as
    ``a[:]`` (``a[i, :]`` for 2-D, ':' on the axis). With ``join=axis`` it joins them: cores
    produce ``c[y]``, the host drains ``c[:]``.

    Example::

        a = channel(Tensor[1024, bf16], shape=[4], via=memtile, split=0)   # host -> 4 cores
        c = channel(Tensor[1024, bf16], shape=[4], via=memtile, join=0)    # 4 cores -> host

        @herd(cols=1, rows=4)
        def core(x, y):
            with a[y].consume() as ta, c[y].produce() as tc:
                k(ta, tc)

        with runtime() as rt:
            rt.fill(a[:], A)
            rt.drain(c[:], C)

    Parameters
    ----------
    elem: element type each core sees.
    shape: how the channel is indexed (``[ROWS]``, ``[COLS, ROWS]``).
    depth: buffers per core-side endpoint (1 = single, 2 = double buffering).
    via: ``memtile`` (or ``memtile(col)``) to pass through L2; ``None`` for direct shim <-> core.
    split, join: axis of ``shape`` whose fifos share one host-side fifo, split or joined at the
        memtile, back to back in index order.
    broadcast: the number of cores each fifo must reach (checked).
    dims_to_stream: n-d layout the memtile applies as it sends (``[(size, stride), ...]``);
        without ``via``, the producing core's DMA (a host-filled channel has no layout
        transform: shim endpoints take none).
    dims_from_stream: n-d layout the core's DMA applies as it receives.
    host_depth: buffers of the memtile side, whichever way the data goes: by default
        ``depth``, or 2 where ``depth`` is 1 (given, ``host_depth=1`` single-buffers it).
    repeat: times the memtile sends each of its buffers (mlir-aie's ``repeat_count``; MLIR-AIR's
        L2 reuse: a put in a loop over one L2 buffer): each core takes ``repeat`` times what
        the host fills. A channel without ``via`` or with ``join`` cannot (``check`` says why).
    shim: ``shim(col)`` pins every host end of the channel to that column's shim tile (IRON's
        ``rt.fill(..., placement=Tile(col, 0))``); without it aiedsl chooses the columns.
    """
    loc = caller_loc()
    b = current_design("channel(...)")
    name = check_name(b.fresh_name(assigned_name("channel") or "chan") if name is None else name,
                      "channel name", loc)
    sizes = [as_int(s) for s in shape] if isinstance(shape, (list, tuple)) else []
    if not sizes or any(s is None or s < 1 for s in sizes):
        raise DesignError("channel", f"channel '{name}' has shape={shown(shape)}", loc=loc,
                          limit="a list of positive ints", found=shown(shape),
                          fix="give positive integer sizes, e.g. shape=[4]")
    shape = tuple(s for s in sizes if s is not None)  # plain ints (numpy's given too)
    if math.prod(shape) > b.target.max_fifos:  # before one fifo per index is made
        raise DesignError("channel", f"channel '{name}' has shape {list(shape)}: "
                          f"{math.prod(shape)} fifos", loc=loc,
                          limit=f"at most {b.target.max_fifos}: more fifos than "
                          f"{b.target.name} has DMA channels", found=str(math.prod(shape)),
                          fix="index the channel like the herd that uses it (shape=[ROWS] or "
                          "[COLS, ROWS])")
    if not isinstance(elem, TensorType):
        raise DesignError("channel", f"channel '{name}' carries {shown(elem)}", loc=loc,
                          limit="a Tensor[...] element type", found=shown(elem),
                          fix="write e.g. channel(Tensor[64, 64, bf16], shape=[4])")
    if via is not None and not (isinstance(via, TilePin) and via.kind == "memtile"):
        raise DesignError("channel", f"channel '{name}' has via={via!r}", loc=loc,
                          limit="via=memtile or via=memtile(col)", found=repr(via),
                          fix="pass through a memtile with via=memtile, or leave via out")
    axes: list[int | None] = []
    for what, axis in (("split", split), ("join", join)):
        number = None if axis is None else as_int(axis)
        if axis is not None and (number is None or not 0 <= number < len(shape)):
            raise DesignError("channel", f"{what}={shown(axis)} is not an axis of channel "
                              f"'{name}' with shape {list(shape)}", loc=loc,
                              fix=f"use an axis 0..{len(shape) - 1}")
        axes.append(number)
    split, join = axes
    if broadcast is not None:
        cores = as_int(broadcast)
        if cores is None or cores < 1:
            raise DesignError("broadcast", f"channel '{name}' has broadcast={shown(broadcast)}",
                              loc=loc, limit="a number of cores: an int >= 1",
                              found=shown(broadcast), fix="give the number of cores that "
                              "consume each fifo, e.g. broadcast=4, or leave broadcast out")
        broadcast = cores
    if split is not None and join is not None:
        raise DesignError("channel", f"channel '{name}' has both split= and join=", loc=loc,
                          fix="a channel carries data one way: use split for inputs, join for "
                          "outputs")
    if (split is not None or join is not None) and via is None:
        raise DesignError("channel", f"channel '{name}' splits or joins without a memtile",
                          loc=loc, fix="add via=memtile")
    if host_depth is not None and via is None:
        raise DesignError("channel", f"channel '{name}' has host_depth={host_depth} without a "
                          "memtile", loc=loc, limit="host_depth= sets the buffers of the "
                          "memtile side; a channel without via= has none",
                          found=f"host_depth={host_depth}",
                          fix="add via=memtile, or leave host_depth out (depth= sets the core "
                          "side's buffers)")
    pin = None if shim is None else shim_coord(shim, f"channel '{name}'", b.target.shim_row,
                                                loc)
    depth = b.check_depth(f"channel '{name}'", "depth", depth, loc)
    if host_depth is not None:
        host_depth = b.check_depth(f"channel '{name}'", "host_depth", host_depth, loc)
    times = b.check_repeat(f"channel '{name}'", repeat, loc)
    ch = Channel(b, name, elem, shape, via, join, split, broadcast, dims_to_stream,
                 max(depth, 2) if host_depth is None else host_depth, loc, repeat=times)
    for idx in itertools.product(*(range(s) for s in shape)):
        suffix = "_".join(map(str, idx))
        # without a memtile the fifo's own producer sends: a core's DMA applies the layout (as
        # fifo(dims_to_stream=) does; a shim producer is refused by the DMA check)
        f = new_fifo(b, elem, depth=depth, name=f"{name}_{suffix}", loc=loc,
                       dims_from_stream=dims_from_stream,
                       dims_to_stream=dims_to_stream if via is None else None)
        f.channel, f.index = name, idx
        # the repeat goes on the fifo the memtile sends: a split's parts, or (materialize) the
        # core side of a forward in and the host side of one out; without a memtile, on the
        # fifo itself, whose producer (the shim or a core) check refuses to repeat
        if via is None or split is not None:
            f.repeat = times
        ch.fifos[idx] = f
        if via is not None and ch.axis is None:
            flat = TensorType(shape=(elem.numel,), dtype=elem.dtype)
            ch.hosts[idx] = new_fifo(b, flat, depth=ch.host_depth, name=f"{name}_l3_{suffix}",
                                       loc=loc)
        host = f if via is None else ch.hosts.get(idx)
        if host is not None:
            host.shim_pin = pin
        if via is not None and ch.axis is None and host_depth is not None:
            # drained, the cores' fifo owns the memtile's buffers (the forward's input, on a
            # tie of sizes): its memtile end takes host_depth, as a fill's host fifo does
            f.memtile_depth = host_depth
    if ch.axis is not None:
        rest = [s for i, s in enumerate(shape) if i != ch.axis]
        for group in itertools.product(*(range(s) for s in rest)):
            numel = elem.numel * shape[ch.axis]
            parent = new_fifo(
                b, TensorType(shape=(numel,), dtype=elem.dtype), depth=ch.host_depth,
                name=f"{name}_l3" + "".join(f"_{g}" for g in group), loc=loc,
                dims_to_stream=dims_to_stream if join is not None else None)
            parent.shim_pin = pin
            if join is not None:
                parent.repeat = times  # the memtile sends the joined element (checked)
            ch.groups[group] = parent
        if split is not None:
            for f in ch.fifos.values():
                f.dims_to_stream = to_dims(dims_to_stream, "dims_to_stream", loc)
    b.channels.append(ch)
    return ch
