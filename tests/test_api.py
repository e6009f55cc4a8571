"""The Python API: ``aiedsl.build(...).run(...)`` returns its results as fields, and the command
line prints exactly what those fields render."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import aiedsl
from aiedsl.sim.summary import Bottleneck, Timing

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
    # and, under the comparison, what ran as the kernels: what the command was asked for
    assert r.stdout.splitlines()[1:] == lines[:1] + [
        "  kernels: ran as their numpy references; --kernels native or aiedsl kernel test runs "
        "their C++"] + lines[1:]
    assert lines[0].startswith("PASS C: worst element [")
    timing = art.run(target="sim", seed=5).timing
    # the bottleneck, then the notes (here: what the task cost rests on, 60% of the time issuing)
    assert lines[-2:] == ["  bottleneck: " + timing.bottleneck.sentence(),
                          "  note: " + timing.task_basis]


def test_inputs_given_in_argument_order(tmp_path: Path, in_root: Path) -> None:
    art = aiedsl.build("designs/passthrough.py", write=False)
    x = np.arange(art.design.tensor("inp").type.numel, dtype=np.int32)
    result = art.run(x, target="sim")
    assert result.passed and np.array_equal(result.outputs["out"], x)
    assert art.path is None and not any(tmp_path.iterdir())


# -- inputs a caller passes -------------------------------------------------------------------

HERE = "tests/test_api.py"  # as display_path shows it from the project root (in_root)


def _line_of(marker: str) -> int:
    """The line of this file that holds ``marker`` (a call the error must point at)."""
    lines = Path(__file__).read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if marker in text and "_line_of" not in text)


@pytest.mark.parametrize("value, message", [
    (np.arange(4096, dtype=np.float32),
     "input 'inp' of 'passthrough' is float32, not i32\n"
     "  limit: 4096 elements of i32 (Tensor[4096, i32]), in any shape\n"
     "  found: float32, shape [4096]\n"
     "  fix: pass inp.astype(np.int32) (nothing is converted for you: a cast may round, "
     "truncate or wrap values)"),
    (np.arange(100, dtype=np.int32),
     "input 'inp' of 'passthrough' has 100 elements, not 4096\n"
     "  limit: 4096 elements of i32 (Tensor[4096, i32]), in any shape\n"
     "  found: 100 elements, shape [100]\n"
     "  fix: pass the whole tensor (shape [4096])"),
    ([1, 2, 3],
     "input 'inp' of 'passthrough' is not a numpy array\n"
     "  limit: 4096 elements of i32 (Tensor[4096, i32]), in any shape\n"
     "  found: list\n"
     "  fix: pass np.asarray(inp, dtype=np.int32)"),
])
def test_an_input_of_another_type_or_size_is_refused_at_the_callers_line(
        value: object, message: str, in_root: Path) -> None:
    art = aiedsl.build("designs/passthrough.py", write=False)
    with pytest.raises(aiedsl.DesignError) as e:
        art.run(value, target="sim")  # the caller's line
    line = _line_of("art.run(value, target=\"sim\")  # the caller's line")
    assert str(e.value) == f"{HERE}:{line}: error [inputs]: {message}"


def test_simulate_checks_the_inputs_it_is_given(in_root: Path) -> None:
    from aiedsl.loader import load_design
    from aiedsl.sim import simulate

    handle = load_design("designs/gemm_bf16.py", {"M": "256", "K": "64", "N": "256"})
    a = np.zeros((256, 64), np.float32)
    with pytest.raises(aiedsl.DesignError) as e:
        simulate(handle, {"A": a})
    assert str(e.value).splitlines()[1:] == [
        "  limit: one array for each tensor the runtime fills: A, B",
        "  found: 'A'", "  fix: pass 'B' too"]
    b = np.zeros((64, 256), np.float32)
    with pytest.raises(aiedsl.DesignError) as e:
        simulate(handle, {"A": a, "B": b})
    assert "fix: pass A.astype(ml_dtypes.bfloat16)" in str(e.value)
    with pytest.raises(aiedsl.DesignError) as e:
        simulate(handle, {"A": a, "B": b, "D": b})
    assert "error [inputs]: 'D' is not a tensor of 'gemm_bf16'" in str(e.value)
    with pytest.raises(aiedsl.DesignError) as e:
        simulate(handle, {"A": a, "B": b, "C": np.zeros((256, 256), np.float32)})
    assert str(e.value).split(": ", 1)[1].splitlines() == [
        "error [inputs]: 'C' of 'gemm_bf16' is not an input: the runtime never fills it",
        "  limit: the tensors the runtime fills: A, B", "  found: 'C'",
        "  fix: leave 'C' out: the run starts it with values no correct run leaves behind, "
        "and returns it"]


def test_any_shape_with_the_tensors_elements_runs(in_root: Path) -> None:
    art = aiedsl.build("designs/passthrough.py", write=False)
    data = np.arange(4096, dtype=np.int32)
    result = art.run(data.reshape(64, 64)[:, ::-1].T, target="sim")  # not contiguous either
    assert result.passed
    assert np.array_equal(result.outputs["out"], data.reshape(64, 64)[:, ::-1].T.reshape(-1))


def test_a_loaded_design_refuses_load_options(in_root: Path) -> None:
    """build(handle, device=..., defines=...) built the design as it was loaded, silently."""
    from aiedsl.loader import load_design

    handle = load_design("designs/passthrough.py")
    with pytest.raises(aiedsl.DesignError) as e:
        aiedsl.build(handle, device="npu2_1col", defines={"N": 8192}, write=False)  # here
    line = _line_of("aiedsl.build(handle, device=\"npu2_1col\", defines={\"N\": 8192}, "
                    "write=False)  # here")
    assert str(e.value) == (
        f"{HERE}:{line}: error [build]: build() of 'passthrough', a design already traced, "
        "cannot take defines={'N': 8192} and device='npu2_1col'\n"
        "  limit: defines=, device= and name= choose how a design file is loaded\n"
        "  found: defines={'N': 8192}, device='npu2_1col'\n"
        "  fix: pass the design file's path instead (aiedsl.build('design.py', ...)), or set "
        "them where the design is made (@design(device=...), define's default)")
    assert aiedsl.build(handle, write=False).design.device == "npu1_1col"


@pytest.mark.parametrize("view", ["strided", "reversed", "broadcast", "stepped 2-D"])
def test_an_input_in_any_memory_order_runs_as_its_logical_order(
        in_root: Path, view: str) -> None:
    """Views numpy does not lay out contiguously (a step, a reversal, broadcast_to, a stepped
    2-D slice) crashed inside the simulator; they are read in their logical (C) order, as the
    NPU path copies them."""
    art = aiedsl.build("designs/vector_scalar_mul.py", write=False)
    plain = np.arange(4096, dtype=np.int16)
    arg = {"strided": np.arange(8192, dtype=np.int16)[::2],
           "reversed": plain[::-1],
           "broadcast": np.broadcast_to(np.int16(7), (4096,)),
           "stepped 2-D": np.arange(8192, dtype=np.int16).reshape(64, 128)[:, ::2]}[view]
    factor = np.array([3], np.int32)
    result = art.run(arg, factor, target="sim")
    assert result.passed
    assert (result.outputs["out"] == (np.ascontiguousarray(arg).reshape(-1) * 3)).all()


def test_a_nan_in_an_input_is_named_when_the_reference_returns_nan(in_root: Path) -> None:
    """The reference was told to fix itself for passing a caller's NaN through."""
    import ml_dtypes

    from aiedsl.loader import load_design
    from aiedsl.sim import simulate

    handle = load_design("designs/gemm_bf16.py", {"M": "256", "K": "64", "N": "256"})
    a = np.ones((256, 64), ml_dtypes.bfloat16)
    a[3, 5] = np.nan
    b = np.ones((64, 256), ml_dtypes.bfloat16)
    with pytest.raises(aiedsl.DesignError) as e:
        simulate(handle, {"A": a, "B": b})
    first, *rest = str(e.value).split(": ", 1)[1].splitlines()
    assert first == ("error [reference]: the reference of 'gemm_bf16' returned nan at [3, 0] of "
                     "output 'C' (input 'A'[3, 5] is not finite either)")
    assert rest[-1] == ("  fix: pass finite inputs, or declare them expected with "
                        "@gemm_bf16.reference(nonfinite=True)")


