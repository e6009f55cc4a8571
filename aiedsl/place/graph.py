"""The router's graph (mlir-aie's ``Pathfinder::initialize``), which
:mod:`aiedsl.place.pathfinder` searches.

A node is a port of a tile's switch, ``(tile, (bundle, channel))``: one node for the slave and
the master port of the same name, so a stream arriving on ``North 1`` may leave by ``North 1``
again (mlir-aie's graph has no port direction yet). Inside a switch each slave port has an edge
to each master port the target model allows (:class:`~aiedsl.place.switchbox.SwitchModel`, with
the shim mux's ports); each master port of a cardinal bundle has an edge to the slave port of
the same index on the neighbour (``North 2`` -> the tile above's ``South 2``), if there is a
neighbour: wires are made only between tiles of the device (a shim's South masters lead
nowhere). Each edge is a *cell* of mlir-aie's connection matrices and costs that cell's
*demand*.

Nodes are numbered tile by tile in mlir-aie's (col, row) order, each tile's ports in its
switch's order (node numbers decide nothing: the search breaks ties by distance and heap
position). Cells are numbered node by node, each node's in the order the search visits its
neighbours, so that a node's cells are a range; :meth:`Graph.rank` gives a cell's place in
mlir-aie's walk of its matrices (tile by tile: the switch's cells, slave by slave, then its
wires), the order in which the router lists cells over capacity.

Example
-------
>>> from aiedsl.targets import get_target
>>> g = graph(SwitchModel.of(get_target("npu1_1col")))
>>> a = g.ids[((0, 1), ("DMA", 0))]
>>> [g.nodes[b] for b in g.next[a]][:2]
[((0, 1), ('DMA', 0)), ((0, 1), ('South', 0))]
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from functools import cache
from itertools import accumulate

from aiedsl.place.switchbox import FACING, STEP, SwitchModel

Coord = tuple[int, int]
Port = tuple[str, int]
End = tuple[Coord, Port]
"""A port of a tile's switch: ``((col, row), (bundle, channel))``."""


@dataclass
class Switch:
    """One switch signature's ports, connections and cells as local numbers: what
    :func:`graph` repeats per tile."""

    ports: list[Port]
    """Every port a slave or master of the switch has (slaves first, then the other masters)."""
    slaves: int
    """How many of :attr:`ports` are slaves (the first ones)."""
    local: dict[Port, int]
    targets: list[list[int]]
    """Per port: the masters it may connect to as a slave, in order (none for a master
    alone)."""
    row0: list[int]
    """Per port: where its connections start in mlir-aie's walk of the switch's matrix (slave
    by slave)."""
    cells: int
    """How many connections the switch has."""
    bits: list[int]
    """Per port: its bit (``1 << number``)."""
    inner: list[int]
    """Per port: the bits of the masters it may connect to."""
    wires: list[tuple[int, Coord, bool, Port]]
    """Per master port of a cardinal bundle, in order: the port, the step to the neighbour its
    wire reaches, whether that neighbour sorts before the switch's own ports, and the
    neighbour's port the wire arrives on."""

    @staticmethod
    def of(model: SwitchModel, tile: Coord) -> Switch:
        """The switch of ``tile`` (and of every tile of its signature)."""
        slaves, masters, outs = model.connections(tile)
        ports = list(dict.fromkeys(slaves + masters))
        local = {p: i for i, p in enumerate(ports)}
        targets: list[list[int]] = [[] for _ in ports]
        for p, qs in zip(slaves, outs):
            targets[local[p]] = [local[q] for q in qs]
        wires = [(local[q], STEP[q[0]], q[0] in ("West", "South"), (FACING[q[0]], q[1]))
                 for q in masters if q[0] in STEP]
        return Switch._made(ports, len(slaves), local, targets, wires)

    def without(self, gone: set[str]) -> Switch:
        """This switch without the ports of the bundles ``gone`` and their connections: the
        switch of a tile of its kind on an edge of the array, which has no ports facing off it
        and connects the others alike (:func:`graph` makes it so only where the shim mux has no
        such ports either)."""
        keep = [i for i, p in enumerate(self.ports) if p[0] not in gone]
        new = {old: k for k, old in enumerate(keep)}
        ports = [self.ports[i] for i in keep]
        targets = [[new[j] for j in self.targets[i] if j in new] for i in keep]
        wires = [(new[q], step, before, port) for q, step, before, port in self.wires
                 if q in new]
        return Switch._made(ports, sum(i < self.slaves for i in keep),
                            {p: k for k, p in enumerate(ports)}, targets, wires)

    @staticmethod
    def _made(ports: list[Port], slaves: int, local: dict[Port, int], targets: list[list[int]],
              wires: list[tuple[int, Coord, bool, Port]]) -> Switch:
        bits = [1 << i for i in range(len(ports))]
        row0 = [0] * len(ports)
        cells = 0
        for i in range(slaves):
            row0[i] = cells
            cells += len(targets[i])
        return Switch(ports, slaves, local, targets, row0, cells, bits,
                      [sum(map(bits.__getitem__, js)) for js in targets], wires)


