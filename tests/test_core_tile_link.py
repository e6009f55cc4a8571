"""Links through a core tile's memory (``forward(via=coretile(col, row))``): the DMA-only
transpose design, a forward next to a running core, the placer's choice, and the rejections
mlir-aie's verifier makes (a split or join needs a memtile), word for word."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from aiedsl.checks import check_design
from aiedsl.codegen.mlir import render_mlir
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.targets import get_target

DesignFile = Callable[..., Path]

NEXT_TO_A_CORE = '''
import numpy as np
from aiedsl import Tensor, coretile, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough

@design(device="npu1_1col")
def d(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    a_l1 = a.forward(via=VIA, name="a_l1")
    b = fifo(Tensor[1024, i32], name="b")
    k = passthrough(Tensor[1024, i32])

    @herd()
    def core():
        for _ in loop(4):
            with a_l1.consume() as s, b.produce() as t:
                k(s, t)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)

@d.reference
def reference(inp):
    return inp.copy()
'''
"""Host -> a core tile's memory -> the core at (0, 2) -> host; ``VIA`` is replaced."""


def test_transpose_dma_passes_with_no_core_program(in_root: Path) -> None:
    handle = load_design("designs/transpose_dma.py", {"M": "32", "K": "16"})
    placed, _ = check_design(handle.ir)
    assert not placed.cores
    assert [(link.via, link.tile) for link in placed.links] == [("core", (0, 2))]
    mlir = render_mlir(placed, get_target(placed.device))
    assert "aie.core(" not in mlir
    assert "aie.objectfifo @cols_in(%tile_0_0, {%tile_0_2}, 2 : i32)" in mlir
    assert "aie.objectfifo @cols_out(%tile_0_2, {%tile_0_0}, 2 : i32)" in mlir
    assert "aie.objectfifo.link [@cols_in] -> [@cols_out] ([] [])" in mlir
    result = simulate(handle)
    assert result.passed, [c.line() for c in result.checks]
    inp = np.arange(32 * 16, dtype=np.int32)
    got = simulate(handle, inputs={"inp": inp}).outputs["out"]
    assert np.array_equal(got, inp.reshape(32, 16).T.reshape(-1))


def test_core_tile_link_buffers_count_against_that_tile(in_root: Path) -> None:
    from aiedsl.emit import generate
    report = generate(load_design("designs/transpose_dma.py")).files["report.txt"]
    # two 8 KB buffers (64 x 32 i32), no stack: no core runs there
    assert "(0,2)  core  16.0 / 64 KB  1 / 2   1 / 2    2 / 16  4 / 16" in report


def test_forward_through_a_core_tile_next_to_a_running_core(design_file: DesignFile) -> None:
    path = design_file(NEXT_TO_A_CORE.replace("VIA", "coretile(0, 3)"))
    handle = load_design(path)
    placed, _ = check_design(handle.ir)
    assert [link.tile for link in placed.links] == [(0, 3)]
    assert placed.fifo("a_l1").producer.label() == "core tile (0, 3)"
    result = simulate(handle)
    assert result.passed, [c.line() for c in result.checks]


def test_an_unpinned_core_tile_link_takes_a_tile_no_core_runs_on(design_file: DesignFile
                                                                  ) -> None:
    path = design_file(NEXT_TO_A_CORE.replace("VIA", "coretile"))
    placed, _ = check_design(load_design(path).ir)
    assert [c.tile for c in placed.cores] == [(0, 2)]
    assert [link.tile for link in placed.links] == [(0, 3)]


def test_a_core_tile_may_forward_and_compute(design_file: DesignFile) -> None:
    # mlir-aie puts the link's buffers beside the core's in the same memory
    path = design_file(NEXT_TO_A_CORE.replace("VIA", "coretile(0, 2)"))
    handle = load_design(path)
    placed, _ = check_design(handle.ir)
    assert [link.tile for link in placed.links] == [(0, 2)]
    assert simulate(handle).passed


def _error(path: Path) -> str:
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    return str(e.value)


SPLIT = '''
from aiedsl import Tensor, coretile, design, fifo, i32, runtime

@design(device="npu1_1col")
def d(inp: Tensor[1024, i32], out: Tensor[1024, i32]):
    a = fifo(Tensor[512, i32], name="a")
    parts = a.split(2, via=coretile(0, 2))
'''


def test_a_split_through_a_core_tile_is_refused(design_file: DesignFile) -> None:
    assert _error(design_file(SPLIT)) == (
        "d.py:6: error [link]: a split goes through a core tile\n"
        "  limit: a core tile's DMA forwards 1 -> 1 only; splits and joins go through a memtile "
        "(mlir-aie: join and distribute are unavailable on compute or shim tiles)\n"
        "  found: coretile(0, 2)\n"
        "  fix: use via=memtile, or forward through the core tile and split at a memtile")


def test_a_join_through_a_core_tile_is_refused(design_file: DesignFile) -> None:
    src = SPLIT.replace("fifo, i32", "fifo, i32, join").replace(
        "parts = a.split(2, via=coretile(0, 2))",
        "j = join([a, fifo(Tensor[512, i32])], via=coretile(0, 2))")
    assert _error(design_file(src)).splitlines()[0] == (
        "d.py:6: error [link]: a join goes through a core tile")


def test_a_core_tile_pin_on_a_memtile_is_refused(design_file: DesignFile) -> None:
    path = design_file(NEXT_TO_A_CORE.replace("VIA", "coretile(0, 1)"))
    assert _error(path) == (
        "d.py:8: error [placement]: forward of 'a', 'a_l1' is pinned to tile (0, 1), which is "
        "not a core tile of npu1_1col\n"
        "  limit: core tiles in column 0, row 2..5\n"
        "  found: tile (0, 1)\n"
        "  fix: pin a core tile, e.g. coretile(0, 2)")


def test_a_core_tile_link_end_takes_no_dims_from_stream(design_file: DesignFile) -> None:
    path = design_file('''
        from aiedsl import Tensor, coretile, design, fifo, i32, runtime

        @design(device="npu1_1col")
        def d(inp: Tensor[1024, i32], out: Tensor[1024, i32]):
            a = fifo(Tensor[16, 32, i32], name="a", dims_from_stream=[(32, 1), (16, 32)])
            b = a.forward(via=coretile(0, 2), name="b")
            with runtime() as rt:
                rt.fill(a, inp)
                rt.drain(b, out)
        ''')
    assert _error(path).splitlines()[:2] == [
        "d.py:5: error [dma pattern]: dims_from_stream of 'a' on core tile (0, 2) breaks a DMA "
        "rule",
        "  limit: no dims_from_stream on a core tile endpoint (aiedsl applies a core tile's "
        "layout as it sends)"]


def test_a_core_tile_link_over_the_tile_memory_is_refused(design_file: DesignFile) -> None:
    path = design_file('''
        from aiedsl import Tensor, coretile, design, fifo, i32, runtime

        @design(device="npu1_1col")
        def d(inp: Tensor[20480, i32], out: Tensor[20480, i32]):
            a = fifo(Tensor[10240, i32], name="a")
            b = a.forward(via=coretile(0, 2), name="b")
            with runtime() as rt:
                rt.fill(a, inp)
                rt.drain(b, out)
        ''')
    assert _error(path).splitlines()[:5] == [
        "d.py:6: error [core data memory]: core tile (0, 2) needs more data memory than it has",
        "  limit: 65,536 bytes",
        "  found: 81,920 bytes",
        "  d.py:6: a 2 x 40960 B: 81920",
        "  fix: free 16,384 bytes: lower a fifo's depth (depth=1 single-buffers it), use smaller "
        "tiles"]
