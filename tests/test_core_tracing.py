"""How a core function is traced into its program: a ``loop()`` object iterated more than
once, a buffer one core acquired and another passed to a kernel, and how a ``loop()`` body left
early is told (break or return, or an exception caught outside it). The testers' designs, their
messages word for word."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Callable

import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import Call, Loop
from aiedsl.loader import load_design
from aiedsl.sim import simulate

DesignFile = Callable[..., Path]

TWO_CORES = '''
import numpy as np
from aiedsl import Tensor, channel, design, herd, i32, loop, runtime
from aiedsl.kernels import vector_scalar
N = {n}
T = 1024
G = {{}}


@design(device="npu1_1col")
def two(A0: Tensor[N, i32], A1: Tensor[N, i32], C0: Tensor[N, i32], C1: Tensor[N, i32]):
    a = channel(Tensor[T, i32], shape=[2])
    c = channel(Tensor[T, i32], shape=[2])
    add = vector_scalar("add", Tensor[T, i32])

    @herd(rows=2)
    def core(y, x):
{body}

    with runtime() as rt:
        rt.fill(a[0], A0)
        rt.fill(a[1], A1)
        rt.drain(c[0], C0)
        rt.drain(c[1], C1)


@two.reference
def ref(A0, A1):
    return {ref}
'''
"""Two cores (``core[0,0]``, ``core[0,1]``), each taking ``a[x]`` and writing ``c[x]``: the
testers' template (their gen.py). The core function's body starts at line 17."""


def two_cores(design_file: DesignFile, body: str, ref: str = "A0 + 1, A1 + 1",
              n: int = 4096) -> Path:
    """``TWO_CORES`` with the core function's ``body`` (dedented), as ``d.py``."""
    return design_file(TWO_CORES.format(n=n, ref=ref, body=textwrap.indent(
        textwrap.dedent(body).strip("\n"), " " * 8)))


# -- a loop() object iterated twice ---------------------------------------------------------------

REUSED = '''
L = loop(4)
for _ in L:
    with a[x].consume() as s, c[x].produce() as o:
        add(s, o, 1)
for _ in L:
    with a[x].consume() as s, c[x].produce() as o:
        add(s, o, 100)
'''


def test_a_loop_object_iterated_twice_records_two_loops_each_with_its_body(
        design_file: DesignFile) -> None:
    """A tester's: the second ``for`` over one loop() object recorded an scf.for with an empty
    body (its ops traced once, outside any loop): the design below, which takes 8 elements per
    core, passed sim with 4, and the right one was refused by [balance]. Like range(), each
    ``for`` records a loop of its own."""
    path = two_cores(design_file, REUSED, n=8192, ref=(
        "np.concatenate([A0[:4096] + 1, A0[4096:] + 100]), "
        "np.concatenate([A1[:4096] + 1, A1[4096:] + 100])"))
    handle = load_design(path)
    for core in handle.ir.cores:
        assert [type(op) for op in core.body] == [Loop, Loop]
        for op, scalar in zip(core.body, (1, 100)):
            assert isinstance(op, Loop) and op.count == 4 and op.loc.line == 17
            call = next(o for o in op.body if isinstance(o, Call))
            assert call.args[2].value == scalar  # type: ignore[union-attr]
            assert [o.op for o in op.body] == ["acquire", "acquire", "call", "release",
                                               "release"]
    assert simulate(handle, seed=0).passed


def test_a_loop_object_iterated_twice_for_half_the_data_is_refused_by_balance(
        design_file: DesignFile) -> None:
    with pytest.raises(DesignError) as e:
        check_design(load_design(two_cores(design_file, REUSED)).ir)
    assert str(e.value).splitlines()[0] == (
        "d.py:19: error [balance]: fifo 'a_0': the runtime fills 4 element(s) per run, but "
        "core[0,0] takes 8")


