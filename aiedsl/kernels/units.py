"""Which kernels share a generated C++ file and the object Peano compiles it to.

IRON compiles a kernel C++ file once (per set of ``-D`` flags) into one object holding all of
its ``extern "C"`` functions, and links that object into every core that calls any of them.
aiedsl does the same: the kernels a design declares from one source with the same ``defines=``
are one unit, ``kernels/<name>.cc``, holding the source once and the ``extern "C"`` entry of
each of them, compiled to ``<name>.o``. With one copy of the source per kernel instead, each
object would define the source's non-template functions (a plain helper, mlir-aie's own
``extern "C"`` functions), and lld, which aiecc links a core's objects with, would refuse a core
calling two of them: duplicate symbols.

A unit is named after the first of its kernels in the design (``Design.kernels`` order): names
are unique, as symbols are, and a unit of one kernel (most) is named after that kernel. A
template kernel (``aiedsl/kernels/templates/``) is rendered from its parameters, so kernels of
one template share a unit only when they share parameters; the library's templates define
templates and inline functions only, so their units link together.

Example
-------
>>> [u.name for u in kernel_units(design.kernels)]          # doctest: +SKIP
['inc1_64']
>>> object_names(design)                                    # doctest: +SKIP
{'inc1_64': 'inc1_64.o', 'inc2_64': 'inc1_64.o'}
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Sequence

from aiedsl.ir.design import Design
from aiedsl.ir.kernel import Kernel
from aiedsl.lang.names import define_flags


@dataclass(frozen=True)
class KernelUnit:
    """Kernels compiled together: one source, one set of defines, one generated file."""

    name: str
    """The file's stem: ``kernels/<name>.cc``, ``<name>.o``, ``<name>.su``."""
    kernels: tuple[Kernel, ...]
    """Its kernels, in the design's order (the first names it)."""

    @property
    def file(self) -> str:
        """The generated C++ file, relative to the build directory."""
        return f"kernels/{self.name}.cc"

    @property
    def object(self) -> str:
        """The object Peano writes, which every core calling one of its kernels links."""
        return f"{self.name}.o"

    @property
    def flags(self) -> list[str]:
        """The ``-DNAME=VALUE`` words of its kernels' ``defines=`` (the same for all)."""
        return define_flags(self.kernels[0].defines)

    @property
    def symbols(self) -> list[str]:
        """Its kernels' symbols."""
        return [k.symbol for k in self.kernels]


def source_key(k: Kernel) -> tuple[str, ...]:
    """What tells kernel ``k``'s C++ apart: the file, or the template file and its parameters.

    A file is told by the file its ``source=`` names (:func:`~aiedsl.kernels.source.
    source_file`: beside the design file declaring it, else in ``kernels_cpp/``), not by how it
    is spelled: ``"./kk.cc"`` and ``"kk.cc"`` are one object, whose functions a core calling
    both links once (two would define them twice). Where the file is not found (an IR read
    elsewhere), by the path ``source=`` names from the declaring file's folder, normalised."""
    from aiedsl.kernels.source import source_file

    path = source_file(k)
    if k.source_kind == "template":  # a user's relu.cc.j2 is not aiedsl's
        where = os.path.realpath(path) if path is not None else k.source
        return ("template", where, json.dumps(k.params, sort_keys=True))
    if path is not None:
        return ("file", os.path.realpath(path))
    return ("file", os.path.normpath(os.path.join(os.path.dirname(k.loc.path), k.source)))


def unit_key(k: Kernel) -> tuple[str, ...]:
    """What kernels of one unit share: the C++ (:func:`source_key`) and the compiler's ``-D``
    words."""
    return (*source_key(k), *define_flags(k.defines))


def kernel_units(kernels: Sequence[Kernel]) -> list[KernelUnit]:
    """``kernels`` (a design's, in its order) grouped into units, each named after its first."""
    groups: dict[tuple[str, ...], list[Kernel]] = {}
    for k in kernels:
        groups.setdefault(unit_key(k), []).append(k)
    return [KernelUnit(ks[0].symbol, tuple(ks)) for ks in groups.values()]


def unit_of(d: Design | None, k: Kernel) -> KernelUnit:
    """The unit holding kernel ``k`` in design ``d`` (``d`` None: ``k`` alone)."""
    if d is None:
        return KernelUnit(k.symbol, (k,))
    return next(u for u in kernel_units(d.kernels) if k.symbol in u.symbols)


def object_names(d: Design) -> dict[str, str]:
    """The object each kernel of ``d`` is compiled into, by symbol (what ``link_with`` names)."""
    return {s: u.object for u in kernel_units(d.kernels) for s in u.symbols}
