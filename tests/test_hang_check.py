"""The hang check of ``aiedsl check`` and ``aiedsl build``: the run simulated without data finds
the hangs of back-pressure that no static check sees, in ``aiedsl sim``'s words, and a build that
hangs writes nothing."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from aiedsl.checks import check_design
from aiedsl.loader import load_design
from aiedsl.sim import Deadlock, simulate
from aiedsl.sim.hang_run import CALLS, EVENTS, hang_run
from tests.test_hangs import RUN_AHEAD
from tests.command_line import run_command

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "hang_corpus"
PREFIX = "error [deadlock]: the design's run hangs, simulated without data: "

AHEAD = RUN_AHEAD.replace("DEPTH", "depth=2").replace("ROWS", "2").replace("AHEAD", "3")
"""A producer that runs three elements of 'f' ahead of the 'g' its consumer waits for first:
depth 2 hangs, 3 ends."""

AHEAD_CHECK = (
    "ahead.py:34: " + PREFIX + "nothing can move and the runtime sequence is not done (2 core(s) blocked)\n"
    "  the runtime waits at the end of its sequence for its drain of 'o' (line 36) to complete "
    "(ahead.py:34)\n"
    "  <- the shim DMA (0,0) draining 'o' waits for data (ahead.py:13)\n"
    "  <- the DMA of core[0,1] (0,3) sending 'o' waits for core[0,1] to release an element to "
    "send (ahead.py:13)\n"
    "  <- core[0,1] (0,3) waits to acquire 'g' (consume) for data to arrive (ahead.py:28)\n"
    "  <- core[0,0] (0,2) waits to acquire 'f' (produce) for a free buffer (all 2 buffers are "
    "full, waiting for core[0,1] to consume: the two cores share them), while it holds 1 "
    "element(s) of 'a' (consume) (ahead.py:22)\n"
    "  <- back to core[0,1] (0,3): a wait-for cycle\n"
    "  fix: break the cycle: no core may hold an element while it waits for data that can only "
    "come once that element moves; acquire in an order that lets data flow, release sooner, or "
    "give 'f' depth=3 (line 11; now 2): the least depth with which this run ends, simulated\n"
)


def aiedsl(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "AIEDSL_TRACEBACK"}
    return run_command(*args, cwd=cwd, env=env)


@pytest.fixture
def ahead(tmp_path: Path) -> Path:
    (tmp_path / "ahead.py").write_text(AHEAD)
    return tmp_path


def test_check_finds_a_hang_of_back_pressure_and_names_the_depth_that_ends_it(
        ahead: Path) -> None:
    r = aiedsl("check", "ahead.py", cwd=ahead)
    assert (r.returncode, r.stdout, r.stderr) == (3, "", AHEAD_CHECK)


def test_the_hang_check_says_what_aiedsl_sim_says(ahead: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Word for word but the first line's opening: the same run, the same explanation."""
    monkeypatch.chdir(ahead)
    with pytest.raises(Deadlock) as sim:
        simulate(load_design("ahead.py"))
    assert str(sim.value).replace("error [deadlock]: ", PREFIX, 1) + "\n" == AHEAD_CHECK


def test_a_build_that_hangs_writes_nothing(ahead: Path) -> None:
    r = aiedsl("build", "ahead.py", "-o", "out", cwd=ahead)
    assert (r.returncode, r.stderr) == (3, AHEAD_CHECK)
    assert not (ahead / "out").exists()


@pytest.mark.parametrize("name", ["broadcast_under_buffered.py", "drain_order_reversed.py"])
def test_the_corpus_hangs_found_by_running_are_found_by_check(name: str) -> None:
    sim = aiedsl("sim", name, cwd=CORPUS)
    check = aiedsl("check", name, cwd=CORPUS)
    assert sim.returncode == check.returncode == 3
    assert check.stderr == sim.stderr.replace("error [deadlock]: ", PREFIX, 1)


def test_a_run_that_ends_is_said_with_its_kernel_calls(in_root: Path) -> None:
    r = aiedsl("check", "designs/gemm_bf16.py", cwd=in_root)
    assert r.returncode == 0, r.stderr
    assert "\nhang check: the run ends, simulated without data (576 kernel calls)\n" in r.stdout


