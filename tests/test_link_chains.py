"""A fifo takes part in at most one link (mlir-aie refuses a chain of links through a fifo):
the error shows the whole chain, and what it says to do works."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.sim import simulate

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


def test_join_then_split_passes_through_the_host(design_file: DesignFile) -> None:
    """A join's output split again: no one link does it, so the data goes to the host and
    back. Following the fix (drain the block into the output, fill a fifo that is split, with
    a pattern that lays each part out whole) simulates exactly."""
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
        "  fix: pass the data through the host between the join and the split: rt.drain 'blk' "
        "into a host tensor (an extra argument of the design, or the output before its own "
        "drain), rt.sync(), then rt.fill a new fifo(Tensor[256, i32]) from that tensor and "
        "give it to the split in place of 'blk'; the fill's pattern can lay the data out as "
        "the split needs")
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
        "  fix: pass the data through the host between the join and the split (leaving out the "
        "forward between): rt.drain 'blk' into a host tensor (an extra argument of the design, "
        "or the output before its own drain), rt.sync(), then rt.fill a new "
        "fifo(Tensor[256, i32]) from that tensor and give it to the split in place of 'blk2'; "
        "the fill's pattern can lay the data out as the split needs")


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

