"""aiedsl's router against mlir-aie's, on the reference lowerings.

For each build in the reference material's ``mlir-aie-lowered/``, the flows mlir-aie routed are
read back from its ``physical.mlir``: each DMA source is traced through the ``aie.connect``s of
the switchboxes and shim muxes to its DMA destinations, and the flows are put in the order the
objectfifo lowering created them (it adds each fifo's ``aie.flow``s right after the fifo, so the
fifo order of ``input.mlir``). Routed by :mod:`aiedsl.place.pathfinder` after the column control
overlay, they must give exactly mlir-aie's connections (the overlay's as the packet rules of
the shim switches). This checks the router alone: the DMA
channels are mlir-aie's, whatever aiedsl's allocation says. A second test routes aiedsl's own
plan with its channels set to mlir-aie's, which checks how :func:`aiedsl.place.route.route`
builds the flows (endpoints, order, control overlay) from the plan.

The fixtures pin the router down tightly: routing the same flows in another order, or leaving
the shim's FIFO, PLIO, NOC or TileControl ports out of the graph, changes tens to hundreds of
the GEMMs' connections.
"""

from __future__ import annotations

import re

import pytest
from shared_reference import reference_file
from test_lowering import planned

from aiedsl.ir.physical import Physical
from aiedsl.place.pathfinder import End, Stream, connects, find_paths
from aiedsl.place.route import MAX_ITERATIONS, control_overlay, route
from aiedsl.place.switchbox import FACING, STEP, SwitchModel
from aiedsl.targets import TargetModel, get_target
from aiedsl.toolchain.physical import diff_physical, parse_physical

FIXTURES = ("gemm_bf16_npu1_1024x512x768", "gemm_bf16_npu1_512", "gemm_bf16_npu2_8x4_512",
            "passthrough_npu1", "passthrough_npu2_1col", "vector_scalar_mul_npu1",
            "vector_scalar_mul_npu2")

Coord = tuple[int, int]
_FIFO = re.compile(r"aie\.objectfifo @([\w.$-]+)\(%tile_(\d+)_(\d+)")
_TILE = re.compile(r"%tile_(\d+)_(\d+)")


def _fixture(name: str) -> tuple[str, Physical, SwitchModel]:
    text = reference_file("mlir-aie-lowered", name, "input.mlir").read_text()
    real = parse_physical(reference_file("mlir-aie-lowered", name, "physical.mlir").read_text())
    return text, real, SwitchModel.of(_target(text))


def _target(text: str) -> TargetModel:
    device = re.search(r"aie\.device\((\w+)\)", text)
    assert device
    return get_target(device.group(1))


def _fifos(text: str) -> list[tuple[str, Coord, frozenset[Coord]]]:
    """(name, producer tile, consumer tiles) of each objectfifo of ``input.mlir``, in order."""
    out = []
    for line in text.splitlines():
        m = _FIFO.search(line)
        if m:
            cons = line[line.index("{", m.end()):line.index("}", m.end())]
            out.append((m.group(1), (int(m.group(2)), int(m.group(3))),
                        frozenset((int(c), int(r)) for c, r in _TILE.findall(cons))))
    return out


def _columns(text: str) -> list[int]:
    return sorted({int(c) for c, _ in re.findall(r"aie\.tile\((\d+), (\d+)\)", text)})


def traced_flows(real: Physical, model: SwitchModel) -> list[Stream]:
    """Every DMA-to-DMA flow of a lowering, its source traced through the connections."""
    switch: dict[tuple[Coord, str], list[tuple[tuple[str, int], tuple[str, int]]]] = {}
    for r in real.routes:
        for c in r.connects:
            switch.setdefault((c.tile, c.switch), []).append((c.src, c.dst))
    starts: list[tuple[End, Coord, tuple[str, int]]] = []
    for (tile, kind), cs in sorted(switch.items()):
        for src, dst in cs:
            if src[0] == "DMA" and kind == "shim_mux":  # enters the switch where the mux says
                starts.append(((tile, src), tile, ("South", dst[1])))
            elif src[0] == "DMA" and model.kind(tile) != "shim":
                starts.append(((tile, src), tile, src))
    flows = []
    for src, tile, port in starts:
        dsts: list[End] = []
        todo = [(tile, port)]
        while todo:
            t, p = todo.pop()
            for s, d in switch.get((t, "switchbox"), []):
                if s != p:
                    continue
                if d[0] == "DMA":
                    dsts.append((t, d))
                elif model.kind(t) == "shim" and d[0] == "South":  # into a shim DMA by the mux
                    dsts += [(t, md) for ms, md in switch.get((t, "shim_mux"), [])
                             if ms == ("North", d[1]) and md[0] == "DMA"]
                else:
                    dc, dr = STEP[d[0]]
                    todo.append(((t[0] + dc, t[1] + dr), (FACING[d[0]], d[1])))
        flows.append(Stream(src, tuple(sorted(dsts))))
    return flows