def test_a_loop_object_nested_in_itself_and_one_made_by_another_core(
        design_file: DesignFile) -> None:
    """Each ``for`` is a loop of its own, nested ones too; a loop() object one core made and
    another iterates records its loop in the core iterating it (it went into the first
    core's program, and the second took nothing: 'a_1' has no consumer)."""
    body = '''
    if "L" not in G:
        G["L"] = loop(2)
    L = G["L"]
    for _ in L:
        for _ in L:
            with a[x].consume() as s, c[x].produce() as o:
                add(s, o, 1)
    '''
    handle = load_design(two_cores(design_file, body))
    for core in handle.ir.cores:
        (outer,) = core.body
        assert isinstance(outer, Loop) and outer.count == 2
        (inner,) = outer.body
        assert isinstance(inner, Loop) and inner.count == 2 and len(inner.body) == 5
    assert simulate(handle, seed=0).passed


# -- a buffer one core acquired, passed to a kernel by another ------------------------------------

FOREIGN_LIMIT = (
    "  limit: a kernel takes elements its own core acquired: a call names one by its acquire in "
    "the calling core's program, so another core's would be read as one of core[0,1]'s own (or "
    "none)\n")
FOREIGN_FIX = (
    "  fix: pass an element core[0,1] acquires itself, in the core function it runs; to use "
    "core[0,0]'s data there, send it through a fifo core[0,0] produces into and core[0,1] "
    "consumes")


def test_a_buffer_another_core_acquired_is_refused_not_re_bound(design_file: DesignFile) -> None:
    """A tester's: a buffer core[0,0] acquired, kept in a global and passed to a kernel in
    core[0,1], was silently re-bound to core[0,1]'s own acquire of the same name (a call's
    argument keeps only the name), and sim passed."""
    body = '''
    for _ in loop(4):
        with a[x].consume() as s, c[x].produce() as o:
            if x == 0:
                G["s"] = s
            add(G["s"], o, 1)
    '''
    with pytest.raises(DesignError) as e:
        load_design(two_cores(design_file, body))
    assert str(e.value) == (
        "d.py:21: error [kernel call]: argument 0 of 'vs_add_i32_1024' in core[0,1] is an "
        "element of a[0] that core[0,0] acquired at line 18\n" + FOREIGN_LIMIT +
        "  found: a[0] acquired by core[0,0], passed by core[0,1]\n"
        "  d.py:18: acquired by core[0,0]\n" + FOREIGN_FIX)


def test_a_buffer_another_core_acquired_in_another_order_is_refused_not_a_stale_read(
        design_file: DesignFile) -> None:
    """The variant: core[0,1] acquired in the other order, so the name of core[0,0]'s input
    was core[0,1]'s output there, and check said [stale read] of a buffer the user never
    passed."""
    body = '''
    for _ in loop(4):
        if x == 0:
            with a[x].consume() as s, c[x].produce() as o:
                G["s"] = s
                add(s, o, 1)
        else:
            with c[x].produce() as o, a[x].consume() as s:
                add(G["s"], o, 1)
    '''
    with pytest.raises(DesignError) as e:
        load_design(two_cores(design_file, body))
    assert str(e.value).splitlines()[0] == (
        "d.py:24: error [kernel call]: argument 0 of 'vs_add_i32_1024' in core[0,1] is an "
        "element of a[0] that core[0,0] acquired at line 19")


def test_a_buffer_of_another_designs_core_of_the_same_name_is_refused(
        design_file: DesignFile) -> None:
    """Core names repeat from design to design: the buffer's core is told by its trace."""
    source = TWO_CORES.format(n=4096, ref="A0 + 1, A1 + 1", body=textwrap.indent(
        textwrap.dedent('''
        for _ in loop(4):
            with a[x].consume() as s, c[x].produce() as o:
                G.setdefault(x, s)
                add(G[x], o, 1)
        ''').strip("\n"), " " * 8))
    first, _, rest = source.partition("@two.reference")
    second = first[first.index("@design"):].replace("def two(", "def again(")
    path = design_file(first + second + "@two.reference" + rest)
    with pytest.raises(DesignError) as e:
        load_design(path, name="two")
    assert str(e.value).splitlines()[0] == (
        "d.py:40: error [kernel call]: argument 0 of 'vs_add_i32_1024' in core[0,0] is an "
        "element of a[0] that another trace of core[0,0] (another design's, or an earlier "
        "load's) acquired at line 18")


