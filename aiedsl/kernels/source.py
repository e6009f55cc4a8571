"""Where a kernel's C++ comes from: its file (beside the design that declares it, else in
``kernels_cpp/``) or its rendered template, and which functions that C++ defines."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from aiedsl.render import render
from aiedsl.errors import DesignError, display_path
from aiedsl.ir import Kernel
from aiedsl.kernels.paths import KERNEL_TEMPLATES, KERNELS_CPP


@dataclass(frozen=True)
class KernelSource:
    """Where a kernel's C++ comes from and its text."""

    label: str
    """How generated files name it (``kernels_cpp/mm.cc``, ``my_kernels/double.cc``)."""
    path: Path | None
    """The file itself (None for a rendered template: its lines are not the template's)."""
    text: str


def kernel_source(k: Kernel) -> KernelSource:
    """Kernel ``k``'s C++ source: its template rendered, or its file (beside the design that
    declares it, else in ``kernels_cpp/``)."""
    if k.source_kind == "template":
        return KernelSource(f"aiedsl/kernels/templates/{k.source}", None,
                            render(k.source, str(KERNEL_TEMPLATES), **k.params))
    path = source_file(k)
    if path is None:
        raise DesignError(
            "kernel source", f"kernel '{k.symbol}' names {k.source}, found neither beside "
            f"{k.loc.file} nor in aiedsl's kernels_cpp/", loc=k.loc, found=k.source,
            fix="put the C++ file next to the design, or fix source=")
    label = (f"kernels_cpp/{k.source}" if path.is_relative_to(KERNELS_CPP)
             else display_path(str(path)))
    return KernelSource(label, path, path.read_text())


def source_file(k: Kernel) -> Path | None:
    """The C++ file a file kernel names: beside its declaration, else in ``kernels_cpp/``."""
    for path in (Path(k.loc.file).parent / k.source, KERNELS_CPP / k.source):
        if path.is_file():
            return path
    return None


_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def entry_function(entry: str) -> str:
    """The function an ``entry=`` expression calls: ``ns::mm<bf16, 64>`` -> ``mm``."""
    return entry.split("<", 1)[0].split("(", 1)[0].strip().rsplit("::", 1)[-1]


def defines_function(source: str, name: str) -> bool:
    """Does C++ ``source`` declare or define a function (or function template) ``name``?

    A declaration is the name after a return type and before ``(``; comments are ignored.
    """
    code = _COMMENTS.sub(" ", source)
    head = r"(?:[\w>&]\s+|[*&]\s*)(?:[\w:]+::)?"  # a return type, then the (qualified) name
    return re.search(head + re.escape(name) + r"\s*\(", code) is not None


_LOCAL_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]*)"', re.M)


def local_includes(source: str) -> list[tuple[int, str]]:
    """The ``#include "file"`` lines of C++ ``source`` (line number, file), comments ignored.

    A kernel's build compiles ``kernels/<symbol>.cc`` (the source copied whole) in the build
    directory, where no file beside the source is carried, so such an include finds nothing.
    """
    code = _COMMENTS.sub(lambda m: "\n" * m[0].count("\n"), source)  # keep the line numbers
    return [(code[:m.start()].count("\n") + 1, m[1]) for m in _LOCAL_INCLUDE.finditer(code)]


def check_file_kernel(k: Kernel, src: KernelSource) -> None:
    """File kernel ``k``'s C++ ``src`` includes no file of its own (it is built alone, as
    ``kernels/<symbol>.cc``) and declares the function its ``entry=`` calls: checked by
    ``aiedsl check`` and before every host build (g++ would say it of the generated file)."""
    for line, header in local_includes(src.text)[:1]:
        raise DesignError(
            "kernel source", f"{src.label} includes \"{header}\" (its line {line}), which "
            f"the build does not carry: kernels/{k.symbol}.cc holds the source alone",
            loc=k.loc, limit="a kernel's C++ in one file; #include <...> finds the "
            "compiler's and the AIE API's headers", found=f'#include "{header}"',
            fix=f"paste {header} into {src.label} where it is included")
    name = entry_function(k.entry)
    if not defines_function(src.text, name):
        raise DesignError(
            "kernel entry", f"kernel '{k.symbol}' calls {name}() (entry=\"{k.entry}\"), "
            f"which {src.label} does not declare", loc=k.loc, found=k.entry,
            fix=f"name a function {src.label} defines in entry=, or add {name} to it")
