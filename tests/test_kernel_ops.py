"""A kernel's operations against the core's peak, call by call, and ``ops=`` as a function of a
call's scalars: each call counts its own, the IR carries the counts, the simulator's
throughput sums them, and the check holds every call to its operand types' peak."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.ir.program import ops_per_run
from aiedsl.loader import load_design
from aiedsl.targets import get_target

DesignFile = Callable[..., Path]

SCALE_N_CC = """#include <aie_api/aie.hpp>
extern "C" void scale_n(const int32_t *a, int32_t *c, int32_t n) {
  for (int i = 0; i < n; i += 16)
    aie::store_v(c + i, aie::add(aie::load_v<16>(a + i), aie::load_v<16>(a + i)));
}
"""
# n/16 adds; 8 n bytes loaded at 64 a cycle, 4 n stored at 32 a cycle: n/8 cycles (128 with
# n=1024, 2 with n=16), as test_kernel_profile's scale_n
SCALE_N = '''
from aiedsl import Tensor, design, fifo, herd, i32, loop, rtp, runtime
from aiedsl.kernels import buffer, declare, scalar

def ref(a, c, n):
    c[:n] = a[:n] * 2

@design(device="npu1_1col")
def d(inp: Tensor[1024, i32], out: Tensor[1024, i32]):
    k = declare("scale_n", source="sn.cc",
                args=[buffer("a", Tensor[1024, i32]), buffer("c", Tensor[1024, i32], "out"),
                      scalar("n", i32)],
                reference=ref, cycles=CYCLES, ops=OPS, cost="n/16 adds")
    a, b = fifo(Tensor[1024, i32], name="a"), fifo(Tensor[1024, i32], name="b")
    nrtp = rtp(Tensor[1, i32], name="nrtp")

    @herd()
    def core():
        with a.consume() as s, b.produce() as t:
            CALLS

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)

@d.reference
def reference(inp):
    return inp * 2
'''
ONCE_THEN_SMALL = "k(s, t, 1024)\n            for _ in loop(100):\n                k(s, t, 16)"


def _scale_n(design_file: DesignFile, ops: str, cycles: str = "None",
             calls: str = ONCE_THEN_SMALL) -> Path:
    src = SCALE_N.replace("OPS", ops).replace("CYCLES", cycles).replace("CALLS", calls)
    if "nrtp" not in calls:  # an rtp no core reads is refused
        src = src.replace('    nrtp = rtp(Tensor[1, i32], name="nrtp")\n', "")
    path = design_file(src)
    (path.parent / "sn.cc").write_text(SCALE_N_CC)
    return path


def _error(path: Path) -> str:
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    return str(e.value)


# -- every call against the peak ----------------------------------------------------------------

def test_every_profiled_call_is_held_to_the_peak_not_only_the_first(
        design_file: DesignFile) -> None:
    """A tester's kernel, cycles=None and ops=65536, called once with n=1024 (128 cycles) and
    3000 times with n=16 (2 cycles): the check judged ops= against the first call's profile
    alone, and the simulator, charging each call its own, reported 1,323.7 GOPS on one npu1
    core. The n=16 calls break the peak, and are named."""
    path = _scale_n(design_file, "1024")
    assert _error(path) == (
        "d.py:9: error [kernel cost]: kernel 'scale_n' declares 1,024 operations per call, and "
        "its profile with n=16 gives those calls 2 cycles\n"
        "  limit: at most 32 per cycle (npu1_1col's i32 peak of 16 MACs per cycle, the type of "
        "its operands, emulated with 16-bit multiplies; a MAC counting 2)\n"
        "  found: 512 per cycle with n=16; 1,024 in 128 cycles with n=1024 (8 per cycle)\n"
        "  fix: count ops as one call's arithmetic (a multiply-accumulate is 2) and cycles as "
        "its time; a kernel whose work varies with its scalars counts it per call: "
        "ops=lambda n: ... (its operations for those values)")


def test_a_profiled_kernel_called_with_one_value_says_its_profile(
        design_file: DesignFile) -> None:
    path = _scale_n(design_file, "8192", calls="k(s, t, 1024)")
    assert _error(path).splitlines()[:3] == [
        "d.py:9: error [kernel cost]: kernel 'scale_n' declares 8,192 operations per call, and "
        "its profile with n=1024 gives those calls 128 cycles",
        "  limit: at most 32 per cycle (npu1_1col's i32 peak of 16 MACs per cycle, the type of "
        "its operands, emulated with 16-bit multiplies; a MAC counting 2)",
        "  found: 64 per cycle with n=1024"]


# -- ops= a function of the call's scalars ------------------------------------------------------

def test_each_call_counts_its_own_operations(design_file: DesignFile) -> None:
    """ops=lambda n: n: the n=1024 call does 1024 operations, each n=16 call 16; the IR holds
    the counts (JSON and back), and the simulator's throughput and the manifest's
    ops_per_run sum each call's own."""
    from aiedsl.sim import simulate

    path = _scale_n(design_file, "lambda n: n")
    handle = load_design(path)
    check_design(handle.ir)
    k = handle.ir.kernels[0]
    assert (k.ops, k.ops_source) == (1024, "per call")
    assert [(c.constants, c.scalars, c.given, c.ops) for c in k.op_counts] == [
        ((1024,), {"n": 1024}, {}, 1024), ((16,), {"n": 16}, {}, 16)]
    assert [tuple(c) for c in k.charges()] == [(128, 1024, "n=1024"), (2, 16, "n=16")]
    again = Design.model_validate_json(handle.ir.model_dump_json())
    assert again.kernels[0].op_counts == k.op_counts
    assert ops_per_run(handle.ir) == 1024 + 100 * 16
    result = simulate(handle)
    assert result.passed
    assert result.timing.ops == 1024 + 100 * 16


