"""The simulator: shipped designs pass, semantics match the hardware's, timing and traces."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from aiedsl.errors import DesignError
from aiedsl.ir.types import Dim, Pattern, dims_index
from aiedsl.kernels import block_dims
from aiedsl.loader import load_design
import aiedsl.sim as sim_package
from aiedsl.sim import Deadlock, simulate
from aiedsl.sim.compare import compare
from aiedsl.sim.patterns import pattern_steps
from aiedsl.sim.summary import significant

DESIGNS = ["passthrough", "vector_scalar_mul", "gemm_bf16", "gemm_i8"]
GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.mark.parametrize("name", DESIGNS)
def test_shipped_designs_pass(name: str, in_root: Path) -> None:
    result = simulate(load_design(f"designs/{name}.py"))
    assert result.passed, [c.line() for c in result.checks]


def test_gemm_at_another_size_and_seed(in_root: Path) -> None:
    d = load_design("designs/gemm_bf16.py", {"M": "256", "K": "128", "N": "512"})
    assert simulate(d, seed=7).passed


def test_outputs_equal_numpy_exactly_for_integer_designs(in_root: Path) -> None:
    result = simulate(load_design("designs/vector_scalar_mul.py"), seed=3)
    want = (result.inputs["inp"].astype(np.int64) * int(result.inputs["factor"][0])).astype(
        np.int16)
    assert (result.outputs["out"] == want).all()


def test_forward_regroups_elements(in_root: Path) -> None:
    # mlir-aie's add_one_objFifo: 16-element buffers forwarded as 8-element ones and back
    d = load_design(GOLDEN / "add_one_objfifo.py")
    inp = np.arange(64, dtype=np.int32)
    result = simulate(d, {"inp": inp}, check=False)
    assert (result.outputs["out"] == inp + 41).all()


def test_dims_outermost_dimension_repeats_until_the_element_is_done() -> None:
    # IRON's C unpacking: 4 dims cover 4096 elements of a 16384-element join buffer
    idx = dims_index((Dim(size=16, stride=256), Dim(size=4, stride=4), Dim(size=16, stride=16),
                      Dim(size=4, stride=1)), 16384)
    assert idx is not None and idx.size == 16384
    assert sorted(idx.tolist()) == list(range(16384))
    assert idx[:6].tolist() == [0, 1, 2, 3, 16, 17]
    assert idx[4096:4098].tolist() == [4096, 4097]


def test_pattern_steps_match_the_pattern_order() -> None:
    p = Pattern(offset=64, sizes=(2, 3, 4, 8), strides=(0, 256, 32, 1))
    steps = list(pattern_steps(p, 12))
    assert [s.size for s in steps] == [12] * 16
    assert np.concatenate(steps).tolist() == p.indices().tolist()


def test_comparison_names_the_worst_element() -> None:
    want = np.zeros((4, 4), dtype=np.float32)
    got = want.copy()
    got[2, 3] = 0.5
    got[1, 1] = 0.25
    c = compare("C", got, want, "f32")
    assert not c.passed
    assert c.line() == ("FAIL C: worst element [2, 3] got 0.5 want 0 (|error| 0.5; tolerance "
                        "0.0001 relative + 0 absolute)\n"
                        "  wrong: 2 of 16 elements (12.5%), all within [1:3, 1:4]")
    # a square result that is the reference transposed says so
    want = np.arange(16, dtype=np.float32).reshape(4, 4)
    assert compare("C", want.T.copy(), want, "f32").line().splitlines()[1:] == [
        "  wrong: 12 of 16 elements (75%)",
        "  note: it equals the reference transposed: rows and columns are swapped on the way (a "
        "tiles() order, a dims_to_stream, or the reference's own layout)"]
    assert compare("X", np.arange(4), np.arange(4), "i32").line() == \
        "PASS X: exact (integers must match exactly)"


def test_the_worst_element_is_the_one_nearest_to_failing() -> None:
    """The worst element is the one using the largest share of its own tolerance. Ranked by
    error minus tolerance, an element whose expected value is 0 and error 0 scored -TINY with
    a relative tolerance and was named though element 1 was 0.5 off (a tester's rope PASS
    named a zero-error element while 259,155 of 262,144 differed)."""
    once = compare("C", np.float32([0, 100.5, 3]), np.float32([0, 100, 3]), "bf16",
                   rounds="once")
    assert once.line() == ("PASS C: worst element [1] got 100.5 want 100 (|error| 0.5; "
                           "tolerance 0.0078125 relative (one rounding per element))")
    # the share, not the error: 0.02 off at 3 uses more of its tolerance than 0.5 off at 100
    share = compare("C", np.float32([0, 100.5, 3.02]), np.float32([0, 100, 3]), "bf16",
                    rounds="once")
    assert share.line().startswith("PASS C: worst element [2] got 3.02 want 3 (|error| 0.02")
    # a FAIL names a failing element; of two equally far over (same share, same error), the
    # first
    fail = compare("C", np.float32([2, 100.5, 3.1, 3.1]), np.float32([2, 100, 3, 3]), "bf16",
                   rounds="once")
    assert fail.line() == (
        "FAIL C: worst element [2] got 3.1 want 3 (|error| 0.1; tolerance 0.0078125 relative "
        "(one rounding per element))\n  wrong: 2 of 4 elements (50%), all within [2:4]")
    # integers: any error uses all of an exact tolerance; the largest error, first index
    assert compare("X", np.int32([0, 5, 1, 5]), np.int32([0, 0, 0, 0]), "i32").line() == (
        "FAIL X: worst element [1] got 5 want 0 (|error| 5; integers must match exactly)\n"
        "  wrong: 3 of 4 elements (75%), all within [1:4]")


def test_an_exact_pass_names_no_worst_element() -> None:
    """Every element equal: the line said 'worst element [759] got 0 want 0 (|error| 0 ...)' for
    a float output; it says exact, as for integers. A float PASS that is not exact still names
    its worst element."""
    want = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)
    assert compare("C", want.copy(), want, "f32").line() == (
        "PASS C: exact, every element equal (allowed: tolerance 0.0001 relative + 0.0001 "
        "absolute)")
    assert compare("C", want.copy(), want, "f32", rounds="once").line() == (
        "PASS C: exact, every element equal "
        "(allowed: tolerance 0.0001 relative (one rounding per element))")
    near = want.copy()
    near[1, 3] += np.float32(1e-5)
    assert compare("C", near, want, "f32").line().startswith(
        "PASS C: worst element [1, 3] got -0.0666567 want -0.0666667 (|error| 1e-05; ")
    # NaN where the reference has NaN, declared expected: equal too
    want[0, 0] = np.nan
    assert compare("C", want.copy(), want, "f32", nonfinite=True).line() == (
        "PASS C: exact, every element equal (allowed: tolerance 0.0001 relative + 0.0001 "
        "absolute)")


POISON_FIX = (
    "most likely they were read before anything wrote them, as an accumulator a kernel sums "
    "into with no zero call first, elements no kernel writes that a drain sends, or elements "
    "of the output no drain writes; fix: zero each accumulator inside its produce() before the "
    "first kernel sums into it (aiedsl.kernels.zero(Tensor[...]) or your own zero kernel), have "
    "a kernel write every element a drain sends, and drain every element of the output")


def test_a_saturated_int8_output_is_not_taken_for_the_poison() -> None:
    """(an int8 MLP tester) A reference that multiplied in int8 wanted small values where the
    kernels' ReLU'd requantize saturated to 127, next to -128 around the range: the note sent
    its author looking for a missing zero call. The type's largest value is not counted."""
    want = np.zeros(16, dtype=np.int8)
    got = np.full(16, 127, dtype=np.int8)
    assert compare("Y", got, want, "i8", poison=True).note is None
    got[:12] = -120  # a sum from -128: still said
    assert compare("Y", got, want, "i8", poison=True).note is not None


def test_a_fail_of_the_simulators_poison_says_so() -> None:
    """A matvec whose zero call was removed FAILed with 'got -2147440949 want 164618', the
    simulator's poison for unwritten i32 memory plus partial sums, and nothing said so. Counted:
    signed integers nearer the poison than the wanted value around the type's range (a sum
    from -2147483648 that went negative wraps to near 2147483647), NaN for floats, exactly the
    poison for unsigned ones."""
    want = np.arange(-8, 8, dtype=np.int32) * 1000
    got = want.copy()
    got[3] = np.int32(-2147483648 + 5)       # poison plus a positive sum
    got[4] = np.int32(2147483647 - 20)       # poison plus a negative sum, wrapped
    got[5] = 77                              # wrong, but of the design's own numbers
    c = compare("C", got, want, "i32", poison=True)
    assert c.poisoned == 2
    assert c.line().splitlines()[2] == (
        "  note: 2 of the 3 wrong elements are nearer -2147483648 than the wanted value "
        "(counting around i32's range: 2147483647 is next to it), and -2147483648 is what the "
        "simulator fills i32 memory nothing has written with (i32's smallest value; a sum that "
        "starts there stays near it): " + POISON_FIX)
    # the same FAIL from the NPU (no poison there) or with no poison-like element: no note
    assert compare("C", got, want, "i32").note is None
    got[3:5] = want[3:5]
    assert compare("C", got, want, "i32", poison=True).note is None
    # NaN for a float type; one element
    wantf = np.ones(8, dtype=np.float32)
    gotf = wantf.copy()
    gotf[6] = np.nan
    assert compare("C", gotf, wantf, "f32", poison=True).line().splitlines()[2] == (
        "  note: the one wrong element is NaN where the reference is not, and NaN is what the "
        "simulator fills f32 memory nothing has written with (a sum it enters stays NaN): "
        "most likely it was read before anything wrote it, as an accumulator a kernel sums "
        "into with no zero call first, elements no kernel writes that a drain sends, or "
        "elements of the output no drain writes; fix: zero each accumulator inside its "
        "produce() before the first kernel sums into it (aiedsl.kernels.zero(Tensor[...]) or "
        "your own zero kernel), have a kernel write every element a drain sends, and drain "
        "every element of the output; a kernel computes NaN as well, from inf - inf, 0 x inf "
        "or inf / inf after a value overflowed (an exp of a large input): if every element is "
        "written before it is read, look there")
    # u8: exactly 255
    want8 = np.zeros(8, dtype=np.uint8)
    got8 = want8.copy()
    got8[:3] = 255
    got8[3] = 254
    assert compare("C", got8, want8, "u8", poison=True).line().splitlines()[2] == (
        "  note: 3 of the 4 wrong elements are 255, and 255 is what the simulator fills u8 "
        "memory nothing has written with (u8's largest value): " + POISON_FIX)


