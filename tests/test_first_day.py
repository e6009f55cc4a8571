"""What a first-day user, learning from the README, ``--help``, docstrings and messages alone, ran
into, word for word: each message names the mistake as it was made (a join's output filled, a
whole channel where one of its fifos goes, an "out" buffer its reference reads, a fifo passed to
a kernel without a ``with``, a local accumulator never reset, numpy's ``int32``, ``-D`` on a
plain constant), and each fix it writes is applied here and passes.

The designs are the bad-input corpus's (``tests/bad_inputs/``, which checks their rule and
line); here their whole messages, and their fixes."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError, display_path
from aiedsl.loader import load_design, load_from_command_line
from aiedsl.sim import simulate

CORPUS = Path(__file__).resolve().parent / "bad_inputs"

DesignFile = Callable[..., Path]


def corpus(design_file: DesignFile, name: str, *edits: tuple[str, str]) -> Path:
    """Corpus file ``name`` written into the test's folder (beside the corpus's C++), with each
    ``(old, new)`` of ``edits`` applied: a fix as its message writes it."""
    text = (CORPUS / name).read_text()
    for old, new in edits:
        assert old in text, f"{name}: {old!r}"
        text = text.replace(old, new)
    (Path.cwd() / "kernels_ok.cc").write_text((CORPUS / "kernels_ok.cc").read_text())
    return design_file(text, name)


def error(path: Path, defines: dict[str, str] | None = None, sim: bool = False) -> str:
    """The DesignError loading, checking (and with ``sim``, simulating) ``path`` raises."""
    with pytest.raises(DesignError) as e:
        handle = load_design(path, defines)
        check_design(handle.ir)
        if sim:
            simulate(handle)
    return str(e.value)


def passes(path: Path, defines: dict[str, str] | None = None, sim: bool = False) -> None:
    """``path`` loads and checks (and simulates to a PASS, with ``sim``)."""
    handle = load_design(path, defines)
    check_design(handle.ir)
    if sim:
        result = simulate(handle)
        assert result.passed, [c.line() for c in result.checks]


# -- F1: a join's output is drained, not filled; a split's input filled -------------------------

def test_filling_a_joins_output_says_to_drain_it(design_file: DesignFile) -> None:
    """``rt.fill(c[:], C)`` on a join was "one part of a join ... fill the fifo the parts come
    from": c[:] is the joined output, not a part."""
    path = corpus(design_file, "runtime_fill_join_output.py")
    assert error(path) == (
        "runtime_fill_join_output.py:25: error [runtime]: rt.fill of c[:] ('c_l3'), the output "
        "of a join at a memtile\n"
        "  limit: a join's parts are produced by cores and joined at the memtile into its "
        "output, which the host drains\n"
        "  found: rt.fill(c[:], C)\n"
        "  runtime_fill_join_output.py:13: the join\n"
        "  fix: a join's host end is drained: rt.drain(c[:], C)")
    passes(corpus(design_file, "runtime_fill_join_output.py",
                  ("rt.fill(c[:], C)", "rt.drain(c[:], C)")), sim=True)


def test_draining_a_splits_input_says_to_fill_it(design_file: DesignFile) -> None:
    path = corpus(design_file, "runtime_drain_split_input.py")
    assert error(path) == (
        "runtime_drain_split_input.py:23: error [runtime]: rt.drain of a[:] ('a_l3'), the input "
        "of a split at a memtile\n"
        "  limit: the host fills a split's input, which the memtile splits into parts that "
        "cores consume\n"
        "  found: rt.drain(a[:], A)\n"
        "  runtime_drain_split_input.py:11: the split\n"
        "  fix: a split's host end is filled: rt.fill(a[:], A)")
    passes(corpus(design_file, "runtime_drain_split_input.py",
                  ("rt.drain(a[:], A)", "rt.fill(a[:], A)")))


@pytest.mark.parametrize("name, message, fix", [
    ("runtime_fill_split_part.py",
     "runtime_fill_split_part.py:25: error [runtime]: rt.fill of 'p0', one part of a split at a "
     "memtile\n"
     "  limit: the host fills a split's input, which the memtile splits into its parts\n"
     "  found: rt.fill(p0, inp)\n"
     "  runtime_fill_split_part.py:12: the split\n"
     "  fix: fill the input of the split: rt.fill(whole, inp)",
     ("rt.fill(parts[0], inp)", "rt.fill(whole, inp)")),
    ("runtime_drain_join_part.py",
     "runtime_drain_join_part.py:26: error [runtime]: rt.drain of 'r0', one part of a join at a "
     "memtile\n"
     "  limit: the host drains a join's output, which the memtile joins from its parts\n"
     "  found: rt.drain(r0, out)\n"
     "  runtime_drain_join_part.py:15: the join\n"
     "  fix: drain the output of the join: rt.drain(res, out)",
     ("rt.drain(r0, out)", "rt.drain(res, out)")),
])
def test_moving_one_part_names_the_whole_to_move(design_file: DesignFile, name: str,
                                                 message: str, fix: tuple[str, str]) -> None:
    """A part of a split or join made by fifo.split() and join(): the fix names the fifo the
    host moves, as the design wrote it."""
    assert error(corpus(design_file, name)) == message
    passes(corpus(design_file, name, fix))


def test_filling_a_part_of_a_split_channel_names_its_host_end(design_file: DesignFile) -> None:
    """``rt.fill(a[0], A)`` on a split channel: the fix writes a[:], not "the fifo the parts
    come from"."""
    path = corpus(design_file, "runtime_fill_join_output.py",
                  ("rt.fill(a[:], A)", "rt.fill(a[0], A)"), ("rt.fill(c[:], C)",
                                                              "rt.drain(c[:], C)"))
    assert error(path).splitlines()[0::4] == [
        "runtime_fill_join_output.py:23: error [runtime]: rt.fill of a[0] ('a_0'), one part of "
        "a split at a memtile",
        "  fix: fill the input of the split: rt.fill(a[:], A)"]


# -- F2: a whole channel given to the runtime -----------------------------------------------------

def test_filling_a_whole_split_channel_names_its_host_end(design_file: DesignFile) -> None:
    """It said "pass a fifo or a channel index such as a[0]", and a[0] was then refused as one
    part of the split."""
    path = corpus(design_file, "runtime_fill_whole_split_channel.py")
    assert error(path) == (
        "runtime_fill_whole_split_channel.py:23: error [runtime]: rt.fill needs a fifo, got "
        "channel 'a' (shape [4], split=0)\n"
        "  limit: a fifo; a channel is a bundle of fifos, and the host moves its data through "
        "the fifo the memtile splits, written with ':' on the split axis\n"
        "  found: channel 'a'\n"
        "  fix: fill its host end: rt.fill(a[:], A)")
    passes(corpus(design_file, "runtime_fill_whole_split_channel.py",
                  ("rt.fill(a, A)", "rt.fill(a[:], A)")))


