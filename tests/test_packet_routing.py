"""The packet-group rule of mlir-aie's router, against a transliteration of mlir-aie's
``Pathfinder`` (tests/mlir_pathfinder.py).

``Pathfinder::findPaths`` (AIEPathFinder.cpp) routes each packet group in turn. When a packet
flow takes a connection (a cell of a switch's connection matrix), every cell of that switch
sharing the taken cell's slave port (its row) or master port (its column) is marked with the
flow's group; a flow of another group that then takes a marked cell takes its capacity at once
(``usedCapacity++``, so the ``bumpDemand`` right after it raises the cell's demand, and the
end of the group raises it again), where an unmarked cell counts the packet flow and takes
capacity only at the end of its group. aiedsl's router did not mark, so once flows crowded a
switch (a congested iteration) the later flows of the iteration saw other demands than in
mlir-aie, and a tester's congested packet design (six joined channels into one memtile, npu1)
got 6 routes other than mlir-aie's.

The transliteration is checked first on real lowerings: it makes the connections mlir-aie
made for three of the reference designs. Then, on a congested case, aiedsl's router routes as it
does, and the case is one the rule decides: without the marking, the transliteration routes
otherwise.
"""

from __future__ import annotations

import pytest
from test_route_lowering import _control, _fixture, in_lowering_order, traced_flows

from aiedsl.place.pathfinder import Stream, connects, find_paths
from aiedsl.place.route import MAX_ITERATIONS, control_overlay
from aiedsl.place.switchbox import SwitchModel
from aiedsl.targets import get_target

import mlir_pathfinder

NPU1_1COL = get_target("npu1_1col")


def _settings(s: dict) -> dict:  # type: ignore[type-arg]
    return {tile: sorted(pairs) for tile, pairs in s.items()}


@pytest.mark.parametrize("name", ["passthrough_npu1", "vector_scalar_mul_npu1",
                                  "gemm_bf16_npu1_512"])
def test_the_transliteration_makes_the_connections_mlir_aie_made(name: str) -> None:
    text, real, model = _fixture(name)
    flows = _control(text) + [s for _, s in in_lowering_order(traced_flows(real, model), text,
                                                               real)]
    solution = mlir_pathfinder.route(model, flows)
    assert solution is not None and solution[0] == 1
    made = {c for f in flows if not f.packet for c in connects(f, solution[1][f.src], model)}
    assert made == {(c.tile, c.switch, c.src, c.dst) for r in real.routes for c in r.connects
                    if c.rule is None}


def _end(col: int, row: int, ch: int) -> tuple[tuple[int, int], tuple[str, int]]:
    return (col, row), ("DMA", ch)


# Nine packet flows on one column, four of them to and from the memtile's DMA: the wires
# between the rows are short of them in the first iterations (three iterations route them).
CROWDED = [
    Stream(_end(0, 2, 1), (_end(0, 0, 1), _end(0, 1, 0), _end(0, 5, 1)), packet=True),
    Stream(_end(0, 4, 1), (_end(0, 2, 0), _end(0, 3, 0)), packet=True),
    Stream(_end(0, 1, 5), (_end(0, 0, 0),), packet=True),
    Stream(_end(0, 3, 0), (_end(0, 1, 2),), packet=True),
    Stream(_end(0, 1, 3), (_end(0, 4, 0),), packet=True),
    Stream(_end(0, 5, 1), (_end(0, 1, 4),), packet=True),
    Stream(_end(0, 5, 0), (_end(0, 1, 1),), packet=True),
    Stream(_end(0, 2, 0), (_end(0, 5, 0),), packet=True),
    Stream(_end(0, 1, 1), (_end(0, 2, 1),), packet=True),
]


def test_a_packet_flow_is_charged_at_once_for_a_cell_another_group_marked() -> None:
    model = SwitchModel.of(NPU1_1COL)
    control = [Stream((p.src[0], (p.src[1], p.src[2])),
                      tuple((t, (b, c)) for t, b, c in p.dsts), packet=True, priority=True)
               for p in control_overlay([0], NPU1_1COL)]
    streams = control + CROWDED
    ours = find_paths(streams, model, MAX_ITERATIONS)
    theirs = mlir_pathfinder.route(model, streams)
    unmarked = mlir_pathfinder.route(model, streams, mark=False)
    assert ours.legal and theirs is not None and unmarked is not None
    assert ours.iterations == theirs[0] == 3
    assert [_settings(s) for s in ours.settings] == \
        [_settings(theirs[1][s.src]) for s in streams]
    # the rule decides this case: six of the nine flows go otherwise without it
    differ = [s.src for s in CROWDED
              if _settings(unmarked[1][s.src]) != _settings(theirs[1][s.src])]
    assert len(differ) == 6
    # two of the routes, as the transliteration of mlir-aie's router gives them
    assert _settings(ours.settings[len(control) + 3]) == {  # (0, 3) DMA 0 -> memtile DMA 2
        (0, 1): [(("North", 3), ("DMA", 2))],
        (0, 2): [(("North", 2), ("South", 3))],
        (0, 3): [(("DMA", 0), ("South", 2))]}
    assert _settings(ours.settings[len(control) + 6]) == {  # (0, 5) DMA 0 -> memtile DMA 1
        (0, 1): [(("North", 0), ("DMA", 1))],
        (0, 2): [(("North", 3), ("South", 0))],
        (0, 3): [(("North", 1), ("South", 3))],
        (0, 4): [(("North", 3), ("South", 1))],
        (0, 5): [(("DMA", 0), ("South", 3))]}


def test_circuit_flows_mark_nothing() -> None:
    """The same flows as circuits: no group, no marking; aiedsl's router and the
    transliteration agree with and without it."""
    model = SwitchModel.of(NPU1_1COL)
    circuits = [Stream(s.src, s.dsts) for s in CROWDED]
    ours = find_paths(circuits, model, MAX_ITERATIONS)
    theirs = mlir_pathfinder.route(model, circuits)
    unmarked = mlir_pathfinder.route(model, circuits, mark=False)
    assert theirs is not None and unmarked is not None and theirs == unmarked
    assert ours.iterations == theirs[0]
    assert [_settings(s) for s in ours.settings] == \
        [_settings(theirs[1][s.src]) for s in circuits]
