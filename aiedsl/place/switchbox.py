"""mlir-aie's model of the AIE2 stream switches, as its router sees them.

The router (:mod:`aiedsl.place.pathfinder`) works on ports, not on tiles: a stream enters a
tile's switch on a slave port, crosses it to a master port, and rides the wire to the port of
the same index on the neighbour. Which ports a switch has and which it may connect are the
target model's (``AIE2TargetModel::getNumSourceSwitchboxConnections``,
``getNumDestSwitchboxConnections``, ``getNumSourceShimMuxConnections``,
``getNumDestShimMuxConnections`` and ``isLegalTileConnection`` in ``lib/Dialect/AIE/IR/
AIETargetModel.cpp``); how the router builds its graph from them is ``Pathfinder::initialize``
in ``lib/Dialect/AIE/Transforms/AIEPathFinder.cpp``. npu1 and npu2 share these numbers.

Two quirks of that graph are kept because they decide which of several equally short routes
the router takes:

* a shim tile's switch also lists the shim mux's ports (DMA, NOC, PLIO) where it has none of
  its own, and may connect them to anything (the router's "workaround for shimMux"); the
  lowering then moves those connections into the ``aie.shim_mux`` (:data:`MUX_FROM`,
  :data:`MUX_TO`);
* a port is one node whether a stream arrives on it or leaves by it, so the search sees every
  port of every bundle the switch has, masters and slaves alike.

Example
-------
>>> from aiedsl.targets import get_target
>>> m = SwitchModel.of(get_target("npu1_1col"))
>>> m.masters((0, 1), "South"), m.slaves((0, 1), "South")
(4, 6)
>>> m.legal((0, 1), ("South", 4), ("DMA", 0)), m.legal((0, 1), ("South", 4), ("North", 3))
(True, False)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from aiedsl.targets import TargetModel

Coord = tuple[int, int]
Port = tuple[str, int]

BUNDLES = ("Core", "DMA", "FIFO", "South", "West", "North", "East", "PLIO", "NOC", "Trace",
           "TileControl")
"""mlir-aie's ``WireBundle`` enum in its numeric order (``AIEAttrs.td``): the router sorts ports
by (bundle number, channel), and that order breaks its ties."""
RANK = {b: i for i, b in enumerate(BUNDLES)}

STEP = {"North": (0, 1), "South": (0, -1), "East": (1, 0), "West": (-1, 0)}
FACING = {"North": "South", "South": "North", "East": "West", "West": "East"}
"""The bundle a wire arrives on at the neighbour: master North 2 feeds slave South 2 above."""

MUX_FROM = {("DMA", 0): 3, ("DMA", 1): 7}
"""A shim DMA channel sending (MM2S) enters the switch through the mux at South 3 or 7
(``AIECreatePathFindFlows.cpp``: "must be either DMA0 -> N3 or DMA1 -> N7")."""
MUX_TO = {("DMA", 0): 2, ("DMA", 1): 3}
"""A shim DMA channel receiving (S2MM) is fed by the switch's South 2 or 3 through the mux."""

SHIM_CONTROLLER_ID = 15
"""Packet id of a shim tile's controller (``controller_id``), which names the control packet
flow of its column: ``AIETargetModel::getTileToControllerIdMap`` with column-wise unique ids,
as ``aie-assign-tile-controller-ids`` runs it (15 on every shim of every fixture)."""

_MUX_BUNDLES = ("DMA", "NOC", "PLIO")


