"""Dataflow in the design IR: object fifos, their endpoints, and the links that pass elements
from fifo to fifo through a memtile or a core tile's memory."""

from __future__ import annotations

from typing import Literal

from pydantic import SerializerFunctionWrapHandler, model_serializer

from aiedsl.ir.base import Coord, _Node
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import Dim, TensorType

TileKind = Literal["shim", "memtile", "core"]
EndpointKind = Literal["shim", "memtile", "core", "coretile"]
"""Who moves an endpoint's elements: the host (``shim``), a link's DMA in a memtile or in a core
tile's memory (``memtile``, ``coretile``), or a core program (``core``)."""


class Endpoint(_Node):
    """One end of a fifo: who produces or consumes its elements, and where."""

    kind: EndpointKind
    """Shim (host memory), a link in a memtile (L2) or in a core tile (L1), or a core program."""
    core: str | None = None
    """For ``kind == "core"``: the core's name (``"core[0,1]"``)."""
    tile: Coord | None = None
    """(col, row) once placed; set by the user when pinned."""
    depth: int
    """Buffers this endpoint holds (double buffering = 2)."""
    dims: tuple[Dim, ...] = ()
    """``dimensionsToStream`` on a producer, ``dimensionsFromStream`` on a consumer."""
    loc: Loc
    """Where this endpoint was established (the acquire, fill, drain or link)."""

    @property
    def tile_kind(self) -> TileKind:
        """The kind of tile this end is on (a ``coretile`` link end is on a core tile)."""
        return "core" if self.kind == "coretile" else self.kind

    @property
    def is_link_end(self) -> bool:
        """True for the end a link's DMA moves (in a memtile or a core tile)."""
        return self.kind in ("memtile", "coretile")

    def label(self) -> str:
        """How reports name this endpoint: ``core[0,1] (0,3)``, ``memtile (1,1)``, ``shim``."""
        name = {"core": self.core, "coretile": "core tile"}.get(self.kind, self.kind)
        return f"{name} {self.tile}" if self.tile else str(name)


class Fifo(_Node):
    """An object fifo: one producer, one or more consumers (broadcast), elements of one type."""

    name: str
    """Its name, which the ``aie.objectfifo`` in the MLIR takes as its symbol."""
    elem: TensorType
    """One element's shape and element type: what one acquire hands a core."""
    producer: Endpoint
    """Where its elements come from."""
    consumers: tuple[Endpoint, ...]
    """Where they go, one end each (more than one: a broadcast)."""
    loc: Loc
    """Where the fifo (or the channel it belongs to) was declared."""
    channel: str | None = None
    """The channel this fifo belongs to, when it was made by ``channel(...)``."""
    index: tuple[int, ...] = ()
    """Its index in that channel (``(1, 2)`` for ``c[1, 2]``)."""
    repeat: int = 1
    """How many times its producer's DMA sends each element (mlir-aie's ``repeat_count``): a
    memtile (or a core tile's link) sends every buffer this many times in a row without
    receiving it again, so each consumer takes ``repeat`` times what is sent in. 1: once.
    ``design.json`` leaves it out when it is 1."""
    depths_given: bool = False
    """Its consumers' depths were given (``consumer_depth=``), even as the producer's: the
    objectfifo then takes them as a list, each end holding what it was given. ``design.json``
    leaves it out when False."""

    @property
    def depth_per_end(self) -> bool:
        """Whether its ends were given depths of their own (``consumer_depth=``): mlir-aie's
        objectfifo then takes a list of depths, and a core's end across a DMA holds its own;
        with one depth for every end, such an end holds its largest acquire + 1 buffers
        (``findObjectFifoSize``). A ``consumer_depth=`` equal to ``depth`` is a list too (a
        tester: ``depth=2, consumer_depth=2`` taken two at a time got 3 buffers, not 2)."""
        return self.depths_given or any(c.depth != self.producer.depth for c in self.consumers)

    @model_serializer(mode="wrap")
    def _without_default_repeat(self, handler: SerializerFunctionWrapHandler
                                ) -> dict[str, object]:
        # design.json of a fifo sent once is what it was before `repeat` existed
        out: dict[str, object] = handler(self)
        if self.repeat == 1:
            out.pop("repeat", None)
        if not self.depths_given:
            out.pop("depths_given", None)
        return out


class Link(_Node):
    """A link: ``forward`` (1 -> 1), ``split`` (1 -> n at offsets), ``join`` (n -> 1).

    Links go through a memtile; a ``forward`` may also go through a core tile's memory
    (``via="core"``), which mlir-aie allows for 1 -> 1 links only (``ObjectFifoLinkOp::verify``:
    join and distribute are unavailable on compute or shim tiles).
    """

    kind: Literal["forward", "split", "join"]
    """``forward`` (one fifo to one), ``split`` (one to several) or ``join`` (several to one)."""
    srcs: tuple[str, ...]
    """The fifos it takes elements from (several for a join)."""
    dsts: tuple[str, ...]
    """The fifos it hands them on to (several for a split)."""
    offsets: tuple[int, ...] = ()
    """Element offsets into the parent: of each dst for a split, of each src for a join."""
    via: Literal["memtile", "core"] = "memtile"
    """The kind of tile whose memory holds the link's buffers."""
    tile: Coord | None = None
    """(col, row) of that tile once placed, or as pinned."""
    loc: Loc
    """Where it was declared: the ``forward``, ``split`` or ``join`` call, or the ``channel`` with
    ``via=``."""