def test_the_lower_api_and_its_errors_are_at_the_top(in_root: Path) -> None:
    """An API tester found simulate, load_design, ToolchainError and Deadlock only in modules
    the README did not name; and run(trace='') was called a folder, with --trace's fix."""
    from aiedsl.errors import ToolchainError
    from aiedsl.loader import load_design
    from aiedsl.sim import simulate
    from aiedsl.sim.explain import Deadlock

    assert (aiedsl.simulate, aiedsl.load_design, aiedsl.ToolchainError, aiedsl.Deadlock) == (
        simulate, load_design, ToolchainError, Deadlock)
    art = aiedsl.build("designs/vector_scalar_mul.py", write=False)
    with pytest.raises(aiedsl.DesignError) as e:
        art.run(target="sim", trace="")
    assert str(e.value).split(": ", 1)[1] == (
        "error [output file]: trace='' names no file\n"
        "  found: ''\n"
        "  fix: name the file, e.g. trace='vector_scalar_mul.json', or leave trace= out")


@pytest.mark.parametrize("options, found, limit", [
    ({"iters": 0}, "0", "an int >= 1"), ({"iters": -5}, "-5", "an int >= 1"),
    ({"warmup": -1}, "-1", "an int >= 0"), ({"check": "no"}, "'no'", "True or False"),
    ({"trace": 123}, "123", "a file path (str or Path)")])
