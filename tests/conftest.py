"""Shared fixtures: write a design file into a temp dir and load or check it."""

from __future__ import annotations

import os
import sys
import textwrap
import threading
from pathlib import Path
from typing import Callable, Iterator

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session", autouse=True)
def _xdist_threads_unseen() -> Iterator[None]:
    """In a pytest-xdist worker, the threads xdist runs (its channel to the controller) are not
    counted by :func:`aiedsl.kernels.worker.alone`: the suite runs in workers (pyproject's
    addopts), and there every native run and kernel test would otherwise go through the workers'
    server, never through the fork the command line (one thread) makes. A thread a test starts
    still counts (tests/test_kernel_threads.py)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        yield
        return
    from aiedsl.kernels import worker

    threads, frames = threading.active_count(), len(sys._current_frames())

    def alone() -> bool:
        return threading.active_count() <= threads and len(sys._current_frames()) <= frames

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(worker, "alone", alone)
        yield


@pytest.fixture
def design_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str, str], Path]:
    """Write ``source`` (dedented) as ``<tmp>/<name>`` and chdir there, so locs read ``name:line``."""
    monkeypatch.chdir(tmp_path)

    def write(source: str, name: str = "d.py") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(source).lstrip("\n"))
        return path

    return write


@pytest.fixture
def in_root(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run the test from the project root (designs/ and kernels_cpp/ are relative to it)."""
    monkeypatch.chdir(ROOT)
    return ROOT


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip tests that need the real toolchain or an NPU, saying which is missing."""
    have_npu = False
    try:
        import pyxrt  # type: ignore[import-not-found]  # noqa: F401
        have_npu = os.path.exists("/dev/accel/accel0")
    except ImportError:
        pass
    from aiedsl.toolchain.discover import find_tools

    tools = find_tools()
    have_peano = not tools.missing(compile_only=True)
    for item in items:
        if "mlir_aie" in item.keywords and not tools.lowering:
            item.add_marker(pytest.mark.skip(
                reason="needs mlir-aie's aie-opt and aie-translate (on PATH, in "
                       "MLIR_AIE_INSTALL_DIR/bin or the mlir_aie pip package)"))
        if "npu" in item.keywords and not have_npu:
            item.add_marker(pytest.mark.skip(reason="needs an AMD NPU with XRT and pyxrt"))
        if "peano" in item.keywords and not have_peano:
            item.add_marker(pytest.mark.skip(
                reason="needs Peano (PEANO_INSTALL_DIR), aiecc and the AIE API headers"))