@pytest.mark.parametrize("call, first, fix", [
    ("rt.drain(c, C)", "rt.drain needs a fifo, got channel 'c' (shape [4], join=0)",
     "drain its host end: rt.drain(c[:], C)"),
    ("rt.fill(c, C)", "rt.fill needs a fifo, got channel 'c' (shape [4], join=0)",
     "a join's host end is drained: rt.drain(c[:], C)"),
    ("rt.wait(c)", "rt.wait needs a fifo, got channel 'c' (shape [4], join=0)",
     "wait for one of its host ends, as given to rt.fill or rt.drain: rt.wait(c[:])"),
])
def test_a_whole_join_channel_is_refused_with_its_host_end(
        design_file: DesignFile, call: str, first: str, fix: str) -> None:
    path = corpus(design_file, "runtime_fill_join_output.py", ("rt.fill(c[:], C)", call))
    lines = error(path).splitlines()
    assert (lines[0], lines[-1]) == (f"runtime_fill_join_output.py:25: error [runtime]: {first}",
                                     f"  fix: {fix}")


def test_a_whole_channel_of_several_host_ends_lists_them(design_file: DesignFile) -> None:
    """A channel without split= has one host end per index; 2-D split groups are b[i, :]."""
    path = corpus(design_file, "runtime_fill_join_output.py",
                  ("shape=[4], via=memtile, split=0)\n    b", "shape=[4], via=memtile)\n    b"),
                  ("rt.fill(a[:], A)", "rt.fill(a, A)"))
    assert error(path).splitlines()[-1] == (
        "  fix: fill its host end: rt.fill(a[0], A) (its host ends are a[0] to a[3]: one rt.fill "
        "each)")
    path = corpus(design_file, "runtime_fill_join_output.py",
                  ("b = channel(Tensor[1024, bf16], shape=[4], via=memtile, split=0)",
                   "b = channel(Tensor[1024, bf16], shape=[2, 2], via=memtile, split=1)"),
                  ("b[y].consume()", "b[y // 2, y % 2].consume()"),
                  ("rt.fill(b[:], B)", "rt.drain(b, B)"))
    assert error(path).splitlines()[-1] == (
        "  fix: a split's host end is filled: rt.fill(b[0, :], B) (its host ends are b[0, :] to "
        "b[1, :]: one rt.fill each)")


# -- F3: an "out" buffer its reference reads ------------------------------------------------------

def test_a_reference_reading_its_out_buffer_says_inout(design_file: DesignFile) -> None:
    """``b[...] += ...`` on a buffer declared "out": with a zero kernel before it, check and sim
    passed; the simulator now runs the first call again with the buffer holding other values,
    and the result depends on them."""
    path = corpus(design_file, "reference_reads_out_buffer.py")
    assert error(path, sim=True) == (
        "reference_reads_out_buffer.py:13: error [kernel reference]: the reference of kernel "
        "'add_one_i32_16' reads its \"out\" buffer 'b': what it writes depends on what 'b' held "
        "before the call\n"
        "  limit: a kernel never reads an \"out\" buffer, only writes it (the checks take it as "
        "holding nothing until the call); one it reads and writes is \"inout\"\n"
        "  found: with every element of 'b' set to 1 before the call instead of what it held, "
        "it wrote b[0] = 22980 instead of 22979\n"
        "  reference_reads_out_buffer.py:10: the reference, which reads it\n"
        "  fix: declare it \"inout\", buffer(\"b\", Tensor[16, i32], \"inout\"), since the kernel "
        "reads it (an accumulator); or, if the kernel only writes it, make the reference write "
        "every element without reading it first")
    passes(corpus(design_file, "reference_reads_out_buffer.py",
                  ('buffer("b", Tensor[16, i32], "out")', 'buffer("b", Tensor[16, i32], "inout")')),
           sim=True)


def test_a_reference_reading_an_unwritten_out_buffer_says_inout_and_write_it(
        design_file: DesignFile) -> None:
    """Without the zero kernel it said the reference "left its "out" buffer unwritten ... write
    into the output array in place", which the reference does (the NaN or poison it reads goes
    into what it writes). The fix also says to write the buffer first: nothing had."""
    path = corpus(design_file, "reference_reads_out_buffer_unzeroed.py")
    assert error(path, sim=True).splitlines()[2:] == [
        "  found: with every element of 'b' set to 0 before the call instead of what it held, "
        "it wrote b[0] = 22979 instead of -2147460669",
        "  reference_reads_out_buffer_unzeroed.py:10: the reference, which reads it",
        "  fix: declare it \"inout\", buffer(\"b\", Tensor[16, i32], \"inout\"), since the kernel "
        "reads it (an accumulator), and write it before this call (a zero kernel before the "
        "loop that accumulates into it): here it held nothing any call wrote; or, if the kernel "
        "only writes it, make the reference write every element without reading it first"]
    passes(corpus(design_file, "reference_reads_out_buffer_unzeroed.py",
                  ('buffer("b", Tensor[16, i32], "out")', 'buffer("b", Tensor[16, i32], "inout")'),
                  ("from aiedsl.kernels import buffer, declare, scalar",
                   "from aiedsl.kernels import buffer, declare, scalar, zero"),
                  ('    s = fifo(Tensor[16, i32], name="s")\n',
                   '    s = fifo(Tensor[16, i32], name="s")\n    z = zero(Tensor[16, i32])\n'),
                  ("            with s.produce() as acc:\n",
                   "            with s.produce() as acc:\n                z(acc)\n")), sim=True)


def test_kernel_test_says_inout_for_a_reference_reading_its_out_buffer() -> None:
    """``aiedsl kernel test`` runs the reference on random buffers first: the error is about
    them (no "held nothing any call wrote"), before any C++ is built."""
    from aiedsl.kernels import buffer, declare
    from aiedsl.kernels.cases import KernelCase
    from aiedsl.kernels.host_check import check_kernel
    from aiedsl.lang.tensor import Tensor

    def rowsum_ref(inp: np.ndarray, acc: np.ndarray) -> None:
        acc[...] += inp.sum(axis=1)

    k = declare("rowsum_f32_16x64", source="passthrough.cc", entry="passthrough<float, 16>",
                args=[buffer("in", Tensor[16, 64, "f32"]), buffer("acc", Tensor[16, "f32"],
                                                                  "out")],
                reference=rowsum_ref, cycles=100, cost="a guess")
    with pytest.raises(DesignError) as e:
        check_kernel(KernelCase(k.ir, "", k.run_reference, {}))
    lines = str(e.value).splitlines()
    assert lines[0].endswith(
        "error [kernel reference]: the reference of kernel 'rowsum_f32_16x64' reads its \"out\" "
        "buffer 'acc': what it writes depends on what 'acc' held before the call")
    assert lines[-1] == (
        "  fix: declare it \"inout\", buffer(\"acc\", Tensor[16, f32], \"inout\"), since the "
        "kernel reads it (an accumulator); or, if the kernel only writes it, make the reference "
        "write every element without reading it first")


