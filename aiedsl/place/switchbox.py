"""mlir-aie's model of the AIE2 stream switches, as its router sees them.

The router (:mod:`aiedsl.place.pathfinder`) works on ports, not on tiles: a stream enters a
tile's switch on a slave port, crosses it to a master port, and rides the wire to the port of
the same index on the neighbour. Which ports a switch has and which it may connect are the
target model's (``AIE2TargetModel::getNumSourceSwitchboxConnections``,
``getNumDestSwitchboxConnections``, ``getNumSourceShimMuxConnections``,
``getNumDestShimMuxConnections`` and ``isLegalTileConnection`` in ``lib/Dialect/AIE/IR/
AIETargetModel.cpp``); how the router builds its graph from them is ``Pathfinder::initialize``
in ``lib/Dialect/AIE/Transforms/AIEPathFinder.cpp``. The port counts, which npu1 and npu2
share, are aiedsl's target model's (:attr:`TileLimits.switch_out
<aiedsl.targets.TileLimits.switch_out>` and ``switch_in``, :class:`~aiedsl.targets.ShimMux`);
the connection rules are here.

Two quirks of that graph are kept because they decide which of several equally short routes
the router takes:

* a shim tile's switch also lists the shim mux's ports (DMA, NOC, PLIO) where it has none of
  its own, and may connect them to anything (the router's "workaround for shimMux"); the
  lowering then moves those connections into the ``aie.shim_mux``
  (:meth:`SwitchModel.into_switch`, :meth:`SwitchModel.out_of_switch`);
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

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache

from aiedsl.targets import TargetModel, TileKind

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

_MUX_BUNDLES = ("DMA", "NOC", "PLIO")
_KINDS: tuple[TileKind, ...] = ("shim", "memtile", "core")

Counts = tuple[tuple[str, int], ...]
"""Ports per bundle as (bundle, count) pairs: one of the target model's tables, hashable."""
Channels = tuple[tuple[str, tuple[int, ...]], ...]
"""A port per channel of each bundle as (bundle, ports) pairs, hashable."""


@dataclass(frozen=True)
class _Tables:
    """What the switch model takes of a target model's port tables, as plain hashable data:
    :func:`_model` is cached on it (a TargetModel holds dicts, which do not hash)."""

    switch_out: tuple[tuple[str, Counts], ...]
    """Per tile kind, :attr:`~aiedsl.targets.TileLimits.switch_out`."""
    switch_in: tuple[tuple[str, Counts], ...]
    """Per tile kind, :attr:`~aiedsl.targets.TileLimits.switch_in`."""
    mux_out: Counts
    """:attr:`~aiedsl.targets.ShimMux.masters`."""
    mux_in: Counts
    """:attr:`~aiedsl.targets.ShimMux.slaves`."""
    to_switch: Channels
    """:attr:`~aiedsl.targets.ShimMux.to_switch`."""
    from_switch: Channels
    """:attr:`~aiedsl.targets.ShimMux.from_switch`."""

    @staticmethod
    def of(target: TargetModel) -> _Tables:
        """``target``'s tables."""
        mux = target.shim_mux
        return _Tables(
            switch_out=tuple((k, tuple(target.limits(k).switch_out.items())) for k in _KINDS),
            switch_in=tuple((k, tuple(target.limits(k).switch_in.items())) for k in _KINDS),
            mux_out=tuple(mux.masters.items()), mux_in=tuple(mux.slaves.items()),
            to_switch=tuple(mux.to_switch.items()), from_switch=tuple(mux.from_switch.items()))


