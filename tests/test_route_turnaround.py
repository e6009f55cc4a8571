"""Streams that start and end on one tile's DMA: the route mlir-aie's router makes for them.

A core that sends a fifo to itself through its DMA (to change the layout on the way, or a
forward through its own tile) has a stream from one of its tile's MM2S channels to one of its
S2MM channels. A core tile's switch joins DMA n only to DMA n; with other numbers the router's
shortest path turns round in the Core port (mlir-aie issue 2689), where the data is lost.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.place.pathfinder import Stream, find_paths
from aiedsl.place.switchbox import SwitchModel
from aiedsl.sim import simulate
from aiedsl.targets import get_target

DesignFile = Callable[..., Path]

SELF = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough

@design(device="npu1_1col")
def lb(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    FIFOS
    copy = passthrough(Tensor[1024, i32])

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as x:
                with lp.produce() as nxt:
                    copy(x, nxt)
            with lp.consume() as prev, b.produce() as y:
                copy(prev, y)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)

@lb.reference
def reference(inp):
    return np.concatenate([c.reshape(16, 64).T.reshape(-1) for c in inp.reshape(4, 1024)])
'''
LP = 'lp = fifo(Tensor[1024, i32], name="lp", dims_to_stream=[(64, 1), (16, 64)])'
B = 'b = fifo(Tensor[1024, i32], name="b")'


def test_a_stream_to_another_channel_of_its_own_tile_is_refused(
        design_file: DesignFile) -> None:
    """lp leaves by MM2S 0 for S2MM 1 (a took S2MM 0): the router's path runs DMA 0 -> Core 0
    -> DMA 1, and check said the design passed, as sim did."""
    path = design_file(SELF.replace("FIFOS", f"{LP}\n    {B}"))
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    assert str(e.value) == (
        "d.py:8: error [stream routing]: the route of 'lp' turns round in port Core 0 of the "
        "switch of (0, 2): in by DMA 0, out by Core 0, in again by Core 0, out by DMA 1; what "
        "leaves by a port never comes back in by it, so the stream is lost and the design hangs "
        "without an error\n"
        "  limit: a stream crosses each switch once, in by a slave port and out by a master (the "
        "route mlir-aie's router before PR 3592 makes here; mlir-aie issue 2689)\n"
        "  found: connect<DMA : 0, Core : 0> and connect<Core : 0, DMA : 1> in the switch of "
        "(0, 2)\n"
        "  fix: a core tile's switch joins a DMA output only to the DMA input of the same "
        "number, and 'lp' leaves by MM2S 0 for S2MM 1 of (0, 2): declare the fifos so that it "
        "takes the same channel both ways (a tile numbers its MM2S channels, and its S2MM "
        "channels, in the order its fifos are declared), or make the layout change in the "
        "core's kernel so that the fifo stays in the tile's memory")


def test_the_same_channel_both_ways_is_one_connection(design_file: DesignFile) -> None:
    """b declared first: lp takes MM2S 1 and S2MM 1, which the switch joins directly, as
    findPaths does for a flow to its own port (connect<DMA : 1, DMA : 1>)."""
    handle = load_design(design_file(SELF.replace("FIFOS", f"{B}\n    {LP}")))
    placed, _ = check_design(handle.ir)
    assert placed.physical is not None
    lp = next(r for r in placed.physical.routes if r.fifo == "lp")
    assert [(c.tile, c.src, c.dst) for c in lp.connects] == [((0, 2), ("DMA", 1), ("DMA", 1))]
    result = simulate(handle)
    assert result.passed, [c.line() for c in result.checks]


def test_the_router_connects_a_port_to_itself() -> None:
    """Pathfinder::findPaths on a flow whose destination is its source port."""
    model = SwitchModel.of(get_target("npu1_1col"))
    end = ((0, 2), ("DMA", 1))
    paths = find_paths([Stream(end, (end,))], model, 10)
    assert paths.legal and paths.settings[0] == {(0, 2): [(("DMA", 1), ("DMA", 1))]}
    assert np.array_equal(paths.hops[0], [])
