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
        "  limit: define() belongs in the design file aiedsl loads: a module it imports may "
        "run once per process (any but those of the design's own folder), so a second load "
        "(with -D or not) would not run its define() and would keep the first value\n"
        "  d.py:2: the module imports sizes_for_library_test\n"
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
    assert sys.path == before  # the folder is never put on it: sys.path is the process's


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


# -- the modules of a design's folder are that folder's, for each load --------------------------

MUL_KERNEL = """\
#include <aie_api/aie.hpp>
template <unsigned N, int F> void mulc(const int32_t *in, int32_t *out) {
  for (unsigned i = 0; i < N; i++) out[i] = in[i] * F;
}
"""

MUL_HELPERS = """\
from aiedsl import Tensor, i32
from aiedsl.kernels import buffer, declare
FACTOR = {factor}
def ref(src, dst):
    dst[...] = src * FACTOR
def kern():
    return declare("mul{factor}_i32_256", source="k.cc", entry="mulc<256, {factor}>",
                   args=[buffer("src", Tensor[256, i32]), buffer("dst", Tensor[256, i32], "out")],
                   reference=ref, cost="x", cycles=142, ops=256)
"""

MUL_DESIGN = """\
{before}
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
import helpers
{after}
@design(device="npu1_1col")
def mulk(inp: Tensor[1024, i32], out: Tensor[1024, i32]):
    a, b = fifo(Tensor[256, i32]), fifo(Tensor[256, i32])
    k = helpers.kern()
    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as x, b.produce() as y:
                k(x, y)
    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)
@mulk.reference
def reference(inp):
    return inp * helpers.FACTOR
"""


def _mul_folder(root: Path, folder: str, factor: int, before: str = "", after: str = "",
                name: str = "d.py") -> Path:
    """``root/folder`` with a helpers.py (FACTOR = ``factor``, its kernel multiplying by it),
    the kernel's C++ and a design that imports helpers and multiplies by helpers.FACTOR;
    ``before`` and ``after`` are lines around its ``import helpers``."""
    (root / folder).mkdir(exist_ok=True)
    (root / folder / "helpers.py").write_text(MUL_HELPERS.format(factor=factor))
    (root / folder / "k.cc").write_text(MUL_KERNEL)
    path = root / folder / name
    path.write_text(MUL_DESIGN.format(before=before, after=after))
    return path


def _imported_by_the_process(monkeypatch: pytest.MonkeyPatch, folder: Path,
                             name: str) -> types.ModuleType:
    """Module ``name`` of ``folder`` imported as a notebook imports its own (``folder`` on
    the path), for the test's time (then taken out of sys.modules again)."""
    import importlib

    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setitem(sys.modules, name, types.ModuleType(name))  # undone: taken out
    del sys.modules[name]
    return importlib.import_module(name)


def _factor(handle: aiedsl.DesignHandle) -> tuple[str, int, bool]:
    """What a loaded mul design multiplies by: its kernel, the factor of a simulation (the
    kernel's reference) and whether that simulation matched the design's reference."""
    x = np.arange(1, 1025, dtype=np.int32)
    r = simulate(handle, {"inp": x})
    return handle.ir.kernels[0].symbol, int(r.outputs["out"][0]), r.passed