@dataclass(frozen=True)
class SwitchModel:
    """The stream switches of one device, with mlir-aie's port counts and connection rules."""

    cols: int
    rows: int
    """mlir-aie's ``rows()``: every row, the shim row included."""
    memtile_rows: tuple[int, ...]
    shim_row: int
    """The shim tiles' row (the target model's :attr:`~aiedsl.targets.TargetModel.shim_row`)."""
    # dicts do not hash: the fields above make the hash, and equality compares these too
    switch_out: Mapping[str, Mapping[str, int]] = field(hash=False)
    """Per tile kind, its switch's master ports per bundle on no edge of the array (the target
    model's :attr:`~aiedsl.targets.TileLimits.switch_out`)."""
    switch_in: Mapping[str, Mapping[str, int]] = field(hash=False)
    """Per tile kind, its switch's slave ports the same way
    (:attr:`~aiedsl.targets.TileLimits.switch_in`)."""
    mux_out: Mapping[str, int] = field(hash=False)
    """The shim mux's master ports per bundle (:attr:`~aiedsl.targets.ShimMux.masters`)."""
    mux_in: Mapping[str, int] = field(hash=False)
    """The shim mux's slave ports per bundle (:attr:`~aiedsl.targets.ShimMux.slaves`)."""
    to_switch: Mapping[str, tuple[int, ...]] = field(hash=False)
    """:attr:`~aiedsl.targets.ShimMux.to_switch`."""
    from_switch: Mapping[str, tuple[int, ...]] = field(hash=False)
    """:attr:`~aiedsl.targets.ShimMux.from_switch`."""

    @staticmethod
    def of(target: TargetModel) -> SwitchModel:
        """The model of ``target`` (cached: it is immutable)."""
        return _model(target.cols, target.shim_row, target.memtile_rows, target.core_rows,
                      _Tables.of(target))

    def kind(self, tile: Coord) -> str:
        """"shim", "memtile" or "core" (mlir-aie's ``isShimNOCTile``/``isMemTile``/...)."""
        return ("shim" if tile[1] == self.shim_row else "memtile" if tile[1] in self.memtile_rows
                else "core")

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
            n = self.mux_out.get(bundle, 0)
        return n

    def slaves(self, tile: Coord, bundle: str) -> int:
        """Slave (incoming) ports of ``bundle``; on a shim the mux's where the switch has none."""
        n = _source(self, tile, bundle)
        if n == 0 and self.kind(tile) == "shim":
            n = self.mux_in.get(bundle, 0)
        return n

    def legal(self, tile: Coord, src: Port, dst: Port) -> bool:
        """May the switch of ``tile`` connect slave ``src`` to master ``dst``? A shim connects
        its mux's ports to anything (the router's workaround)."""
        if _legal(self, tile, src, dst):
            return True
        return self.kind(tile) == "shim" and (src[0] in _MUX_BUNDLES or dst[0] in _MUX_BUNDLES)

    def into_switch(self, port: Port) -> int:
        """The South slave port of a shim's switch by which a stream from the shim's ``port``
        (DMA, NOC or PLIO) enters it through the mux (:attr:`to_switch`)."""
        bundle, ch = port
        return self.to_switch[bundle][ch] if bundle in self.to_switch else ch

    def out_of_switch(self, port: Port) -> int:
        """The South master port of a shim's switch that feeds the shim's ``port`` (DMA, NOC or
        PLIO) through the mux (:attr:`from_switch`)."""
        bundle, ch = port
        return self.from_switch[bundle][ch] if bundle in self.from_switch else ch

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
def _model(cols: int, shim_row: int, memtile_rows: tuple[int, ...], core_rows: tuple[int, ...],
           tables: _Tables) -> SwitchModel:
    assert shim_row == 0, "mlir-aie's AIE2 devices have the shim row at the bottom"
    return SwitchModel(cols=cols, rows=max(shim_row, *memtile_rows, *core_rows) + 1,
                       memtile_rows=memtile_rows, shim_row=shim_row,
                       switch_out={k: dict(c) for k, c in tables.switch_out},
                       switch_in={k: dict(c) for k, c in tables.switch_in},
                       mux_out=dict(tables.mux_out), mux_in=dict(tables.mux_in),
                       to_switch=dict(tables.to_switch), from_switch=dict(tables.from_switch))


def _dest(m: SwitchModel, tile: Coord, bundle: str) -> int:
    """``AIE2TargetModel::getNumDestSwitchboxConnections``: the target model's count, but
    none toward an edge of the array."""
    return 0 if _off_edge(m, tile, bundle) else m.switch_out[m.kind(tile)].get(bundle, 0)


def _source(m: SwitchModel, tile: Coord, bundle: str) -> int:
    """``AIE2TargetModel::getNumSourceSwitchboxConnections``: the target model's count, but
    none from an edge of the array."""
    return 0 if _off_edge(m, tile, bundle) else m.switch_in[m.kind(tile)].get(bundle, 0)


def _off_edge(m: SwitchModel, tile: Coord, bundle: str) -> bool:
    """Do ``tile``'s ``bundle`` ports face off the array (West in column 0, East in the last
    column, North on the top row)? mlir-aie's counts are 0 there."""
    if bundle == "West":
        return tile[0] == 0
    if bundle == "East":
        return tile[0] == m.cols - 1
    return bundle == "North" and tile[1] == m.rows - 1


_CARDINAL = ("South", "West", "North", "East")
_CORE_FROM = frozenset({"DMA", "FIFO", *_CARDINAL})
"""A core switch's slaves that connect to :data:`_CORE_TO` (by channel within a bundle)."""
_CORE_TO = frozenset({"Core", "DMA", "TileControl", "FIFO", *_CARDINAL})


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
    if sb in _CORE_FROM:
        if db in _CORE_TO:
            return sc == dc if sb == db else True
        return False
    if sb == "Core":
        return db != "Core"
    if sb == "TileControl":
        return db not in ("TileControl", "DMA")
    if sb == "Trace":
        return dc == 0 if db == "DMA" else db in ("FIFO", "South")
    return False