def test_a_buffer_passed_by_the_core_that_acquired_it_is_a_plain_call(
        design_file: DesignFile) -> None:
    """What stays allowed: a global holding each core's own buffer, read by that core."""
    body = '''
    for _ in loop(4):
        with a[x].consume() as s, c[x].produce() as o:
            G[x] = s
            add(G[x], o, 1)
    '''
    assert simulate(load_design(two_cores(design_file, body)), seed=0).passed


# -- a loop() body left early ---------------------------------------------------------------------

LEFT_FIX = "  fix: do not break or return out of loop(); every iteration is the same program"
EXCEPTION_LIMIT = ("  limit: a loop() body is traced once, as the whole body of its scf.for: it "
                   "runs to its end\n")
EXCEPTION_FIX = ("  fix: catch it inside the loop() body, or let it leave the core function "
                 "(aiedsl then reports it at its line)")


def test_an_exception_caught_outside_a_loop_body_is_named(design_file: DesignFile) -> None:
    """A tester's: it was told as "a loop() body ended early (break or return inside it)"."""
    body = '''
    try:
        for _ in loop(4):
            with a[x].consume() as s, c[x].produce() as o:
                add(s, o, 1)
                if x == 1:
                    raise RuntimeError("boom")
    except RuntimeError:
        pass
    '''
    with pytest.raises(DesignError) as e:
        load_design(two_cores(design_file, body))
    assert str(e.value) == (
        "d.py:18: error [loop]: a loop() body was left at line 22 by an exception caught "
        "outside the loop: RuntimeError: boom\n" + EXCEPTION_LIMIT +
        "  d.py:22: the exception left the body here\n" + EXCEPTION_FIX)


def test_an_exception_no_with_saw_is_told_by_its_line(design_file: DesignFile) -> None:
    """Raised outside any ``with`` of the body (in a helper it calls, here), it is told as an
    exception at the body's line that called it, unnamed."""
    body = '''
    def check(v):
        if v:
            raise KeyError(v)
    try:
        for _ in loop(4):
            with a[x].consume() as s, c[x].produce() as o:
                add(s, o, 1)
            check(x)
    except KeyError:
        pass
    '''
    with pytest.raises(DesignError) as e:
        load_design(two_cores(design_file, body))
    assert str(e.value) == (
        "d.py:21: error [loop]: a loop() body was left at line 24 by an exception caught "
        "outside the loop\n" + EXCEPTION_LIMIT +
        "  d.py:24: the exception left the body here\n" + EXCEPTION_FIX)


@pytest.mark.parametrize("leave", ["break", "return"])
def test_a_break_or_return_out_of_a_loop_body_is_told_as_one(design_file: DesignFile,
                                                              leave: str) -> None:
    body = f'''
    for _ in loop(4):
        with a[x].consume() as s, c[x].produce() as o:
            add(s, o, 1)
        if x == 1:
            {leave}
    '''
    with pytest.raises(DesignError) as e:
        load_design(two_cores(design_file, body))
    assert str(e.value) == (
        "d.py:17: error [loop]: a loop() body ended early (break or return inside it)\n"
        "  d.py:21: left here\n" + LEFT_FIX)


@pytest.mark.parametrize("leave", ["break", "return"])
def test_a_break_or_return_inside_a_with_is_told_at_its_own_line(design_file: DesignFile,
                                                                  leave: str) -> None:
    """Python gives the exit from a ``with`` the ``with``'s line: "left here" named the
    ``with`` (a tester), not the statement that left, two lines below it. A ``break`` of an
    inner Python loop leaves nothing, and is not counted."""
    body = f'''
    for _ in loop(4):
        with a[x].consume() as s:
            with c[x].produce() as o:
                add(s, o, 1)
                for i in range(2):
                    break
                {leave}
    '''
    with pytest.raises(DesignError) as e:
        load_design(two_cores(design_file, body))
    assert str(e.value) == (
        "d.py:17: error [loop]: a loop() body ended early (break or return inside it)\n"
        "  d.py:23: left here\n" + LEFT_FIX)


