"""Every invocation after the first: a barrier's lock and an rtp's slots keep what the last
invocation left (only the load sets a lock's initial value), so the second run of a loaded
design may start elsewhere than the first. The checks judge it (``barrier rerun``, ``rtp race``)
and the simulator runs it (``invocations=2``; ``aiedsl run --target sim --iters N``). The
designs are a hang tester's: on the NPU the first run passed and the second hung or read the
last run's threshold, while check and a one-invocation simulation passed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.sim.explain import Deadlock
from aiedsl.sim.machine import Machine
from aiedsl.targets import get_target

DesignFile = Callable[..., Path]

INIT_ONE = '''
import numpy as np
from aiedsl import Tensor, barrier, design, fifo, herd, i32, rtp, runtime, u8
from aiedsl.kernels import threshold

@design(device="npu1_1col")
def bar_init(inp: Tensor[1024, u8], out: Tensor[1024, u8]):
    a = fifo(Tensor[512, u8], name="a")
    b = fifo(Tensor[512, u8], name="b")
    thr = rtp(Tensor[16, i32], name="thr")
    go = barrier(name="go", initial=1)
    k = threshold(512)

    @herd()
    def core():
        for v in (1, 2):
            go.wait_for_value(v)
            with a.consume() as s, b.produce() as t:
                k(s, t, thr[0], 512)

    with runtime() as rt:
        rt.rtp_write(thr, 0, 7)
        rt.fill(a, inp, (0, [512], [1]))
        rt.drain(b, out, (0, [512], [1]))
        rt.sync()
        rt.rtp_write(thr, 0, 9)
        rt.set_barrier(go, 2)
        rt.fill(a, inp, (512, [512], [1]))
        rt.drain(b, out, (512, [512], [1]))

@bar_init.reference
def ref(inp):
    return np.concatenate([np.minimum(inp[:512], np.uint8(7)), np.minimum(inp[512:], np.uint8(9))])
'''
"""The tester's bar_init.py: the barrier starts at 1 (line 10), the core waits for 1 then 2
(line 16), the runtime sets 2 once (line 26) and never 1. On the NPU (mlir-aie's
``aie.lock {init = 1}``, an endless ``scf.for`` around ``use_lock(Acquire, 1)`` ...
``use_lock(Acquire, 2)``, one ``aiex.set_lock(2)``) the second invocation hung: the lock held 2."""

CYCLE = '''
import numpy as np
from aiedsl import Tensor, barrier, design, fifo, herd, i32, rtp, runtime, u8
from aiedsl.kernels import threshold

@design(device="npu1_1col")
def bar_cycle(inp: Tensor[1536, u8], out: Tensor[1536, u8]):
    a = fifo(Tensor[512, u8], name="a")
    b = fifo(Tensor[512, u8], name="b")
    thr = rtp(Tensor[16, i32], name="thr")
    go = barrier(name="go")
    k = threshold(512)

    @herd()
    def core():
        for v in (1, 2, 1):
            go.wait_for_value(v)
            with a.consume() as s, b.produce() as t:
                k(s, t, thr[0], 512)

    with runtime() as rt:
        rt.fill(a, inp)
        for i, (v, t) in enumerate(((1, 5), (2, 6), (1, 7))):
            rt.rtp_write(thr, 0, t)
            rt.set_barrier(go, v)
            rt.drain(b, out, (512 * i, [512], [1]))
            rt.sync()
{tail}
@bar_cycle.reference
def ref(inp):
    return np.concatenate([np.minimum(inp[512*i:512*(i+1)], np.uint8(t))
                           for i, t in enumerate((5, 6, 7))])
'''
"""The tester's bar_cycle.py: thresholds 5, 6, 7 for three thirds, each written (line 23)
before the set (line 24) that lets its third through; the core waits for 1, 2, 1 (line 16).
The last set leaves 1, so the next invocation's first wait passes at once: its first third
may be thresholded with the 7 the last invocation left."""

IMAGE = (np.arange(1024) % 256).astype(np.uint8)


def _unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let ``simulate`` skip the static checks (it still places the design)."""
    import aiedsl.sim
    from aiedsl.place import place

    monkeypatch.setattr(aiedsl.sim, "check_design",
                        lambda ir: (place(ir, get_target(ir.device)), {}))


def _check_error(path: Path) -> str:
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    return str(e.value)