def test_a_call_counting_more_than_the_peak_allows_is_named(design_file: DesignFile) -> None:
    """A fixed cost per call and 2 per element: the n=16 calls' 1,032 in 2 cycles break it."""
    path = _scale_n(design_file, "lambda n: 2 * n + 1000")
    assert _error(path) == (
        "d.py:9: error [kernel cost]: kernel 'scale_n' counts 1,032 operations for its calls "
        "with n=16 (its ops=), and its profile gives them 2 cycles\n"
        "  limit: at most 32 per cycle (npu1_1col's i32 peak of 16 MACs per cycle, the type of "
        "its operands, emulated with 16-bit multiplies; a MAC counting 2)\n"
        "  found: 516 per cycle with n=16; 3,048 in 128 cycles with n=1024 (24 per cycle)\n"
        "  fix: count ops as one call's arithmetic (a multiply-accumulate is 2) and cycles as "
        "its time")


def test_per_call_operations_with_declared_cycles(design_file: DesignFile) -> None:
    """Declared cycles are the same for every call: the call doing the most work breaks it."""
    path = _scale_n(design_file, "lambda n: 4 * n", cycles="100")
    assert _error(path).splitlines()[:3] == [
        "d.py:9: error [kernel cost]: kernel 'scale_n' counts 4,096 operations for its calls "
        "with n=1024 (its ops=), in 100 cycles per call",
        "  limit: at most 32 per cycle (npu1_1col's i32 peak of 16 MACs per cycle, the type of "
        "its operands, emulated with 16-bit multiplies; a MAC counting 2)",
        "  found: 41 per cycle with n=1024; 64 in 100 cycles with n=16 (1 per cycle)"]


def test_a_scalar_read_from_an_rtp_is_counted_with_params(design_file: DesignFile) -> None:
    path = _scale_n(design_file, "lambda n: 2 * n", cycles="100", calls="k(s, t, nrtp[0])")
    path.write_text(path.read_text().replace('cost="n/16 adds"',
                                             'cost="n/16 adds", params={"n": 16}'))
    k = load_design(path).ir.kernels[0]
    assert [(c.constants, c.shown(), c.ops) for c in k.op_counts] == [
        ((None,), "n=16 (params=)", 32)]


def test_calls_reading_different_rtp_slots_count_each_slots_value(
        design_file: DesignFile) -> None:
    """Two calls reading n from two rtp slots, written 1024 and 16: both were keyed (None,),
    so both counted the first slot's 1024 (2048 operations a run). Each slot is its own key."""
    from aiedsl.sim import simulate

    path = _scale_n(design_file, "lambda n: n", cycles="64",
                    calls="k(s, t, nrtp[0])\n            k(s, t, mrtp[0])")
    path.write_text(path.read_text().replace(
        '    nrtp = rtp(Tensor[1, i32], name="nrtp")\n',
        '    nrtp = rtp(Tensor[1, i32], name="nrtp")\n    mrtp = rtp(Tensor[1, i32], name="mrtp")\n'
    ).replace("        rt.fill(a, inp)\n", "        rt.rtp_write(nrtp, 0, 1024)\n"
              "        rt.rtp_write(mrtp, 0, 16)\n        rt.fill(a, inp)\n"))
    handle = load_design(path)
    k = handle.ir.kernels[0]
    assert [(c.constants, c.scalars, c.ops) for c in k.op_counts] == [
        ((("nrtp", 0),), {"n": 1024}, 1024), ((("mrtp", 0),), {"n": 16}, 16)]
    again = Design.model_validate_json(handle.ir.model_dump_json())
    assert again.kernels[0].op_counts == k.op_counts
    assert simulate(handle).timing.ops == 1040