def test_an_out_buffer_written_in_part_is_not_taken_as_read() -> None:
    """A reference that leaves some elements of its "out" buffer as they were (a copy of the
    first half) does not read it: the elements left alone both times are not a dependence."""
    from aiedsl.kernels import buffer, declare
    from aiedsl.lang.tensor import Tensor

    def half(src: np.ndarray, dst: np.ndarray) -> None:
        dst[:8] = src[:8]

    k = declare("half_i32_16", source="passthrough.cc", entry="passthrough<int32_t, 8>",
                args=[buffer("src", Tensor[16, "i32"]), buffer("dst", Tensor[16, "i32"], "out")],
                reference=half, cycles=30, cost="a guess")
    src, dst = np.arange(16, dtype=np.int32), np.full(16, 7, dtype=np.int32)
    k.run_reference(src, dst)
    assert dst.tolist() == [*range(8)] + [7] * 8


# -- F4: arguments declared in another order than the C++'s --------------------------------------

def test_a_reference_keeping_state_is_not_taken_as_reading_its_out_buffer() -> None:
    """A reference counting its calls (as a C++ kernel's static counter) wrote other values on
    the probe's second run, and was told its "out" buffer was read (a reviewer's find): a run
    on the same arguments that writes other values leaves the probe nothing to judge."""
    from aiedsl import Tensor, i32
    from aiedsl.kernels import buffer, declare
    from aiedsl.kernels.reference import run_checked

    calls = [0]

    def ref(src: np.ndarray, dst: np.ndarray) -> None:
        dst[...] = src + calls[0]
        calls[0] += 1

    k = declare("count_i32_16", source="count.cc", entry="count<16>",
                args=[buffer("src", Tensor[16, i32]), buffer("dst", Tensor[16, i32], "out")],
                reference=ref, cycles=100, cost="copy", exact=True)
    src = np.arange(16, dtype=np.int32)
    dst = np.full(16, np.iinfo(np.int32).min, dtype=np.int32)
    run_checked(k.ir, ref, ref, [src, dst], look=True)
    assert (dst == src).all() and calls[0] == 3  # the call, the control run, the probe


def test_a_declaration_out_of_the_cpp_order_is_named_before_the_call(
        design_file: DesignFile) -> None:
    """It was [stale read] first, "swap the two arguments" of a call that was right; the
    signature check now runs before the calls are judged by the declaration."""
    path = corpus(design_file, "ksig_args_declared_out_of_order.py")
    assert error(path) == (
        "ksig_args_declared_out_of_order.py:17: error [kernel signature]: kernel "
        "'add_one_i32_256' declares its arguments in the order b, a, n; kernels_ok.cc's add_one "
        "(its line 5) takes the same names in the order a, b, n\n"
        "  limit: the kernel's args= are the C++ function's parameters, in its order\n"
        "  found: argument 1 is 'b' here and 'a' in add_one(const int32_t *a, int32_t *b, "
        "int32_t n)\n"
        "  fix: list args= in a, b, n order (and pass them so in the core's call)")
    passes(corpus(design_file, "ksig_args_declared_out_of_order.py",
                  ('args=[buffer("b", Tensor[256, i32], "out"), buffer("a", Tensor[256, i32]),',
                   'args=[buffer("a", Tensor[256, i32]), buffer("b", Tensor[256, i32], "out"),'),
                  ("def add_ref(b, a, n):", "def add_ref(a, b, n):")))


# -- F7: a kernel given a fifo, or consume() without `with` --------------------------------------

def test_a_fifo_passed_to_a_kernel_says_to_acquire_it(design_file: DesignFile) -> None:
    path = corpus(design_file, "kcall_fifo_itself.py")
    assert error(path) == (
        "kcall_fifo_itself.py:18: error [kernel call]: argument 0 of 'passthrough_i32_1024' is "
        "fifo 'a' itself, not an element acquired from it\n"
        "  limit: a kernel takes elements a `with` acquires: consume() for one it reads, "
        "produce() for one it writes\n"
        "  found: fifo 'a' itself\n"
        "  fix: acquire them and call the kernel inside the block: `with a.consume() as src, "
        "b.produce() as dst:` then passthrough_i32_1024(src, dst)")
    passes(corpus(design_file, "kcall_fifo_itself.py",
                  ("            copy(a, b)\n", "            with a.consume() as src, b.produce() "
                   "as dst:\n                copy(src, dst)\n")), sim=True)


def test_consume_without_with_is_reported_where_it_is_called(design_file: DesignFile) -> None:
    """It was "argument 0 ... is _GeneratorContextManager <contextlib._GeneratorContextManager
    object at 0x...>": now the line of the consume(), the names the design gave, no address."""
    path = corpus(design_file, "kcall_acquire_without_with.py")
    assert error(path) == (
        "kcall_acquire_without_with.py:18: error [kernel call]: a.consume() is called without "
        "`with`, so it acquires nothing; its result is passed to 'passthrough_i32_1024' as "
        "argument 0\n"
        "  limit: consume() and produce() acquire elements in a `with` statement, which releases "
        "them where its block ends; a kernel takes the element its `as` names\n"
        "  found: a.consume() outside a with\n"
        "  kcall_acquire_without_with.py:19: the call of 'passthrough_i32_1024'\n"
        "  fix: acquire in a with and call the kernel inside its block: `with a.consume() as x, "
        "b.produce() as y:` then passthrough_i32_1024(x, y)")
    passes(corpus(design_file, "kcall_acquire_without_with.py",
                  ("            x, y = a.consume(), b.produce()\n            copy(x, y)\n",
                   "            with a.consume() as x, b.produce() as y:\n"
                   "                copy(x, y)\n")), sim=True)