def test_two_ways_out_of_a_with_are_both_named(design_file: DesignFile) -> None:
    """Which of two ran, Python does not say: the ``with`` is named, and both under it."""
    body = '''
    for _ in loop(4):
        with a[x].consume() as s, c[x].produce() as o:
            add(s, o, 1)
            if x == 1:
                break
            return
    '''
    with pytest.raises(DesignError) as e:
        load_design(two_cores(design_file, body))
    assert str(e.value) == (
        "d.py:17: error [loop]: a loop() body ended early (break or return inside it)\n"
        "  d.py:18: left here\n"
        "  d.py:21: a break or return inside that with\n"
        "  d.py:22: a break or return inside that with\n" + LEFT_FIX)


def test_an_inner_loop_left_by_an_exception_is_told_by_the_outer_loop(
        design_file: DesignFile) -> None:
    """The outer loop, asking for its next iteration, finds the inner body still open."""
    body = '''
    for _ in loop(2):
        try:
            for _ in loop(2):
                with a[x].consume() as s, c[x].produce() as o:
                    add(s, o, 1)
                    raise ValueError()
        except ValueError:
            pass
    '''
    with pytest.raises(DesignError) as e:
        load_design(two_cores(design_file, body))
    assert str(e.value).splitlines()[0] == (
        "d.py:19: error [loop]: a loop() body was left at line 22 by an exception caught "
        "outside the loop: ValueError")


# -- an rtp slot used as a Python value -----------------------------------------------------------

RTP = '''
from aiedsl import Tensor, design, fifo, herd, i32, loop, rtp, runtime, u8
from aiedsl.kernels import threshold


@design(device="npu1_1col")
def d(inp: Tensor[1024, u8], out: Tensor[1024, u8]):
    a = fifo(Tensor[512, u8], name="a")
    b = fifo(Tensor[512, u8], name="b")
    thr = rtp(Tensor[16, i32], name="thr")
    k = threshold(512)

    @herd()
    def core():
        for _ in loop(2):
            with a.consume() as s, b.produce() as t:
                v = thr[0]
                k(s, t, USE, 512)

    with runtime() as rt:
        rt.rtp_write(thr, 0, 7)
        rt.fill(a, inp)
        rt.drain(b, out)
'''


@pytest.mark.parametrize("use", [
    "v if v > 100 else 7", "v + 1", "int(v)", "float(v)", "round(v, 2)", "v < 3 or 2",
    "-v", "min(v, 9)", "abs(v)", "v * 2 // 1", "[1, 2][v]"])
def test_every_use_of_an_rtp_slot_as_a_python_value_is_the_rtp_error(
        design_file: DesignFile, use: str) -> None:
    """A tester's: ``if thr[0] > 100`` (and arithmetic, int()) said Python's own "TypeError:
    '>' not supported between instances of 'RtpValue' and 'int'" as a [python error], where
    ``==`` and a truth test said what an rtp slot is. The line of the use, and the read's."""
    with pytest.raises(DesignError) as e:
        load_design(design_file(RTP.replace("USE", use)))
    assert str(e.value) == (
        "d.py:17: error [rtp]: rtp 'thr'[0] is used as a Python value\n"
        "  d.py:16: read here\n"
        "  fix: the host writes it while the design runs: pass it to a kernel call, which "
        "reads it then")


def test_the_exits_of_a_parenthesised_with_are_found_from_either_line(tmp_path: Path) -> None:
    """Python 3.13 gives a parenthesised with's exit the line of its first item, the others
    the with's own (a reviewer's): both lead to the statements that leave it."""
    from aiedsl.source_loc import exits_from_with

    path = tmp_path / "w.py"
    path.write_text("for _ in range(2):\n    with (\n        open(a) as x,\n        open(b) as y,\n"
                    "    ):\n        break\n")
    assert exits_from_with(str(path), 2) == exits_from_with(str(path), 3) == [6]
