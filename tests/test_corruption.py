"""Corrupt one thing in a working design; the comparison FAILs or a report names the mistake.

Each test starts from a design that passes (a shipped one, or a small one written here), changes
one line (a split's parts or offsets, a memtile layout, a runtime pattern, a release), and shows
what the simulator makes of it: a FAIL naming the worst element, a static DesignError, or a
Deadlock whose chain ends at the mistake. Sizes are small so the file runs in a few seconds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pytest

import aiedsl.checks
import aiedsl.sim
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.place import place
from aiedsl.sim import Deadlock, SimResult, simulate
from aiedsl.targets import get_target

DesignFile = Callable[..., Path]
ROOT = Path(__file__).resolve().parent.parent
SMALL_GEMM = {"M": "256", "K": "256", "N": "256"}


def corrupt(text: str, before: str, after: str) -> str:
    """``text`` with the one occurrence of ``before`` replaced by ``after``."""
    assert text.count(before) == 1, before
    return text.replace(before, after)


def lines(result: SimResult) -> list[str]:
    return [c.line() for c in result.checks]


# -- a split: its parts in the wrong order FAIL; its offsets only place the parts -------------------

SPLIT = '''
    import numpy as np

    from aiedsl import Tensor, design, fifo, herd, i32, join, loop, runtime
    from aiedsl.kernels import passthrough


    @design(device="npu1_1col")
    def split_join(inp: Tensor[8192, i32], out: Tensor[8192, i32]):
        whole = fifo(Tensor[2048, i32], name="whole")
        lo, hi = whole.split(2, offsets=[0, 1024], names=["lo", "hi"])
        r0 = fifo(Tensor[1024, i32], name="r0")
        r1 = fifo(Tensor[1024, i32], name="r1")
        back = join([r0, r1], name="back")
        copy = passthrough(Tensor[1024, i32])

        @herd(rows=2)
        def core(x, y):
            for _ in loop(4):
                with [lo, hi][y].consume() as a, [r0, r1][y].produce() as b:
                    copy(a, b)

        with runtime() as rt:
            rt.fill(whole, inp)
            rt.drain(back, out)


    @split_join.reference
    def reference(inp):
        return inp.copy()
    '''
RAMP = {"inp": np.arange(8192, dtype=np.int32)}


def test_split_design_passes(design_file: DesignFile) -> None:
    result = simulate(load_design(design_file(SPLIT)), RAMP)
    assert result.passed and lines(result) == ["PASS out: exact (integers must match exactly)"]


def test_split_parts_in_the_wrong_order_fail_at_the_first_element(
        design_file: DesignFile) -> None:
    # the first half of each 2048-element block goes to the core that writes the second half
    path = design_file(corrupt(SPLIT, "lo, hi = whole.split", "hi, lo = whole.split"))
    result = simulate(load_design(path), RAMP)
    assert not result.passed
    check = result.checks[0]
    assert check.worst_index == (0,) and (check.got, check.want) == (1024, 0)
    assert lines(result) == [
        "FAIL out: worst element [0] got 1024 want 0 (|error| 1024; integers must match "
        "exactly)\n  wrong: all 8,192 elements"]


def test_split_offsets_out_of_list_order_are_a_design_error(design_file: DesignFile) -> None:
    """``offsets=[1024, 0]`` instead of ``[0, 1024]``: refused.

    mlir-aie lowers a split (a distribute link) to one memtile BD per part, in the order the parts
    are listed, each moving from its offset up to the next listed offset
    (``ObjectFifoLinkOp::getDistributeTransferLengths``): here -1024 and 2048 elements, not the
    two halves.
    """
    path = design_file(corrupt(SPLIT, "offsets=[0, 1024]", "offsets=[1024, 0]"))
    with pytest.raises(DesignError) as excinfo:
        simulate(load_design(path))
    assert str(excinfo.value).splitlines()[:2] == [
        "d.py:10: error [split offsets]: split of 'whole' (2048 elements): part 'lo' at offset "
        "1024 leaves a gap before it",
        "  limit: parts back to back in the order listed, covering the parent exactly "
        "(mlir-aie moves each part up to the next listed offset)"]


def test_split_offsets_that_overlap_are_a_design_error(design_file: DesignFile) -> None:
    path = design_file(corrupt(SPLIT, "offsets=[0, 1024]", "offsets=[0, 512]"))
    with pytest.raises(DesignError) as excinfo:
        simulate(load_design(path))
    assert str(excinfo.value) == (
        "d.py:10: error [split offsets]: split of 'whole' (2048 elements): part 'hi' at offset "
        "512 overlaps the part before it\n"
        "  limit: parts back to back in the order listed, covering the parent exactly "
        "(mlir-aie moves each part up to the next listed offset)\n"
        "  found: lo [0, 1024), hi [512, 1536)\n"
        "  fix: put 'hi' at offset 1024"
    )


# -- gemm_bf16: a wrong memtile layout or runtime pattern FAILs, naming C's worst element ---------

GEMM = (ROOT / "designs" / "gemm_bf16.py").read_text()


def gemm(design_file: DesignFile, before: str = "", after: str = "") -> SimResult:
    text = corrupt(GEMM, before, after) if before else GEMM
    return simulate(load_design(design_file(text, "gemm_bf16.py"), SMALL_GEMM))


def test_small_gemm_passes(design_file: DesignFile) -> None:
    result = gemm(design_file)
    assert result.passed and lines(result)[0].startswith("PASS C: worst element [")


B_IN_A_BLOCKS = ("dims_to_stream=block_dims(k, n, s, t)", "dims_to_stream=block_dims(m, k, r, s)")
C_NOT_UNBLOCKED = ("dims_to_stream=unblock_dims(m, n, r, t), name=\"c\")", "name=\"c\")")


@pytest.fixture
def without_layout_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let the checks pass a kernel-layout mistake, to see what the simulator makes of it."""
    monkeypatch.setattr(aiedsl.checks, "check_kernel_layouts", lambda d: None)