@dataclass(frozen=True)
class SwitchModel:
    """The stream switches of one device, with mlir-aie's port counts and connection rules."""

    cols: int
    rows: int
    """mlir-aie's ``rows()``: every row, the shim row included."""
    memtile_rows: tuple[int, ...]

    @staticmethod
    def of(target: TargetModel) -> SwitchModel:
        """The model of ``target`` (cached: it is immutable)."""
        return _model(target.cols, target.shim_row, target.memtile_rows, target.core_rows)

    def kind(self, tile: Coord) -> str:
        """"shim", "memtile" or "core" (mlir-aie's ``isShimNOCTile``/``isMemTile``/...)."""
        return "shim" if tile[1] == 0 else "memtile" if tile[1] in self.memtile_rows else "core"

    def signature(self, tile: Coord) -> tuple[str, bool, bool, bool]:
        """What a tile's port counts and connection rules depend on: its kind and which array
        edges it is on (west, east, top). Tiles with one signature have one switch."""
        return (self.kind(tile), tile[0] == 0, tile[0] == self.cols - 1,
                tile[1] == self.rows - 1)

    def tiles(self) -> list[Coord]:
        """Every tile, in mlir-aie's (col, row) order."""
        return [(c, r) for c in range(self.cols) for r in range(self.rows)]

    def masters(self, tile: Coord, bundle: str) -> int:
        """Master (outgoing) ports of ``bundle``; on a shim the mux's where the switch has none."""
        n = _dest(self, tile, bundle)
        if n == 0 and self.kind(tile) == "shim":
            n = _MUX_DEST.get(bundle, 0)
        return n

    def slaves(self, tile: Coord, bundle: str) -> int:
        """Slave (incoming) ports of ``bundle``; on a shim the mux's where the switch has none."""
        n = _source(self, tile, bundle)
        if n == 0 and self.kind(tile) == "shim":
            n = _MUX_SOURCE.get(bundle, 0)
        return n

    def legal(self, tile: Coord, src: Port, dst: Port) -> bool:
        """May the switch of ``tile`` connect slave ``src`` to master ``dst``? A shim connects
        its mux's ports to anything (the router's workaround)."""
        if _legal(self, tile, src, dst):
            return True
        return self.kind(tile) == "shim" and (src[0] in _MUX_BUNDLES or dst[0] in _MUX_BUNDLES)

    def connections(self, tile: Coord) -> tuple[list[Port], list[Port], list[list[Port]]]:
        """The slave and master ports of ``tile``'s switch (by bundle number, then channel, the
        mux's on a shim included) and, per slave, the masters it may connect to, in order: what
        :meth:`legal` says of every pair, worked out a slave at a time."""
        kind = self.kind(tile)
        shim = kind == "shim"
        slaves = [(b, c) for b in BUNDLES for c in range(self.slaves(tile, b))]
        masters = [(b, c) for b in BUNDLES for c in range(self.masters(tile, b))]
        own_src = {b: _source(self, tile, b) for b in BUNDLES}
        own_dst = {b: _dest(self, tile, b) for b in BUNDLES}
        outs = []
        for sb, sc in slaves:
            if shim and sb in _MUX_BUNDLES:
                outs.append(list(masters))
                continue
            real = sc < own_src[sb]
            outs.append([(db, dc) for db, dc in masters if (
                real and dc < own_dst[db] and _rule(kind, sb, sc, db, dc)) or (
                shim and db in _MUX_BUNDLES)])
        return slaves, masters, outs


@cache
def _model(cols: int, shim_row: int, memtile_rows: tuple[int, ...], core_rows: tuple[int, ...]
           ) -> SwitchModel:
    assert shim_row == 0, "mlir-aie's AIE2 devices have the shim row at the bottom"
    return SwitchModel(cols=cols, rows=max(shim_row, *memtile_rows, *core_rows) + 1,
                       memtile_rows=memtile_rows)


_MUX_DEST = {"DMA": 2, "NOC": 4, "PLIO": 6, "South": 8}
_MUX_SOURCE = {"DMA": 2, "NOC": 4, "PLIO": 8, "South": 6}