def test_run_options_are_checked_as_the_command_line_checks_them(
        in_root: Path, options: dict[str, object], found: str, limit: str) -> None:
    """iters=0 and check="no" ran and passed, trace=123 was a TypeError (a tester)."""
    art = aiedsl.build("designs/passthrough.py", write=False)
    with pytest.raises(aiedsl.DesignError) as e:
        art.run(target="sim", **options)  # type: ignore[arg-type]
    assert (e.value.rule, e.value.limit, e.value.found) == ("run options", limit, found)
    assert e.value.loc is not None and e.value.loc.file.endswith("test_api.py")


def test_an_empty_path_or_device_is_refused_as_empty(in_root: Path) -> None:
    """build("") said ". is a directory", build(device="") built the design's own device (a
    tester): an unset variable names nothing."""
    with pytest.raises(aiedsl.DesignError) as e:
        aiedsl.build("", write=False)
    assert str(e.value).splitlines()[0] == "error [design file]: the design file's path is empty"
    with pytest.raises(aiedsl.DesignError) as e:
        aiedsl.build("designs/passthrough.py", device="", write=False)
    assert str(e.value).split(": ", 1)[1].splitlines()[0] == \
        "error [device]: device='' names no device"


def test_simulate_given_a_list_says_it_takes_a_dict(in_root: Path) -> None:
    """simulate(handle, [array]) was TypeError: unhashable type: 'numpy.ndarray'."""
    handle = aiedsl.load_design("designs/passthrough.py")
    with pytest.raises(aiedsl.DesignError) as e:
        aiedsl.simulate(handle, [np.arange(4096, dtype=np.int32)])  # type: ignore[arg-type]
    assert str(e.value).split(": ", 1)[1] == (
        "error [inputs]: the inputs of 'passthrough' are a list, not a dict by tensor name\n"
        "  limit: a dict {name: array} of the tensors the runtime fills: inp\n"
        "  found: a list\n"
        "  fix: pass {'inp': ...}, or give the arrays in argument order to build(...).run(...)")


def test_the_package_says_it_is_typed() -> None:
    """A user's mypy found no library stub for aiedsl: py.typed ships with it (PEP 561)."""
    assert (Path(aiedsl.__file__).parent / "py.typed").exists()
