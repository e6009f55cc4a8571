"""The Python API: ``aiedsl.build(...).run(...)`` returns its results as fields, and the command
line prints exactly what those fields render."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import aiedsl
from aiedsl.sim.bottleneck import Bottleneck
from aiedsl.sim.summary import Timing

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
    with pytest.raises(aiedsl.DesignError) as e:  # by position, as a list would give them
        simulate(handle, {0: a, 1: b})
    assert str(e.value).split(": ", 1)[1].splitlines() == [
        "error [inputs]: the inputs of 'gemm_bf16' are keyed by an int, not by tensor name",
        "  limit: a dict {name: array} of the tensors the runtime fills: A, B", "  found: 0",
        "  fix: pass {'A': ..., 'B': ...}"]
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
    line = _line_of('aiedsl.build("", write=False)')
    assert str(e.value).splitlines()[0] == (
        f"{HERE}:{line}: error [design file]: the design file's path is empty")
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


# -- what simulate and build are given --------------------------------------------------------

@pytest.mark.parametrize("given", ["designs/passthrough.py", Path("designs/passthrough.py")])
def test_simulate_given_a_design_files_path_says_to_load_it(in_root: Path, given: object) -> None:
    """simulate("design.py") was AttributeError: 'str' object has no attribute 'ir'."""
    with pytest.raises(aiedsl.DesignError) as e:
        aiedsl.simulate(given)  # type: ignore[arg-type]  # the path's line
    line = _line_of("aiedsl.simulate(given)  # type: ignore[arg-type]  # the path's line")
    assert str(e.value) == (
        f"{HERE}:{line}: error [design]: simulate() takes a design, not the path of its file\n"
        "  limit: a design: what @design returns, or what load_design(\"design.py\") gives\n"
        "  found: 'designs/passthrough.py'\n"
        "  fix: simulate(load_design(\"designs/passthrough.py\"), ...) (from aiedsl import "
        "load_design)")


def test_simulate_build_and_load_design_refuse_what_is_not_theirs(in_root: Path) -> None:
    """Each public function that takes a design, or a design file's path, says which it
    takes when given another thing (a build, the IR, a number, a design for a path)."""
    handle = aiedsl.load_design("designs/passthrough.py")
    art = aiedsl.build(handle, write=False)
    cases: list[tuple[Any, str]] = [
        (lambda: aiedsl.simulate(art),
         "error [design]: simulate() takes a design, not an Artifacts\n"
         "  limit: a design: what @design returns, or what load_design(\"design.py\") gives\n"
         "  found: an Artifacts\n"
         "  fix: simulate(art.handle, ...), or art.run(...) to run the build"),
        (lambda: aiedsl.simulate(handle.ir),
         "error [design]: simulate() takes a design, not a Design\n"
         "  limit: a design: what @design returns, or what load_design(\"design.py\") gives\n"
         "  found: a Design\n"
         "  fix: simulate(load_design(\"design.py\"), placed=ir) runs a placed design IR "
         "(load_json's) with its design's references; DesignHandle(ir) has none of the user's"),
        (lambda: aiedsl.build(3),
         "error [design]: build() takes a design file's path or a design, not an int\n"
         "  limit: a path (str or Path) of a design file, or a design (what @design returns, "
         "or load_design gives)\n"
         "  found: an int\n"
         "  fix: pass e.g. build(\"designs/passthrough.py\"), or the @design function's result"),
        (lambda: aiedsl.build(art),
         "error [design]: build() takes a design file's path or a design, not an Artifacts\n"
         "  limit: a path (str or Path) of a design file, or a design (what @design returns, "
         "or load_design gives)\n"
         "  found: an Artifacts\n"
         "  fix: this is a build already: run it (art.run(...)), or build(art.handle, ...)"),
        (lambda: aiedsl.load_design(handle),
         "error [design file]: load_design() was given the design 'passthrough', already "
         "loaded\n"
         f"  found: {handle!r}\n"
         "  fix: use the design as it is (simulate(design), build(design)); load_design takes "
         "a design file's path"),
        (lambda: aiedsl.load_design(3),
         "error [design file]: load_design() takes a design file's path, not an int\n"
         "  found: 3\n"
         "  fix: give the path of a .py file that defines a @design, e.g. "
         "load_design(\"designs/passthrough.py\")"),
    ]
    for call, message in cases:
        with pytest.raises(aiedsl.DesignError) as e:
            call()
        where, text = str(e.value).split(": ", 1)
        assert (where.split(":")[0], text) == (HERE, message)


@pytest.mark.parametrize("options, message", [
    ({"check": "no"}, "check='no'\n  limit: True or False\n  found: 'no'\n"
     "  fix: give check=True to compare with the reference, False not to"),
    ({"check": None}, "check=None\n  limit: True or False\n  found: None\n"
     "  fix: give check=True to compare with the reference, False not to"),
    ({"check": 1}, "check=1\n  limit: True or False\n  found: 1\n"
     "  fix: give check=True to compare with the reference, False not to"),
    ({"compute": "no"}, "compute='no'\n  limit: True or False\n  found: 'no'\n"
     "  fix: give compute=True to compute the outputs, False for the timing alone (the "
     "kernels take their time and compute nothing)"),
])
def test_simulate_takes_its_flags_as_bools_as_run_does(
        in_root: Path, options: dict[str, object], message: str) -> None:
    """check='no' compared (a str is true), check=None did not (None is false) and
    compute='no' computed, where Artifacts.run refused check='no' (a tester)."""
    handle = aiedsl.load_design("designs/passthrough.py")
    with pytest.raises(aiedsl.DesignError) as e:
        aiedsl.simulate(handle, **options)  # type: ignore[arg-type]  # the flags' line
    line = _line_of("aiedsl.simulate(handle, **options)  # type: ignore[arg-type]  # the flags'")
    assert str(e.value) == f"{HERE}:{line}: error [run options]: {message}"
    assert aiedsl.simulate(handle, check=np.bool_(False), compute=np.True_).checks == []


@pytest.mark.parametrize("options", [{"check": False}, {"compute": False}])
def test_a_run_whose_outputs_nobody_compared_has_not_passed(
        in_root: Path, options: dict[str, bool]) -> None:
    """passed was True with nothing compared, and a sweep keeping the runs that passed kept
    compute=False's, whose outputs are NaN (a tester); a compared run passes as before."""
    handle = aiedsl.load_design("designs/passthrough.py")
    unchecked = aiedsl.simulate(handle, **options)
    assert (unchecked.checks, unchecked.passed) == ([], False)
    assert aiedsl.simulate(handle).passed


