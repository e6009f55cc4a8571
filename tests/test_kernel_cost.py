"""``aiedsl kernel cost`` on bad input: every mistake is one clean error (exit 2, no traceback)
naming the option, the values it takes and a fix, with no file and line (it is a command line,
not a design); a good command's defaults are types the kernel takes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from aiedsl.kernels.cost import estimate
from tests.command_line import run_command

ROOT = Path(__file__).resolve().parents[1]
DEVICES = ("npu1, npu1_1col, npu1_2col, npu1_3col, npu2, npu2_1col, npu2_2col, npu2_3col, "
           "npu2_4col, npu2_5col, npu2_6col, npu2_7col")


def cost(*args: str) -> subprocess.CompletedProcess:
    return run_command("kernel", "cost", *args, cwd=ROOT, env={**os.environ, "COLUMNS": "300"})


@pytest.mark.parametrize("args, error", [
    (["matmul", "--shape", "64x64x64", "--device", "npu9"],
     "error [kernel cost]: --device npu9 is not a device aiedsl knows\n"
     f"  limit: {DEVICES}\n"
     "  found: npu9\n"
     "  fix: pass one of them, e.g. --device npu1"),
    (["add", "--shape", "1e3"],
     "error [kernel cost]: --shape '1e3' is not sizes separated by x\n"
     "  limit: add takes N (or a tensor shape such as 64x64), whole numbers written in digits\n"
     "  found: '1e3'\n"
     "  fix: write e.g. --shape 1024"),
    (["reduce_max", "--shape", "1024"],
     "error [kernel cost]: --shape 1024 gives 1 size; reduce_max takes ROWSxCOLS\n"
     "  limit: ROWSxCOLS\n"
     "  found: 1024\n"
     "  fix: write e.g. --shape 8x256"),
    (["reduce_max", "--shape", "4x1024x3", "--dtype", "i32"],
     "error [kernel cost]: --shape 4x1024x3 gives 3 sizes; reduce_max takes ROWSxCOLS\n"
     "  limit: ROWSxCOLS\n"
     "  found: 4x1024x3\n"
     "  fix: write e.g. --shape 8x256"),
    (["zero", "--shape", "3"],
     "error [kernel cost]: --shape 3 does not fit zero of bf16: 3xbf16 is not a whole number of "
     "32-element vectors, as library kernel zero needs (its C++ moves whole vectors)\n"
     "  limit: a multiple of 32 elements\n"
     "  found: 3\n"
     "  fix: use a size that is a multiple of 32"),
    (["scale", "--shape", "1024", "--dtype", "i32"],
     "error [kernel cost]: --dtype i32: scale takes i16 elements\n"
     "  limit: i16\n"
     "  found: i32\n"
     "  fix: pass --dtype i16 (or leave --dtype out: i16 is scale's default)"),
    (["zero", "--shape", "0"],
     "error [kernel cost]: --shape 0 has a size of 0\n"
     "  limit: every size at least 1\n"
     "  found: 0\n"
     "  fix: write e.g. --shape 1024"),
    (["reduce_sum", "--shape", "8x256", "--dtype", "bf16"],
     "error [kernel cost]: --dtype bf16: reduce_sum takes i32 or i16 elements\n"
     "  limit: i32, i16\n"
     "  found: bf16\n"
     "  fix: pass --dtype i32 (or leave --dtype out: i32 is reduce_sum's default)"),
    (["relu", "--shape", "1024", "--dtype", "float64"],
     "error [kernel cost]: --dtype float64: relu takes bf16, i8, i16 or i32 elements\n"
     "  limit: bf16, i8, i16, i32\n"
     "  found: float64\n"
     "  fix: pass --dtype bf16 (or leave --dtype out: bf16 is relu's default)"),
    (["matmul", "--shape", "64x64x3"],
     "error [kernel cost]: --shape 64x64x3 does not fit matmul of bf16: matmul tile 64x64x3 "
     "does not fit the 4x8x4 mmul with 2x2 blocking\n"
     "  limit: m % 8 == 0, k % 8 == 0, n % 8 == 0\n"
     "  found: 64x64x3\n"
     "  fix: choose m a multiple of 8, k of 8, n of 8"),
    (["matmul", "--shape", "100000x100000x100000"],
     "error [kernel cost]: --shape 100000x100000x100000: a buffer of matmul would take "
     "40,000,000,000 bytes, more than a core's data memory\n"
     "  limit: 65,536 bytes per buffer (a core's data memory)\n"
     "  found: 40,000,000,000 bytes\n"
     "  fix: estimate the tile one core computes per call, e.g. --shape 64x64x64"),
    (["softmax_f32", "--shape", "8x256"],
     "error [kernel cost]: no library kernel called 'softmax_f32' to estimate\n"
     "  limit: matmul, matmul_narrow, matmul_cascade, conv2d_1x1, conv2d_3x3, zero, passthrough, "
     "scale, threshold, rgba2gray, add, sub, mul, vector_scalar, relu, reduce_sum, reduce_max, "
     "rms_norm, layer_norm, exp_bf16, silu, gelu, softmax\n"
     "  found: 'softmax_f32'\n"
     "  fix: name one of them, e.g. aiedsl kernel cost matmul --shape 64x64x64; a kernel of "
     "your own has its cycles from its C++: aiedsl kernel profile DESIGN"),
    (["softmax", "--shape", "4x100"],
     "error [kernel cost]: --shape 4x100 does not fit softmax of bf16: softmax of 100 elements "
     "per row\n"
     "  limit: a multiple of 16\n"
     "  found: 100\n"
     "  fix: use a multiple of 16 elements"),
    (["softmax", "--shape", "1024"],
     "error [kernel cost]: --shape 1024 gives 1 size; softmax takes ROWSxCOLS\n"
     "  limit: ROWSxCOLS\n"
     "  found: 1024\n"
     "  fix: write e.g. --shape 4x256"),
    (["threshold", "--shape", "1024", "--dtype", "i8"],
     "error [kernel cost]: --dtype i8: threshold takes u8 elements\n"
     "  limit: u8\n"
     "  found: i8\n"
     "  fix: pass --dtype u8 (or leave --dtype out: u8 is threshold's default)"),
    (["layer_norm", "--shape", "8x256", "--dtype", "f32"],
     "error [kernel cost]: --dtype f32: layer_norm takes bf16 elements\n"
     "  limit: bf16\n"
     "  found: f32\n"
     "  fix: pass --dtype bf16 (or leave --dtype out: bf16 is layer_norm's default)"),
    (["vector_scalar", "--shape", "1024", "--dtype", "i8"],
     "error [kernel cost]: --dtype i8: vector_scalar takes bf16, i16 or i32 elements\n"
     "  limit: bf16, i16, i32\n"
     "  found: i8\n"
     "  fix: pass --dtype bf16 (or leave --dtype out: bf16 is vector_scalar's default)"),
    (["conv2d_3x3", "--shape", "32x8x64"],
     "error [kernel cost]: --shape 32x8x64 does not fit conv2d_3x3 of i8: conv2d_3x3 of 32 "
     "pixels, 8 -> 64 channels does not fit the 4x8x8 mmul with 2x2 blocking\n"
     "  limit: width % 8 == 0, cin % 16 == 0 (two channel steps per 128-bit gather), "
     "cout % 16 == 0\n"
     "  found: 32x8x64\n"
     "  fix: pad the row or the channels"),
    (["conv2d_3x3", "--shape", "64x512x512"],  # the weights: 9 x 512 x 512 bytes
     "error [kernel cost]: --shape 64x512x512: a buffer of conv2d_3x3 would take 2,359,296 "
     "bytes, more than a core's data memory\n"
     "  limit: 65,536 bytes per buffer (a core's data memory)\n"
     "  found: 2,359,296 bytes\n"
     "  fix: estimate the tile one core computes per call, e.g. --shape 32x64x64"),
    (["matmul_cascade", "--shape", "64x4096x64"],  # A and B are bf16, C f32: A is the largest
     "error [kernel cost]: --shape 64x4096x64: a buffer of matmul_cascade would take 524,288 "
     "bytes, more than a core's data memory\n"
     "  limit: 65,536 bytes per buffer (a core's data memory)\n"
     "  found: 524,288 bytes\n"
     "  fix: estimate the tile one core computes per call, e.g. --shape 64x64x64"),
])
def test_a_bad_option_is_one_clean_error(args: list[str], error: str) -> None:
    r = cost(*args)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", error + "\n")


@pytest.mark.parametrize("args, first", [
    (["reduce_sum", "--shape", "4x1024"],
     "reduce_sum_i32_4x1024 on npu1: 302 cycles per call (0.30 us at 1 GHz)"),
    (["reduce_max", "--shape", "8x256"],
     "reduce_max_i32_8x256 on npu1: 206 cycles per call (0.21 us at 1 GHz)"),
    (["scale", "--shape", "1024"],
     "scale_i16_1024 on npu1: 78 cycles per call (0.08 us at 1 GHz)"),
    (["scale", "--shape", "1024", "--dtype", "i16"],
     "scale_i16_1024 on npu1: 78 cycles per call (0.08 us at 1 GHz)"),
    (["zero", "--shape", "64x64"],
     "zero_bf16_4096 on npu1: 270 cycles per call (0.27 us at 1 GHz)"),
])
def test_the_default_dtype_is_one_the_kernel_takes(args: list[str], first: str) -> None:
    r = cost(*args)
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.splitlines()[0] == first


def test_the_library_function_raises_the_same_error() -> None:
    from aiedsl.errors import DesignError

    with pytest.raises(DesignError) as e:
        estimate("zero", "3", None, "npu1")
    assert e.value.loc is None  # not the caller's frame (typer's, from the command line)


# -- every library kernel, at the cycles it declares ----------------------------------------------

@pytest.mark.parametrize("args, first", [
    # each number worked out by hand from the kernel's cost formula (its model: line)
    (["threshold", "--shape", "1024"],  # 2(1024/64) + 14
     "threshold_u8_1024 on npu1: 46 cycles per call (0.05 us at 1 GHz)"),
    (["sub", "--shape", "256", "--dtype", "i32"],  # 256/16 + 14
     "sub_i32_256 on npu1: 46 cycles per call (0.05 us at 1 GHz)"),
    # bf16 kernels: + 2 for setting and restoring the rounding mode (conv_even)
    (["sub", "--shape", "256", "--dtype", "bf16"],  # 2(256/32) + 14 + 2
     "sub_bf16_256 on npu1: 32 cycles per call (0.03 us at 1 GHz)"),
    # float products are 13 bf16 multiplies each (fp32 is emulated: fp32_emulation.py)
    (["rms_norm", "--shape", "8x256"],  # 8(14 x 256/16 + 30) + 16
     "rms_norm_bf16_8x256 on npu1: 2,048 cycles per call (2.05 us at 1 GHz)"),
    (["layer_norm", "--shape", "4x64"],  # 4(14 x 64/16 + 30) + 16
     "layer_norm_bf16_4x64 on npu1: 360 cycles per call (0.36 us at 1 GHz)"),
    (["exp_bf16", "--shape", "1024"],  # 1024/16 x 118 + 16
     "exp_bf16_1024 on npu1: 7,568 cycles per call (7.57 us at 1 GHz)"),
    (["exp_bf16", "--shape", "1024", "--device", "npu2"],  # AIE2P's exp2: 1024/16 x 17 + 16
     "exp_bf16_1024_exp2 on npu2: 1,104 cycles per call (0.61 us at 1.8 GHz)"),
    (["silu", "--shape", "512"],  # 512/16 x 237 + 16
     "silu_bf16_512 on npu1: 7,600 cycles per call (7.60 us at 1 GHz)"),
    (["gelu", "--shape", "256"],  # 256/16 x 304 + 16
     "gelu_bf16_256 on npu1: 4,880 cycles per call (4.88 us at 1 GHz)"),
    (["softmax", "--shape", "4x256"],  # 1024/16 x 254 + 16
     "softmax_bf16_4x256 on npu1: 16,272 cycles per call (16.27 us at 1 GHz)"),
    (["softmax", "--shape", "4x256", "--device", "npu2"],  # 1024/16 x 51 + 16
     "softmax_bf16_4x256_exp2 on npu2: 3,280 cycles per call (1.82 us at 1.8 GHz)"),
    # AIE2P loads 2 x 512 bits a cycle: a bf16 4x8x8 step's 384 bytes of A and B blocks take
    # 3 cycles, under the 4 mmuls (at AIE2's 2 x 256 bits they would take 6)
    (["matmul", "--shape", "64x64x64", "--device", "npu2"],  # (64/8)(64/16)(4 x 64/8 + 7) + 20
     "matmul_bf16_f32_64x64x64_4x8x8 on npu2: 1,268 cycles per call (0.70 us at 1.8 GHz)"),
    (["conv2d_1x1", "--shape", "32x64x64"],  # (32/8)(64/16)(4 x 64/8 + 11) + 20
     "conv2d1x1_i8_32x64x64_4x8x8_shift0_relu on npu1: 708 cycles per call (0.71 us at 1 GHz)"),
    (["conv2d_3x3", "--shape", "32x64x64"],  # (32/8)(64/16)(9 x 64/8 x 4 + 11) + 20
     "conv3x3_i8_32x64x64_4x8x8_shift0_relu on npu1: 4,804 cycles per call "
     "(4.80 us at 1 GHz)"),
])
def test_each_library_kernel_prints_its_declared_cycles(args: list[str], first: str) -> None:
    r = cost(*args)
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.splitlines()[0] == first


@pytest.mark.parametrize("device, said", [("npu2", True), ("npu1", False)])
def test_npu2s_bf16_matmul_says_what_its_cycles_leave_out(device: str, said: bool) -> None:
    """The bfp16 conversions each npu2 bf16 mmul needs are in no model's cycles: the
    simulator's notes said so, kernel cost did not."""
    lines = estimate("matmul", "64x64x64", "bf16", device)
    note = ("  not modelled: the two conversions to bfp16 each mmul needs run in the core's one "
            "store slot and are not in these cycles, which they could make up to twice as many "
            "(README: npu2's bf16 matrix multiply)")
    assert (note in lines) is said