TWO_AT_ONCE = """import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import add


@design(device="npu1_1col")
def acq2(inp: Tensor[1024, i32], out: Tensor[512, i32]):
    a = fifo(Tensor[256, i32], name="a")
    r = fifo(Tensor[256, i32], name="r")
    k = add(Tensor[256, i32])

    @herd()
    def core():
        for _ in loop(2):
            w = a.consume(2)
            with r.produce() as o:
                k(w, w, o)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(r, out)


@acq2.reference
def reference(inp):
    x = inp.reshape(2, 2, 256)
    return (x[:, 0] + x[:, 1]).reshape(-1)
"""


def test_an_acquisition_of_two_passed_twice_gets_one_with(design_file: DesignFile) -> None:
    """``w = a.consume(2)`` passed as both operands: the fix opened ``a.consume() as w, a.consume()
    as w2`` (two acquires of one, a hang) and dropped the count (a reviewer's find); now one
    ``with`` of two, its elements passed by index, and that runs."""
    path = design_file(TWO_AT_ONCE)
    msg = error(path)
    assert msg.splitlines()[0].startswith("d.py:15: error [kernel call]: a.consume(2) is called "
                                          "without `with`")
    assert msg.splitlines()[-1] == (
        "  fix: acquire in a with and call the kernel inside its block: `with a.consume(2) as w:` "
        "then add_i32_256(w[0], w[1], o)")
    fixed = TWO_AT_ONCE.replace("""            w = a.consume(2)
            with r.produce() as o:
                k(w, w, o)""", """            with a.consume(2) as w, r.produce() as o:
                k(w[0], w[1], o)""")
    passes(design_file(fixed, "fixed.py"), sim=True)


def test_a_kernel_argument_shows_no_object_address(design_file: DesignFile) -> None:
    path = corpus(design_file, "kcall_fifo_itself.py", ("copy(a, b)", "copy(object(), object())"))
    text = error(path)
    assert "0x" not in text
    assert text.splitlines()[0] == (
        "kcall_fifo_itself.py:18: error [kernel call]: argument 0 of 'passthrough_i32_1024' is "
        "an object")


def test_a_channel_passed_to_a_kernel_says_to_index_and_acquire_it(
        design_file: DesignFile) -> None:
    path = corpus(design_file, "runtime_fill_join_output.py", ("k(ta, tb, tc)", "k(a, tb, c)"),
                  ("rt.fill(c[:], C)", "rt.drain(c[:], C)"))
    assert error(path).splitlines()[-1] == (
        "  fix: acquire them and call the kernel inside the block: `with a[y].consume() as src, "
        "c[y].produce() as dst:` then mul_bf16_1024(src, ..., dst)")


def test_consume_in_a_with_still_acquires_and_releases(design_file: DesignFile) -> None:
    """consume() and produce() return an object of aiedsl's own now (it knows its line): in a
    `with` it acquires and releases as before, and an error inside the block goes up as it is."""
    path = corpus(design_file, "kcall_acquire_without_with.py",
                  ("            x, y = a.consume(), b.produce()\n            copy(x, y)\n",
                   "            with a.consume() as x, b.produce() as y:\n"
                   "                copy(x, y)\n"))
    ops = [type(op).__name__ for op in load_design(path).ir.cores[0].body[0].body]
    assert ops == ["Acquire", "Acquire", "Call", "Release", "Release"]
    path = corpus(design_file, "kcall_acquire_without_with.py",
                  ("            x, y = a.consume(), b.produce()\n            copy(x, y)\n",
                   "            with a.consume() as x, b.produce() as y:\n"
                   "                copy(x, y, 1, 2)\n"))
    assert "error [kernel signature]" in error(path)


# -- F8: a fifo's method on a whole channel -------------------------------------------------------

def test_consuming_a_whole_channel_says_to_index_it(design_file: DesignFile) -> None:
    """It was "[python error]: AttributeError: 'Channel' object has no attribute 'consume'"."""
    path = corpus(design_file, "channel_consume_whole.py")
    assert error(path) == (
        "channel_consume_whole.py:19: error [channel index]: a.consume() on channel 'a' (shape "
        "[4], split=0), a bundle of 4 fifos\n"
        "  limit: consume() is a fifo's: a core uses the channel's fifo at its own index\n"
        "  found: a.consume()\n"
        "  fix: index it by the core's index, y from 0 to 3: a[y].consume()")
    passes(corpus(design_file, "channel_consume_whole.py",
                  ("with a.consume() as ta", "with a[y].consume() as ta")))


def test_consuming_a_whole_channel_of_one_fifo_says_its_index(design_file: DesignFile) -> None:
    """A channel of shape [1] under a herd of one core with no index: the fix said
    "y from 0 to 0: b[y].consume()", a y the core function does not have."""
    path = design_file('''
        from aiedsl import Tensor, channel, design, fifo, herd, i32, memtile, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1")
        def d(A: Tensor[1024, i32], C: Tensor[1024, i32]):
            b = channel(Tensor[1024, i32], name="b", via=memtile)
            c = fifo(Tensor[1024, i32], name="c")
            cp = passthrough(Tensor[1024, i32])

            @herd()
            def core():
                with b.consume() as ta, c.produce() as tc:
                    cp(ta, tc)

            with runtime() as rt:
                rt.fill(b, A)
                rt.drain(c, C)
        ''')
    assert error(path).splitlines()[-1] == "  fix: index its one fifo: b[0].consume()"


@pytest.mark.parametrize("code, fix", [
    ("c.produce()", "index it by the core's index, y from 0 to 3: c[y].produce()"),
    ("a.acquire(\"consume\")", "index it by the core's index, y from 0 to 3: a[y].acquire(...)"),
    ("a.cons()", "index it by the core's index, y from 0 to 3: a[y].consume(); aiedsl has no "
     "handles: `with a[y].consume() as e:` acquires an element"),
    ("a.forward()", "index it by the core's index, y from 0 to 3: a[y].forward(); or declare "
     "the channel with via=memtile, which passes each of its fifos through a memtile"),
    ("a.split(2)", "index it by the core's index, y from 0 to 3: a[y].split(...); or declare "
     "the channel with split=<axis> and via=memtile, whose host end (a[:]) the memtile splits "
     "into the fifos of that axis"),
    ("a.join(2)", "index it by the core's index, y from 0 to 3: a[y].join(...); or declare "
     "the channel with join=<axis> and via=memtile, whose host end (a[:]) the memtile joins "
     "from the fifos of that axis"),
])
def test_every_fifo_method_on_a_channel_says_to_index_it(design_file: DesignFile, code: str,
                                                         fix: str) -> None:
    path = corpus(design_file, "channel_consume_whole.py",
                  ("            with a.consume() as ta,",
                   f"            {code}\n            with a[y].consume() as ta,"))
    lines = error(path).splitlines()
    assert lines[0].startswith("channel_consume_whole.py:19: error [channel index]: ")
    assert lines[-1] == f"  fix: {fix}"


