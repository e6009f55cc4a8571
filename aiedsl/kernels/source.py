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


@dataclass(frozen=True)
class CFunction:
    """An ``extern "C"`` function a C++ source defines or declares, as its text spells it: a
    plain name, or one a macro pastes together (mlir-aie's ``matvec_scalar_##mlir_type_in##_``
    ``##mlir_type_out``, one function per type combination the file instantiates)."""

    spelled: str
    """The name as written (``passThroughLine``, ``zero_scalar_##mlir_type_out``)."""
    line: int
    """The source line it is written on (1-based)."""
    pattern: str
    """A regular expression of the names it makes: the name itself, or the pasted name with
    each macro parameter as one or more letters and digits (mlir-aie pastes type tags such as
    ``i16`` and ``bf16``)."""

    def makes(self, name: str) -> bool:
        """Does this definition make a function called ``name``?"""
        return re.fullmatch(self.pattern, name) is not None


_NAME = r"[A-Za-z_]\w*(?:\s*##\s*\w+)*"
_HEAD = re.compile(r"(?:[\w>&]\s+|[*&]\s*)(" + _NAME + r")\s*\(")
"""A function declared or defined: a return type (or a pointer's ``*``), then its name and
``(``; the name may be pasted by a macro (``a_##t``)."""
_NOT_FUNCTIONS = frozenset({"defined", "sizeof", "alignof", "alignas", "decltype", "if", "while",
                            "for", "switch", "return", "static_assert", "noexcept",
                            "__attribute__", "__declspec"})
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(\w*)[^\n]*", re.M)
_EXTERN_C = re.compile(r'extern\s*"C"\s*(\{)?')
_MACRO = re.compile(r"\s*#\s*define\s+\w+\(([^)]*)\)")


def c_functions(source: str) -> list[CFunction]:
    """The ``extern "C"`` functions C++ ``source`` defines or declares, in the order written:
    those in an ``extern "C" { ... }`` block or after ``extern "C"``, and those a macro's body
    pastes a name for (mlir-aie defines its kernels' C entries so, expanding the macro inside
    an ``extern "C"`` block). Read off the text, preprocessor not run: every ``#if`` branch
    counts, and a function only a macro names otherwise is not seen."""
    blank = _COMMENTS.sub(lambda m: re.sub(r"[^\n]", " ", m[0]), source)
    code = blank.replace("\\\n", "  ")  # a directive's continued lines as one (same offsets)
    # directives other than #define say nothing of functions (#if defined(X) is no call)
    code = _DIRECTIVE.sub(lambda m: m[0] if m[1] == "define" else " " * len(m[0]), code)
    found: dict[int, CFunction] = {}

    def scan(text: str, offset: int, pasted: bool = False) -> None:
        for m in _HEAD.finditer(text):
            name = re.sub(r"\s+", "", m[1])
            if name in _NOT_FUNCTIONS or (pasted and "##" not in name) \
                    or re.search(r"#\s*define\s*$", text[:m.start(1)]):  # a macro's own name
                continue
            at = offset + m.start(1)
            found.setdefault(at, CFunction(name, blank.count("\n", 0, at) + 1,
                                           _pattern(name, code, at)))

    for m in _EXTERN_C.finditer(code):
        if m[1]:  # a block: its own level, the bodies inside blanked
            end = _closing(code, m.end())
            scan(_top_level(code[m.end():end]), m.end())
        else:  # one declaration or definition
            head = re.match(r"[^;{]*", code[m.end():])
            scan(head[0] if head else "", m.end())
    for m in re.finditer(r"^[ \t]*#[ \t]*define\b[^\n]*", code, re.M):
        if "##" in m[0]:  # a macro pasting a function's name, wherever it is expanded
            scan(_top_level(m[0]), m.start(), pasted=True)
    return [found[at] for at in sorted(found)]


def _closing(code: str, start: int) -> int:
    """Where the brace block opened just before ``start`` closes (the end if it does not)."""
    depth = 1
    for i in range(start, len(code)):
        depth += {"{": 1, "}": -1}.get(code[i], 0)
        if depth == 0:
            return i
    return len(code)


def _top_level(text: str) -> str:
    """``text`` with what is inside its braces blanked (same length): the function bodies of an
    ``extern "C"`` block, whose calls are not definitions."""
    out, depth = [], 0
    for ch in text:
        if ch == "}":
            depth -= 1
        out.append(ch if depth <= 0 or ch == "\n" else " ")
        if ch == "{":
            depth += 1
    return "".join(out)


