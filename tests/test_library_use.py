"""aiedsl used as a library in one long-lived process (a notebook, a parameter sweep): designs
loaded again after an edit, from threads, errors sent between processes, results shown."""

from __future__ import annotations

import copy
import os
import pickle
import sys
import textwrap
import threading
import types
from pathlib import Path
from typing import Any, Callable

import pytest

from aiedsl.errors import DesignError, ToolchainError
from aiedsl.ir import Loc
from aiedsl.loader import load_design
from aiedsl.sim.explain import Deadlock

DesignFile = Callable[..., Path]

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


def test_a_define_outside_any_load_takes_its_default() -> None:
    """A design built inline in a script (no design file loaded) may define where it likes."""
    from aiedsl import define

    assert define("N", 4096) == 4096


# -- loads from several threads ---------------------------------------------------------------

def test_loads_from_two_threads_leave_argv_and_modules_as_they_were(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch) -> None:
    """runpy swaps sys.argv[0] and sys.modules['__aiedsl_design__'] while a file runs and puts
    back what it found: a load that began while another ran, and ended after it, put back the
    other's path and module for good. The files below meet in that order when nothing keeps
    them apart; one at a time, a.py's wait for b.py gives up (the only time anything waits)."""
    sync = types.ModuleType("library_use_sync")
    sync.a_in, sync.b_in, sync.a_out = (threading.Event() for _ in range(3))  # type: ignore
    monkeypatch.setitem(sys.modules, "library_use_sync", sync)
    a = design_file("import library_use_sync as s\ns.a_in.set()\ns.b_in.wait(0.5)\n"
                    + textwrap.dedent(TWO_FIFOS), name="a.py")
    b = design_file("import library_use_sync as s\ns.b_in.set()\ns.a_out.wait(10)\n"
                    + textwrap.dedent(TWO_FIFOS), name="b.py")
    argv0, had_module = sys.argv[0], "__aiedsl_design__" in sys.modules
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
    assert ("__aiedsl_design__" in sys.modules) == had_module


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
