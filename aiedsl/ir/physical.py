"""The physical part of the design IR: what allocation and routing decided for each tile.

Placement fills in tiles; :func:`aiedsl.place.allocate` and :func:`aiedsl.place.route` then
record, per tile, the DMA channels, buffer descriptors, locks and buffer addresses, and per fifo
the stream-switch connections its data takes. Allocation reproduces mlir-aie's own lowering
(:mod:`aiedsl.place.objectfifo`), so names, ids and addresses are those of ``aiecc``'s output
(``a_0_cons_buff_1``, ``a_0_cons_prod_lock_0``, ``bd_id``, ``address``, ``mem_bank``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from aiedsl.ir.field_docs import describe_fields
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import Dim

Coord = tuple[int, int]
Bundle = Literal["DMA", "North", "South", "East", "West", "Core", "FIFO", "Trace", "Ctrl",
                 "TileControl", "PLIO", "NOC"]
"""mlir-aie's WireBundle names (a stream switch port kind)."""


class _Node(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_extra=describe_fields)


class Bd(_Node):
    """One buffer descriptor of a DMA channel's chain, as mlir-aie's ``aie.dma_bd`` with the
    lock operations around it."""

    id: int
    """Its buffer descriptor id on the tile (mlir-aie's ``bd_id``)."""
    buffer: str
    """The buffer it moves (its symbol, ``a_0_cons_buff_1``)."""
    offset: int
    """First element of the buffer it moves."""
    length: int
    """Elements it moves."""
    dims: tuple[Dim, ...] = ()
    """The address generator's dimensions (sizes and strides in elements), outermost first."""
    next: int | None = None
    """The BD the channel goes on to (None: the chain ends)."""
    acquire: tuple[str, int] | None = None
    """(lock, value) the DMA acquires (greater-or-equal) before moving the buffer."""
    release: tuple[str, int] | None = None
    """(lock, value) it releases after."""


class DmaChannel(_Node):
    """One DMA channel of a tile and the fifo endpoint that owns it.

    ``fifo`` is the aiedsl fifo whose stream the channel sends or receives (a memtile link's
    input channel carries the input fifo even when its BDs move the output's buffers): the
    router finds each stream's ends by it."""

    tile: Coord
    """(col, row) of the tile whose DMA it is."""
    direction: Literal["S2MM", "MM2S"]
    """S2MM writes a stream into memory (an input); MM2S reads memory into a stream."""
    channel: int
    """Its index among the tile's channels of that direction."""
    fifo: str
    """The fifo whose stream it carries (see above)."""
    bds: tuple[int, ...]
    """Buffer descriptor ids of its chain (empty on a shim: runtime transfers take those)."""
    loc: Loc | None = None
    """The design-file line of the fifo end it serves (None when read back from a real
    mlir-aie lowering, which has no design file)."""
    chain: tuple[Bd, ...] = ()
    """The BDs in the order the channel starts them (the first is the channel's start)."""


class BufferAlloc(_Node):
    """One buffer in a tile's data memory."""

    tile: Coord
    """The tile whose data memory holds it."""
    name: str
    """Its symbol (``aie.buffer``)."""
    nbytes: int
    """Its size in bytes."""
    address: int
    """Its first byte in that tile's data memory."""
    bank: int
    """The bank mlir-aie's bank-aware allocation put it in. When a tile falls back to laying
    its buffers out one after the other, mlir-aie records no bank; aiedsl gives the bank the
    buffer starts in."""
    fifo: str | None = None
    """The fifo it belongs to (None for a core's stack, a runtime-parameter buffer or a copy of a
    core-local buffer)."""


class LockAlloc(_Node):
    """One hardware lock and its initial value: a producer lock starts at the number of buffers
    it guards (0 on a shim, which holds none), a consumer lock at 0."""

    tile: Coord
    """(col, row) of the tile it is on."""
    id: int
    """The lock's number on its tile."""
    name: str
    """Its symbol (``aie.lock``)."""
    init: int
    """Its value when the design starts."""
    fifo: str
    """The fifo it belongs to ("" for a runtime barrier's lock)."""


