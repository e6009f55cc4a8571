"""Where a kernel's C++ comes from: its file (beside the design that declares it, else in
``kernels_cpp/``) or its rendered template, and whether it defines what the kernel calls (read
by :mod:`aiedsl.kernels.cscan`)."""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from aiedsl.errors import DesignError, display_path, listed
from aiedsl.ir.kernel import Kernel
from aiedsl.kernels.cscan import extern_c
from aiedsl.kernels.cscan.blank import blank
from aiedsl.kernels.entry_scope import declared, file_scope
from aiedsl.kernels.paths import KERNEL_TEMPLATES, KERNELS_CPP
from aiedsl.kernels.signature import check_signature
from aiedsl.lang.names import define_flags, entry_head
from aiedsl.targets.kernel_arch import ARCH_DEFINES
from aiedsl.render import TemplateError, render
from aiedsl.text import decoded


@dataclass(frozen=True)
class KernelSource:
    """Where a kernel's C++ comes from and its text."""

    label: str
    """How generated files name it (``kernels_cpp/mm.cc``, ``my_kernels/double.cc``)."""
    path: Path | None
    """The file itself (None for a rendered template: its lines are not the template's)."""
    text: str
    template: Path | None = None
    """The template it was rendered from (None for a file)."""


def kernel_source(k: Kernel) -> KernelSource:
    """Kernel ``k``'s C++ source: its template rendered with its ``params``, or its file (beside
    the declaration, else aiedsl's; a library kernel's only aiedsl's)."""
    path = source_file(k)
    if path is None:
        shelf = "kernel templates" if k.source_kind == "template" else "kernels_cpp/"
        # the folder it was looked for in, when the file's name does not say it: a symlink's
        # target's, or the design's after the working directory changed
        folder = os.path.dirname(k.loc.path)
        beside = k.loc.file if os.path.realpath(os.path.dirname(k.loc.file) or ".") == \
            folder else f"{k.loc.file} (in {display_path(folder) or '.'})"
        where = (f"in aiedsl's {shelf} (the installation lacks it)" if k.shipped else
                 f"neither beside {beside} nor in aiedsl's {shelf}")
        folder_named = _folder_named(k)
        if folder_named is not None:  # "found neither" sent the user looking for a lost file
            what = "template" if k.source_kind == "template" else "C++ file"
            raise DesignError(
                "kernel source", f"kernel '{k.symbol}' names {k.source}, which is a directory "
                + (f"beside {beside}" if folder_named.is_relative_to(os.path.realpath(folder))
                   or folder_named.is_relative_to(folder) else f"in aiedsl's {shelf}")
                + f", not a {what}", loc=k.loc,
                limit=f"source= names a {what}", found=f"{k.source}: a directory",
                fix=f"name the {what} in source= (one inside that directory is "
                    f"source=\"{k.source.rstrip('/')}/<file>\")")
        raise DesignError(
            "kernel source", f"kernel '{k.symbol}' names {k.source}, found {where}", loc=k.loc,
            found=k.source, fix="reinstall aiedsl" if k.shipped else
            f"read the design IR with load_json(..., home=\"<the design's folder>\"): without "
            f"it, {k.source} is looked for from the working directory" if k.loc.path == k.loc.file
            and not os.path.isabs(k.loc.file) else
            f"put the {'template' if k.source_kind == 'template' else 'C++ file'} next to the "
            "design, or fix source=")
    home = KERNEL_TEMPLATES if k.source_kind == "template" else KERNELS_CPP
    label = (f"{'aiedsl/kernels/templates' if k.source_kind == 'template' else 'kernels_cpp'}/"
             f"{k.source}" if path.is_relative_to(home) else display_path(str(path)))
    if k.source_kind == "file":
        return KernelSource(label, path, read_source(path))
    try:
        text = render(path.name, str(path.parent), **k.params)
    except UnicodeDecodeError as e:  # jinja2 reads a template as UTF-8 text, and nothing else
        line = e.object[:e.start].count(b"\n") + 1
        raise DesignError(
            "kernel source", f"kernel '{k.symbol}': its template {label} is not UTF-8 text: "
            f"byte {e.start} (line {line}) is 0x{e.object[e.start]:02x}", loc=k.loc,
            limit="a template (source_kind=\"template\") is read as UTF-8 by jinja2, which "
            "renders it", found=f"0x{e.object[e.start]:02x} at byte {e.start} of {label}",
            fix=f"save {label} as UTF-8 (iconv -f latin1 -t utf-8, or your editor's encoding "
                "setting), or write that character another way") from None
    except TemplateError as e:
        import jinja2  # (imported by the render that failed)

        cause = e.__cause__
        if isinstance(cause, jinja2.TemplateSyntaxError):  # the text, not the params
            # (the template it includes, when the error is there)
            where = label if cause.name in (None, path.name) else cause.name
            at = f"{where}:{cause.lineno}" if cause.lineno else where
            raise DesignError(
                "kernel source", f"kernel '{k.symbol}': its template {label} is not valid "
                f"jinja2: {cause.message} ({at})", loc=k.loc,
                limit="a template jinja2 can parse: {{ expression }}, {% statement %}",
                found=at, fix=f"fix the template's {{{{ }}}} or {{% %}} at {at}") from None
        raise DesignError(
            "kernel source", f"kernel '{k.symbol}': its template {label} does not render: "
            f"{str(e).split(': ', 1)[-1]}", loc=k.loc, found=f"params={k.params}",
            fix="give every name the template uses in params= (it renders with the kernel's "
                "params)") from None
    return KernelSource(label, None, text.removeprefix(BOM), path)


