"""Render each kernel a design calls as one self-contained C++ file (``kernels/<symbol>.cc``).

The file is the kernel's source (a file in ``kernels_cpp/`` or a rendered template) followed by
the ``extern "C"`` entry point whose name carries the kernel's shape.
"""

from __future__ import annotations

from pathlib import Path

from aiedsl import __version__
from aiedsl.checks.program import calls
from aiedsl.codegen.env import render
from aiedsl.dtypes import dtype
from aiedsl.errors import DesignError
from aiedsl.ir import Design, Kernel
from aiedsl.kernels.base import KERNELS_CPP


def kernel_source(k: Kernel) -> tuple[str, str]:
    """(origin label, C++ text) of kernel ``k``'s source."""
    if k.source_kind == "template":
        from aiedsl.kernels.base import KERNEL_TEMPLATES

        return (f"aiedsl/kernels/templates/{k.source}",
                render(k.source, str(KERNEL_TEMPLATES), **k.params))
    beside = Path(k.loc.file).parent / k.source
    for path, label in ((beside, str(beside)), (KERNELS_CPP / k.source, f"kernels_cpp/{k.source}")):
        if path.is_file():
            return label, path.read_text()
    raise DesignError(
        "kernel source", f"kernel '{k.symbol}' names {k.source}, found neither beside "
        f"{k.loc.file} nor in kernels_cpp/", loc=k.loc, found=k.source,
        fix="put the C++ file next to the design or in kernels_cpp/, or fix source=")


def render_kernel(d: Design | None, k: Kernel) -> str:
    """The C++ text of kernel ``k`` as design ``d`` uses it (or on its own, ``d`` None)."""
    origin, source = kernel_source(k)
    params, names = [], []
    for a in k.args:
        cpp = dtype(a.dtype).cpp
        params.append(f"{cpp} *{a.name}" if a.kind == "buffer" else f"{cpp} {a.name}")
        names.append(a.name)
    sites = sorted({f"{c.loc.file}:{c.loc.line}" for core in d.cores for c in calls(core)
                    if c.kernel == k.symbol}) if d else []
    return render("kernel.cc.j2", version=__version__, k=k, origin=origin, source=source,
                  design=d.name if d else None, calls=sites, params=params, names=names)


def render_kernels(d: Design) -> dict[str, str]:
    """``{"kernels/<symbol>.cc": text}`` for every kernel of ``d``."""
    return {f"kernels/{k.symbol}.cc": render_kernel(d, k) for k in d.kernels}