def test_the_cascade_gemm_on_npu2_moves_two_words_a_block() -> None:
    """npu2's 4x8 f32 block is two 512-bit cascade words (AIE2P's cascade is AIE2's width):
    a patch moves 8, each a cycle at the target's cascade rate, 4 more than npu1's calibrated
    patch counts. The kernel was refused on npu2."""
    r = cost("matmul_cascade", "--shape", "64x64x64", "--device", "npu2")
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.splitlines()[:2] == [
        "matmul_cascade_put_bf16_f32_64x64x64_4x8x8 on npu2: 1,396 cycles per call "
        "(0.78 us at 1.8 GHz)",  # (64/8)(64/16)(4 x 8 + 11) + 20
        "  model: (m/8)(n/16)(4(k/8)+11)+20: as matmul, a 2x2 patch's 8 cascade words (2 a 4x8 "
        "f32 block, 1 a cycle) in place of its C loads or stores: npu1's calibrated 7 per "
        "patch, plus 4 for its words past npu1's 4 (kernels_cpp/mm_cascade.cc)"]


def test_variants_that_cost_the_same_are_named_together() -> None:
    r = cost("matmul_cascade", "--shape", "64x64x64")
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.splitlines() == [
        "matmul_cascade_put_bf16_f32_64x64x64_4x8x4 on npu1: 2,516 cycles per call "
        "(2.52 us at 1 GHz)",
        "  model: (m/8)(n/8)(4(k/8)+7)+20: as matmul, a 2x2 patch's 4 cascade words (1 a 4x4 "
        "f32 block, 1 a cycle) in place of its C loads or stores: npu1's calibrated 7 per "
        "patch (kernels_cpp/mm_cascade.cc)",
        "  the same for matmul_cascade_put_get_bf16_f32_64x64x64_4x8x4 and "
        "matmul_cascade_get_bf16_f32_64x64x64_4x8x4",
        "  the simulator charges 10 more a call at the call site (argument set-up, branch and "
        "return: TimingModel.kernel_call_cycles)",
        # as matmul prints the same 2,516 cycles (it printed 208.4 operations per cycle,
        # twice its MACs, with no share of the peak)
        "  104.2 MACs per cycle of the core's peak 128: 81%"]  # 64^3 / 2,516
    r = cost("vector_scalar", "--shape", "1024", "--dtype", "i16")
    assert r.stdout.splitlines()[0] == "vs_add_i16_1024 on npu1: 78 cycles per call " \
        "(0.08 us at 1 GHz)"  # 2 * 1024/32 + 14
    assert r.stdout.splitlines()[2] == "  the same for vs_sub_i16_1024 and vs_mul_i16_1024"


