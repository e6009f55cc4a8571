"""Find an NPU through XRT's Python bindings (pyxrt comes with XRT, never from PyPI)."""

from __future__ import annotations

import importlib
from typing import Any


def find_npu() -> tuple[Any | None, str]:
    """(device, description) of the first NPU, or (None, why there is none)."""
    try:
        pyxrt = importlib.import_module("pyxrt")
    except ImportError:
        return None, "pyxrt is not importable (XRT is not installed, or its python/ is not on " \
                     "PYTHONPATH: source /opt/xilinx/xrt/setup.sh)"
    try:
        device = pyxrt.device(0)
    except Exception as e:  # pyxrt raises RuntimeError subclasses with the driver's text
        return None, f"XRT found no device: {e}"
    return device, "NPU device 0"