_MEMTILE_DEST = {"DMA": 6, "North": 6, "South": 4, "TileControl": 1}
_SHIM_DEST = {"FIFO": 1, "North": 6, "South": 6, "TileControl": 1}
_CORE_DEST = {"Core": 1, "DMA": 2, "FIFO": 1, "South": 4, "TileControl": 1}
_MEMTILE_SOURCE = {"DMA": 6, "North": 4, "South": 6, "Trace": 1, "TileControl": 1}
_SHIM_SOURCE = {"FIFO": 1, "North": 4, "South": 8, "Trace": 1, "TileControl": 1}
_CORE_SOURCE = {"Core": 1, "DMA": 2, "FIFO": 1, "South": 6, "Trace": 2, "TileControl": 1}
"""Port counts per bundle of each tile kind, but those that depend on the array's edges (a
shim's or core's West and East, a core's North), which :func:`_dest` and :func:`_source` add."""


def _dest(m: SwitchModel, tile: Coord, bundle: str) -> int:
    """``AIE2TargetModel::getNumDestSwitchboxConnections``."""
    kind = m.kind(tile)
    if kind == "memtile":
        return _MEMTILE_DEST.get(bundle, 0)
    if bundle == "West":
        return 0 if tile[0] == 0 else 4
    if bundle == "East":
        return 0 if tile[0] == m.cols - 1 else 4
    if kind == "shim":
        return _SHIM_DEST.get(bundle, 0)
    if bundle == "North":
        return 0 if tile[1] == m.rows - 1 else 6
    return _CORE_DEST.get(bundle, 0)


def _source(m: SwitchModel, tile: Coord, bundle: str) -> int:
    """``AIE2TargetModel::getNumSourceSwitchboxConnections``."""
    kind = m.kind(tile)
    if kind == "memtile":
        return _MEMTILE_SOURCE.get(bundle, 0)
    if bundle == "West":
        return 0 if tile[0] == 0 else 4
    if bundle == "East":
        return 0 if tile[0] == m.cols - 1 else 4
    if kind == "shim":
        return _SHIM_SOURCE.get(bundle, 0)
    if bundle == "North":
        return 0 if tile[1] == m.rows - 1 else 4
    return _CORE_SOURCE.get(bundle, 0)


_CARDINAL = ("South", "West", "North", "East")


def _legal(m: SwitchModel, tile: Coord, src: Port, dst: Port) -> bool:
    """``AIE2TargetModel::isLegalTileConnection``: the switch's own rules, ports in range."""
    (sb, sc), (db, dc) = src, dst
    if sc >= _source(m, tile, sb) or dc >= _dest(m, tile, db):
        return False
    return _rule(m.kind(tile), sb, sc, db, dc)


def _rule(kind: str, sb: str, sc: int, db: str, dc: int) -> bool:
    """The rules of ``isLegalTileConnection`` for ports the switch has."""
    if kind == "memtile":
        if sb == "DMA":
            return dc == sc if db == "DMA" else db in ("TileControl", "South", "North")
        if sb == "TileControl":
            return dc == 5 if db == "DMA" else db in ("South", "North")
        if sb in ("South", "North"):
            if db in ("DMA", "TileControl"):
                return True
            return db in ("South", "North") and sc == dc
        if sb == "Trace":
            return dc == 5 if db == "DMA" else db == "South"
        return False
    if kind == "shim":
        outs = ("TileControl", "FIFO", "South", "West", "North", "East")
        if sb == "TileControl":
            return db != "TileControl"
        if sb in ("FIFO", "South"):
            return db in outs
        if sb in ("West", "North", "East"):
            return sc == dc if sb == db else db in outs
        if sb == "Trace":
            return db in ("FIFO", "South") or (db in ("West", "East") and dc == 0)
        return False
    if sb in ("DMA", "FIFO", *_CARDINAL):
        if db in ("Core", "DMA", "TileControl", "FIFO", *_CARDINAL):
            return sc == dc if sb == db else True
        return False
    if sb == "Core":
        return db != "Core"
    if sb == "TileControl":
        return db not in ("TileControl", "DMA")
    if sb == "Trace":
        return dc == 0 if db == "DMA" else db in ("FIFO", "South")
    return False
