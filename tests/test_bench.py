"""``bench/sim_speed.py``'s claims that are numbers, not times: its bare loop makes the same
products as the simulated GEMM, to the bit."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import numpy as np

from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.sim.compare import make_inputs

ROOT = Path(__file__).resolve().parent.parent


def _sim_speed() -> ModuleType:
    spec = importlib.util.spec_from_file_location("aiedsl_bench_sim_speed",
                                                  ROOT / "bench" / "sim_speed.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    saved = dict(os.environ)
    try:
        spec.loader.exec_module(module)  # it sets BLAS's thread count for its own process
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return module


def test_bare_loop_and_simulated_gemm_give_the_same_c_to_the_bit(in_root: Path) -> None:
    # the same f32 tile products, summed in the same K order: the simulator keeps C row-major
    # across a K loop and shares operands between cores, and must not change one bit of it
    bench = _sim_speed()
    handle = load_design(bench.DESIGN, {"M": "256", "K": "512", "N": "256"})
    inputs = make_inputs(handle.ir, 0)
    result = simulate(handle, inputs)
    assert result.passed
    bare = bench.bare_loop(inputs["A"], inputs["B"])
    assert bare.dtype == result.outputs["C"].dtype == np.float32
    assert np.array_equal(bare, result.outputs["C"])
