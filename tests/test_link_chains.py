"""A fifo takes part in at most one link (mlir-aie refuses a chain of links through a fifo):
the error shows the whole chain, and what it says to do works."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from aiedsl.checks import check_design
from aiedsl.codegen.mlir import render_mlir
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.targets import get_target

DesignFile = Callable[..., Path]

# Two herds with different tilings of one block (MLIR-AIR's L2 buffer between two herds): herd
# 'rows' makes row tiles, joined into the block; herd 'cols' takes column tiles of it.
HEAD = '''
    from aiedsl import Tensor, design, fifo, herd, i32, join, runtime
    from aiedsl.kernels import passthrough

    R, C, P = 16, 16, 2

    @design(device="npu1_2col")
    def d(a: Tensor[R, C, i32], b: Tensor[R, C, i32]):
        ins = [fifo(Tensor[R * C // P, i32], name=f"in{i}") for i in range(P)]
        rows = [fifo(Tensor[R * C // P, i32], name=f"row{i}") for i in range(P)]
        blk = join(rows, name="blk")
'''
TAIL = '''
        outs = [fifo(Tensor[R * C // P, i32], name=f"out{i}") for i in range(P)]
        cp = passthrough(Tensor[R * C // P, i32])

        @herd(cols=P, name="rows")
        def row_herd(x, y):
            with ins[x].consume() as s, rows[x].produce() as o:
                cp(s, o)

        @herd(cols=P, name="cols")
        def col_herd(x, y):
            with cols[x].consume() as s, outs[x].produce() as o:
                cp(s, o)

        with runtime() as rt:
            for i in range(P):
                rt.fill(ins[i], a, (i * R * C // P, [R * C // P], [1]))
%s
            for i in range(P):
                rt.drain(outs[i], b, (i * (C // P), [R, C // P], [C, 1]))

    @d.reference
    def reference(%s):
        return a.copy()
'''


def design(middle: str, runtime: str = "", reference: str = "a") -> str:
    return HEAD + middle.lstrip("\n") + TAIL % (runtime, reference)


def load_error(path: Path) -> str:
    with pytest.raises(DesignError) as excinfo:
        load_design(path)
    return str(excinfo.value)


HOST_FIX = (
    "pass the data through the host between the join and the split: rt.drain 'blk' "
    "into a host tensor (an extra argument of the design, or the output before its own "
    "drain), rt.sync(), then rt.fill a new fifo(Tensor[256, i32]) from that tensor and "
    "give it to the split in place of 'blk'; the fill's pattern can lay the data out as "
    "the split needs")


def test_join_then_split_passes_through_the_host(design_file: DesignFile) -> None:
    """A join's output split again: no one link does it. The split as written takes the
    block's parts apart as they came (row tiles: a split's parts are contiguous), so the fix
    first offers one forward per part; herd 'cols' wants column tiles (the reference), which
    only the host round trip gives: following it (drain the block into the output, fill a fifo
    that is split, with a pattern that lays each part out whole) simulates exactly."""
    path = design_file(design('''
        cols = blk.split(P, names=[f"col{i}" for i in range(P)])
    '''))
    assert load_error(path) == (
        "d.py:11: error [link]: fifo 'blk' takes part in two links: the join that makes it and "
        "the split that takes it\n"
        "  limit: each fifo in at most one link, so links do not chain through a fifo "
        "(mlir-aie: \"objectfifo cannot be in more than one ObjectFifoLinkOp\", "
        "ObjectFifoLinkOp::verify and the objectfifo lowering's verifyObjectFifoLinks)\n"
        "  found: join -> 'blk' -> split\n"
        "  d.py:10: the join\n"
        "  fix: the split takes the join's parts apart again, the same sizes in the same "
        "order, so forward each part through the memtile on its own in place of the join and "
        "the split: cols = [m.forward() for m in rows]; only for another tiling of the data "
        "than the join's parts, " + HOST_FIX)
    fixed = design_file(design('''
        blk2 = fifo(Tensor[256, i32], name="blk2")
        cols = blk2.split(P, names=[f"col{i}" for i in range(P)])
    ''', '''
            rt.drain(blk, b)
            rt.sync()
            rt.fill(blk2, b, (0, [P, R, C // P], [C // P, C, 1]))''', "a, b"), "fixed.py")
    result = simulate(load_design(fixed))
    assert result.passed, [c.line() for c in result.checks]


def test_chain_through_a_plain_forward(design_file: DesignFile) -> None:
    """The tester's second try: a forward between the join and the split is a link on the
    joined fifo too. The whole chain is shown, and the fix skips the forward."""
    path = design_file(design('''
        blk2 = blk.forward(name="blk2")
        cols = blk2.split(P, names=[f"col{i}" for i in range(P)])
    '''))
    assert load_error(path) == (
        "d.py:11: error [link]: fifo 'blk' takes part in two links: the join that makes it and "
        "the forward that takes it\n"
        "  limit: each fifo in at most one link, so links do not chain through a fifo "
        "(mlir-aie: \"objectfifo cannot be in more than one ObjectFifoLinkOp\", "
        "ObjectFifoLinkOp::verify and the objectfifo lowering's verifyObjectFifoLinks)\n"
        "  found: join -> 'blk' -> forward -> 'blk2' -> split\n"
        "  d.py:10: the join\n"
        "  d.py:12: the split\n"
        "  fix: the split takes the join's parts apart again, the same sizes in the same "
        "order, so forward each part through the memtile on its own in place of the join, the "
        "forward between and the split: cols = [m.forward() for m in rows]; only for another "
        "tiling of the data than the join's parts, pass the data through the host between the "
        "join and the split (leaving out the forward between): rt.drain 'blk' into a host "
        "tensor (an extra argument of the design, or the output before its own drain), "
        "rt.sync(), then rt.fill a new fifo(Tensor[256, i32]) from that tensor and give it to "
        "the split in place of 'blk2'; the fill's pattern can lay the data out as the split "
        "needs")


def test_join_then_split_of_other_sizes_passes_through_the_host(
        design_file: DesignFile) -> None:
    """A split whose parts are not the join's (four quarters of a block joined from two
    halves): no forward per part does it, and the fix is the host round trip alone."""
    path = design_file(design('''
        cols = blk.split(2 * P)
    '''))
    assert load_error(path).splitlines()[-1] == "  fix: " + HOST_FIX


# MLIR-AIR's herd -> L2 -> herd with the same tiles on both sides (a tester's port): herd 'h1'
# produces the halves that are joined in one L2 buffer, herd 'h2' takes the same halves of it.
SAME_TILES = '''
    from aiedsl import Tensor, design, fifo, herd, i32, join, loop, runtime
    from aiedsl.kernels import vector_scalar

    T, N = 256, 2

    @design(device="npu1")
    def h2h(a: Tensor[N * 2 * T, i32], b: Tensor[N * 2 * T, i32]):
        cin = fifo(Tensor[2 * T, i32])
        parts = cin.split(2)
        mid = [fifo(Tensor[T, i32], name=f"mid{i}") for i in range(2)]
        %s
        outs = [fifo(Tensor[T, i32], name=f"out{i}") for i in range(2)]
        o = join(outs)
        add = vector_scalar("add", Tensor[T, i32])

        @herd(cols=2, rows=1)
        def h1(x, y):
            for _ in loop(N):
                with parts[x].consume() as s, mid[x].produce() as d:
                    add(s, d, 1)

        @herd(cols=2, rows=1)
        def h2(x, y):
            for _ in loop(N):
                with p2[x].consume() as s, outs[x].produce() as d:
                    add(s, d, 1)

        with runtime() as rt:
            rt.fill(cin, a)
            rt.drain(o, b)

    @h2h.reference
    def reference(a):
        return a + 2
'''


def test_join_then_split_of_the_same_parts_forwards_each_part(design_file: DesignFile) -> None:
    """The joined fifo is named after its variable ('l2', not 'mid0_join'), and the fix is
    one forward per part, written in the design's own names; followed, the design simulates
    exactly."""
    path = design_file(SAME_TILES % "l2 = join(mid)\n        p2 = l2.split(2)")
    assert load_error(path) == (
        "d.py:12: error [link]: fifo 'l2' takes part in two links: the join that makes it and "
        "the split that takes it\n"
        "  limit: each fifo in at most one link, so links do not chain through a fifo "
        "(mlir-aie: \"objectfifo cannot be in more than one ObjectFifoLinkOp\", "
        "ObjectFifoLinkOp::verify and the objectfifo lowering's verifyObjectFifoLinks)\n"
        "  found: join -> 'l2' -> split\n"
        "  d.py:11: the join\n"
        "  fix: the split takes the join's parts apart again, the same sizes in the same "
        "order, so forward each part through the memtile on its own in place of the join and "
        "the split: p2 = [m.forward() for m in mid]; only for another tiling of the data than "
        "the join's parts, pass the data through the host between the join and the split: "
        "rt.drain 'l2' into a host tensor (an extra argument of the design, or the output "
        "before its own drain), rt.sync(), then rt.fill a new fifo(Tensor[512, i32]) from "
        "that tensor and give it to the split in place of 'l2'; the fill's pattern can lay "
        "the data out as the split needs")
    fixed = design_file(SAME_TILES % "p2 = [m.forward() for m in mid]", "fixed.py")
    result = simulate(load_design(fixed))
    assert result.passed, [c.line() for c in result.checks]
    placed, _ = check_design(load_design(fixed).ir)  # o = join(outs) is @o, not @out0_join
    assert "    aie.objectfifo @o(%tile_1_1, {%tile_1_0}, 2 : i32) : " \
        "!aie.objectfifo<memref<512xi32>> loc(\"fixed.py\":13:0)\n" in render_mlir(
            placed, get_target(placed.device))


def test_a_join_written_in_a_helper_is_fixed_by_the_fifos_names(
        design_file: DesignFile) -> None:
    """``def gather(pieces): return join(pieces)`` called as ``l2 = gather(mid)``: the fix
    pasted the join's words at the split, ``p2 = [m.forward() for m in pieces]``, a NameError
    there (a reviewer). Words of another scope are not written: the fifos are named."""
    text = SAME_TILES % "l2 = gather(mid)\n        p2 = l2.split(2)"
    text = text.replace("    T, N = 256, 2\n",
                        "    T, N = 256, 2\n\n    def gather(pieces):\n        return join(pieces)\n")
    err = load_error(design_file(text))
    assert "pieces" not in err
    assert ("so forward each part through the memtile on its own in place of the join and the "
            "split: a forward of 'mid0' in place of 'mid0_join_0', a forward of 'mid1' in "
            "place of 'mid0_join_1'; only for another tiling") in err


def test_the_forwards_carry_what_the_split_parts_differ_in(design_file: DesignFile) -> None:
    """Parts written as a list, the split's parts another shape and depth, unpacked into two
    names: each forward is written out with the element and depth its part had."""
    path = design_file(SAME_TILES % (
        "l2 = join([mid[0], mid[1]], depth=1)\n"
        "        q0, q1 = l2.split([Tensor[16, 16, i32]] * 2, depth=1)\n"
        "        p2 = [q0, q1]"))
    assert load_error(path).splitlines()[-1] == (
        "  fix: the split takes the join's parts apart again, the same sizes in the same "
        "order, so forward each part through the memtile on its own in place of the join and "
        "the split: q0, q1 = [mid[0].forward(Tensor[16, 16, i32], depth=1), "
        "mid[1].forward(Tensor[16, 16, i32], depth=1)]; only for another tiling of the data "
        "than the join's parts, pass the data through the host between the join and the "
        "split: rt.drain 'l2' into a host tensor (an extra argument of the design, or the "
        "output before its own drain), rt.sync(), then rt.fill a new fifo(Tensor[512, i32]) "
        "from that tensor and give it to the split in place of 'l2'; the fill's pattern can "
        "lay the data out as the split needs")


SPLIT_JOIN = '''
    from aiedsl import Tensor, design, fifo, herd, i32, join, runtime
    from aiedsl.kernels import passthrough

    @design(device="npu1_1col")
    def d(a: Tensor[512, i32], b: Tensor[512, i32]):
        cin = fifo(Tensor[512, i32])
        %s
        out = fifo(Tensor[512, i32])
        cp = passthrough(Tensor[512, i32])

        @herd()
        def core():
            with back.consume() as s, out.produce() as o:
                cp(s, o)

        with runtime() as rt:
            rt.fill(cin, a)
            rt.drain(out, b)

    @d.reference
    def reference(a):
        return a.copy()
'''


def test_split_then_join_of_its_parts_is_one_forward(design_file: DesignFile) -> None:
    """The symmetric case: a join that puts a split's parts back together as they were holds
    what the split's input did, so one forward does both links; followed, the design
    simulates exactly."""
    path = design_file(SPLIT_JOIN % "parts = cin.split(2)\n        back = join(parts)")
    assert load_error(path) == (
        "d.py:8: error [link]: fifo 'cin_0' takes part in two links: the split that makes it "
        "and the join that takes it\n"
        "  limit: each fifo in at most one link, so links do not chain through a fifo "
        "(mlir-aie: \"objectfifo cannot be in more than one ObjectFifoLinkOp\", "
        "ObjectFifoLinkOp::verify and the objectfifo lowering's verifyObjectFifoLinks)\n"
        "  found: split -> 'cin_0' -> join\n"
        "  d.py:7: the split\n"
        "  fix: the join puts the split's parts back together as they were, so one forward of "
        "its input does both links: back = cin.forward(), in place of the split and the join")
    fixed = design_file(SPLIT_JOIN % "back = cin.forward()", "fixed.py")
    result = simulate(load_design(fixed))
    assert result.passed, [c.line() for c in result.checks]


def test_a_join_of_a_splits_parts_in_another_order_passes_through_the_host(
        design_file: DesignFile) -> None:
    """Parts joined in another order than the split made them: the join does not undo the
    split, and the fix is the host round trip."""
    path = design_file(SPLIT_JOIN % "p0, p1 = cin.split(2)\n        back = join([p1, p0])")
    assert load_error(path).splitlines()[-1] == (
        "  fix: pass the data through the host between the split and the join: rt.drain "
        "'cin_1' into a host tensor (an extra argument of the design, or the output before its "
        "own drain), rt.sync(), then rt.fill a new fifo(Tensor[256, i32]) from that tensor and "
        "give it to the join in place of 'cin_1'; the fill's pattern can lay the data out as "
        "the join needs")


PLAIN = '''
    from aiedsl import Tensor, design, fifo, herd, i32, join, runtime
    from aiedsl.kernels import passthrough

    @design(device="npu1_1col")
    def d(a: Tensor[256, i32], b: Tensor[256, i32]):
        ins = [fifo(Tensor[128, i32], name=f"in{i}") for i in range(2)]
        parts = [fifo(Tensor[128, i32], name=f"p{i}") for i in range(2)]
        blk = join(parts, name="blk")
        %s
        out = fifo(Tensor[256, i32], name="out")
        half = passthrough(Tensor[128, i32])
        copy = passthrough(Tensor[256, i32])

        @herd(rows=2, name="h")
        def h(x, y):
            with ins[y].consume() as s, parts[y].produce() as o:
                half(s, o)

        @herd(name="g")
        def g():
            with whole.consume() as s, out.produce() as o:
                copy(s, o)

        with runtime() as rt:
            rt.fill(ins[0], a, (0, [128], [1]))
            rt.fill(ins[1], a, (128, [128], [1]))
            rt.drain(out, b)

    @d.reference
    def reference(a):
        return a.copy()
'''


def test_join_then_plain_forward(design_file: DesignFile) -> None:
    """A forward that moves the joined elements on unchanged: leaving it out does the job (the
    core consumes the joined fifo itself, and the design then simulates exactly)."""
    path = design_file(PLAIN % 'whole = blk.forward(name="whole")')
    assert load_error(path) == (
        "d.py:9: error [link]: fifo 'blk' takes part in two links: the join that makes it and "
        "the forward that takes it\n"
        "  limit: each fifo in at most one link, so links do not chain through a fifo "
        "(mlir-aie: \"objectfifo cannot be in more than one ObjectFifoLinkOp\", "
        "ObjectFifoLinkOp::verify and the objectfifo lowering's verifyObjectFifoLinks)\n"
        "  found: join -> 'blk' -> forward\n"
        "  d.py:8: the join\n"
        "  fix: leave out the forward that only moves the elements on (making 'whole'): the "
        "join alone does the job, taking its input and feeding its consumers directly")
    fixed = design_file(PLAIN % "whole = blk", "fixed.py")
    result = simulate(load_design(fixed))
    assert result.passed, [c.line() for c in result.checks]


def test_two_links_take_one_host_fifo(design_file: DesignFile) -> None:
    """Two links on one fifo the host fills: the second gets a fifo of its own."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1_1col")
        def d(a: Tensor[256, i32]):
            x = fifo(Tensor[256, i32], name="x")
            whole = x.forward(name="whole")
            halves = x.split(2, names=["h0", "h1"])

            @herd(rows=3)
            def core(x_, y):
                with [whole, *halves][y].consume():
                    pass

            with runtime() as rt:
                rt.fill(x, a)
        ''')
    assert load_error(path) == (
        "d.py:7: error [link]: fifo 'x' takes part in two links: the forward and the split both "
        "take it\n"
        "  limit: each fifo in at most one link, so links do not chain through a fifo "
        "(mlir-aie: \"objectfifo cannot be in more than one ObjectFifoLinkOp\", "
        "ObjectFifoLinkOp::verify and the objectfifo lowering's verifyObjectFifoLinks)\n"
        "  found: 'x' -> forward and 'x' -> split\n"
        "  d.py:6: the forward\n"
        "  fix: give the split a fifo of its own, filled from the same host tensor as 'x' (a "
        "second rt.fill)")



def test_a_name_given_later_that_a_join_took_from_its_variable_says_so(
        design_file: DesignFile) -> None:
    """``tail = join(...)`` is named 'tail'; a later ``fifo(..., name="tail")`` was refused as
    if the user had named both (a reviewer): the first is said to be named after its variable,
    and the fix offers a name= for it."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, i32, join, runtime

        @design(device="npu1")
        def d(i: Tensor[4, 64, i32], o: Tensor[4, 64, i32]):
            c = [fifo(Tensor[64, i32], name=f"c{n}") for n in range(2)]
            tail = join(c)
            z = fifo(Tensor[128, i32], name="tail")
        ''')
    assert load_error(path) == (
        "d.py:7: error [fifo]: two fifos are named 'tail'\n"
        "  d.py:6: the first, named after the variable its line assigns it to\n"
        "  fix: give the first its own name= (or this one another): 'tail' was aiedsl's "
        "choice for it, made before this name= asked for it")