def test_a_long_run_is_checked_up_to_the_steps_the_check_takes() -> None:
    handle = load_design(ROOT / "designs" / "gemm_bf16.py",
                         {"M": "2048", "K": "2048", "N": "2048"})
    placed = check_design(handle.ir)[0]
    assert hang_run(handle.ir, placed, handle.kernels).ended  # some 287,000 steps
    run = hang_run(handle.ir, placed, handle.kernels, events=60_000)
    assert not run.ended
    assert run.line() == (
        "hang check: no hang in the first 7,068 of the run's 33,792 kernel calls, simulated "
        "without data (the check stops there; --whole-run, or aiedsl sim, runs the whole run: "
        "a hang later in it is found only so)")
    assert run.covered() == (" (the hang check covered the first 7,068 of its 33,792 kernel "
                             "calls: --whole-run checks them all)")


FOREVER = '''
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def forever(inp: Tensor[256, i32], out: Tensor[256, i32]):
    a = fifo(Tensor[256, i32], name="a")
    o = fifo(Tensor[256, i32], name="o")
    copy = passthrough(Tensor[256, i32])

    @herd(rows=1)
    def core(x, y):
        with a.consume() as s, o.produce() as d:
            for _ in loop(2**63 - 1):
                copy(s, d)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(o, out)
'''
"""A core whose calls never wait: all of them one step of the engine."""


def test_calls_that_never_wait_are_checked_up_to_the_calls_the_check_takes(
        tmp_path: Path) -> None:
    (tmp_path / "forever.py").write_text(FOREVER)
    r = aiedsl("check", "forever.py", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-2:] == [
        "hang check: no hang in the first 100,000 of the run's 9,223,372,036,854,775,807 "
        "kernel calls, simulated without data (the check stops there; --whole-run, or aiedsl "
        "sim, runs the whole run: a hang later in it is found only so)",
        "forever: all checks pass on npu1_1col (the hang check covered the first 100,000 of "
        "its 9,223,372,036,854,775,807 kernel calls: --whole-run checks them all)"]


def test_a_whole_run_check_of_a_run_without_end_stops_at_its_calls_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import aiedsl.sim.hang_run as module

    (tmp_path / "forever.py").write_text(FOREVER)
    handle = load_design(tmp_path / "forever.py")
    placed = check_design(handle.ir)[0]
    monkeypatch.setattr(module, "WHOLE_CALLS", 10_000)  # 10,000,000 takes 10 s
    run = hang_run(handle.ir, placed, handle.kernels, whole=True)
    assert run.calls == 10_000 and not run.ended
    assert run.line().endswith(
        "kernel calls, simulated without data (the check stops there; the most --whole-run "
        "simulates is 10,000)")
    assert run.covered() == (" (the hang check covered the first 10,000 of its "
                             "9,223,372,036,854,775,807 kernel calls)")


LATE = '''
from aiedsl import Tensor, define, design, fifo, herd, i32, join, loop, runtime
from aiedsl.kernels import passthrough

T = 16
P = define("P", 19994)
K = 6
E = P + K


@design(device="npu1_1col")
def late(inp: Tensor[2 * E * T, i32], out: Tensor[2 * E * T, i32]):
    a, b, x = fifo(Tensor[T, i32]), fifo(Tensor[T, i32]), fifo(Tensor[T, i32])
    r0, r1 = fifo(Tensor[T, i32]), fifo(Tensor[T, i32])
    res = join([r0, r1])
    cp = passthrough(Tensor[T, i32])

    @herd()
    def c0():
        for _ in loop(P):
            with a.consume() as s, r0.produce() as d:
                cp(s, d)
            with b.consume() as s, x.produce() as d:
                cp(s, d)
        for _ in loop(K):
            with a.consume() as s, r0.produce() as d:
                cp(s, d)
        for _ in loop(K):
            with b.consume() as s, x.produce() as d:
                cp(s, d)

    @herd()
    def c1():
        for _ in loop(E):
            with x.consume() as s, r1.produce() as d:
                cp(s, d)

    with runtime() as rt:
        rt.fill(a, inp, (0, [E // 1000, 1000, T], [2000 * T, 2 * T, 1]))
        rt.fill(b, inp, (T, [E // 1000, 1000, T], [2000 * T, 2 * T, 1]))
        rt.drain(res, out)
'''
"""A hang-hunting tester's design: 19,994 balanced rounds through a join, then core 0 makes six
parts of one side before the other, and the join's buffers fill: a hang past the bound."""