def test_a_2d_channel_is_indexed_by_x_and_y(design_file: DesignFile) -> None:
    path = corpus(design_file, "runtime_fill_join_output.py",
                  ("b = channel(Tensor[1024, bf16], shape=[4], via=memtile, split=0)",
                   "b = channel(Tensor[1024, bf16], shape=[2, 2], via=memtile, split=1)"),
                  ("b[y].consume()", "b.consume()"))
    assert error(path).splitlines()[-1] == (
        "  fix: index it by the core's index, x from 0 to 1 and y from 0 to 1: "
        "b[x, y].consume()")


# -- F9: a local accumulator, read in a loop before any write ------------------------------------

def test_an_accumulator_never_reset_leads_with_writing_it_in_the_loop(
        design_file: DesignFile) -> None:
    """It led with "give it initial=...", which sets it once per load: the sums would carry
    from one outer iteration to the next."""
    path = corpus(design_file, "local_accumulator_not_reset.py")
    assert error(path) == (
        "local_accumulator_not_reset.py:22: error [local]: core[0,0] reads local 'acc' (argument "
        "0, 'a', of 'add_i32_16', in) before any kernel writes it, and it has no initial value\n"
        "  limit: a local holds its initial value from when the design is loaded, then what "
        "kernels write into it; with neither, whatever the memory held before (another design's "
        "or an earlier run's data)\n"
        "  found: no initial= and no earlier write in this core\n"
        "  local_accumulator_not_reset.py:13: local 'acc' is declared\n"
        "  fix: write it first where each accumulation starts: call a kernel that takes it "
        "\"out\" (such as zero(Tensor[16, i32]) from aiedsl.kernels) in the loop at line 19, "
        "just before the loop at line 20 that reads it; initial= would set it only once, when "
        "the design is loaded, not for each iteration of the loop at line 19")
    fixed = (("from aiedsl.kernels import add, passthrough",
              "from aiedsl.kernels import add, passthrough, zero"),
             ("    copy = passthrough(Tensor[16, i32])\n",
              "    copy = passthrough(Tensor[16, i32])\n    z = zero(Tensor[16, i32])\n"),
             ("        for _ in loop(4):\n", "        for _ in loop(4):\n            z(acc)\n"))
    passes(corpus(design_file, "local_accumulator_not_reset.py", *fixed), sim=True)
    # initial= alone passes check, and the simulator shows why it is no fix
    initial = corpus(design_file, "local_accumulator_not_reset.py",
                     ("acc = local(Tensor[16, i32])", "acc = local(Tensor[16, i32], initial=0)"))
    check_design(load_design(initial).ir)
    assert not simulate(load_design(initial)).passed


# -- F10: a core consuming a part of a join -------------------------------------------------------

def test_consuming_a_join_part_says_cores_produce_it(design_file: DesignFile) -> None:
    """It said "fifo 'c_0' has no producer / fix: fill it in the runtime sequence (rt.fill)"."""
    path = corpus(design_file, "fifo_join_part_consumed.py")
    assert error(path) == (
        "fifo_join_part_consumed.py:19: error [fifo producer]: fifo c[0] ('c_0'), one part of a "
        "join, has no producer: core[0,0] consumes it\n"
        "  limit: a join's parts are produced by cores; the memtile joins them into its output, "
        "which the host drains (rt.drain)\n"
        "  found: core[0,0] consumes c[0]\n"
        "  fifo_join_part_consumed.py:13: the join\n"
        "  fix: produce it in the core, `with c[y].produce() as e:`, and drain the joined output, "
        "rt.drain(c[:], ...); to bring data from the host into cores, use a channel with split= "
        "(or none), filled by rt.fill")
    passes(corpus(design_file, "fifo_join_part_consumed.py",
                  ("c[y].consume() as tc", "c[y].produce() as tc")), sim=True)


# -- F12: what help() says -----------------------------------------------------------------------

def test_help_says_what_a_first_day_user_needs() -> None:
    """declare's source= beside the design, herd's accepted cascades, the runtime's calls, and
    a channel's essentials in its own docstring (help(aiedsl.channel) showed "see the module
    docstring")."""
    import aiedsl
    from aiedsl.kernels import declare

    assert "beside the design file" in " ".join(inspect.getdoc(declare).split())
    herd = str(inspect.signature(aiedsl.herd).parameters["cascade"].annotation)
    assert "'east', 'south'" in herd and "north" not in herd
    assert 'Only ``"east"`` and ``"south"`` are accepted' in " ".join(
        inspect.getdoc(aiedsl.herd).split())
    runtime = inspect.getdoc(aiedsl.runtime)
    for call in ("rt.fill(", "rt.drain(", "rt.sync()", "rt.wait(", "rt.rtp_write(",
                 "rt.set_barrier(", "Example::"):
        assert call in runtime, call
    channel = inspect.getdoc(aiedsl.channel)
    assert "module docstring" not in channel
    for words in ("a[y].consume()", "rt.fill(a[:], A)", "rt.drain(c[:], C)", "split=axis",
                  "join=axis"):
        assert words in channel, words


def test_the_channel_docstring_example_runs(design_file: DesignFile) -> None:
    """The example of help(aiedsl.channel), in a design of its own, simulates to a PASS."""
    doc = inspect.getdoc(__import__("aiedsl").channel)
    body = doc.split("Example::\n\n", 1)[1].split("\n\nParameters", 1)[0]  # indented 4
    path = design_file(
        "import numpy as np\n"
        "from aiedsl import Tensor, bf16, channel, design, herd, memtile, runtime\n"
        "from aiedsl.kernels import relu\n\n"
        "@design(device=\"npu1\")\n"
        "def d(A: Tensor[4096, bf16], C: Tensor[4096, bf16]):\n"
        "    k = relu(Tensor[1024, bf16])\n"
        f"{body}\n\n"
        "@d.reference\n"
        "def ref(A):\n"
        "    return np.maximum(A, 0)\n")
    passes(path, sim=True)


# -- F13: one spelling of element types everywhere -----------------------------------------------

def test_kernel_cost_takes_the_dtype_spellings_a_tensor_takes() -> None:
    from aiedsl.kernels.cost import estimate

    assert estimate("mul", "1024", "bfloat16", "npu1") == estimate("mul", "1024", "bf16", "npu1")
    assert estimate("add", "1024", "int32", "npu1") == estimate("add", "1024", "i32", "npu1")
    with pytest.raises(DesignError) as e:
        estimate("mul", "1024", "float32", "npu1")
    assert str(e.value) == (
        "error [kernel cost]: --dtype float32 (f32): mul takes bf16, i16 or i32 elements\n"
        "  limit: bf16, i16, i32\n"
        "  found: float32\n"
        "  fix: pass --dtype bf16 (or leave --dtype out: bf16 is mul's default)")


