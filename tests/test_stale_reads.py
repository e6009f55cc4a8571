"""A kernel reads an element its core acquired by ``produce()`` only after a call wrote it
(aiedsl/checks/stale.py, ``error [stale read]``): the input and output of a call swapped (a
Riallto user's threshold), an accumulator added into before any zero, a read before the write
in a loop's first iteration or in a produce-side window's second; and what stays allowed. The
mistakes' messages word for word."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from aiedsl.checks import check_design
from aiedsl.checks.stale import check_stale_reads
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.sim import simulate

DesignFile = Callable[..., Path]
ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted(str(p.relative_to(ROOT)) for folder in ("designs", "bench/calibration")
                 for p in (ROOT / folder).glob("*.py"))

COPY = '''
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough, zero

@design(device="npu1_1col")
def copy(x: Tensor[64, i32], y: Tensor[{out}, i32]):
    a = fifo(Tensor[16, i32], name="a")
    b = fifo(Tensor[16, i32], name="b", depth={depth})
    {c}
    k = passthrough(Tensor[16, i32])
    z = zero(Tensor[16, i32])

    @herd()
    def core():
{core}
    with runtime() as rt:
        rt.fill(a, x)
{drains}
@copy.reference
def reference(x):
    return x.copy()
'''
"""A copy through one core (``a`` in, ``b`` out, and ``c`` a second output where a variant
uses one), its core function's body from line 14 on."""


def copy_design(design_file: DesignFile, core: str, *, b: int = 64, c: int = 0,
                depth: int = 2) -> Path:
    """The copy with ``core`` as its core function's body, the runtime draining ``b`` elements
    of ``b`` and ``c`` of ``c`` into ``y``."""
    body = "\n".join("        " + line if line else "" for line in core.strip("\n").split("\n"))
    drains = "        rt.drain(b, y)\n"
    if c:
        drains = (f"        rt.drain(b, y, (0, [{b}], [1]))\n"
                  f"        rt.drain(c, y, ({b}, [{c}], [1]))\n")
    return design_file(COPY.format(
        core=body + "\n", out=b + c, depth=depth, drains=drains,
        c='c = fifo(Tensor[16, i32], name="c")' if c else "# (no second output)"))


def check_error(path: Path) -> str:
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    return str(e.value)


def test_a_call_with_its_input_and_output_swapped_is_refused(design_file: DesignFile) -> None:
    """The Riallto threshold's mistake: ``k(b, a)`` for ``k(a, b)``. The kernel reads the
    element just acquired for writing, which holds what the DMA last sent from it; the
    simulator said FAIL, and nothing said why."""
    path = copy_design(design_file, '''
for _ in loop(4):
    with a.consume() as s, b.produce() as d:
        k(d, s)
''')
    assert check_error(path) == (
        "d.py:16: error [stale read]: core[0,0] passes the element of 'b' it acquired by "
        "produce() to 'passthrough_i32_16' as argument 0 ('src', \"in\"), which the kernel "
        "reads, before any call wrote it: the element holds stale data\n"
        "  limit: an element acquired by produce() holds whatever its DMA last sent from it "
        "until a kernel call takes it \"out\"; only then may a call read it (\"in\" or "
        "\"inout\")\n"
        "  found: no call since its acquire at line 15 wrote it\n"
        "  d.py:15: the produce() of 'b'\n"
        "  fix: the call passes the element it consumed from 'a' as argument 1 ('dst', "
        "\"out\"): swap the two arguments (passthrough_i32_16(src, dst))")


def test_the_swapped_call_in_the_right_order_passes(design_file: DesignFile) -> None:
    path = copy_design(design_file, '''
for _ in loop(4):
    with a.consume() as s, b.produce() as d:
        k(s, d)
''')
    assert simulate(load_design(path)).passed


