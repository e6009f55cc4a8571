"""A broadcast stream moves each word to every receiver at once: receivers of one memtile
element taken in parts (K_MT staging: an element of several core tiles) stay in step."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from aiedsl.checks import check_design
from aiedsl.loader import load_design
from aiedsl.sim.hang_run import stopped, timing_machine
from aiedsl.targets import get_target

STAGED = {"M": "1152", "K": "896", "N": "1152", "m": "96", "k": "56", "n": "96",
          "OUT": "bf16", "K_MT": "448"}


def test_receivers_of_a_staged_broadcast_take_each_tile_together(in_root: Path) -> None:
    """gemm_bf16 with K_MT=448 sends each memtile element (8 tiles of 96x56) as one chunk that
    the cores take a tile at a time. A receiver checked only that the others were at the same
    chunk, not the same tile, so a row's cores drifted up to a whole element apart (one 6 tiles
    behind), which the circuit-switched stream cannot do; with the constants refitted to
    ColorThreshold's rtp writes, the simulator then found a deadlock in this design (and in
    Taka et al.'s settings) that no hardware reaches."""
    h = load_design("designs/gemm_bf16.py", STAGED)
    placed, _ = check_design(h.ir)
    m = timing_machine(placed, {}, get_target("npu1"))
    m.engine.trace = True
    m.engine.run()
    stopped(m)  # the run ends
    spans: dict[str, list[list[tuple[float, float]]]] = defaultdict(list)
    for p in m.engine.procs:
        if p.kind == "s2mm" and p.name.startswith("dma core[") and " <- " in p.name:
            fifo = p.name.split(" <- ")[1]
            spans[fifo].append([(round(s, 6), round(e, 6)) for s, e, _ in p.spans])
    assert sorted(spans) == ["a_0", "a_1", "a_2", "a_3", "b_0", "b_1", "b_2", "b_3"]
    for fifo, each in spans.items():
        assert len(each) == 4 and len(each[0]) == 3 * 3 * (896 // 56), fifo
        assert all(s == each[0] for s in each), fifo  # every tile, at the same time
