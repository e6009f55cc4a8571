"""Kernels on the host: the library's C++ against its numpy references, a wrong kernel caught,
the host AIE API header's bf16 rounding and its coverage errors, the cost model against the
published single-core figures, and the simulator running the real C++."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Callable

import ml_dtypes
import numpy as np
import pytest

from aiedsl.kernels.text import kernel_text
from aiedsl.errors import DesignError
from aiedsl.kernels import library
from aiedsl.kernels.samples import samples
from aiedsl.kernels.cost import estimate
from aiedsl.kernels.cases import KernelCase
from aiedsl.kernels.host import native
from aiedsl.kernels.host_check import check_kernel
from aiedsl.loader import load_design
from tests.command_line import run_command, run_process

DesignFile = Callable[..., Path]
ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: str, cwd: Path = ROOT, timeout: float | None = None,
         **env: str) -> subprocess.CompletedProcess:
    """``aiedsl ARGS`` with a wide terminal and the system's PATH alone: in this process, or,
    given a ``timeout`` (a command that may hang), in a process of its own."""
    env = {"COLUMNS": "300", "PATH": "/usr/bin:/bin", "HOME": str(Path.home()), **env}
    if timeout is not None:
        return run_process(*args, cwd=cwd, env=env, timeout=timeout)
    return run_command(*args, cwd=cwd, env=env)


def test_every_library_kernel_matches_its_reference() -> None:
    """``aiedsl kernel test --all``: every kernel at several sizes, both device families."""
    r = _cli("kernel", "test", "--all")
    assert r.returncode == 0, r.stdout + r.stderr
    n = len(samples())
    assert n >= 50
    assert f"{n} of {n} kernels match their references" in r.stdout
    assert "FAIL" not in r.stdout
    for symbol in ("matmul_bf16_f32_64x64x64_4x8x4", "matmul_bf16_f32_64x64x64_4x8x8",
                   "matmul_i8_i32_64x232x64_4x8x8", "matmul_i8_i32_64x232x64_8x8x8",
                   "matmul_i16_i32_64x64x64_4x4x4", "matmul_i16_i32_64x64x64_4x4x8",
                   "matmul_bf16_bf16_32x56x32_4x8x4", "matmul_bf16_bf16_32x56x32_4x8x8",
                   "matmul_i8_i8_16x72x32_4x8x8_shift9", "matmul_i8_i8_16x72x32_8x8x8_shift9",
                   "relu_bf16_1024", "reduce_sum_i16_8x256", "reduce_max_bf16_8x256",
                   "scale_i16_1024", "add_i32_256", "zero_bf16_2048", "passthrough_i16_64"):
        assert f"PASS {symbol}." in r.stdout, symbol


def test_kernel_file_tests_the_library_kernels_made_from_it() -> None:
    r = _cli("kernel", "test", "kernels_cpp/scale.cc")
    assert r.returncode == 0
    assert r.stdout.splitlines()[:2] == [
        "PASS scale_i16_32.dst: exact (integers must match exactly)",
        "PASS scale_i16_1024.dst: exact (integers must match exactly)"]


WRONG = '''
    import numpy as np
    from aiedsl import Tensor, design, fifo, herd, i32, runtime
    from aiedsl.kernels import buffer, declare

    def copy_ref(src, dst):
        dst[...] = src

    @design(device="npu1_1col")
    def d(X: Tensor[64, i32], Y: Tensor[64, i32]):
        k = declare("copy_i32_64", source="bad_copy.cc", entry="bad_copy",
                    args=[buffer("src", Tensor[64, i32]), buffer("dst", Tensor[64, i32], "out")],
                    reference=copy_ref, cycles=20, cost="-")
        a = fifo(Tensor[64, i32], name="a")
        b = fifo(Tensor[64, i32], name="b")

        @herd()
        def core():
            with a.consume() as s, b.produce() as t:
                k(s, t)

        with runtime() as rt:
            rt.fill(a, X)
            rt.drain(b, Y)

    @d.reference
    def reference(X):
        return X
    '''

BAD_COPY = '''
#include <aie_api/aie.hpp>
#include <stdint.h>
void bad_copy(const int32_t *src, int32_t *dst) {
  for (unsigned i = 0; i < 64; i += 16) {
    aie::vector<int32_t, 16> v = aie::load_v<16>(src + i);
    if (i == 32) v[5] = v[5] + 1;  // the bug: element 37 is off by one
    aie::store_v(dst + i, v);
  }
}
'''


def test_a_wrong_kernel_fails_with_its_worst_element(design_file: DesignFile) -> None:
    path = design_file(WRONG)
    (path.parent / "bad_copy.cc").write_text(BAD_COPY)
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert lines[0].startswith("FAIL copy_i32_64.dst: worst element [37] got ")
    assert lines[0].endswith("integers must match exactly)")
    got, want = (int(x) for x in lines[0].split("got ")[1].split(" (")[0].split(" want "))
    assert got == want + 1
    assert lines[1] == "  wrong: 1 of 64 elements (1.5%), all within [37:38]"
    assert lines[2] == f"  inputs at [37]: 'src' {want} (--seed 0)"  # a copy: want is src
    assert lines[3].startswith("0 of 1 kernels match their references")
    # the same C++ inside the dataflow fails the design's check too
    r = _cli("sim", str(path), "--kernels", "native", cwd=path.parent)
    assert r.returncode == 1 and "FAIL Y: worst element [37]" in r.stdout


def test_an_api_name_the_host_header_lacks_is_reported(design_file: DesignFile) -> None:
    path = design_file(WRONG)
    (path.parent / "bad_copy.cc").write_text(BAD_COPY.replace(
        "aie::store_v(dst + i, v);", "aie::store_v(dst + i, aie::reverse(v));"))
    handle = load_design(path)
    k = handle.ir.kernels[0]
    with pytest.raises(DesignError) as excinfo:
        native(k, kernel_text(None, k))
    assert str(excinfo.value).splitlines()[0] == (
        "d.py:10: error [host kernel build]: copy_i32_64 uses aie::reverse, which aiedsl's "
        "host AIE API header does not cover, so it cannot be tested on the host")


RAW = '''
#include <aie_api/aie.hpp>
#include <stdint.h>
void bad_copy(const int32_t *src, int32_t *dst) {
  for (unsigned i = 0; i < 64; i += 16) {
    v16int32 v = *(const v16int32 *)(src + i);
    v16acc64 acc = mul_elem_16_2(v, undef_v16int32());
    *(v16int32 *)(dst + i) = srs(acc, 0);
  }
}
'''


def test_a_raw_intrinsic_the_host_header_lacks_is_named(design_file: DesignFile) -> None:
    from aiedsl.kernels.host import HOST_INCLUDE

    path = design_file(WRONG)
    (path.parent / "bad_copy.cc").write_text(RAW)
    k = load_design(path).ir.kernels[0]
    with pytest.raises(DesignError) as excinfo:
        native(k, kernel_text(None, k))
    assert excinfo.value.message == (
        "copy_i32_64 uses mul_elem_16_2, srs and undef_v16int32, raw AIE2 intrinsics that "
        "aiedsl's host AIE API header does not model, so it cannot be tested on the host")
    assert excinfo.value.fix == (
        "write them with the AIE API (the host header covers the AIE API names listed at the "
        f"top of {HOST_INCLUDE / 'aie_api' / 'aie.hpp'}), or test the kernel on an NPU "
        "(aiedsl run DESIGN --target npu)")
    # the command line says the same, once, without a traceback: kernel test and the native
    # simulation build the C++ alike
    for command in (["kernel", "test", str(path)], ["sim", str(path), "--kernels", "native"]):
        r = _cli(*command, cwd=path.parent)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert r.stderr.splitlines()[0] == (
            "d.py:10: error [host kernel build]: copy_i32_64 uses mul_elem_16_2, srs and "
            "undef_v16int32, raw AIE2 intrinsics that aiedsl's host AIE API header does not "
            "model, so it cannot be tested on the host"), command


def test_one_intrinsic_and_one_api_name_are_both_named(design_file: DesignFile) -> None:
    path = design_file(WRONG)
    (path.parent / "bad_copy.cc").write_text(RAW.replace(
        "srs(acc, 0)", "aie::reverse(v)").replace("mul_elem_16_2(v, undef_v16int32())",
                                                  "mul_elem_16_2(v, v)"))
    k = load_design(path).ir.kernels[0]
    with pytest.raises(DesignError) as excinfo:
        native(k, kernel_text(None, k))
    assert excinfo.value.message == (
        "copy_i32_64 uses aie::reverse, which aiedsl's host AIE API header does not cover; and "
        "mul_elem_16_2, a raw AIE2 intrinsic that aiedsl's host AIE API header does not model, "
        "so it cannot be tested on the host")
    assert excinfo.value.fix.startswith("write it with the AIE API (")


def test_a_member_the_header_lacks_is_named_as_its_function_is(design_file: DesignFile
                                                                ) -> None:
    """v.unpack() and s.pack<int16_t>(), the member forms of aie::unpack and aie::pack, gave
    g++'s raw "has no member named" and blamed the kernel whose object the file built (a
    tester's second function in the same file); they are named as the functions are, with
    the function they are in."""
    path = design_file(WRONG)
    (path.parent / "bad_copy.cc").write_text(BAD_COPY + '''
void widen(const int8_t *a, int8_t *out) {
  aie::vector<int16_t, 32> w = aie::load_v<32>(a).unpack();
  aie::store_v(out, w.pack<int8_t>());
}
''')
    k = load_design(path).ir.kernels[0]
    with pytest.raises(DesignError) as excinfo:
        native(k, kernel_text(None, k))
    assert excinfo.value.message == (
        "bad_copy.cc does not compile on the host, so copy_i32_64 cannot be tested there: its "
        "function widen uses aie::vector's member pack() and aie::vector's member unpack(), "
        "which aiedsl's host AIE API header does not cover")
    assert excinfo.value.fix.startswith("write them with the AIE API names the host header "
                                        "covers")


def test_a_kernel_that_does_not_build_stops_no_other_kernels_test(design_file: DesignFile
                                                                    ) -> None:
    """One kernel's C++ the host header cannot build (a missing AIE API name) stopped `kernel
    test` for every kernel of the design (a tester): it is said, the others are tested, and the
    command exits 2, as a design error does."""
    decl = '        a = fifo(Tensor[64, i32], name="a")'
    good = ('        good = declare("good_i32_64", source="good_copy.cc", entry="good_copy",\n'
            '                       args=[buffer("src", Tensor[64, i32]),\n'
            '                             buffer("dst", Tensor[64, i32], "out")],\n'
            '                       reference=copy_ref, cycles=20, cost="-")\n')
    assert WRONG.count(decl) == 1
    path = design_file(WRONG.replace(decl, good + decl).replace(
        "                k(s, t)", "                k(s, t)\n                good(s, t)"))
    (path.parent / "bad_copy.cc").write_text(RAW)
    (path.parent / "good_copy.cc").write_text(BAD_COPY.replace("bad_copy", "good_copy").replace(
        "    if (i == 32) v[5] = v[5] + 1;  // the bug: element 37 is off by one\n", ""))
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.splitlines()[0].startswith(
        "d.py:10: error [host kernel build]: copy_i32_64 uses mul_elem_16_2, srs and "
        "undef_v16int32, raw AIE2 intrinsics"), r.stderr
    assert r.stdout.splitlines()[0] == (
        "PASS good_i32_64.dst: exact (integers must match exactly)"), r.stdout
    assert r.stdout.splitlines()[-1].startswith(
        "1 of 2 kernels match their references; 1 did not build for the host (copy_i32_64: "
        "said above) ("), r.stdout


def test_two_kernels_of_one_file_that_does_not_build_say_it_once(design_file: DesignFile
                                                                     ) -> None:
    """Two kernels declared from one C++ file with a typo printed the same compiler error
    twice, under each declaration's line (an IRON user's find): the message names both."""
    decl = '        a = fifo(Tensor[64, i32], name="a")'
    twin = ('        twin = declare("twin_i32_64", source="bad_copy.cc", entry="bad_copy",\n'
            '                       args=[buffer("src", Tensor[64, i32]),\n'
            '                             buffer("dst", Tensor[64, i32], "out")],\n'
            '                       reference=copy_ref, cycles=20, cost="-")\n')
    path = design_file(WRONG.replace(decl, twin + decl).replace(
        "                k(s, t)", "                k(s, t)\n                twin(s, t)"))
    (path.parent / "bad_copy.cc").write_text(BAD_COPY.replace("aie::store_v(dst + i, v);",
                                                              "aie::store_v(dst1 + i, v);"))
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.count("error [host kernel build]") == 1, r.stderr
    assert r.stderr.count("'dst1' was not declared") == 1, r.stderr
    assert "copy_i32_64 and twin_i32_64" in r.stderr.splitlines()[0], r.stderr
    assert r.stdout.splitlines()[-1].startswith(
        "0 of 2 kernels match their references; 2 did not build for the host (copy_i32_64, "
        "twin_i32_64: said above) ("), r.stdout


def test_a_name_of_the_kernels_own_is_not_blamed_on_the_header(design_file: DesignFile
                                                               ) -> None:
    # an undeclared helper or a typo is the kernel's mistake, not a missing intrinsic
    path = design_file(WRONG)
    (path.parent / "bad_copy.cc").write_text(BAD_COPY.replace(
        "aie::store_v(dst + i, v);", "aie::store_v(dst + i, upsample_row(v));"))
    k = load_design(path).ir.kernels[0]
    with pytest.raises(DesignError) as excinfo:
        native(k, kernel_text(None, k))
    assert excinfo.value.message == "copy_i32_64 does not compile on the host"
    assert "upsample_row" in (excinfo.value.found or "")


def test_a_vector_size_the_api_lacks_is_a_build_error_naming_it(design_file: DesignFile
                                                                ) -> None:
    """`aie::vector<int32_t, 12>` compiled and passed: the AIE API has no such vector."""
    path = design_file(WRONG)
    (path.parent / "bad_copy.cc").write_text(BAD_COPY.replace(
        "aie::vector<int32_t, 16> v = aie::load_v<16>(src + i);",
        "aie::vector<int32_t, 12> v = aie::load_v<12>(src + i);"))
    k = load_design(path).ir.kernels[0]
    with pytest.raises(DesignError) as excinfo:
        native(k, kernel_text(None, k))
    assert excinfo.value.message == (
        "copy_i32_64 uses aie::vector<int, 12>, which the AIE API does not have: the AIE API "
        "has vectors of a power-of-two number of lanes and at least 128 bits (128, 256, 512, "
        "1024 bits, or more as several registers)")
    assert excinfo.value.fix == ("use a power-of-two number of lanes of at least 128 bits (4 "
                                 "int32, 8 int16 or bfloat16, 16 int8 ...)")
    assert "bad_copy.cc:6:" in (excinfo.value.found or "")  # the kernel's line, in the chain
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert r.returncode == 2 and r.stderr.startswith(
        "d.py:10: error [host kernel build]: copy_i32_64 uses aie::vector<int, 12>, "), r.stderr


@pytest.mark.parametrize("name, intrinsic", [
    ("mac_elem_16_2", True), ("mul_4x8_8x4", True), ("ups_to_v32acc32", True), ("srs", True),
    ("lsrs", True), ("undef_v16int32", True), ("v16cint16", True), ("shuffle", True),
    ("T32_16x16", True), ("get_ss_int", True), ("broadcast_to_v16cint16", True),
    ("my_helper", False), ("upsample", False), ("mul_add", False), ("conv2int8", False),
    ("broadcast_row", False), ("selector", False), ("src", False),
])
def test_what_counts_as_an_aie_intrinsic(name: str, intrinsic: bool) -> None:
    from aiedsl.kernels.host_errors import INTRINSIC

    assert bool(INTRINSIC.fullmatch(name)) is intrinsic


def test_an_intrinsic_in_a_file_of_several_kernels_is_the_files_not_each_kernels() -> None:
    """A tester's: "casc_put_256 and casc_get_i32_256 uses get_scd_v16acc32", though only the
    get kernel called it: one file, built once for both."""
    from aiedsl.kernels.host_errors import explain

    stderr = "k.cc:3:10: error: 'get_scd_v16acc32' was not declared in this scope\n"
    message, _ = explain(stderr, "casc_put_256 and casc_get_i32_256", "aie.hpp")
    assert message == ("the C++ of casc_put_256 and casc_get_i32_256 uses get_scd_v16acc32, a "
                       "raw AIE2 intrinsic that aiedsl's host AIE API header does not model, so "
                       "it cannot be tested on the host")


def test_host_bfloat16_rounds_to_nearest_even(design_file: DesignFile) -> None:
    """float -> bfloat16 in the host header agrees with ml_dtypes (round to nearest, ties to
    even) on ties, near-ties, signs, tiny and huge values."""
    path = design_file(WRONG.replace("Tensor[64, i32]", "Tensor[64, f32]")
                       .replace("X: Tensor[64, f32], Y: Tensor[64, f32]",
                                "X: Tensor[64, f32], Y: Tensor[64, bf16]")
                       .replace('buffer("dst", Tensor[64, f32], "out")',
                                'buffer("dst", Tensor[64, bf16], "out")')
                       .replace("i32, runtime", "i32, f32, bf16, runtime"))
    (path.parent / "bad_copy.cc").write_text('''
#include <aie_api/aie.hpp>
void bad_copy(const float *src, bfloat16 *dst) {
  const aie::rounding_mode old = aie::get_rounding();  // the core rounds the casts by it
  aie::set_rounding(aie::rounding_mode::conv_even);
  for (unsigned i = 0; i < 64; ++i) dst[i] = bfloat16(src[i]);
  aie::set_rounding(old);
}
''')
    k = load_design(path).ir.kernels[0]
    bits = np.array([0x3F808000, 0x3F818000, 0x3F807FFF, 0x3F808001, 0xBF808000, 0x00000001,
                     0x7F7FFFFF, 0x3F800000], dtype=np.uint32)
    src = np.zeros(64, dtype=np.float32)
    src[:8] = bits.view(np.float32)
    dst = np.zeros(64, dtype=ml_dtypes.bfloat16)
    native(k, kernel_text(None, k))(src, dst)
    want = src.astype(ml_dtypes.bfloat16)
    assert dst.view(np.uint16).tolist() == want.view(np.uint16).tolist()
    assert dst.view(np.uint16)[:2].tolist() == [0x3F80, 0x3F82]  # ties go to even


def test_simulator_runs_the_gemm_with_its_real_kernels() -> None:
    r = _cli("sim", "designs/gemm_bf16.py", "--kernels", "native")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "kernels built from their C++ for the host" in r.stdout
    assert "PASS C:" in r.stdout


def test_simulator_runs_the_npu2_gemm_with_the_4x8x8_kernel() -> None:
    from aiedsl.sim import simulate

    handle = load_design(ROOT / "designs" / "gemm_bf16.py",
                         {"COLS": "8", "M": "256", "K": "128", "N": "512"}, "npu2")
    assert [k.symbol for k in handle.ir.kernels][1] == "matmul_bf16_f32_64x64x64_4x8x8"
    result = simulate(handle, kernels="native")
    assert result.passed, [c.line() for c in result.checks]


def test_cost_is_calibrated_to_the_published_single_core_figures() -> None:
    assert estimate("matmul", "64x104x64", "bf16", "npu1")[3:] == [
        "  112.2 MACs per cycle of the core's peak 128: 88%",
        "  published: 112.6 MACs per cycle (Taka et al. arXiv 2512.13282, npu1); the model is "
        "0.3% below it"]
    assert estimate("matmul", "64x232x64", "i8", "npu1")[3:] == [
        "  232.7 MACs per cycle of the core's peak 256: 91%",
        "  published: 233 MACs per cycle (Taka et al. arXiv 2512.13282, npu1); the model is "
        "0.1% below it"]


def test_cost_says_when_model_and_measurement_disagree(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(library.PUBLISHED, ("npu1", "bf16", (64, 64, 64)), (128.0, "a paper"))
    assert estimate("matmul", "64x64x64", "bf16", "npu1")[-1] == (
        "  published: 128 MACs per cycle (a paper); the model is 18.6% below it: MORE THAN 15% "
        "APART, trust the measurement")


def test_cost_of_other_kernels_and_npu2() -> None:
    assert estimate("relu", "4096", "bf16", "npu1")[0] == (
        "relu_bf16_4096 on npu1: 270 cycles per call (0.27 us at 1 GHz)")
    assert estimate("reduce_sum", "8x256", "i16", "npu1")[0].startswith(
        "reduce_sum_i16_8x256 on npu1: 142 cycles per call")
    npu2 = estimate("matmul", "64x64x64", "bf16", "npu2")
    assert npu2[0].startswith("matmul_bf16_f32_64x64x64_4x8x8 on npu2:")
    assert npu2[4].startswith("  not modelled: the two conversions to bfp16")
    assert "not calibrated for this device" in npu2[5]


def test_library_kernels_reject_shapes_their_mmul_cannot_tile() -> None:
    with pytest.raises(DesignError) as excinfo:
        library.matmul(64, 64, 24, "i8")
    assert "matmul tile 64x64x24 does not fit the 4x8x8 mmul with 2x2 blocking" in str(
        excinfo.value)
    with pytest.raises(DesignError):
        library.reduce_sum(4, 64, "bf16")


def test_kernel_test_of_a_single_kernel_object() -> None:
    k = library.matmul(16, 32, 16, "i16", device="npu2")
    case = KernelCase(k.ir, kernel_text(None, k.ir), k.run_reference, {})
    result = check_kernel(case, seed=3)
    assert result.passed
    assert result.lines == [
        "PASS matmul_i16_i32_16x32x16_4x4x8.c: exact (integers must match exactly)"]


# -- mistakes a kernel declaration can hide until the toolchain runs ------------------------------

def test_a_kernel_source_that_does_not_exist_is_a_design_error(design_file: DesignFile) -> None:
    path = design_file(WRONG)  # bad_copy.cc is not written
    r = _cli("check", str(path), cwd=path.parent)
    assert r.returncode == 2
    assert r.stderr == (
        "d.py:10: error [kernel source]: kernel 'copy_i32_64' names bad_copy.cc, found neither "
        "beside d.py nor in aiedsl's kernels_cpp/\n"
        "  found: bad_copy.cc\n"
        "  fix: put the C++ file next to the design, or fix source=\n")


def test_an_entry_the_source_does_not_define_is_a_design_error(design_file: DesignFile) -> None:
    path = design_file(WRONG.replace('entry="bad_copy"', 'entry="good_copy<64>"'))
    (path.parent / "bad_copy.cc").write_text(BAD_COPY)
    # kernel test showed g++'s error on the generated file instead
    for command in (("check",), ("sim",), ("kernel", "test"), ("kernel", "profile")):
        r = _cli(*command, str(path), cwd=path.parent)
        assert r.returncode == 2
        assert r.stderr == (
            "d.py:10: error [kernel entry]: kernel 'copy_i32_64' calls good_copy() "
            "(entry=\"good_copy<64>\"), which bad_copy.cc does not declare\n"
            "  found: good_copy<64>\n"
            "  fix: name a function bad_copy.cc defines in entry=, or add good_copy to it\n")


def test_an_entry_one_letter_off_is_offered_the_name_it_misspells(
        design_file: DesignFile) -> None:
    """entry="bad_cpy" names the file's bad_copy in the fix (a kernel author's tester), which
    good_copy above, another name, does not."""
    path = design_file(WRONG.replace('entry="bad_copy"', 'entry="bad_cpy"'))
    (path.parent / "bad_copy.cc").write_text(BAD_COPY)
    r = _cli("check", str(path), cwd=path.parent)
    assert (r.returncode, r.stderr) == (2, (
        "d.py:10: error [kernel entry]: kernel 'copy_i32_64' calls bad_cpy() "
        "(entry=\"bad_cpy\"), which bad_copy.cc does not declare\n"
        "  found: bad_cpy\n"
        "  fix: name a function bad_copy.cc defines in entry= (bad_copy?), or add bad_cpy to "
        "it\n"))


UNCALLED = WRONG.replace('''    @design(device="npu1_1col")''',
                         '''    other = declare("copy_i32_64b", source="bad_copy.cc", entry="bad_copy",
                    args=[buffer("src", Tensor[64, i32]), buffer("n", Tensor[64, i32]),
                          buffer("dst", Tensor[64, i32], "out")],
                    reference=lambda src, n, dst: copy_ref(src, dst), cycles=20, cost="-")

    @design(device="npu1_1col")''')


def test_check_checks_the_kernels_no_core_calls_yet(design_file: DesignFile) -> None:
    """A kernel declared at the file's top level that no core calls is run alone by kernel
    test, which refused its declaration (three arguments for a C++ of two) while check said
    all checks pass (a kernel author's tester). check says it now, as kernel test does; sim,
    which builds and runs only what the cores call, does not."""
    path = design_file(UNCALLED)
    (path.parent / "bad_copy.cc").write_text(BAD_COPY)
    want = ("d.py:8: error [kernel signature]: kernel 'copy_i32_64b' declares 3 arguments, "
            "and bad_copy.cc's bad_copy (its line 4) takes 2")
    for command in (("check",), ("kernel", "test")):
        r = _cli(*command, str(path), cwd=path.parent)
        assert r.returncode == 2, command
        assert r.stderr.splitlines()[0] == want, command
    r = _cli("sim", str(path), cwd=path.parent)
    assert r.returncode == 0, r.stderr
    # one made for another architecture is left, as kernel test leaves it
    path.write_text(path.read_text().replace('copy_ref(src, dst), cycles=20, cost="-")',
                                             'copy_ref(src, dst), cycles=20, cost="-", '
                                             'arch="aie2p")'))
    r = _cli("check", str(path), cwd=path.parent)
    assert r.returncode == 0, r.stderr


def test_entry_functions_are_found_as_declarations_only() -> None:
    from aiedsl.kernels.source import defines_function, entry_function

    src = ("// void ghost(int *a);\n/* void spirit(int *a); */\n"
           "template <typename T, unsigned N>\nvoid zero(T *__restrict c) { helper(c); }\n"
           "static inline int32_t *ns::wide(int x);\n")
    assert entry_function("ns::zero<int32_t, 64>") == "zero"
    assert defines_function(src, "zero") and defines_function(src, "wide")
    assert not defines_function(src, "ghost") and not defines_function(src, "spirit")
    assert not defines_function(src, "helper")  # called, not declared


NPU1_BLOCKS_ON_NPU2 = ("dims_to_stream=block_dims(k, n, s, t)", "dims_to_stream=block_dims(k, n, 8, 4)")


def test_a_layout_written_for_npu1_is_caught_by_check_on_npu2(design_file: DesignFile) -> None:
    """B packed in npu1's 8x4 blocks; npu2's bf16 mmul (4x8x8) reads 8x8 blocks."""
    text = (ROOT / "designs" / "gemm_bf16.py").read_text().replace(*NPU1_BLOCKS_ON_NPU2)
    path = design_file(text, "gemm_bf16.py")
    assert _cli("check", str(path), cwd=path.parent).returncode == 0  # right on npu1
    r = _cli("check", str(path), "--device", "npu2", "-D", "COLS=8", cwd=path.parent)
    assert r.returncode == 2
    assert r.stderr == (
        "gemm_bf16.py:43: error [kernel layout]: kernel 'matmul_bf16_f32_64x64x64_4x8x8' reads "
        "'b' (64x64xbf16) in 8x8 blocks, but fifo 'b_0' delivers it as 8x4 blocks\n"
        "  limit: 8x8 blocks of the 64x64 tile, blocks row-major\n"
        "  found: dims_to_stream [(8, 512), (16, 4), (8, 64), (4, 1)] at the memtile\n"
        "  gemm_bf16.py:55: the call of 'matmul_bf16_f32_64x64x64_4x8x8'\n"
        "  with -D COLS=8 --device npu2, given on the command line\n"
        "  fix: pack it with dims_to_stream=block_dims(64, 64, 8, 8); take the block shape from "
        "the kernel (mm.ir.params) so it follows the device's mmul\n")


def test_swapped_matmul_operands_are_named_as_swapped(design_file: DesignFile) -> None:
    """mm(tb, ta, acc): each fifo's layout is the other parameter's. Packing each as the fix for
    its own parameter would pass check and compute B @ A (the simulator: 99.9% wrong)."""
    text = (ROOT / "designs" / "gemm_bf16.py").read_text().replace(
        "mm(ta, tb, acc)", "mm(tb, ta, acc)")
    path = design_file(text, "gemm_bf16.py")
    r = _cli("check", str(path), cwd=path.parent)
    assert r.returncode == 2
    assert r.stderr == (
        "gemm_bf16.py:43: error [kernel layout]: kernel 'matmul_bf16_f32_64x64x64_4x8x4' reads "
        "'a' (64x64xbf16) in 4x8 blocks, but fifo 'b_0' delivers it as 8x4 blocks\n"
        "  limit: 4x8 blocks of the 64x64 tile, blocks row-major\n"
        "  found: dims_to_stream [(8, 512), (16, 4), (8, 64), (4, 1)] at the memtile\n"
        "  gemm_bf16.py:55: the call of 'matmul_bf16_f32_64x64x64_4x8x4'\n"
        "  fix: swap the call's arguments 'a' and 'b': fifo 'b_0' delivers the blocks 'b' reads, "
        "and fifo 'a_0' those 'a' reads\n")


def test_the_shipped_gemm_layouts_follow_the_device() -> None:
    for device, cols in (("npu1", "4"), ("npu2", "8")):
        r = _cli("check", "designs/gemm_bf16.py", "--device", device, "-D", f"COLS={cols}")
        assert r.returncode == 0, r.stderr


def test_a_cxx_that_names_no_compiler_says_so(monkeypatch: pytest.MonkeyPatch,
                                              in_root: Path) -> None:
    """CXX=/nonexistent said "no host C++ compiler (g++) on PATH ... (or set CXX)", though
    CXX was set (a tester). A compiler that is missing is a tool missing (exit 4), said at no
    design line: the design is not wrong (a tester's: exit 2, at the kernel's declaration)."""
    from aiedsl.errors import ToolchainError
    from aiedsl.sim import simulate

    monkeypatch.setenv("CXX", "/nonexistent")
    with pytest.raises(ToolchainError) as e:
        simulate(load_design("designs/passthrough.py"), kernels="native")
    assert e.value.exit_code == 4
    assert str(e.value) == (
        "error [host compiler]: CXX=/nonexistent names no C++ compiler that is found, so kernel "
        "passthrough_i32_1024 cannot be built for the host\n"
        "  limit: CXX: one compiler command, a path or a name on PATH, without flags\n"
        "  found: CXX=/nonexistent\n"
        "  fix: set CXX to the host's C++ compiler (CXX=g++, CXX=/usr/bin/g++-13), or unset it "
        "for g++")


def test_a_compile_error_points_at_the_users_file_and_line(design_file: DesignFile) -> None:
    path = design_file(WRONG)
    (path.parent / "bad_copy.cc").write_text(BAD_COPY.replace("v[5] + 1;", "v[5] + undeclared;"))
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert r.returncode == 2
    assert r.stderr.startswith("d.py:10: error [host kernel build]: copy_i32_64 does not compile "
                               "on the host\n")
    assert "bad_copy.cc:7:" in r.stderr and "'undeclared' was not declared" in r.stderr
    found = r.stderr.split("found:")[1].split("fix:")[0]
    assert "tmp" not in found
    # the excerpt's gutter and the "In function" line name the user's file too (they said
    # line 11 of the generated file, and kernels/copy_i32_64.cc, which the user cannot open)
    assert found.startswith(" bad_copy.cc: In function 'void bad_copy(const int32_t*, "
                            "int32_t*)':\n"), found
    assert ("    7 |     if (i == 32) v[5] = v[5] + undeclared;  // the bug: element 37 is off "
            "by one") in found.splitlines(), found


SUM_ROWS = '''
    import numpy as np
    from aiedsl import Tensor, design, fifo, herd, i32, runtime
    from aiedsl.kernels import buffer, declare, scalar

    def sum_ref(src, dst, input_size):
        dst[0] = src[:input_size].sum()

    @design(device="npu1_1col")
    def d(X: Tensor[1024, i32], Y: Tensor[16, i32]):
        k = declare("sum_i32_1024", source="sum.cc", entry="sum_i32",
                    args=[buffer("src", Tensor[1024, i32]), buffer("dst", Tensor[16, i32], "out"),
                          scalar("input_size", i32)],
                    reference=sum_ref, cycles=100, cost="-")
        a = fifo(Tensor[1024, i32], name="a")
        b = fifo(Tensor[16, i32], name="b")

        @herd()
        def core():
            with a.consume() as s, b.produce() as t:
                k(s, t, 1024)

        with runtime() as rt:
            rt.fill(a, X)
            rt.drain(b, Y)

    @d.reference
    def reference(X):
        out = np.zeros(16, dtype=np.int32)
        out[0] = X.sum()
        return out
    '''

SUM_CC = '''
#include <stdint.h>
void sum_i32(const int32_t *src, int32_t *dst, int32_t input_size) {
  int32_t s = 0;
  for (int32_t i = 0; i < input_size; ++i) s += src[i];
  dst[0] = s;
}
'''


def test_kernel_test_passes_the_scalars_of_the_designs_call(design_file: DesignFile) -> None:
    path = design_file(SUM_ROWS)
    (path.parent / "sum.cc").write_text(SUM_CC.replace("s += src[i]", "s += src[i] * (i < 1)"))
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert r.returncode == 1, r.stdout  # with input_size=1 this wrong kernel would pass
    assert r.stdout.startswith("FAIL sum_i32_1024.dst: worst element [0] got ")
    (path.parent / "sum.cc").write_text(SUM_CC)
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_scalar_without_a_value_is_an_error_naming_it(design_file: DesignFile) -> None:
    from aiedsl.kernels.cases import design_cases

    path = design_file(SUM_ROWS)
    (path.parent / "sum.cc").write_text(SUM_CC)
    case = design_cases(load_design(path))[0]
    with pytest.raises(DesignError) as excinfo:
        check_kernel(KernelCase(case.kernel, case.cpp, case.reference, {}))
    assert str(excinfo.value) == (
        "d.py:10: error [kernel test]: scalar argument 'input_size' of kernel 'sum_i32_1024' has "
        "no value to test it with\n"
        "  found: input_size: i32\n"
        "  fix: call the kernel in a design and test the design, or give "
        "params={'input_size': ...} in its declaration")


OUT_OF_BOUNDS = {
    "writes past the end": ("for (unsigned i = 0; i <= 64; i += 16)\n"
                            "    aie::store_v(dst + i, aie::load_v<16>(src + (i & 63)));",
                            "FAIL copy_i32_64: wrote 64 byte(s) past the end of buffer 'dst'"),
    "reads past the end": ("for (unsigned i = 0; i < 64; i += 16)\n"  # aligned to its elements
                           "    aie::store_v(dst + i, aie::load_unaligned_v<16>(src + i + 1));",
                           "FAIL copy_i32_64: 'dst' depends on memory outside the kernel's "
                           "buffers: the C++ reads before or past 'src' (a run with other bytes "
                           "around it disagrees)"),
    "writes over the guard": ("for (unsigned i = 0; i < 64 + 256; ++i) dst[i] = 0x11223344;",
                              "FAIL copy_i32_64: wrote at least 1024 bytes past the end of "
                              "buffer 'dst' (the guard's size: all of it)"),  # it may go on
    "copies one past the end": ("for (unsigned i = 0; i <= 64; ++i) dst[i] = src[i];",
                                "FAIL copy_i32_64: wrote 4 byte(s) past the end of buffer "
                                "'dst'"),  # src's guard bytes into dst's: each has its own
    "writes its input": ("for (unsigned i = 0; i < 64; i += 16) {\n"
                         "    aie::store_v(dst + i, aie::load_v<16>(src + i));\n"
                         "    const_cast<int32_t *>(src)[i] = 0;\n  }",
                         "FAIL copy_i32_64: wrote input buffer 'src' (declared \"in\": the DMA "
                         "may be refilling or another core reading it; a kernel that "
                         "updates it in place declares it \"inout\")"),
    "crashes": ("for (unsigned i = 0; i < 64; i += 16)\n"
                "    aie::store_v(dst + i * 100000000u, aie::load_v<16>(src + i));",
                "FAIL copy_i32_64: crashed (SIGSEGV): it reads or writes outside its buffers, "
                "or fails an assertion"),
}


@pytest.mark.parametrize("bug", sorted(OUT_OF_BOUNDS))
def test_kernel_test_finds_what_a_kernel_does_outside_its_buffers(
        design_file: DesignFile, bug: str) -> None:
    """An off-by-one store passed kernel test and then crashed the native simulation with heap
    corruption; a read past the end passed on whatever followed the array; a wild store
    killed the command with no word. The C++ now runs in a child, between guard bytes."""
    body, line = OUT_OF_BOUNDS[bug]
    path = design_file(WRONG)
    (path.parent / "bad_copy.cc").write_text(
        "#include <aie_api/aie.hpp>\n#include <stdint.h>\n"
        "void bad_copy(const int32_t *src, int32_t *dst) {\n  " + body + "\n}\n")
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert r.returncode == 1, r.stdout + r.stderr
    assert line in r.stdout.splitlines(), r.stdout


UNZEROED = '''
#include <aie_api/aie.hpp>
#include <stdint.h>
void bad_copy(const int32_t *src, int32_t *dst) {
  for (unsigned i = 0; i < 64; i += 16) {
    aie::accum<acc64, 16> acc%s;
    acc = aie::mac(acc, aie::load_v<16>(src + i), 1);
    aie::store_v(dst + i, acc.to_vector<int32_t>(0));
  }
}
'''


@pytest.mark.parametrize("init", ["", " = aie::zeros<acc64, 16>()"])
def test_an_accumulator_never_zeroed_fails(design_file: DesignFile, init: str) -> None:
    """A kernel that forgot aie::zeros passed: the header zeroed every accumulator. The AIE API
    leaves one undefined; an integer lane now starts with 0x80 in every byte."""
    path = design_file(WRONG)
    (path.parent / "bad_copy.cc").write_text(UNZEROED % init)
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    lines = r.stdout.splitlines()
    if init:
        assert r.returncode == 0, r.stdout + r.stderr
        assert lines[0] == "PASS copy_i32_64.dst: exact (integers must match exactly)"
        return
    assert r.returncode == 1, r.stdout + r.stderr
    assert lines[0].startswith("FAIL copy_i32_64.dst: worst element [")
    assert lines[0].endswith("(|error| 2139062144; integers must match exactly)")  # 0x80808080


_ALIGNMENT_RULE = (
    "aie::load_v and aie::store_v take a pointer aligned to the vector (16 bytes for a 128-bit "
    "vector, 32 for larger ones on AIE2; the AIE API asserts \"Insufficient alignment\", and "
    "the core drops the low address bits, so it reads or writes other elements)")
_ALIGNMENT_FIX = (
    "use aie::load_unaligned_v / aie::store_unaligned_v where a pointer is aligned only to its "
    "elements, or align the pointer (alignas(aie::vector_decl_align) for a local array)")
_POINTER_RULE = (
    "a vector read or written through a pointer to its type (*(v16int32 *)p) takes a pointer "
    "aligned to the vector, as aie::load_v and aie::store_v do (16 bytes for a 128-bit vector, "
    "32 for larger ones on AIE2): the core drops the low address bits, so it reads or writes "
    "other elements")
ALIGNMENT = {
    # the copy is right on the host and on the core alike (both drop the same low bits), but
    # the AIE API asserts on it: the rule fails, not the data
    "load_v and store_v 16 bytes off": (
        "aie::store_v(dst + 4, aie::load_v<16>(src + 4));",
        "FAIL copy_i32_64: read 'src' at byte 16 (at bad_copy.cc:5) with aie::load_v<16>, not "
        "a multiple of 32 bytes (and 1 more misaligned access): "
        f"{_ALIGNMENT_RULE}; {_ALIGNMENT_FIX}"),
    "load_unaligned_v claiming more alignment than it has": (
        "aie::store_unaligned_v(dst + 1, aie::load_unaligned_v<16>(src + 1, 4));",
        "FAIL copy_i32_64: read 'src' at byte 4 (at bad_copy.cc:5) with "
        "aie::load_unaligned_v<16>(p, 4), not a multiple of 16 bytes: aie::load_unaligned_v(p, n) and aie::store_unaligned_v(p, v, n) "
        "take a pointer aligned to n elements, n a power of two (the AIE API asserts "
        "\"Insufficient alignment\"); pass the n the pointer is aligned to (1 when it is "
        "aligned only to its elements)"),
    "the unaligned forms": (
        "aie::store_unaligned_v(dst + 1, aie::load_unaligned_v<16>(src + 1));\n"
        "  aie::store_unaligned_v(dst + 4, aie::load_unaligned_v<16>(src + 4, 4), 4);", None),
    "a 128-bit load_v 16 bytes off": (  # 16-byte aligned: all a 128-bit vector needs
        "aie::store_v(dst + 4, aie::load_v<4>(src + 4));", None),
    # mlir-aie's relu.cc and bf16_exp.cc read and write through pointers to the native vector
    # types: the same loads and stores as load_v's, which passed misaligned
    "a load through a v16int32 pointer 4 bytes off": (
        "*(v16int32 *)(dst + 16) = *(v16int32 *)(src + 1);",
        "FAIL copy_i32_64: read 'src' at byte 4 through a v16int32 pointer, not a multiple of "
        f"32 bytes: {_POINTER_RULE}; {_ALIGNMENT_FIX}"),
    "a store through a v16int32 pointer 16 bytes off": (
        "v16int32 x = *(const v16int32 *)(src + 8);\n  *(v16int32 *)(dst + 4) = x;",
        "FAIL copy_i32_64: wrote 'dst' at byte 16 through a v16int32 pointer, not a multiple of "
        f"32 bytes: {_POINTER_RULE}; {_ALIGNMENT_FIX}"),
    "copies through aligned v16int32 pointers": (
        "v16int32 *out = (v16int32 *)dst;\n"
        "  for (unsigned i = 0; i < 4; ++i) { v16int32 x = ((const v16int32 *)src)[i]; "
        "out[i] = x; }", None),
    # a reviewer's local array was aligned or not as the host's stack fell (FAIL or PASS from
    # run to run); a local array is not checked: the host's stack says nothing of the core's
    "a local array 16 bytes off 32": (
        "alignas(32) int32_t tmp[32] = {};\n"
        "  aie::store_v(tmp + 4, aie::load_v<16>(tmp + 4));\n  dst[0] = src[0] + tmp[4];", None),
}


@pytest.mark.parametrize("access", sorted(ALIGNMENT))
def test_kernel_test_refuses_a_misaligned_vector_load_or_store(
        design_file: DesignFile, access: str) -> None:
    """`aie::load_v<16>(in + j + 1)` on int32 passed: the AIE API needs load_v's pointer
    aligned to the vector (a core drops the low address bits)."""
    body, line = ALIGNMENT[access]
    path = design_file(WRONG)
    (path.parent / "bad_copy.cc").write_text(
        "#include <aie_api/aie.hpp>\n#include <stdint.h>\n"
        "void bad_copy(const int32_t *src, int32_t *dst) {\n"
        "  for (unsigned i = 0; i < 64; ++i) dst[i] = src[i];\n  " + body + "\n}\n")
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    if line is None:
        assert r.returncode == 0, r.stdout + r.stderr
        return
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == line


def test_a_misaligned_vector_load_stops_the_native_simulation(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch) -> None:
    from aiedsl.sim import simulate

    path = _faulty_design(design_file, "for (unsigned i = 0; i < 64; ++i) dst[i] = src[i];\n"
                                       "  aie::store_v(dst + 4, aie::load_v<16>(src + 4));")
    message = (
        "d.py:11: error [native kernel]: kernel 'copy_i32_64' read 'src' at byte 16 (at "
        "bad_copy.cc:5) with aie::load_v<16>, not a multiple of 32 bytes (and 1 more "
        "misaligned access) in call 1 of it by core[0,0]; the simulation stopped there\n"
        f"  limit: {_ALIGNMENT_RULE}\n"
        "  found: 2 misaligned vector accesses in the call; the first: read 'src' at byte 16 "
        "(at bad_copy.cc:5) with aie::load_v<16>, not a multiple of 32 bytes\n"
        "  d.py:21: the call (core[0,0])\n"
        f"  fix: {_ALIGNMENT_FIX}")
    r = _cli("sim", str(path), "--kernels", "native", cwd=path.parent)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr == message + "\n"
    # the same in this process, with the forked worker and without it (no os.fork: Windows)
    for fork in (True, False):
        if not fork:
            monkeypatch.delattr(__import__("os"), "fork")
        with pytest.raises(DesignError) as excinfo:
            simulate(load_design(path), kernels="native")
        assert str(excinfo.value) == message


def test_a_misaligned_load_through_a_vector_pointer_stops_the_native_simulation(
        design_file: DesignFile) -> None:
    """The tester's shift kernel, `*(v16int32 *)(out + i) = *(v16int32 *)(in + i + 1)`, ran
    through `aiedsl sim --kernels native` with no word of its 4-byte offset."""
    from aiedsl.sim import simulate

    path = _faulty_design(design_file, "for (unsigned i = 0; i < 48; i += 16)\n"
                                       "    *(v16int32 *)(dst + i) = *(v16int32 *)(src + i + 1);")
    message = (
        "d.py:11: error [native kernel]: kernel 'copy_i32_64' read 'src' at byte 4 through a "
        "v16int32 pointer, not a multiple of 32 bytes (and 2 more misaligned accesses) in call 1 "
        "of it by core[0,0]; the simulation stopped there\n"
        f"  limit: {_POINTER_RULE}\n"
        "  found: 3 misaligned vector accesses in the call; the first: read 'src' at byte 4 "
        "through a v16int32 pointer, not a multiple of 32 bytes\n"
        "  d.py:21: the call (core[0,0])\n"
        f"  fix: {_ALIGNMENT_FIX}")
    with pytest.raises(DesignError) as excinfo:
        simulate(load_design(path), kernels="native")
    assert str(excinfo.value) == message


def test_a_kernel_reference_that_raises_is_a_design_error(design_file: DesignFile) -> None:
    path = design_file(WRONG.replace("dst[...] = src", "dst[...] = src.reshape(3, -1)"))
    (path.parent / "bad_copy.cc").write_text(BAD_COPY)
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith("d.py:6: error [python error]: ValueError: cannot reshape"), \
        r.stderr


REFERENCE_MISTAKES = {
    "returns its result": (
        "return src.copy()",
        "d.py:5: error [kernel reference]: the reference of kernel 'copy_i32_64' returned a "
        "value instead of writing its output in place\n"
        "  limit: a kernel reference writes its results into its \"out\" and \"inout\" arrays "
        "in place and returns None\n"
        "  found: copy_ref(src, dst) returned ndarray of shape (64,) int32\n"
        "  d.py:10: the kernel's declaration\n"
        "  fix: write into the output array in place, e.g. dst[...] = ... (`dst = ...` only "
        "rebinds the name; a returned value is dropped)\n"),
    "rebinds its output": (
        "dst = src * 1",
        "d.py:5: error [kernel reference]: the reference of kernel 'copy_i32_64' left its "
        "\"out\" buffer 'dst' unwritten\n"
        "  limit: a kernel reference writes its results into its \"out\" and \"inout\" arrays "
        "in place and returns None\n"
        "  found: every element of 'dst' is still the poison it was given (-2147483648)\n"
        "  d.py:10: the kernel's declaration\n"
        "  fix: write into the output array in place, e.g. dst[...] = ... (`dst = ...` only "
        "rebinds the name; a returned value is dropped)\n"),
    "writes its input": (
        "src *= 1; dst[...] = src",
        "d.py:6: error [kernel reference]: the reference of kernel 'copy_i32_64' writes into a "
        "read-only array, as its \"in\" buffers ('src') are to it: numpy says output array is "
        "read-only\n"
        "  limit: a reference reads its \"in\" buffers only, as the kernel declares them: a "
        "write would change what every later reader of that element sees\n"
        "  found: copy_ref(src, dst) writes its input\n"
        "  fix: compute into the \"out\" buffer (dst[...] = src * 2, not src *= 2), or declare "
        "the buffer \"inout\" if the C++ writes it too\n"),
    "exits": (
        "import sys; sys.exit(0)",
        "d.py:6: error [python error]: sys.exit(0) called while running the reference of kernel "
        "'copy_i32_64'\n"
        "  fix: return from the function instead: sys.exit would end aiedsl itself\n"),
    "raises a BaseException": (
        "raise KeyboardInterrupt.__base__('stop')",
        "d.py:6: error [python error]: BaseException: stop (while running the reference of "
        "kernel 'copy_i32_64')\n"
        "  fix: fix the code at this line; AIEDSL_TRACEBACK=1 shows the whole traceback\n"),
}


@pytest.mark.parametrize("mistake", sorted(REFERENCE_MISTAKES))
def test_a_kernel_reference_that_does_not_write_its_output_is_a_design_error(
        design_file: DesignFile, mistake: str) -> None:
    """`return src * 2` in a kernel reference was a C++ FAIL with a meaningless want in kernel
    test and a bare FAIL in the simulator; sys.exit(0) ended kernel test silently with exit
    0. Each is now a design error at the reference, in kernel test and the simulator alike."""
    body, message = REFERENCE_MISTAKES[mistake]
    path = design_file(WRONG.replace("dst[...] = src", body))
    (path.parent / "bad_copy.cc").write_text(BAD_COPY)
    for command in (("kernel", "test"), ("sim",)):
        r = _cli(*command, str(path), cwd=path.parent)
        assert (r.returncode, r.stdout, r.stderr) == (2, "", message), command


LOOPED = WRONG.replace("X: Tensor[64, i32], Y: Tensor[64, i32]",
                       "X: Tensor[256, i32], Y: Tensor[256, i32]").replace(
    "import numpy as np\n", "import numpy as np\n    from aiedsl import loop\n").replace(
    '''            with a.consume() as s, b.produce() as t:
                k(s, t)''', '''            for _ in loop(4):
                with a.consume() as s, b.produce() as t:
                    k(s, t)''')
"""WRONG with four calls of the kernel, one per 64-element tile of X."""

NATIVE_FAULTS = {
    "null pointer on the third call": (
        "static unsigned calls = 0;\n"
        "  for (unsigned i = 0; i < 64; i += 16)\n"
        "    aie::store_v(dst + i, aie::load_v<16>(src + i));\n"
        "  if (++calls == 3) *(volatile int32_t *)nullptr = 1;",
        "d.py:11: error [native kernel]: kernel 'copy_i32_64' crashed with SIGSEGV in call 3 of "
        "it by core[0,0]; the simulation stopped there\n"
        "  limit: a kernel reads and writes only its own buffers\n"
        "  found: signal SIGSEGV (Segmentation fault) in the process running the kernel's C++\n"
        "  d.py:21: the call (core[0,0])\n"
        "  fix: run `aiedsl kernel test d.py`: it runs each kernel alone between guard bytes and "
        "says what it writes outside its buffers (a read outside them, when it changes the "
        "result)"),
    "one element past the output": (
        "for (unsigned i = 0; i < 64; i += 16)\n"
        "    aie::store_v(dst + i, aie::load_v<16>(src + i));\n"
        "  dst[64] = 7;",
        "d.py:11: error [native kernel]: kernel 'copy_i32_64' wrote 4 byte(s) past the end of "
        "buffer 'dst' in call 1 of it by core[0,0]; the simulation stopped there\n"
        "  limit: a kernel writes only inside its buffers (the 1024 bytes before and after each "
        "are checked after every call)\n"
        "  found: 'dst' holds 256 bytes; bytes 256 to 259 from its start changed (element 64)\n"
        "  d.py:21: the call (core[0,0])\n"
        "  fix: run `aiedsl kernel test d.py`: it runs each kernel alone between guard bytes and "
        "says what it writes outside its buffers (a read outside them, when it changes the "
        "result)"),
    "far past the output": (  # a reviewer's: 1,920 bytes past were "1024 byte(s)"
        "for (unsigned i = 0; i < 64 + 480; ++i) dst[i] = 0x11223344;",
        "d.py:11: error [native kernel]: kernel 'copy_i32_64' wrote at least 1024 bytes past "
        "the end of buffer 'dst' (the guard's size: all of it) in call 1 of it by core[0,0]; "
        "the simulation stopped there\n"
        "  limit: a kernel writes only inside its buffers (the 1024 bytes before and after each "
        "are checked after every call)\n"
        "  found: 'dst' holds 256 bytes; bytes 256 to 1279 from its start changed (elements 64 "
        "to 319)\n"
        "  d.py:21: the call (core[0,0])\n"
        "  fix: run `aiedsl kernel test d.py`: it runs each kernel alone between guard bytes and "
        "says what it writes outside its buffers (a read outside them, when it changes the "
        "result)"),
    "the input's guard copied past the output": (  # each buffer's guard has its own value
        "for (unsigned i = 0; i <= 64; ++i) dst[i] = src[i];",
        "d.py:11: error [native kernel]: kernel 'copy_i32_64' wrote 4 byte(s) past the end of "
        "buffer 'dst' in call 1 of it by core[0,0]; the simulation stopped there\n"
        "  limit: a kernel writes only inside its buffers (the 1024 bytes before and after each "
        "are checked after every call)\n"
        "  found: 'dst' holds 256 bytes; bytes 256 to 259 from its start changed (element 64)\n"
        "  d.py:21: the call (core[0,0])\n"
        "  fix: run `aiedsl kernel test d.py`: it runs each kernel alone between guard bytes and "
        "says what it writes outside its buffers (a read outside them, when it changes the "
        "result)"),
    "a vector before the input": (
        "for (unsigned i = 0; i < 64; i += 16)\n"
        "    aie::store_v(dst + i, aie::load_v<16>(src + i));\n"
        "  aie::store_v(const_cast<int32_t *>(src) - 16, aie::load_v<16>(src));",
        "d.py:11: error [native kernel]: kernel 'copy_i32_64' wrote 64 byte(s) before buffer "
        "'src' in call 1 of it by core[0,0]; the simulation stopped there\n"
        "  limit: a kernel writes only inside its buffers (the 1024 bytes before and after each "
        "are checked after every call)\n"
        "  found: 'src' holds 256 bytes; bytes -64 to -1 from its start changed (elements -16 "
        "to -1)\n"
        "  d.py:21: the call (core[0,0])\n"
        "  fix: run `aiedsl kernel test d.py`: it runs each kernel alone between guard bytes and "
        "says what it writes outside its buffers (a read outside them, when it changes the "
        "result)"),
    "a write to its input": (  # kernel test said so; the simulation used the value written
        "for (unsigned i = 0; i < 64; i += 16)\n"
        "    aie::store_v(dst + i, aie::load_v<16>(src + i));\n"
        "  const_cast<int32_t *>(src)[3] = ~src[3];",
        "d.py:11: error [native kernel]: kernel 'copy_i32_64' wrote input buffer 'src' (declared "
        "\"in\": the DMA may be refilling or another core reading it; a kernel that updates "
        "it in place declares it \"inout\") in call 1 of it by "
        "core[0,0]; the simulation stopped there\n"
        "  limit: a kernel does not write a buffer it declares \"in\" (checked after every "
        "call)\n"
        "  found: 'src' holds 256 bytes; bytes 12 to 15 from its start changed (element 3)\n"
        "  d.py:21: the call (core[0,0])\n"
        "  fix: declare 'src' \"inout\" if the kernel updates it in place (\"out\" if it only "
        "writes it), or make the C++ leave it alone; `aiedsl kernel test d.py` says the same"),
}


def _faulty_design(design_file: DesignFile, body: str) -> Path:
    path = design_file(LOOPED)
    (path.parent / "bad_copy.cc").write_text(
        "#include <aie_api/aie.hpp>\n#include <stdint.h>\n"
        "void bad_copy(const int32_t *src, int32_t *dst) {\n  " + body + "\n}\n")
    return path


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="native calls run in a "
                    "forked child only where there is os.fork")
@pytest.mark.parametrize("bug", sorted(NATIVE_FAULTS))
def test_a_native_kernel_that_crashes_or_writes_outside_is_a_design_error(
        design_file: DesignFile, bug: str) -> None:
    """A wild store killed `aiedsl sim --kernels native` (exit 139, "Segmentation fault", no
    word of the kernel) and a store past a buffer corrupted the simulator's memory. The calls
    now run in a child, between guard bytes: the command ends with the design error, and so
    does simulate() in this process, which survives it."""
    from aiedsl.sim import simulate

    body, message = NATIVE_FAULTS[bug]
    path = _faulty_design(design_file, body)
    r = _cli("sim", str(path), "--kernels", "native", cwd=path.parent)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr == message + "\n"
    with pytest.raises(DesignError) as excinfo:
        simulate(load_design(path), kernels="native")
    assert str(excinfo.value) == message


def test_kernel_test_fails_a_kernel_that_leaves_the_cores_modes_changed(
        design_file: DesignFile) -> None:
    """A kernel that set saturation and did not restore it passed kernel test, --full-range
    and profile, and the library's i16 mul called after it on the core then saturated its
    products (a library contributor's find). The modes are the core's: the call must leave
    them as it found them."""
    path = _faulty_design(design_file, "aie::set_saturation(aie::saturation_mode::saturate);\n"
                          "  for (unsigned i = 0; i < 64; ++i) dst[i] = src[i];")
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == (
        "FAIL copy_i32_64: left the core's saturation mode saturate (it found none): the "
        "kernels called after it on the core run under it; restore it before returning (auto "
        "old = aie::get_saturation(); ... aie::set_saturation(old))")


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="native calls run in a "
                    "forked child only where there is os.fork")
def test_the_kernel_test_a_native_fault_suggests_is_quoted(design_file: DesignFile) -> None:
    """The fix's command took the design's path as it was: a space split it in two."""
    from aiedsl.sim import simulate

    path = design_file(LOOPED, "my design.py")
    (path.parent / "bad_copy.cc").write_text(
        "#include <aie_api/aie.hpp>\n#include <stdint.h>\n"
        "void bad_copy(const int32_t *src, int32_t *dst) {\n  "
        + NATIVE_FAULTS["a write to its input"][0] + "\n}\n")
    with pytest.raises(DesignError) as excinfo:
        simulate(load_design(path), kernels="native")
    assert excinfo.value.fix == (
        "declare 'src' \"inout\" if the kernel updates it in place (\"out\" if it only writes "
        "it), or make the C++ leave it alone; `aiedsl kernel test 'my design.py'` says the same")


NEVER_RETURNS = ("volatile unsigned step = 0;  // the bug: the loop never ends\n"
                 "  for (unsigned i = 0; i < 64; i += step)\n"
                 "    aie::store_v(dst + i, aie::load_v<16>(src + i));")


def _children() -> list[str]:
    """The processes this one started that are still there (Linux's /proc)."""
    me = str(__import__("os").getpid())
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if fields[1] == me:
            out.append(stat.parent.name)
    return out


@pytest.mark.skipif(not hasattr(__import__("os"), "fork") or not Path("/proc/self/stat").exists(),
                    reason="native calls run in a forked child only where there is os.fork; "
                    "its end is seen in Linux's /proc")
def test_a_kernel_that_never_returns_is_stopped_after_the_time_limit(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel whose loop never ended hung kernel test and the native simulation until
    Ctrl-C. Each call now has a time limit; the child running it is killed and reaped."""
    from aiedsl.kernels.cases import design_cases
    from aiedsl.sim import simulate

    path = _faulty_design(design_file, NEVER_RETURNS)
    r = _cli("sim", str(path), "--kernels", "native", cwd=path.parent, timeout=60,
             AIEDSL_KERNEL_TIMEOUT="0.5")  # without a limit it hangs: TimeoutExpired
    message = (
        "d.py:11: error [native kernel]: kernel 'copy_i32_64' did not return within 0.5 s in "
        "call 1 of it by core[0,0]; the simulation stopped there\n"
        "  limit: a kernel call returns within 0.5 s on the host (10 s or "
        "$AIEDSL_KERNEL_TIMEOUT, or 1 us per declared cycle if that is more)\n"
        "  found: still running after 0.5 s; the process running the kernel's C++ was killed\n"
        "  d.py:21: the call (core[0,0])\n"
        "  fix: a loop that never ends? check the kernel's loop bounds and steps (a step of 0, "
        "a counter that wraps before its bound); AIEDSL_KERNEL_TIMEOUT=SECONDS gives a slow "
        "kernel longer; `aiedsl kernel test d.py` runs each kernel alone")
    assert (r.returncode, r.stderr) == (2, message + "\n")
    r = _cli("kernel", "test", str(path), cwd=path.parent, timeout=60,
             AIEDSL_KERNEL_TIMEOUT="0.5")
    assert r.returncode == 1
    assert r.stdout.splitlines()[0] == (
        "FAIL copy_i32_64: did not return within 0.5 s (its process was killed): a loop that "
        "never ends? check the kernel's loop bounds and steps (a step of 0, a counter that "
        "wraps before its bound); AIEDSL_KERNEL_TIMEOUT=SECONDS gives a slow kernel longer")
    # in this process: the error, and no child left behind (killed and reaped)
    monkeypatch.setenv("AIEDSL_KERNEL_TIMEOUT", "0.5")
    handle = load_design(path)
    before = _children()
    with pytest.raises(DesignError) as excinfo:
        simulate(handle, kernels="native")
    assert str(excinfo.value) == message
    assert not check_kernel(design_cases(handle)[0]).passed
    assert _children() == before
    monkeypatch.setenv("AIEDSL_KERNEL_TIMEOUT", "soon")
    with pytest.raises(DesignError) as excinfo:
        check_kernel(design_cases(handle)[0])
    assert str(excinfo.value) == (
        "error [kernel time limit]: AIEDSL_KERNEL_TIMEOUT='soon'\n"
        "  limit: seconds per kernel call, more than 0 and below 1e6\n"
        "  found: soon\n"
        "  fix: set it to e.g. 60, or unset it for 10 s")


def test_the_time_limit_grows_with_the_declared_cycles(monkeypatch: pytest.MonkeyPatch) -> None:
    from aiedsl.kernels.faults import call_limit

    k = library.matmul(64, 64, 64, "bf16").ir
    monkeypatch.delenv("AIEDSL_KERNEL_TIMEOUT", raising=False)
    assert call_limit(k) == 10.0
    assert call_limit(k.model_copy(update={"cycles": 50_000_000})) == 50.0
    monkeypatch.setenv("AIEDSL_KERNEL_TIMEOUT", "60")
    assert call_limit(k) == 60.0


def test_native_results_are_the_same_in_the_child_as_in_process(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Outputs, timing, statistics and trace of a native simulation are those of the calls
    run in this process (what a system without os.fork still does)."""
    import json
    import os

    from aiedsl.sim import simulate

    handle = load_design(ROOT / "designs" / "gemm_bf16.py",
                         {"M": "128", "K": "128", "N": "256", "ROWS": "2", "COLS": "2"})
    child = simulate(handle, kernels="native", trace=str(tmp_path / "child.json"))
    monkeypatch.delattr(os, "fork")
    here = simulate(handle, kernels="native", trace=str(tmp_path / "here.json"))
    assert child.passed and here.passed
    assert all(np.array_equal(child.outputs[n], here.outputs[n]) for n in handle.outputs)
    assert child.timing == here.timing
    assert [c.line() for c in child.checks] == [c.line() for c in here.checks]
    assert child.machine.kernel_calls == here.machine.kernel_calls > 0
    assert json.loads((tmp_path / "child.json").read_text()) == \
        json.loads((tmp_path / "here.json").read_text())


def test_a_kernel_worker_stops_when_told_though_another_holds_its_pipe() -> None:
    """Two native simulations in two threads: the second worker's child, forked while the
    first's pipe was open, holds that pipe too, so the first child never saw its end and was
    killed after 5 s (a tester's run took 5.2 s instead of 0.3). The parent now says stop."""
    from aiedsl.kernels import matmul_cascade
    from aiedsl.kernels.worker import KernelWorker

    k = matmul_cascade(8, 8, 8, "put").ir
    first = KernelWorker([(k, lambda *args: None)], fork=True)
    second = KernelWorker([(k, lambda *args: None)], fork=True)
    try:
        first.close()
        assert first.status == 0  # it stopped itself: not killed
    finally:
        second.close()
    assert second.status == 0


def test_the_kernel_worker_raises_what_the_call_raised() -> None:
    """A host kernel's own error (a cascade kernel moving other than its declared words) comes
    back from the child as it would be raised in this process."""
    from aiedsl.kernels import matmul_cascade
    from aiedsl.kernels.worker import isolated

    k = matmul_cascade(8, 8, 8, "put").ir
    wrong = k.model_copy(update={"cascade_out": k.cascade_out.model_copy(
        update={"shape": (16, 8)})})
    a = np.zeros((8, 8), ml_dtypes.bfloat16)
    with isolated([(wrong, native(wrong, kernel_text(None, k)))]) as worker:
        assert worker is not None
        with pytest.raises(DesignError) as e:
            worker.call(0, [a, a, np.zeros((16, 8), np.float32)])
        assert e.value.rule == "kernel cascade" and e.value.loc == k.loc
        assert e.value.message == (
            "kernel 'matmul_cascade_put_bf16_f32_8x8x8_4x8x4' moves other cascade words than "
            "it declares: its C++ put 4 words in a call, where cascade_out=16x8xf32 is 8")
        assert not worker.dead  # an exception is an answer: the child serves on



def test_native_is_a_host_build_then_its_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    """native() is build_native() (the cached library and the aie_arch it was built for) then
    load_native(); its callable says which build it runs, and load_native alone runs that build
    as native's callable does (the kernel workers' server loads the simulating process's
    builds so, building nothing). A second build is the cached library, not compiled again."""
    from aiedsl import Tensor, i32
    from aiedsl.kernels import host, passthrough
    from aiedsl.kernels.host import HostBuild, build_native, load_native

    k = passthrough(Tensor[64, i32]).ir
    kt = kernel_text(None, k)
    build = build_native(k, kt, 20)
    assert isinstance(build, HostBuild) and build.aie_arch == 20 and build.path.is_file()
    other = build_native(k, kt, 21)  # another architecture: another library
    assert other.aie_arch == 21 and other.path != build.path
    fn = native(k, kt, 20)
    assert fn.build == build  # type: ignore[attr-defined]
    monkeypatch.setattr(host.subprocess, "run", None)  # no compiler runs from here on
    assert build_native(k, kt, 20) == build
    src = np.arange(64, dtype=np.int32)
    for run in (fn, load_native(k, build.path, build.aie_arch)):
        dst = np.zeros(64, np.int32)
        run(src, dst)
        assert dst.tolist() == src.tolist()


TO_BF16 = '''
    import ml_dtypes
    from aiedsl import Tensor, bf16, design, f32, fifo, herd, runtime
    from aiedsl.kernels import buffer, declare

    def to_bf16_ref(src, dst):
        dst[...] = src.astype(dst.dtype)

    @design(device="npu1_1col")
    def d(X: Tensor[64, f32], Y: Tensor[64, bf16]):
        k = declare("to_bf16_64", source="to_bf16.cc", entry="to_bf16",
                    args=[buffer("src", Tensor[64, f32]), buffer("dst", Tensor[64, bf16], "out")],
                    reference=to_bf16_ref, cycles=20, cost="-")
        a = fifo(Tensor[64, f32], name="a")
        b = fifo(Tensor[64, bf16], name="b")

        @herd()
        def core():
            with a.consume() as s, b.produce() as t:
                k(s, t)

        with runtime() as rt:
            rt.fill(a, X)
            rt.drain(b, Y)

    @d.reference
    def reference(X):
        return X.astype(ml_dtypes.bfloat16)
    '''

TO_BF16_CC = '''
#include <aie_api/aie.hpp>
void to_bf16(const float *src, bfloat16 *dst) {
%s
  for (unsigned i = 0; i < 64; i += 16) {
    aie::accum<accfloat, 16> acc;
    acc.from_vector(aie::load_v<16>(src + i));
    aie::store_v(dst + i, acc.to_vector<bfloat16>());
  }
%s
}
'''

_BF16_RULE = (
    "the core rounds a conversion from the accumulator to a vector (float to bfloat16 too) by "
    "its rounding mode, whose reset value, floor, truncates; the numpy reference rounds to "
    "nearest even, as only conv_even does (this header computes that whatever the mode, so the "
    "results here do not show the difference)")
_BF16_FIX = ("set aie::rounding_mode::conv_even for the call, and restore the previous mode, as "
             "mm.cc does")
_SET_MODE = ("  const aie::rounding_mode old = aie::get_rounding();\n"
             "  aie::set_rounding(aie::rounding_mode::conv_even);", "  aie::set_rounding(old);")
BF16_MODES = {
    # the header rounds to nearest even whatever the mode, so the data match: the rule fails
    "no mode set": (
        "", "",
        "FAIL to_bf16_64: converted to bfloat16 (aie::accum<accfloat>::to_vector<bfloat16>) "
        f"under rounding mode floor (and 3 more such conversions): {_BF16_RULE}; {_BF16_FIX}"),
    # to nearest too, but ties away from zero: not what the reference computes
    "symmetric_inf": (
        "  aie::set_rounding(aie::rounding_mode::symmetric_inf);", "",
        "FAIL to_bf16_64: converted to bfloat16 (aie::accum<accfloat>::to_vector<bfloat16>) "
        "under rounding mode symmetric_inf (and 3 more such conversions): "
        f"{_BF16_RULE}; {_BF16_FIX}"),
    # Peano compiles a scalar float -> bf16 to the same conversion (a run-time value, inexact)
    "a scalar cast after the mode is restored": (
        _SET_MODE[0], _SET_MODE[1] + "\n  dst[0] = (bfloat16)(src[0] * 3.0f);",
        "FAIL to_bf16_64: converted to bfloat16 (a float cast to bfloat16) under rounding mode "
        f"floor: {_BF16_RULE}; {_BF16_FIX}"),
    "conv_even set and restored": (
        *_SET_MODE,
        "PASS to_bf16_64.dst: exact, every element equal "
        "(allowed: tolerance 0.0078125 relative (one rounding per element))"),
}


@pytest.mark.parametrize("case", sorted(BF16_MODES))
def test_kernel_test_refuses_a_bf16_conversion_under_another_rounding_mode(
        design_file: DesignFile, case: str) -> None:
    """The bf16 library kernels narrowed accfloat to bf16 under the core's reset rounding mode
    (floor, a truncation) and passed against references that round to nearest even: the host
    header rounds to nearest even whatever the mode. It now records such a conversion."""
    before, after, line = BF16_MODES[case]
    path = design_file(TO_BF16)
    (path.parent / "to_bf16.cc").write_text(TO_BF16_CC % (before, after))
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    first = r.stdout.splitlines()[0]
    if line.startswith("PASS"):
        assert r.returncode == 0, r.stdout + r.stderr
        assert first == line  # to nearest even, as numpy: every element equal
    else:
        assert r.returncode == 1, r.stdout + r.stderr
        assert first == line


def test_a_bf16_conversion_under_another_rounding_mode_stops_the_native_simulation(
        design_file: DesignFile) -> None:
    path = design_file(TO_BF16)
    (path.parent / "to_bf16.cc").write_text(TO_BF16_CC % ("", ""))
    r = _cli("sim", str(path), "--kernels", "native", cwd=path.parent)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr == (
        "d.py:10: error [native kernel]: kernel 'to_bf16_64' converted to bfloat16 "
        "(aie::accum<accfloat>::to_vector<bfloat16>) under rounding mode floor (and 3 more such "
        "conversions) in call 1 of it by core[0,0]; the simulation stopped there\n"
        f"  limit: {_BF16_RULE}\n"
        "  found: 4 conversions to bfloat16 under a rounding mode other than conv_even in the "
        "call; the first: converted to bfloat16 (aie::accum<accfloat>::to_vector<bfloat16>) "
        "under rounding mode floor\n"
        "  d.py:19: the call (core[0,0])\n"
        f"  fix: {_BF16_FIX}\n")
    (path.parent / "to_bf16.cc").write_text(TO_BF16_CC % _SET_MODE)
    r = _cli("sim", str(path), "--kernels", "native", cwd=path.parent)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[1] == (
        "PASS Y: exact, every element equal "
        "(allowed: tolerance 0.0078125 relative (one rounding per element))")


def _bf16_library_cases() -> list:  # type: ignore[type-arg]
    from aiedsl.kernels.samples import library_cases

    return [c for c in library_cases() if c.kernel.cascade_in is None
            and c.kernel.cascade_out is None
            and any(a.kind == "buffer" and a.dtype == "bf16" for a in c.kernel.args)]


@pytest.mark.parametrize("case", _bf16_library_cases(), ids=lambda c: c.kernel.symbol)
def test_a_bf16_library_kernel_rounds_to_nearest_even_and_leaves_the_mode_as_it_was(
        case) -> None:  # type: ignore[no-untyped-def]
    """A tester modelled the bf16 library kernels on a core: they narrowed to bf16 under the
    reset rounding mode (floor), and rms_norm/layer_norm then failed their own check for every
    seed. Each now sets conv_even for the call and restores the mode it found: the rounding
    mode is the core's, shared with the kernels called before and after on it."""
    from aiedsl.kernels.cases import case_args

    k = case.kernel
    run = native(k, case.cpp, case.aie_arch)
    _, args = case_args(case, np.random.default_rng(0))
    ceil = 1  # aie::rounding_mode::ceil: neither the reset mode nor conv_even
    modes = [ceil, 0]  # the calling core's modes, given to the call and read back after it
    run(*args, modes=modes)  # a conversion under another mode than conv_even would raise
    assert modes == [ceil, 0]


def test_kernel_test_measures_a_whole_buffer_written_past_the_end(design_file: DesignFile) -> None:
    """A kernel compiled for twice its buffer (2048 elements on a 1024-element one) wrote 4 KB
    past its 1 KB guard into the heap: kernel test said only "crashed (SIGABRT)", with glibc's
    "corrupted size vs. prev_size" on stderr. A guard as large as the buffer takes it; the
    elements inside the buffer are said to match, not PASSed."""
    path = design_file(WRONG.replace("64", "1024"))
    (path.parent / "bad_copy.cc").write_text(
        "#include <stdint.h>\n"
        "void bad_copy(const int32_t *src, int32_t *dst) {\n"
        "  for (unsigned i = 0; i < 2048; ++i) dst[i] = i < 1024 ? src[i] : 7;\n}\n")
    r = _cli("kernel", "test", str(path), cwd=path.parent)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.splitlines()[:2] == [
        "FAIL copy_i32_1024: wrote at least 4096 bytes past the end of buffer 'dst' (the "
        "guard's size: all of it)",
        "  within its buffers, copy_i32_1024.dst: exact (integers must match exactly)"], r.stdout
    assert "corrupted" not in r.stderr