# -- F14: names aiedsl does not export; -D on a plain constant -----------------------------------

def test_importing_numpys_dtype_name_suggests_aiedsls(design_file: DesignFile) -> None:
    """``from aiedsl import int32`` said only "fix the code at this line"."""
    path = corpus(design_file, "py_import_numpy_dtype_name.py")
    text = re.sub(r" \(/[^)]*__init__\.py\)", " (...)", error(path))
    assert text == (
        "py_import_numpy_dtype_name.py:5: error [python error]: ImportError: cannot import name "
        "'int32' from 'aiedsl' (...) (while loading py_import_numpy_dtype_name.py)\n"
        "  fix: aiedsl calls the element type int32 i32: import i32 (from aiedsl import i32) and "
        "write i32 where the design says int32; its element types are i8, u8, i16, u16, i32, "
        "u32, bf16, f32")
    passes(corpus(design_file, "py_import_numpy_dtype_name.py", ("int32", "i32")))


@pytest.mark.parametrize("imported, module, fix", [
    ("bfloat16", "aiedsl", "aiedsl calls the element type bfloat16 bf16: import bf16 (from "
     "aiedsl import bf16) and write bf16 where the design says bfloat16; its element types are "
     "i8, u8, i16, u16, i32, u32, bf16, f32"),
    ("float64", "aiedsl", "aiedsl has no element type float64: its element types are i8, u8, "
     "i16, u16, i32, u32, bf16, f32"),
    ("passthrough", "aiedsl", "passthrough is in aiedsl.kernels: from aiedsl.kernels import "
     "passthrough"),
    ("fifo", "aiedsl.kernels", "fifo is in aiedsl: from aiedsl import fifo"),
    ("Herd", "aiedsl", "aiedsl has no Herd; the closest name it has is herd: from aiedsl import "
     "herd"),
    ("matmull", "aiedsl.kernels", "aiedsl.kernels has no matmull; the closest name it has is "
     "matmul: from aiedsl.kernels import matmul"),
    ("zzz", "aiedsl", "aiedsl has no zzz: help(aiedsl) lists what it has"),
])
def test_a_name_aiedsl_does_not_export_gets_the_closest(
        design_file: DesignFile, imported: str, module: str, fix: str) -> None:
    path = design_file(f"from {module} import {imported}\n")
    assert error(path).splitlines()[-1] == (
        f"  fix: {fix}")


def test_an_attribute_aiedsl_does_not_have_gets_the_hint(design_file: DesignFile) -> None:
    path = design_file("import aiedsl\nT = aiedsl.float32\n")
    assert error(path).splitlines()[-1].startswith(
        "  fix: aiedsl calls the element type float32 f32: ")


@pytest.mark.parametrize("edit, line, fix", [
    (("to_core.consume()", "to_core.consum()"), 27, "did you mean .consume()? (not .consum)"),
    # rt's own: a [runtime] error that lists what rt has
    (("rt.fill(to_mem, inp)", "rt.fil(to_mem, inp)"), 31, "did you mean rt.fill()?"),
    (("to_core.consume()", "to_core.zzz()"), 27, "fix the code at this line"),
    # a module's function too, read without running anything of the object's (a reviewer's)
    (("    copy = copy_kernel(Tensor[TILE, i32])\n",
      "    copy = copy_kernel(Tensor[TILE, i32])\n    np.zeroes(3)\n"), 23,
     "did you mean .zeros()? (not .zeroes)"),
])
def test_a_misspelled_method_gets_the_closest(design_file: DesignFile, edit: tuple[str, str],
                                             line: int, fix: str) -> None:
    """``f.consum()`` got only "fix the code at this line" (a tester): Python's traceback
    suggests the closest name, its one-line message does not."""
    path = design_file((CORPUS.parent.parent / "designs" / "passthrough.py").read_text()
                       .replace(*edit))
    first, *_, last = error(path).splitlines()
    assert first.startswith(f"d.py:{line}: error [runtime]: rt.fil: " if "rt." in fix else
                            f"d.py:{line}: error [python error]: AttributeError: ")
    assert last == f"  fix: {fix}"


@pytest.mark.parametrize("call, said", [
    ("tg = rt.task_group()", "rt.task_group: the runtime sequence has no task_group (IRON's "
     "task groups free their transfers' BDs together when finished)"),
    ("rt.finish_task_group(None)", "rt.finish_task_group: the runtime sequence has no "
     "finish_task_group (IRON's finish_task_group(tg) waits for a task group's transfers)"),
    ("rt.enable_trace(8192)", "rt.enable_trace: the runtime sequence has no enable_trace "
     "(IRON's enable_trace sets up the NPU's hardware trace)"),
    ("rt.inline_ops(None, [])", "rt.inline_ops: the runtime sequence has no inline_ops (IRON's "
     "inline_ops puts MLIR of your own into the sequence)")])
def test_irons_runtime_calls_say_what_to_write_instead(design_file: DesignFile, call: str,
                                                      said: str) -> None:
    """IRON's task groups, trace and inline ops got only "use one of those" (an IRON porter),
    though the README maps task groups to rt.sync()."""
    path = design_file((CORPUS.parent.parent / "designs" / "passthrough.py").read_text()
                       .replace("rt.fill(to_mem, inp)", f"{call}\n        rt.fill(to_mem, inp)"))
    first, *_ = error(path).splitlines()
    assert first == f"d.py:31: error [runtime]: {said}"


def test_a_define_given_for_a_plain_constant_says_to_make_it_one(
        design_file: DesignFile) -> None:
    """``-D N=8192`` on ``N = 4096`` said only "the design has no define(): remove -D N"."""
    path = corpus(design_file, "define_on_plain_constant.py")
    with pytest.raises(DesignError) as e:
        load_from_command_line(path, ["N=8192"])
    assert str(e.value) == (
        "define_on_plain_constant.py:9: error [define]: -D N matches no define() in "
        "define_on_plain_constant.py\n"
        "  limit: -D sets a value the design takes with define(); a plain assignment ignores "
        "it\n"
        "  found: N = 4096, a plain constant\n"
        "  fix: make N a define() to set it with -D: N = define(\"N\", 4096) at line 9 (from "
        "aiedsl import define); or remove -D N")
    fixed = corpus(design_file, "define_on_plain_constant.py",
                   ("N = 4096", "N = define(\"N\", 4096)"),
                   ("from aiedsl import Tensor, design",
                    "from aiedsl import Tensor, define, design"))
    passes(fixed, {"N": "8192"}, sim=True)
    assert load_design(fixed, {"N": "8192"}).ir.tensor("inp").type.shape == (8192,)