def test_a_convolution_says_what_it_was_made_with() -> None:
    r = cost("conv2d_1x1", "--shape", "32x64x64")
    assert r.stdout.splitlines()[2] == ("  made with shift=0 and relu=True, the library's "
                                        "defaults (its declared cycles depend on neither)")
    # its MACs against the i8 peak, as a matmul's (32 x 64 x 64 MACs in 708 cycles)
    assert r.stdout.splitlines()[-1] == "  185.1 MACs per cycle of the core's peak 256: 72%"


def test_only_multiply_accumulates_are_shown_against_the_peak() -> None:
    """An element-wise kernel's operations are adds, not MACs: its rate, with no share."""
    r = cost("add", "--shape", "1024", "--dtype", "bf16")
    assert r.stdout.splitlines()[-1] == "  12.8 operations per cycle"


def test_shift_and_relu_leave_a_convolutions_cycles_as_the_note_says() -> None:
    from aiedsl.kernels import conv2d_1x1, conv2d_3x3

    for conv in (conv2d_1x1, conv2d_3x3):
        cycles = {conv(32, 64, 64, shift=sh, relu=rl).ir.cycles
                  for sh in (0, 9, 23) for rl in (True, False)}
        assert len(cycles) == 1, conv


def _library_factories() -> set[str]:
    """Every public function of aiedsl.kernels that returns a Kernel, but declare (your own
    kernel's declaration, not the library's)."""
    import typing

    import aiedsl.kernels as kernels
    from aiedsl.kernels.base import Kernel

    return {name for name in kernels.__all__ if callable(getattr(kernels, name))
            and not isinstance(getattr(kernels, name), type)
            and typing.get_type_hints(getattr(kernels, name)).get("return") is Kernel} - {"declare"}


