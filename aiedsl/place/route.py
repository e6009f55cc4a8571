"""Stream routing: every DMA-to-DMA stream over the stream switches, as mlir-aie routes it.

Each fifo that is not in shared memory is one circuit-switched flow from the producer's MM2S
channel to the S2MM channel of each consumer; a broadcast is one tree. aiedsl routes them with
mlir-aie's own router (``aie-create-pathfinder-flows``), re-implemented in
:mod:`aiedsl.place.pathfinder` on mlir-aie's switch model (:mod:`aiedsl.place.switchbox`), so
the switch connections of the plan are the ones ``aiecc`` makes:

* **flows, in mlir-aie's order**: the objectfifo lowering adds each fifo's ``aie.flow`` ops right
  after the fifo, so the router meets them in the order aiedsl emits the fifos (``d.fifos``);
  a flow goes from ``(producer tile, DMA, MM2S channel)`` to ``(consumer tile, DMA, S2MM
  channel)`` of each consumer, the channels being the plan's (:class:`~aiedsl.ir.DmaChannel`);
* **the control overlay** (``aie-generate-column-control-overlay`` with its defaults,
  ``route-shim-to-tct=shim-only`` and no shim-DMA-to-tile-control flows): one priority packet
  flow per column that has a tile, from the shim's ``TileControl 0`` to its ``South 0``, named
  by the shim's controller id; the router takes it first, as mlir-aie's does, and it becomes
  :attr:`Routing.packet_flows` (for :attr:`aiedsl.ir.Physical.packet_flows`);
* **connections**: a shim DMA's stream passes the ``aie.shim_mux``
  (:func:`aiedsl.place.pathfinder.connects`);
* **no legal routing**: mlir-aie gives up after 1000 iterations. aiedsl does too, but looks
  after :data:`PATIENCE` iterations for a rectangle of tiles that too many streams must enter
  or leave (:func:`too_narrow`); with one, no router can route the design, and it stops there.

What the rest of aiedsl reads is kept: one :class:`~aiedsl.ir.Route` per fifo (its wires
between tiles, depth first from the source, and its switch connections), and, when no legal
routing exists, the bundles of wires still over capacity for :mod:`aiedsl.checks.routing`.

Example
-------
>>> result = route(placed, placed.physical)            # doctest: +SKIP
>>> result.congested, result.routes[0].connects[0]     # doctest: +SKIP
([], Connect(tile=(0, 1), src=('DMA', 0), dst=('North', 1), switch='switchbox'))
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.ir.physical import Connect, DmaChannel, PacketFlow, Physical, Route
from aiedsl.place.cuts import Cut, Ends, worst
from aiedsl.place.pathfinder import End, Paths, Stream, connects, find_paths
from aiedsl.place.switchbox import SwitchModel
from aiedsl.targets import TargetModel
from aiedsl.targets.model import Direction, direction_of

Coord = tuple[int, int]
Wire = tuple[Coord, Direction]
"""A bundle of wires leaving a tile in one direction."""

MAX_ITERATIONS = 1000
"""mlir-aie's limit (``DynamicTileAnalysis::maxIterations``)."""
PATIENCE = 4
"""After this many iterations without a legal routing, aiedsl looks for a proof that none exists
(:func:`too_narrow`) and, if it finds one, stops there: mlir-aie would iterate to its limit and
fail all the same. The routes of the last iteration show where the streams pile up. A few
iterations suffice for that (the proof does not depend on them): 40 took 8-11 s to refuse a
32-stream npu2 design a count proves unroutable (a scalability tester)."""


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
    packet_id: int | None = None
    """Its packet id when it is packet-switched."""

    def stream(self) -> Stream:
        """The flow as the router takes it: DMA port to DMA ports."""
        return Stream((self.src, ("DMA", self.src_channel)),
                      tuple((t, ("DMA", ch)) for t, ch in self.dsts),
                      packet=self.packet_id is not None)


@dataclass
class Congestion:
    """Wires wanted by more flows than exist, after the last iteration."""

    wire: Wire
    capacity: int
    flows: list[Flow] = field(default_factory=list)


