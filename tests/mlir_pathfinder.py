"""mlir-aie's router, transliterated line by line for the tests: ``Pathfinder::initialize``,
``addFlow``, ``sortFlows``, ``dijkstraShortestPaths`` and ``findPaths`` of
lib/Dialect/AIE/Transforms/AIEPathFinder.cpp, with ``SwitchboxConnect::updateDemand`` and
``bumpDemand`` and the constants of AIEPathFinder.h, and the queue of d_ary_heap.h (Boost's
``d_ary_heap_indirect``, arity 4), as they stand before the router moved to dense vertex ids
(mid-2026).

It is slow and plain on purpose: one connection matrix per pair of switches (a switch's own, and
one per wire bundle to a neighbour), maps keyed by (tile, port), Dijkstra run until its queue is
empty. :mod:`aiedsl.place.pathfinder` is aiedsl's fast version of the same router; the tests
compare the two on congested cases. What a switch may connect is the target model's
(:class:`~aiedsl.place.switchbox.SwitchModel`, checked against mlir-aie's lowerings elsewhere):
this file transliterates the router, not the target model.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from aiedsl.place.pathfinder import Stream
from aiedsl.place.switchbox import BUNDLES, RANK, SwitchModel

Coord = tuple[int, int]
Port = tuple[str, int]
End = tuple[Coord, Port]

MAX_CIRCUIT_STREAM_CAPACITY = 1
MAX_PACKET_STREAM_CAPACITY = 32
DEMAND_BASE = 1.0
OVER_CAPACITY_COEFF = 0.1
USED_CAPACITY_COEFF = 0.02
DEMAND_COEFF = 1.1
INT_MAX = 2 ** 31 - 1
INF = sys.float_info.max
CONNECTING = {"North": "South", "South": "North", "East": "West", "West": "East"}


def _key(e: End) -> tuple[int, int, int, int]:
    """``PathEndPoint::operator<``: (TileID, Port), a TileID by (col, row), a Port by
    (bundle number, channel)."""
    (col, row), (bundle, ch) = e
    return col, row, RANK[bundle], ch


@dataclass
class SwitchboxConnect:
    src_tile: Coord
    dst_tile: Coord
    src_ports: list[Port] = field(default_factory=list)
    dst_ports: list[Port] = field(default_factory=list)
    available: list[list[bool]] = field(default_factory=list)
    demand: list[list[float]] = field(default_factory=list)
    used: list[list[int]] = field(default_factory=list)
    over: list[list[int]] = field(default_factory=list)
    packet_count: list[list[int]] = field(default_factory=list)
    group: list[list[int]] = field(default_factory=list)
    priority: list[list[bool]] = field(default_factory=list)

    def resize(self) -> None:
        n, m = len(self.src_ports), len(self.dst_ports)
        self.available = [[False] * m for _ in range(n)]
        self.demand = [[0.0] * m for _ in range(n)]
        self.used = [[0] * m for _ in range(n)]
        self.over = [[0] * m for _ in range(n)]
        self.packet_count = [[0] * m for _ in range(n)]
        self.group = [[0] * m for _ in range(n)]
        self.priority = [[False] * m for _ in range(n)]

    def update_demand(self) -> None:
        for i in range(len(self.src_ports)):
            for j in range(len(self.dst_ports)):
                history = DEMAND_BASE + OVER_CAPACITY_COEFF * self.over[i][j]
                congestion = DEMAND_BASE + USED_CAPACITY_COEFF * self.used[i][j]
                self.demand[i][j] = history * congestion

    def bump_demand(self, i: int, j: int) -> None:
        if self.used[i][j] >= MAX_CIRCUIT_STREAM_CAPACITY:
            self.demand[i][j] *= INT_MAX if self.priority[i][j] else DEMAND_COEFF


@dataclass
class Flow:
    group: int
    priority: bool
    src: End
    dsts: list[End]


class Heap:
    """``d_ary_heap_indirect`` with arity 4 over a distance map (push, top, pop)."""

    def __init__(self, distance: dict[End, float]) -> None:
        self.data: list[End] = []
        self.distance = distance

    def push(self, v: End) -> None:
        self.data.append(v)
        self._up(len(self.data) - 1)

    def pop(self) -> End:
        top = self.data[0]
        if len(self.data) != 1:
            self.data[0] = self.data[-1]
            self.data.pop()
            self._down()
        else:
            self.data.pop()
        return top

    def _up(self, index: int) -> None:  # preserve_heap_property_up
        if index == 0:
            return
        moving = self.data[index]
        dist = self.distance[moving]
        orig, levels = index, 0
        while index != 0:
            parent = (index - 1) // 4
            if dist < self.distance[self.data[parent]]:
                levels += 1
                index = parent
            else:
                break
        index = orig
        for _ in range(levels):
            parent = (index - 1) // 4
            self.data[index] = self.data[parent]
            index = parent
        self.data[index] = moving

    def _down(self) -> None:  # preserve_heap_property_down
        index = 0
        dist = self.distance[self.data[0]]
        size = len(self.data)
        while True:
            first = index * 4 + 1
            if first >= size:
                break
            best, best_dist = 0, self.distance[self.data[first]]
            for i in range(1, min(4, size - first)):
                d = self.distance[self.data[first + i]]
                if d < best_dist:
                    best, best_dist = i, d
            if best_dist < dist:
                a, b = first + best, index
                self.data[a], self.data[b] = self.data[b], self.data[a]
                index = first + best
            else:
                break


Solution = tuple[int, dict[End, dict[Coord, list[tuple[Port, Port]]]]]


class Pathfinder:
    def __init__(self, model: SwitchModel) -> None:
        self.graph: dict[tuple[Coord, Coord], SwitchboxConnect] = {}
        self.flows: list[Flow] = []
        self.channels: dict[End, list[End]] = {}
        max_col, max_row = model.cols - 1, model.rows - 1
        for row in range(max_row + 1):
            for col in range(max_col + 1):
                max_channels: dict[str, int] = {}
                tile = (col, row)
                sb = SwitchboxConnect(tile, tile)
                for bundle in BUNDLES:  # intraconnect
                    sb.src_ports += [(bundle, c) for c in range(model.slaves(tile, bundle))]
                    n = model.masters(tile, bundle)
                    sb.dst_ports += [(bundle, c) for c in range(n)]
                    max_channels[bundle] = n
                sb.resize()
                for i, p in enumerate(sb.src_ports):
                    for j, q in enumerate(sb.dst_ports):
                        sb.available[i][j] = model.legal(tile, p, q)
                self.graph[(tile, tile)] = sb

                def interconnect(target: Coord, src_bundle: str, dst_bundle: str) -> None:
                    wire = SwitchboxConnect(tile, target)
                    for c in range(max_channels[src_bundle]):
                        wire.src_ports.append((src_bundle, c))
                        wire.dst_ports.append((dst_bundle, c))
                    wire.resize()
                    for i in range(len(wire.src_ports)):
                        wire.available[i][i] = True
                    self.graph[(tile, target)] = wire

                if row > 0:
                    interconnect((col, row - 1), "South", "North")
                if row < max_row:
                    interconnect((col, row + 1), "North", "South")
                if col > 0:
                    interconnect((col - 1, row), "West", "East")
                if col < max_col:
                    interconnect((col + 1, row), "East", "West")

    def add_flow(self, src: End, dst: End, packet: bool, priority: bool) -> None:
        for f in self.flows:
            if f.src == src:
                if priority:
                    f.priority = True
                    f.dsts.insert(0, dst)
                else:
                    f.dsts.append(dst)
                return
        group = -1
        if packet:
            found = False
            for f in self.flows:
                if f.src == src:
                    group = f.group
                    found = True
                    break
                for d in f.dsts:
                    if d == dst:
                        group = f.group
                        found = True
                        break
                group = max(group, f.group)
            if not found:
                group += 1
        self.flows.append(Flow(group, priority, src, [dst]))

    def sort_flows(self) -> None:
        first = sorted((f for f in self.flows if f.priority), key=lambda f: _key(f.src))
        self.flows = first + [f for f in self.flows if not f.priority]

    def dijkstra(self, src: End) -> dict[End, End]:
        distance: dict[End, float] = {}
        preds: dict[End, End] = {}
        colors: dict[End, str] = {}
        queue = Heap(distance)
        distance[src] = 0.0
        queue.push(src)
        while queue.data:
            src = queue.pop()
            if src not in self.channels:
                tile, port = src
                sb = self.graph[(tile, tile)]
                out = [(tile, sb.dst_ports[j]) for i, p in enumerate(sb.src_ports) if p == port
                       for j in range(len(sb.dst_ports)) if sb.available[i][j]]
                (col, row), (bundle, ch) = src
                for there, near in (((col, row - 1), ("North", ch)),
                                    ((col - 1, row), ("East", ch)),
                                    ((col, row + 1), ("South", ch)),
                                    ((col + 1, row), ("West", ch))):
                    wire = self.graph.get((tile, there))
                    if wire is not None and bundle == CONNECTING[near[0]] \
                            and near in wire.dst_ports:
                        out.append((there, near))
                self.channels[src] = sorted(out, key=_key)
            for dest in self.channels[src]:
                if dest not in distance:
                    distance[dest] = INF
                sb = self.graph[(src[0], dest[0])]
                i = sb.src_ports.index(src[1])
                j = sb.dst_ports.index(dest[1])
                relax = distance[src] + sb.demand[i][j] < distance[dest]
                if dest not in colors:
                    if relax:
                        distance[dest] = distance[src] + sb.demand[i][j]
                        preds[dest] = src
                        colors[dest] = "gray"
                    queue.push(dest)
                elif colors[dest] == "gray" and relax:
                    distance[dest] = distance[src] + sb.demand[i][j]
                    preds[dest] = src
            colors[src] = "black"
        return preds

    def find_paths(self, max_iterations: int, mark: bool = True) -> Solution | None:
        """The iterations run and, per flow source, the switch settings as (src, dst) pairs
        per tile in trace order; None when no legal routing was found. ``mark=False`` leaves
        out the packet groups' marking of a switch's rows and columns (a packet flow then takes
        a cell another group marked as any other), to show that a case depends on it."""
        for sb in self.graph.values():
            for i in range(len(sb.src_ports)):
                for j in range(len(sb.dst_ports)):
                    sb.used[i][j] = 0
                    sb.over[i][j] = 0
                    sb.priority[i][j] = False
        grouped: dict[int, list[Flow]] = {}
        for f in self.flows:
            grouped.setdefault(f.group, []).append(f)
        iteration = -1
        while True:
            iteration += 1
            if iteration >= max_iterations:
                return None
            for sb in self.graph.values():
                sb.update_demand()
            illegal = 0
            solution: dict[End, dict[Coord, list[tuple[Port, Port]]]] = {}
            for sb in self.graph.values():
                for i in range(len(sb.src_ports)):
                    for j in range(len(sb.dst_ports)):
                        sb.used[i][j] = 0
                        sb.packet_count[i][j] = 0
                        sb.group[i][j] = -1
            for flows in grouped.values():
                for f in flows:
                    preds = self.dijkstra(f.src)
                    processed = {f.src}
                    settings: dict[Coord, list[tuple[Port, Port]]] = {}
                    for end in f.dsts:
                        if end == f.src:
                            settings.setdefault(f.src[0], []).append((f.src[1], f.src[1]))
                        curr = end
                        while curr not in processed:
                            pred = preds[curr]
                            sb = self.graph[(pred[0], curr[0])]
                            i = sb.src_ports.index(pred[1])
                            j = sb.dst_ports.index(curr[1])
                            sb.priority[i][j] = f.priority
                            if f.group >= 0 and (sb.group[i][j] in (-1, f.group) or not mark):
                                for k in range(len(sb.src_ports)):
                                    for m in range(len(sb.dst_ports)):
                                        if k == i or m == j:
                                            sb.group[k][m] = f.group
                                sb.packet_count[i][j] += 1
                                if sb.packet_count[i][j] >= MAX_PACKET_STREAM_CAPACITY:
                                    sb.packet_count[i][j] = 0
                                    sb.used[i][j] += 1
                            else:
                                sb.used[i][j] += 1
                            sb.bump_demand(i, j)
                            if pred[0] == curr[0]:
                                settings.setdefault(pred[0], []).append((pred[1], curr[1]))
                            processed.add(curr)
                            curr = pred
                    solution[f.src] = settings
                for sb in self.graph.values():
                    for i in range(len(sb.src_ports)):
                        for j in range(len(sb.dst_ports)):
                            if sb.packet_count[i][j] > 0:
                                sb.packet_count[i][j] = 0
                                sb.used[i][j] += 1
                            sb.bump_demand(i, j)
            for sb in self.graph.values():
                for i in range(len(sb.src_ports)):
                    for j in range(len(sb.dst_ports)):
                        if sb.used[i][j] > MAX_CIRCUIT_STREAM_CAPACITY:
                            sb.over[i][j] += 1
                            illegal += 1
            if illegal == 0:
                return iteration + 1, solution


def route(model: SwitchModel, streams: list[Stream], max_iterations: int = 1000,
          mark: bool = True) -> Solution | None:
    """``DynamicTileAnalysis::runAnalysis``'s order: every packet flow (``aie.packet_flow``
    ops, in order), ``sortFlows``, then the circuit flows (``aie.flow``); then ``findPaths``."""
    pf = Pathfinder(model)
    for s in streams:
        if s.packet:
            for d in s.dsts:
                pf.add_flow(s.src, d, True, s.priority)
    pf.sort_flows()
    for s in streams:
        if not s.packet:
            for d in s.dsts:
                pf.add_flow(s.src, d, False, False)
    return pf.find_paths(max_iterations, mark)
