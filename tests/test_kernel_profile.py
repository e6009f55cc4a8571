"""``aiedsl kernel profile``: operations counted by unit as the kernel's C++ runs on the host, the
issue-slot bound they give, and its agreement with the published single-core matmul figures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aiedsl.codegen.cpp import kernel_text
from aiedsl.kernels import matmul, zero
from aiedsl.kernels.host import KernelCase
from aiedsl.kernels.matmul import PUBLISHED
from aiedsl.kernels.profile import profile_cases
from aiedsl.ir import TensorType

ROOT = Path(__file__).resolve().parents[1]


def _case(k):  # type: ignore[no-untyped-def]
    return KernelCase(k.ir, kernel_text(None, k.ir), k.run_reference, {})


def test_the_bf16_matmul_is_counted_exactly() -> None:
    # 64x104x64 on 4x8x4: 16 x 16 patches' worth of 13 K steps, 4 mmuls each; 4 A/B block
    # loads (64 B) per step and the 4 C blocks loaded and stored per 2x2 patch
    p = profile_cases([_case(matmul(64, 104, 64, "bf16", device="npu1"))], "npu1")[0]
    assert p.counts == {"vector MAC": 3328, "vector ALU": 0, "shuffle": 0,
                        "load bytes": 229376, "store bytes": 16384, "MACs": 425984}
    assert p.bounds == {"vector MAC": 3328, "vector ALU": 0, "shuffle": 0, "load": 3584,
                        "store": 512}
    assert (p.cycles, p.binding, p.peak_macs) == (3584, "load", 128)
    assert p.lines()[0] == ("matmul_bf16_f32_64x104x64_4x8x4 on npu1: 3,584 cycles per call at "
                            "best (bound by load)")
    assert p.lines()[-1] == "  118.9 MACs per cycle of the core's peak 128: 93%"


def test_a_store_only_kernel_is_store_bound() -> None:
    p = profile_cases([_case(zero(TensorType(shape=(4096,), dtype="f32")))], "npu1")[0]
    assert (p.cycles, p.binding, p.counts["store bytes"]) == (512, "store", 16384)
    assert len(p.lines()) == 3  # no MACs line


@pytest.mark.parametrize("point", sorted(PUBLISHED))
def test_the_profile_is_within_15_percent_of_the_published_points(point) -> None:  # type: ignore[no-untyped-def]
    device, dt, dims = point
    p = profile_cases([_case(matmul(*dims, dt, device=device))], device)[0]
    assert abs(p.macs_per_cycle / PUBLISHED[point][0] - 1) <= 0.15


def test_the_command_profiles_a_designs_kernels(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "AIEDSL_TRACEBACK"}
    r = subprocess.run([sys.executable, "-m", "aiedsl.cli", "kernel", "profile",
                        "designs/matmul_cascade.py", "-D", "M=64", "-D", "N=64"],
                       cwd=ROOT, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == ("matmul_cascade_put_bf16_f32_64x64x64_4x8x4 on npu1: 2,048 cycles per "
                        "call at best (bound by vector MAC)")
    assert len([x for x in lines if " on npu1: " in x]) == 3
