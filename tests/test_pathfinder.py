"""The router's rules that need no reference material: mlir-aie's ports, its tie-breaking, the
shim mux, the control overlay, and giving up on a design no router can route."""

from __future__ import annotations

import time

from aiedsl.ir.loc import Loc
from aiedsl.place.pathfinder import Stream, connects, find_paths
from aiedsl.place.route import Flow, control_overlay, route_flows, too_narrow
from aiedsl.place.switchbox import SwitchModel
from aiedsl.targets import get_target

NPU1_1COL = SwitchModel.of(get_target("npu1_1col"))


def _connects(stream: Stream, model: SwitchModel = NPU1_1COL) -> set:
    paths = find_paths([stream], model, 10)
    assert paths.legal and paths.iterations == 1
    return set(connects(stream, paths.settings[0], model))


def test_a_shim_dma_stream_crosses_the_shim_mux() -> None:
    """Shim MM2S 0 enters the switch at South 3 through the mux, whichever master the route
    takes (mlir-aie's passthrough: North 4, as its heap breaks the tie between North 0-5);
    shim S2MM 1 is fed from South 3 through the mux."""
    up = Stream(((0, 0), ("DMA", 0)), (((0, 1), ("DMA", 0)),))
    assert _connects(up) == {((0, 0), "shim_mux", ("DMA", 0), ("North", 3)),
                             ((0, 0), "switchbox", ("South", 3), ("North", 4)),
                             ((0, 1), "switchbox", ("South", 4), ("DMA", 0))}
    down = Stream(((0, 1), ("DMA", 1)), (((0, 0), ("DMA", 1)),))
    assert _connects(down) == {((0, 1), "switchbox", ("DMA", 1), ("South", 2)),
                               ((0, 0), "switchbox", ("North", 2), ("South", 3)),
                               ((0, 0), "shim_mux", ("North", 3), ("DMA", 1))}


def test_ties_fall_as_mlir_aies_heap_breaks_them() -> None:
    """Of six equally short wires from a memtile up to a core, mlir-aie takes North 1."""
    s = Stream(((0, 1), ("DMA", 0)), (((0, 2), ("DMA", 0)),))
    assert _connects(s) == {((0, 1), "switchbox", ("DMA", 0), ("North", 1)),
                            ((0, 2), "switchbox", ("South", 1), ("DMA", 0))}


def test_a_broadcast_is_one_tree_and_later_flows_take_other_wires() -> None:
    model = SwitchModel.of(get_target("npu1"))
    bcast = Stream(((0, 1), ("DMA", 0)), tuple(((c, 2), ("DMA", 0)) for c in range(4)))
    again = Stream(((0, 1), ("DMA", 1)), tuple(((c, 2), ("DMA", 1)) for c in range(4)))
    paths = find_paths([bcast, again], model, 10)
    assert paths.legal
    wires = [{(a[0], b[0], a[1]) for a, b in h if a[0] != b[0]} for h in paths.hops]
    assert [len(w) for w in wires] == [4, 4]  # up once, then east along the row
    assert not wires[0] & wires[1]


def test_flows_from_one_source_are_one_flow() -> None:
    """mlir-aie's addFlow: a second flow from the same port adds its destinations."""
    model = SwitchModel.of(get_target("npu1"))
    a = Stream(((0, 1), ("DMA", 0)), (((0, 2), ("DMA", 0)),))
    b = Stream(((0, 1), ("DMA", 0)), (((1, 2), ("DMA", 0)),))
    paths = find_paths([a, b], model, 10)
    assert paths.searches == 1 and paths.settings[1] == {}
    assert {t for t in paths.settings[0]} == {(0, 1), (0, 2), (1, 2)}


def test_the_control_overlay_has_one_flow_per_occupied_column() -> None:
    flows = control_overlay([0, 2], get_target("npu1"))
    assert [(f.id, f.src, f.dsts, f.keep_pkt_header, f.priority_route) for f in flows] == [
        (15, ((0, 0), "TileControl", 0), (((0, 0), "South", 0),), True, True),
        (15, ((2, 0), "TileControl", 0), (((2, 0), "South", 0),), True, True)]


def _six_streams_into_the_memtile() -> list[Flow]:
    loc = Loc(file="d.py", line=1)
    return [Flow(f"{k}_{y}", (0, 3 + y), ch, (((0, 1), 2 * y + ch),), f"{k}_{y}", loc)
            for ch, k in enumerate(("lo", "hi")) for y in range(3)]


def test_a_cut_too_narrow_is_proof_that_no_routing_exists() -> None:
    flows = _six_streams_into_the_memtile()
    assert too_narrow(flows, get_target("npu1_1col"))      # 6 streams, 4 wires into row 1
    assert not too_narrow(flows, get_target("npu1_2col"))  # the shim row can bring 2 more
    t0 = time.perf_counter()
    target = get_target("npu1_1col")
    result = route_flows(flows, target, control_overlay([0], target))
    assert time.perf_counter() - t0 < 5  # given up long before mlir-aie's 1000 iterations
    assert result.iterations == 4
    worst = max(result.congested, key=lambda c: len(c.flows) - c.capacity)
    assert worst.wire == ((0, 2), "south") and worst.capacity == 4 and len(worst.flows) == 6


def test_a_draft_with_channels_its_tiles_lack_still_routes_the_rest() -> None:
    """The map of a design over its DMA channels: such streams get no wires, the others do."""
    loc = Loc(file="d.py", line=1)
    flows = [Flow("a", (0, 0), 0, (((0, 2), 0),), "a", loc),
             Flow("c", (0, 0), 1, (((0, 2), 2),), "c", loc)]  # a core has S2MM 0 and 1
    result = route_flows(flows, get_target("npu1_1col"))
    assert not result.congested
    assert [len(r.wires) for r in result.routes] == [2, 0]
    assert result.routes[1].dsts == ((0, 2),) and result.routes[1].connects == ()


def test_a_switchs_connections_are_every_pair_it_may_connect() -> None:
    """``connections`` (what the routing graph is built from) says of each slave/master pair
    what ``legal`` says, on every tile kind and edge of both device families."""
    for device in ("npu1", "npu2_3col"):
        m = SwitchModel.of(get_target(device))
        for tile in m.tiles():
            slaves, masters, outs = m.connections(tile)
            assert len(outs) == len(slaves)
            for p, qs in zip(slaves, outs):
                assert qs == [q for q in masters if m.legal(tile, p, q)], (device, tile, p)
    shim = SwitchModel.of(get_target("npu1")).connections((0, 0))
    assert shim[2][shim[0].index(("DMA", 0))] == shim[1]  # the mux's ports reach anything