def in_lowering_order(flows: list[Stream], text: str, real: Physical
                      ) -> list[tuple[str, Stream]]:
    """Each flow with its fifo, in the fifos' order in ``input.mlir``. A flow's fifo is the one
    with its sending and receiving tiles; fifos alike in that are told apart by the names of
    the buffers their channels move (a link's memtile channels carry one fifo's name only)."""
    fifos = _fifos(text)
    chan = {(c.tile, c.direction, c.channel): c.fifo for c in real.channels}
    order = []
    for f in flows:
        tiles = frozenset(t for t, _ in f.dsts)
        cands = [i for i, (_, prod, cons) in enumerate(fifos)
                 if prod == f.src[0] and cons == tiles]
        if len(cands) > 1:
            names = {chan.get((t, "S2MM", p[1])) for t, p in f.dsts}
            names.add(chan.get((f.src[0], "MM2S", f.src[1][1])))
            cands = [i for i in cands if fifos[i][0] in names]
        assert len(cands) == 1, (f, [fifos[i][0] for i in cands])
        order.append((cands[0], f))
    assert len({i for i, _ in order}) == len(order), "two flows for one fifo"
    return [(fifos[i][0], f) for i, f in sorted(order, key=lambda x: x[0])]


def _control(text: str) -> list[Stream]:
    return [Stream((p.src[0], (p.src[1], p.src[2])), tuple((t, (b, c)) for t, b, c in p.dsts),
                   packet=True, priority=True)
            for p in control_overlay(_columns(text), _target(text))]


@pytest.mark.parametrize("name", FIXTURES)
def test_the_router_routes_as_mlir_aie(name: str) -> None:
    text, real, model = _fixture(name)
    flows = [s for _, s in in_lowering_order(traced_flows(real, model), text, real)]
    control = _control(text)
    paths = find_paths(control + flows, model, MAX_ITERATIONS)
    assert paths.legal and paths.iterations == 1
    ours = {(*c, None) for f, s in zip(control + flows, paths.settings) if not f.packet
            for c in connects(f, s, model)}
    # the control overlay's flows are packet flows: in the shim's switchbox, a packet rule for
    # the controller's id (15) from each connection of the route, and no shim mux
    ours |= {(tile, "switchbox", a, b, (31, 15)) for f, s in zip(control, paths.settings)
             for tile, pairs in s.items() for a, b in pairs}
    theirs = {(c.tile, c.switch, c.src, c.dst, c.rule) for r in real.routes for c in r.connects}
    missing, extra = sorted(theirs - ours), sorted(ours - theirs)
    assert not missing and not extra, (
        f"{len(missing)} connections only mlir-aie makes, {len(extra)} only aiedsl:\n"
        + "\n".join(f"- {c}" for c in missing) + "\n" + "\n".join(f"+ {c}" for c in extra))


@pytest.mark.parametrize("name", FIXTURES)
def test_the_control_overlay_is_mlir_aies(name: str) -> None:
    text, real, _ = _fixture(name)
    assert control_overlay(_columns(text), _target(text)) == list(real.packet_flows)


@pytest.mark.parametrize("name", FIXTURES)
def test_route_makes_the_lowerings_connections_from_the_plan(name: str, in_root: object) -> None:
    """aiedsl's plan, with each fifo end's DMA channel set to mlir-aie's, routes to the
    lowering's connections and packet flows."""
    text, real, model = _fixture(name)
    real_channel = {}
    for fifo, s in in_lowering_order(traced_flows(real, model), text, real):
        real_channel[(fifo, s.src[0], "MM2S")] = s.src[1][1]
        real_channel.update({(fifo, t, "S2MM"): p[1] for t, p in s.dsts})
    placed = planned(name)
    assert placed.physical is not None
    channels = tuple(c.model_copy(update={
        "channel": real_channel.get((c.fifo, c.tile, c.direction), c.channel)})
        for c in placed.physical.channels)
    result = route(placed, placed.physical.model_copy(update={"channels": channels}),
                   get_target(placed.device))
    ours = Physical(routes=result.routes, packet_flows=result.packet_flows)
    assert not result.congested
    assert diff_physical(ours, real, kinds=("connect", "packet flow")) == []