def test_a_hang_past_the_bound_is_found_by_a_whole_run_check(tmp_path: Path) -> None:
    (tmp_path / "late.py").write_text(LATE)
    bounded = aiedsl("check", "late.py", cwd=tmp_path)
    assert bounded.returncode == 0, bounded.stderr
    assert bounded.stdout.splitlines()[-1] == (
        "late: all checks pass on npu1_1col (the hang check covered the first 47,998 of its "
        "60,000 kernel calls: --whole-run checks them all)")
    whole = aiedsl("check", "late.py", "--whole-run", cwd=tmp_path)
    assert whole.returncode == 3
    assert whole.stderr.startswith("late.py:38: " + PREFIX + "nothing can move and the runtime sequence is not "
                                   "done (2 core(s) blocked)\n")
    assert "more depth: join(..., depth=3) or more (now 2)" in whole.stderr


def test_a_run_stopped_at_its_limit_goes_on_where_it_stopped() -> None:
    """Engine.run(limit=) in pieces makes the run one Engine.run() makes."""
    from aiedsl.sim.hang_run import timing_machine
    from aiedsl.targets import get_target

    handle = load_design(ROOT / "designs" / "matmul_cascade.py")
    placed = check_design(handle.ir)[0]
    target = get_target(placed.device)
    whole = timing_machine(placed, handle.kernels, target)
    assert whole.engine.run()
    pieces = timing_machine(placed, handle.kernels, target)
    runs = 1
    while not pieces.engine.run(limit=7):
        runs += 1
    assert runs > 10
    assert pieces.runtime is not None and pieces.runtime.finished
    assert [(p.name, p.time, p.busy) for p in pieces.engine.procs] == \
        [(p.name, p.time, p.busy) for p in whole.engine.procs]


def test_a_design_read_back_from_json_builds_as_its_design_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A handle of an IR read back has none of the user's kernel references: the hang check
    times kernels only and looks none up (a reviewer: such a build failed, told to simulate
    the handle @design returned)."""
    import aiedsl
    from aiedsl import DesignHandle

    monkeypatch.chdir(tmp_path)
    (tmp_path / "ahead.py").write_text(AHEAD.replace("depth=2", "depth=3"))
    first = aiedsl.build("ahead.py", output="first", lower=False)
    ir = aiedsl.load_json((tmp_path / "first" / "design.json").read_text())
    again = aiedsl.build(DesignHandle(ir), output="second", lower=False)
    assert again.files == first.files
    assert "hang check: the run ends, simulated without data (32 kernel calls)\n" in \
        first.files["report.txt"]


def test_the_readme_gives_the_steps_the_check_takes() -> None:
    readme = (ROOT / "README.md").read_text()
    said = re.search(r"The check takes at most\s+([\d,]+)\s+steps of the engine \([^)]*\) "
                     r"and\s+([\d,]+)\s+kernel calls", readme)
    assert said is not None and (said[1], said[2]) == (f"{EVENTS:,}", f"{CALLS:,}")


RING = '''
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough

@design(device="npu1")
def ring(inp: Tensor[256, i32], out: Tensor[256, i32]):
    links = [fifo(Tensor[256, i32], name=f"l{i}") for i in range(8)]
    fin = fifo(Tensor[256, i32], name="fin")
    fout = fifo(Tensor[256, i32], name="fout")
    cp = passthrough(Tensor[256, i32])

    @herd(cols=4, rows=2)
    def core(x, y):
        i = x * 2 + (y if x % 2 == 0 else 1 - y)
        for _ in loop(4):
            with links[i].consume() as s, links[(i + 1) % 8].produce() as d:
                cp(s, d)
        if i == 0:
            with fin.consume() as s, fout.produce() as d:
                cp(s, d)

    with runtime() as rt:
        rt.fill(fin, inp)
        rt.drain(fout, out)
'''


def test_a_long_cycle_is_said_by_its_first_and_last_cores(tmp_path: Path) -> None:
    """A ring of 32 cores on npu2 gave a headline of 2,753 characters and a found: line of
    2,078, each core named four times (a scalability tester): past six cores the middle ones
    are counted."""
    (tmp_path / "ring.py").write_text(RING)
    r = aiedsl("check", "ring.py", cwd=tmp_path)
    assert r.returncode == 3
    first, _, found, *rest = r.stderr.splitlines()
    assert "; ... 5 more cores in turn ...; " in first
    assert ": these 8 cores (core[0,0], " in first
    assert found.count("can get") == 3 and "; ... 5 more cores ...; " in found
    assert len([line for line in rest if "waits here to acquire" in line]) == 3
    assert max(map(len, r.stderr.splitlines())) < 600