def test_every_library_kernel_is_costed() -> None:
    from aiedsl.kernels.cost import KERNELS

    assert _library_factories() == set(KERNELS)
    assert len(KERNELS) == 23


def test_the_help_names_every_kernel_it_costs() -> None:
    from aiedsl.kernels.cost import KERNELS

    r = cost("-h")
    help_text = " ".join(r.stdout.split())
    listed = help_text.split("KERNEL is one of ")[1].split(".")[0]
    assert listed.replace(" or ", ", ").split(", ") == list(KERNELS)


@pytest.mark.parametrize("device", ["npu1", "npu2"])
def test_every_kernel_and_type_costs_what_the_library_declares(device: str) -> None:
    # the example each error suggests works with every type the kernel takes, and the cycles
    # printed are the library kernel's own cycles= (what the simulator charges for its body),
    # whatever variant is shown first
    import re

    from aiedsl.kernels.cost import KERNELS

    for name, spec in KERNELS.items():
        for dt in spec.dtypes:
            lines = estimate(name, spec.example, dt, device)
            dims = tuple(int(d) for d in spec.example.split("x"))
            kernel = spec.build(dims, dt, device, spec.variants[0])
            got = re.fullmatch(r"(\S+) on \S+: ([0-9,]+) cycles per call .*", lines[0])
            assert got is not None, lines[0]
            assert (got[1], int(got[2].replace(",", ""))) == (kernel.symbol, kernel.cycles)
            assert lines[1] == f"  model: {kernel.cost}"


