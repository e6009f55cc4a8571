"""``aiedsl kernel cost`` on bad input: every mistake is one clean error (exit 2, no traceback)
naming the option, the values it takes and a fix, with no file and line (it is a command line,
not a design); a good command's defaults are types the kernel takes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aiedsl.kernels.cost import estimate

ROOT = Path(__file__).resolve().parents[1]
DEVICES = ("npu1, npu1_1col, npu1_2col, npu1_3col, npu2, npu2_1col, npu2_2col, npu2_3col, "
           "npu2_4col, npu2_5col, npu2_6col, npu2_7col")


def cost(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aiedsl", "kernel", "cost", *args],
                          capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "COLUMNS": "300"})


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
     "32-element vectors\n"
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
    (["softmax", "--shape", "8x256"],
     "error [kernel cost]: no library kernel called 'softmax' to estimate\n"
     "  limit: matmul, zero, passthrough, scale, add, mul, relu, reduce_sum, reduce_max\n"
     "  found: 'softmax'\n"
     "  fix: name one of them, e.g. aiedsl kernel cost matmul --shape 64x64x64"),
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
