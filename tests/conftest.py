"""Shared fixtures: write a design file into a temp dir and load or check it."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).resolve().parent.parent


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