def test_designs_loaded_on_two_threads_import_their_own_folders_helpers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tester's loads of A/d.py and B/d.py (each `import helpers` from its folder, FACTOR 2
    and 3) from a thread pool: 3 to 5 of 16 got the other folder's helpers, reference and all,
    so the simulation said PASS. Here B imports its helpers while A's load, which imported
    A's, still runs: it got A's from sys.modules."""
    sync = types.ModuleType("library_use_helpers_sync")
    sync.a_in, sync.b_out = threading.Event(), threading.Event()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "library_use_helpers_sync", sync)
    a = _mul_folder(tmp_path, "A", 2, after="import library_use_helpers_sync as s\n"
                    "s.a_in.set()\nassert s.b_out.wait(10)")
    b = _mul_folder(tmp_path, "B", 3, before="import library_use_helpers_sync as s\n"
                    "assert s.a_in.wait(10)")
    monkeypatch.chdir(tmp_path)
    loaded: dict[str, Any] = {}

    def load(path: Path) -> None:
        try:
            loaded[path.parent.name] = load_design(path)
        except BaseException as e:  # reported by the main thread
            loaded[path.parent.name] = e

    first = threading.Thread(target=load, args=(a,))
    second = threading.Thread(target=load, args=(b,))
    first.start()
    second.start()
    second.join()
    sync.b_out.set()  # type: ignore[attr-defined]
    first.join()
    assert _factor(loaded["A"]) == ("mul2_i32_256", 2, True)
    assert _factor(loaded["B"]) == ("mul3_i32_256", 3, True)
    assert "helpers" not in sys.modules
    assert not [m for m in sys.modules if m.startswith("__aiedsl_design")]


def test_designs_loaded_from_a_thread_pool_import_their_own_folders_helpers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tester's pool as it was: 16 loads of A/d.py and B/d.py on 4 threads."""
    from concurrent.futures import ThreadPoolExecutor

    paths = [_mul_folder(tmp_path, f, n) for f, n in (("A", 2), ("B", 3))]
    monkeypatch.chdir(tmp_path)
    with ThreadPoolExecutor(4) as pool:
        symbols = list(pool.map(lambda p: load_design(p).ir.kernels[0].symbol, paths * 8))
    assert symbols == ["mul2_i32_256", "mul3_i32_256"] * 8


def test_a_helpers_module_the_process_imported_is_not_a_designs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A notebook that had imported a helpers.py of its own (FACTOR 7) gave both designs that
    one: sys.modules held it, and the import statement takes what sys.modules holds."""
    (tmp_path / "notebook").mkdir()
    (tmp_path / "notebook" / "helpers.py").write_text("FACTOR = 7\n")
    helpers = _imported_by_the_process(monkeypatch, tmp_path / "notebook", "helpers")
    paths = [_mul_folder(tmp_path, f, n) for f, n in (("A", 2), ("B", 3))]
    monkeypatch.chdir(tmp_path)
    assert [_factor(load_design(p)) for p in paths] == [
        ("mul2_i32_256", 2, True), ("mul3_i32_256", 3, True)]
    assert sys.modules["helpers"] is helpers and helpers.FACTOR == 7


def test_the_folders_module_the_process_imported_from_that_file_is_shared(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A notebook in the design's folder that imported its helpers.py: the design imports that
    very file, and gets the module the process has of it (as `python design.py` run from there
    would), not a second copy (aiedsl itself, for a design at aiedsl's project root)."""
    path = _mul_folder(tmp_path, "A", 2)
    helpers = _imported_by_the_process(monkeypatch, tmp_path / "A", "helpers")
    monkeypatch.chdir(tmp_path)
    handle = load_design(path)
    assert handle.reference_fn.__globals__["helpers"] is helpers  # type: ignore[union-attr]
    assert _factor(handle) == ("mul2_i32_256", 2, True)


def test_a_design_file_that_loads_another_keeps_its_helpers_and_the_inner_has_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """C/outer.py imported its helpers (FACTOR 5), then loaded B/d.py: the inner design got
    C's helpers (C's folder first on the path, its helpers in sys.modules)."""
    inner = _mul_folder(tmp_path, "B", 3)
    outer = _mul_folder(tmp_path, "C", 5, name="outer.py",
                        after=f"inner = __import__('aiedsl').load_design({str(inner)!r})\n"
                        "import helpers as again\nassert again is helpers\n")
    monkeypatch.chdir(tmp_path)
    handle = load_design(outer, name="mulk")  # the outer file's own (inner is one too)
    assert _factor(handle) == ("mul5_i32_256", 5, True)
    scope_inner = handle.reference_fn.__globals__["inner"]  # type: ignore[union-attr]
    assert _factor(scope_inner) == ("mul3_i32_256", 3, True)