BOM = "\ufeff"
"""The byte order mark an editor may put at a file's start (its UTF-8 bytes EF BB BF): g++
skips it at the start of a file, but the generated file puts aiedsl's head before the source,
so it would land mid-file, where it is a stray character (``'\\U0000feff' does not name a
type``)."""


def read_source(path: Path) -> str:
    """The text of the C++ file ``path`` as the compilers read it: its bytes, UTF-8 or not
    (:func:`aiedsl.text.decoded`), without a leading byte order mark (:data:`BOM`)."""
    return decoded(path.read_bytes()).removeprefix(BOM)


def source_file(k: Kernel) -> Path | None:
    """The file a kernel's ``source=`` names (its C++, or its template): beside its declaration,
    else aiedsl's (``kernels_cpp/``, the kernel templates); a library kernel's only aiedsl's."""
    home = KERNEL_TEMPLATES if k.source_kind == "template" else KERNELS_CPP
    places = (home,) if k.shipped else (Path(k.loc.path).parent, home)
    for place in places:
        path = place / k.source
        if path.is_file():
            return path
    return None


def _folder_named(k: Kernel) -> Path | None:
    """The directory a kernel's ``source=`` names where :func:`source_file` looks for the file
    (None: none is)."""
    home = KERNEL_TEMPLATES if k.source_kind == "template" else KERNELS_CPP
    places = (home,) if k.shipped else (Path(k.loc.path).parent, home)
    return next((place / k.source for place in places if (place / k.source).is_dir()), None)


def entry_function(entry: str) -> str:
    """The function an ``entry=`` expression calls: ``ns::mm<bf16, 64>`` -> ``mm``."""
    return entry_head(entry).rsplit("::", 1)[-1]


def defines_function(source: str, name: str,
                     defines: Mapping[str, object] | None = None) -> bool:
    """May C++ ``source``, compiled with ``defines``, declare or define a function (or function
    template) ``name``? A declaration is the name after a return type and before ``(``, macros
    expanded (:mod:`aiedsl.kernels.cscan`); comments and strings are not code. True also when
    the text cannot say (a macro it does not see defined where a declaration goes)."""
    scan = extern_c(source, defines)
    return not scan.entry_complete or name in scan.declared


_LOCAL_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]*)"', re.M)