def test_a_call_reading_what_it_writes_itself_has_not_written_it(
        design_file: DesignFile) -> None:
    """A call's own "out" argument is written by the call: its "in" one reads the element
    before that (the kernel copies stale data onto itself)."""
    path = copy_design(design_file, '''
for _ in loop(4):
    with a.consume() as s, b.produce() as d:
        k(d, d)
''')
    assert check_error(path) == (
        "d.py:16: error [stale read]: core[0,0] passes the element of 'b' it acquired by "
        "produce() to 'passthrough_i32_16' as argument 0 ('src', \"in\"), which the kernel "
        "reads, before any call wrote it: the element holds stale data\n"
        "  limit: an element acquired by produce() holds whatever its DMA last sent from it "
        "until a kernel call takes it \"out\"; only then may a call read it (\"in\" or "
        "\"inout\")\n"
        "  found: no call since its acquire at line 15 wrote it\n"
        "  d.py:15: the produce() of 'b'\n"
        "  fix: pass a consumed element there, or check the order of the call's arguments "
        "(passthrough_i32_16(src, dst)); if the kernel writes 'src' before reading it, declare "
        "it \"out\"")


def test_an_element_a_call_wrote_may_be_read(design_file: DesignFile) -> None:
    """Written, then copied on to a second output: each read comes after a write."""
    path = copy_design(design_file, '''
for _ in loop(4):
    with a.consume() as s, b.produce() as d, c.produce() as e:
        k(s, d)
        k(d, e)
''', b=64, c=64)
    check_design(load_design(path).ir)


ELEMENT_HELD_ACROSS_A_LOOP = '''
with b.produce() as d:
    for _ in loop(4):
        with a.consume() as s, c.produce() as e:
            {first}
            {second}
'''
"""``d`` acquired before the loop: each iteration copies it on to ``c`` and overwrites it with
the tile consumed (lines 17 and 18)."""


def test_an_element_held_across_a_loop_is_read_before_its_first_write(
        design_file: DesignFile) -> None:
    """Read at line 17, written at line 18: in program order the loop's first iteration reads
    it before anything wrote it (later iterations would read the write of the one before)."""
    path = copy_design(design_file, ELEMENT_HELD_ACROSS_A_LOOP.format(
        first="k(d, e)", second="k(s, d)"), b=16, c=64)
    assert check_error(path) == (
        "d.py:17: error [stale read]: core[0,0] passes the element of 'b' it acquired by "
        "produce() to 'passthrough_i32_16' as argument 0 ('src', \"in\"), which the kernel "
        "reads, before any call wrote it: the element holds stale data\n"
        "  limit: an element acquired by produce() holds whatever its DMA last sent from it "
        "until a kernel call takes it \"out\"; only then may a call read it (\"in\" or "
        "\"inout\")\n"
        "  found: no call since its acquire at line 14 wrote it\n"
        "  d.py:14: the produce() of 'b'\n"
        "  fix: pass a consumed element there, or check the order of the call's arguments "
        "(passthrough_i32_16(src, dst)); if the kernel writes 'src' before reading it, declare "
        "it \"out\"")


def test_an_element_held_across_a_loop_written_first_passes(design_file: DesignFile) -> None:
    path = copy_design(design_file, ELEMENT_HELD_ACROSS_A_LOOP.format(
        first="k(s, d)", second="k(d, e)"), b=16, c=64)
    check_design(load_design(path).ir)


def test_each_element_of_a_multi_element_produce_is_its_own(design_file: DesignFile) -> None:
    """``produce(2)``: writing w[0] does not write w[1]."""
    path = copy_design(design_file, '''
for _ in loop(4):
    with a.consume() as s, b.produce(2) as w:
        k(s, w[0])
        k(w[1], w[0])
''', b=128)
    assert check_error(path) == (
        "d.py:17: error [stale read]: core[0,0] passes element 1 of the 2 of 'b' it acquired "
        "by produce() to 'passthrough_i32_16' as argument 0 ('src', \"in\"), which the kernel "
        "reads, before any call wrote it: the element holds stale data\n"
        "  limit: an element acquired by produce() holds whatever its DMA last sent from it "
        "until a kernel call takes it \"out\"; only then may a call read it (\"in\" or "
        "\"inout\")\n"
        "  found: no call since its acquire at line 15 wrote it\n"
        "  d.py:15: the produce() of 'b'\n"
        "  fix: pass a consumed element there, or check the order of the call's arguments "
        "(passthrough_i32_16(src, dst)); if the kernel writes 'src' before reading it, declare "
        "it \"out\"")
    fixed = copy_design(design_file, '''
for _ in loop(4):
    with a.consume() as s, b.produce(2) as w:
        k(s, w[0])
        k(w[0], w[1])
''', b=128)
    check_design(load_design(fixed).ir)


