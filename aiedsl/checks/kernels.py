"""Checks of the kernels a design calls: their C++ exists and defines what ``entry=`` calls, and
a kernel made for one AI Engine architecture runs on a device of it.

These are the mistakes a build would otherwise write out silently and Peano would report, far
from the design, as an unknown identifier (or, for another architecture's variant, as an mmul
shape or intrinsic the target lacks, with cycles of the wrong device in every report).
"""

from __future__ import annotations

from aiedsl.errors import DesignError
from aiedsl.ir import Design
from aiedsl.kernels.source import check_file_kernel, kernel_source
from aiedsl.targets import TargetModel


def check_kernel_sources(d: Design) -> None:
    """Each file kernel's ``source=`` exists, includes no file of its own (it is built alone, as
    ``kernels/<symbol>.cc``), and declares the function its ``entry=`` calls."""
    for k in d.kernels:
        if k.source_kind == "file":
            check_file_kernel(k, kernel_source(k))  # which raises when the file is missing


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


def check_kernel_costs(d: Design, target: TargetModel) -> None:
    """A kernel's declared operations fit in its declared cycles: at most two per MAC a core of
    ``target`` can do per cycle. More would report a throughput the device cannot reach."""
    macs = max(target.macs_per_cycle.values())
    for k in d.kernels:
        if k.ops > k.cycles * 2 * macs:
            raise DesignError(
                "kernel cost", f"kernel '{k.symbol}' declares {k.ops:,} operations per call in "
                f"{k.cycles:,} cycles", loc=k.loc, limit=f"at most {2 * macs} per cycle "
                f"({target.name}'s peak of {macs} MACs per cycle, a MAC counting 2)",
                found=f"{-(-k.ops // k.cycles):,} per cycle",
                fix="count ops as one call's arithmetic (a multiply-accumulate is 2) and cycles "
                "as its time")

