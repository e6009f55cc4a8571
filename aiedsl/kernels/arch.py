"""The architecture a kernel was made for, held against the device of the design that calls it:
``aiedsl check`` judges it with the design's other kernel rules
(:mod:`aiedsl.checks.kernels`), and ``kernel test`` and ``kernel profile`` of a design before
any kernel runs (:func:`~aiedsl.kernels.cases.design_cases`): one rule, one message."""

from __future__ import annotations

from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.targets import TargetModel


def check_kernel_arch(d: Design, target: TargetModel) -> None:
    """Each kernel made for one architecture (``Kernel.arch``: a library variant, the user's
    ``arch=``) is called in a design on a device of that architecture.

    A library kernel takes the design's device when it is made inside the design function;
    made elsewhere, it takes ``device=`` or npu1's. A kernel profiled for its cycles is
    profiled on the design's device, wherever it is declared.
    """
    for k in d.kernels:
        if k.arch is None or k.arch == target.arch:
            continue
        if k.shipped:
            what, fix = ("its C++ variant and cycles are that architecture's",
                         "make it inside the design function, where it takes the design's "
                         f"device, or pass device='{d.device}' where it is made")
        else:  # the user's declare(arch=...)
            what, fix = ("its declaration says its C++ and cycles are that architecture's",
                         f"declare it with arch='{target.arch}' once its C++ and cycles are "
                         f"{target.arch}'s, or leave arch out for C++ that builds for both")
        raise DesignError(
            "kernel device", f"kernel '{k.symbol}' was made for {k.arch}, but design "
            f"'{d.name}' runs on {d.device} ({target.arch})", loc=k.loc,
            limit=f"a kernel runs only on the architecture it was made for ({what})",
            found=k.arch, fix=fix)