def test_gemm_b_packed_in_a_blocks_is_a_layout_error(design_file: DesignFile) -> None:
    # B's memtile packs it in A's 4x8 blocks instead of the 8x4 blocks the mmul reads
    with pytest.raises(DesignError) as excinfo:
        gemm(design_file, *B_IN_A_BLOCKS)
    assert str(excinfo.value) == (
        "gemm_bf16.py:43: error [kernel layout]: kernel 'matmul_bf16_f32_64x64x64_4x8x4' reads "
        "'b' (64x64xbf16) in 8x4 blocks, but fifo 'b_0' delivers it as 4x8 blocks\n"
        "  limit: 8x4 blocks of the 64x64 tile, blocks row-major\n"
        "  found: dims_to_stream [(16, 256), (8, 8), (4, 64), (8, 1)] at the memtile\n"
        "  gemm_bf16.py:55: the call of 'matmul_bf16_f32_64x64x64_4x8x4'\n"
        "  fix: pack it with dims_to_stream=block_dims(64, 64, 8, 4); take the block shape from "
        "the kernel (mm.ir.params) so it follows the device's mmul")


def test_gemm_b_packed_in_a_blocks_fails_in_the_simulator(design_file: DesignFile,
                                                          without_layout_check: None) -> None:
    result = gemm(design_file, *B_IN_A_BLOCKS)
    assert result.passed is False
    assert lines(result) == [
        "FAIL C: worst element [138, 253] got 77.5222 want -14.8041 (|error| 92.3; tolerance "
        "0.0001 relative + 0.00739 absolute)\n  wrong: 65,522 of 65,536 elements (99.9%)"]


def test_gemm_c_not_unblocked_is_a_layout_error(design_file: DesignFile) -> None:
    # C's 4x4 blocks would reach the host as they are in the cores, not unpacked to row-major
    with pytest.raises(DesignError) as excinfo:
        gemm(design_file, *C_NOT_UNBLOCKED)
    assert str(excinfo.value) == (
        "gemm_bf16.py:45: error [kernel layout]: kernel 'matmul_bf16_f32_64x64x64_4x8x4' writes "
        "'c' (64x64xf32) in 4x4 blocks, but the memtile sends fifo 'c_l3_0' on unchanged, "
        "blocks and all\n"
        "  limit: each 64x64 part leaves row-major (its 4x4 blocks undone)\n"
        "  found: no dims_to_stream at the memtile\n"
        "  gemm_bf16.py:55: the call of 'matmul_bf16_f32_64x64x64_4x8x4'\n"
        "  fix: unpack it with dims_to_stream=unblock_dims(64, 64, 4, 4) on channel 'c' (line "
        "45), what the memtile sends on")


def test_gemm_c_not_unblocked_fails_in_the_simulator(design_file: DesignFile,
                                                     without_layout_check: None) -> None:
    result = gemm(design_file, *C_NOT_UNBLOCKED)
    assert result.passed is False
    assert lines(result) == [
        "FAIL C: worst element [85, 251] got 65.6748 want -1.70456 (|error| 67.4; tolerance "
        "0.0001 relative + 0.00739 absolute)\n  wrong: 61,426 of 65,536 elements (93.7%)"]


# gemm_runtime's sequence written out, with A's tile row for herd row i one too far down
A_ONE_ROW_DOWN = """\
        from aiedsl import tiles

        for i in range(COLS):
            rt.drain(c[i, :], C, tiles(C, (m, n), cols=range(i, N // n, COLS),
                                       order="grouped", group=ROWS))
            for rg in range(row_groups):
                rt.fill(a[i], A, tiles(A, (m, k), rows=(rg * ROWS + i + 1) % (M // m),
                                       repeat=col_groups))
                rt.fill(b[i], B, tiles(B, (k, n), cols=range(i, N // n, COLS), order="col"))
        rt.sync()"""