def test_a_scalar_with_no_value_to_count_with_names_the_call(design_file: DesignFile) -> None:
    path = _scale_n(design_file, "lambda n: 2 * n", cycles="100", calls="k(s, t, nrtp[0])")
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:9: error [kernel cost]: kernel 'scale_n' has ops= a function of its scalars, and "
        "no value for its scalar 'n' to count a call's operations with\n"
        "  limit: a scalar a call passes as a constant is counted with that value; one read "
        "from an rtp slot with its params= value, else the value the runtime sequence first "
        "writes into the slot\n"
        "  found: ops=<lambda>\n"
        "  d.py:19: the call\n"
        "  fix: give params={'n': ...} to count it with, or ops= as a number")


@pytest.mark.parametrize("ops, message", [
    ("lambda n: n / 2",
     "d.py:12: error [kernel cost]: ops= of kernel 'scale_n' counts 512.0 operations for its "
     "calls with n=1024\n"
     "  limit: a whole number >= 0 per call\n"
     "  found: 512.0\n"
     "  d.py:18: the call\n"
     "  fix: return one call's arithmetic as an int (a multiply-accumulate is 2): // where / "
     "gives a float, int(...) around a product of floats"),
    ("lambda n: 16 - n",
     "d.py:12: error [kernel cost]: ops= of kernel 'scale_n' counts -1008 operations for its "
     "calls with n=1024\n"
     "  limit: a whole number >= 0 per call\n"
     "  found: -1008\n"
     "  d.py:18: the call\n"
     "  fix: return one call's arithmetic as an int (a multiply-accumulate is 2): // where / "
     "gives a float, int(...) around a product of floats"),
    ("lambda: 5",
     "d.py:12: error [kernel cost]: ops= of kernel 'scale_n' cannot be called with 1 "
     "argument(s): too many positional arguments\n"
     "  limit: 1 positional argument(s) (the kernel's scalars in order: n)\n"
     "  found: <lambda>()\n"
     "  fix: make it take 1 argument(s)")])
def test_a_count_that_is_not_a_whole_number_is_refused(design_file: DesignFile, ops: str,
                                                       message: str) -> None:
    path = _scale_n(design_file, ops, cycles="100")
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == message


def test_a_count_that_raises_is_the_users_error_at_its_line(design_file: DesignFile) -> None:
    path = _scale_n(design_file, "lambda n: n // 0", cycles="100")
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value).splitlines()[0] == (
        "d.py:12: error [python error]: ZeroDivisionError: integer division or modulo by zero "
        "(while running ops= of kernel 'scale_n' with n=1024)")


def test_ops_a_function_needs_a_scalar(design_file: DesignFile) -> None:
    path = _scale_n(design_file, "lambda: 5", cycles="100", calls="k(s, t)")
    path.write_text(path.read_text().replace(',\n                      scalar("n", i32)', ""))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:9: error [kernel cost]: kernel 'scale_n' has ops= a function, but no scalar "
        "argument to call it with\n"
        "  limit: ops= a number, or a function of the call's scalar arguments (the work of a "
        "call that varies with them)\n"
        "  found: ops=<lambda>, no scalar(...) in args\n"
        "  fix: give ops= as a whole number per call: every call of a kernel without scalars "
        "does the same work")


# -- the peak of each operand type ----------------------------------------------------------------

def test_the_peaks_of_every_element_type() -> None:
    """f32 is emulated with bf16 multiplies (UG1603) and i32 with 16-bit ones (AM020): neither
    is held to i8's peak any more; u8 multiplies as i8 does."""
    for device, peaks in (("npu1", {"i8": 256, "u8": 256, "i16": 64, "i32": 16, "bf16": 128,
                                    "f32": 128}),
                          ("npu2", {"i8": 512, "u8": 512, "i16": 128, "i32": 32, "bf16": 256,
                                    "f32": 256})):
        target = get_target(device)
        assert {t: target.peak_macs(t) for t in peaks} == peaks, device
        # f32 never beats bf16, whose products emulate it
        assert target.peak_macs("f32") == target.peak_macs("bf16")


