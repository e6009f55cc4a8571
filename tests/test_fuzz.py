"""Random designs, valid and broken (tests/fuzzing.py): aiedsl raises nothing but DesignError,
never hangs, and every design its checks accept simulates to the numbers numpy computes from the
same description. ``python bench/fuzz.py`` runs the long version (10,000 designs)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzing import SHAPES, Outcome, make_spec, run_one

SEEN: Counter = Counter()


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where this module's designs are written (pytest's own temporary folder, pruned by it)."""
    return tmp_path_factory.mktemp("fuzz")


# 150 designs (300 took a minute of the suite's ten): `python bench/fuzz.py` runs thousands
@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=2 ** 31 - 1))
def test_random_designs_are_rejected_cleanly_or_simulate_right(folder: Path, seed: int) -> None:
    outcome: Outcome = run_one(seed, folder)
    SEEN[outcome.verdict] += 1
    assert outcome.verdict in ("passed", "rejected"), outcome.detail


def test_every_shape_of_dataflow_is_generated_and_some_pass(folder: Path) -> None:
    shapes = Counter(make_spec(seed).shape for seed in range(600))
    assert set(shapes) == set(SHAPES)
    passed: Counter[str] = Counter()
    for s in range(120):  # until every shape has passed once
        if run_one(s, folder).verdict == "passed":
            passed[make_spec(s).shape] += 1
            if len(passed) == len(SHAPES):
                break
    assert len(passed) >= len(SHAPES) - 1, passed  # gemm may draw only broken settings