CARRIED = ("a lock takes its initial value only when the design is loaded (mlir-aie's "
           "AIERTControl::addInitConfig writes aie.lock's init into the array's configuration), "
           "while each invocation runs the runtime sequence, whose aiex.set_lock replaces the "
           "value: every invocation after the first starts with the value the sequence set last")
"""Why the second invocation starts elsewhere, as every refusal below says it."""


def test_a_wait_for_a_value_only_the_load_gives_hangs_the_second_invocation(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first invocation passes; the second starts with the 2 the first left, and the core's
    wait for 1 never passes: check refuses it, the two-invocation simulation deadlocks in the
    second, and each fix the refusal gives runs both."""
    path = design_file(INIT_ONE)
    assert _check_error(path) == (
        "d.py:16: error [barrier rerun]: core[0,0] waits for barrier 'go' to hold 1, its "
        "initial value, which it holds only on the first invocation: the runtime never sets 1, "
        "and its last set (line 26) leaves 2 in the lock, where the next invocation starts, so "
        "there the wait never passes (a silent hang on the NPU from the second run on)\n"
        "  limit: a wait passes only while the barrier holds its value (aie.use_lock Acquire, "
        f"AIE2's acquire-equal); {CARRIED}\n"
        "  found: barrier 'go' holds 1 from the load only; every later invocation starts at 2, "
        "and the sequence gives it 2 (line 26)\n"
        "  d.py:10: barrier 'go' starts at 1\n"
        "  d.py:26: the sequence's last rt.set_barrier, to 2\n"
        "  fix: rt.set_barrier('go', 1) at the start of the runtime sequence, after its "
        "rtp_writes (each invocation then gives the value, where initial= gives it to the first "
        "only), or rt.set_barrier('go', 1) at its end, after an rt.sync() on its last drains "
        "(each invocation then leaves the lock as the load did)")
    _unchecked(monkeypatch)
    # one invocation passes, as it did before
    assert simulate(load_design(path), {"inp": IMAGE}).passed
    with pytest.raises(Deadlock) as e:
        simulate(load_design(path), {"inp": IMAGE}, invocations=2)
    assert str(e.value).splitlines()[0] == (
        "d.py:24: error [deadlock]: on invocation 2 of the runtime sequence (invocation 1 ran to its end; "
        "this one starts from what it left: barrier 'go' at 2, the rtp slots as last written, "
        "each core where it was (its program starts again as soon as it ends)): nothing can "
        "move and the runtime sequence is not done (1 core(s) blocked)")
    # on one timeline: the core started its next pass as soon as its first ended, and has
    # waited for 1 since, while the lock held 2
    assert "core[0,0] (0,2) waits for barrier 'go' to hold 1; it holds 2" in str(e.value)
    monkeypatch.undo()
    at_start = INIT_ONE.replace("        rt.rtp_write(thr, 0, 7)\n",
                                "        rt.rtp_write(thr, 0, 7)\n"
                                "        rt.set_barrier(go, 1)\n")
    at_end = INIT_ONE.replace("        rt.drain(b, out, (512, [512], [1]))\n",
                              "        rt.drain(b, out, (512, [512], [1]))\n"
                              "        rt.sync()\n"
                              "        rt.set_barrier(go, 1)\n")
    for fixed in (at_start, at_end):
        h = load_design(design_file(fixed))
        check_design(h.ir)
        assert simulate(h, {"inp": IMAGE}, invocations=3).passed


RESTARTS = ("and a core's program starts again as soon as it ends (it is the body of a loop "
            "that never ends), whatever the runtime sequence is still to do: nothing in it "
            "waits for a core, only for shim transfers")
"""Why a core's next pass may find a value the sequence replaces later."""

CYCLE_FIXED = CYCLE.replace("for v in (1, 2, 1):", "for v in (1, 2, 3):").replace(
    "((1, 5), (2, 6), (1, 7))", "((1, 5), (2, 6), (3, 7))")
"""The fix the refusal of CYCLE gives: the core's last wait is for 3, which its first does not
take, so its next pass waits at its first until the next invocation sets 1."""


@pytest.mark.parametrize("tail", ["", "        rt.set_barrier(go, 0)\n"])
def test_a_barrier_left_at_the_first_waits_value_lets_the_next_invocation_read_a_stale_rtp(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch, tail: str) -> None:
    """The core may end its program from the last set of 1 (line 24) and start it again at
    once, passing its wait for 1: the next invocation's first call may run before its threshold
    5 lands and use the 7 the first left. Setting the barrier back to 0 at the end, after the
    last sync, comes after that (the fix README gave before, wrong on the NPU: only the
    shim's drain is waited for, and the core is back at its wait by then). Check refuses both;
    the simulator's second invocation computes the first third with 7; the fix given, a last
    wait for another value, runs three."""
    path = design_file(CYCLE.format(tail=tail))
    assert _check_error(path) == (
        "d.py:23: error [rtp race]: on every invocation after the first, rt.rtp_write of "
        "'thr'[0] races core[0,0]'s calls that read it: they may see its 5 or the 7 the "
        "invocation before left (line 23)\n"
        "  limit: an rtp buffer keeps what the last invocation wrote (nothing but the runtime "
        f"sequence writes it), and {CARRIED}, {RESTARTS}, so no call reading a slot may start "
        "before the slot's first write when that write changes its value\n"
        "  found: core[0,0] may end its program from line 24 and start it again at once (a "
        "core's program loops forever) while barrier 'go' holds 1 (set at line 24), so it "
        "passes its wait for 1 (line 16) before the sequence's later sets: every invocation "
        "after the first finds it past that wait, as if the barrier started at 1, not at its "
        "initial 0; the fills and barrier values before the write let core[0,0] start 1 call "
        "that reads the slot\n"
        "  d.py:23: the last write, of 7\n"
        "  d.py:16: core[0,0]'s wait for 1\n"
        "  fix: have core[0,0]'s last wait be for a value its first wait (line 16) does not "
        "take, set where that pass should go on (the barrier then holds that value when "
        "core[0,0] starts its program again, and its first wait holds it until the next "
        "invocation sets 1) (every invocation then starts as the first does), or have the calls "
        "that should see the new value wait for a value the barrier does not hold when an "
        "invocation starts, set after the rtp_write")
    image = (np.arange(1536) % 256).astype(np.uint8)
    _unchecked(monkeypatch)
    assert simulate(load_design(path), {"inp": image}).passed
    (out,) = simulate(load_design(path), {"inp": image}, invocations=2).checks
    assert not out.passed and out.line().splitlines() == [
        "FAIL out: worst element [7] got 7 want 5 (|error| 2; integers must match exactly)",
        "  wrong: 500 of 1,536 elements (32.5%), all within [6:512]",
        "  note: invocation 2 (which starts from what invocation 1 left: barrier 'go' at "
        f"{0 if tail else 1}, the rtp slots as last written, each core where it was (its "
        "program starts again as soon as it ends)) computed this; invocation 1, from the load, "
        "matched"]
    monkeypatch.undo()
    h = load_design(design_file(CYCLE_FIXED.format(tail=tail)))
    check_design(h.ir)
    assert simulate(h, {"inp": image}, invocations=3).passed


def test_a_value_set_only_after_the_runtime_waits_for_it_on_the_second_invocation(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first invocation finds 1 in the lock from the load; the second finds the 2 the first
    left, and the runtime sets 1 again only after the sync that needs the core past its wait
    for 1: the order check, run with the barrier starting at 2, refuses it."""
    source = INIT_ONE.replace("        rt.drain(b, out, (512, [512], [1]))\n",
                              "        rt.drain(b, out, (512, [512], [1]))\n"
                              "        rt.sync()\n"
                              "        rt.set_barrier(go, 1)\n"
                              "        rt.set_barrier(go, 2)\n")
    path = design_file(source)
    assert _check_error(path) == (
        "d.py:24: error [barrier rerun]: on every invocation after the first (a hang that "
        "depends on timing there): the runtime waits at the rt.sync() of line 24 for its drain of 'b' (line 23), "
        "which needs core[0,0] past its wait for 1 (line 16), but sets barrier 'go' to 1 only "
        "after that wait: the runtime waits forever (a silent hang on the NPU)\n"
        "  limit: a wait passes only while the barrier holds its value (aie.use_lock Acquire, "
        "AIE2's acquire-equal: it blocks until the core's lock equals the value); the lock holds "
        "only the values set before, so a runtime wait whose drain needs a core past a wait for "
        f"a value comes after the set that gives it; {CARRIED}\n"
        "  found: barrier 'go' starts each invocation after the first at 2, where the "
        "sequence's last set (line 31) leaves it, not at its initial 1 (unless a core's next "
        "pass gets past its wait for 1 first: it starts its program again as soon as it ends, "
        "and whether that comes before the last set depends on timing); barrier 'go' holds 2 "
        "while the runtime waits (left by the invocation before: its last set, line 31)\n"
        "  d.py:16: core[0,0]'s wait for 1\n"
        "  d.py:23: the drain of 'b' waited for\n"
        "  d.py:30: rt.set_barrier to 1, after the wait\n"
        "  fix: move rt.set_barrier('go', 1) (line 30) before the rt.sync() at line 24: the "
        "drain it waits for comes only once core[0,0] is past its wait for 1, so a set after it "
        "never comes; or rt.set_barrier('go', 1) at the end of the runtime sequence, after an "
        "rt.sync() on its last drains, so that every invocation starts as the first does")
    _unchecked(monkeypatch)
    assert simulate(load_design(path), {"inp": IMAGE}).passed
    # the simulated core starts its next pass at once and is at its wait for 1 when line 30
    # sets it: this timing passes, a core slower to get there would hang
    assert simulate(load_design(path), {"inp": IMAGE}, invocations=2).passed


def test_a_barrier_the_sequence_leaves_where_it_started_is_judged_once(
        design_file: DesignFile) -> None:
    """A core whose last wait takes another value than its first, with the barrier set back
    to its initial value after the last drains: every invocation starts as the first, nothing
    more to judge, and three simulated invocations pass."""
    source = CYCLE_FIXED.format(tail="        rt.set_barrier(go, 0)\n")
    h = load_design(design_file(source))
    check_design(h.ir)
    image = (np.arange(1536) % 256).astype(np.uint8)
    result = simulate(h, {"inp": image}, invocations=3)
    assert result.passed and result.machine.design.barriers[0].init == 0


def test_invocations_is_a_count(design_file: DesignFile) -> None:
    h = load_design(design_file(CYCLE.format(tail="        rt.set_barrier(go, 0)\n")))
    with pytest.raises(DesignError) as e:
        simulate(h, invocations=0)
    assert str(e.value).split(": ", 1)[1] == (
        "error [run options]: invocations=0\n"
        "  limit: an int from 1 to 64 (how many times the runtime sequence runs, each simulated "
        "in full)\n"
        "  found: int 0\n"
        "  fix: give invocations=1, or 2 to run a second invocation from what the first left")
    # invocations=10**9 ran out of memory making a billion invocations' host tensors; 10**5000
    # was also a bare "python error" (the int's text past Python's 4300 digits)
    with pytest.raises(DesignError) as e:
        simulate(h, invocations=10**5000)
    assert str(e.value).split(": ", 1)[1].splitlines()[:1] == [
        "error [run options]: invocations=100000...000000 (5001 digits)"]


def test_run_on_the_simulator_with_iters_simulates_a_second_invocation(
        design_file: DesignFile) -> None:
    """``aiedsl run --target sim --iters 3`` says that it simulates two of the runs asked, the
    second from what the first left, and runs them; ``--iters 1`` simulates one, as before."""
    path = design_file(CYCLE_FIXED.format(tail="        rt.set_barrier(go, 0)\n"))

    def run(*args: str) -> list[str]:
        done = subprocess.run([sys.executable, "-m", "aiedsl", "run", str(path), "--target",
                               "sim", "-o", str(path.parent / "b"), *args],
                              capture_output=True, text=True, cwd=path.parent)
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()

    lines = run("--iters", "3")
    assert lines[1] == (
        "running on the simulator (--target sim); of the 3 runs asked (warmup and iters "
        "count runs on the NPU) it simulates 2: the first, from the load, and the second, from "
        "what the first left (barrier locks, rtp slots, locals, and each core where it was: "
        "its program starts again as soon as it ends), as every later run on the NPU starts; "
        "the time shown is the first's")
    assert lines[3].startswith("PASS out")
    assert run()[1] == "running on the simulator (--target sim)"
    # a huge --iters is said by its ends, not in 4000 digits (a tester)
    assert run("--iters", "9" * 4000, "--warmup", "1")[1].startswith(
        "running on the simulator (--target sim); of the 100000...000000 (4001 digits) runs "
        "asked (warmup and iters count runs on the NPU) it simulates 2")


RUNNING_SUM = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, local, loop, runtime
from aiedsl.kernels import add, passthrough

@design(device="npu1_1col")
def rsum(inp: Tensor[128, i32], out: Tensor[16, i32]):
    a = fifo(Tensor[16, i32])
    b = fifo(Tensor[16, i32])
    acc = local(Tensor[16, i32], initial=100)
    addk = add(Tensor[16, i32])
    copy = passthrough(Tensor[16, i32])

    @herd()
    def core():
        for _ in loop(8):
            with a.consume() as t:
                addk(acc, t, acc)
        with b.produce() as o:
            copy(acc, o)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)

@rsum.reference
def reference(inp):
    return inp.reshape(8, 16).sum(axis=0) + 100
'''
"""A running sum in a local that starts at 100: on the NPU each run starts from the sum the
one before left (its initial value is written at load only)."""


def test_a_local_carries_into_the_second_invocation_whose_output_is_not_judged(
        design_file: DesignFile) -> None:
    """The second invocation starts from the sum the first left, as the NPU's second run does;
    the reference describes the first only (the NPU checks that one too), so the result is the
    first's and passes."""
    machines: dict[int, Machine] = {}  # each is told "run", and the first "check" too

    def watch(stage: str, m: Machine) -> None:
        machines.setdefault(id(m), m)

    result = simulate(load_design(design_file(RUNNING_SUM)), {"inp": np.ones(128, np.int32)},
                      invocations=2, watch=watch)
    assert result.passed and (result.outputs["out"] == 108).all()
    first, second = machines.values()
    assert (first.locals[("acc", "core[0,0]")] == 108).all()
    assert (second.locals[("acc", "core[0,0]")] == 116).all()


HALVES = '''
import numpy as np
from aiedsl import Tensor, barrier, design, fifo, herd, i32, rtp, runtime, u8
from aiedsl.kernels import threshold

@design(device="npu1_1col")
def halves(inp: Tensor[1024, u8], out: Tensor[1024, u8]):
    a = fifo(Tensor[512, u8], name="a")
    b = fifo(Tensor[512, u8], name="b")
    thr = rtp(Tensor[16, i32], name="thr")
    go = barrier(name="go")
    k = threshold(512)

    @herd()
    def core():
        with a.consume() as s, b.produce() as t:
            k(s, t, thr[0], 512)
        go.wait_for_value(1)
        with a.consume() as s, b.produce() as t:
            k(s, t, thr[0], 512)

    with runtime() as rt:
        rt.rtp_write(thr, 0, 7)
        rt.fill(a, inp)
        rt.drain(b, out, (0, [512], [1]))
        rt.sync()
        rt.rtp_write(thr, 0, 9)
        rt.set_barrier(go, 1)
        rt.drain(b, out, (512, [512], [1])){tail}

@halves.reference
def ref(inp):
    return np.concatenate([np.minimum(inp[:512], np.uint8(7)), np.minimum(inp[512:], np.uint8(9))])
'''
"""Both halves filled at once (line 23); the core's wait for 1 (line 17) holds the second half
until the runtime has written 9 (line 26) and set 1 (line 27). The sequence leaves 1, so on
the next invocation the wait holds nothing: the second half may be thresholded with 7."""


def test_a_rewrite_the_barrier_holds_back_only_on_the_first_invocation(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch) -> None:
    path = design_file(HALVES.format(tail=""))
    assert _check_error(path) == (
        "d.py:26: error [rtp race]: on every invocation after the first, rt.rtp_write of "
        "'thr'[0] races core[0,0]'s calls that read it: they may see the new value or the old "
        "one\n"
        "  limit: a slot is rewritten only when every call the data issued before it may start "
        "has finished, as the drains waited for before it show (the write is one register "
        f"write: nothing else orders it with the core); {CARRIED}\n"
        "  found: barrier 'go' starts each invocation after the first at 1, where the "
        "sequence's last set (line 27) leaves it, not at its initial 0; the fills and barrier "
        "sets before it let core[0,0] start 2 calls that read the slot; the drains waited for "
        "show 1 finished, so call 2 may read either value\n"
        "  d.py:23: the last rt.fill of 'a' before it\n"
        "  d.py:22: the previous write\n"
        "  fix: before the rtp_write, rt.sync() on the drains of every call filled so far, and "
        "issue the fills of the calls that should see the new value after it; or "
        "rt.set_barrier('go', 0) at the end of the runtime sequence, after an rt.sync() on its "
        "last drains")
    _unchecked(monkeypatch)
    assert simulate(load_design(path), {"inp": IMAGE}).passed
    (out,) = simulate(load_design(path), {"inp": IMAGE}, invocations=2).checks
    assert not out.passed and (out.got, out.want) == (7, 9)  # the second half with the 7
    monkeypatch.undo()
    h = load_design(design_file(HALVES.format(tail="\n        rt.sync()\n"
                                                   "        rt.set_barrier(go, 0)")))
    check_design(h.ir)
    assert simulate(h, {"inp": IMAGE}, invocations=2).passed