def local_includes(source: str) -> list[tuple[int, str]]:
    """The ``#include "file"`` lines of C++ ``source`` (line number, file), comments ignored,
    but those of the AIE API's own headers (``"aie_api/aie.hpp"``).

    A kernel's build compiles ``kernels/<name>.cc`` (the source copied whole) in the build
    directory, where no file beside the source is carried, so such an include finds nothing.
    A quoted include found nowhere beside the file is looked for on the include path, as
    ``<...>`` is (g++'s and clang's rule), and ``aie_api/`` is the AIE API's folder there: the
    host stand-in's, and mlir-aie's install on the ``-I`` of the Peano compile
    (:data:`aiedsl.toolchain.commands.AIE_API_INCLUDE`). Those are found, as ``<aie_api/...>``.
    """
    if _QUOTED_INCLUDE.search(source) is None:
        return []  # (the common case: blanking the source would find none)
    code = blank(source, strings=False)  # same offsets: the line numbers are the source's
    return [(source.count("\n", 0, m.start()) + 1, m[1])
            for m in _LOCAL_INCLUDE.finditer(code) if not m[1].startswith("aie_api/")]


_QUOTED_INCLUDE = re.compile(r'include(?:[ \t]|/\*[\s\S]*?\*/)*"')
"""What the source holds wherever its blanked text has an ``#include "file"``: the word, then
blanks, or block comments (which blanking makes blanks), up to the quote."""


