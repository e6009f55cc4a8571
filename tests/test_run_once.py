"""A core that runs its program once (``@herd(forever=False)``, IRON's
``Worker(while_true=False)``): no forever loop in its ``aie.core``, one pass simulated, and a
design that runs once per load: more runs refused, the later-run checks not applied. An IRON
porter could not write one (every core was wrapped in the forever loop)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Callable

import pytest

import aiedsl
from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.sim import simulate
from test_barrier_reruns import INIT_ONE
from test_locals import RUNNING_SUM
from test_toolchain import FakeXrt, fake_npu, fake_tools  # noqa: F401

DesignFile = Callable[..., Path]

ONCE = RUNNING_SUM.replace("@herd()", "@herd(forever=False)")
"""test_locals' running sum over eight tiles in a local that starts at 100, run once (the herd
at line 13)."""



def _core_text(mlir: str) -> str:
    return mlir[mlir.index("aie.core("):mlir.index("aie.end") + len("aie.end")]


def test_a_core_of_forever_false_has_no_forever_loop(design_file: DesignFile) -> None:
    art = aiedsl.build(design_file(ONCE), output="out")
    core = _core_text((art.path / "aie.mlir").read_text())
    assert "c_forever" not in core
    assert re.sub(r' loc\("[^)]*\)', "", core) == (
        "aie.core(%tile_0_2) {\n"
        "      %c0 = arith.constant 0 : index\n"
        "      %c1 = arith.constant 1 : index\n"
        "      %n1 = arith.constant 8 : index\n"
        "      scf.for %i2 = %c0 to %n1 step %c1 {\n"
        "        %view3 = aie.objectfifo.acquire @a(Consume, 1) : "
        "!aie.objectfifosubview<memref<16xi32>>\n"
        "        %view3_0 = aie.objectfifo.subview.access %view3[0] : "
        "!aie.objectfifosubview<memref<16xi32>> -> memref<16xi32>\n"
        "        func.call @add_i32_16(%local_acc, %view3_0, %local_acc) : (memref<16xi32>, "
        "memref<16xi32>, memref<16xi32>) -> ()\n"
        "        aie.objectfifo.release @a(Consume, 1)\n"
        "      }\n"
        "      %view4 = aie.objectfifo.acquire @b(Produce, 1) : "
        "!aie.objectfifosubview<memref<16xi32>>\n"
        "      %view4_0 = aie.objectfifo.subview.access %view4[0] : "
        "!aie.objectfifosubview<memref<16xi32>> -> memref<16xi32>\n"
        "      func.call @passthrough_i32_16(%local_acc, %view4_0) : (memref<16xi32>, "
        "memref<16xi32>) -> ()\n"
        "      aie.objectfifo.release @b(Produce, 1)\n"
        "      aie.end")
    ir = (art.path / "design.json").read_text()
    assert '"forever": false' in ir
    # the tile table (check's, report.txt's) says which core runs once
    assert "core[0,0] (once): add_i32_16, passthrough_i32_16\n" in (
        art.path / "report.txt").read_text()
    # and so does map.svg, drawn from the same table
    assert '<text class="runs" x="8" y="30">core[0,0] (once):</text>' in (
        art.path / "map.svg").read_text()


def test_the_default_core_keeps_its_forever_loop(design_file: DesignFile) -> None:
    art = aiedsl.build(design_file(RUNNING_SUM),
                       output="out")
    core = _core_text((art.path / "aie.mlir").read_text())
    assert "%c_forever = arith.constant 9223372036854775807 : index" in core
    assert "scf.for %run = %c0 to %c_forever step %c1 {" in core


def test_a_core_run_once_simulates_its_one_pass(design_file: DesignFile) -> None:
    r = simulate(load_design(design_file(ONCE)))
    assert r.passed, r.lines()


def test_more_runs_of_a_design_run_once_are_refused(design_file: DesignFile) -> None:
    path = design_file(ONCE)
    said = ("d.py:13: error [run once]: core[0,0] runs its program once (forever=False), so "
            "the design runs once per load; {asked}\n"
            "  limit: 1 run of a design with a core of forever=False (a second run would wait "
            "for that core, stopped: a hang on the NPU)\n"
            "  found: {runs} runs\n"
            "  fix: {fix}, or leave forever=False out of the @herd for the core to run its "
            "program again each time it ends")
    with pytest.raises(DesignError) as e:
        simulate(load_design(path), invocations=2)
    assert str(e.value) == said.format(asked="2 invocations were asked", runs=2,
                                       fix="simulate one invocation (invocations=1)")
    art = aiedsl.build(path, output="out")
    with pytest.raises(DesignError) as e:
        art.run(target="sim", iters=2, warmup=1)
    assert str(e.value) == said.format(asked="3 runs were asked (iters=2, warmup=1)", runs=3,
                                       fix="run it once (iters=1, warmup=0)")
    r = subprocess.run([sys.executable, "-m", "aiedsl", "run", str(path), "--iters", "2"],
                       capture_output=True, text=True, cwd=path.parent)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == said.format(asked="2 runs were asked (--iters 2)", runs=2,
                                   fix="run it once (--iters 1, no --warmup)") + "\n"
    assert art.run(target="sim").passed


def test_forever_takes_a_bool(design_file: DesignFile) -> None:
    with pytest.raises(DesignError) as e:
        load_design(design_file(ONCE.replace("forever=False", "forever=0")))
    assert str(e.value) == (
        "d.py:13: error [herd]: herd 'core' has forever=0\n"
        "  limit: True (the program runs again each time it ends) or False (it runs once)\n"
        "  found: 0\n"
        "  fix: write forever=False for a core that runs its program once")


def test_the_checks_of_later_runs_leave_a_design_run_once_alone(
        design_file: DesignFile) -> None:
    """The barrier starts at 1 from the load, which only the first run has: refused for a core
    that runs again (test_barrier_reruns), fine for one that runs once."""
    path = design_file(INIT_ONE.replace("@herd()", "@herd(forever=False)"))
    handle = load_design(path)
    check_design(handle.ir)
    assert simulate(handle).passed


def test_a_design_run_once_is_launched_once_on_the_npu(
        fake_npu: FakeXrt, fake_tools: dict[str, Path]) -> None:
    """A local with initial= made the NPU run add a warm-up launch (the run the reference
    describes is the first): a design run once was launched twice, and the second launch would
    wait for the stopped core (a tester)."""
    (fake_tools["root"] / "once.py").write_text(textwrap.dedent(ONCE).lstrip("\n"))
    art = aiedsl.build(fake_tools["root"] / "once.py", output="out")
    art.run(target="npu")
    assert [c[0] for c in fake_npu.calls if c[0] == "launch"] == ["launch"]


def test_a_placed_design_given_to_simulate_is_the_one_judged(design_file: DesignFile) -> None:
    """simulate(handle, placed=...) judged handle's cores: a run-once placed design with a
    handle of forever cores deadlocked in invocation 2, said to start its program again."""
    art = aiedsl.build(design_file(ONCE), output="out")
    forever = load_design(design_file(RUNNING_SUM, "forever.py"))
    with pytest.raises(DesignError) as e:
        simulate(forever, placed=art.design, invocations=2)
    assert e.value.rule == "run once"
    # and the other way round: forever cores placed, run twice
    assert simulate(art.handle, placed=aiedsl.build(forever, write=False).design,
                    invocations=2).passed


def test_a_core_run_once_that_waits_on_nothing_holds_no_later_run_up(
        design_file: DesignFile) -> None:
    idle = RUNNING_SUM.replace("    @herd()\n", "    @herd(name='idle', forever=False)\n"
                               "    def idle():\n        pass\n\n    @herd()\n")
    art = aiedsl.build(design_file(idle), output="out")
    assert art.run(target="sim", iters=2).passed  # two runs, not refused


def test_forever_takes_numpy_bools_and_the_warmup_is_said_as_typed(
        design_file: DesignFile) -> None:
    path = design_file(ONCE.replace("forever=False", "forever=np.False_"))
    assert not load_design(path).ir.cores[0].forever
    r = subprocess.run([sys.executable, "-m", "aiedsl", "run", str(path), "--warmup", "1"],
                       capture_output=True, text=True, cwd=path.parent)
    assert r.returncode == 2
    assert "; 2 runs were asked (--warmup 1, and the timed run)\n" in r.stderr


HELD = ONCE.replace(
    "        for _ in loop(8):\n            with a.consume() as t:\n                addk(acc, t, acc)\n",
    "        for _ in loop(7):\n            with a.consume() as t:\n                addk(acc, t, acc)\n"
    "        t = a.acquire(\"consume\")\n        addk(acc, t, acc)\n")
"""The running sum run once, its last input element never released."""


def test_a_core_run_once_that_ends_holding_an_element_is_told_why(
        design_file: DesignFile) -> None:
    """"the next run starts without them": a core run once has no next run (a reviewer)."""
    with pytest.raises(DesignError) as e:
        check_design(load_design(design_file(HELD)).ir)
    assert str(e.value) == (
        "d.py:18: error [hang: held at end]: core[0,0] ends its program still holding 1 "
        "element(s) of 'a' (consume); harmless on the NPU, where the core has stopped, but "
        "aiedsl counts what a core takes by its releases (the balance of fills and drains)\n"
        "  fix: release 'a' (consume) before the program ends")
    out = ONCE.replace("        with b.produce() as o:\n            copy(acc, o)\n",
                       "        o = b.acquire(\"produce\")\n        copy(acc, o)\n")
    with pytest.raises(DesignError) as e:
        check_design(load_design(design_file(out, "out.py")).ir)
    assert str(e.value) == (
        "out.py:18: error [hang: held at end]: core[0,0] ends its program still holding 1 "
        "element(s) of 'b' (produce); they are never handed on, and their consumer waits for "
        "them forever\n"
        "  fix: release 'b' (produce) before the program ends")


def test_a_core_run_once_says_so_in_its_hint_and_its_timing(design_file: DesignFile) -> None:
    no_loop = ONCE.replace("        for _ in loop(8):\n            with a.consume() as t:\n"
                           "                addk(acc, t, acc)\n",
                           "        with a.consume() as t:\n            addk(acc, t, acc)\n")
    with pytest.raises(DesignError) as e:
        check_design(load_design(design_file(no_loop)).ir)
    assert str(e.value).endswith(
        "core[0,0]'s function has no loop and runs once (forever=False): wrap it in "
        "`for _ in loop(8):`")


def test_a_core_run_once_that_works_past_the_hosts_wait_has_no_back_to_back_runs(
        design_file: DesignFile) -> None:
    after = ONCE.replace("            copy(acc, o)\n", "            copy(acc, o)\n"
                         "        for _ in loop(1000):\n            addk(acc, acc, acc)\n")
    t = simulate(load_design(design_file(after))).timing
    assert t.runs_once and t.after_cycles > 0 and t.back_to_back_cycles is None
    assert [line for line in t.lines() if "after the host's wait" in line][0].endswith(
        "; the design runs once per load (a core of forever=False)")
