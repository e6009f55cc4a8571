"""Checks of the kernels a design calls: their C++ exists and defines what ``entry=`` calls.

These are the mistakes a build would otherwise write out silently and Peano would report, far
from the design, as an unknown identifier.
"""

from __future__ import annotations

from aiedsl.errors import DesignError
from aiedsl.ir import Design
from aiedsl.kernels.source import defines_function, entry_function, kernel_source


def check_kernel_sources(d: Design) -> None:
    """Each file kernel's ``source=`` exists and declares the function its ``entry=`` calls."""
    for k in d.kernels:
        if k.source_kind != "file":
            continue
        src = kernel_source(k)  # raises at the declaration when the file is missing
        name = entry_function(k.entry)
        if not defines_function(src.text, name):
            raise DesignError(
                "kernel entry", f"kernel '{k.symbol}' calls {name}() (entry=\"{k.entry}\"), "
                f"which {src.label} does not declare", loc=k.loc, found=k.entry,
                fix=f"name a function {src.label} defines in entry=, or add {name} to it")