def test_a_function_that_imports_at_call_time_gets_its_loads_helpers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reference whose body says `import helpers`, run after both loads ended (a
    simulation): the module its own load imported, whatever was loaded since."""
    lazy = "def factor():\n    import helpers as h\n    return h.FACTOR\n"
    paths = [_mul_folder(tmp_path, f, n, after=lazy) for f, n in (("A", 2), ("B", 3))]
    monkeypatch.chdir(tmp_path)
    handles = [load_design(p) for p in paths]
    scopes = [h.reference_fn.__globals__ for h in handles]  # type: ignore[union-attr]
    assert [s["factor"]() for s in scopes] == [2, 3]
    assert [s["factor"]() for s in reversed(scopes)] == [3, 2]
    assert scopes[0]["helpers"] is not scopes[1]["helpers"]
    assert "helpers" not in sys.modules


def test_a_package_beside_the_design_imports_its_own_modules(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A package in the design's folder, with relative imports and a submodule imported by
    name, while the process holds another module of that package's name."""
    pkg = tmp_path / "A" / "sizes_pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .tiles import TILE\nfrom . import more\n")
    (pkg / "tiles.py").write_text("TILE = 128\n")
    (pkg / "more.py").write_text("from .tiles import TILE\nDOUBLE = 2 * TILE\n")
    (pkg / "extra.py").write_text("EXTRA = 3\n")
    monkeypatch.setitem(sys.modules, "sizes_pkg", types.ModuleType("sizes_pkg"))
    path = tmp_path / "A" / "d.py"
    path.write_text(textwrap.dedent("""\
        import sizes_pkg.tiles
        from sizes_pkg import TILE, extra, more
        assert sizes_pkg.tiles.TILE == TILE == 128 and more.DOUBLE == 256 and extra.EXTRA == 3
        """) + textwrap.dedent(TWO_FIFOS))
    monkeypatch.chdir(tmp_path)
    assert load_design(path).name == "d"
    assert not [m for m in sys.modules if m.startswith("__aiedsl_design")]


def test_a_folder_without_init_beside_the_design_imports_as_python_imports_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """(a CI integrator's tester) ``helpers/`` without ``__init__.py`` (a namespace package, as
    ``python design.py`` imports it) failed: "module '__aiedsl_design_0__' has no attribute
    '__path__'", taken for the user's mistake. Its modules import, a sub-folder's too, and
    each load gets its own."""
    for folder, factor in (("A", 2), ("B", 3)):
        sub = tmp_path / folder / "helpers" / "deep"
        sub.mkdir(parents=True)
        (sub.parent / "refs.py").write_text(f"FACTOR = {factor}\n")
        (sub / "more.py").write_text("from helpers.refs import FACTOR\nTWICE = 2 * FACTOR\n")
        (tmp_path / folder / "d.py").write_text(textwrap.dedent(f"""\
            from helpers.refs import FACTOR
            import helpers.deep.more
            assert FACTOR == {factor} and helpers.deep.more.TWICE == {2 * factor}
            """) + textwrap.dedent(TWO_FIFOS))
    monkeypatch.chdir(tmp_path)
    assert load_design(tmp_path / "A" / "d.py").name == "d"
    assert load_design(tmp_path / "B" / "d.py").name == "d"
    assert not [m for m in sys.modules if m.startswith("__aiedsl_design")]
    # a part of the namespace elsewhere on the import path joins it, as Python joins them
    # (a reviewer: it was left out)
    (tmp_path / "lib" / "helpers").mkdir(parents=True)
    (tmp_path / "lib" / "helpers" / "shared.py").write_text("SHARED = 7\n")
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))
    path = tmp_path / "A" / "d.py"
    path.write_text("from helpers.shared import SHARED\nassert SHARED == 7\n" + path.read_text())
    assert load_design(path).name == "d"


def test_a_helper_module_defines_dataclasses_with_string_annotations(
        design_file: DesignFile) -> None:
    """dataclasses looks a class's module up in sys.modules to read a string annotation: a
    module of the folder is there (under its load's name) while it runs."""
    design_file("from __future__ import annotations\nimport dataclasses\n"
                "@dataclasses.dataclass\nclass Cfg:\n    n: int = 64\n", name="cfg_mod.py")
    path = design_file("from cfg_mod import Cfg\nassert Cfg().n == 64\n"
                       + textwrap.dedent(TWO_FIFOS))
    assert load_design(path).name == "d"


