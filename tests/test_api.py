"""The Python API: ``aiedsl.build(...).run(...)`` returns its results as fields, and the command
line prints exactly what those fields render."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import aiedsl
from aiedsl.sim.stats import Bottleneck, Timing

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"M": 256, "N": 256}


def test_a_simulated_run_is_data(tmp_path: Path, in_root: Path) -> None:
    art = aiedsl.build("designs/gemm_bf16.py", defines=SMALL, output=tmp_path / "g")
    result = art.run(target="sim", seed=3)
    assert result.target == "sim" and result.passed and result.latencies == []
    t = result.timing
    assert isinstance(t, Timing) and isinstance(t.bottleneck, Bottleneck)
    assert t.cycles > 0 and t.seconds == pytest.approx(t.cycles / t.clock_hz)
    assert t.clock_hz == 1e9 and t.ops == 2 * 256 * 512 * 256
    assert result.gops == t.gops == pytest.approx(t.ops / t.seconds / 1e9)
    assert sorted(t.core_busy) == sorted(f"core[{x},{y}]" for x in range(4) for y in range(4))
    assert all(0 < b <= 1 for b in (*t.core_busy.values(), *t.channel_busy.values()))
    assert t.bottleneck.kind in ("compute", "dram", "dma", "runtime")
    assert 0 < t.bottleneck.utilisation <= 1 and t.dram_bytes > 0
    (check,) = result.checks
    assert check.name == "C" and check.passed and len(check.worst_index) == 2
    got, want = result.outputs["C"][check.worst_index], check.want
    assert check.got == pytest.approx(float(got)) and abs(check.got - want) == pytest.approx(
        check.error)
    assert result.inputs["A"].shape == (256, 512)


def test_the_command_line_prints_the_results_fields(tmp_path: Path, in_root: Path) -> None:
    art = aiedsl.build("designs/gemm_bf16.py", defines=SMALL, output=tmp_path / "g")
    lines = art.run(target="sim", seed=5).lines()
    r = subprocess.run([sys.executable, "-m", "aiedsl", "sim", "designs/gemm_bf16.py", "-D",
                        "M=256", "-D", "N=256", "--seed", "5"], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1:] == lines
    assert lines[0].startswith("PASS C: worst element [")
    assert lines[-1] == "  bottleneck: " + art.run(target="sim", seed=5).timing.bottleneck.sentence()


def test_inputs_given_in_argument_order(tmp_path: Path, in_root: Path) -> None:
    art = aiedsl.build("designs/passthrough.py", write=False)
    x = np.arange(art.design.tensor("inp").type.numel, dtype=np.int32)
    result = art.run(x, target="sim")
    assert result.passed and np.array_equal(result.outputs["out"], x)
    assert art.path is None and not any(tmp_path.iterdir())
