"""Where kernel C++ lives on disk: the shipped hand-written kernels and the kernel templates."""

from __future__ import annotations

from pathlib import Path


def _kernels_cpp() -> Path:
    package = Path(__file__).resolve().parent.parent
    installed = package / "kernels_cpp"  # a wheel carries kernels_cpp/ inside the package
    return installed if installed.is_dir() else package.parent / "kernels_cpp"


KERNELS_CPP = _kernels_cpp()
"""The hand-written C++ kernels shipped with aiedsl: ``kernels_cpp/`` at the project root in a
source checkout, ``aiedsl/kernels_cpp/`` in an installed wheel."""
KERNEL_TEMPLATES = Path(__file__).resolve().parent / "templates"
"""jinja2 templates of kernels whose parameters are rendered into the C++."""