def flows_of(d: Design, phys: Physical) -> list[Flow]:
    """The flows of a placed, allocated design, in the order mlir-aie routes them."""
    send = {c.fifo: c for c in phys.channels if c.direction == "MM2S"}
    recv: dict[str, list[DmaChannel]] = {}
    for c in phys.channels:
        if c.direction == "S2MM":
            recv.setdefault(c.fifo, []).append(c)
    out: list[Flow] = []
    for f in d.fifos:
        if f.name in phys.shared or f.name not in send:
            continue
        s = send[f.name]
        dsts = tuple((c.tile, c.channel) for c in recv.get(f.name, []))
        cons = [c.label() for c in f.consumers]
        to = cons[0] if len(cons) == 1 else f"{len(cons)} tiles"
        # packet ids as the objectFifo lowering gives them (packet-sw-objFifos): from 0, fifo
        # by fifo in its order; the control overlay's flows come later and keep their own
        pid = len(out) if d.flows == "packet" else None
        out.append(Flow(f.name, s.tile, s.channel, dsts,
                        f"{f.name}: {f.producer.label()} -> {to}", f.loc, pid))
    return out


def occupied_columns(d: Design) -> list[int]:
    """Columns with a tile in the emitted MLIR (a fifo end or a core)."""
    tiles = {e.tile for f in d.fifos for e in (f.producer, *f.consumers)}
    tiles |= {c.tile for c in d.cores}
    return sorted({t[0] for t in tiles if t is not None})


def control_overlay(columns: list[int], target: TargetModel) -> list[PacketFlow]:
    """The packet flows ``aie-generate-column-control-overlay`` adds (its default,
    ``route-shim-to-tct=shim-only``): per occupied column, in column order, the shim's tile
    control port to its South 0, named by the shim's controller id
    (:attr:`~aiedsl.targets.TargetModel.shim_controller_id`), keeping the packet header and
    routed with priority (AIEGenerateColumnControlOverlay.cpp,
    ``generatePacketFlowsForControl``)."""
    return [PacketFlow(id=target.shim_controller_id, src=((c, 0), "TileControl", 0),
                       dsts=(((c, 0), "South", 0),), keep_pkt_header=True, priority_route=True)
            for c in columns]


@dataclass
class Routing:
    """What the router found: routes, wires still over capacity (empty when legal), effort."""

    routes: tuple[Route, ...]
    congested: list[Congestion]
    iterations: int
    searches: int
    """Shortest-path searches run (one per flow per iteration, the control flows included)."""
    packet_flows: tuple[PacketFlow, ...] = ()
    """The control overlay's packet flows (for :attr:`aiedsl.ir.Physical.packet_flows`)."""
    cut: Cut | None = None
    """When no routing is legal and a rectangle of tiles proves it, that rectangle."""
    flows: tuple[Flow, ...] = ()
    """The flows routed, in order (what :attr:`Cut.streams` indexes)."""


def route(d: Design, phys: Physical, target: TargetModel) -> Routing:
    """Route every flow of ``d`` on ``target`` as mlir-aie does, with the column control
    overlay."""
    return route_flows(flows_of(d, phys), target, control_overlay(occupied_columns(d), target))


def route_flows(flows: list[Flow], target: TargetModel,
                control: list[PacketFlow] | None = None) -> Routing:
    """mlir-aie's PathFinder over ``target``'s switches: the control flows, then ``flows`` in
    the order given."""
    control = control or []
    model = SwitchModel.of(target)
    packets = [Stream((p.src[0], (p.src[1], p.src[2])),
                      tuple((t, (b, c)) for t, b, c in p.dsts), packet=True, priority=True)
               for p in control]
    # A draft of a design over its DMA channels (the map of it) can name channels its tiles do
    # not have: their streams cannot be routed, and are left out (mlir-aie never sees them).
    streams = [_existing(f.stream(), model) for f in flows]
    todo = packets + [s for s in streams if s is not None]
    paths = find_paths(todo, model, MAX_ITERATIONS, lambda: too_narrow(flows, target), PATIENCE)
    routes = []
    k = len(packets)
    for f, s in zip(flows, streams):
        if s is None:
            routes.append(Route(fifo=f.fifo, src=f.src, dsts=tuple(t for t, _ in f.dsts),
                                wires=(), connects=()))
            continue
        routes.append(_route(f, s, paths, k, model))
        k += 1
    congested = [] if paths.legal else _congestion(flows, routes, paths, target)
    cut = None if paths.legal else cut_of(flows, target)
    return Routing(tuple(routes), congested, paths.iterations, paths.searches, tuple(control),
                   cut, tuple(flows))


