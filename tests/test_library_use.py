"""aiedsl used as a library in one long-lived process (a notebook, a parameter sweep): designs
loaded again after an edit, from threads, errors sent between processes, results shown."""

from __future__ import annotations

import copy
import doctest
import os
import pickle
import sys
import textwrap
import threading
import types
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import aiedsl
from aiedsl.errors import DesignError, ToolchainError
from aiedsl.ir.loc import Loc
from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.sim.explain import Deadlock
from aiedsl.sim.summary import significant

DesignFile = Callable[..., Path]

PASSTHROUGH = Path(__file__).resolve().parents[1] / "designs" / "passthrough.py"
HERE = "tests/test_library_use.py"  # as display_path shows it from the project root (in_root)


def _line_of(marker: str) -> int:
    """The line of this file that holds ``marker`` (a call an error must point at)."""
    lines = Path(__file__).read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if marker in text and "_line_of" not in text)


# -- a design file edited between loads -------------------------------------------------------

TWO_FIFOS = '''
    from aiedsl import Tensor, design, fifo, herd, i32, runtime
    from aiedsl.kernels import passthrough

    @design(device="npu1_1col")
    def d(inp: Tensor[64, i32], out: Tensor[64, i32]):
        first = fifo(Tensor[64, i32])
        second = fifo(Tensor[64, i32])
        k = passthrough(Tensor[64, i32])

        @herd()
        def core():
            with first.consume() as x, second.produce() as y:
                k(x, y)

        with runtime() as rt:
            rt.fill(first, inp)
            rt.drain(second, out)
    '''


def _filled_and_drained(path: Path) -> tuple[str, str]:
    ir = load_design(path).ir
    ops = {t.op: t.fifo for t in ir.runtime if t.op in ("fill", "drain")}
    return ops["fill"], ops["drain"]


def test_a_design_file_edited_between_loads_is_named_after_its_new_lines(
        design_file: DesignFile) -> None:
    """A tester swapped two lines and loaded again in the same process: each fifo took the
    name the old text had at its line (linecache kept the file as first read)."""
    path = design_file(TWO_FIFOS)
    assert _filled_and_drained(path) == ("first", "second")
    text = path.read_text()
    a, b = "    first = fifo(Tensor[64, i32])\n", "    second = fifo(Tensor[64, i32])\n"
    path.write_text(text.replace(a + b, b + a))  # the same size: only the time tells
    st = os.stat(path)  # an editor saves later than a file system's clock tick; a test may not
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert _filled_and_drained(path) == ("first", "second")


