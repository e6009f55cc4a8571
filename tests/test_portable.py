"""What works the same on Windows and macOS as here: kernel symbols that differ in case only
are refused (their build files, kernels/<symbol>.cc and <symbol>.o, are one file on NTFS and
APFS), and standard output in a code page that lacks a path's characters (Windows' when it is
redirected) writes them escaped instead of ending a build that succeeded in exit 70."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from aiedsl.errors import DesignError
from aiedsl.loader import load_design

DesignFile = Callable[..., Path]
ROOT = Path(__file__).resolve().parents[1]

CASES = '''
    from aiedsl import Tensor, design, fifo, herd, i32, runtime
    from aiedsl.kernels import buffer, declare

    def double_ref(src, dst):
        dst[...] = src * 2

    k1 = declare("dbl_i32", source="dbl.cc", entry="double_i32",
                 args=[buffer("src", Tensor[64, i32]), buffer("dst", Tensor[64, i32], "out")],
                 reference=double_ref, cost="-", cycles=40)
    k2 = declare("DBL_i32", source="dbl.cc", entry="double_i32", defines={"X": 1},
                 args=[buffer("src", Tensor[64, i32]), buffer("dst", Tensor[64, i32], "out")],
                 reference=double_ref, cost="-", cycles=40)

    @design(device="npu1_1col")
    def d(a: Tensor[64, i32], c: Tensor[64, i32]):
        fa = fifo(Tensor[64, i32], name="fa")
        fb = fifo(Tensor[64, i32], name="fb")
        fc = fifo(Tensor[64, i32], name="fc")

        @herd()
        def one():
            with fa.consume() as x, fb.produce() as y:
                k1(x, y)

        @herd()
        def two():
            with fb.consume() as x, fc.produce() as y:
                k2(x, y)

        with runtime() as rt:
            rt.fill(fa, a)
            rt.drain(fc, c)
    '''


def test_kernel_symbols_that_differ_in_case_only_are_refused(design_file: DesignFile) -> None:
    path = design_file(CASES)
    (path.parent / "dbl.cc").write_text("void double_i32(int *a, int *b) {}\n")
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:10: error [kernel]: kernels 'dbl_i32' and 'DBL_i32' differ in case only\n"
        "  limit: symbols that differ in more than case: each names its build files "
        "(kernels/<symbol>.cc, <symbol>.o), which Windows and macOS take for one\n"
        "  found: 'dbl_i32' and 'DBL_i32'\n"
        "  d.py:7: the first\n"
        "  fix: give one another name, e.g. 'DBL_i32_2'")


def test_a_path_the_output_encoding_lacks_is_written_escaped(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "aiedsl", "build", str(ROOT / "designs" / "passthrough.py"),
         "-o", "设计/build"], cwd=tmp_path, capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": "cp1252"})
    assert r.returncode == 0, r.stderr
    assert b"wrote \\u8bbe\\u8ba1/build/: aie.mlir, " in r.stdout
    assert (tmp_path / "设计" / "build" / "aie.mlir").is_file()


def test_a_kernel_symbol_windows_keeps_for_a_device_is_refused(design_file: DesignFile) -> None:
    """(a reviewer) declare("CON", ...) wrote kernels/CON.cc: the console, on Windows."""
    path = design_file(CASES.replace('"DBL_i32"', '"con"'))
    (path.parent / "dbl.cc").write_text("void double_i32(int *a, int *b) {}\n")
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value).splitlines()[:2] == [
        "d.py:10: error [kernel]: kernel symbol 'con' is a device name on Windows",
        "  limit: a symbol other than AUX, COM1, COM2, COM3, COM4, COM5, COM6, COM7, COM8, COM9, "
        "CON, LPT1, LPT2, LPT3, LPT4, LPT5, LPT6, LPT7, LPT8, LPT9, NUL, PRN (in any case): it "
        "names the build's kernels/<symbol>.cc"]