def test_defines_for_several_plain_constants_name_each(design_file: DesignFile) -> None:
    path = corpus(design_file, "define_on_plain_constant.py",
                  ("N = 4096\n", "N = 4096\nTILE = 1024\n"))
    with pytest.raises(DesignError) as e:
        load_from_command_line(path, ["N=8192", "TILE=512"])
    assert str(e.value).splitlines()[1:] == [
        "  limit: -D sets a value the design takes with define(); a plain assignment ignores "
        "it",
        "  found: N = 4096, a plain constant; TILE = 1024, a plain constant",
        "  define_on_plain_constant.py:10: TILE = 1024",
        "  fix: make N and TILE a define() to set them with -D: N = define(\"N\", 4096) at line "
        "9; TILE = define(\"TILE\", 1024) at line 10 (from aiedsl import define); or remove -D N "
        "and -D TILE"]


def test_defines_from_python_for_plain_constants_are_said_in_python_words(
        design_file: DesignFile) -> None:
    """From Python, ``load_design(p, {"N": 8192})`` was told of ``-D N`` (a tester)."""
    path = corpus(design_file, "define_on_plain_constant.py")
    with pytest.raises(DesignError) as e:
        load_design(path, {"N": 8192})
    line = inspect.currentframe().f_lineno - 1  # type: ignore[union-attr]
    assert str(e.value) == (
        "define_on_plain_constant.py:9: error [define]: defines= names 'N', which matches no "
        "define() in define_on_plain_constant.py\n"
        "  limit: defines= sets a value the design takes with define(); a plain assignment "
        "ignores it\n"
        "  found: N = 4096, a plain constant\n"
        f"  {display_path(__file__)}:{line}: defines= given\n"
        "  fix: make N a define() to set it with defines=: N = define(\"N\", 4096) at line 9 "
        "(from aiedsl import define); or remove 'N' from defines=")


KEYWORD = '''
from aiedsl import Tensor, design, fifo, i32, runtime

@design(device="npu1_1col")
def d(A: Tensor[64, i32], B: Tensor[64, i32]):
    a = fifo(Tensor[64, i32])
    b = a.forward(KEYWORD=2)
    with runtime() as rt:
        rt.fill(a, A)
        rt.drain(b, B)
'''


@pytest.mark.parametrize("keyword, why", [
    ("dims_from_stream_per_cons", "(dims_from_stream_per_cons= is not one of them: dims_from_stream=?)"),
    ("dept", "(dept= is not one of them: depth=?)")])
def test_a_keyword_an_aiedsl_call_does_not_take_is_told_with_those_it_does(
        design_file: DesignFile, keyword: str, why: str) -> None:
    """A fuzzer's forward(consumer_depth=...) was a bare Python TypeError: the fix now names
    the keywords forward() takes (it takes consumer_depth= now; IRON's per-consumer keyword it
    does not)."""
    msg = error(design_file(KEYWORD.replace("KEYWORD", keyword)))
    assert msg.splitlines()[0] == (
        f"d.py:6: error [python error]: TypeError: ObjectFifo.forward() got an unexpected "
        f"keyword argument '{keyword}' (while loading d.py)")
    assert msg.splitlines()[-1] == (
        "  fix: forward() takes elem=, depth=, dims_to_stream=, dims_from_stream=, via=, name=, "
        f"repeat=, consumer_depth= {why}")


SPLIT_PART_PRODUCED = '''
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough

@design(device="npu1_1col")
def d(A: Tensor[128, i32], B: Tensor[128, i32]):
    a = fifo(Tensor[128, i32])
    p0, p1 = a.split(2)
    k = passthrough(Tensor[64, i32])

    @herd()
    def core():
        with p0.consume() as x, p1.produce() as y:
            k(x, y)

    with runtime() as rt:
        rt.fill(a, A)
        rt.drain(p1, B)
'''


def test_a_core_producing_a_split_part_is_told_so(design_file: DesignFile) -> None:
    """A core writing into a split's part got the generic 'two producers: the memtile and
    core[0,0]' (left from stop 32)."""
    assert error(design_file(SPLIT_PART_PRODUCED)) == (
        "d.py:12: error [fifo producer]: fifo 'a_1' is part 1 of the split of 'a', which the "
        "memtile produces; core[0,0] cannot produce it too\n"
        "  limit: a fifo has exactly one producer, and a link's outputs are its tile's\n"
        "  found: core[0,0] produces 'a_1'\n"
        "  d.py:7: the split\n"
        "  fix: give what core[0,0] makes a fifo of its own (e.g. out = fifo(Tensor[64, i32])) "
        "and drain or consume that; 'a_1' reaches its consumers from the link")


@pytest.mark.parametrize("source, fix", [
    ('from aiedsl import define\nN = define("N", 64, help="elements")\n',
     "  fix: define() takes name=, default=, doc= (help= is not one of them)"),
    ("def tiles(rows, cols):\n    return None\n\ntiles(4, colz=16)\n",
     "  fix: fix the code at this line")],
    ids=["aiedsl's define", "the user's own tiles"])
def test_the_keywords_told_are_those_of_the_function_called(design_file: DesignFile,
                                                             source: str, fix: str) -> None:
    """A reviewer: define(help=) was told the keywords of an internal define() of the C
    scanner, and a design's own tiles() those of aiedsl's tiles()."""
    assert error(design_file(source)).splitlines()[-1] == fix


def test_a_design_file_with_a_bom_is_read_as_python_reads_it(design_file: DesignFile) -> None:
    """A reviewer: with a UTF-8 BOM, the lines read for fixes did not parse, and the fix for a
    consume() outside a with lost the call's other arguments."""
    path = design_file(TWO_AT_ONCE)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert error(path).splitlines()[-1].endswith("then add_i32_256(w[0], w[1], o)")


def test_the_fix_writes_the_kernel_calls_own_arguments(design_file: DesignFile) -> None:
    """A reviewer: k(a.consume(), pick(y, 0)) was fixed as k(x, 0), the inner call's
    arguments taken for the kernel call's."""
    path = design_file(TWO_AT_ONCE.replace("""            w = a.consume(2)
            with r.produce() as o:
                k(w, w, o)""", """            w = a.consume(2)
            with r.produce() as o:
                k(w, w, pick(o, 0))""").replace("@design(", "def pick(x, i):\n    return x\n\n\n@design("))
    assert error(path).splitlines()[-1].endswith("then add_i32_256(w[0], w[1], pick(o, 0))")


