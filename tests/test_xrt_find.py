"""What ``doctor`` and ``run --target npu`` say when pyxrt is there and does not load (a
Windows tester: "DLL load failed while importing pyxrt" was reported as XRT not installed, with
a Linux-only fix), and how a tool is found in an install's bin folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aiedsl.toolchain import xrt
from aiedsl.toolchain.discover import executable


def _raising(e: ImportError) -> object:
    def fail() -> None:
        raise e
    return fail


def test_a_pyxrt_that_does_not_load_is_said_with_its_own_words(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(xrt.sys, "platform", "linux")
    monkeypatch.setattr(xrt, "import_pyxrt", _raising(ImportError(
        "DLL load failed while importing pyxrt: The specified module could not be found.",
        name="pyxrt")))
    assert xrt.find_npu() == (None, (
        "pyxrt is there but does not load: DLL load failed while importing pyxrt: The specified "
        "module could not be found. (source /opt/xilinx/xrt/setup.sh sets the paths its "
        "libraries are found by)"))
    monkeypatch.setattr(xrt.sys, "platform", "win32")
    assert xrt.find_npu()[1].endswith(
        "(XRT's DLL folder must be among the DLL directories: os.add_dll_directory)")
    # one of its own imports missing is its failing too
    monkeypatch.setattr(xrt, "import_pyxrt", _raising(ModuleNotFoundError(
        "No module named 'xrt_binding'", name="xrt_binding")))
    assert xrt.find_npu()[1].startswith(
        "pyxrt is there but does not load: No module named 'xrt_binding'")


def test_no_pyxrt_at_all_is_xrt_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(xrt, "import_pyxrt", _raising(ModuleNotFoundError(
        "No module named 'pyxrt'", name="pyxrt")))
    monkeypatch.setattr(xrt.sys, "platform", "linux")
    assert xrt.find_npu() == (None, (
        "pyxrt is not importable (XRT is not installed, or its python/ is not on PYTHONPATH: "
        "source /opt/xilinx/xrt/setup.sh)"))
    monkeypatch.setattr(xrt.sys, "platform", "win32")
    assert xrt.find_npu() == (None, (
        "pyxrt is not importable (XRT is not installed, or its python folder is not on "
        "PYTHONPATH)"))


@pytest.mark.skipif(os.name == "nt", reason="POSIX execute permission")
def test_a_tool_in_a_bin_folder_is_an_executable_file(tmp_path: Path) -> None:
    tool = tmp_path / "clang++"
    tool.write_text("#!/bin/sh\n")
    assert executable(tmp_path, "clang++") is None  # not executable
    tool.chmod(0o755)
    assert executable(tmp_path, "clang++") == tool
    (tmp_path / "aiecc").mkdir(mode=0o755)
    assert executable(tmp_path, "aiecc") is None  # a folder
    assert executable(tmp_path / "none", "clang++") is None


def test_on_windows_a_tool_is_found_with_its_extension_in_its_folder_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """(Windows testers) llvm-aie's bin\\clang++.exe was never found, and shutil.which would
    have taken a clang++.exe in the working directory first."""
    from aiedsl.toolchain import discover

    monkeypatch.setattr(discover.sys, "platform", "win32")
    monkeypatch.setenv("PATHEXT", ".COM;.EXE;.BAT;.CMD")
    here, bin_ = tmp_path / "here", tmp_path / "peano" / "bin"
    here.mkdir()
    bin_.mkdir(parents=True)
    (here / "clang++.exe").write_text("")
    monkeypatch.chdir(here)
    assert executable(bin_, "clang++") is None
    (bin_ / "clang++.exe").write_text("")
    assert executable(bin_, "clang++") == bin_ / "clang++.exe"  # (PATHEXT's, lower case)