def _pattern(name: str, code: str, at: int) -> str:
    """The names ``name`` makes: itself, or, pasted with ``##`` in a macro's body, each of the
    macro's parameters as letters and digits."""
    if "##" not in name:
        return re.escape(name)
    start = code.rfind("\n", 0, at) + 1
    macro = _MACRO.match(code, start)
    params = {p.strip() for p in macro[1].split(",")} if macro else set()
    return "".join("[A-Za-z0-9]+" if piece in params else re.escape(piece)
                   for piece in name.split("##"))


def c_function(source: str, name: str) -> CFunction | None:
    """The ``extern "C"`` function of C++ ``source`` that makes ``name``, if one does
    (:func:`c_functions`)."""
    return next((f for f in c_functions(source) if f.makes(name)), None)


_LOCAL_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]*)"', re.M)


def local_includes(source: str) -> list[tuple[int, str]]:
    """The ``#include "file"`` lines of C++ ``source`` (line number, file), comments ignored.

    A kernel's build compiles ``kernels/<name>.cc`` (the source copied whole) in the build
    directory, where no file beside the source is carried, so such an include finds nothing.
    """
    code = _COMMENTS.sub(lambda m: "\n" * m[0].count("\n"), source)  # keep the line numbers
    return [(code[:m.start()].count("\n") + 1, m[1]) for m in _LOCAL_INCLUDE.finditer(code)]


def check_file_kernel(k: Kernel, src: KernelSource, generated: str | None = None) -> None:
    """File kernel ``k``'s C++ ``src`` includes no file of its own (it is built alone, as
    ``generated``, ``kernels/<symbol>.cc`` unless another kernel's unit holds it), and defines
    what the kernel calls: the function its ``entry=`` calls, and no ``extern "C"`` function of
    the kernel's own name, which the generated entry would define a second time; or, without
    ``entry=``, that ``extern "C"`` function itself. Checked by ``aiedsl check`` and before every
    host build (g++ would say it of the generated file, Peano later still)."""
    generated = generated or f"kernels/{k.symbol}.cc"
    for line, header in local_includes(src.text)[:1]:
        raise DesignError(
            "kernel source", f"{src.label} includes \"{header}\" (its line {line}), which "
            f"the build does not carry: {generated} holds the source alone",
            loc=k.loc, limit="a kernel's C++ in one file; #include <...> finds the "
            "compiler's and the AIE API's headers", found=f'#include "{header}"',
            fix=f"paste {header} into {src.label} where it is included")
    own = c_function(src.text, k.symbol)
    if k.entry is None:
        if own is None:
            theirs = sorted({f.spelled for f in c_functions(src.text)})
            raise DesignError(
                "kernel entry", f"kernel '{k.symbol}' has no entry=, so cores call "
                f"{src.label}'s own extern \"C\" function {k.symbol}, which it does not define",
                loc=k.loc, limit="without entry=, the name of an extern \"C\" function the "
                "source defines (as mlir-aie's kernel files do)",
                found=f"its extern \"C\" functions: {', '.join(theirs) or 'none'}",
                fix="name one of them as the symbol, or give entry= the C++ function to call "
                    f"(aiedsl then generates {k.symbol} around it)")
        return
    if own is not None:
        made = "" if own.spelled == k.symbol else f", pasted by a macro as {own.spelled}"
        raise DesignError(
            "kernel entry", f"kernel '{k.symbol}' would be defined twice: {src.label} defines "
            f"the extern \"C\" function {k.symbol} itself (its line {own.line}{made}), and "
            f"entry=\"{k.entry}\" makes aiedsl generate another around {k.entry}", loc=k.loc,
            limit="one definition of each extern \"C\" function in a kernel's object",
            found=f"{k.symbol} in {src.label} and entry=\"{k.entry}\"",
            fix=f"leave entry= out to call {src.label}'s own {k.symbol} as it is (with the "
                "defines= it reads), or name the kernel for what entry= computes, e.g. "
                f"{_shaped(k)}")
    name = entry_function(k.entry)
    if not defines_function(src.text, name):
        raise DesignError(
            "kernel entry", f"kernel '{k.symbol}' calls {name}() (entry=\"{k.entry}\"), "
            f"which {src.label} does not declare", loc=k.loc, found=k.entry,
            fix=f"name a function {src.label} defines in entry=, or add {name} to it")


def _shaped(k: Kernel) -> str:
    """``k``'s symbol with the shape of its first buffer added: ``f_32x32``."""
    shape = next((a.type.shape for a in k.args if a.type is not None), ())
    return f"{k.symbol}_{'x'.join(map(str, shape))}" if shape else f"{k.symbol}_1024"
