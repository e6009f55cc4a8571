"""The progress a long simulation shows: what the simulator tells its watcher, the words drawn,
and that nothing is drawn off a terminal."""

from __future__ import annotations

import io
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console

from aiedsl.cli import progress
from aiedsl.ir.program import calls_per_run
from aiedsl.loader import load_design
from aiedsl.cli.progress import SimProgress, describe
from aiedsl.sim import simulate
from aiedsl.sim.stats import KINDS

DESIGNS = ["passthrough", "vector_scalar_mul", "gemm_bf16", "gemm_i8", "threshold_rtp",
           "transpose_dma", "matmul_cascade"]


@pytest.mark.parametrize("name", DESIGNS)
def test_the_watcher_hears_each_stage_and_the_static_count_of_calls_is_what_ran(
        name: str, in_root: Path) -> None:
    handle = load_design(f"designs/{name}.py")
    heard: list[tuple[str, Any]] = []
    result = simulate(handle, watch=lambda stage, m: heard.append((stage, m)))
    # between the run and the check: a run again per kind of resource made free, to measure
    # what limits the first (sim/freed.py), in the order the kinds are listed
    freed = [f.kind for f in result.timing.bottleneck.freed]
    again = [f"free {k}" for k in KINDS if k in freed]
    assert [stage for stage, _ in heard] == ["run", *again, "check"]
    assert heard[0][1] is result.machine and heard[-1][1] is result.machine
    for _, m in heard[1:-1]:  # each its own machine, making every call of the design
        assert m is not result.machine and m.kernel_calls == calls_per_run(m.design)
    assert result.machine.kernel_calls == calls_per_run(result.machine.design)


def test_a_design_nothing_keeps_busy_is_timed_again_with_each_kind_made_free(
        in_root: Path) -> None:
    heard: list[str] = []
    simulate(load_design("designs/gemm_bf16.py"), watch=lambda stage, m: heard.append(stage))
    assert heard == ["run", "free compute", "free dram", "free dma", "free runtime", "check"]


def test_an_unchecked_run_has_no_check_stage(in_root: Path) -> None:
    heard: list[str] = []
    simulate(load_design("designs/passthrough.py"), check=False,
             watch=lambda stage, m: heard.append(stage))
    assert heard == ["run"]


def test_the_words_of_each_stage() -> None:
    assert describe("run", 1536, 262144) == "simulating: 1,536 of 262,144 kernel calls"
    assert describe("run", 0, 0) == "simulating"
    assert describe("check", 7, 9) == "comparing with the numpy reference"
    assert describe("free compute", 5, 9) == "timing again, kernels made free: 5 of 9 kernel calls"
    assert describe("free runtime", 0, 0) == "timing again, runtime made free"


def test_a_terminal_sees_the_calls_made(monkeypatch: pytest.MonkeyPatch, in_root: Path) -> None:
    monkeypatch.setattr(progress, "DELAY", 0.0)
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    machine = SimpleNamespace(design=load_design("designs/gemm_bf16.py").ir, kernel_calls=288)
    with SimProgress(console) as watch:
        watch("run", machine)
        deadline = time.monotonic() + 10
        while "kernel calls" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.02)
    assert "simulating: 288 of 576 kernel calls" in out.getvalue()


def test_a_terminal_sees_the_runs_again_that_measure_what_limits(
        monkeypatch: pytest.MonkeyPatch, in_root: Path) -> None:
    monkeypatch.setattr(progress, "DELAY", 0.0)
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    first = SimpleNamespace(design=load_design("designs/gemm_bf16.py").ir, kernel_calls=576)
    again = SimpleNamespace(design=first.design, kernel_calls=144)
    with SimProgress(console) as watch:
        watch("run", first)
        watch("free dma", again)
        deadline = time.monotonic() + 10
        while "made free" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.02)
    assert "timing again, DMAs made free: 144 of 576 kernel calls" in out.getvalue()


def test_off_a_terminal_nothing_is_drawn(in_root: Path) -> None:
    out = io.StringIO()
    with SimProgress(Console(file=out, force_terminal=False)) as watch:
        result = simulate(load_design("designs/passthrough.py"), watch=watch)
        assert watch._thread is None
    assert result.passed and out.getvalue() == ""


def test_a_run_of_very_many_calls_is_said_to_be_long_off_a_terminal_too(
        monkeypatch: pytest.MonkeyPatch, in_root: Path) -> None:
    # a CI log says why the job does not end; once, though a second invocation is a new machine
    design = load_design("designs/passthrough.py").ir
    monkeypatch.setattr(progress, "LONG_RUN", calls_per_run(design))
    out = io.StringIO()
    with SimProgress(Console(file=out, force_terminal=False, width=60)) as watch:
        for _ in range(2):
            watch("run", SimpleNamespace(design=design, kernel_calls=0))
    assert out.getvalue() == (
        f"note: one run makes {calls_per_run(design):,} kernel calls; the simulator makes a few "
        "thousand a second, so this simulation may not end for hours, or at all (Ctrl-C stops "
        "it; aiedsl check checks the start of the run for hangs)\n")
    monkeypatch.setattr(progress, "LONG_RUN", calls_per_run(design) + 1)
    out = io.StringIO()
    with SimProgress(Console(file=out, force_terminal=False)) as watch:
        watch("run", SimpleNamespace(design=design, kernel_calls=0))
    assert out.getvalue() == ""


def test_what_the_run_prints_meanwhile_stays_on_stdout(monkeypatch: pytest.MonkeyPatch,
                                                       in_root: Path) -> None:
    import sys

    monkeypatch.setattr(progress, "DELAY", 0.0)
    out = io.StringIO()
    machine = SimpleNamespace(design=load_design("designs/passthrough.py").ir, kernel_calls=1)
    stdout = sys.stdout
    with SimProgress(Console(file=out, force_terminal=True, width=100)) as watch:
        watch("run", machine)
        deadline = time.monotonic() + 10
        while "kernel calls" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert sys.stdout is stdout


def test_a_run_the_watcher_never_hears_of_draws_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # aiedsl run on the NPU (or a build compiling first): no "simulating" bar
    monkeypatch.setattr(progress, "DELAY", 0.0)
    out = io.StringIO()
    with SimProgress(Console(file=out, force_terminal=True, width=100)):
        time.sleep(0.3)
    assert out.getvalue() == ""


def test_forced_colour_does_not_make_a_captured_stderr_a_terminal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    assert not sys.stderr.isatty() and not progress.stderr_console().is_terminal


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_lines_printed_meanwhile_go_above_the_bar(
        monkeypatch: pytest.MonkeyPatch, in_root: Path) -> None:
    import sys

    monkeypatch.setattr(progress, "DELAY", 0.0)
    stdout = _Terminal()
    monkeypatch.setattr(sys, "stdout", stdout)
    out = io.StringIO()
    machine = SimpleNamespace(design=load_design("designs/passthrough.py").ir, kernel_calls=1)
    with SimProgress(Console(file=out, force_terminal=True, width=100)) as watch:
        watch("run", machine)
        deadline = time.monotonic() + 10
        while "kernel calls" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.02)
        print("a line the reference prints")
    assert sys.stdout is stdout  # given back
    drawn = out.getvalue()
    assert "a line the reference prints\n" in drawn and stdout.getvalue() == ""