@pytest.mark.parametrize("option, fix", [
    ("write", "give write=True to write the build directory, False to check and place only"),
    ("compile", "give compile=True to compile with Peano and aiecc, False not to"),
    ("lower", "give lower=True to lower with mlir-aie's passes when aie-opt and "
     "aie-translate are found, False not to")])
def test_build_takes_its_flags_as_bools(in_root: Path, tmp_path: Path, option: str,
                                        fix: str) -> None:
    """build(write="no") wrote the build directory."""
    with pytest.raises(aiedsl.DesignError) as e:
        aiedsl.build("designs/passthrough.py", output=tmp_path / "b", **{option: "no"})
    assert str(e.value).split(": ", 1)[1] == (
        f"error [build options]: {option}='no'\n  limit: True or False\n  found: 'no'\n"
        f"  fix: {fix}")
    assert not (tmp_path / "b").exists()


def test_run_given_a_dict_says_it_takes_arrays_in_order(in_root: Path) -> None:
    """art.run({'inp': x}) said the input was "not a numpy array" and to pass
    np.asarray(inp, dtype=np.int32): the dict is simulate's form."""
    art = aiedsl.build("designs/passthrough.py", write=False)
    with pytest.raises(aiedsl.DesignError) as e:
        art.run({"inp": np.zeros(4096, np.int32)}, target="sim")  # type: ignore[arg-type]
    assert str(e.value).split(": ", 1)[1] == (
        "error [inputs]: run() takes the inputs of 'passthrough' as arrays in argument order, "
        "not a dict\n"
        "  limit: one array per tensor the runtime fills, in argument order: inp\n"
        "  found: a dict of 'inp'\n"
        "  fix: pass the arrays themselves: run(inp, ...) (a dict by tensor name is what "
        "aiedsl.simulate takes)")