def test_the_readmes_first_design_runs_as_it_says(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's step-by-step vector add (a newcomer's tester asked for one): its design
    passes check and the simulator, and the mistake it shows is refused as it says."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme.split("## Your first design, step by step\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"Save this as `vadd.py`:\n\n((?:    .*\n|\n)+?)\nThen:", section)
    assert block is not None
    code = "\n".join(line[4:] for line in block[1].splitlines()) + "\n"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "vadd.py").write_text(code)
    handle = load_design(tmp_path / "vadd.py")
    result = simulate(handle)
    assert result.passed and result.checks[0].line() == (
        "PASS c: exact (integers must match exactly)")
    (tmp_path / "bad.py").write_text(code.replace("loop(N // TILE)", "loop(N // TILE + 1)"))
    with pytest.raises(DesignError) as e:
        check_design(load_design(tmp_path / "bad.py").ir)
    said = ("error [balance]: fifo 'fa': the runtime fills 4 element(s) per run, but core[0,0] "
            "takes 5")
    assert said in str(e.value).splitlines()[0]
    assert said in " ".join(section.split())


@pytest.mark.parametrize("sliced, found, fix", [
    ("a[256:512]", "a[256:512]", "pass the whole tensor and the pattern that moves the slice: "
     "rt.fill(f, a, (256, [256], [1])) (rt.drain alike)"),
    ("a[::2]", "a[::2]", "pass the whole tensor and a pattern, rt.fill(f, t, (offset, [sizes], "
     "[strides])), or tiles(t, (rows, cols)) for tiles of a matrix"),
])
def test_a_sliced_host_tensor_is_told_the_pattern_that_moves_the_slice(
        design_file: DesignFile, sliced: str, found: str, fix: str) -> None:
    """(a first-week student) rt.fill(f, a[i*P:(i+1)*P]) was "TypeError: 'HostTensorRef'
    object is not subscriptable", fix "fix the code at this line"."""
    path = design_file(f'''
        from aiedsl import Tensor, design, fifo, herd, i16, runtime
        from aiedsl.kernels import relu

        @design(device="npu1_1col")
        def d(a: Tensor[1024, i16], b: Tensor[256, i16]):
            fi = fifo(Tensor[256, i16], name="fi")
            fo = fifo(Tensor[256, i16], name="fo")
            k = relu(Tensor[256, i16])

            @herd()
            def core():
                with fi.consume() as x, fo.produce() as y:
                    k(x, y)

            with runtime() as rt:
                rt.fill(fi, {sliced})
                rt.drain(fo, b)
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:16: error [host tensor]: host tensor 'a' (1024xi16) is sliced\n"
        "  limit: rt.fill and rt.drain take a host tensor whole, with a pattern of the elements "
        f"they move\n  found: {found}\n  fix: {fix}")


TWICE = '''
from aiedsl import Tensor, define, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough

N = define("N", 4096)
TILE = define("N", 1024)


@design(device="npu1_1col")
def d(x: Tensor[N, i32], y: Tensor[N, i32]):
    f = fifo(Tensor[TILE, i32])
    g = fifo(Tensor[TILE, i32])
    k = passthrough(Tensor[TILE, i32])

    @herd()
    def core():
        for _ in loop(N // TILE):
            with f.consume() as s, g.produce() as t:
                k(s, t)

    with runtime() as rt:
        rt.fill(f, x)
        rt.drain(g, y)
'''


def test_a_define_given_twice_on_two_lines_is_refused_but_not_one_per_design(
        design_file: DesignFile) -> None:
    """TILE = define("N", 1024), a copy-paste's, was taken silently, and -D N then set both
    (a tester); two designs of one file may each define a name of their own (a reviewer)."""
    msg = error(design_file(TWICE))
    assert msg.splitlines()[:3] == [
        "d.py:5: error [define]: define 'N' is defined twice",
        "  limit: one define() line per name: -D sets a name once, and every define() of it "
        "takes that value",
        "  found: define(\"N\", ...) here and at line 4"]
    two = design_file(TWICE.replace('TILE = define("N", 1024)\n', "").replace(
        "    f = fifo(", '    TILE = define("TILE", 1024)\n    f = fifo(') + TWICE.split(
        "\n\n\n", 1)[1].replace("def d(", "def e(").replace(
        "    f = fifo(", '    TILE = define("TILE", 512)\n    f = fifo('))
    assert load_design(two, name="e").ir.fifos[0].elem.shape == (512,)


IRON_FIFO = '''
import copy
import dataclasses

from aiedsl import ObjectFifo, Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def d(x: Tensor[64, i32], y: Tensor[64, i32]):
    a = fifo(Tensor[64, i32], name="a")
    copy.copy(a), copy.deepcopy(a), dataclasses.replace(a)  # still what they were
    b = ObjectFifo(Tensor[64, i32], name="b", depth=2)
'''


def test_irons_objectfifo_constructor_is_told_to_write_fifo(design_file: DesignFile) -> None:
    """ObjectFifo(obj_type, name=, depth=) as IRON writes it was a TypeError naming
    FifoRecord.__init__ (a tester); copies of a fifo are made as before (a reviewer)."""
    msg = error(design_file(IRON_FIFO))
    assert msg.splitlines() == [
        "d.py:12: error [fifo]: ObjectFifo(...) is how IRON declares a fifo; aiedsl declares "
        "one with fifo(...), which returns an ObjectFifo",
        "  found: ObjectFifo(Tensor[64, i32], name='b', depth=2)",
        "  fix: write fifo(Tensor[64, i32], name='b', depth=2) (from aiedsl import fifo)"]


@pytest.mark.parametrize("call, fix", [
    ("ObjectFifo(np.ndarray[(64,), np.dtype[np.int32]], name='b', depth=2)",
     "  fix: write fifo(Tensor[64, i32], name='b', depth=2) (from aiedsl import fifo)"),
    ("fifo(np.ndarray[(8, 8), np.dtype[np.int16]])",
     "  fix: write fifo(Tensor[8, 8, i16]), IRON's type as aiedsl writes it")])
def test_irons_numpy_element_type_is_written_as_aiedsls_in_the_fix(
        design_file: DesignFile, call: str, fix: str) -> None:
    """IRON's np.ndarray[(64,), np.dtype[np.int32]] came back in the fix as it was given, and
    fifo() then refused it too: the fix writes it as a Tensor type (a message auditor)."""
    source = IRON_FIFO.replace("import copy\n", "import copy\nimport numpy as np\n").replace(
        'ObjectFifo(Tensor[64, i32], name="b", depth=2)', call)
    assert error(design_file(source)).splitlines()[-1] == fix