def test_a_design_file_replaced_with_its_size_and_time_is_named_after_its_new_lines(
        design_file: DesignFile) -> None:
    """An API tester's variants, unpacked with their time kept (cp -p, tar), were named after
    the first one's lines: linecache trusts a file whose size and time did not change."""
    path = design_file(TWO_FIFOS)
    assert _filled_and_drained(path) == ("first", "second")
    st = os.stat(path)
    text = path.read_text()
    a, b = "    first = fifo(Tensor[64, i32])\n", "    second = fifo(Tensor[64, i32])\n"
    path.write_text(text.replace(a + b, b + a))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _filled_and_drained(path) == ("first", "second")
    path.write_text(text.replace("first", "alpha").replace("second", "omega"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _filled_and_drained(path) == ("alpha", "omega")


# -- define() outside the design file ---------------------------------------------------------

def test_a_define_in_a_module_the_design_imports_is_refused(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """define() in a helper module kept its first value on every later load (the module runs
    once per process) and -D then matched "no define() in d.py"."""
    design_file('''
        from aiedsl import define

        N = define("N", 4096)
        ''', name="sizes_for_library_test.py")
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime
        from sizes_for_library_test import N
        ''')
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(DesignError) as e:
            load_design(path, {"N": "8192"})
    finally:
        sys.modules.pop("sizes_for_library_test", None)
    assert str(e.value) == (
        "sizes_for_library_test.py:3: error [define]: define 'N' is called in "
        "sizes_for_library_test.py, not in the design file d.py\n"
        "  limit: define() belongs in the design file aiedsl loads: a module it imports runs "
        "once per process, so a second load (with -D or not) would not run its define() and "
        "would keep the first value\n"
        "  fix: move N = define(\"N\", ...) into d.py and pass N to the code in "
        "sizes_for_library_test.py (as a function's argument)")


def test_a_design_imports_a_module_beside_it_from_any_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`import vk` of vk.py beside the design was a ModuleNotFoundError unless PYTHONPATH named
    the folder: `python design.py` puts the script's folder first on the import path."""
    folder = tmp_path / "vision"
    folder.mkdir()
    (folder / "helper_beside_the_design.py").write_text("TILE = 256\n")
    (folder / "d.py").write_text(
        "from aiedsl import Tensor, design, fifo, herd, i32, runtime\n"
        "from helper_beside_the_design import TILE\n"
        "\n"
        "@design(device=\"npu1_1col\")\n"
        "def d(a: Tensor[TILE, i32], c: Tensor[TILE, i32]):\n"
        "    f = fifo(Tensor[TILE, i32], name=\"f\")\n"
        "    g = f.forward(name=\"g\")\n"
        "    with runtime() as rt:\n"
        "        rt.fill(f, a)\n"
        "        rt.drain(g, c)\n")
    monkeypatch.chdir(tmp_path)
    before = list(sys.path)
    try:
        handle = load_design(folder / "d.py")
    finally:
        sys.modules.pop("helper_beside_the_design", None)
    assert handle.ir.tensors[0].type.shape == (256,)
    assert sys.path == before  # the folder was on it while the file ran, not after


def test_two_designs_import_their_own_helper_modules_of_one_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A/helpers.py and B/helpers.py: the second load got A's, cached in sys.modules."""
    for folder, tile in (("A", 1024), ("B", 2048)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "helpers.py").write_text(f"TILE = {tile}\n")
        (tmp_path / folder / "d.py").write_text(
            "from aiedsl import Tensor, design, fifo, i32, runtime\n"
            "from helpers import TILE\n"
            "\n"
            "@design(device=\"npu1_1col\")\n"
            "def d(a: Tensor[TILE, i32], c: Tensor[TILE, i32]):\n"
            "    f = fifo(Tensor[TILE, i32], name=\"f\")\n"
            "    g = f.forward(name=\"g\")\n"
            "    with runtime() as rt:\n"
            "        rt.fill(f, a)\n"
            "        rt.drain(g, c)\n")
    monkeypatch.chdir(tmp_path)
    shapes = [load_design(tmp_path / f / "d.py").ir.fifo("f").elem.shape for f in "AB"]
    assert shapes == [(1024,), (2048,)]
    assert "helpers" not in sys.modules


def test_a_define_outside_any_load_takes_its_default() -> None:
    """A design built inline in a script (no design file loaded) may define where it likes."""
    from aiedsl import define

    assert define("N", 4096) == 4096


# -- loads from several threads ---------------------------------------------------------------

def test_loads_from_two_threads_leave_argv_and_modules_as_they_were(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch) -> None:
    """runpy swaps sys.argv[0] and sys.modules['__aiedsl_design__'] while a file runs and puts
    back what it found: a load that began while another ran, and ended after it, put back the
    other's path and module for good. The files below meet in that order (a.py starts, b.py
    starts, a.py ends, b.py ends); each load now has a module of its own and leaves argv be."""
    sync = types.ModuleType("library_use_sync")
    sync.a_in, sync.b_in, sync.a_out = (threading.Event() for _ in range(3))  # type: ignore
    monkeypatch.setitem(sys.modules, "library_use_sync", sync)
    a = design_file("import library_use_sync as s\ns.a_in.set()\ns.b_in.wait(0.5)\n"
                    + textwrap.dedent(TWO_FIFOS), name="a.py")
    b = design_file("import library_use_sync as s\ns.b_in.set()\ns.a_out.wait(10)\n"
                    + textwrap.dedent(TWO_FIFOS), name="b.py")
    argv0, modules = sys.argv[0], set(sys.modules)
    errors: list[BaseException] = []

    def load(path: Path) -> None:
        try:
            load_design(path)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    first = threading.Thread(target=load, args=(a,))
    second = threading.Thread(target=load, args=(b,))
    first.start()
    sync.a_in.wait()  # type: ignore[attr-defined]
    second.start()
    first.join()
    sync.a_out.set()  # type: ignore[attr-defined]
    second.join()
    assert errors == []
    assert sys.argv[0] == argv0
    assert set(sys.modules) - modules == set()  # no design's module left behind
    assert sync.b_in.is_set()  # type: ignore[attr-defined]  (they did meet: no lock)


def test_a_design_file_that_loaded_another_still_defines_dataclasses(
        design_file: DesignFile) -> None:
    """One module name for every load: the inner load's end took the outer design's module out
    of sys.modules, and a dataclass with string annotations defined after it failed (a
    reviewer). Each load has a name of its own; what aiedsl writes says __aiedsl_design__."""
    outer = design_file(f"""from __future__ import annotations
import dataclasses
from aiedsl.loader import load_design
inner = load_design({str(PASSTHROUGH)!r}).name
@dataclasses.dataclass
class Cfg:
    n: int = 64
""" + textwrap.dedent(TWO_FIFOS), name="outer.py")
    assert load_design(outer).name == "d"


def test_a_kernel_reference_defined_in_the_design_reads_the_same_from_every_load(
        design_file: DesignFile) -> None:
    """Each load runs under a name of its own; design.json names the design's module as one."""
    from tests.test_kernels import WRONG  # a design declaring its kernel's reference itself

    path = design_file(WRONG)
    first, second = load_design(path).ir, load_design(path).ir
    assert first.kernels[0].reference == "__aiedsl_design__:copy_ref"
    assert first.model_dump_json() == second.model_dump_json()


def test_a_design_file_may_load_designs_on_other_threads(design_file: DesignFile) -> None:
    """A lock around the loads (the first fix of the above) hung this: the outer load held it
    while its threads waited for it (a reviewer)."""
    outer = design_file(f"""
from concurrent.futures import ThreadPoolExecutor
from aiedsl.loader import load_design
with ThreadPoolExecutor(2) as pool:
    loaded = list(pool.map(load_design, [{str(PASSTHROUGH)!r}] * 2))
""" + textwrap.dedent(TWO_FIFOS), name="outer.py")
    assert load_design(outer).name


# -- errors through pickle and copy -----------------------------------------------------------

def _errors() -> list[DesignError]:
    at, other = Loc(file="d.py", line=3), Loc(file="d.py", line=9)
    plain = DesignError("fifo depth", "fifo 'a' has depth 0", loc=at, limit="depth >= 1",
                        found="0", fix="give depth=1 or more", related=[("fifo 'b'", other)])
    tool = ToolchainError("aiecc", "aiecc failed", exit_code=5, notes=["$ aiecc aie.mlir"],
                          loc=at, fix="read logs/aiecc.log")
    stuck = Deadlock("deadlock", "nothing can move", loc=None, fix="break the cycle")
    stuck.chain = ["<- core[0,0] waits"]  # type: ignore[attr-defined]  # as explain() sets
    stuck.first_loc = other  # type: ignore[attr-defined]
    stuck.message = "nothing can move\n<- core[0,0] waits"
    stuck.args = (stuck.render(),)
    return [plain, tool, stuck]


@pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy"])
@pytest.mark.parametrize("index", [0, 1, 2])
def test_a_design_error_survives_pickle_and_copy(how: str, index: int) -> None:
    """pickle.loads(pickle.dumps(DesignError(...))) raised TypeError (Exception rebuilds from
    args): a multiprocessing pool whose worker raised one hung for good."""
    error = _errors()[index]
    again: Any = {"pickle": lambda e: pickle.loads(pickle.dumps(e)), "copy": copy.copy,
                  "deepcopy": copy.deepcopy}[how](error)
    assert type(again) is type(error) and again is not error
    assert vars(again) == vars(error) and again.args == error.args
    assert str(again) == str(error) and again.render() == error.render()
    assert getattr(again, "exit_code", None) == getattr(error, "exit_code", None)


# -- what the design's reference is handed ----------------------------------------------------

GEMM = {"M": "256", "K": "64", "N": "256"}


def test_the_reference_gets_inputs_in_their_declared_shape(in_root: Path) -> None:
    """A flat A (any shape is accepted) reached the reference as given, whose A @ B failed
    after the whole simulation, blamed on the design's line."""
    import ml_dtypes

    handle = load_design("designs/gemm_bf16.py", GEMM)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((256, 64)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((64, 256)).astype(ml_dtypes.bfloat16)
    assert simulate(handle, {"A": a.reshape(-1), "B": b.reshape(128, 128)}).passed
    expected = handle.expected({"A": a.reshape(-1), "B": b})
    assert np.array_equal(expected["C"], a.astype(np.float32) @ b.astype(np.float32))


WRITES_ITS_INPUT = '''
    from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
    from aiedsl.kernels import passthrough

    @design(device="npu1_1col")
    def copy(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
        a = fifo(Tensor[1024, i32])
        b = fifo(Tensor[1024, i32])
        k = passthrough(Tensor[1024, i32])

        @herd()
        def core():
            for _ in loop(4):
                with a.consume() as x, b.produce() as y:
                    k(x, y)

        with runtime() as rt:
            rt.fill(a, inp)
            rt.drain(b, out)

    @copy.reference
    def ref(inp):
        inp[0] = 7
        return inp
    '''


@pytest.mark.parametrize("write", ["inp[0] = 7", "inp += 1"])
def test_a_reference_that_writes_its_input_is_refused(design_file: DesignFile,
                                                      write: str) -> None:
    """A reference writing its input changed the caller's array, and so the next run's input.
    The simulator and the NPU run both hand it inputs through DesignHandle.expected."""
    path = design_file(WRITES_ITS_INPUT.replace("inp[0] = 7", write))
    art = aiedsl.build(path, write=False)
    data = np.arange(4096, dtype=np.int32)
    with pytest.raises(DesignError) as e:
        art.run(data, target="sim")
    numpy_says = "assignment destination" if "[" in write else "output array"
    assert str(e.value) == (
        "d.py:22: error [reference]: the reference of 'copy' writes into a read-only array\n"
        "  limit: its inputs (inp) are the caller's arrays, read-only: written, they would "
        "change the caller's data and what the next run is given\n"
        f"  found: ValueError: {numpy_says} is read-only\n"
        "  fix: compute into a new array (x + 1, not x += 1), or copy the input first "
        "(x = x.copy())")
    assert np.array_equal(data, np.arange(4096, dtype=np.int32)) and data.flags.writeable
    with pytest.raises(DesignError):  # the NPU run's check calls the same
        art.handle.expected({"inp": data})
    assert np.array_equal(data, np.arange(4096, dtype=np.int32))


# -- the options of a run ---------------------------------------------------------------------

OPTIONS = [
    ({"kernels": "ref"},
     "error [kernels]: kernels='ref' is neither 'reference' nor 'native'\n"
     "  limit: 'reference' (each kernel's numpy reference) or 'native' (its C++, built for the "
     "host)\n  found: 'ref'\n  fix: give kernels='reference' or kernels='native'"),
    ({"seed": -1},
     "error [seed]: seed=-1 is not a non-negative int\n"
     "  limit: an int >= 0 (it seeds numpy's random generator)\n  found: int -1\n"
     "  fix: give seed=0, 1, 2, ..."),
    ({"seed": 1.5},
     "error [seed]: seed=1.5 is not a non-negative int\n"
     "  limit: an int >= 0 (it seeds numpy's random generator)\n  found: float 1.5\n"
     "  fix: give seed=0, 1, 2, ..."),
    ({"seed": "x"},
     "error [seed]: seed='x' is not a non-negative int\n"
     "  limit: an int >= 0 (it seeds numpy's random generator)\n  found: str 'x'\n"
     "  fix: give seed=0, 1, 2, ..."),
    ({"clock_hz": True},
     "error [clock]: a clock of True Hz\n  limit: 1 MHz to 100 GHz\n  found: True\n"
     "  fix: give the core clock in Hz, e.g. 1.0e9"),
    ({"clock_hz": 1e12},
     "error [clock]: a clock of 1000000000000.0 Hz\n  limit: 1 MHz to 100 GHz\n"
     "  found: 1000000000000.0\n  fix: give the core clock in Hz, e.g. 1.0e9"),
]


@pytest.mark.parametrize("options, message", OPTIONS + [
    ({"target": "bogus"},
     "error [target]: target='bogus' is not 'auto', 'npu' or 'sim'\n"
     "  limit: 'auto' (the NPU when there is one, else the simulator), 'npu' or 'sim'\n"
     "  found: 'bogus'\n  fix: give target='auto', target='npu' or target='sim'")])
def test_a_runs_options_are_checked_at_the_callers_line(
        options: dict[str, Any], message: str, in_root: Path) -> None:
    """kernels="ref" ran the C++, seed=-1 was a numpy error, target="bogus" a ValueError."""
    art = aiedsl.build("designs/passthrough.py", write=False)
    with pytest.raises(DesignError) as e:
        art.run(**options)  # a run's options
    assert str(e.value) == f"{HERE}:{_line_of('art.run(**options)  # a run')}: {message}"


@pytest.mark.parametrize("options, message", OPTIONS)
def test_simulates_options_are_checked_at_the_callers_line(
        options: dict[str, Any], message: str, in_root: Path) -> None:
    handle = load_design("designs/passthrough.py")
    with pytest.raises(DesignError) as e:
        simulate(handle, **options)  # simulate's options
    assert str(e.value) == f"{HERE}:{_line_of('simulate(handle, **options)  # sim')}: {message}"


def test_numpy_numbers_are_taken_for_the_seed_and_the_clock(in_root: Path) -> None:
    """clock_hz=np.int64(2_000_000_000) was refused (np.float64 was taken)."""
    art = aiedsl.build("designs/passthrough.py", write=False)
    result = art.run(target="sim", seed=np.int64(3), clock_hz=np.int64(2_000_000_000))
    assert result.passed and result.timing.clock_hz == 2e9
    assert type(result.timing.clock_hz) is float
    same = art.run(target="sim", seed=3, clock_hz=2e9)
    assert np.array_equal(result.inputs["inp"], same.inputs["inp"])
    assert result.timing.cycles == same.timing.cycles


# -- documentation and display ----------------------------------------------------------------

def _modules() -> list[str]:
    import pkgutil

    return sorted(m.name for m in pkgutil.walk_packages(aiedsl.__path__, "aiedsl.")
                  if not m.name.endswith("__main__"))


@pytest.mark.parametrize("module", ["aiedsl.api", "aiedsl.render"])
def test_the_modules_examples_run_as_written(module: str, in_root: Path) -> None:
    """api.py's example showed the README's M=512 figures for M=256, with A and B never made;
    mlir_string's example, in a docstring that was not raw, tested another string."""
    import importlib

    result = doctest.testmod(importlib.import_module(module), report=False)
    assert result.attempted > 0 and result.failed == 0


def test_every_docstring_example_runs_or_says_it_cannot(in_root: Path) -> None:
    """Six modules' examples skipped their first line only, so the rest failed (a tester ran
    them: 13 NameErrors). Every example runs from the project folder, or is marked +SKIP."""
    import importlib

    failed = {}
    for module in _modules():
        result = doctest.testmod(importlib.import_module(module), report=False,
                                 optionflags=doctest.ELLIPSIS)
        if result.failed:
            failed[module] = result.failed
    assert failed == {}


def test_results_show_in_one_short_line(tmp_path: Path, in_root: Path) -> None:
    """repr(Artifacts) ran to 255 KB and repr(SimResult) to 166 KB: a notebook cell drowned."""
    art = aiedsl.build("designs/passthrough.py", write=False)
    assert repr(art) == "Artifacts(passthrough on npu1_1col, nothing written)"
    assert repr(art.handle) == \
        "DesignHandle(passthrough on npu1_1col: inp -> out; reference reference())"
    run = art.run(target="sim")
    us = significant(run.seconds * 1e6)
    assert repr(run) == f"RunResult(sim: out int32[4096] PASS; {us} us)"
    sim = simulate(art.handle, check=False)
    assert repr(sim) == f"SimResult(passthrough on npu1_1col: out int32[4096]; {us} us)"
    written = aiedsl.build("designs/passthrough.py", output=tmp_path / "p", lower=False)
    assert repr(written) == f"Artifacts(passthrough on npu1_1col, {tmp_path / 'p'}: " \
        f"{len(written.files)} files)"


def test_compiling_a_build_that_wrote_nothing_is_a_design_error(in_root: Path) -> None:
    """It was a plain ValueError (a tester)."""
    art = aiedsl.build("designs/passthrough.py", write=False)
    with pytest.raises(DesignError) as e:
        art.compile()
    assert e.value.loc is not None and e.value.loc.file.endswith("test_library_use.py")
    assert str(e.value) == (
        f"{e.value.loc.file}:{e.value.loc.line}: error [compile]: passthrough was built with "
        "write=False: there is no build directory for Peano and aiecc to work in\n"
        "  fix: build it with aiedsl.build(..., write=True) (the default), then compile")


def test_an_empty_output_directory_is_refused_as_on_the_command_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """aiedsl.build(output="") (an unset variable) built into build/<design> unsaid, where the
    command line refuses -o ''."""
    import inspect

    from aiedsl import api

    monkeypatch.chdir(tmp_path)
    for call in (lambda: aiedsl.build(PASSTHROUGH, output=""),
                 lambda: api.building(PASSTHROUGH, output="").__enter__()):
        with pytest.raises(DesignError) as excinfo:
            call()
        e = excinfo.value
        assert (e.loc.line, e.message, e.found, e.fix) == (
            inspect.getsourcelines(call)[1], "output='' names no directory", "''",
            "name a directory, or leave output= out for build/<design>")
    assert os.listdir(tmp_path) == []