def test_gemm_a_fill_at_the_wrong_tile_row_fails(design_file: DesignFile) -> None:
    result = gemm(design_file, "        gemm_runtime(rt, a, b, c, A, B, C, tile=(m, k, n), "
                  "herd=(COLS, ROWS))", A_ONE_ROW_DOWN)
    assert result.passed is False
    assert lines(result) == [
        "FAIL C: worst element [140, 144] got -73.8702 want 10.0085 (|error| 83.9; tolerance "
        "0.0001 relative + 0.00739 absolute)\n  wrong: 65,507 of 65,536 elements (99.9%)"]


# -- a missing release: the checks report it; without them, the run FAILs or deadlocks ------------

COPY = '''
    from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
    from aiedsl.kernels import passthrough


    @design(device="npu1_1col")
    def d(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
        a = fifo(Tensor[1024, i32], name="a")
        b = fifo(Tensor[1024, i32], name="b")
        copy = passthrough(Tensor[1024, i32])

        @herd()
        def core():
            for _ in loop(4):
                src = a.acquire("consume")
                dst = b.acquire("produce")
                copy(src, dst)
                b.release("produce")
                a.release("consume")

        with runtime() as rt:
            rt.fill(a, inp)
            rt.drain(b, out)


    @d.reference
    def reference(inp):
        return inp.copy()
    '''
NO_CONSUME_RELEASE = ("                a.release(\"consume\")\n", "")
NO_PRODUCE_RELEASE = ("                b.release(\"produce\")\n", "")
COPY_RAMP = {"inp": np.arange(4096, dtype=np.int32)}


@pytest.fixture
def without_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let ``simulate`` skip the static checks (it still places the design)."""
    monkeypatch.setattr(aiedsl.sim, "check_design", lambda ir: (place(ir, get_target(ir.device)), {}))


def test_copy_with_every_release_passes(design_file: DesignFile) -> None:
    assert simulate(load_design(design_file(COPY)), COPY_RAMP).passed


def test_missing_consume_release_is_reported_by_the_checks(design_file: DesignFile) -> None:
    path = design_file(corrupt(COPY, *NO_CONSUME_RELEASE))
    with pytest.raises(DesignError) as excinfo:
        simulate(load_design(path))
    assert not isinstance(excinfo.value, Deadlock)
    assert str(excinfo.value) == (
        "d.py:13: error [hang: unbalanced loop]: each iteration of the loop in core[0,0] "
        "acquires 1 element(s) of 'a' (consume) but releases 0\n"
        "  limit: what a loop body acquires, it releases\n"
        "  found: held 0 before the first iteration, 1 after it\n"
        "  fix: release 1 element(s) of 'a' in each iteration: call .release(\"consume\", 1) "
        "on 'a' at the end of the loop body"
    )


def test_missing_consume_release_without_the_checks_fails(design_file: DesignFile,
                                                          without_checks: None) -> None:
    # an acquire tops up what the core holds: every iteration copies the first tile again, and
    # the runtime does not wait for its fill, so the run ends with a wrong result, not a hang
    result = simulate(load_design(design_file(corrupt(COPY, *NO_CONSUME_RELEASE))), COPY_RAMP)
    assert lines(result) == [
        "FAIL out: worst element [3072] got 0 want 3072 (|error| 3072; integers must match "
        "exactly)\n  wrong: 3,072 of 4,096 elements (75%), all within [1024:4096]"]


def test_missing_produce_release_is_reported_by_the_checks(design_file: DesignFile) -> None:
    path = design_file(corrupt(COPY, *NO_PRODUCE_RELEASE))
    with pytest.raises(DesignError) as excinfo:
        simulate(load_design(path))
    assert str(excinfo.value) == (
        "d.py:13: error [hang: unbalanced loop]: each iteration of the loop in core[0,0] "
        "acquires 1 element(s) of 'b' (produce) but releases 0\n"
        "  limit: what a loop body acquires, it releases\n"
        "  found: held 0 before the first iteration, 1 after it\n"
        "  fix: release 1 element(s) of 'b' in each iteration: call .release(\"produce\", 1) "
        "on 'b' at the end of the loop body"
    )


def test_missing_produce_release_without_the_checks_deadlocks(design_file: DesignFile,
                                                              without_checks: None) -> None:
    # no element of 'b' is ever published: the drain the runtime waits for never completes
    with pytest.raises(Deadlock) as excinfo:
        simulate(load_design(design_file(corrupt(COPY, *NO_PRODUCE_RELEASE))))
    assert str(excinfo.value) == (
        "d.py:19: error [deadlock]: nothing can move and the runtime sequence is not done (1 core(s) "
        "blocked)\n"
        "  the runtime waits at the end of its sequence for its drain of 'b' (line 21) to "
        "complete (d.py:19)\n"
        "  <- the shim DMA (0,0) draining 'b' waits for data (d.py:8)\n"
        "  <- the DMA of core[0,0] (0,2) sending 'b' waits for core[0,0] to release an element "
        "to send (d.py:8)\n"
        "  <- core[0,0] (0,2) ended its program still holding 1 element(s) of 'b' (produce) "
        "and started it again: it never releases them (d.py:15)\n"
        "  fix: make the runtime fill and drain exactly what the cores take and give, in an "
        "order that lets data flow (drains issued before they are waited on), and check every "
        "acquire is matched by a release"
    )