def test_run_on_a_missing_npu_says_how_python_asks_for_the_simulator(
        in_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fix read `--target sim`, the command line's spelling, to a Python caller."""
    import aiedsl.toolchain.xrt as xrt

    monkeypatch.setattr(xrt, "find_npu", lambda: (None, "no NPU here"))
    art = aiedsl.build("designs/passthrough.py", write=False)
    with pytest.raises(aiedsl.ToolchainError) as e:
        art.run(target="npu")  # no NPU
    line = _line_of("art.run(target=\"npu\")  # no NPU")
    assert (str(e.value), e.value.exit_code) == (
        f"{HERE}:{line}: error [npu]: no NPU: no NPU here\n"
        "  fix: run on the simulator: target='sim'", 4)


def test_a_reference_returning_a_scalar_is_told_so(in_root: Path) -> None:
    """It said "returned an array of shape [] (1 values)"."""
    handle = aiedsl.load_design("designs/passthrough.py")
    handle.reference_fn = lambda inp: np.int32(5)
    with pytest.raises(aiedsl.DesignError) as e:
        aiedsl.simulate(handle)
    assert str(e.value).split(": ", 1)[1] == (
        "error [reference]: the reference of 'passthrough' returned a scalar, 5, for output "
        "'out' (4096xi32)\n"
        "  limit: 4096 values, shape [4096]\n"
        "  found: 1 value\n"
        "  fix: return an array of the output's shape")


@pytest.mark.parametrize("bits", [np.uint16, np.int16])
def test_sixteen_bit_integers_for_a_bf16_input_may_be_its_bits(in_root: Path,
                                                               bits: type) -> None:
    """x.view(np.uint16), bf16 as older mlir-aie and Riallto code carries it, was told to pass
    x.astype(ml_dtypes.bfloat16): a cast of the bits as numbers."""
    import ml_dtypes

    handle = aiedsl.load_design("designs/gemm_bf16.py", {"M": "256", "K": "64", "N": "256"})
    a = np.ones((256, 64), ml_dtypes.bfloat16).view(bits)
    b = np.ones((64, 256), ml_dtypes.bfloat16)
    with pytest.raises(aiedsl.DesignError) as e:
        aiedsl.simulate(handle, {"A": a, "B": b})
    name = np.dtype(bits).name
    assert str(e.value).split(": ", 1)[1] == (
        f"error [inputs]: input 'A' of 'gemm_bf16' is {name}, not bf16\n"
        "  limit: 16384 elements of bf16 (Tensor[256, 64, bf16]), in any shape\n"
        f"  found: {name}, shape [256, 64]\n"
        "  fix: if A holds bf16 bit patterns (as older mlir-aie and Riallto code carries bf16), "
        "pass A.view(ml_dtypes.bfloat16); if it holds numbers, pass "
        "A.astype(ml_dtypes.bfloat16) (nothing is converted for you: a cast may round, "
        "truncate or wrap values)")
    assert aiedsl.simulate(handle, {"A": a.view(ml_dtypes.bfloat16), "B": b}).passed


def test_the_design_languages_flags_are_bools_too(in_root: Path) -> None:
    """declare(exact="no") was taken as False by pydantic, and reference(nonfinite="no") as
    true: the one rule of the API's flags holds them too."""
    from aiedsl import Tensor, i32
    from aiedsl.kernels import buffer, declare

    args = [buffer("a", Tensor[16, i32]), buffer("b", Tensor[16, i32], "out")]
    with pytest.raises(aiedsl.DesignError) as e:
        declare("x_i32_16", source="kernels_cpp/passthrough.cc", entry="passthrough<int32_t, 16>",
                args=args, reference=lambda a, b: None, cycles=1, cost="c", exact="no")
    assert str(e.value).split(": ", 1)[1] == (
        "error [kernel signature]: exact='no'\n  limit: True or False\n  found: 'no'\n"
        "  fix: give exact=True when the kernel only copies or selects its inputs, or leave it "
        "out")
    handle = aiedsl.load_design("designs/passthrough.py")
    with pytest.raises(aiedsl.DesignError) as e:
        handle.reference(nonfinite="no")
    assert str(e.value).split(": ", 1)[1] == (
        "error [reference]: nonfinite='no'\n  limit: True or False\n  found: 'no'\n"
        "  fix: give nonfinite=True when NaN or infinity are expected values, or leave it out")


def test_a_str_define_from_python_is_told_at_the_callers_line(in_root: Path) -> None:
    """defines={"N": "abc"} was "-D N=abc is not a valid int" at the design's define line (a
    tester): said in defines= words at the Python line that gave it, the define's under it."""
    with pytest.raises(aiedsl.DesignError) as e:
        aiedsl.load_design("designs/vector_scalar_mul.py", {"N": " 2048"})  # str define
    line = _line_of("{\"N\": \" 2048\"})  # str define")
    assert str(e.value) == (
        f"{HERE}:{line}: error [define]: defines={{'N': ' 2048'}} is not a valid int\n"
        "  limit: a number in the digits 0-9, with no spaces\n"
        "  found: ' 2048'\n"
        "  designs/vector_scalar_mul.py:14: define 'N'\n"
        "  fix: give an int, e.g. defines={'N': 4096} (a str is read as -D reads it: '4096')")
    assert aiedsl.load_design("designs/vector_scalar_mul.py", {"N": "2048"}).ir.defines["N"] \
        == 2048


def test_compile_without_write_is_refused(in_root: Path) -> None:
    """build(write=False, compile=True) returned unwritten and uncompiled, unsaid (a tester)."""
    with pytest.raises(aiedsl.DesignError) as e:
        aiedsl.build("designs/passthrough.py", write=False, compile=True)  # both
    line = _line_of("write=False, compile=True)  # both")
    assert str(e.value) == (
        f"{HERE}:{line}: error [build options]: build() was given compile=True and "
        "write=False: a compile needs the build directory that write=False does not write\n"
        "  found: compile=True, write=False\n"
        "  fix: leave write= out (True) to compile, or compile= out to check and place only")


def test_an_unknown_device_from_python_is_told_at_the_callers_line(in_root: Path) -> None:
    """build(..., device="npu3") was refused at the design's @design line (a tester)."""
    with pytest.raises(aiedsl.DesignError) as e:
        aiedsl.build("designs/passthrough.py", write=False, device="npu4")  # a driver's name
    line = _line_of('device="npu4")  # a driver')
    assert str(e.value) == (
        f"{HERE}:{line}: error [device]: unknown device 'npu4'\n"
        "  found: npu4\n"
        "  fix: use 'npu2' (the amdxdna driver's npu4, Strix, is an XDNA2 NPU: mlir-aie's npu2)")



def test_a_missing_design_file_is_told_at_the_callers_line(in_root: Path) -> None:
    """build("designs/nope.py") was an error with no line at all (a tester)."""
    with pytest.raises(aiedsl.DesignError) as e:
        aiedsl.build("designs/nope.py", write=False)  # no such file
    line = _line_of('"designs/nope.py", write=False)  # no such')
    assert str(e.value).splitlines()[0] == (
        f"{HERE}:{line}: error [design file]: no design file at designs/nope.py")


def test_a_kernel_prints_its_call_and_the_package_lists_its_public_names() -> None:
    """A newcomer's tester printed a library kernel to learn its arguments' order and got the
    whole IR; dir(aiedsl) listed the lazy loader's imports (Any, TYPE_CHECKING, ...)."""
    from aiedsl import Tensor, i32
    from aiedsl.kernels import add

    assert repr(add(Tensor[256, i32])) == (
        "<kernel add_i32_256(a: in 256xi32, b: in 256xi32, c: out 256xi32), C++ "
        "eltwise_add_i32<256> in eltwise.cc.j2>")
    assert dir(aiedsl) == sorted(aiedsl.__all__)


def test_every_public_name_loads_and_front_end_modules_keep_their_names() -> None:
    """``import aiedsl.lang.fifo`` gave the function ``fifo``: the package re-exported each
    construct over the module of the same name."""
    import importlib
    import types

    for name in aiedsl.__all__:
        assert getattr(aiedsl, name) is not None, name
    for module in ("fifo", "channel", "design", "local", "rtp", "runtime", "tiles"):
        loaded = importlib.import_module(f"aiedsl.lang.{module}")
        assert isinstance(loaded, types.ModuleType), module
        assert isinstance(getattr(aiedsl.lang, module), types.ModuleType), module


def test_a_design_loaded_from_its_file_says_how_to_send_it_to_a_worker(in_root: Path) -> None:
    """pickle's own error named the load's module (__aiedsl_design_0__) to a sweep's pool (a
    tester); what to send instead is said at the line that pickles it."""
    import pickle

    handle = aiedsl.load_design("designs/passthrough.py")
    with pytest.raises(aiedsl.DesignError) as e:
        pickle.dumps(handle)
    assert str(e.value).splitlines()[-1] == (
        "  fix: send the design file's path and defines to the worker and load it there: "
        "load_design(path, defines) (a SimResult, a RunResult and a DesignError do pickle, to "
        "send back)")