PRODUCE_WINDOW = '''
w = b.acquire("produce", 2)
z(w[0])
z(w[1])
for _ in loop(4):
    w = b.acquire("produce", 3)
    with a.consume() as s:
        k(s, w[2])
    k({src}, w[0])
    b.release("produce", 1)
b.release("produce", 2)
'''
"""A window of three elements slid over ``b``'s produce side: two zeroed before the loop,
each iteration's new one written at line 20, then element ``src`` copied onto the oldest
(line 21) before it goes."""


def test_a_produce_window_s_element_is_followed_into_the_next_iteration(
        design_file: DesignFile) -> None:
    """w[1] is written in the first iteration (a zeroed element); in the second it is the
    element the first acquired as w[2], which line 20 wrote: fine. The second pass over the
    loop body sees it."""
    path = copy_design(design_file, PRODUCE_WINDOW.format(src="w[1]"), b=96, depth=3)
    check_design(load_design(path).ir)


def test_a_produce_window_read_stale_in_a_second_iteration_only_is_refused(
        design_file: DesignFile) -> None:
    """With line 20 writing w[0] instead of the new w[2], w[1] of the second iteration is the
    element the first acquired as w[2], which nothing wrote: stale in the second iteration
    only (in the first, w[1] is a zeroed one)."""
    path = copy_design(design_file, PRODUCE_WINDOW.replace("k(s, w[2])", "k(s, w[0])").format(
        src="w[1]"), b=96, depth=3)
    assert check_error(path) == (
        "d.py:21: error [stale read]: core[0,0] passes element 1 of the 3 of 'b' it acquired "
        "by produce() to 'passthrough_i32_16' as argument 0 ('src', \"in\"), which the kernel "
        "reads, before any call wrote it: the element holds stale data\n"
        "  limit: an element acquired by produce() holds whatever its DMA last sent from it "
        "until a kernel call takes it \"out\"; only then may a call read it (\"in\" or "
        "\"inout\")\n"
        "  found: no call since its acquire at line 18 wrote it\n"
        "  d.py:18: the produce() of 'b'\n"
        "  fix: pass a consumed element there, or check the order of the call's arguments "
        "(passthrough_i32_16(src, dst)); if the kernel writes 'src' before reading it, declare "
        "it \"out\"")


ACC_CC = '''#include <cstdint>
void acc(const int32_t *a, int32_t *c) { for (int i = 0; i < 16; i++) c[i] += a[i]; }
'''

ACCUMULATE = '''
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import buffer, declare, zero

def acc_ref(a, c):
    c[...] += a

@design(device="npu1_1col")
def sums(x: Tensor[128, i32], y: Tensor[32, i32]):
    a = fifo(Tensor[16, i32], name="a")
    b = fifo(Tensor[16, i32], name="b")
    acc = declare("acc_i32_16", source="acc.cc", entry="acc",
                  args=[buffer("a", Tensor[16, i32]), buffer("c", Tensor[16, i32], "inout")],
                  reference=acc_ref, cycles=40, cost="16 scalar adds")
    z = zero(Tensor[16, i32])

    @herd()
    def core():
        for _ in loop(2):
            with b.produce() as total:
                z(total)
                for _ in loop(4):
                    with a.consume() as t:
                        acc(t, total)

    with runtime() as rt:
        rt.fill(a, x)
        rt.drain(b, y)

@sums.reference
def reference(x):
    return x.reshape(2, 4, 16).sum(axis=1).reshape(-1)
'''
"""Each of two outputs the sum of four tiles: zeroed (line 20), then added into (line 23), as
the GEMM designs do with their C tiles."""


def test_an_accumulator_zeroed_first_passes(design_file: DesignFile) -> None:
    design_file(ACC_CC, "acc.cc")
    assert simulate(load_design(design_file(ACCUMULATE))).passed