def test_poison_like_values_the_reference_holds_tell_nothing() -> None:
    """A u8 threshold writes 255 itself, an i16 output may hold -20000: a wrong element there
    is not taken for unwritten memory."""
    want8 = np.array([0, 255, 0, 255], dtype=np.uint8)
    assert compare("C", want8[::-1].copy(), want8, "u8", poison=True).note is None
    want16 = np.array([-20000, 5, 6, 7], dtype=np.int16)
    got16 = want16.copy()
    got16[1] = -32760
    c = compare("C", got16, want16, "i16", poison=True)
    assert not c.passed and c.note is None and c.poisoned == 0
    wantf = np.array([np.nan, 1.0], dtype=np.float32)
    c = compare("C", np.array([np.nan, np.nan], dtype=np.float32), wantf, "f32", poison=True,
                nonfinite=True)
    assert not c.passed and c.note is None


def test_unwritten_outputs_fail(in_root: Path, tmp_path: Path) -> None:
    d = load_design("designs/passthrough.py")
    result = simulate(d)
    assert result.passed
    out = result.outputs["out"].copy()
    out[5] = np.iinfo(np.int32).min  # the poison value a drain that never happened leaves
    assert not compare("out", out, result.inputs["inp"], "i32").passed


def test_timing_of_the_gemm(in_root: Path) -> None:
    t = simulate(load_design("designs/gemm_bf16.py")).timing
    # 512 matmul calls of 64^3 (16 cores x 4 tiles x 8 K steps) in the modelled time
    assert t.ops == 2 * 512 ** 3
    assert 100e-6 < t.seconds < 1e-3
    assert t.gops == pytest.approx(2 * 512 ** 3 / t.seconds / 1e9)
    assert len(t.core_busy) == 16 and all(0 < b <= 1 for b in t.core_busy.values())
    # Like compared with like (a channel's moving data, not its waiting for a receiver): the
    # memtile channel of A's broadcast, busy 84% but mostly waiting, was named once. Nothing is
    # busy most of the time: host-memory reads half, the runtime issuing its tasks about as
    # much. DRAM, the busier, was named; freed, it saves 13%, the runtime's issuing 38% (a
    # tester): every kind busy a tenth of the time is made free in a run of its own, the one
    # whose freeing saves most is named, and every saving is said (a reviewer: with only the
    # two busiest measured, gemm_i16's runtime, third, saving 37%, went unnamed)
    b = t.bottleneck
    assert b.kind == "runtime" and b.resource == "runtime" and 0.4 < b.utilisation < 0.55
    assert [(f.kind, round(f.saved or 0, 2)) for f in b.freed] == [
        ("runtime", 0.38), ("dram", 0.13), ("dma", 0.08), ("compute", 0.01)]
    assert [w for w, _ in b.measured] == [
        "DRAM reads", "DMA 'shim (0, 0) -> a_l3_0' moving data", "core[0,0] computing"]
    assert t.channel_moving["memtile (0, 1) forward -> a_0"] < 0.3
    assert t.channel_busy["memtile (0, 1) forward -> a_0"] > 0.8
    assert b.dram_bytes == t.dram_bytes > 3 * 512 * 512 * 2
    assert b.sentence().endswith(
        "; nothing is busy most of the time, though: the other kinds measured: "
        + ", ".join(f"{w} at {s:.0%}" for w, s in b.measured[:2]) + " and "
        f"{b.measured[2][0]} at {b.measured[2][1]:.0%}; simulated again with each made free "
        "(kernels timed only), the run is 38% shorter with shim DMA tasks issued at no cost, 13% "
        "shorter with host memory of unlimited bandwidth, 8% shorter with DMA channels and "
        "streams of unlimited rate, and 1% shorter with kernels that take no time")
    assert t.seconds == pytest.approx(t.invocation_s + t.device_seconds)


@pytest.mark.parametrize("defines, named, busiest", [
    # the DMA channel is busier (51%) but the runtime's issuing, freed, saves more (46%)
    ({"N": 11264, "TILE": 256}, "runtime", "dma"),
    # the runtime is busier (51%) but the channel, freed, saves more (38% against 25%)
    ({"N": 10240, "TILE": 2048}, "dma", "runtime")])
def test_the_bottleneck_is_what_saves_most_freed(in_root: Path, defines: dict[str, int],
                                                  named: str, busiest: str) -> None:
    """A reviewer: with only the busiest kind and the runner-up made free, the one saving most
    could go unnamed, and after a swap the sentence's "next is" named a third resource, not the
    one measured. Every kind measured is named in the sentence, and the one saving most is the
    bottleneck."""
    b = simulate(load_design("designs/passthrough.py", defines)).timing.bottleneck
    assert b.kind == named
    saved = {f.kind: f.saved or 0.0 for f in b.freed}
    assert set(saved) == {"runtime", "dma", "dram"} and max(saved, key=saved.__getitem__) == named
    words = {"runtime": "the runtime issuing shim DMA tasks", "dram": "DRAM reads",
             "dma": "DMA 'shim (0, 0) "}
    said = b.sentence()
    # the busier resource is said: in the list of the others measured, or, a runtime beside a
    # DMA bottleneck, in its own words before it (not twice)
    assert [w for w, _ in b.measured if w.startswith(words[busiest])] or (
        busiest == "runtime" and " (the runtime also spends 51% of the time issuing shim DMA "
        "tasks one by one, which the transfers wait for: each tensor already moves in one task "
        "per direction)" in said)
    assert not [w for w, _ in b.measured if w.startswith(words[named])]
    assert all(f"{w} at {s:.0%}" in said for w, s in b.measured)
    assert all(f.words() in said for f in b.freed)


def test_a_free_runtime_issues_its_register_writes_free_too(in_root: Path) -> None:
    """The runtime made free costs nothing for its rtp writes either (a register write is a
    share of a task's cost): the line said shim DMA tasks alone (a reviewer: tasks alone save
    36.9%, tasks and writes 43.1%)."""
    b = simulate(load_design("designs/threshold_rtp.py", {"N": 262144, "LINE": 1024})
                 ).timing.bottleneck
    assert b.rtp_writes and "runtime" in {f.kind for f in b.freed}
    assert "% shorter with shim DMA tasks and register writes issued at no cost" in b.sentence()


def test_a_small_designs_throughput_shows_three_significant_digits(in_root: Path) -> None:
    """4096 int16 multiplies in about 126 us: 0.0325 GOPS (it printed 0.0, saying nothing)."""
    t = simulate(load_design("designs/vector_scalar_mul.py")).timing
    assert t.ops == 4096
    line = next(x for x in t.lines() if x.startswith("throughput:"))
    assert line == "throughput: 0.0325 GOPS"
    assert float(line.split()[1]) == pytest.approx(4096 / t.seconds / 1e9, rel=2e-3)


@pytest.mark.parametrize("x, text", [
    (698.6, "698.6"), (12345.67, "12,345.7"), (12.345, "12.3"), (5.5, "5.50"),
    (0.0969, "0.0969"), (0.03254, "0.0325"), (1.23e-7, "0.000000123"), (0.0, "0"),
])
def test_rates_keep_three_significant_digits(x: float, text: str) -> None:
    assert significant(x) == text


def test_clock_override_keeps_host_costs_in_seconds(in_root: Path) -> None:
    # A faster array clock shortens what counts cycles (streams, kernels); the invocation cost
    # and the firmware's per-task time are seconds of other clocks and stay what they are.
    d = load_design("designs/passthrough.py")
    a, b = simulate(d).timing, simulate(d, clock_hz=2e9).timing
    assert a.invocation_s == b.invocation_s > 0
    assert b.device_seconds < a.device_seconds
    assert b.cycles == pytest.approx(b.device_cycles + b.invocation_s * 2e9)