def test_a_helper_modules_error_is_at_its_line(design_file: DesignFile) -> None:
    """An exception in a module beside the design is the user's, at that module's line."""
    design_file("X = 1\nY = undefined_name\n", name="broken_mod.py")
    path = design_file("import broken_mod\n" + textwrap.dedent(TWO_FIFOS))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "broken_mod.py:2: error [python error]: NameError: name 'undefined_name' is not "
        "defined (while loading d.py)\n"
        "  d.py:1: the module imports broken_mod\n"
        "  fix: fix the code at this line")
    assert isinstance(e.value.__cause__, NameError)  # its traceback, for a Python caller


def test_a_define_outside_any_load_takes_its_default() -> None:
    """A design built inline in a script (no design file loaded) may define where it likes."""
    from aiedsl import define

    assert define("N", 4096) == 4096


# -- defines= from Python ----------------------------------------------------------------------

DEFINED = """
from aiedsl import define
N = define("N", 4096)
SCALE = define("SCALE", 0.5)
FLAG = define("FLAG", False)
OUT = define("OUT", "f32")
""" + textwrap.dedent(TWO_FIFOS)


@pytest.mark.parametrize("given, value", [
    ({"N": 8192}, 8192), ({"N": np.int64(8192)}, 8192), ({"N": "8192"}, 8192),
    ({"SCALE": 2}, 2.0), ({"SCALE": np.float32(0.25)}, 0.25), ({"SCALE": "1e-3"}, 0.001),
    ({"FLAG": True}, True), ({"FLAG": np.True_}, True), ({"FLAG": "yes"}, True),
    ({"OUT": "bf16"}, "bf16")])
def test_a_define_takes_a_value_of_its_type_or_text_from_python(
        design_file: DesignFile, given: dict[str, object], value: object) -> None:
    path = design_file(DEFINED)
    (name, _), = given.items()
    taken = load_design(path, given).ir.defines[name]
    assert taken == value and type(taken) is type(value)


@pytest.mark.parametrize("given, gives, limit, found, fix", [
    (8192.7, "a float", "an int (numpy's integers too), or text as -D reads it", "8192.7 (float)",
     "give an int, e.g. defines={'N': 4096} (-D N=4096 on the command line)"),
    (8192.0, "a float", "an int (numpy's integers too), or text as -D reads it", "8192.0 (float)",
     "give an int, e.g. defines={'N': 4096} (-D N=4096 on the command line)"),
    (True, "a bool", "an int (numpy's integers too), or text as -D reads it", "True (bool)",
     "give an int, e.g. defines={'N': 4096} (-D N=4096 on the command line)"),
    (None, "None", "an int (numpy's integers too), or text as -D reads it", "None",
     "give an int, e.g. defines={'N': 4096} (-D N=4096 on the command line)")])
def test_a_define_refuses_a_python_value_of_another_type(
        design_file: DesignFile, given: object, gives: str, limit: str, found: str,
        fix: str) -> None:
    """load_design(path, {'N': 8192.7}) gave N = 8192 (int() truncates) and {'N': True} N = 1,
    which failed far away; build() refused both (as text: '-D N=8192.7 is not a valid int').
    Both now hold a Python value to the define's type, at the caller's line."""
    from aiedsl.errors import display_path

    path = design_file(DEFINED)
    with pytest.raises(DesignError) as loaded:
        load_design(path, {"N": given})  # the load's line
    with pytest.raises(DesignError) as built:
        aiedsl.build(path, defines={"N": given}, write=False)  # build's line
    for e, marker in ((loaded, "# the load's line"), (built, "# build's line")):
        assert str(e.value) == (
            f"{display_path(__file__)}:{_line_of(marker)}: error [define]: "
            f"defines={{'N': {given!r}}} gives define 'N' {gives}, not an int\n"
            f"  limit: {limit}\n"
            f"  found: {found}\n"
            "  d.py:2: define 'N'\n"
            f"  fix: {fix}")