def test_a_users_inout_is_not_judged(design_file: DesignFile) -> None:
    """A kernel of the user's may take its element "inout" and overwrite it on some calls (a
    flag for the first K step: c = first ? a : c + a), which the check cannot see: refusing
    it refused a correct design. Library kernels are judged (the GEMM below)."""
    design_file(ACC_CC, "acc.cc")
    check_design(load_design(design_file(ACCUMULATE.replace("                z(total)\n",
                                                            ""))).ir)


def test_a_users_inout_read_before_any_write_is_noted_under_its_fail(
        design_file: DesignFile) -> None:
    """Not refused (above), but said: a kernel tuner's in-place kernel took a just-produced
    element "inout", read stale data, and the simulator's FAIL gave no hint why."""
    from aiedsl.notes import design_notes

    design_file(ACC_CC, "acc.cc")
    handle = load_design(design_file(ACCUMULATE.replace("                z(total)\n", "")))
    text = ("'acc_i32_16' takes the element of 'b' acquired by produce() at line 19 as argument "
            "1 ('c', \"inout\") before any call wrote it: until a call does, it holds whatever "
            "its DMA last sent from it (an earlier element, or an earlier run's), so if the "
            "kernel reads 'c' before writing it, it computes from stale data; write it first "
            "with a call that takes it \"out\", or, if the kernel writes 'c' before reading "
            "it, declare it \"out\"")
    assert [n.line() for n in design_notes(handle.ir)] == [f"d.py:22: note: {text}"]
    result = simulate(handle)
    assert not result.passed  # the poisoned first element, and the second run's sums
    assert f"d.py:22: {text}" in result.checks[0].hints
    zeroed = load_design(design_file(ACCUMULATE))
    assert design_notes(zeroed.ir) == []


def test_the_gemm_without_its_zero_is_refused(in_root: Path, tmp_path: Path) -> None:
    """designs/gemm_bf16.py without ``zero_c(acc)``: the matmul adds into a stale C tile
    (tests/test_sim.py shows the simulator's NaNs when the check is skipped)."""
    src = Path("designs/gemm_bf16.py").read_text()
    path = tmp_path / "gemm_no_zero.py"
    path.write_text(src.replace("                zero_c(acc)\n", ""))
    with pytest.raises(DesignError) as e:
        check_design(load_design(path, {"M": "256", "K": "256", "N": "256"}).ir)
    assert e.value.rule == "stale read"
    assert e.value.message == (
        "core[0,0] passes the element of 'c_0_0' it acquired by produce() to "
        "'matmul_bf16_f32_64x64x64_4x8x4' as argument 2 ('c', \"inout\"), which the kernel "
        "reads, before any call wrote it: the element holds stale data")


def test_a_consumed_element_is_not_judged(design_file: DesignFile) -> None:
    """A consumed element holds what its producer sent: reading it needs no write first."""
    path = copy_design(design_file, '''
for _ in loop(4):
    with a.consume() as s, b.produce() as d:
        k(s, s)
        k(s, d)
''')
    check_design(load_design(path).ir)


@pytest.mark.parametrize("path", SHIPPED)
def test_no_shipped_design_reads_a_stale_element(in_root: Path, path: str) -> None:
    check_stale_reads(load_design(path).ir)


def test_a_produced_element_released_unwritten_is_refused(design_file: DesignFile) -> None:
    """The kernel call forgotten (a CLI tester's ``pass`` in the with-block): check passed and
    the NPU would send whatever the buffer held; the simulator only FAILed."""
    path = copy_design(design_file, '''
for _ in loop(4):
    with a.consume() as s:
        with b.produce() as d:
            k(s, s)
''')
    assert check_error(path) == (
        "d.py:16: error [unwritten element]: core[0,0] releases the element of 'b' it acquired "
        "by produce() with nothing written into it: its DMA sends stale data\n"
        "  limit: an element acquired by produce() holds whatever its DMA last sent from it "
        "until a kernel call takes it \"out\" (or \"inout\")\n"
        "  found: no call between its acquire at line 16 and its release takes it \"out\" or "
        "\"inout\"\n"
        "  fix: pass it to the kernel that computes it, as an \"out\" argument, before it is "
        "released; if a kernel writes it through an argument declared \"in\", declare that "
        "argument \"out\"")


