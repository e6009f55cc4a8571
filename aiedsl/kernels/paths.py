"""Where kernel C++ lives on disk: the shipped hand-written kernels (:data:`KERNELS_CPP`) and
the kernel templates (:data:`KERNEL_TEMPLATES`).

A ``Path`` carries no docstring of its own (``help(KERNELS_CPP)`` shows ``Path``'s): what
:data:`KERNELS_CPP` is is said in :mod:`aiedsl.kernels`' docstring too, which
``help(aiedsl.kernels)`` shows."""

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
