"""The physical part of the design IR: what allocation and routing decided for each tile.

Placement fills in tiles; :func:`aiedsl.place.allocate` and :func:`aiedsl.place.route` then
record, per tile, the DMA channels, buffer descriptors, locks and buffer addresses, and per fifo
the stream-switch connections its data takes. Names follow mlir-aie's objectfifo lowering
(``a_0_cons_buff_1``, ``a_0_cons_prod_lock``) so a reader can match them with ``aiecc``'s output.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from aiedsl.ir.loc import Loc

Coord = tuple[int, int]
Bundle = Literal["DMA", "North", "South", "East", "West"]


class _Node(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DmaChannel(_Node):
    """One DMA channel of a tile and the fifo endpoint that owns it."""

    tile: Coord
    direction: Literal["S2MM", "MM2S"]
    """S2MM writes a stream into memory (an input); MM2S reads memory into a stream."""
    channel: int
    fifo: str
    bds: tuple[int, ...]
    """Buffer descriptor ids of its chain (empty on a shim: runtime transfers take those)."""
    loc: Loc


class BufferAlloc(_Node):
    """One buffer in a tile's data memory."""

    tile: Coord
    name: str
    nbytes: int
    address: int
    bank: int
    fifo: str | None = None
    """The fifo it belongs to (None for a core's stack)."""


class LockAlloc(_Node):
    """One hardware lock and its initial value (producer locks start at the depth)."""

    tile: Coord
    id: int
    name: str
    init: int
    fifo: str


class Connect(_Node):
    """One connection inside a tile's stream switch: slave port -> master port.

    The same index names both ends of a wire: master ``North 2`` of tile (0, 1) feeds slave
    ``South 2`` of tile (0, 2), as in mlir-aie's ``aie.switchbox`` connections.
    """

    tile: Coord
    src: tuple[Bundle, int]
    dst: tuple[Bundle, int]


class Route(_Node):
    """The circuit-switched path of one fifo's stream: a tree when it broadcasts."""

    fifo: str
    src: Coord
    """Tile of the sending DMA (MM2S)."""
    dsts: tuple[Coord, ...]
    """Tiles of the receiving DMAs (S2MM), one per consumer."""
    wires: tuple[tuple[Coord, Coord, int], ...]
    """Every tile-to-tile wire used: (from, to, port index), in tree order from the source."""
    connects: tuple[Connect, ...]
    """The switch connections the wires imply, tile by tile."""


class Physical(_Node):
    """Everything allocation and routing decided."""

    channels: tuple[DmaChannel, ...] = ()
    buffers: tuple[BufferAlloc, ...] = ()
    locks: tuple[LockAlloc, ...] = ()
    routes: tuple[Route, ...] = ()
    shared: dict[str, Coord] = {}
    """Fifos between neighbouring cores that live in shared memory (no DMA, no route): the tile
    whose memory holds their buffers."""
