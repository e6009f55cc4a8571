"""What a reference returns: a numpy masked array, whose masked elements are not compared (an
output padded to whole words, whose kernel writes only the first element: IRON's reduce tests
compare C[0] alone); never a coroutine or a generator."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from aiedsl.compare import compare
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.sim import simulate

DesignFile = Callable[..., Path]

DESIGN = '''
import numpy as np

from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough


@design(device="npu1_1col")
def d(inp: Tensor[64, i32], out: Tensor[64, i32]):
    a = fifo(Tensor[16, i32], name="a")
    b = fifo(Tensor[16, i32], name="b")
    copy = passthrough(Tensor[16, i32])

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as x, b.produce() as y:
                copy(x, y)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)


@d.reference
def reference(inp):
    BODY
'''


def run(design_file: DesignFile, body: str) -> str:
    handle = load_design(design_file(DESIGN.replace("BODY", body)))
    result = simulate(handle, {"inp": np.arange(64, dtype=np.int32)})
    return result.checks[0].line()


def test_masked_elements_are_not_compared(design_file: DesignFile) -> None:
    assert run(design_file, "r = np.ma.masked_array(inp + 0)\n    r[60:] = np.ma.masked\n"
               "    r.data[60:] = -7  # what nobody checks\n    return r") == (
        "PASS out: exact (integers must match exactly; 4 of 64 elements masked by the "
        "reference, not compared)")


def test_the_elements_left_unmasked_are_compared(design_file: DesignFile) -> None:
    line = run(design_file, "r = np.ma.masked_array(inp + 1)\n    r[:60] = np.ma.masked\n"
               "    return r")
    assert line.splitlines()[0] == (
        "FAIL out: worst element [60] got 60 want 61 (|error| 1; integers must match exactly; "
        "60 of 64 elements masked by the reference, not compared)")
    assert line.splitlines()[1] == "  wrong: 4 of 64 elements (6.2%), all within [60:64]"


def test_a_masked_nan_is_no_nonfinite_result() -> None:
    want = np.ma.masked_array(np.array([1.0, np.nan], np.float32), mask=[False, True])
    check = compare("C", np.array([1.0, 5.0], np.float32), want, "f32")
    assert check.passed and check.masked == 1



@pytest.mark.parametrize("head, kind, makes, fix", [
    ("async def reference(inp):\n    return inp", "an async def", "a coroutine",
     "without async"),
    ("def reference(inp):\n    yield inp", "a generator (a yield in its body)", "a generator",
     "that returns them rather than yielding them"),
])
def test_a_reference_that_returns_no_arrays_when_called_is_refused_at_its_def(
        design_file: DesignFile, head: str, kind: str, makes: str, fix: str) -> None:
    """An async or generator reference was "returned object values" at the run, with Python's
    "coroutine was never awaited" warning leaking out (a tester's find)."""
    source = DESIGN.replace("def reference(inp):\n    BODY", head)
    with pytest.raises(DesignError) as e:
        load_design(design_file(source))
    assert str(e.value) == (
        f"d.py:25: error [reference]: the reference of 'd', 'reference', is {kind}\n"
        "  limit: a function returning the expected arrays: aiedsl calls it and compares what "
        f"it returns; called, {kind} makes {makes}\n"
        f"  found: {kind}\n"
        f"  fix: write reference as a plain def {fix} returning the arrays")


def test_a_run_whose_reference_masks_nothing_never_loads_numpy_ma(tmp_path: Path) -> None:
    """Loading numpy.ma costs 14 ms, a sixth of the bare loop's time at 1024^3 in
    bench/sim_speed.py: a run only looks for masks where numpy.ma is already loaded."""
    path = tmp_path / "d.py"
    path.write_text(DESIGN.replace("BODY", "return inp + 0"))
    code = ("import sys, numpy as np; before = 'numpy.ma' in sys.modules; "
            "from aiedsl.loader import load_design; from aiedsl.sim import simulate; "
            f"r = simulate(load_design({str(path)!r}), {{'inp': np.arange(64, dtype=np.int32)}}); "
            "print(r.passed, before or 'numpy.ma' not in sys.modules)")
    # (numpy before 2 loads numpy.ma itself: then nothing is to be saved)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout == "True True\n", out.stderr