@dataclass
class Graph:
    """The routing graph of one device."""

    nodes: list[End]
    ids: dict[End, int]
    next: list[list[int]]
    """Per node: its neighbours, in mlir-aie's visiting order."""
    via: list[range]
    """Per node: the cells of its edges to :attr:`next`, in order."""
    cells: int
    """How many cells there are."""
    tile: list[int]
    """Per node: its tile's number (in :attr:`nodes` order)."""
    bit: list[int]
    """Per node: one bit, its place among its tile's ports."""
    ports: list[int]
    """Per tile: the bits of all its ports."""
    inner: list[int]
    """Per node: the bits of the ports of its own switch it connects to."""
    wire: list[list[tuple[int, int]]]
    """Per node: the (neighbour node, cell) its wire to the next tile reaches, if it has one
    (every other edge of a node is into its own switch)."""
    switches: list[Switch]
    """Per tile: its switch."""
    node0: list[int]
    """Per tile: its first node (its ports' nodes follow, in its switch's order)."""
    first: list[int]
    """Per node: its first cell."""
    wired: list[list[int]]
    """Per tile: its switch's ports that have a wire, in order."""
    rank0: list[int]
    """Per tile: the place of its first cell in mlir-aie's walk (:meth:`rank`)."""

    def cell(self, c: int) -> tuple[int, int]:
        """The (from, to) nodes cell ``c`` connects."""
        a = bisect_right(self.first, c) - 1  # (the last node of those its cells start at)
        return a, self.next[a][c - self.first[a]]

    def rank(self, c: int) -> int:
        """Cell ``c``'s place in mlir-aie's walk of the connection matrices (tile by tile: the
        switch's connections, slave by slave, then the tile's wires)."""
        a, b = self.cell(c)
        t = self.tile[a]
        n0, sw = self.node0[t], self.switches[t]
        if self.tile[b] == t:
            return self.rank0[t] + sw.row0[a - n0] + sw.targets[a - n0].index(b - n0)
        return self.rank0[t] + sw.cells + self.wired[t].index(a - n0)

    def shared(self, c: int) -> list[int]:
        """The cells a packet flow taking cell ``c`` marks with its group: within a switch, the
        row and the column of ``c`` (``c`` among them); a wire's cell alone (the matrix of a
        wire between two switches holds no other connection in either)."""
        a, b = self.cell(c)
        t = self.tile[a]
        if self.tile[b] != t:
            return [c]
        n0 = self.node0[t]
        row = [cell for d, cell in zip(self.next[a], self.via[a]) if self.tile[d] == t]
        column = [self.via[p][self.next[p].index(b)]
                  for p in range(n0, n0 + len(self.switches[t].ports)) if b in self.next[p]]
        return row + column


@cache
def graph(model: SwitchModel) -> Graph:
    """The routing graph of ``model`` (``Pathfinder::initialize``), built once per device."""
    # Every aiedsl run routes, so this is on the path of each one. Tiles of one signature have
    # one switch: its ports, legal connections and their cells are worked out once, as local
    # numbers (:class:`Switch`), and each tile adds its first node to them. Edges are kept as
    # lists of numbers, not pairs, and a node's cells as a range: the graph is made of some
    # 20,000 of them.
    tiles = model.tiles()
    sigs = [model.signature(t) for t in tiles]
    tile_of = dict(zip(reversed(sigs), reversed(tiles)))  # each signature's first tile
    switches: dict[tuple[str, bool, bool, bool], Switch] = {}
    # a kind's switch on no edge first; on an edge, its ports facing off the array left out
    for sig in sorted(tile_of, key=lambda sig: any(sig[1:])):
        kind, west, east, top = sig
        gone = {b for b, edge in (("West", west), ("East", east), ("North", top)) if edge}
        whole = switches.get((kind, False, False, False))
        if whole is not None and gone and (kind != "shim" or not any(
                model.mux_in.get(b, 0) or model.mux_out.get(b, 0) for b in gone)):
            switches[sig] = whole.without(gone)
        else:
            switches[sig] = Switch.of(model, tile_of[sig])
    sws = [switches[sig] for sig in sigs]
    node0: list[int] = []  # per tile: its first node
    nodes: list[End] = []
    tile: list[int] = []
    bit: list[int] = []
    inner: list[int] = []
    for i, (t, sw) in enumerate(zip(tiles, sws)):
        node0.append(len(nodes))
        nodes += [(t, port) for port in sw.ports]
        tile += [i] * len(sw.ports)
        bit += sw.bits
        inner += sw.inner
    number = {t: i for i, t in enumerate(tiles)}
    nxt: list[list[int]] = []
    far: list[tuple[int, int, bool]] = []  # each wire: (its node, the node it reaches, before)
    wired: list[list[int]] = []
    rank0: list[int] = []  # per tile: the mlir-aie place of its first cell
    rank = 0
    for t, sw, n0 in zip(tiles, sws, node0):
        edges = [list(map(n0.__add__, js)) for js in sw.targets]
        here = []
        for q, step, before, port in sw.wires:
            k = number.get((t[0] + step[0], t[1] + step[1]))
            if k is None:  # off the device
                continue
            j = node0[k] + sws[k].local[port]
            # mlir-aie visits a node's neighbours in (col, row, bundle, channel) order: the
            # switch's own masters are in that order already; the wire's far end comes before
            # them if it lies west or south, after them otherwise
            if before:
                edges[q].insert(0, j)
            else:
                edges[q].append(j)
            far.append((n0 + q, j, before))
            here.append(q)
        nxt += edges
        wired.append(here)
        rank0.append(rank)
        rank += sw.cells + len(here)
    first = list(accumulate(map(len, nxt), initial=0))
    cells = first.pop()
    via = list(map(range, first, first[1:] + [cells]))
    wire: list[list[tuple[int, int]]] = [[] for _ in nodes]
    for a, j, before in far:
        wire[a] = [(j, first[a] if before else first[a] + len(nxt[a]) - 1)]
    return Graph(nodes=nodes, ids={e: i for i, e in enumerate(nodes)}, next=nxt, via=via,
                 cells=cells, tile=tile, bit=bit, ports=[(1 << len(sw.ports)) - 1 for sw in sws],
                 inner=inner, wire=wire, switches=sws, node0=node0, first=first, wired=wired,
                 rank0=rank0)