def test_simulation_is_deterministic(in_root: Path) -> None:
    d = load_design("designs/gemm_bf16.py", {"M": "256", "N": "256"})
    a, b = simulate(d, seed=1), simulate(d, seed=1)
    assert a.timing.cycles == b.timing.cycles
    assert np.array_equal(a.outputs["C"], b.outputs["C"])


def test_older_objects_are_frozen_only_while_simulating(in_root: Path) -> None:
    # the cycle collector does not walk what was alive before the run while it runs (its full
    # collections cost ~20 ms for nothing), gets it back after, also when the run deadlocks,
    # and leaves alone what a caller froze itself
    seen: list[int] = []
    d = load_design("designs/passthrough.py")

    def reference(*args: np.ndarray) -> np.ndarray:
        seen.append(gc.get_freeze_count())
        return fn(*args)

    fn, d.reference_fn = d.reference_fn, reference
    # CPython 3.12 freezes a few hundred objects of its own at start-up: none of a caller's
    from aiedsl.frozen_gc import _FROZEN_AT_START as interpreter

    assert gc.get_freeze_count() <= interpreter
    assert simulate(d).passed
    assert seen[-1] > interpreter and gc.get_freeze_count() == 0
    hang = load_design(Path(__file__).resolve().parent / "hang_corpus" / "broadcast_under_buffered.py")
    with pytest.raises(Deadlock):
        simulate(hang)
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        mine = gc.get_freeze_count()
        assert simulate(d).passed
        assert 0 < seen[-1] <= mine and gc.get_freeze_count() > 0  # none added, none given back
    finally:
        gc.unfreeze()


