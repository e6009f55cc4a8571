"""Links through a core tile's memory (``forward(via=coretile(col, row))``): the DMA-only
transpose design, a forward next to a running core, the placer's choice, the rejections
mlir-aie's verifier makes (a split or join needs a memtile), and the forwards its lowering
gets wrong there (a change of element size or depth), word for word."""

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
    # mlir-aie puts the link's buffers beside the core's in the same memory; the forward's
    # output leaves the tile's DMA for the same tile's DMA, on the same channel number only
    # when 'b' takes MM2S 0 (declared first): else the route turns round in the Core port
    refused = design_file(NEXT_TO_A_CORE.replace("VIA", "coretile(0, 2)"))
    assert "error [stream routing]: the route of 'a_l1' turns round in port Core 0" in \
        _error(refused)
    b = '    b = fifo(Tensor[1024, i32], name="b")\n'
    path = design_file(NEXT_TO_A_CORE.replace("VIA", "coretile(0, 2)").replace(b, "").replace(
        '    a = fifo(', b + '    a = fifo('))
    handle = load_design(path)
    placed, _ = check_design(handle.ir)
    assert [link.tile for link in placed.links] == [(0, 2)]
    assert simulate(handle).passed


TWO_CORES = '''
from aiedsl import Tensor, coretile, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough

@design(device="npu1_1col")
def d(inp: Tensor[4, 256, i32], o1: Tensor[4, 256, i32], o2: Tensor[4, 256, i32]):
    a = fifo(Tensor[256, i32], name="a")
    a2 = a.forward(via=coretile(0, 2), name="a2")
    r1 = fifo(Tensor[256, i32], name="r1")
    r2 = fifo(Tensor[256, i32], name="r2")
    copy = passthrough(Tensor[256, i32])

    @herd(anchor=(0, 2))
    def c0():
        for _ in loop(4):
            with FIRST.consume() as s, r1.produce() as t:
                copy(s, t)

    @herd(anchor=(0, 3))
    def c1():
        for _ in loop(4):
            with a2.consume() as s, r2.produce() as t:
                copy(s, t)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(r1, o1)
        rt.drain(r2, o2)

@d.reference
def reference(inp):
    return inp.copy(), inp.copy()
'''
"""A forward through (0, 2), where core c0 runs, and c1 at (0, 3): ``FIRST`` is what c0
consumes."""


def test_the_core_on_a_forwards_tile_may_not_consume_its_input(design_file: DesignFile
                                                               ) -> None:
    """A tester's, from mlir-aie #1224: check and sim passed, aiecc fails ("core on the shared
    tile cannot access 'a'", the objectfifo split pass's verifyLinkAccesses)."""
    assert _error(design_file(TWO_CORES.replace("FIRST", "a"))) == (
        "d.py:15: error [core tile forward]: c0[0,0] on core tile (0, 2) consumes 'a', which the "
        "forward through that tile takes\n"
        "  limit: a core on a link's tile leaves the link's input to the link's DMA (mlir-aie's "
        "objectfifo split pass, verifyLinkAccesses: \"core on the shared tile cannot access 'a': "
        "a link moves objects by DMA\")\n"
        "  found: c0[0,0] consumes 'a' on (0, 2)\n"
        "  d.py:7: the forward\n"
        "  fix: consume the forward's output 'a2' in c0[0,0] (a core on the link's tile may), or "
        "forward through another tile (via=coretile(col, row) where no core consumes it, or "
        "via=memtile)")


def test_the_core_on_a_forwards_tile_may_consume_its_output(design_file: DesignFile) -> None:
    """The split pass gives that consumer an end of its own, fed by DMA from the link's
    buffers: a stream from the tile's DMA to its own, which the switch joins only channel n
    to channel n (r1 declared first takes MM2S 0, so a2 leaves by MM2S 1 for S2MM 1)."""
    r1 = '    r1 = fifo(Tensor[256, i32], name="r1")\n'
    src = TWO_CORES.replace("FIRST", "a2")
    assert "the route of 'a2' turns round in port Core 0" in _error(design_file(src))
    handle = load_design(design_file(src.replace(r1, "").replace(
        '    a = fifo(', r1 + '    a = fifo(')))
    check_design(handle.ir)
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


