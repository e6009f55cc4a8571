"""mlir-aie's router, ``aie-create-pathfinder-flows``, re-implemented to give the same routes.

Sources (Xilinx/mlir-aie before its router moved to dense vertex ids in mid-2026, i.e. as at
the reference lowering's commit of 2026-03): the graph, costs and search are
``Pathfinder::initialize``, ``addFlow``, ``sortFlows``, ``dijkstraShortestPaths`` and
``findPaths`` in ``lib/Dialect/AIE/Transforms/AIEPathFinder.cpp`` with the constants of
``AIEPathFinder.h``; the queue is ``d_ary_heap.h`` beside them; what a route becomes is
``ConvertFlowsToInterconnect`` in ``AIECreatePathFindFlows.cpp``. The rules carry over, the code
is aiedsl's own. tests/test_route_lowering.py routes the flows of seven real lowerings and
gets every one of their ``aie.connect`` ops, and no other; tests/test_packet_routing.py routes
congested packet flows as a line-by-line transliteration of mlir-aie's router does.

**Graph** (``Pathfinder::initialize``): a node per port of a tile's switch, an edge per
connection its switch may make and per wire to a neighbour; each edge is a *cell* of mlir-aie's
connection matrices and costs that cell's *demand* (:mod:`aiedsl.place.graph`).

**Costs** (``updateDemand``, ``bumpDemand``). At the start of an iteration every cell's demand
is ``(1 + 0.1 * over) * (1 + 0.02 * used)``: ``over`` counts the iterations that ended with the
cell carrying more than one stream, ``used`` the streams it carried in the iteration before.
Within an iteration, each time a flow takes a cell, the cell's demand is multiplied by 1.1
(``INT_MAX`` for a priority flow's cell), so the flows after it go around where they can.

**Order** (``addFlow``, ``sortFlows``, ``findPaths``). Flows with the same source port are one
flow with the destinations in the order added. Priority packet flows come first, sorted by
source (col, row, bundle number, channel), then the others in the order added, which for aiedsl
is the order the objectfifo lowering creates its ``aie.flow`` ops (:mod:`aiedsl.place.route`).
Each packet flow is routed as a group of its own (packet flows sharing a source or destination
would share one; aiedsl's share neither), the circuit flows as one group after them; after each
group every cell in use has its demand bumped once more. A packet flow takes a cell's capacity
only at the end of its group (or per 32 packet streams), and marks with its group the cells of
the switch that share the cell's slave port or its master port (its row and column of the
switch's connection matrix; a wire's cell alone); a packet flow of another group that takes a
marked cell takes its capacity at once, as a circuit does, so that cell's demand is bumped
then as well as at the end of the group (``findPaths``' ``packetGroupId`` matrices, cleared at
each iteration).

**Search** (``dijkstraShortestPaths``). One Dijkstra per flow per iteration from its source
port. The queue is mlir-aie's 4-ary heap keyed on distance, and ties go as it makes them go: a
push moves the new node up past strictly farther parents only; a pop moves the last node to the
root and down past strictly nearer children only, the first of equally near ones. A node is
queued when first seen, even when not nearer (the source, which can reach itself through its
own DMA-to-DMA connection, is queued twice); when a queued node gets nearer, its distance and
predecessor change but its place in the heap does not. The neighbours of a node are visited in
(col, row, bundle number, channel) order. Each destination's route is its chain of
predecessors, followed back until it meets a node already taken: a broadcast is a tree, part of
Dijkstra's shortest-path tree. aiedsl stops the search once no destination can get nearer
(their chains are final then) instead of emptying the queue, and passes over the edges of a node
that cannot change anything (:func:`_search`).

**Iterations** (``findPaths``). After all groups, every cell carrying more than one stream is
over capacity; if any is, everything is ripped up and the next iteration starts. mlir-aie gives
up after 1000 iterations; the caller may have the search give up sooner (``hopeless``).

**Connections** (``ConvertFlowsToInterconnect``, :func:`connects`). Per tile, each step of a
route inside a switch is one ``aie.connect``; a shim DMA's stream crosses the shim mux.

Example
-------
>>> from aiedsl.targets import get_target
>>> m = SwitchModel.of(get_target("npu1_1col"))
>>> f = Stream(((0, 0), ("DMA", 0)), (((0, 1), ("DMA", 0)),))
>>> r = find_paths([f], m, 10)
>>> r.legal, sorted(r.settings[0])
(True, [(0, 0), (0, 1)])
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from aiedsl.place.graph import Coord, End, Graph, Port, graph
from aiedsl.place.switchbox import RANK, SwitchModel

OVER_CAPACITY_COEFF = 0.1
USED_CAPACITY_COEFF = 0.02
DEMAND_COEFF = 1.1
DEMAND_BASE = 1.0
PRIORITY_BUMP = float(2 ** 31 - 1)
"""``std::numeric_limits<int>::max()``: a priority flow's cells become all but unusable."""
MAX_PACKET_STREAM_CAPACITY = 32
"""Packet flows that may share one connection before it counts as used once more. A constant
of mlir-aie's router (``AIEPathFinder.h``, with the cost coefficients above), which it does not
ask the target model for: aiedsl's router keeps it as the router's, as it keeps the
coefficients, rather than reading the device's packet ids
(:attr:`aiedsl.targets.TargetModel.packet_ids`, 32 as well)."""
INF = sys.float_info.max
MIN_DEMAND = DEMAND_BASE
"""No cell costs less: a demand is ``DEMAND_BASE`` or a product of it with factors of at least
1 (the over and used terms, the bumps)."""