def test_older_objects_are_frozen_while_checking(in_root: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """check_design keeps the cycle collector off what was alive before it, as a run does (a
    full collection landing in a small design's check took it from 3 to 30 ms), and gives it
    back after, also when the check refuses the design."""
    from aiedsl import checks
    from aiedsl.frozen_gc import _FROZEN_AT_START as interpreter

    seen: list[int] = []
    real = checks.validate

    def validate(d: Any, *args: Any) -> Any:
        seen.append(gc.get_freeze_count())
        return real(d, *args)

    monkeypatch.setattr(checks, "validate", validate)
    d = load_design("designs/passthrough.py")
    checks.check_design(d.ir)
    assert seen[-1] > interpreter and gc.get_freeze_count() <= interpreter
    hang = load_design(Path(__file__).resolve().parent / "hang_corpus" / "broadcast_under_buffered.py")
    checks.check_design(hang.ir)  # the checks pass it (a full buffer is the sim's to find)
    bad = d.ir.model_copy(update={"ir_version": 99})
    with pytest.raises(DesignError):
        checks.check_design(bad)
    assert gc.get_freeze_count() <= interpreter


def test_runs_in_one_process_do_not_keep_the_machines_their_callers_dropped(
        in_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """(a notebook tester) A dropped result's machine is a garbage cycle only a full
    collection frees; frozen at the next run's start, none freed it: a sweep of simulations
    grew by 16 MB a run. A run starts with a full collection while an earlier simulation's
    machine is alive, and once the process has grown by GROWTH; a check alone, in a process
    that has simulated nothing, collects nothing (a command's check and run pay none)."""
    import weakref

    from aiedsl import checks, frozen_gc

    collected: list[int] = []
    real = frozen_gc.gc.collect
    monkeypatch.setattr(frozen_gc.gc, "collect", lambda *a: collected.append(1) or real(*a))
    monkeypatch.setattr(frozen_gc, "_previous", None)
    monkeypatch.setattr(frozen_gc, "_baseline", None)
    d = load_design("designs/passthrough.py")
    checks.check_design(d.ir)
    assert collected == []
    first = weakref.ref(simulate(d).machine)
    assert collected == []
    kept = simulate(d)  # starts with a collection: the dropped machine is freed
    assert first() is None and collected == [1]
    checks.check_design(d.ir)  # the kept machine is alive: collected once, not at every run
    checks.check_design(d.ir)
    assert collected == [1, 1] and kept.machine is not None
    monkeypatch.setattr(frozen_gc, "GROWTH", 0.0)
    monkeypatch.setattr(frozen_gc, "LEAST_GROWTH", -1)
    checks.check_design(d.ir)  # grown (by any amount): collected
    assert collected == [1, 1, 1]


def test_a_freeze_inside_ours_counts_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A check inside a run (nested older_objects_frozen) neither counts the frozen objects (a
    walk of every one of them) nor gives them back early."""
    from aiedsl import frozen_gc

    counted: list[int] = []
    real = gc.get_freeze_count

    def count() -> int:
        counted.append(real())
        return counted[-1]

    monkeypatch.setattr(frozen_gc.gc, "get_freeze_count", count)
    with frozen_gc.older_objects_frozen():
        with frozen_gc.older_objects_frozen():
            assert real() > 0
        assert real() > 0
    assert len(counted) == 1 and real() <= frozen_gc._FROZEN_AT_START


@pytest.mark.parametrize("name", ["passthrough", "gemm_bf16"])
def test_the_trace_has_a_track_for_every_busy_core_and_channel(
        in_root: Path, tmp_path: Path, name: str) -> None:
    """Sending channels too (shim fills, memtile and core MM2S): only receivers and cores had
    tracks, so the channel the summary called the bottleneck had none."""
    path = tmp_path / "t.json"
    result = simulate(load_design(f"designs/{name}.py"), trace=str(path))
    doc = json.loads(path.read_text())
    tracks = {e["args"]["name"] for e in doc["traceEvents"]
              if e["name"] == "thread_name"}
    busy = {p.name for p in result.machine.engine.procs if p.busy > 0}
    assert tracks == busy
    assert any("->" in t for t in tracks) and any("<-" in t for t in tracks)


@pytest.mark.parametrize("name", ["passthrough", "gemm_bf16"])
def test_each_tracks_spans_add_up_to_its_busy_time(
        in_root: Path, tmp_path: Path, name: str) -> None:
    """A shim drain's write-burst overhead counted as busy but had no span: a tester's
    transposing drain (4-byte runs) showed 2 us of a 26.6 us busy channel, and the trace ended
    24.6 us before the run did."""
    path = tmp_path / "t.json"
    result = simulate(load_design(f"designs/{name}.py"), trace=str(path))
    doc = json.loads(path.read_text())
    tids = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"]
            if e["ph"] == "M" and e["name"] == "thread_name"}
    spans: dict[str, float] = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            spans[tids[e["tid"]]] = spans.get(tids[e["tid"]], 0.0) + e["dur"]
    clock = result.timing.clock_hz
    for proc in result.machine.engine.procs:
        if proc.busy > 0 and "<-" in proc.name:  # receivers, shim drains among them
            assert spans[proc.name] == pytest.approx(proc.busy / clock * 1e6, rel=1e-6), \
                proc.name


def test_trace_is_chrome_trace_event_json(in_root: Path, tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    simulate(load_design("designs/gemm_bf16.py"), trace=str(path))
    doc = json.loads(path.read_text())
    assert set(doc) == {"traceEvents", "displayTimeUnit", "otherData"}
    events = doc["traceEvents"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {f"core[{x},{y}]" for x in range(4) for y in range(4)} <= names
    assert any(n.startswith("shim") for n in names) and any(n.startswith("memtile") for n in names)
    for e in events:  # the trace-event format's required fields, by phase
        assert isinstance(e["name"], str) and isinstance(e["pid"], int)
        assert isinstance(e["tid"], int) and e["ph"] in ("X", "M")
        if e["ph"] == "X":
            assert e["ts"] >= 0 and e["dur"] >= 0 and isinstance(e["cat"], str)
    kernels = [e for e in events if e["ph"] == "X" and e["name"].startswith("matmul_")]
    assert len(kernels) == 512


@pytest.mark.parametrize("device", ["npu1", "npu2"])
def test_trace_spans_on_one_track_never_overlap(in_root: Path, tmp_path: Path,
                                                device: str) -> None:
    """Complete events on one thread must nest; rounded start and duration apart, 12 spans of
    gemm_bf16 (63 on npu2) overlapped the next by 0.1 ns (a tester's strict loader). Times
    are whole tenths of a nanosecond."""
    path = tmp_path / "t.json"
    simulate(load_design("designs/gemm_bf16.py", device=device), trace=str(path))
    by_track: dict[int, list[tuple[int, int]]] = {}
    for e in json.loads(path.read_text())["traceEvents"]:
        if e["ph"] == "X":
            ts, dur = round(e["ts"] * 10_000), round(e["dur"] * 10_000)
            assert ts == e["ts"] * 10_000 or abs(ts - e["ts"] * 10_000) < 1e-6
            by_track.setdefault(e["tid"], []).append((ts, ts + dur))
    assert by_track
    for spans in by_track.values():
        spans.sort()
        assert all(end <= nxt for (_, end), (nxt, _) in zip(spans, spans[1:]))


def test_cli_sim_and_run(in_root: Path, tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "aiedsl.cli", "run", "designs/passthrough.py",
                        "-o", str(tmp_path / "b")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "running on the simulator" in r.stdout and "PASS out: exact" in r.stdout
    assert (tmp_path / "b" / "aie.mlir").exists()
    r = subprocess.run([sys.executable, "-m", "aiedsl.cli", "sim", "designs/gemm_bf16.py",
                        "-D", "M=256"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "PASS C: worst element" in r.stdout and "bottleneck:" in r.stdout


def test_split_and_join_of_unequal_parts(design_file) -> None:  # type: ignore[no-untyped-def]
    """A 768-element element split 256 + 512 and joined back: each part counts whole elements
    (the balance check used to count a join in the first part's size: 0.75 per run)."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, join, loop, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def uneq(inp: Tensor[3072, i32], out: Tensor[3072, i32]):
            whole = fifo(Tensor[768, i32], name="whole")
            lo, hi = whole.split([Tensor[256, i32], Tensor[512, i32]], names=["lo", "hi"])
            r0 = fifo(Tensor[256, i32], name="r0")
            r1 = fifo(Tensor[512, i32], name="r1")
            back = join([r0, r1], name="back")
            c0, c1 = passthrough(Tensor[256, i32]), passthrough(Tensor[512, i32])

            @herd(rows=2)
            def core(x, y):
                for _ in loop(4):
                    with [lo, hi][y].consume() as a, [r0, r1][y].produce() as b:
                        (c0 if y == 0 else c1)(a, b)

            with runtime() as rt:
                rt.fill(whole, inp)
                rt.drain(back, out)

        @uneq.reference
        def reference(inp):
            return inp.copy()
        ''')
    result = simulate(load_design(path))
    assert result.passed, [c.line() for c in result.checks]


def test_dims_that_walk_in_order_move_fresh_data(design_file) -> None:  # type: ignore[no-untyped-def]
    """Blocks one row high are plain order: the memtile's send of them is not a view of the
    buffer it refills. A core's DMA leaves what it gets to be written when the core reads it,
    so such a view read A's next element and B's in place of this one (found by the fuzzer,
    seed 175307156)."""
    assert dims_index(tuple(Dim(size=s, stride=t) for s, t in block_dims(16, 32, 1, 16)),
                      512) is None
    path = design_file('''
        import numpy as np
        from aiedsl import Tensor, design, fifo, herd, i16, loop, runtime
        from aiedsl.kernels import add, block_dims, unblock_dims

        @design(device="npu2_1col")
        def rows(X0: Tensor[2048, i16], X1: Tensor[2048, i16], Z: Tensor[2048, i16]):
            k = add(Tensor[16, 32, i16])
            a0_l3 = fifo(Tensor[512, i16], name="a0_l3")
            a0 = a0_l3.forward(Tensor[16, 32, i16], name="a0",
                               dims_to_stream=block_dims(16, 32, 1, 16))
            a1_l3 = fifo(Tensor[512, i16], name="a1_l3")
            a1 = a1_l3.forward(Tensor[16, 32, i16], name="a1",
                               dims_to_stream=block_dims(16, 32, 1, 16))
            z = fifo(Tensor[16, 32, i16], name="z")
            z_l3 = z.forward(Tensor[512, i16], name="z_l3",
                             dims_to_stream=unblock_dims(16, 32, 1, 16))

            @herd(cols=1, rows=1)
            def core(x, y):
                for _ in loop(4):
                    with a0.consume() as v0, a1.consume() as v1, z.produce() as o:
                        k(v0, v1, o)

            with runtime() as rt:
                rt.fill(a0_l3, X0)
                rt.fill(a1_l3, X1)
                rt.drain(z_l3, Z)

        @rows.reference
        def reference(X0, X1):
            return X0 + X1
        ''')
    result = simulate(load_design(path), seed=3)
    assert result.passed, [c.line() for c in result.checks]


ACCUMULATES_UNWRITTEN = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels import add

@design(device="npu1_1col")
def acc(x: Tensor[1024, i32], y: Tensor[1024, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    b = fifo(Tensor[1024, i32], name="b", depth=1)
    k = add(Tensor[1024, i32])

    @herd()
    def core():
        with a.consume() as s, b.produce() as d:
            k(s, d, d)

    with runtime() as rt:
        rt.fill(a, x)
        rt.drain(b, y)

@acc.reference
def reference(x):
    return x.copy()
'''


@pytest.fixture
def without_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let ``simulate`` skip the static checks (it still places the design): for designs
    ``check`` refuses, to see what the simulator makes of them."""
    from aiedsl.place import place
    from aiedsl.targets import get_target

    monkeypatch.setattr(sim_package, "check_design",
                        lambda ir: (place(ir, get_target(ir.device)), {}))


def test_a_kernel_reading_a_buffer_nothing_wrote_fails(design_file, without_checks) -> None:  # type: ignore[no-untyped-def]
    """``d = s + d`` with ``d`` never written: on the NPU ``d`` holds the last run's data. The
    buffers started as zeros, and the run said PASS; they start as the smallest integer now.
    (``check`` refuses the design, ``error [stale read]``: tests/test_stale_reads.py.)"""
    result = simulate(load_design(design_file(ACCUMULATES_UNWRITTEN)))
    assert not result.passed
    assert (result.outputs["y"] == result.inputs["x"] + np.iinfo(np.int32).min).all()
    x = result.inputs["x"]
    i = int(np.argmax(np.abs((x + np.iinfo(np.int32).min).astype(np.int64) - x)))
    got = int(x[i]) + np.iinfo(np.int32).min
    # integers in full (they printed as -2.14748e+09); the note names the poison
    assert [c.line() for c in result.checks] == [
        f"FAIL y: worst element [{i}] got {got} want {int(x[i])} (|error| {abs(got - int(x[i]))}; "
        "integers must match exactly)\n  wrong: all 1,024 elements\n"
        "  note: all 1,024 wrong elements are nearer -2147483648 than the wanted value (counting "
        "around i32's range: 2147483647 is next to it), and -2147483648 is what the simulator "
        "fills i32 memory nothing has written with (i32's smallest value; a sum that starts "
        "there stays near it): most likely they were read before anything wrote them, as an "
        "accumulator a kernel sums into with no zero call first, elements no kernel writes that "
        "a drain sends, or elements of the output no drain writes; fix: zero each accumulator "
        "inside its produce() before the first kernel sums into it (aiedsl.kernels.zero("
        "Tensor[...]) or your own zero kernel), have a kernel write every element a drain "
        "sends, and drain every element of the output"]


@pytest.mark.parametrize("name", ["int8", "uint8", "int16", "uint16", "int32", "uint32",
                                  "float32", "bfloat16"])
def test_unwritten_memory_is_never_zero(name: str) -> None:
    """NaN for floats, the smallest signed or the largest unsigned integer: an unsigned type's
    smallest is 0, which would let a never-zeroed u8 accumulator pass."""
    import ml_dtypes

    from aiedsl.dtypes import unwritten

    dt = np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)
    mem = unwritten((3,), dt)
    assert mem.dtype == dt
    if dt.kind in "iu":
        info = np.iinfo(dt)
        assert (mem == (info.max if dt.kind == "u" else info.min)).all()
    else:
        assert np.isnan(mem.astype(np.float32)).all()


def test_a_gemm_whose_accumulator_is_never_zeroed_fails(in_root: Path, tmp_path: Path,
                                                        without_checks: None) -> None:
    """gemm_bf16 without ``zero_c(acc)``, one C tile per core: zeros in L1 made it PASS.
    (``check`` refuses the design, ``error [stale read]``: tests/test_stale_reads.py.)"""
    src = Path("designs/gemm_bf16.py").read_text()
    assert "                zero_c(acc)\n" in src
    path = tmp_path / "gemm_no_zero.py"
    path.write_text(src.replace("                zero_c(acc)\n", ""))
    result = simulate(load_design(path, {"M": "256", "K": "256", "N": "256"}))
    assert not result.passed
    assert np.isnan(result.outputs["C"]).all()


def test_an_empty_loop_takes_no_steps(in_root: Path, tmp_path: Path) -> None:
    """``for _ in loop(2**62): pass`` in a core: the simulator stepped every iteration (it
    never answered); the core's compiler deletes such a loop, and it costs no cycles."""
    src = Path("designs/passthrough.py").read_text()
    head = "        for _ in loop(N // TILE):\n"
    assert head in src
    path = tmp_path / "empty_loop.py"
    path.write_text(src.replace(head, "        for _ in loop(2**62):\n            for _ in loop(3):"
                                      "\n                pass\n" + head))
    plain = simulate(load_design("designs/passthrough.py"))
    result = simulate(load_design(path))
    assert result.passed
    assert result.timing.device_cycles == plain.timing.device_cycles


TRANSPOSE_ON_MEMTILE = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough

@design(device="npu1_1col")
def tr(A: Tensor[4, 16, 16, i32], C: Tensor[4, 16, 16, i32]):
    l3 = fifo(Tensor[16, 16, i32], name="l3")
    l1 = l3.forward(dims_to_stream=[(16, 1), (16, 16)], name="l1")
    c = fifo(Tensor[16, 16, i32], name="c")
    k = passthrough(Tensor[16, 16, i32])

    @herd()
    def core():
        for _ in loop(4):
            with l1.consume() as s, c.produce() as d:
                k(s, d)

    with runtime() as rt:
        rt.fill(l3, A)
        rt.drain(c, C)

@tr.reference
def reference(A):
    return A.transpose(0, 2, 1).copy()
'''


def test_a_memtile_bd_steps_4_byte_elements_innermost(design_file) -> None:  # type: ignore[no-untyped-def]
    """A word stride innermost on a memtile BD transposes i32 tiles (mlir-aie's DMABDOp::verify
    wants stride 1 there only for elements narrower than a word); aiedsl refused it before."""
    result = simulate(load_design(design_file(TRANSPOSE_ON_MEMTILE)))
    assert result.passed, [c.line() for c in result.checks]
    a = result.inputs["A"].reshape(4, 16, 16)
    assert (result.outputs["C"].reshape(4, 16, 16) == a.transpose(0, 2, 1)).all()


def test_u8_inputs_span_their_range_so_a_threshold_is_exercised(
        in_root: Path, tmp_path: Path) -> None:
    """u8 inputs were drawn in 0..7, so threshold_rtp's thresholds (50, 200) changed nothing:
    a reference using the first threshold for both passes said PASS too."""
    from aiedsl.sim.compare import make_inputs

    handle = load_design("designs/threshold_rtp.py")
    inp = make_inputs(handle.ir, 0)["inp"]
    assert inp.dtype == np.uint8 and inp.min() < 50 < 200 < inp.max()
    src = Path("designs/threshold_rtp.py").read_text()
    right = "np.minimum(inp, np.uint8(THR_B))])"
    assert right in src
    path = tmp_path / "wrong.py"
    path.write_text(src.replace(right, "np.minimum(inp, np.uint8(THR_A))])"))
    assert not simulate(load_design(path)).passed
    assert simulate(handle).passed


WRONG_I8 = """
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i8, i32, loop, runtime
from aiedsl.kernels import declare, buffer, matmul, zero
from aiedsl.kernels.layout import block, unblock

M = K = N = 64

def wrong(a, b, c):  # the kernel's reference kept its sums in 16 bits
    A = unblock(a.reshape(-1), 64, 64, 4, 8).astype(np.int64)
    B = unblock(b.reshape(-1), 64, 64, 8, 8).astype(np.int64)
    C = unblock(c.reshape(-1), 64, 64, 4, 8).astype(np.int64)
    c[...] = block((C + A @ B).astype(np.int16).astype(np.int32), 4, 8).reshape(c.shape)

@design(device="npu1")
def g(A: Tensor[64, 64, i8], B: Tensor[64, 64, i8], C: Tensor[64, 64, i32]):
    good = matmul(64, 64, 64, i8, i32)
    mm = declare("mm16", source="mm.cc", entry=good.ir.entry, args=list(good.ir.args),
                 reference=wrong, cycles=good.ir.cycles, cost="as matmul", ops=good.ir.ops)
    z = zero(Tensor[64, 64, i32])
    a, b = fifo(Tensor[64, 64, i8], name="a"), fifo(Tensor[64, 64, i8], name="b")
    c = fifo(Tensor[64, 64, i32], name="c", depth=1)

    @herd()
    def core():
        with a.consume() as ta, b.consume() as tb, c.produce() as tc:
            z(tc)
            mm(ta, tb, tc)

    with runtime() as rt:
        rt.fill(a, A)
        rt.fill(b, B)
        rt.drain(c, C)

@g.reference
def reference(A, B):
    return (A.astype(np.int64) @ B.astype(np.int64)).astype(np.int32)
"""


def test_i8_inputs_span_their_range_so_a_16_bit_sum_fails(design_file) -> None:  # type: ignore[no-untyped-def]
    """A tester: i8 inputs were drawn in -8..7 "so products stay in range", so an int8 matmul
    whose reference wrapped its sums at 16 bits passed on every seed, and -128 was never drawn.
    Any sum of int8 products fits the core's 32-bit accumulator: they are drawn over the whole
    range now, as aiedsl kernel test draws them, and the wrong reference fails."""
    from aiedsl.sim.compare import make_inputs

    handle = load_design(design_file(WRONG_I8))
    ins = make_inputs(handle.ir, 0)
    assert {x.dtype for x in ins.values()} == {np.dtype(np.int8)}
    assert all(x.min() == -128 and x.max() == 127 for x in ins.values())
    assert (ins["A"] == np.random.default_rng(0).integers(-128, 128, 64 * 64).astype(
        np.int8).reshape(64, 64)).all()
    for seed in range(3):
        result = simulate(handle, seed=seed)
        assert not result.passed
        exact = result.inputs["A"].astype(np.int64) @ result.inputs["B"].astype(np.int64)
        assert np.abs(exact).max() > 2 ** 15  # beyond what the 16-bit sums hold


def test_a_narrow_output_the_inputs_saturate_says_so(in_root: Path) -> None:
    """gemm_i8 with SHIFT=4, the shift that suited inputs of -8..7: full-range inputs put
    almost every C at -128 or 127, where a kernel that rounds or shifts wrongly passes; the
    comparison says so under the PASS. With the design's default shift (12 at K=512) C is
    mid-range and nothing is said."""
    result = simulate(load_design("designs/gemm_i8.py", {"M": "256", "N": "256", "SHIFT": "4"}))
    assert result.passed
    want = result.outputs["C"]
    at = int(np.count_nonzero((want == -128) | (want == 127)))
    assert at > 0.95 * want.size
    assert result.checks[0].note == (
        f"{at / want.size:.0%} of the expected values ({at:,} of {want.size:,}) sit at i8's "
        "limits, -128 and 127: the inputs saturate 'C', so this comparison says little of the "
        "values in between; give inputs of smaller magnitude, or scale the output down further "
        "(a larger shift)")
    assert result.checks[0].line().endswith("(a larger shift)")
    plain = simulate(load_design("designs/gemm_i8.py", {"M": "256", "N": "256"}))
    assert plain.passed and plain.checks[0].note is None


def test_a_tensor_the_cores_read_as_u8_is_drawn_over_bytes(
        in_root: Path, tmp_path: Path) -> None:
    """IRON's color_threshold fills u8 lines from an int8 tensor: drawn as small i8 values
    (bytes 0..7 and 248..255), every threshold from 8 to 247 gave the same output, and a
    reference with the wrong threshold said PASS."""
    from aiedsl.sim.compare import make_inputs

    src = Path("designs/threshold_rtp.py").read_text()
    typed = src.replace("inp: Tensor[N, u8]", "inp: Tensor[N, i8]").replace(
        "import numpy as np", "import numpy as np\nfrom aiedsl import i8").replace(
        "return np.concatenate([np.minimum(inp,", "inp = inp.view(np.uint8)\n"
        "    return np.concatenate([np.minimum(inp,")
    assert typed.count("Tensor[N, i8]") == 1 and "inp.view" in typed
    path = tmp_path / "as_i8.py"
    path.write_text(typed)
    handle = load_design(path)
    inp = make_inputs(handle.ir, 0)["inp"]
    assert inp.dtype == np.int8
    byte = inp.view(np.uint8)
    assert ((byte >= 8) & (byte < 248)).mean() > 0.9  # drawn as i8: none at all
    assert simulate(handle).passed
    # a tensor read as its own type is drawn exactly as before
    plain = load_design("designs/threshold_rtp.py")
    assert (make_inputs(plain.ir, 0)["inp"] == np.random.default_rng(0).integers(
        0, 256, size=8192).astype(np.uint8)).all()


EXP = '''
import numpy as np
from aiedsl import Tensor, bf16, design, fifo, herd, loop, runtime
from aiedsl.kernels import exp_bf16
@design(device="npu1_1col")
def d(x: Tensor[4096, bf16], y: Tensor[4096, bf16]):
    a = fifo(Tensor[1024, bf16], name="a")
    b = fifo(Tensor[1024, bf16], name="b")
    k = exp_bf16(1024)

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as s, b.produce() as t:
                k(s, t)

    with runtime() as rt:
        rt.fill(a, x)
        rt.drain(b, y)

@d.reference
def reference(x):
    e = np.exp(x.astype(np.float32))
    return {wrong}
'''
"""An element-wise bf16 exp; the reference is right, or zeroes every result of x < -1.7."""


def test_an_element_wise_output_is_held_to_each_element(design_file) -> None:  # type: ignore[no-untyped-def]
    """bf16 outputs were allowed 2^-7 of the largest expected value absolute, for sums rounded
    at every step; an element-wise kernel does not sum, and a result wrong in 4% of its
    elements (all below 0.19 while the largest is 25) passed."""
    right = simulate(load_design(design_file(EXP.format(wrong="e"))))
    assert right.passed
    assert right.checks[0].tolerance == "tolerance 0.0078125 relative (one rounding per element)"
    wrong = simulate(load_design(design_file(EXP.format(
        wrong="np.where(x.astype(np.float32) < -1.7, 0, e)"), "w.py")))
    assert not wrong.passed
    assert wrong.checks[0].line().startswith("FAIL y: worst element")


def test_what_a_kernel_sums_into_keeps_the_absolute_tolerance() -> None:
    from aiedsl import Tensor, bf16
    from aiedsl.compare import compare
    from aiedsl.kernels import exp_bf16, matmul, reduce_sum, relu

    assert matmul(64, 64, 64).ir.sums and reduce_sum(4, 64).ir.sums
    assert not exp_bf16(1024).ir.sums and not relu(Tensor[1024, bf16]).ir.sums
    want = np.array([100.0, 0.25], dtype=np.float32)
    got = np.array([100.0, 0.5], dtype=np.float32)  # 0.25 off: a quarter ulp of 100 in bf16
    assert compare("c", got, want, "bf16").passed
    assert not compare("c", got, want, "bf16", rounds="once").passed


TWO_STAGES = '''
import numpy as np
from aiedsl import Tensor, bf16, design, fifo, herd, loop, runtime
from aiedsl.kernels import exp_bf16, passthrough, vector_scalar
@design(device="npu1_1col")
def d(x: Tensor[4096, bf16], y: Tensor[4096, bf16]):
    a = fifo(Tensor[1024, bf16], name="a")
    m = fifo(Tensor[1024, bf16], name="m")
    b = fifo(Tensor[1024, bf16], name="b")
    e, r = exp_bf16(1024), vector_scalar("mul", Tensor[1024, bf16])

    @herd(rows=2)
    def core(x, y):
        if y == 0:
            for _ in loop(4):
                with a.consume() as s, m.produce() as t:
                    e(s, t)
        else:
            for _ in loop(4):
                with m.consume() as s, b.produce() as t:
                    r(s, t, 1.0)

    with runtime() as rt:
        rt.fill(a, x)
        rt.drain(b, y)

@d.reference
def reference(x):
    return np.exp(x.astype(np.float32))
'''
"""exp on one core, a multiplication of its bf16 results on the next: a result rounded, then
computed with again (by 1, so the reference needs no second rounding)."""


def test_which_outputs_may_carry_more_than_one_rounding(design_file) -> None:  # type: ignore[no-untyped-def]
    from aiedsl.ir.program import rounding

    shipped = Path(__file__).resolve().parent.parent / "designs"
    assert rounding(load_design(design_file(EXP.format(wrong="e"))).ir, "y") == "once"
    assert rounding(load_design(design_file(TWO_STAGES, "two.py")).ir, "y") == "chain"
    assert rounding(load_design(shipped / "gemm_bf16.py").ir, "C") == "sum"  # the accumulator
    assert rounding(load_design(shipped / "passthrough.py").ir, "out") == "once"
    # one core, the second call reading what the first wrote: relu rounds nothing
    same_core = EXP.replace("from aiedsl.kernels import exp_bf16", "from aiedsl.kernels import "
                            "exp_bf16, relu, vector_scalar").replace(
        "                k(s, t)", "                k(s, t)\n                {second}")
    assert "{second}" in same_core
    for second, want in (("relu(Tensor[1024, bf16])(t, t)", "once"),
                         ("vector_scalar('mul', Tensor[1024, bf16])(t, t, 1.0)", "chain")):
        src = same_core.replace("{second}", second).format(wrong="e")
        assert rounding(load_design(design_file(src, "one.py")).ir, "y") == want, second
    # a copy after exp rounds nothing: a wrong exp is still held to each element (a
    # reviewer's find: the copy made it a chain, and zeros below -1.7 passed again)
    copied = TWO_STAGES.replace('vector_scalar("mul", Tensor[1024, bf16])',
                                "passthrough(Tensor[1024, bf16])").replace("r(s, t, 1.0)",
                                                                            "r(s, t)")
    assert rounding(load_design(design_file(copied, "copy.py")).ir, "y") == "once"
    wrong = copied.replace("    return np.exp(x.astype(np.float32))",
                           "    return np.where(x.astype(np.float32) < -1.7, 0, "
                           "np.exp(x.astype(np.float32)))")
    assert not simulate(load_design(design_file(wrong, "wrong.py"))).passed


BOTH = TWO_STAGES.replace("y: Tensor[4096, bf16]):", "y: Tensor[4096, bf16], z: Tensor[4096, bf16]):"
                          ).replace('''    b = fifo(Tensor[1024, bf16], name="b")''', '''    b = fifo(Tensor[1024, bf16], name="b")
    a2 = fifo(Tensor[1024, bf16], name="a2")
    z2 = fifo(Tensor[1024, bf16], name="z2")''').replace("@herd(rows=2)", "@herd(rows=3)").replace(
    '''        else:
            for _ in loop(4):
                with m.consume()''', '''        elif y == 2:
            for _ in loop(4):
                with a2.consume() as s, z2.produce() as t:
                    e(s, t)
        else:
            for _ in loop(4):
                with m.consume()''').replace("        rt.drain(b, y)", "        rt.drain(b, y)\n"
                                        "        rt.fill(a2, x)\n        rt.drain(z2, z)").replace(
    "    return np.exp(x.astype(np.float32))", "    e = np.exp(x.astype(np.float32))\n"
    "    return e, {z}")
"""TWO_STAGES with a third core making z from x by exp alone: y is a chain, z one rounding."""


def test_each_output_gets_its_own_tolerance_and_a_small_output_no_floor(design_file) -> None:  # type: ignore[no-untyped-def]
    """A tester's zeros passed for z because an unrelated output of the design was a chain, and
    for a chain of small values because the absolute tolerance had a floor of 1."""
    from aiedsl.ir.program import rounding

    d = load_design(design_file(BOTH.format(z="e"))).ir
    assert (rounding(d, "y"), rounding(d, "z")) == ("chain", "once")
    right = simulate(load_design(design_file(BOTH.format(z="e"))))
    assert right.passed, [c.line() for c in right.checks]
    zeros = simulate(load_design(design_file(BOTH.format(z="e * 0"), "z.py")))
    assert [c.passed for c in zeros.checks] == [True, False]
    from aiedsl.compare import compare

    want = np.full(8, 0.002, dtype=np.float32)
    assert not compare("y", np.zeros(8, np.float32), want, "bf16", rounds="chain").passed
    # nor a sum: its floor of 1 let zeros, permuted rows and A @ B.T pass for a GEMM of inputs
    # scaled by 0.01 (a later tester); partial sums scale with the data, as its result does
    assert not compare("y", np.zeros(8, np.float32), want, "bf16", rounds="sum").passed
    a = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32) * 0.01
    c = a @ a
    scale = float(np.abs(a).max())  # what compare_outputs passes: the largest |input|
    assert compare("C", c * (1 + 1e-6), c, "f32", rounds="sum", scale=scale).passed
    for wrong in (a @ a.T, np.zeros_like(c), c[::-1], 0.8 * c):
        assert not compare("C", wrong, c, "f32", rounds="sum", scale=scale).passed
        assert not compare("C", wrong, c, "bf16", rounds="sum", scale=scale).passed


def test_a_sum_of_large_terms_that_cancel_says_so(in_root: Path) -> None:
    """With the floor gone a correct GEMM of [X|X] by [W; -W], zero up to f32 rounding noise,
    FAILed with nothing said (a reviewer). A floor of the largest |input| let half of C pass for
    inputs scaled by 0.002 (the next reviewer): a product's result scales with the square of
    its inputs. It still FAILs, and says why."""
    import ml_dtypes

    rng = np.random.default_rng(1)
    x = rng.standard_normal((256, 256)).astype(ml_dtypes.bfloat16)
    w = rng.standard_normal((256, 256)).astype(ml_dtypes.bfloat16)
    handle = load_design("designs/gemm_bf16.py", {"M": "256", "K": "512", "N": "256"})
    result = simulate(handle, {"A": np.concatenate([x, x], axis=1),
                               "B": np.concatenate([w, -w], axis=0)})
    assert float(np.abs(result.outputs["C"]).max()) < 1e-4  # noise, as numpy's own
    check = result.checks[0]
    assert not check.passed and check.note is not None
    assert check.note.startswith("every error is within the rounding of terms the size of the "
                                 "largest |input| (4.41), which is larger than any result here")
    assert check.note.endswith("if large terms cancel in 'C', its values are rounding noise, "
                               "which this check does not allow for")
    # and the second reviewer's case: C scaled by 0.5 for inputs scaled by 0.002 fails, no note
    a = (rng.standard_normal((256, 64)) * 2e-3).astype(np.float32)
    c = a @ a.T
    from aiedsl.compare import compare
    half = compare("C", 0.5 * c, c, "bf16", rounds="sum", scale=float(np.abs(a).max()))
    assert not half.passed and half.note is None


def test_a_fail_on_a_tensor_filled_and_drained_says_it_may_race_itself(design_file) -> None:  # type: ignore[no-untyped-def]
    """A tester's in-place design (fill from a, drain tiles back into a in reverse) failed with
    no hint that the tensor aliases itself."""
    path = design_file('''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, runtime, loop
from aiedsl.kernels import vector_scalar
@design(device="npu1_1col")
def d(a: Tensor[4096, i32]):
    i0 = fifo(Tensor[256, i32], name="i0")
    o0 = fifo(Tensor[256, i32], name="o0")
    add = vector_scalar("add", Tensor[256, i32])
    @herd()
    def c0():
        for _ in loop(16):
            with i0.consume() as x, o0.produce() as y:
                add(x, y, 1)
    with runtime() as rt:
        rt.fill(i0, a)
        for j in range(16):
            rt.drain(o0, a, ((15 - j) * 256, [256], [1]))
            if j % 4 == 3:
                rt.sync()
@d.reference
def reference(a):
    return (a.reshape(-1, 256)[::-1] + 1).reshape(-1)
''')
    result = simulate(load_design(path))
    assert not result.passed
    assert result.checks[0].line().splitlines()[1] == (
        "  wrong: 1,536 of 4,096 elements (37.5%), all within [0:1536]")
    assert result.checks[0].line().splitlines()[2] == (
        "  note: 'a' is both filled from and drained into: a drain may overwrite elements "
        "before a fill has read them, and then the result depends on timing, on the NPU too; "
        "use separate input and output tensors")


def test_a_call_takes_what_kernel_cost_says_the_simulator_charges(in_root: Path,
                                                                  tmp_path: Path) -> None:
    # `aiedsl kernel cost` names the body's cycles and the call site's; the traced call is both
    from aiedsl.kernels.cost import estimate

    charged = next(line for line in estimate("scale", "1024", None, "npu1")
                   if "the simulator charges" in line)
    assert charged.startswith("  the simulator charges 10 more a call at the call site")
    path = tmp_path / "t.json"
    result = simulate(load_design("designs/vector_scalar_mul.py"), trace=str(path))
    calls = [e for e in json.loads(path.read_text())["traceEvents"]
             if e["ph"] == "X" and e["name"] == "scale_i16_1024"]
    assert calls and {round(e["dur"] * result.timing.clock_hz / 1e6) for e in calls} == {78 + 10}


def test_what_the_model_assumes_for_a_design_is_said_with_its_times(in_root: Path) -> None:
    """The rtp writes' cost is an assumption and packet headers are not modelled: the run
    says so (a tester found both unsaid), and float GEMM throughput is in GFLOPS."""
    rtp = simulate(load_design("designs/threshold_rtp.py")).timing
    assert ("note: each runtime-parameter write takes 2.1 us, a third of a task's issue cost "
            "by assumption (no row measures a register write; 4 rtp writes here)") in rtp.lines()
    assert any(line.startswith("throughput: ") and line.endswith(" GOPS") for line in rtp.lines())
    gemm = simulate(load_design("designs/gemm_bf16.py")).timing
    assert not gemm.unmodelled
    assert any(line.startswith("throughput: ") and line.endswith(" GFLOPS")
               for line in gemm.lines())
    handle = load_design("designs/vector_scalar_mul.py")  # no memtile link: packet flows go
    handle.ir = handle.ir.model_copy(update={"flows": "packet"})
    packet = simulate(handle).timing
    assert packet.unmodelled == ("packet streams are timed as circuit ones: the 32-bit header "
                                 "each packet carries is not modelled")


def test_a_reference_narrower_than_its_output_is_named_under_the_fail(
        design_file: Callable[..., Path]) -> None:
    """A kernel author's reference returned (A * 2).astype(np.int16) for an i32 output: the
    FAIL said nothing of the wrap its int16 made."""
    src = (Path(__file__).resolve().parents[1] / "designs" / "passthrough.py").read_text()
    head, _ = src.split("@passthrough.reference")
    path = design_file(head + "@passthrough.reference\ndef reference(inp):\n"
                       "    return (inp * 40000).astype(np.int16)\n")
    check = simulate(load_design(path), {"inp": np.arange(4096, dtype=np.int32)}).checks[0]
    assert not check.passed
    assert check.hints[-1] == (
        "the reference returned int16 for this int32 output: its values passed through int16, "
        "where they may have wrapped (compute in int32 and return .astype(np.int32))")


ONE_STAGE_COUNTED = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels import buffer, declare, vector_scalar

T = Tensor[1024, i32]

def neg_ref(src, dst):
    dst[...] = -src

neg = declare("neg_i32_1024", source="neg.cc", args=[buffer("src", T), buffer("dst", T, "out")],
              reference=neg_ref, cycles=128, cost="1024 negations, 8 lanes a cycle: 32 B stored")

@design(device="npu1_1col")
def two(x: Tensor[1024, i32], y: Tensor[1024, i32]):
    a = fifo(T, name="a")
    b = fifo(T, name="b")
    c = fifo(T, name="c")
    mul = vector_scalar("mul", T)

    @herd(rows=2)
    def core(x, y):
        if y == 0:
            with a.consume() as s, b.produce() as d:
                mul(s, d, 3)
        else:
            with b.consume() as s, c.produce() as d:
                neg(s, d)

    with runtime() as rt:
        rt.fill(a, x)
        rt.drain(c, y)

@two.reference
def reference(x):
    return -3 * x
'''

NEG_CC = '''#include <stdint.h>
extern "C" void neg_i32_1024(const int32_t *src, int32_t *dst) {
  for (int i = 0; i < 1024; i++) dst[i] = -src[i];
}
'''


def test_a_throughput_says_which_kernels_it_counts(tmp_path: Path) -> None:
    """A Riallto-style pipeline whose one stage declares ops= printed "0.759 GOPS", read as
    the app's throughput; the other stages counted as nothing."""
    (tmp_path / "two.py").write_text(ONE_STAGE_COUNTED)
    (tmp_path / "neg.cc").write_text(NEG_CC)
    t = simulate(load_design(str(tmp_path / "two.py"))).timing
    line = next(x for x in t.lines() if x.startswith("throughput:"))
    assert line == (f"throughput: {significant(t.gops)} GOPS of vs_mul_i32_1024 only "
                    "(neg_i32_1024 declares no ops=)")


def test_a_dma_bottleneck_offers_only_the_fixes_that_apply(in_root: Path) -> None:
    """Every DMA bottleneck said "spread its traffic over more channels, send longer
    contiguous runs from host memory, or broadcast instead of sending twice", also for one
    contiguous 3.69 MB fill sent once, where only more channels help."""
    from dataclasses import replace

    b = simulate(load_design("designs/transpose_dma.py")).timing.bottleneck
    assert (b.kind, b.burst_fill, b.resent) == ("dma", 4.0, False)  # one i32 per run
    assert "; spread its traffic over more channels or send longer contiguous runs from host " \
        "memory (its bursts carry 4 B on average)" in b.sentence()
    plain = replace(b, burst_fill=0.0, issuing=0.0)
    assert plain.sentence().endswith("; spread its traffic over more channels")
    both = replace(b, resent=True, issuing=0.0)
    assert both.sentence().endswith(
        "; spread its traffic over more channels, send longer contiguous runs from host memory "
        "(its bursts carry 4 B on average), or broadcast what it sends more than once")


def test_poison_like_values_no_likelier_than_chance_tell_nothing() -> None:
    """A wrong rgba2gray weight gave one 255 among 359,228 wrong u8 pixels, and the note said
    most likely it was read before anything wrote it: a new user went looking for a missing
    zero call. One value in 256 of a kernel's own wrong numbers is 255 by chance."""
    rng = np.random.default_rng(0)
    want8 = rng.integers(0, 200, 4096).astype(np.uint8)
    got8 = (want8 + 7).astype(np.uint8)
    got8[10] = 255
    c = compare("C", got8, want8, "u8", poison=True)
    assert not c.passed and c.note is None and c.poisoned == 0
    got8[:64] = 255  # 64 of 4096: four times what chance gives
    assert compare("C", got8, want8, "u8", poison=True).poisoned == 64
    # signed: one of three nearer the poison is no more than chance
    want = np.arange(-8, 8, dtype=np.int32) * 1000
    got = want.copy()
    got[3] = np.int32(-2147483648 + 5)
    got[5:7] = 77
    assert compare("C", got, want, "i32", poison=True).note is None


def test_a_run_with_kernels_timed_only_streams_a_cascade_as_a_full_run_does(
        in_root: Path) -> None:
    """A core that gets and puts on a cascade streams its puts out as its gets come in. With
    kernels timed only (the runs a summary measures a change with) it was timed as a get then
    a put: matmul_cascade with DMA made free took 177,426 cycles, a full run 180,310 (a
    reviewer). Both runs now take the same time."""
    import numpy as np

    from aiedsl.checks import check_design
    from aiedsl.dtypes import dtype as lookup_dtype
    from aiedsl.sim.freed import freed
    from aiedsl.sim.hang_run import timed_cycles
    from aiedsl.sim.machine import build_machine
    from aiedsl.targets import get_target

    handle = load_design("designs/matmul_cascade.py", {"M": 256, "N": 256})
    placed, _ = check_design(handle.ir)
    d, target = freed(placed, get_target(placed.device), "dma")
    host = {t.name: np.ones(t.type.shape, np.dtype(lookup_dtype(t.type.dtype).numpy))
            for t in d.tensors}
    full = build_machine(d, target, host, handle.kernels, compute=True)
    full.engine.run()
    assert full.runtime is not None and full.runtime.finished
    assert timed_cycles(d, target) == (full.ends[0] if full.ends else full.runtime.time)


def test_a_result_pickles_leaving_its_machine_behind(in_root: Path) -> None:
    """(a notebook tester) A SimResult returned from a process pool's worker failed to pickle
    ('cannot pickle generator object': the machine's processes). It pickles now, its machine
    left behind but for the design, which says what ran; the machine, asked more, says why."""
    import pickle

    result = simulate(load_design("designs/passthrough.py"))
    again = pickle.loads(pickle.dumps(result))
    assert repr(again) == repr(result) and again.passed
    assert np.array_equal(again.outputs["out"], result.outputs["out"])
    assert again.timing == result.timing and again.machine.design == result.machine.design
    with pytest.raises(AttributeError, match="leaves its machine in the process that "
                                             "simulated it"):
        again.machine.engine
    assert result.machine.engine is not None  # the result pickled keeps its own


def test_the_trace_tells_waiting_and_the_next_invocation_from_work(in_root: Path,
                                                                   tmp_path: Path) -> None:
    """A sending channel's element waiting for its receivers had one span, named as its moving
    ones (a 65 us span of a memtile broadcast that moved data 7% of the run), and a core's next
    pass (the next invocation's calls) was drawn as this run's (32 zero calls against 16
    counted): a tester summed slices by category and got neither figure."""
    path = tmp_path / "t.json"
    result = simulate(load_design("designs/gemm_bf16.py", {"M": "256", "K": "256", "N": "256"}),
                      trace=str(path))
    doc = json.loads(path.read_text())
    tids = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"]
            if e["ph"] == "M" and e["name"] == "thread_name"}
    total: dict[tuple[str, str], float] = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            key = (tids[e["tid"]], e["cat"])
            total[key] = total.get(key, 0.0) + e["dur"]
    t = result.timing
    device_us = t.device_cycles / t.clock_hz * 1e6
    assert {cat for _, cat in total} == {"core", "core next invocation", "core waiting",
                                         "mm2s", "mm2s waiting", "s2mm", "runtime",
                                         "runtime waiting"}
    for name, busy in t.channel_busy.items():
        kind = "mm2s" if "->" in name else "s2mm"
        drawn = total.get((name, kind), 0.0)
        waiting = total.get((name, f"{kind} waiting"), 0.0)
        assert (drawn + waiting) / device_us == pytest.approx(busy, abs=1e-6), name
        assert drawn / device_us == pytest.approx(t.channel_moving[name], abs=1e-6), name
    for name, busy in t.core_busy.items():
        assert total[(name, "core")] / device_us == pytest.approx(busy, abs=1e-6), name
    # a core's idle time is drawn with what it waits for (gaps with no reason: the tester)
    waits = {e["name"] for e in doc["traceEvents"] if e["ph"] == "X" and e["cat"] == "core waiting"}
    assert {f"waits for an element of '{f}_{i}'" for f in "ab" for i in range(4)} <= waits
    zeros = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["name"].startswith("zero_")]
    assert len([e for e in zeros if e["cat"] == "core"]) == 16
    assert {e["name"] for e in zeros if e["cat"] == "core next invocation"} == {
        "zero_f32_4096 (next invocation)"}


SLOW_CALL = '''
    import numpy as np
    from aiedsl import Tensor, define, design, fifo, herd, i32, local, loop, runtime
    from aiedsl.kernels import buffer, declare

    SLOW = define("SLOW", 20000)
    T = Tensor[1024, i32]

    def double_ref(src, dst):
        dst[...] = src * 2

    @design(device="npu1_1col")
    def d(a: Tensor[4096, i32], c: Tensor[4096, i32]):
        k = declare("double_i32_1024", source="double.cc", entry="double_i32<1024>",
                    args=[buffer("src", T), buffer("dst", T, "out")],
                    reference=double_ref, cost="fast", cycles=142)
        slow = declare("slow_i32_1024", source="double.cc", entry="double_i32<1024>",
                       args=[buffer("src", T), buffer("dst", T, "out")],
                       reference=double_ref, cost="slow", cycles=SLOW)
        tmp = local(T, name="tmp", initial=0)
        tmp2 = local(T, name="tmp2")
        fi = fifo(T, name="fin")
        fo = fifo(T, name="fout")

        @herd()
        def core():
            EARLY
            for _ in loop(4):
                with fi.consume() as x, fo.produce() as y:
                    k(x, y)
            LATE

        with runtime() as rt:
            rt.fill(fi, a)
            rt.drain(fo, c)

    @d.reference
    def reference(a):
        return a * 2
'''


def _slow_call(design_file: Callable[..., Path], where: str) -> Path:
    design_file("template <unsigned N> void double_i32(const int *in, int *out) {\n"
                "  for (unsigned i = 0; i < N; ++i) out[i] = 2 * in[i];\n}\n", "double.cc")
    return design_file(SLOW_CALL.replace("EARLY", "slow(tmp, tmp2)" if where == "early" else "")
                       .replace("LATE", "slow(tmp, tmp2)" if where == "late" else ""))


def test_a_next_pass_past_the_hosts_wait_is_said_as_the_next_invocations(
        design_file: Callable[..., Path]) -> None:
    """A slow call at the start of the core's program: the core's next pass makes it again
    while the host's wait returns. Said as "calls after the last output" (there are none), and
    the core's busy share taken over a time that held the next pass (48%, where one run keeps
    it busy 83% of the device time): a tester."""
    t = simulate(load_design(_slow_call(design_file, "early"))).timing
    assert t.after_core == "core[0,0]" and t.after_cycles > 17_000 and t.after_next_pass
    assert t.core_until == {}
    assert round(t.core_busy["core[0,0]"], 2) == round(20_010 * 1.0 / t.device_cycles + 4 * 152
                                                       / t.device_cycles, 2) == 0.83
    line = next(ln for ln in t.lines() if ln.startswith("after the host's wait"))
    assert line.startswith(
        "after the host's wait: core[0,0] works 17.8 us more (the next invocation's first "
        "calls: its program starts again as its pass ends, and they wait for no data from the "
        "host; the time above stops at that wait)")


def test_a_call_after_the_wait_is_no_bottleneck_of_one_run(
        design_file: Callable[..., Path]) -> None:
    """A slow call after the loop that makes the output: one run takes 17.6 us however slow it
    is, so "For one run: compute ... faster kernels would help" (said from its share of its own
    time) was wrong: a tester made it 100x faster and one run took as long."""
    path = _slow_call(design_file, "late")
    slow, fast = (simulate(load_design(path, {"SLOW": n})).timing for n in ("200000", "2000"))
    assert slow.device_cycles == fast.device_cycles
    assert not slow.after_next_pass
    one_run = ("runtime: issuing the shim DMA tasks one by one takes 73% of the time; each "
               "tensor already moves in one task per direction: a fixed cost, which more work "
               "per invocation spreads thinner")
    assert fast.bottleneck.sentence() == slow.bottleneck.sentence() == one_run
    line = next(ln for ln in slow.lines() if ln.startswith("bottleneck"))
    assert line.startswith("bottleneck: back to back, core[0,0]: it computes ")
    assert line.endswith(f"For one run: {one_run}")


MIXED = '''
    from aiedsl import Tensor, define, design, fifo, herd, i32, local, loop, runtime
    from aiedsl.kernels import buffer, declare

    LATE = define("LATE", 5000)
    T = Tensor[1024, i32]

    def double_ref(src, dst):
        dst[...] = src * 2

    @design(device="npu1_1col")
    def d(a0: Tensor[4096, i32], a1: Tensor[4096, i32], c0: Tensor[4096, i32],
          c1: Tensor[4096, i32]):
        def slow(name, cycles):
            return declare(name, source="double.cc", entry="double_i32<1024>",
                           args=[buffer("src", T), buffer("dst", T, "out")],
                           reference=double_ref, cost="slow", cycles=cycles)
        k = slow("double_i32_1024", 142)
        early, late = slow("early_i32_1024", 40000), slow("late_i32_1024", LATE)
        tmp = [local(T, name=f"tmp{i}", initial=0) for i in range(2)]
        tmp2 = [local(T, name=f"tmpb{i}") for i in range(2)]
        fi = [fifo(T, name=f"fin{i}") for i in range(2)]
        fo = [fifo(T, name=f"fout{i}") for i in range(2)]

        @herd(rows=2)
        def core(x, y):
            if y == 0:
                early(tmp[y], tmp2[y])
            for _ in loop(4):
                with fi[y].consume() as s, fo[y].produce() as t:
                    k(s, t)
            if y == 1:
                late(tmp[y], tmp2[y])

        with runtime() as rt:
            rt.fill(fi[0], a0)
            rt.fill(fi[1], a1)
            rt.drain(fo[0], c0)
            rt.drain(fo[1], c1)

    @d.reference
    def reference(a0, a1):
        return a0 * 2, a1 * 2
'''


def test_the_core_whose_own_pass_goes_past_the_wait_is_the_one_said(
        design_file: Callable[..., Path]) -> None:
    """One core's next pass (a slow call first) and another's own pass (a slow call after its
    output) both go on past the host's wait: the line said the first's work as "calls after the
    last output", which it has none of, and named neither the other core nor its calls (a
    reviewer). The core whose own pass goes on is said; with its call shorter, the other's next
    pass is."""
    design_file("template <unsigned N> void double_i32(const int *in, int *out) {\n"
                "  for (unsigned i = 0; i < N; ++i) out[i] = 2 * in[i];\n}\n", "double.cc")
    path = design_file(MIXED)

    def said(late: str) -> str:
        t = simulate(load_design(path, {"LATE": late})).timing
        return next(ln for ln in t.lines() if ln.startswith("after the host's wait")).split(
            "; the time above")[0]

    assert said("30000") == ("after the host's wait: core[0,1] works 13.0 us more (calls after "
                             "the last output the runtime waits for")
    assert said("5000") == ("after the host's wait: core[0,0] works 37.8 us more (the next "
                            "invocation's first calls: its program starts again as its pass "
                            "ends, and they wait for no data from the host")