def check_file_kernel(k: Kernel, src: KernelSource, generated: str | None = None) -> None:
    """File kernel ``k``'s C++ ``src`` includes no file of its own (it is built alone, as
    ``generated``, ``kernels/<symbol>.cc`` unless another kernel's unit holds it), and defines
    what the kernel calls: the function its ``entry=`` calls, and no ``extern "C"`` function of
    the kernel's own name, which the generated entry would define a second time; or, without
    ``entry=``, that ``extern "C"`` function itself. The source is read with the kernel's
    ``defines=`` (:func:`~aiedsl.kernels.cscan.extern_c`); where the text cannot say, nothing
    is refused here, and the host compile (``kernel test``, ``sim --kernels native``) or Peano
    says it. Checked by ``aiedsl check`` and before every host build (g++ would say it of the
    generated file, Peano later still)."""
    generated = generated or f"kernels/{k.symbol}.cc"
    includes = local_includes(src.text)
    if includes:
        each = listed([f'"{header}" (its line {line})' for line, header in includes])
        names = [header for _, header in includes]
        what = listed(names)
        raise DesignError(
            "kernel source", f"{src.label} includes {each}, which the build does not "
            f"carry: {generated} holds the source alone",
            loc=k.loc, limit="a kernel's C++ in one file; #include <...> finds the "
            "compiler's and the AIE API's headers",
            found="; ".join(f'#include "{header}"' for header in names),
            fix=f"paste {what} into {src.label} where {'it is' if len(names) == 1 else 'they are'}"
                " included")
    scan = extern_c(src.text, k.defines)
    own = scan.find(k.symbol)
    flags = define_flags(k.defines)
    compiled = f" (compiled with {' '.join(flags)})" if flags else ""
    if scan.error is not None and all(
            extern_c(src.text, {**{n: "1" for n in names}, **k.defines}).error is not None
            for names in ARCH_DEFINES.values()):  # (what every compile for an arch defines)
        line, text = scan.error
        raise DesignError(
            "kernel source", f"{src.label} reaches its #error ({_line_of(src, line)}) when "
            "compiled "
            + (f"with {' '.join(flags)}" if flags else "without defines=")
            + f", as kernel '{k.symbol}' is: it does not compile so", loc=k.loc,
            limit="a kernel's C++ compiles with its defines= (read as the compiler reads it, "
            "#if decided by them)", found=f"#error {text}",
            fix="give defines= what the file's #if asks for (the #error's words say what)")
    if k.entry is not None:
        _check_macro_names(k, scan.macros, scan.object_macros, src)
    if k.entry is None:
        if own is None and scan.complete:
            theirs = sorted({f.name for f in scan.functions})
            if k.symbol in scan.cpp_linkage and scan.entry_complete:
                # in a namespace, the entry= to give is the qualified name (a tester's my::)
                where = next((e.symbol.split("(")[0].rsplit("::", 1)[0] for e in scan.exported
                              if e.name == k.symbol and "::" in e.symbol.split("(")[0]), "")
                entry = f"{where}::{k.symbol}" if where else k.symbol
                inside = f"in namespace {where}, " if where else ""
                outside = f" outside namespace {where}" if where else ""
                raise DesignError(
                    "kernel entry", f"kernel '{k.symbol}' has no entry=, so cores call "
                    f"{src.label}'s extern \"C\" function {k.symbol}, which it declares with "
                    f"C++ linkage ({inside}outside any extern \"C\" block){compiled}: its "
                    "symbol is mangled, and the core's link does not find it", loc=k.loc,
                    limit="without entry=, the name of an extern \"C\" function the source "
                    "defines (as mlir-aie's kernel files do)",
                    found=f"its extern \"C\" functions: {', '.join(theirs) or 'none'}",
                    fix=f"wrap {k.symbol}'s definition in extern \"C\" {{ ... }}{outside}, or "
                        f"give entry=\"{entry}\" and declare the kernel under a name of its "
                        "own, so aiedsl generates the extern \"C\" function around it")
            raise DesignError(
                "kernel entry", f"kernel '{k.symbol}' has no entry=, so cores call "
                f"{src.label}'s own extern \"C\" function {k.symbol}, which it does not define"
                + compiled, loc=k.loc, limit="without entry=, the name of an extern \"C\" "
                "function the source defines (as mlir-aie's kernel files do)",
                found=f"its extern \"C\" functions: {', '.join(theirs) or 'none'}",
                fix="name one of them as the symbol, or give entry= the C++ function to call "
                    f"(aiedsl then generates {k.symbol} around it)")
        check_signature(k, k.symbol, src.label, scan)
        return
    if own is not None and own.sure:
        made = f", pasted by a macro as {own.spelled}" if own.pasted else ""
        raise DesignError(
            "kernel entry", f"kernel '{k.symbol}' would be defined twice: {src.label} defines "
            f"the extern \"C\" function {k.symbol} itself (its line {own.line}{made}), and "
            f"entry=\"{k.entry}\" makes aiedsl generate another around {k.entry}", loc=k.loc,
            limit="one definition of each extern \"C\" function in a kernel's object",
            found=f"{k.symbol} in {src.label} and entry=\"{k.entry}\"",
            fix=f"leave entry= out to call {src.label}'s own {k.symbol} as it is (with the "
                "defines= it reads), or name the kernel for what entry= computes, e.g. "
                f"{_shaped(k)}")
    if k.symbol in scan.cpp_linkage and scan.entry_complete:
        raise DesignError(
            "kernel entry", f"kernel '{k.symbol}' is named like a C++ function of "
            f"{src.label}, and entry=\"{k.entry}\" makes aiedsl generate an extern \"C\" "
            f"function {k.symbol} around {k.entry}{compiled}", loc=k.loc,
            limit="a generated entry's name is no function's of the source: C++ takes a C "
            "function beside a C++ one of the same name only when their parameters differ "
            "(g++: a redefinition, or conflicting declarations)",
            found=f"{k.symbol} in {src.label} and entry=\"{k.entry}\"",
            fix=f"name the kernel for what entry= computes, e.g. {_shaped(k)}")
    name = entry_function(k.entry)
    if not defines_function(src.text, name, k.defines):
        # a near miss, a typo (scale_bf17 for scale_bf16), not another name (good_ for bad_)
        near = difflib.get_close_matches(name, sorted(scan.declared), n=1, cutoff=0.8)
        raise DesignError(
            "kernel entry", f"kernel '{k.symbol}' calls {name}() (entry=\"{k.entry}\"), "
            f"which {src.label} does not declare{compiled}", loc=k.loc, found=k.entry,
            fix=f"name a function {src.label} defines in entry="
            + (f" ({near[0]}?)" if near else "") + f", or add {name} to it")
    head = entry_head(k.entry)
    scoped = any(w in words for words in scan.texts for w in ("namespace", "class", "struct"))
    # (the file's scope costs a cold check 40 ms: read only where a name can hide from it)
    if "::" not in head and scoped and scan.entry_complete and not file_scope(scan).sees(name):
        # declared, but where the generated call (at the file's top level) does not look
        spaces = sorted({path for tokens in scan.readings
                         for path, names in declared(list(tokens)).spaces.items()
                         if path and name in names})
        inside = (f"only inside namespace {' and '.join(spaces)}" if spaces else
                  "only inside a class (or a function)")
        raise DesignError(
            "kernel entry", f"kernel '{k.symbol}' calls {name}() (entry=\"{k.entry}\"), which "
            f"{src.label} declares {inside}{compiled}: the extern \"C\" function aiedsl "
            "generates after the file calls it from the top level, where it is not seen",
            loc=k.loc, limit="entry= names a function the file's top level sees: declared "
            "there, or qualified (ns::f), or opened by using namespace",
            found=f"entry=\"{k.entry}\"",
            fix=f"qualify it: entry=\"{spaces[0]}::{k.entry}\"" if spaces else
                f"qualify it with its class, entry=\"Class::{k.entry}\" (a static member), or "
                "declare it at the file's top level")
    check_signature(k, name, src.label, scan)