class Connect(_Node):
    """One connection inside a tile's stream switch: slave port -> master port.

    The same index names both ends of a wire: master ``North 2`` of tile (0, 1) feeds slave
    ``South 2`` of tile (0, 2), as in mlir-aie's ``aie.switchbox`` connections.
    """

    tile: Coord
    """(col, row) of the tile whose switch it is in."""
    src: tuple[Bundle, int]
    """The slave port the stream arrives on (bundle, channel)."""
    dst: tuple[Bundle, int]
    """The master port it leaves by (bundle, channel)."""
    switch: Literal["switchbox", "shim_mux"] = "switchbox"
    """Which switch: a tile's stream switch, or a shim tile's mux between its DMA and its
    switch (mlir-aie's ``aie.shim_mux``: shim DMA channel 0 enters the switch at South 3,
    channel 1 at South 7, and leaves it from South 2 and 3)."""
    rule: tuple[int, int] | None = None
    """For a packet-switched connection: ``(mask, value)`` of the packet rule that sends the
    packets arriving on ``src`` out by ``dst`` (mlir-aie's ``aie.rule(mask, value, %amsel)`` in
    the ``aie.packet_rules`` of ``src``, with a ``aie.masterset`` of ``dst`` naming that amsel):
    a packet takes it when its id ANDed with the mask is the value, and no earlier rule of the
    port matched. None for a circuit-switched connection (``aie.connect``). ``design.json``
    leaves it out when it is None."""

    @model_serializer(mode="wrap")
    def _without_circuit_rule(self, handler: SerializerFunctionWrapHandler
                              ) -> dict[str, object]:
        # design.json of a circuit connection is what it was before packet rules were read
        out: dict[str, object] = handler(self)
        if self.rule is None:
            out.pop("rule", None)
        return out


class PacketFlow(_Node):
    """A packet-switched flow (mlir-aie ``aie.packet_flow``): streams sharing ports by id."""

    id: int
    """The packet id its packets carry."""
    src: tuple[Coord, Bundle, int]
    """(tile, port bundle, channel) that sends."""
    dsts: tuple[tuple[Coord, Bundle, int], ...]
    """(tile, port bundle, channel) of each receiver."""
    keep_pkt_header: bool = False
    """Whether the receivers keep each packet's header (mlir-aie's ``keep_pkt_header``)."""
    priority_route: bool = False
    """Routed before the other flows (mlir-aie's ``priority_route``)."""


class Route(_Node):
    """The path of one fifo's stream: a tree when it broadcasts."""

    fifo: str
    """The fifo whose stream it is."""
    src: Coord
    """Tile of the sending DMA (MM2S)."""
    dsts: tuple[Coord, ...]
    """Tiles of the receiving DMAs (S2MM), one per consumer."""
    wires: tuple[tuple[Coord, Coord, int], ...]
    """Every tile-to-tile wire used: (from, to, port index), in tree order from the source."""
    connects: tuple[Connect, ...]
    """The switch connections the wires imply, tile by tile."""
    packet_id: int | None = None
    """Its packet id when the design's streams are packet-switched (``flows="packet"``)."""


class Physical(_Node):
    """Everything allocation and routing decided."""

    channels: tuple[DmaChannel, ...] = ()
    """In the order mlir-aie creates them: fifo by fifo, the producer's, then each consumer's."""
    buffers: tuple[BufferAlloc, ...] = ()
    """Tile by tile: a core's stack first, then the buffers in the order they were placed
    (largest first)."""
    locks: tuple[LockAlloc, ...] = ()
    """In the order mlir-aie creates them (per tile, that is the order of their ids)."""
    routes: tuple[Route, ...] = ()
    """One per fifo stream through the switches."""
    packet_flows: tuple[PacketFlow, ...] = ()
    """Packet flows, such as the control overlay mlir-aie adds to every shim column."""
    shared: dict[str, Coord] = {}
    """Fifos between neighbouring cores that live in shared memory (no DMA, no route): the tile
    whose memory holds their buffers."""