_WHITE = float("inf")
"""The search's mark of a node never reached (above every distance, :data:`INF` included)."""
_BLACK = -1.0
"""The search's mark of a node that has left the queue (below every distance)."""


@dataclass(frozen=True)
class Stream:
    """One flow for the router: a source port and the ports it must reach."""

    src: End
    dsts: tuple[End, ...]
    packet: bool = False
    priority: bool = False
    """A priority packet flow (``priority_route``): the control overlay's."""


@dataclass
class Paths:
    """What the router found, flow by flow in the order the flows were given."""

    legal: bool
    iterations: int
    searches: int
    settings: list[dict[Coord, list[tuple[Port, Port]]]]
    """Per flow, per tile, the (slave, master) connections of its switch, in trace order."""
    hops: list[list[tuple[End, End]]]
    """Per flow, every edge taken (predecessor, port), from each destination back."""
    over: list[tuple[End, End]] = field(default_factory=list)
    """Connections carrying more than one stream after the last iteration (empty if legal)."""


def find_paths(streams: list[Stream], model: SwitchModel, max_iterations: int,
               hopeless: Callable[[], bool] | None = None, patience: int = 0) -> Paths:
    """Route ``streams`` as ``Pathfinder::findPaths`` does (see the module's notes).

    Results are given per stream in the order of ``streams``; streams with the same source
    are merged into the first of them (the later ones get empty settings). Without a legal
    routing after ``max_iterations``, or after ``patience`` iterations when ``hopeless()`` then
    says none exists, the last iteration's routes come back with ``legal`` false.
    """
    g = graph(model)
    flows, owner = _merge(streams, g)
    groups = _groups(flows)
    n = g.cells
    over = [0] * n
    used = [0] * n
    priority = [False] * n
    searches = 0
    iteration = 0
    settings: list[dict[Coord, list[tuple[Port, Port]]]] = []
    hops: list[list[tuple[End, End]]] = []
    touched: set[int] = set()  # cells with over > 0 or used > 0: all others cost exactly 1.0
    while True:
        iteration += 1
        demand = [1.0] * n
        for c in touched:
            demand[c] = ((DEMAND_BASE + OVER_CAPACITY_COEFF * over[c])
                         * (DEMAND_BASE + USED_CAPACITY_COEFF * used[c]))
        touched = {c for c in touched if over[c]}
        used = [0] * n
        marked = [-1] * n  # per cell: the packet group that marked it (-1: none)
        in_use: list[int] = []
        settings = [{} for _ in streams]
        hops = [[] for _ in streams]
        for gi, group in enumerate(groups):
            packets: dict[int, int] = {}
            for k in group:
                f = flows[k]
                src, dsts, is_packet, is_priority = f.node, f.dsts, f.packet, f.priority
                preds = _search(g, src, dsts, demand)
                searches += 1
                done = {src}
                tiles = settings[owner[k]]
                taken = hops[owner[k]]
                for d in dsts:
                    if d == src:  # to its own port: findPaths still sets the switch's src
                        tile, port = g.nodes[d]  # and dst there, one connect<P, P>
                        tiles.setdefault(tile, []).append((port, port))
                    cur = d
                    while cur not in done:
                        p = preds[cur]
                        c = _cell(g, p, cur)
                        priority[c] = is_priority
                        if is_packet and marked[c] in (-1, gi):
                            for cc in g.shared(c):
                                marked[cc] = gi
                            packets[c] = packets.get(c, 0) + 1
                            if packets[c] >= MAX_PACKET_STREAM_CAPACITY:
                                packets[c] = 0
                                used[c] += 1
                                in_use.append(c)
                        else:
                            used[c] += 1
                            in_use.append(c)
                        if used[c] >= 1:
                            demand[c] *= PRIORITY_BUMP if priority[c] else DEMAND_COEFF
                        a, b = g.nodes[p], g.nodes[cur]
                        taken.append((a, b))
                        if a[0] == b[0]:
                            tiles.setdefault(a[0], []).append((a[1], b[1]))
                        done.add(cur)
                        cur = p
            for c, k in packets.items():
                if k > 0:
                    used[c] += 1
                    in_use.append(c)
            for c in set(in_use):
                demand[c] *= PRIORITY_BUMP if priority[c] else DEMAND_COEFF
        busy = set(in_use)
        touched |= busy
        bad = sorted((c for c in busy if used[c] > 1), key=g.rank)
        for c in bad:
            over[c] += 1
        if not bad:
            return Paths(True, iteration, searches, settings, hops)
        if iteration >= max_iterations or (
                iteration == patience and hopeless is not None and hopeless()):
            return Paths(False, iteration, searches, settings, hops,
                         [(g.nodes[a], g.nodes[b]) for a, b in map(g.cell, bad)])