def test_a_library_model_written_for_aie2_says_so_on_npu2() -> None:
    """zero's bytes/32 is AIE2's store width; npu2's core stores 64 bytes a cycle, and
    `kernel cost` said nothing of it (its own profile put the model 2.1x over)."""
    caveat = ("  not calibrated for this device: the model is AIE2's (npu1), whose core stores 32 "
              "bytes a cycle where this one stores 64; `aiedsl kernel profile` estimates it for "
              "this device")
    assert caveat in estimate("zero", "4096", "f32", "npu2")
    assert not any("not calibrated" in line for line in estimate("zero", "4096", "f32", "npu1"))


def test_every_library_model_of_npu1s_says_so_on_npu2() -> None:
    """conv2d_1x1 is costed as matmul, with matmul's per-patch constant calibrated on npu1, and
    said nothing of it on npu2 where matmul did; the cascade stages and conv2d_3x3 (its 11, the
    i8 patch's) neither. Every kernel, by what its model rests on (cost.calibration decides)."""
    from aiedsl.kernels.cost import KERNELS

    patch = "  not calibrated for this device: the per-patch constant is npu1's"
    aie2 = ("  not calibrated for this device: the model is AIE2's (npu1), whose core stores 32 "
            "bytes a cycle where this one stores 64; `aiedsl kernel profile` estimates it for "
            "this device")
    said: dict[str, list[str]] = {}
    for name, spec in KERNELS.items():
        lines = estimate(name, spec.example, None, "npu2")
        said[name] = [x for x in lines if "not calibrated" in x]
        assert not any("not calibrated" in x for x in estimate(name, spec.example, None, "npu1"))
    assert {n for n, x in said.items() if x == [patch]} == {
        "matmul", "matmul_cascade", "conv2d_1x1", "conv2d_3x3"}
    assert {n for n, x in said.items() if x == [aie2]} == {
        "zero", "passthrough", "scale", "threshold", "rgba2gray", "add", "sub", "mul",
        "vector_scalar", "relu", "reduce_sum", "reduce_max", "rms_norm", "layer_norm"}
    # fitted per architecture: matmul_narrow reads the device's load and store rates, the
    # activations their steps per 16 lanes on each (AIE2P's hardware exp2)
    assert {n for n, x in said.items() if not x} == {
        "matmul_narrow", "exp_bf16", "silu", "gelu", "softmax"}


def test_conv2d_1x1_on_npu2_says_its_patch_constant_is_npu1s() -> None:
    r = cost("conv2d_1x1", "--shape", "32x64x64", "--device", "npu2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == (
        "  not calibrated for this device: the per-patch constant is npu1's")
