"""npu2's bf16 matrix multiply on the bfp16 unit, as IRON builds it: the AIE API macro on AIE2P's
Peano and host compiles only, the bfp16ebs8 model (aiedsl/kernels/bfp16.py) against hand-worked
blocks, the host header's mmul against it bit for bit in every rounding mode, the library's
npu2 matmuls against their references, the GEMM's comparison and its allowance, and the profile
at the declared peak."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from aiedsl.bfp16_allowance import (Bfp16Product, bfp16_allowance, bfp16_product,
                                    element_allowance, product_difference)
from aiedsl.compare import compare
from aiedsl.ir.design import Design
from aiedsl.kernels import block, matmul, matmul_cascade, unblock
from aiedsl.kernels.bfp16 import (ROUNDING_MODES, bfp16_accumulate, quantize, round_by_mode,
                                  to_bfp16)
from aiedsl.kernels.cases import design_cases
from aiedsl.kernels.host import HOST_INCLUDE, native
from aiedsl.kernels.profile import profile_cases
from aiedsl.kernels.text import kernel_text
from aiedsl.loader import load_design
from aiedsl.output_checks import compare_outputs
from aiedsl.sim import simulate
from aiedsl.targets import get_target
from aiedsl.targets.kernel_arch import AIE_ARCH, BFP16_MMUL, arch_define_words
from aiedsl.toolchain.commands import kernel_compile_argv, shell_line

ROOT = Path(__file__).resolve().parents[1]
BF16 = ROOT / "designs" / "gemm_bf16.py"
CASCADE = ROOT / "designs" / "matmul_cascade.py"
BF16_NP = np.dtype(ml_dtypes.bfloat16)


def _q(values: list[float], rounding: str) -> tuple[list[int], list[int]]:
    m, e = quantize(np.array(values, np.float32), rounding=rounding)
    return m.tolist(), e.tolist()


# -- the define: AIE2P's compiles only ------------------------------------------------------------

def test_the_bfp16_macro_is_on_npu2s_peano_line_only() -> None:
    npu2 = shell_line(kernel_compile_argv(get_target("npu2"), "kernels/k.cc", "k.o")).split()
    npu1 = shell_line(kernel_compile_argv(get_target("npu1"), "kernels/k.cc", "k.o")).split()
    word = f"-D{BFP16_MMUL}"
    assert word == "-DAIE_API_EMULATE_BFLOAT16_MMUL_WITH_BFP16"
    assert npu2.count(word) == 1 and word not in npu1
    # after aiedsl's own defines, before the kernel's (none here) and -fstack-usage
    assert npu2[npu2.index(word) - 1] == "-D__AIE_API_AIE_ADF_HPP__"
    assert npu2[npu2.index(word) + 1] == "-fstack-usage"
    # the rest differs by the architecture only: the target, the runtime library's folder
    assert [w for w in npu2 if w != word][1:] == [
        w.replace("aie2-none", "aie2p-none").replace("/AIE2", "/AIE2P") for w in npu1][1:]


def test_every_npu2_device_compiles_with_it_and_every_npu1_without() -> None:
    from aiedsl.targets import DEVICES

    for name, t in DEVICES.items():
        assert t.kernel_defines == ([f"-D{BFP16_MMUL}"] if name.startswith("npu2") else []), name
        assert t.runs_bfp16("bf16", t.mmul_shapes["bf16"]) == name.startswith("npu2"), name
        assert not t.runs_bfp16("i8", t.mmul_shapes["i8"])


# -- the model, block by block ------------------------------------------------------------------

def test_the_block_keeps_its_largest_exponent_and_7_bits_of_it() -> None:
    # 3.0 has the block's largest exponent (128): the step is 2^(128 - 133) = 1/32
    assert _q([1.0, -1.0, 2.0, 0.5, -1.5, 3.0, 0.0, 0.25], "floor") == (
        [32, -32, 64, 16, -48, 96, 0, 8], [128])
    # the largest value's mantissa is 64..127 whatever its own bits
    m, e = _q([1.9921875, 1.0, 1.5, 1.75, 1.25, 1.125, 1.0625, 1.03125], "floor")
    assert (m, e) == ([127, 64, 96, 112, 80, 72, 68, 66], [127])


def test_a_small_element_is_flushed_and_a_negative_one_floors_to_minus_one_step() -> None:
    # 2^-10 is 2^-5 of a step of 2^-5 (block exponent 128): floor gives 0 for it and -1 for
    # its negative (floor rounds toward minus infinity), nearest gives 0 for both
    assert _q([2.0, 2.0 ** -10, -(2.0 ** -10), 0, 0, 0, 0, 0], "floor") == (
        [64, 0, -1, 0, 0, 0, 0, 0], [128])
    assert _q([2.0, 2.0 ** -10, -(2.0 ** -10), 0, 0, 0, 0, 0], "conv_even") == (
        [64, 0, 0, 0, 0, 0, 0, 0], [128])
    assert to_bfp16(np.array([2.0, -(2.0 ** -10)] + [0.0] * 6, np.float32)).tolist()[:2] == \
        [2.0, -(2.0 ** -5)]


def test_ties_go_by_the_rounding_mode() -> None:
    # block exponent 127 (1.x), step 2^-6: 1 + 2^-7 is 64.5 steps, 1 + 3 * 2^-7 is 65.5,
    # -(1 + 2^-7) is -64.5
    vals = [1 + 2.0 ** -7, 1 + 3 * 2.0 ** -7, -(1 + 2.0 ** -7), 1.0, 0, 0, 0, 0]
    assert _q(vals, "conv_even")[0][:4] == [64, 66, -64, 64]
    assert _q(vals, "conv_odd")[0][:4] == [65, 65, -65, 64]
    assert _q(vals, "floor")[0][:4] == [64, 65, -65, 64]
    assert _q(vals, "symmetric_inf")[0][:4] == [65, 66, -65, 64]
    assert _q(vals, "symmetric_zero")[0][:4] == [64, 65, -64, 64]
    assert _q(vals, "positive_inf")[0][:4] == [65, 66, -64, 64]


def test_a_block_of_zeros_and_negative_values() -> None:
    assert _q([0.0] * 8, "floor") == ([0] * 8, [0])
    assert _q([-0.0] * 8, "conv_even") == ([0] * 8, [0])
    assert _q([-1.0, -0.5, -0.25, -0.125, -2.0, -1.5, -0.75, -3.0], "floor") == (
        [-32, -16, -8, -4, -64, -48, -24, -96], [128])
    assert to_bfp16(np.array([-3.0, -1.0] + [0.0] * 6, np.float32)).tolist()[:2] == [-3.0, -1.0]


def test_a_value_rounding_past_127_is_saturated() -> None:
    # bf16 1.9921875 (mantissa all ones) is 127.5 steps of its own block: nearest even rounds it
    # to 128, past a signed byte: saturated to 127 (the model's choice, see bfp16.py); floor
    # never gets there, and -127.5 rounds to -128, which fits
    big = 1.9921875
    assert _q([big, 1.0, 0, 0, 0, 0, 0, 0], "conv_even") == ([127, 64, 0, 0, 0, 0, 0, 0], [127])
    assert _q([big, 1.0, 0, 0, 0, 0, 0, 0], "floor")[0][:2] == [127, 64]
    assert _q([-big, 1.0, 0, 0, 0, 0, 0, 0], "conv_even")[0][:2] == [-128, 64]


def test_a_block_with_an_infinity_or_nan_is_nan_and_the_others_are_not() -> None:
    x = np.array([1.0, np.inf] + [0.0] * 6 + [1.0, 2.0] + [0.0] * 6, np.float32)
    q = to_bfp16(x)
    assert np.isnan(q[:8]).all() and q[8:10].tolist() == [1.0, 2.0]


def test_a_value_rounding_past_127_may_renormalize_its_block_instead() -> None:
    """What the NPU does is not known: the other model moves the block to the next exponent
    and rounds it again there, and the comparison allows for either."""
    x = np.array([255.0, 3.0, 1.0, 0.0, -2.0, 0.0, 0.0, 0.0], np.float32)  # 255 = 127.5 steps
    m, e = quantize(x, rounding="conv_even", overflow="renormalize")
    assert (m.tolist(), e.tolist()) == ([64, 1, 0, 0, 0, 0, 0, 0], [135])  # -0.5: to even
    m, e = quantize(x, rounding="conv_even")  # the model's own: saturated
    assert (m.tolist(), e.tolist()) == ([127, 2, 0, 0, -1, 0, 0, 0], [134])
    with pytest.raises(ValueError, match="one of saturate, renormalize"):
        quantize(x, overflow="wrap")
    # a block at the largest finite exponent has none above it: it saturates (was NaN)
    top = np.array([np.float32(2.0 ** 127 * 1.9999)] + [0.0] * 7, np.float32)
    assert to_bfp16(top, rounding="conv_even", overflow="renormalize")[0] == 127 * 2.0 ** 121


def test_the_allowance_covers_either_thing_a_mantissa_past_127_does() -> None:
    """Pixels (0..255, a quarter 255) round past 127 in most blocks: an NPU that renormalizes
    failed up to a third of the elements against the model's allowance (a tester's find)."""
    rng = np.random.default_rng(0)
    a = rng.integers(0, 256, (64, 64)).astype(np.float32)
    a[rng.random(a.shape) < 0.25] = 255
    b = rng.standard_normal((64, 32)).astype(BF16_NP).astype(np.float32)
    allowed = element_allowance(a, b, "conv_even")
    for overflow in ("saturate", "renormalize"):
        got = (to_bfp16(a, axis=1, rounding="conv_even", overflow=overflow)
               @ to_bfp16(b, axis=0, rounding="conv_even", overflow=overflow))
        assert (np.abs(got - a @ b) <= allowed * (1 + 1e-5)).all(), overflow


def test_blocks_run_along_the_axis_given() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 24)).astype(np.float32)
    assert np.array_equal(to_bfp16(x, axis=0, rounding="floor"),
                          to_bfp16(x.T, axis=1, rounding="floor").T)
    with pytest.raises(ValueError, match="an axis of 20 is not a whole number of blocks"):
        quantize(x[:, :20], axis=1)


def test_round_by_mode_knows_only_the_cores_modes() -> None:
    with pytest.raises(ValueError, match="unknown rounding mode 'nearest'"):
        round_by_mode(np.array([0.5]), "nearest")


# -- the host header's mmul against the model, bit for bit --------------------------------------

PROBE = r'''
#include <aie_api/aie.hpp>
template <unsigned M>
void run(const bfloat16 *a, const bfloat16 *b, float *c) {
  aie::mmul<M, 8, 8, bfloat16, bfloat16, accfloat> mm(aie::load_v<M * 8>(c));
  mm.mac(aie::load_v<M * 8>(a), aie::load_v<64>(b));
  aie::store_v(c, mm.template to_vector<float>());
}
extern "C" void probe(const bfloat16 *a, const bfloat16 *b, float *c, unsigned m,
                      unsigned mode) {
  aie::set_rounding(aie::rounding_mode(mode));
  if (m == 4) run<4>(a, b, c);
  else run<8>(a, b, c);
}
'''


def _values(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """bf16 values over a few octaves, a sign each, some zeros: many mantissas land on ties."""
    v = rng.choice([-1.0, 1.0], shape) * (1 + rng.integers(0, 128, shape) / 128) \
        * 2.0 ** rng.integers(-4, 3, shape)
    v[rng.random(shape) < 0.1] = 0.0
    return v.astype(BF16_NP)


def test_the_host_mmul_quantizes_as_the_model_in_every_rounding_mode(tmp_path: Path) -> None:
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ on PATH")
    src = tmp_path / "probe.cc"
    src.write_text(PROBE)
    lib = tmp_path / "probe.so"
    subprocess.run([cxx, "-std=c++20", "-O2", "-shared", "-fPIC",
                    f"-D__AIE_ARCH__={AIE_ARCH['aie2p']}", *arch_define_words("aie2p"),
                    f"-I{HOST_INCLUDE}", str(src), "-o", str(lib)], check=True,
                   capture_output=True, text=True)
    fn = ctypes.CDLL(str(lib)).probe
    rng = np.random.default_rng(7)
    for rows in (4, 8):
        for mode, name in enumerate(ROUNDING_MODES):
            a = _values(rng, (rows, 8))
            b = _values(rng, (8, 8))
            c = rng.standard_normal((rows, 8)).astype(np.float32)
            got = c.copy()
            fn(a.ctypes.data_as(ctypes.c_void_p), b.ctypes.data_as(ctypes.c_void_p),
               got.ctypes.data_as(ctypes.c_void_p), ctypes.c_uint(rows), ctypes.c_uint(mode))
            want = c.copy()
            bfp16_accumulate(want, a.astype(np.float32), b.astype(np.float32), name)
            assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist(), (rows, name)
            exact = c + a.astype(np.float32) @ b.astype(np.float32)
            assert not np.array_equal(got, exact), (rows, name)  # it did quantize


def test_without_the_macro_the_host_mmul_is_exact_bf16(tmp_path: Path) -> None:
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ on PATH")
    src = tmp_path / "probe.cc"
    src.write_text(PROBE)
    lib = tmp_path / "probe.so"
    subprocess.run([cxx, "-std=c++20", "-O2", "-shared", "-fPIC", "-D__AIE_ARCH__=21",
                    f"-I{HOST_INCLUDE}", str(src), "-o", str(lib)], check=True,
                   capture_output=True, text=True)
    rng = np.random.default_rng(8)
    a, b = _values(rng, (4, 8)), _values(rng, (8, 8))
    got = np.zeros((4, 8), np.float32)
    ctypes.CDLL(str(lib)).probe(a.ctypes.data_as(ctypes.c_void_p),
                                b.ctypes.data_as(ctypes.c_void_p),
                                got.ctypes.data_as(ctypes.c_void_p), ctypes.c_uint(4),
                                ctypes.c_uint(0))
    assert np.allclose(got, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-6, atol=0)


@pytest.mark.parametrize("out", ["f32", "bf16"])
def test_npu2s_library_matmul_on_the_host_is_its_reference_bit_for_bit(out: str) -> None:
    k = matmul(64, 64, 64, "bf16", out, device="npu2")
    assert (k.ir.params["r"], k.ir.params["s"], k.ir.params["t"]) == (4, 8, 8)
    assert k.ir.reference == "aiedsl.kernels.matmul:matmul_bfp16_ref"
    rng = np.random.default_rng(2)
    A = rng.standard_normal((64, 64)).astype(np.float32).astype(BF16_NP)
    B = rng.standard_normal((64, 64)).astype(np.float32).astype(BF16_NP)
    C = rng.standard_normal((64, 64)).astype(np.float32).astype(
        BF16_NP if out == "bf16" else np.float32)
    a, b, c = block(A, 4, 8), block(B, 8, 8), block(C, 4, 8)
    ref = c.copy()
    k.run_reference(a, b, ref)
    cpp = c.copy()
    native(k.ir, kernel_text(None, k.ir), get_target("npu2").aie_arch)(a.copy(), b.copy(), cpp)
    assert cpp.view(np.uint8).tolist() == ref.view(np.uint8).tolist()
    exact = C.astype(np.float32) + A.astype(np.float32) @ B.astype(np.float32)
    assert np.abs(unblock(ref.reshape(-1), 64, 64, 4, 8).astype(np.float32) - exact).max() > 0.1


def test_npu1s_matmul_keeps_its_exact_reference() -> None:
    assert matmul(64, 64, 64, device="npu1").ir.reference == "aiedsl.kernels.matmul:matmul_ref"
    assert matmul_cascade(64, 64, 64, "put", device="npu1").ir.reference == \
        "aiedsl.kernels.cascade:matmul_cascade_ref"
    assert matmul_cascade(64, 64, 64, "put", device="npu2").ir.reference == \
        "aiedsl.kernels.cascade:matmul_cascade_bfp16_ref"


# -- the GEMM's comparison ------------------------------------------------------------------------

def _gemm_npu2(**defines: str) -> tuple[Design, dict[str, np.ndarray], dict[str, np.ndarray],
                                         dict[str, np.ndarray], list[str]]:
    """gemm_bf16 on npu2 simulated: its IR, inputs, outputs, expected outputs, check lines."""
    handle = load_design(BF16, defines, device="npu2")
    result = simulate(handle)
    expected = handle.expected({n: result.inputs[n] for n in handle.inputs})
    return handle.ir, result.inputs, result.outputs, expected, [c.line() for c in result.checks]


def test_the_npu2_gemm_passes_allowing_for_the_quantization() -> None:
    d, inputs, outputs, expected, lines = _gemm_npu2()
    assert lines == [
        "PASS C: worst element [482, 137] got 13.9213 want 14.6954 (|error| 0.774; tolerance "
        "0.0001 relative + 0.0102 absolute + up to 1.58 per element for the bfp16 quantization "
        "of 'A' and 'B' (npu2's bf16 mmul, conv_even))"]
    got, want = outputs["C"], expected["C"]
    # without the allowance it fails: the quantization is far beyond an f32 sum's rounding
    assert not compare("C", got, want, "f32").passed
    # with it, a wrong result still fails: C shifted by a column, and zeros
    for wrong in (np.roll(got, 1, axis=1), np.zeros_like(got)):
        assert not compare_outputs(d, {"C": wrong}, expected, inputs)[0].passed


def test_the_npu2_gemm_with_a_bf16_c_passes_too() -> None:
    assert _gemm_npu2(OUT="bf16")[4] == [(
        "PASS C: worst element [240, 148] got -36.75 want -35.5 (|error| 1.25; tolerance 0.0137 "
        "x max(|expected|, 45.3) per element, for 8 roundings of its partial sums + up to 1.67 "
        "per element for the bfp16 quantization of 'A' and 'B' (npu2's bf16 mmul, conv_even))")]


def test_the_npu1_gemm_is_compared_as_before() -> None:
    result = simulate(load_design(BF16))
    assert result.checks[0].line() == (
        "PASS C: worst element [267, 96] got 4.12003 want 4.12005 (|error| 2.29e-05; tolerance "
        "0.0001 relative + 0.0102 absolute)")


def test_the_product_is_traced_to_the_host_tensors_it_multiplies() -> None:
    d = load_design(BF16, {}, device="npu2").ir
    assert bfp16_product(d, "C") == (("matmul_bf16_f32_64x64x64_4x8x8",), Bfp16Product(
        "A", "B", "conv_even", None, ("matmul_bf16_f32_64x64x64_4x8x8",)))
    d = load_design(BF16, {"OUT": "bf16"}, device="npu2").ir
    assert bfp16_product(d, "C")[1] == Bfp16Product(
        "A", "B", "conv_even", 64, ("matmul_bf16_bf16_64x64x64_4x8x8",))
    assert bfp16_product(load_design(BF16).ir, "C") == ((), None)
    kernels, product = bfp16_product(load_design(CASCADE, {}, device="npu2").ir, "C")
    assert product is not None and (product.a, product.b, product.rounding, product.step) == (
        "A", "B", "conv_even", None)
    assert len(kernels) == 3  # put, put_get, get


def test_the_allowance_is_the_largest_difference_the_quantization_makes() -> None:
    # one element: 1 + 2^-7 (64.5 steps) floors to 1.0, times 1.0: off by 2^-7
    a = np.array([[1 + 2.0 ** -7] + [0.0] * 7], np.float32)
    b = np.zeros((8, 1), np.float32)
    b[0, 0] = 1.0
    assert product_difference(a, b, "floor") == 2.0 ** -7
    assert product_difference(a, b, "conv_even") == 2.0 ** -7
    assert product_difference(a, b, "positive_inf") == 2.0 ** -7
    assert product_difference(np.ones((2, 8), np.float32), np.ones((8, 3), np.float32),
                              "floor") == 0.0


def test_each_element_is_allowed_its_own_difference_not_the_largest() -> None:
    """One row of A a thousand times the rest made every element's allowance that row's
    largest difference: a reference with half of C zeroed passed (a numerics tester's find)."""
    d, inputs, outputs, expected, _ = _gemm_npu2()
    big = {**inputs, "A": inputs["A"].copy()}
    big["A"][0] = (big["A"][0].astype(np.float32) * 1000).astype(big["A"].dtype)
    a32, b32 = big["A"].astype(np.float32), big["B"].astype(np.float32)
    allowance = bfp16_allowance(d, "C", big)[1]
    assert allowance is not None and allowance.elements is not None
    # what the cores compute, as the model has it
    got = (to_bfp16(a32, axis=1, rounding="conv_even")
           @ to_bfp16(b32, axis=0, rounding="conv_even"))
    want = a32 @ b32
    assert compare_outputs(d, {"C": got}, {"C": want}, big)[0].passed
    zeroed = want.copy()
    zeroed[256:] = 0
    check = compare_outputs(d, {"C": got}, {"C": zeroed}, big)[0]
    assert not check.passed and check.wrong > 0.7 * 256 * 512  # the rest: the f32 tolerance
    # the outlier row is allowed its own, far larger difference; the others theirs
    assert allowance.elements[0].min() > 50 * allowance.elements[1:].max()


def test_nans_an_input_infinity_makes_are_not_blamed_on_unwritten_memory() -> None:
    """An infinity in A makes its blocks NaN on npu2 (as modelled): the FAIL said the NaNs
    were read before anything wrote them, and to zero the accumulators (a numerics tester's
    find)."""
    handle = load_design(BF16, {"M": "128", "K": "256", "N": "128", "ROWS": "2", "COLS": "2"},
                         device="npu2")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((128, 256)).astype(np.float32)
    a[0, 0] = np.inf
    inputs = {"A": a.astype(BF16_NP),
              "B": rng.standard_normal((256, 128)).astype(np.float32).astype(BF16_NP)}
    got = simulate(handle, inputs, check=False).outputs["C"]
    want = inputs["A"].astype(np.float32) @ inputs["B"].astype(np.float32)
    check = compare_outputs(handle.ir, {"C": got}, {"C": want}, inputs, nonfinite=True,
                            poison=True)[0]
    assert not check.passed and check.poisoned == 0
    assert check.note == (
        "input 'A' holds 1 infinity or NaN, from which the wrong NaNs may come: npu2's bfp16 "
        "unit, as aiedsl models it, makes a block of 8 values holding one all NaN (what the NPU "
        "does is not known: aiedsl/kernels/bfp16.py)")


def test_a_fail_it_cannot_allow_for_says_why() -> None:
    d, inputs, outputs, expected, _ = _gemm_npu2()
    # without A, the product cannot be measured
    (check,) = compare_outputs(d, outputs, expected, {"B": inputs["B"]})
    assert not check.passed
    assert check.hints[-1].endswith(
        ": matmul_bf16_f32_64x64x64_4x8x8 runs its bf16 mmul on npu2's bfp16 unit, which "
        "quantizes A and B (aiedsl/kernels/bfp16.py), so an exact bf16 reference differs by "
        "more than a bf16 sum's rounding; aiedsl allows for that only where 'C' is a product "
        "it stores of a host A (M x K) and B (K x N), which it could not find here")


# -- the cost ------------------------------------------------------------------------------------

def test_the_npu2_profile_reaches_the_declared_peak() -> None:
    handle = load_design(BF16, {}, device="npu2")
    (k,) = [x for x in handle.ir.kernels if x.symbol.startswith("matmul")]
    (p,) = [p for p in profile_cases(design_cases(handle), "npu2") if p.symbol == k.symbol]
    assert p.counts["vector MAC"] == 1024 and p.cycles == 1024 <= k.cycles
    assert "  256.0 MACs per cycle of the core's peak 256: 100%" in p.lines()
