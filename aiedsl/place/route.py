"""Stream routing: every DMA-to-DMA stream over the stream switches, by negotiated congestion.

Each fifo that is not in shared memory is one circuit-switched flow from the producer's MM2S
channel to the S2MM channel of each consumer; a broadcast is one tree. Wires between
neighbouring switches come in the numbers of the target model (memtiles have none east or west,
so streams change column in the shim row or a core row). A wire carries one flow.

The router is PathFinder, as mlir-aie's is: every iteration rips up and reroutes every flow
(a tree grown one destination at a time by Dijkstra from the tree so far), pricing a wire by
its base cost, its congestion history and how far over capacity taking it would put it; the
history of overused wires grows each iteration and the present-congestion factor rises, until
no wire is over capacity or the iteration limit says the design cannot be routed.

Example
-------
>>> result = route_flows(flows, get_target("npu1"))   # doctest: +SKIP
>>> result.congested                                  # doctest: +SKIP
[]
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from aiedsl.ir import Connect, Design, Loc, Physical, Route
from aiedsl.targets import TargetModel, get_target
from aiedsl.targets.model import STEP, Direction

Coord = tuple[int, int]
Wire = tuple[Coord, Direction]
"""A bundle of wires leaving a tile in one direction."""

MAX_ITERATIONS = 60
PRESENT_START = 0.5
PRESENT_GROWTH = 1.6
HISTORY_STEP = 1.0

_BUNDLE = {"north": "North", "south": "South", "east": "East", "west": "West"}
_FACING = {"north": "South", "south": "North", "east": "West", "west": "East"}


@dataclass(frozen=True)
class Flow:
    """One stream to route: a fifo's sending DMA and its receivers."""

    fifo: str
    src: Coord
    src_channel: int
    dsts: tuple[tuple[Coord, int], ...]
    """(tile, S2MM channel) of each receiver."""
    label: str
    """How messages name it: ``a_0: memtile (0, 1) -> 4 cores``."""
    loc: Loc


@dataclass
class Congestion:
    """Wires wanted by more flows than exist, after the last iteration."""

    wire: Wire
    capacity: int
    flows: list[Flow] = field(default_factory=list)


def flows_of(d: Design, phys: Physical) -> list[Flow]:
    """The flows of a placed, allocated design, in fifo order."""
    send = {c.fifo: c for c in phys.channels if c.direction == "MM2S"}
    recv: dict[str, list] = {}
    for c in phys.channels:
        if c.direction == "S2MM":
            recv.setdefault(c.fifo, []).append(c)
    out = []
    for f in d.fifos:
        if f.name in phys.shared or f.name not in send:
            continue
        s = send[f.name]
        dsts = tuple((c.tile, c.channel) for c in recv.get(f.name, []))
        cons = [c.label() for c in f.consumers]
        to = cons[0] if len(cons) == 1 else f"{len(cons)} tiles"
        out.append(Flow(f.name, s.tile, s.channel, dsts,
                        f"{f.name}: {f.producer.label()} -> {to}", f.loc))
    return out


@dataclass
class Routing:
    """What the router found: routes, wires still over capacity (empty when legal), effort."""

    routes: tuple[Route, ...]
    congested: list[Congestion]
    iterations: int
    searches: int
    """Shortest-path searches run (one per destination per iteration)."""


def route(d: Design, phys: Physical) -> Routing:
    """Route every flow of ``d``."""
    return route_flows(flows_of(d, phys), get_target(d.device))


def route_flows(flows: list[Flow], target: TargetModel) -> Routing:
    """PathFinder over ``target``'s switches."""
    adj = _adjacency(target)
    cap = {w: c for n in adj for (_, w, c) in adj[n]}
    history: dict[Wire, float] = {}
    occupancy: dict[Wire, int] = {}
    trees: dict[int, list[tuple[Coord, Coord, Wire]]] = {}
    present = PRESENT_START
    searches = 0
    for iteration in range(1, MAX_ITERATIONS + 1):
        for i, flow in enumerate(flows):
            for (_, _, w) in trees.get(i, []):
                occupancy[w] -= 1
            trees[i] = _tree(flow, adj, cap, occupancy, history, present)
            searches += len({t for t, _ in flow.dsts} - {flow.src})
            for (_, _, w) in trees[i]:
                occupancy[w] = occupancy.get(w, 0) + 1
        over = {w: n - cap[w] for w, n in occupancy.items() if n > cap[w]}
        if not over:
            break
        for w, n in over.items():
            history[w] = history.get(w, 0.0) + HISTORY_STEP * n
        present *= PRESENT_GROWTH
    congested = [Congestion(w, cap[w], [f for i, f in enumerate(flows)
                                        if any(x[2] == w for x in trees[i])])
                 for w, n in sorted(occupancy.items(), key=lambda kv: (kv[0][0][1], kv[0][0][0],
                                                                      kv[0][1]))
                 if n > cap[w]]
    return Routing(_routes(flows, trees), congested, iteration, searches)