@dataclass
class _Flow:
    src: End
    node: int
    dsts: list[int]
    packet: bool
    priority: bool


def _merge(streams: list[Stream], g: Graph) -> tuple[list[_Flow], list[int]]:
    """``addFlow``: one flow per source port, destinations in the order given; and for each
    flow the index of the stream it came from first."""
    flows: list[_Flow] = []
    owner: list[int] = []
    first: dict[End, int] = {}
    for i, s in enumerate(streams):
        if s.src in first:
            flows[first[s.src]].dsts.extend(g.ids[d] for d in s.dsts)
            continue
        first[s.src] = len(flows)
        flows.append(_Flow(s.src, g.ids[s.src], [g.ids[d] for d in s.dsts], s.packet,
                           s.priority))
        owner.append(i)
    return flows, owner


def _groups(flows: list[_Flow]) -> list[list[int]]:
    """``sortFlows`` and the grouping of ``findPaths``: priority flows first, sorted by source
    (col, row, bundle, channel); each packet flow a group of its own (aiedsl's packet flows
    share no port, so none would share a group); the circuit flows one group after them, in
    the order they were added."""
    def key(k: int) -> tuple[int, int, int, int]:
        (col, row), (bundle, ch) = flows[k].src
        return col, row, RANK[bundle], ch

    first = sorted((k for k, f in enumerate(flows) if f.priority), key=key)
    packets = [k for k, f in enumerate(flows) if f.packet and not f.priority]
    circuit = [k for k, f in enumerate(flows) if not f.packet and not f.priority]
    return [[k] for k in first + packets] + ([circuit] if circuit else [])


def _cell(g: Graph, a: int, b: int) -> int:
    if b not in g.next[a]:
        raise AssertionError("no edge between consecutive nodes of a route")
    return g.via[a][g.next[a].index(b)]