MM = '''
from aiedsl import Tensor, TA, TB, TC, design, fifo, herd, runtime
from aiedsl.kernels import buffer, declare

M = K = N = 32

def ref(a, b, c):
    c[...] += a.astype("float64") @ b.astype("float64")

@design(device="npu1_1col")
def d(A: Tensor[M, K, TA], B: Tensor[K, N, TB], C: Tensor[M, N, TC]):
    k = declare("mm_32", source="mm.cc", entry="mm<32, 32, 32>",
                args=[buffer("a", Tensor[M, K, TA]), buffer("b", Tensor[K, N, TB]),
                      buffer("c", Tensor[M, N, TC], "inout")],
                reference=ref, ops=2 * M * K * N, cycles=CYCLES, cost="-")
    a, b = fifo(Tensor[M, K, TA], name="a"), fifo(Tensor[K, N, TB], name="b")
    c = fifo(Tensor[M, N, TC], name="c")

    @herd()
    def core():
        with a.consume() as x, b.consume() as y, c.produce() as z:
            k(x, y, z)

    with runtime() as rt:
        rt.fill(a, A)
        rt.fill(b, B)
        rt.drain(c, C)
'''


def _mm(design_file: DesignFile, ta: str, tb: str, tc: str, cycles: int) -> Path:
    text = (MM.replace("TA", ta).replace("TB", tb).replace("TC", tc)
            .replace("CYCLES", str(cycles)))
    path = design_file(text)
    (path.parent / "mm.cc").write_text("template <unsigned M, unsigned K, unsigned N>\n"
                                       "void mm(const void *a, const void *b, void *c) {}\n")
    return path


@pytest.mark.parametrize("cycles", [255, 256])
def test_an_f32_kernel_is_held_to_bf16s_peak(design_file: DesignFile, cycles: int) -> None:
    """An f32 matmul was held to i8's peak (no f32 in the model), and passed at four times
    what the core can do: 256 cycles (128 MACs a cycle, bf16's peak) is the most it does."""
    path = _mm(design_file, "f32", "f32", "f32", cycles)
    if cycles == 256:
        check_design(load_design(path).ir)
        return
    assert _error(path) == (
        "d.py:11: error [kernel cost]: kernel 'mm_32' declares 65,536 operations per call in "
        "255 cycles\n"
        "  limit: at most 256 per cycle (npu1_1col's f32 peak of 128 MACs per cycle, the type "
        "of its operands, emulated with bf16 multiplies; a MAC counting 2)\n"
        "  found: 258 per cycle\n"
        "  fix: count ops as one call's arithmetic (a multiply-accumulate is 2) and cycles as its "
        "time")


@pytest.mark.parametrize("cycles", [63, 64])
def test_a_kernel_of_two_operand_types_is_held_to_the_larger_peak(design_file: DesignFile,
                                                                  cycles: int) -> None:
    """An i16 by i8 matmul had no operand type and was held to the largest of any; it is held
    to the larger of its own types' peaks (i8's: it may multiply i8 by i8), which the i16 x i8
    mode itself (128 MACs a cycle on npu1) does not exceed."""
    path = _mm(design_file, "i16", "i8", "i32", cycles * 2)
    if cycles == 64:
        check_design(load_design(path).ir)
        return
    assert _error(path).splitlines()[:3] == [
        "d.py:11: error [kernel cost]: kernel 'mm_32' declares 65,536 operations per call in "
        "126 cycles",
        "  limit: at most 512 per cycle (npu1_1col's i8 peak of 256 MACs per cycle, the largest "
        "of its operand types' (i16, i8): it may multiply i8 values by each other; a MAC "
        "counting 2)",
        "  found: 521 per cycle"]


@pytest.mark.parametrize("cycles", [127, 128])
def test_cycles_below_what_the_kernel_stores_are_refused(design_file: DesignFile,
                                                        cycles: int) -> None:
    """A kernel tuner declared cycles=1 for a kernel writing 1 KB and left out ops=: check and
    sim passed, and the run was timed by it. A 32x32 i32 "out" tile is 4,096 B, 128 of an npu1
    core's 32-byte stores. (Its "inout" form may update the tile in part: not held to it.)"""
    path = _mm(design_file, "i8", "i8", "i32", cycles)
    text = path.read_text().replace("ops=2 * M * K * N, ", "")
    path.write_text(text.replace('"inout"', '"out"'))
    if cycles == 128:
        check_design(load_design(path).ir)
        return
    assert _error(path) == (
        "d.py:11: error [kernel cost]: kernel 'mm_32' declares 127 cycles per call, but storing "
        "what it writes ('c': 4,096 B) takes at least 128\n"
        "  limit: at least 128 cycles: 4,096 B over the 32 bytes a core of npu1_1col stores a "
        "cycle (one 256-bit vector store)\n"
        "  found: cycles=127\n"
        "  fix: declare cycles= of at least 128, or leave it out for aiedsl kernel profile to "
        "estimate it from the C++; a kernel that writes only part of its buffer takes the size "
        "as a scalar argument")
    path.write_text(text)  # "inout": a histogram's bins, a ring buffer's slot
    check_design(load_design(path).ir)
