"""Notes: what is legal and often a mistake (a host tensor's bytes read as another kind of number,
a fifo element filled from a block of another shape), said by ``aiedsl check``, ``report.txt``
and under a FAIL, word for word."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Callable

import numpy as np

from aiedsl.checks import check_design
from aiedsl.emit import generate
from aiedsl.loader import load_design
from aiedsl.ir.types import Pattern
from aiedsl.notes import block_of, design_notes, writes_twice
from aiedsl.sim import simulate

DesignFile = Callable[..., Path]

FLOAT_INTO_INT = '''
    import numpy as np
    from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
    from aiedsl.kernels import vector_scalar

    @design(device="npu1_1col")
    def d(inp: Tensor[1024, "float32"], out: Tensor[1024, {out}]):
        a = fifo(Tensor[256, i32])
        b = fifo(Tensor[256, i32])
        add = vector_scalar("add", Tensor[256, i32])

        @herd()
        def core():
            for _ in loop(4):
                with a.consume() as x, b.produce() as y:
                    add(x, y, 1)

        with runtime() as rt:
            rt.fill(a, inp)
            rt.drain(b, out, wait=True)

    @d.reference
    def reference(inp):
        with np.errstate(invalid="ignore"):  # i32 bits read as f32: some are NaN
            return (inp.astype(np.int64) + 1).astype(np.{ref})
    '''
"""A first-day user's f32 tensor into an i32 fifo and kernel (the fill at line 18, the drain at
line 19)."""

FILL_NOTE = ("d.py:18: note: host tensor 'inp' is f32 and fifo 'a' carries i32: its bytes are "
             "reinterpreted, not converted")


def test_a_float_tensor_into_an_integer_fifo_is_noted(design_file: DesignFile) -> None:
    """It passed check with no word, and sim said only FAIL: the note says it at check time
    and under the FAIL."""
    handle = load_design(design_file(FLOAT_INTO_INT.format(out="i32", ref="int32")))
    placed, _ = check_design(handle.ir)
    assert [n.line() for n in design_notes(placed)] == [FILL_NOTE]
    result = simulate(handle)
    (c,) = result.checks
    assert not c.passed and c.hints == [FILL_NOTE.replace(": note:", ":")]
    assert c.line().endswith("\n  note: d.py:18: host tensor 'inp' is f32 and fifo 'a' carries "
                             "i32: its bytes are reinterpreted, not converted")


def test_a_drain_into_a_tensor_of_another_kind_is_noted_under_its_own_fail(
        design_file: DesignFile) -> None:
    handle = load_design(design_file(FLOAT_INTO_INT.format(out='"float32"', ref="float32")))
    placed, _ = check_design(handle.ir)
    notes = [n.line() for n in design_notes(placed)]
    assert notes == [
        FILL_NOTE,
        "d.py:19: note: fifo 'b' carries i32 and host tensor 'out' is f32: its bytes are "
        "reinterpreted, not converted"]
    (c,) = simulate(handle).checks
    assert not c.passed and c.hints == [n.replace(": note:", ":") for n in notes]


def test_a_byte_view_of_another_size_is_not_noted(in_root: Path) -> None:
    """mlir-aie's two_col-like reinterpretations (i32 host, u8 fifos) are meant; the shipped
    designs have nothing to note."""
    for design in sorted(Path("designs").glob("*.py")):
        assert design_notes(load_design(design).ir) == [], design


TILED = '''
    from aiedsl import Tensor, design, f32, fifo, herd, loop, runtime, tiles
    from aiedsl.kernels import passthrough

    @design(device="npu1_1col")
    def d(A: Tensor[64, 64, f32], S: Tensor[64, 64, f32]):
        a = fifo(Tensor[{elem}, f32])
        s = fifo(Tensor[{elem}, f32])
        copy = passthrough(Tensor[{elem}, f32])

        @herd()
        def core():
            for _ in loop({n}):
                with a.consume() as x, s.produce() as y:
                    copy(x, y)

        with runtime() as rt:
            rt.fill(a, A{fill})
            rt.drain(s, S{drain}, wait=True)

    @d.reference
    def reference(A):
        return A.copy()
    '''
"""A copy through 2-D elements, the fill at line 17, the drain at line 18."""


def test_a_transposed_tile_is_noted_under_the_fail(design_file: DesignFile) -> None:
    """A first-day user's tiles(A, (64, 16)) into Tensor[16, 64, f32]: sim said only FAIL and
    how many elements were wrong."""
    handle = load_design(design_file(TILED.format(
        elem="16, 64", n=4, fill=", tiles(A, (64, 16))", drain=", tiles(S, (16, 64))")))
    note = ("d.py:17: note: rt.fill of 'a' reads a 64x16 block of 'A' into its first 16x64 "
            "element (the shape transposed): the element's rows are not the block's; "
            "tiles(A, (16, 64)) reads 16x64 blocks")
    assert [n.line() for n in design_notes(handle.ir)] == [note]
    (c,) = simulate(handle).checks
    assert not c.passed and c.hints == [note.replace(": note:", ":")]


def test_a_fill_with_no_pattern_from_wider_rows_is_noted(design_file: DesignFile) -> None:
    """A 64-wide matrix filled with no pattern into 16x16 elements: each element is four of
    its rows. Copied back the same way it passes: a note, not an error."""
    handle = load_design(design_file(TILED.format(elem="16, 16", n=16, fill="", drain="")))
    assert [n.line() for n in design_notes(handle.ir)] == [
        "d.py:17: note: rt.fill of 'a' with no pattern reads a 4x64 block of 'A' into its "
        "first 16x16 element (another shape): the element's rows are not the block's; "
        "tiles(A, (16, 16)) reads 16x16 blocks",
        "d.py:18: note: rt.drain of 's' with no pattern writes a 4x64 block of 'S' from its "
        "first 16x16 element (another shape): the element's rows are not the block's; "
        "tiles(S, (16, 16)) writes 16x16 blocks"]
    result = simulate(handle)
    assert result.passed and result.checks[0].hints == []  # a PASS needs no explaining


def test_elements_that_are_no_block_are_noted(design_file: DesignFile) -> None:
    handle = load_design(design_file(TILED.format(
        elem="8, 12", n=1, fill=", (0, [96], [1])", drain=", (0, [96], [1])")))
    assert design_notes(handle.ir)[0].line() == (
        "d.py:17: note: rt.fill of 'a' reads 96 consecutive elements of 'A' (rows of 64), no "
        "block of it, into its first 8x12 element: the element's rows are not rows of 'A'")


def test_a_layout_the_pattern_makes_on_purpose_is_not_noted(design_file: DesignFile) -> None:
    """A DMA transpose (a 64x16 block of i32-sized elements read column by column into 16x64
    elements) and mmul blocks (the element's own block, in 4x8 blocks) are layouts, not
    mistakes."""
    handle = load_design(design_file(TILED.format(
        elem="16, 64", n=4, fill=", (0, [4, 1, 16, 64], [16, 0, 1, 64])",
        drain=", tiles(S, (16, 64))")))
    assert design_notes(handle.ir) == []
    handle = load_design(design_file(TILED.format(
        elem="64, 64", n=1, fill=", (0, [16, 8, 4, 8], [256, 8, 64, 1])", drain=""), "b.py"))
    assert design_notes(handle.ir) == []


def test_tiles_of_the_elements_shape_are_not_noted(design_file: DesignFile) -> None:
    handle = load_design(design_file(TILED.format(
        elem="16, 64", n=4, fill=", tiles(A, (16, 64))", drain=", tiles(S, (16, 64))")))
    assert design_notes(handle.ir) == []
    assert simulate(handle).passed


def test_block_of() -> None:
    idx = (np.arange(4)[:, None] * 64 + np.arange(16)[None, :]).ravel() + 130
    assert block_of(idx, 64) == (4, 16)
    assert block_of(np.arange(96), 64) is None  # a row and a half
    assert block_of(np.arange(60, 70), 64) is None  # wraps onto the next row
    assert block_of(idx[::-1].copy(), 64) is None  # out of order
    assert block_of(np.array([70, 5]), 64) is None  # backwards, across rows


def test_check_prints_the_notes_and_report_lists_them(design_file: DesignFile) -> None:
    path = design_file(TILED.format(elem="16, 64", n=4, fill=", tiles(A, (64, 16))",
                                    drain=", tiles(S, (16, 64))"))
    r = subprocess.run([sys.executable, "-m", "aiedsl", "check", str(path)], capture_output=True,
                       text=True, cwd=path.parent)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-2:] == [
        "d.py:17: note: rt.fill of 'a' reads a 64x16 block of 'A' into its first 16x64 element "
        "(the shape transposed): the element's rows are not the block's; tiles(A, (16, 64)) "
        "reads 16x64 blocks",
        "d: all checks pass on npu1_1col"]
    report = generate(load_design(path)).files["report.txt"]
    assert ("\nnotes (legal, and often a mistake)\n"
            "  d.py:17: note: rt.fill of 'a' reads a 64x16 block of 'A' into its first 16x64 "
            "element (the shape transposed): the element's rows are not the block's; "
            "tiles(A, (16, 64)) reads 16x64 blocks\n\n") in report


MEMTILE_TRANSPOSE = '''
from aiedsl import Tensor, design, fifo, i32, runtime

@design(device="npu1_1col")
def d29(A: Tensor[32, 64, i32], C: Tensor[64, 32, i32]):
    a = fifo(Tensor[64, 32, i32], dims_from_stream=[(32, 1), (64, 32)])
    b = a.forward()
    with runtime() as rt:
        rt.fill(a, A)
        rt.drain(b, C)

@d29.reference
def ref(A):
    return A.T.copy()
'''


def test_a_transpose_a_dma_makes_on_the_way_is_not_noted(design_file: DesignFile) -> None:
    """A layout tester: the memtile's dims_from_stream transposes each 32x64 block into the
    64x32 element on purpose, and the fill was noted as 'the shape transposed'."""
    handle = load_design(design_file(MEMTILE_TRANSPOSE))
    assert design_notes(handle.ir) == []
    assert simulate(handle).passed


REWRITING_DRAIN = '''
import numpy as np
from aiedsl import Tensor, design, fifo, i32, runtime

@design(device="npu1_1col")
def d23(A: Tensor[128, i32], C: Tensor[96, i32]):
    a = fifo(Tensor[128, i32], name="a")
    b = a.forward(name="b")
    with runtime() as rt:
        rt.fill(a, A)
        rt.drain(b, C, (0, [1, 1, 2, 64], [0, 0, STRIDE, 1]))

@d23.reference
def ref(A):
    out = np.zeros(96, A.dtype)
    out[0:64] = A[0:64]
    out[32:96] = A[64:128]
    return out
'''


def test_a_drain_writing_an_element_twice_is_noted(design_file: DesignFile) -> None:
    """A layout tester's drain of 2 rows of 64 at a stride of 32 wrote C[32:64] twice, passed
    and said nothing (the last write stands: one channel writes in order)."""
    handle = load_design(design_file(REWRITING_DRAIN.replace("STRIDE", "32")))
    assert [n.line() for n in design_notes(handle.ir)] == [
        "d.py:10: note: rt.drain of 'b' writes some elements of 'C' more than once (offset 0, "
        "sizes [1, 1, 2, 64], strides [0, 0, 32, 1]): the last write of each stands; is a "
        "stride or a size off?"]
    assert simulate(handle).passed
    tiles = Pattern(offset=0, sizes=(2, 2, 32, 32), strides=(2048, 32, 64, 1))
    assert not writes_twice(tiles)  # 32x32 tiles of a 64x64 matrix, each element once
    assert writes_twice(tiles.model_copy(update={"strides": (2048, 16, 64, 1)}))