def _check_macro_names(k: Kernel, macros: frozenset[str], objects: frozenset[str],
                       src: KernelSource) -> None:
    """The names the ``extern "C"`` function aiedsl writes after the file declares (kernel
    ``k``'s symbol, its arguments') are no macro defined there (``macros``: at the file's end
    in every reading, ``defines=`` among them; ``objects``: those that are object-like, the
    only ones that rewrite a name without ``(`` after it, as an argument's is): the
    preprocessor would rewrite them, and ``#define src 0`` made ``int32_t *0`` of an argument
    ``src``, which check passed and the compile refused."""
    names = [k.symbol] + [a.name for a in k.args]
    hit = ([k.symbol] if k.symbol in macros else []) + [
        n for n in dict.fromkeys(names[1:]) if n in objects and n != k.symbol]
    if not hit:
        return

    def where(name: str) -> str:
        if name in k.defines:
            return f"defines={{'{name}': ...}}"
        m = re.search(rf"^[ \t]*#[ \t]*define[ \t]+{name}\b", blank(src.text), re.M)
        return (f"#define {name} in {src.label}" + (
            f" ({_line_of(src, src.text.count(chr(10), 0, m.start()) + 1)})" if m else ""))

    def free(name: str, tail: str) -> str:
        while name + tail in macros or name + tail in names:
            tail += "_"
        return name + tail

    what = "macro" if len(hit) == 1 else "macros"
    if hit[0] == k.symbol:
        subject = f"kernel symbol '{k.symbol}'"
        fix = f"name the kernel for what entry= computes, e.g. {free(_shaped(k), '')}"
    else:
        args = [n for n in hit if n != k.symbol]
        subject = ("argument " if len(args) == 1 else "arguments ") + listed(
            [f"'{n}'" for n in args]) + f" of kernel '{k.symbol}'"
        fix = "rename " + ("it" if len(args) == 1 else "them") + ", e.g. " + listed(
            [free(n, "_arg") for n in args])
        if k.symbol in hit:
            fix += f"; and the kernel, e.g. {free(_shaped(k), '')}"
    raise DesignError(
        "name", f"{subject} {'is a' if len(hit) == 1 else 'are'} {what} the kernel's C++ "
        f"defines: the extern \"C\" function aiedsl generates after {src.label} declares "
        f"{'it' if len(hit) == 1 else 'them'} by name, and the preprocessor would rewrite "
        f"{'it' if len(hit) == 1 else 'them'}", loc=k.loc,
        limit="a kernel's symbol and argument names are no macro of its C++ (its #define "
        "lines, its defines=)", found="; ".join(where(n) for n in hit), fix=fix)


def _line_of(src: KernelSource, line: int) -> str:
    """Line ``line`` of ``src``'s text as a message names it: a template's is of the text it
    renders to, not of the template."""
    return f"line {line}" if src.path is not None else f"line {line} of the rendered text"


def _shaped(k: Kernel) -> str:
    """``k``'s symbol with the shape of its first buffer added: ``f_32x32``."""
    shape = next((a.type.shape for a in k.args if a.type is not None), ())
    return f"{k.symbol}_{'x'.join(map(str, shape))}" if shape else f"{k.symbol}_1024"