# -- one element size and one depth at both ends ----------------------------------------------
# mlir-aie's createAIETileDMA (AIEObjectFifoStatefulTransform.cpp) chains each end of a core
# tile's link with that end's own depth (op.size()) and its own element length, over the
# buffers of the end with the larger element, stopping where they end; only createMemTileDMA
# corrects the count and the length to the buffers'. aiedsl simulated the corrected chains.

FORWARD = '''
import numpy as np
from aiedsl import Tensor, coretile, design, fifo, herd, i32, loop, memtile, runtime
from aiedsl.kernels import passthrough

@design(device="npu1_1col")
def d(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
    a = fifo(Tensor[N_IN, i32], name="a"A_ARGS)
    a_l1 = a.forward(Tensor[N_OUT, i32], via=VIA, name="a_l1"FWD_ARGS)
    b = fifo(Tensor[N_OUT, i32], name="b")
    k = passthrough(Tensor[N_OUT, i32])

    @herd()
    def core():
        for _ in loop(ITERS):
            with a_l1.consume() as s, b.produce() as t:
                k(s, t)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)

@d.reference
def reference(inp):
    return inp.copy()
'''
"""Host -> a forward -> the core at (0, 2) -> host, 4096 elements in all."""


def _forward(design_file: DesignFile, n_in: int = 1024, n_out: int = 1024,
             via: str = "coretile(0, 3)", a_args: str = "", fwd_args: str = "") -> Path:
    src = (FORWARD.replace("N_IN", str(n_in)).replace("N_OUT", str(n_out))
           .replace("ITERS", str(4096 // n_out)).replace("VIA", via)
           .replace("A_ARGS", a_args).replace("FWD_ARGS", fwd_args))
    return design_file(src)


def _passes(path: Path) -> None:
    handle = load_design(path)
    check_design(handle.ir)
    result = simulate(handle)
    assert result.passed, [c.line() for c in result.checks]
    inp = np.arange(4096, dtype=np.int32)
    assert np.array_equal(simulate(handle, inputs={"inp": inp}).outputs["out"], inp)


def test_a_core_tile_forward_that_sends_from_fewer_buffers_is_refused(
        design_file: DesignFile) -> None:
    """The reviewer's case: mlir-aie's MM2S chain of 'a_l1' is one BD over a_cons_buff_0,
    looping, while the S2MM fills two buffers in turn."""
    path = _forward(design_file, a_args=", depth=2", fwd_args=", depth=1")
    assert _error(path) == (
        "d.py:8: error [core tile forward]: forward 'a' -> 'a_l1' through core tile (0, 3) "
        "receives into 2 buffers and sends from 1\n"
        "  limit: one depth in and out of a core tile: mlir-aie's createAIETileDMA chains one BD "
        "per buffer of each end's own depth over the receiving end's buffers (createMemTileDMA, "
        "on a memtile, counts both ends' BDs by those buffers), so the sending end's 1 BD would "
        "read only buffer 0 of the 2 buffers the receiving end fills in turn (elements sent "
        "twice or half-written, others never)\n"
        "  found: depth 2 of 'a' at the core tile, depth 1 of 'a_l1'\n"
        "  fix: give the forward the depth 'a' has at the core tile (a.forward(..., depth=2)), "
        "or 'a' depth 1 at the core tile, or forward through a memtile (via=memtile), whose "
        "lowering sends from every buffer")


def test_a_core_tile_forward_that_sends_from_more_buffers_is_refused(
        design_file: DesignFile) -> None:
    path = _forward(design_file, a_args=", depth=1", fwd_args=", depth=3")
    assert _error(path).splitlines()[:3] == [
        "d.py:8: error [core tile forward]: forward 'a' -> 'a_l1' through core tile (0, 3) "
        "receives into 1 buffer and sends from 3",
        "  limit: one depth in and out of a core tile: mlir-aie's createAIETileDMA chains one BD "
        "per buffer of each end's own depth over the receiving end's buffers (createMemTileDMA, "
        "on a memtile, counts both ends' BDs by those buffers), so the sending end's 3 BDs "
        "would run past the 1 buffer: the lowering points the chain's last BD at an empty "
        "block, which MLIR's verifier rejects",
        "  found: depth 1 of 'a' at the core tile, depth 3 of 'a_l1'"]


def test_the_depth_at_the_core_tile_is_the_one_compared(design_file: DesignFile) -> None:
    """'a' keeps depth 2 at the shim; consumer_depth makes its core-tile end single-buffered,
    and that end's depth is the one mlir-aie's per-end depth list gives the link's buffers."""
    path = _forward(design_file, a_args=", consumer_depth=1")
    assert _error(path).splitlines()[2] == (
        "  found: depth 1 of 'a' at the core tile, depth 2 of 'a_l1'")
    _passes(_forward(design_file, a_args=", consumer_depth=1", fwd_args=", depth=1"))


def test_a_core_tile_forward_that_halves_its_element_is_refused(design_file: DesignFile
                                                                 ) -> None:
    """The reviewer's second case: each 512-element MM2S BD sends half a 1024-element buffer,
    and the core, waiting for the other halves, hangs on the NPU."""
    path = _forward(design_file, n_out=512)
    assert _error(path) == (
        "d.py:8: error [core tile forward]: forward 'a' -> 'a_l1' through core tile (0, 3) "
        "changes the element size: 1024xi32 in, 512xi32 out\n"
        "  limit: one element size in and out of a core tile: mlir-aie's createAIETileDMA gives "
        "each end's BDs the length of that end's own element, over the buffers of the larger, "
        "so each 512-element BD sending 'a_l1' would read the first 512 elements of a "
        "1024-element buffer and the rest would never be sent (its consumers would wait for "
        "it: a hang)\n"
        "  found: 1024xi32 in, 512xi32 out\n"
        "  fix: forward through a memtile (via=memtile), whose lowering (createMemTileDMA) moves "
        "the whole 1024xi32 element at both ends, or forward 1024xi32 unchanged through the "
        "core tile (a.forward(via=...) without a new element type)")


def test_a_core_tile_forward_that_doubles_its_element_is_refused(design_file: DesignFile
                                                                  ) -> None:
    path = _forward(design_file, n_in=512)
    assert _error(path).splitlines()[:2] == [
        "d.py:8: error [core tile forward]: forward 'a' -> 'a_l1' through core tile (0, 3) "
        "changes the element size: 512xi32 in, 1024xi32 out",
        "  limit: one element size in and out of a core tile: mlir-aie's createAIETileDMA gives "
        "each end's BDs the length of that end's own element, over the buffers of the larger, "
        "so each 512-element BD receiving 'a' would fill the first 512 elements of a "
        "1024-element buffer that the core tile then sends whole (the rest of it stale)"]


@pytest.mark.parametrize("n_in, n_out, via, a_args, fwd_args", [
    (1024, 1024, "coretile(0, 3)", ", depth=2", ", depth=2"),   # the forward takes a's depth
    (1024, 1024, "coretile(0, 3)", ", depth=1", ", depth=1"),   # or a takes the forward's
    (1024, 1024, "memtile", ", depth=2", ", depth=1"),          # or a memtile forwards
    (1024, 1024, "memtile", ", depth=1", ", depth=3"),
    (1024, 512, "memtile", "", ""),
    (512, 1024, "memtile", "", ""),
    (1024, 1024, "coretile(0, 3)", ", depth=3", ""),            # one depth, any
])
def test_the_fixes_and_the_forwards_mlir_aie_lowers_right_pass(
        design_file: DesignFile, n_in: int, n_out: int, via: str, a_args: str,
        fwd_args: str) -> None:
    _passes(_forward(design_file, n_in, n_out, via, a_args, fwd_args))


def test_a_core_tile_forward_may_reshape_an_element_of_the_same_size(
        design_file: DesignFile) -> None:
    """mlir-aie gives both ends the same length (getNumElements) whatever the shape."""
    path = design_file(FORWARD.replace("Tensor[N_IN, i32]", "Tensor[32, 32, i32]")
                       .replace("N_OUT", "1024").replace("ITERS", "4")
                       .replace("VIA", "coretile(0, 3)").replace("A_ARGS", "")
                       .replace("FWD_ARGS", ""))
    _passes(path)


def test_the_plan_of_a_core_tile_forward_is_mlir_aies(design_file: DesignFile) -> None:
    """What the map draws of a refused design is mlir-aie's chain (one BD over the first of
    the two buffers); a memtile's lowering counts the other end's BDs by the buffers."""
    from aiedsl.checks import draft
    from aiedsl.place.objectfifo import lower

    def chains(path: Path) -> dict[str, list[tuple[str, int]]]:
        placed, _, _ = draft(load_design(path).ir)
        low = lower(placed, get_target(placed.device))
        return {name: [(bd.buffer, bd.length) for bd in low.channel_of[name].chain]
                for name in ("a_cons", "a_l1")}

    assert chains(_forward(design_file, a_args=", depth=2", fwd_args=", depth=1")) == {
        "a_cons": [("a_cons_buff_0", 1024), ("a_cons_buff_1", 1024)],
        "a_l1": [("a_cons_buff_0", 1024)]}
    assert chains(_forward(design_file, n_out=512)) == {
        "a_cons": [("a_cons_buff_0", 1024), ("a_cons_buff_1", 1024)],
        "a_l1": [("a_cons_buff_0", 512), ("a_cons_buff_1", 512)]}
    assert chains(_forward(design_file, via="memtile", a_args=", depth=2",
                           fwd_args=", depth=1")) == {
        "a_cons": [("a_cons_buff_0", 1024), ("a_cons_buff_1", 1024)],
        "a_l1": [("a_cons_buff_0", 1024), ("a_cons_buff_1", 1024)]}
    assert chains(_forward(design_file)) == {  # what a core tile lowers right: the same
        "a_cons": [("a_cons_buff_0", 1024), ("a_cons_buff_1", 1024)],
        "a_l1": [("a_cons_buff_0", 1024), ("a_cons_buff_1", 1024)]}


def test_a_core_tile_layout_neither_end_can_take_is_sent_to_a_memtile(
        design_file: DesignFile) -> None:
    """A layout tester's 2x256 transpose through a core tile: no core receives the output, and
    the inverse order needs a wrap of 256 words, past a core BD's 255; the fix said to write
    the layout where the design already had it."""
    text = '''
        from aiedsl import Tensor, coretile, design, fifo, i32, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[2, 256, i32], C: Tensor[256, 2, i32]):
            a = fifo(Tensor[256, 2, i32], name="a", dims_from_stream=[(2, 1), (256, 2)])
            b = a.forward(via=coretile(0, 2), name="b")
            with runtime() as rt:
                rt.fill(a, A)
                rt.drain(b, C)

        @d.reference
        def ref(A):
            return A.T.copy()
        '''
    assert _error(design_file(text)).splitlines()[-1] == (
        "  fix: forward 'a' through a memtile instead (leave out via=), whose DMA takes "
        "dims_from_stream=[(2, 1), (256, 2)] as written")
    assert simulate(load_design(design_file(text.replace("via=coretile(0, 2), ", "")))).passed