def _adjacency(target: TargetModel) -> dict[Coord, list[tuple[Coord, Wire, int]]]:
    adj: dict[Coord, list[tuple[Coord, Wire, int]]] = {}
    for tile in target.tiles():
        adj[tile] = []
        for d in ("north", "south", "east", "west"):
            c = target.link_capacity(tile, d)  # type: ignore[arg-type]
            if c:
                dc, dr = STEP[d]  # type: ignore[index]
                adj[tile].append(((tile[0] + dc, tile[1] + dr), (tile, d), c))  # type: ignore[arg-type]
    return adj


def _tree(flow: Flow, adj: dict[Coord, list[tuple[Coord, Wire, int]]], cap: dict[Wire, int],
          occupancy: dict[Wire, int], history: dict[Wire, float], present: float
          ) -> list[tuple[Coord, Coord, Wire]]:
    """A tree from the flow's source reaching every destination, cheapest wires first."""
    def cost(w: Wire) -> float:
        over = max(0, occupancy.get(w, 0) + 1 - cap[w])
        return (1.0 + history.get(w, 0.0)) * (1.0 + present * over)

    nodes = {flow.src}
    edges: list[tuple[Coord, Coord, Wire]] = []
    dsts = sorted({t for t, _ in flow.dsts},
                  key=lambda t: (abs(t[0] - flow.src[0]) + abs(t[1] - flow.src[1]), t))
    for dst in dsts:
        if dst in nodes:
            continue
        dist = {n: 0.0 for n in nodes}
        prev: dict[Coord, tuple[Coord, Wire]] = {}
        heap = [(0.0, n) for n in sorted(nodes)]
        heapq.heapify(heap)
        while heap:
            c, n = heapq.heappop(heap)
            if n == dst:
                break
            if c > dist[n]:
                continue
            for m, w, _ in adj[n]:
                nc = c + cost(w)
                if nc < dist.get(m, float("inf")):
                    dist[m] = nc
                    prev[m] = (n, w)
                    heapq.heappush(heap, (nc, m))
        if dst not in prev:  # no wires reach it at all: left out, and the tree check will say so
            continue
        path = []
        n = dst
        while n not in nodes:
            p, w = prev[n]
            path.append((p, n, w))
            n = p
        for e in reversed(path):
            edges.append(e)
            nodes.add(e[1])
    return edges


def _routes(flows: list[Flow], trees: dict[int, list[tuple[Coord, Coord, Wire]]]
            ) -> tuple[Route, ...]:
    """Number the wires of each bundle in flow order and spell the switch connections."""
    taken: dict[Wire, int] = {}
    out = []
    for i, flow in enumerate(flows):
        wires = []
        into: dict[Coord, tuple[str, int]] = {flow.src: ("DMA", flow.src_channel)}
        outs: dict[Coord, list[tuple[str, int]]] = {}
        for a, b, w in trees.get(i, []):
            idx = taken.get(w, 0)
            taken[w] = idx + 1
            wires.append((a, b, idx))
            outs.setdefault(a, []).append((_BUNDLE[w[1]], idx))
            into[b] = (_FACING[w[1]], idx)
        for tile, ch in flow.dsts:
            outs.setdefault(tile, []).append(("DMA", ch))
        connects = tuple(Connect(tile=t, src=into[t], dst=o)  # type: ignore[arg-type]
                         for t in sorted(outs, key=lambda t: (t[1], t[0])) for o in outs[t])
        out.append(Route(fifo=flow.fifo, src=flow.src, dsts=tuple(t for t, _ in flow.dsts),
                         wires=tuple(wires), connects=connects))
    return tuple(out)
