"""Checks of the kernels a design calls: their C++ exists and defines what ``entry=`` calls, and
a kernel made for one AI Engine architecture runs on a device of it.

These are the mistakes a build would otherwise write out silently and Peano would report, far
from the design, as an unknown identifier (or, for another architecture's variant, as an mmul
shape or intrinsic the target lacks, with cycles of the wrong device in every report).
"""

from __future__ import annotations

from aiedsl.errors import DesignError
from aiedsl.ir import Design
from aiedsl.kernels.source import check_entry_declared, kernel_source
from aiedsl.targets import TargetModel


def check_kernel_sources(d: Design) -> None:
    """Each file kernel's ``source=`` exists and declares the function its ``entry=`` calls."""
    for k in d.kernels:
        if k.source_kind == "file":
            check_entry_declared(k, kernel_source(k))  # which raises when the file is missing


def check_kernel_arch(d: Design, target: TargetModel) -> None:
    """Each kernel made for one architecture (``Kernel.arch``: a library variant, a profiled
    cycle count) is called in a design on a device of that architecture.

    A library kernel takes the design's device when it is made inside the design function;
    made elsewhere, it takes ``device=`` or npu1's.
    """
    for k in d.kernels:
        if k.arch is None or k.arch == target.arch:
            continue
        if k.cycles_source == "profile":
            what, fix = ("its cycles were profiled there", "declare it inside the design function "
                         f"(it is then profiled on {d.device}), or give cycles=")
        else:
            what, fix = ("its C++ variant and cycles are that architecture's",
                         "make it inside the design function, where it takes the design's "
                         f"device, or pass device='{d.device}' where it is made")
        raise DesignError(
            "kernel device", f"kernel '{k.symbol}' was made for {k.arch}, but design "
            f"'{d.name}' runs on {d.device} ({target.arch})", loc=k.loc,
            limit=f"a kernel runs only on the architecture it was made for ({what})",
            found=k.arch, fix=fix)