def test_a_sliding_produce_window_releasing_written_elements_passes(
        design_file: DesignFile) -> None:
    """Each element is written in the iteration that acquires it; the one held over was
    written an iteration earlier."""
    path = copy_design(design_file, '''
z(b.acquire("produce", 1)[0])
for _ in loop(3):
    with a.consume() as s:
        w = b.acquire("produce", 2)
        k(s, w[1])
        b.release("produce", 1)
with a.consume() as s:
    b.release("produce", 1)
''', b=64, depth=3)
    check_design(load_design(path).ir)


@pytest.mark.parametrize("path", SHIPPED)
def test_no_shipped_design_releases_an_unwritten_element(in_root: Path, path: str) -> None:
    from aiedsl.checks.stale import check_unwritten_releases

    check_unwritten_releases(load_design(path).ir)


TWO_OUTPUTS = '''
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import buffer, declare, zero, passthrough

def acc_ref(a, c):
    c[...] += a

@design(device="npu1_1col")
def sums(x: Tensor[128, i32], y: Tensor[32, i32], w: Tensor[128, i32]):
    a = fifo(Tensor[16, i32], name="a")
    b = fifo(Tensor[16, i32], name="b")
    e = fifo(Tensor[16, i32], name="e")
    acc = declare("acc_i32_16", source="acc.cc", entry="acc",
                  args=[buffer("a", Tensor[16, i32]), buffer("c", Tensor[16, i32], "inout")],
                  reference=acc_ref, cycles=40, cost="16 scalar adds")
    cp = passthrough(Tensor[16, i32])

    @herd()
    def core():
        for _ in loop(2):
            with b.produce() as total:
                for _ in loop(4):
                    with a.consume() as t, e.produce() as o:
                        acc(t, total)
                        cp(t, o)

    with runtime() as rt:
        rt.fill(a, x)
        rt.drain(b, y)
        rt.drain(e, w)

@sums.reference
def reference(x):
    return x.reshape(2, 4, 16).sum(axis=1).reshape(-1), x
'''

HERD = '''
from aiedsl import Tensor, design, channel, herd, i32, loop, runtime
from aiedsl.kernels import buffer, declare

def acc_ref(a, c):
    c[...] += a

@design(device="npu1")
def sums(x: Tensor[512, i32], y: Tensor[128, i32]):
    a = channel(Tensor[16, i32], shape=[4], name="a")
    b = channel(Tensor[16, i32], shape=[4], name="b")
    acc = declare("acc_i32_16", source="acc.cc", entry="acc",
                  args=[buffer("a", Tensor[16, i32]), buffer("c", Tensor[16, i32], "inout")],
                  reference=acc_ref, cycles=40, cost="16 scalar adds")

    @herd(cols=1, rows=4)
    def core(x, y):
        for _ in loop(2):
            with b[y].produce() as total:
                for _ in loop(4):
                    with a[y].consume() as t:
                        acc(t, total)

    with runtime() as rt:
        for i in range(4):
            rt.fill(a[i], x, (i * 128, [128], [1]))
            rt.drain(b[i], y, (i * 32, [32], [1]))
'''


def test_the_stale_inout_note_reaches_the_output_that_fails_and_a_herd_says_it_once(
        design_file: DesignFile) -> None:
    """A reviewer: the note went to the first output its core reaches ('w', which passed), not
    to the failing 'y' (one note per text); a herd's four cores gave four notes for one line."""
    from aiedsl.notes import design_notes, note_lines

    design_file(ACC_CC, "acc.cc")
    result = simulate(load_design(design_file(TWO_OUTPUTS)))
    failed = [c for c in result.checks if not c.passed]
    assert [c.name for c in failed] == ["y"]
    assert any("'acc_i32_16' takes the element of 'b'" in h for h in failed[0].hints)
    herd = load_design(design_file(HERD))
    lines = note_lines(design_notes(herd.ir))
    assert len(lines) == 1 and lines[0].startswith("d.py:21: note: 'acc_i32_16' takes the "
                                                   "element of 'b_0'")