@pytest.mark.parametrize("name, given, message", [
    ("FLAG", 1, "defines={'FLAG': 1} gives define 'FLAG' an int, not a bool"),
    ("SCALE", True, "defines={'SCALE': True} gives define 'SCALE' a bool, not a float"),
    ("SCALE", float("inf"), "defines={'SCALE': inf} gives define 'SCALE' inf, which is not "
     "finite"),
    ("OUT", aiedsl.f32, "defines={'OUT': f32} gives define 'OUT' a DType, not a str"),
    ("OUT", 5, "defines={'OUT': 5} gives define 'OUT' an int, not a str")])
def test_each_define_type_refuses_the_others(design_file: DesignFile, name: str,
                                             given: object, message: str) -> None:
    path = design_file(DEFINED)
    with pytest.raises(DesignError) as e:
        load_design(path, {name: given})
    assert str(e.value).splitlines()[0].split(": ", 1)[1] == f"error [define]: {message}"


def test_text_from_python_is_read_as_the_command_line_reads_it(design_file: DesignFile) -> None:
    """A str is -D's text, refused alike: load_design and build in defines= words at the
    Python line, `aiedsl check -D` in -D words at the define's (a tester: Python's said -D)."""
    import subprocess

    path = design_file(DEFINED)
    for load in (lambda: load_design(path, {"N": "8192.7"}),  # from Python
                 lambda: aiedsl.build(path, defines={"N": "8192.7"}, write=False)):
        with pytest.raises(DesignError) as e:
            load()
        assert str(e.value).split(": ", 1)[1] == (
            "error [define]: defines={'N': '8192.7'} is not a valid int\n"
            "  found: '8192.7'\n"
            "  d.py:2: define 'N'\n"
            "  fix: give an int, e.g. defines={'N': 4096} (a str is read as -D reads it: "
            "'4096')")
        assert e.value.loc is not None and e.value.loc.file.endswith("test_library_use.py")
    r = subprocess.run([sys.executable, "-m", "aiedsl", "check", str(path), "-D", "N=8192.7"],
                       capture_output=True, text=True, cwd=path.parent)
    assert (r.returncode, r.stderr) == (2, "d.py:2: error [define]: -D N=8192.7 is not a valid "
                                           "int\n  found: 8192.7\n  fix: give an int, e.g. -D "
                                           "N=4096 (from Python: defines={'N': 4096})\n")


def test_defines_must_be_a_dict_of_names(design_file: DesignFile) -> None:
    path = design_file(DEFINED)
    with pytest.raises(DesignError) as e:
        load_design(path, ["N=8192"])  # type: ignore[arg-type]
    assert str(e.value).split(": ", 1)[1] == (
        "error [define]: defines= is a list, not a dict\n"
        "  limit: a dict {NAME: value} of the design's define()s\n"
        "  found: ['N=8192']\n"
        "  fix: pass e.g. defines={\"N\": 8192}")
    with pytest.raises(DesignError) as e:
        load_design(path, {"N ": 8192})
    assert str(e.value).split(": ", 1)[1] == (
        "error [define]: defines= names 'N ', not a define's name\n"
        "  limit: each key the name a define() gives, a Python identifier (as -D NAME=)\n"
        "  found: 'N '\n"
        "  fix: pass e.g. defines={\"N\": 8192}")


def test_refuse_outside_a_design_load_says_no_value_is_known(design_file: DesignFile) -> None:
    """refuse("M", ...) in a design traced in a notebook said only `found: M`."""
    from aiedsl import refuse

    with pytest.raises(DesignError) as e:
        refuse("M", "M=3 is odd", limit="an even M", fix="give an even M")
    assert str(e.value).split(": ", 1)[1] == (
        "error [define]: M=3 is odd\n"
        "  limit: an even M\n"
        "  found: define 'M', whose value is not known here (no design file is being loaded, "
        "so no -D value or default was recorded)\n"
        "  fix: give an even M")
    path = design_file("from aiedsl import refuse\n"
                       "refuse('M', 'M=3 is odd', limit='an even M', fix='give an even M')\n")
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value).splitlines()[2] == (
        "  found: 'M', which no define() of d.py has taken (yet)")