def _existing(s: Stream, model: SwitchModel) -> Stream | None:
    """``s`` without the receivers whose DMA channel its tile lacks; None if its sender's
    channel is missing too, or all of them are."""
    def exists(e: End, slave: bool) -> bool:
        (tile, (bundle, ch)) = e
        return ch < (model.slaves(tile, bundle) if slave else model.masters(tile, bundle))

    dsts = tuple(d for d in s.dsts if exists(d, False))
    if not exists(s.src, True) or not dsts:
        return None
    return Stream(s.src, dsts, s.packet, s.priority)


ONE_ID = 0b11111
"""The mask of the packet rule mlir-aie's packet router writes for a slave port that one packet
id alone takes (``runOnPacketFlow``: a bit of the five is 1 where the ids of the port agree); the
rule's value is then the id. A legal routing of aiedsl's packet flows gives each wire one flow,
so each of their switch connections is such a rule."""


def _route(f: Flow, s: Stream, paths: Paths, i: int, model: SwitchModel) -> Route:
    """A fifo's route: wires in tree order from its source, and its switch connections (a
    packet flow's, in the switchboxes, by the rule that matches its id alone; the shim mux is
    circuit-switched either way)."""
    wires = _tree_wires(s.src, paths.hops[i])
    return Route(fifo=f.fifo, src=f.src, dsts=tuple(t for t, _ in f.dsts), wires=tuple(wires),
                 connects=tuple(Connect(tile=t, src=a, dst=b, switch=k,  # type: ignore[arg-type]
                                        rule=None if f.packet_id is None or k != "switchbox"
                                        else (ONE_ID, f.packet_id))
                                for t, k, a, b in connects(s, paths.settings[i], model)),
                 packet_id=f.packet_id)


def _tree_wires(src: End, hops: list[tuple[End, End]]) -> list[tuple[Coord, Coord, int]]:
    """The tile-to-tile hops of a route, depth first from the source port (so every wire
    starts where an earlier one ended), as (from, to, index); branches in port order."""
    children: dict[End, list[End]] = {}
    for a, b in hops:
        children.setdefault(a, []).append(b)
    out: list[tuple[Coord, Coord, int]] = []
    todo = [src]
    while todo:
        a = todo.pop()
        kids = sorted(children.get(a, []), key=_port_order)
        for b in kids:
            if a[0] != b[0]:
                out.append((a[0], b[0], a[1][1]))
        todo.extend(reversed(kids))
    return out


def _port_order(e: End) -> tuple[int, int, str, int]:
    (col, row), (bundle, ch) = e
    return col, row, bundle, ch


def _congestion(flows: list[Flow], routes: list[Route], paths: Paths,
                target: TargetModel) -> list[Congestion]:
    """Bundles with a wire carrying more than one stream after the last iteration, each with
    every flow using any wire of the bundle (flow order), bundles by tile row, column, side."""
    over: set[Wire] = set()
    for here, there in paths.over:
        if here[0] != there[0]:
            over.add((here[0], direction_of(here[0], there[0])))
    users: dict[Wire, list[Flow]] = {}
    for f, r in zip(flows, routes):
        for a, b, _ in r.wires:
            w = (a, direction_of(a, b))
            if w in over and f not in users.setdefault(w, []):
                users[w].append(f)
    return [Congestion(w, target.link_capacity(*w), users.get(w, []))
            for w in sorted(over, key=lambda w: (w[0][1], w[0][0], w[1]))]


def too_narrow(flows: list[Flow], target: TargetModel) -> bool:
    """Is there a rectangle of tiles with fewer wires into it (or out of it) than flows that
    must enter (leave) it (:func:`cut_of`)? Then no routing is legal, by any router."""
    return cut_of(flows, target) is not None


def cut_of(flows: list[Flow], target: TargetModel) -> Cut | None:
    """The rectangle the flows most overfill (:func:`aiedsl.place.cuts.worst`), or None."""
    return worst([ends(f) for f in flows], target)


def ends(f: Flow) -> Ends:
    """A flow as :mod:`aiedsl.place.cuts` sees it: sender, receivers."""
    return f.src, tuple(t for t, _ in f.dsts)