def _search(g: Graph, src: int, dsts: list[int], demand: list[float]) -> list[int]:
    """``dijkstraShortestPaths`` from ``src``: the predecessor of every node reached (-1 for
    the others), exact for the chains of ``dsts`` (the search stops once they are final).

    The queue is ``d_ary_heap_indirect`` with 4 children per node, inlined: a push sifts the
    new node up past strictly farther parents; a pop moves the last node to the root and sifts
    it down past the nearest child (the first of equals) while that is strictly nearer. Each
    queued node's distance is kept beside it (``key``), as it is when it changes in place.

    A node's colour is in ``reach``: :data:`_WHITE` (never reached; queued or not), its
    distance while gray (reached, queued), :data:`_BLACK` once it has left the queue. Most nodes
    leave the queue with nothing to do: every neighbour is black, or gray and no nearer through
    them. Such a node's edges are not walked (they would change nothing): its wire's far end is
    looked at alone, and its switch's ports as a tile's bits, none white (``white``) and none
    gray farther than a step from it could take it (``bound``, at least the distance of every
    gray port of the tile; a step costs at least :data:`MIN_DEMAND`).

    The search stops when no destination still queued can get nearer: each is reached, no
    farther (``far``) than a step from the node leaving the queue, and no node leaves it nearer
    than that one while no distance has changed in place (``in_order``: the queue is a heap
    then). A destination's chain is final then: its predecessor stays (only a strictly nearer
    path replaces it) and the others have left the queue.
    """
    nxt, via, tile, bit, inner, wire = g.next, g.via, g.tile, g.bit, g.inner, g.wire
    black, white_, step = _BLACK, _WHITE, MIN_DEMAND  # (locals: this runs per edge)
    dist = [INF] * len(g.nodes)
    reach = [white_] * len(g.nodes)
    pred = [-1] * len(g.nodes)
    white = list(g.ports)  # per tile: the bits of its white ports
    bound = [black] * len(white)  # per tile: at least the distance of each of its gray ports
    dist[src] = 0.0  # (the source stays white: it is queued again when an edge reaches it)
    heap = [src]
    key = [0.0]  # key[i] is dist[heap[i]]
    remaining = set(dsts)
    far = white_  # at least reach[d] of every remaining destination d (white: not all reached)
    in_order = True
    while heap:
        s = heap[0]
        last = heap.pop()
        dv = key.pop()
        n = len(heap)
        if n:  # pop: sift the last node down from the root
            i = 0
            first = 1
            while first < n:
                best, bd = first, key[first]
                k = first + 1  # the other children, up to three (unrolled: this runs per pop)
                if k < n:
                    dk = key[k]
                    if dk < bd:
                        best, bd = k, dk
                    k += 1
                    if k < n:
                        dk = key[k]
                        if dk < bd:
                            best, bd = k, dk
                        k += 1
                        if k < n:
                            dk = key[k]
                            if dk < bd:
                                best, bd = k, dk
                if bd < dv:
                    heap[i] = heap[best]
                    key[i] = bd
                    i = best
                    first = 4 * i + 1
                else:
                    break
            heap[i] = last
            key[i] = dv
        ds = dist[s]
        if s in remaining:
            remaining.discard(s)
            if not remaining:
                break
            far = max(reach[d] for d in remaining)
        # NOTE: every node leaving the queue from now on is no nearer than s (in_order), and a
        # step costs at least `step`: no remaining destination can get strictly nearer
        if far <= ds + step and in_order:
            break
        t = tile[s]
        # all its edges, in order; or, when none into its own switch can change anything, its
        # wire alone
        edges = (zip(nxt[s], via[s]) if inner[s] & white[t] or ds + step < bound[t]
                 else wire[s])
        for d, c in edges:
            r = reach[d]
            if r == black:  # done: nothing to relax
                continue
            nd = ds + demand[c]
            if r == white_:  # queued whether or not it got nearer
                if nd < dist[d]:
                    dist[d] = reach[d] = dv = nd
                    pred[d] = s
                    u = tile[d]
                    white[u] &= ~bit[d]
                    if nd > bound[u]:
                        bound[u] = nd
                    if d in remaining:
                        far = max(reach[x] for x in remaining)
                else:
                    dv = dist[d]
                i = len(heap)  # push: sift up
                heap.append(d)
                key.append(dv)
                while i:
                    p = (i - 1) >> 2
                    kp = key[p]
                    if dv < kp:
                        heap[i] = heap[p]
                        key[i] = kp
                        i = p
                    else:
                        break
                heap[i] = d
                key[i] = dv
            elif nd < r:  # gray, nearer: no decrease-key, the heap is not re-sorted
                dist[d] = reach[d] = nd
                pred[d] = s
                for i, x in enumerate(heap):  # (rare: every place it is queued, kept there)
                    if x == d:
                        key[i] = nd
                in_order = False
                if d in remaining:
                    far = max(reach[x] for x in remaining)
        reach[s] = black
        white[t] &= ~bit[s]
    else:
        if remaining:
            raise _Unreachable(sorted(g.nodes[d] for d in remaining))
    return pred


class _Unreachable(Exception):
    """A destination no port path leads to (cannot happen on a whole device)."""


def connects(stream: Stream, settings: dict[Coord, list[tuple[Port, Port]]],
             model: SwitchModel) -> list[tuple[Coord, str, Port, Port]]:
    """The ``aie.connect``s of one routed flow, as ``ConvertFlowsToInterconnect`` writes them:
    ``(tile, switch, slave, master)`` with switch ``"switchbox"`` or ``"shim_mux"``.

    A shim's DMA does not sit on its switch but behind the mux: a flow leaving shim DMA channel
    0 (1) crosses the mux to North 3 (7) and enters the switch at South 3 (7), whatever its
    first connection was; one arriving at shim DMA channel 0 (1) leaves the switch at South 2
    (3) and crosses the mux from North 2 (3) (the target model's
    :attr:`~aiedsl.targets.ShimMux.to_switch` and :attr:`~aiedsl.targets.ShimMux.from_switch`).
    Tiles are visited in (col, row) order.
    """
    src_tile, src_port = stream.src
    out: list[tuple[Coord, str, Port, Port]] = []
    for tile in sorted(settings):
        shim = model.kind(tile) == "shim"
        if shim and tile == src_tile:
            ch = model.into_switch(src_port)
            out.append((tile, "shim_mux", src_port, ("North", ch)))
            out += [(tile, "switchbox", ("South", ch), dst) for _, dst in settings[tile]]
            continue
        for src, dst in settings[tile]:
            if shim and dst[0] in ("DMA", "PLIO", "NOC"):
                ch = model.out_of_switch(dst)
                out.append((tile, "shim_mux", ("North", ch), dst))
                out.append((tile, "switchbox", src, ("South", ch)))
            else:
                out.append((tile, "switchbox", src, dst))
    return out