def test_a_users_exception_says_aiedsl_traceback_on_the_command_line_only(
        design_file: DesignFile) -> None:
    """From Python the error said "AIEDSL_TRACEBACK=1 shows the whole traceback", which only
    the command line reads: a Python caller has the traceback as the error's __cause__."""
    import subprocess

    from aiedsl.user_errors import command_line_text

    path = design_file("X = 1 // 0\n")
    with pytest.raises(DesignError) as e:
        load_design(path)
    plain = ("d.py:1: error [python error]: ZeroDivisionError: integer division or modulo by "
             "zero (while loading d.py)\n"
             "  fix: fix the code at this line")
    assert str(e.value) == plain and isinstance(e.value.__cause__, ZeroDivisionError)
    told = plain + "; AIEDSL_TRACEBACK=1 shows the whole traceback"
    assert command_line_text(e.value) == told
    r = subprocess.run([sys.executable, "-m", "aiedsl", "check", str(path)],
                       capture_output=True, text=True, cwd=path.parent)
    assert (r.returncode, r.stderr) == (2, told + "\n")


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
    # an int past any float was an OverflowError; one past 4300 digits a ValueError (a tester)
    ({"clock_hz": 10**400},
     "error [clock]: a clock of 100000...000000 (401 digits) Hz\n  limit: 1 MHz to 100 GHz\n"
     "  found: 100000...000000 (401 digits)\n  fix: give the core clock in Hz, e.g. 1.0e9"),
    ({"seed": -10**5000},
     "error [seed]: seed=-100000...000000 (5001 digits) is not a non-negative int\n"
     "  limit: an int >= 0 (it seeds numpy's random generator)\n"
     "  found: int -100000...000000 (5001 digits)\n  fix: give seed=0, 1, 2, ..."),
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
    with pytest.raises(DesignError) as excinfo:  # a raw TypeError from pathlib (a tester)
        aiedsl.build(PASSTHROUGH, output=123)  # type: ignore[arg-type]
    assert str(excinfo.value).split(": ", 1)[1] == (
        "error [output directory]: output=123 is not a path\n"
        "  limit: a directory's path (str or Path)\n"
        "  found: 123\n"
        "  fix: name a directory, e.g. output='build/mine', or leave output= out for "
        "build/<design>")
    assert os.listdir(tmp_path) == []


def test_an_aiedsl_package_beside_a_design_is_not_a_second_aiedsl(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A design at the root of another aiedsl clone (aiedsl installed from elsewhere): its
    folder's aiedsl/ was imported for the load, a second aiedsl whose TensorType the running
    one refused ("passthrough takes the element type ..., not TensorType(...)"; a reviewer's
    reproducer)."""
    (tmp_path / "aiedsl").mkdir()
    (tmp_path / "aiedsl" / "__init__.py").write_text("raise ImportError('the folder copy')\n")
    (tmp_path / "numpy.py").write_text("raise ImportError('the folder numpy')\n")
    path = tmp_path / "d.py"
    path.write_text((Path(__file__).parent.parent / "designs" / "passthrough.py").read_text()
                    + "\nimport numpy\n")
    monkeypatch.chdir(tmp_path)
    handle = load_design(path)
    assert handle.ir.name == "passthrough"
    assert simulate(handle).passed


def test_a_design_named_like_a_module_it_imports_does_not_import_itself(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """S/aiedsl.py, a design: its `from aiedsl import ...` loaded the design file again as a
    module of its folder ("cannot import name 'Tensor' from '__aiedsl_design_0__.aiedsl'")."""
    (tmp_path / "S").mkdir()
    path = tmp_path / "S" / "aiedsl.py"
    path.write_text((Path(__file__).parent.parent / "designs" / "passthrough.py").read_text())
    monkeypatch.chdir(tmp_path)
    assert load_design(path).ir.name == "passthrough"
