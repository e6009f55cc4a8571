"""The names the call of a kernel's ``entry=`` can see: aiedsl pastes ``entry=`` into the body of
the ``extern "C"`` function it generates after the kernel's C++ (``kernels/<name>.cc``), at the
file's top level, outside every function, class and template. A name in ``entry=`` resolves
there only if it is

- a macro: one of the kernel's ``defines=``, one the file ``#define``\\ s, or one a standard
  header or the AIE API may define;
- declared at the file's top level (a ``constexpr`` constant, a type, an enumerator of an
  unscoped enum, a function), directly or inside ``extern "C"``, an unnamed or an ``inline``
  namespace; or in a named namespace a ``using namespace`` at the top level opens;
- one the AIE API, Peano's intrinsic headers or the language declares there (``bfloat16``,
  ``int4``, ``cint16``, ``bfp16ebs8``, ``acc32``, ``v16accfloat``, ``int32_t``, ``true``:
  :mod:`aiedsl.kernels.aie_names` lists them, with their sources), or, under
  ``using namespace aie;``, one of the AIE API's own.

A function template's own parameter names (``template <int R, int C>``), a function's
parameters and locals, a class's members and a named namespace's members are not seen there:
``entry="affine_relu_bf16<R, C>"`` for ``template <int R, int C> void affine_relu_bf16(...)``
compiles to ``affine_relu_bf16<R, C>(x, gb, out);`` in the generated function, where g++ says
``'R' was not declared in this scope``.

Each finding is a superset of what the compiler sees (what is not found is certainly not seen),
so a name refused is one the call cannot resolve: the scan reads every way the file's
undecidable ``#if`` can go, takes a name spelled anywhere at the top level of a declaration
(but in a template's head, where it names the template's own parameter, and in a function's
parameter list) as declared there, and, for a ``using namespace`` of a namespace neither the
file nor the AIE API declares, refuses nothing (``std``'s names are lower case: there, a name
with a capital letter, ``FILE`` aside, is still judged). A ``<header>`` the scan does not read
(not a standard one, not ``aie_api/...``: mlir-aie's ``<lut_based_ops.h>``, the user's
``<foo.h>``) may declare anything: then only the file's own template parameters are judged
(a name used in a body may be the header's, so a local or a member cannot be told from it).
A quoted ``#include "..."`` makes the scan unsure, and nothing in ``entry=`` is judged. A name
spelled as a call (``f<tile()>``) is not judged either, a template parameter aside: the
headers' functions (the intrinsics alone are thousands, overloaded) are not listed.

Example
-------
>>> from aiedsl.kernels.cscan import extern_c
>>> scope = file_scope(extern_c("constexpr int TILE = 64;\\n"
...                             "template <int R, int C> void f(int *x) { int local = R; }\\n"))
>>> sorted(n for n in ("TILE", "R", "C", "x", "local", "f") if scope.sees(n))
['TILE', 'f']
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from aiedsl.kernels.cscan import CScan
from aiedsl.kernels.cscan.blank import blank
from aiedsl.kernels.cscan.declarations import return_type_end
from aiedsl.kernels.cscan.macros import PRESET, library_macro
from aiedsl.kernels.cscan.preprocess import logical_lines
from aiedsl.kernels.aie_names import aie_name
from aiedsl.kernels.cscan.tokens import Tok, identifier
from aiedsl.kernels.paths import KERNELS_CPP
from aiedsl.lang.names import CPP_KEYWORDS, reserved_macro

LANGUAGE = CPP_KEYWORDS | frozenset(
    "int8_t uint8_t int16_t uint16_t int32_t uint32_t int64_t uint64_t intptr_t uintptr_t "
    "intmax_t uintmax_t size_t ptrdiff_t max_align_t nullptr_t bfloat16".split())
"""Names every kernel's call sees whatever the file declares: the keywords, and the types
``<stdint.h>``, ``<stddef.h>`` and the AIE API put at the top level."""


@dataclass(frozen=True)
class Names:
    """What one C++ text (a kernel's file, or the AIE API's headers) declares, by scope."""

    spaces: dict[str, frozenset[str]]
    """Names declared at each namespace's own level: ``""`` the file's top level (``extern
    "C"``, unnamed and inline namespaces see-through), ``"aie"``, ``"aie::detail"``, ... (a
    superset: every word of a declaration there, but a template's own parameters and a
    function's parameter list)."""
    using: dict[str, frozenset[str]]
    """The namespaces each namespace's level opens with ``using namespace`` (``""``'s: the
    file's top level's)."""
    template_params: frozenset[str]
    """Every name a template head declares as its template's own parameter."""


@dataclass(frozen=True)
class FileScope:
    """The names a kernel's generated ``extern "C"`` function sees, after its C++ file: see the
    module's docstring."""

    top: frozenset[str]
    """What the file declares at its top level, or in a namespace it opens there."""
    macros: frozenset[str]
    """Every name the file ``#define``\\ s, whether or not the define is read."""
    unknown: bool
    """The file opens a namespace neither it nor the AIE API declares (``std``'s aside): its
    names cannot be listed, so every name is taken as seen."""
    std: bool
    """The file opens ``std`` (``using namespace std;``): its names are lower case."""
    aie: frozenset[str]
    """What the AIE API's headers declare at their top level, or in a namespace the file
    opens (``using namespace aie;``), and the macros they define."""
    code: frozenset[str]
    """Every word of the file's code, in any scope (a ``-D`` of one would rewrite it)."""
    template_params: frozenset[str]
    """Every name a template head of the file declares as a template's own parameter."""
    header: str = ""
    """The first ``<header>`` the file includes that the scan does not read (``""``: none):
    it may declare any name but the file's template parameters."""

    def sees(self, name: str, called: bool = False) -> bool:
        """Does the generated call, after the file, see ``name`` (as far as the file says)?
        ``called``: ``entry=`` spells it as a call, ``name(...)``: a function the headers may
        declare, not judged (a template parameter aside)."""
        return (name in LANGUAGE or name in self.top or name in self.macros
                or name in self.aie or name in PRESET or self.unknown
                or reserved_macro(name) or library_macro(name) or aie_name(name)
                or ((bool(self.header) or called) and name not in self.template_params)
                or (self.std and (name == "FILE" or not re.search(r"[A-Z]", name))))


def file_scope(scan: CScan) -> FileScope:
    """What the generated ``extern "C"`` function after a kernel's C++ (``scan``, read with the
    kernel's ``defines=``; its :attr:`~aiedsl.kernels.cscan.CScan.readings`) sees: see the
    module's docstring."""
    return _file_scope(scan.source, scan.readings)


@functools.lru_cache(maxsize=64)
def _file_scope(source: str, readings: tuple[tuple[Tok, ...], ...]) -> FileScope:
    spaces: dict[str, set[str]] = {}
    using: dict[str, set[str]] = {}
    params: set[str] = set()
    for tokens in readings:
        names = declared(list(tokens))
        for path, found in names.spaces.items():
            spaces.setdefault(path, set()).update(found)
        for path, opened in names.using.items():
            using.setdefault(path, set()).update(opened)
        params |= names.template_params
    api = _api_names()
    top: set[str] = set()
    aie = set(api.spaces.get("", ())) | _api_macros()
    unknown = std = False
    for path in _opened("", using):
        if path in spaces:
            top |= spaces[path]
        elif path in api.spaces:
            aie |= set().union(*(api.spaces.get(p, ()) for p in _opened(path, api.using)))
        elif path == "std" or path.startswith("std::"):
            std = True
        elif path:
            unknown = True
    code = frozenset(t.text for tokens in readings for t in tokens if identifier(t))
    return FileScope(frozenset(top), _defined_macros(source), unknown, std, frozenset(aie),
                     code, frozenset(params), _unread_header(source))


def _opened(path: str, using: dict[str, set[str]] | dict[str, frozenset[str]]) -> list[str]:
    """``path`` and every namespace its level opens, and theirs in turn (``using namespace``
    is transitive)."""
    out = [path]
    for p in out:
        out += [q for q in sorted(using.get(p, ())) if q not in out]
    return out


_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.M)


def _defined_macros(source: str) -> frozenset[str]:
    """Every name ``source`` ``#define``\\ s (comments and literals aside), in any branch."""
    if "define" not in source:
        return frozenset()
    return frozenset(_DEFINE.findall(blank(source)))


STANDARD_HEADERS = frozenset("""
assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h iso646.h limits.h locale.h math.h
setjmp.h signal.h stdalign.h stdarg.h stdatomic.h stdbit.h stdbool.h stdckdint.h stddef.h
stdint.h stdio.h stdlib.h stdnoreturn.h string.h tgmath.h threads.h time.h uchar.h wchar.h
wctype.h
algorithm any array atomic barrier bit bitset cassert ccomplex cctype cerrno cfenv cfloat
charconv chrono cinttypes ciso646 climits clocale cmath codecvt compare complex concepts
condition_variable coroutine csetjmp csignal cstdalign cstdarg cstdbool cstddef cstdint cstdio
cstdlib cstring ctgmath ctime cuchar cwchar cwctype deque exception execution expected filesystem
format forward_list fstream functional future initializer_list iomanip ios iosfwd iostream
istream iterator latch limits list locale map mdspan memory memory_resource mutex new numbers
numeric optional ostream print queue random ranges ratio regex scoped_allocator semaphore set
shared_mutex source_location span sstream stack stacktrace stdexcept stop_token streambuf string
string_view syncstream system_error thread tuple type_traits typeindex typeinfo unordered_map
unordered_set utility valarray variant vector version
""".split())
"""The C and C++ standard headers (C23's, C++23's): what they declare is the language's
(:data:`LANGUAGE`, ``std``'s lower-case names, :func:`~aiedsl.kernels.cscan.macros.
library_macro`'s macros)."""

_ANGLE_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*<([^>\n]*)>", re.M)


def _unread_header(source: str) -> str:
    """The first ``<header>`` ``source`` includes, in any branch, that is neither a standard
    header nor the AIE API's (``""``: none)."""
    if "include" not in source:
        return ""
    for m in _ANGLE_INCLUDE.finditer(blank(source, strings=False)):
        header = m[1].strip()
        if header not in STANDARD_HEADERS and not header.startswith("aie_api/"):
            return header
    return ""


def declared(tokens: list[Tok]) -> Names:
    """The names preprocessed ``tokens`` (one reading of a file) declare, by namespace: see
    :class:`Names`. Braces are followed: a function's body, a class's, a scoped enum's and an
    initialiser's hold nothing declared at the level around them; an unscoped enum's
    enumerators belong to it."""
    spaces: dict[str, set[str]] = {"": set()}
    using: dict[str, set[str]] = {}
    params: set[str] = set()
    paths = [""]  # per open namespace or extern "C" block: the namespace its level is
    statement: list[Tok] = []  # the current declaration's tokens at this level
    hidden: set[str] = set()  # its template heads' parameters
    n = len(tokens)
    i = 0

    def end() -> None:
        words = [t.text for t in statement]
        if words[:2] == ["using", "namespace"]:
            using.setdefault(paths[-1], set()).add("".join(words[2:]).removeprefix("::"))
        elif words[:1] == ["using"] and identifier(statement[-1]):  # using ns::name;
            spaces.setdefault(paths[-1], set()).add(words[-1])
        statement.clear()
        hidden.clear()

    while i < n:
        t = tokens[i]
        text = t.text
        here = spaces.setdefault(paths[-1], set())
        if text == "extern" and i + 2 < n and tokens[i + 1].text in ('"C"', '"C++"') and \
                tokens[i + 2].text == "{":
            end()
            paths.append(paths[-1])
            i += 3
            continue
        if text == "namespace" and all(s.text == "inline" for s in statement):
            k = i + 1
            while k < n and (identifier(tokens[k]) or tokens[k].text == "::"):
                k += 1
            if k < n and tokens[k].text == "{":
                name = "".join(x.text for x in tokens[i + 1:k])
                inline = bool(statement)
                end()
                base = paths[-1]  # an unnamed or inline namespace's names are its level's
                paths.append(base if inline or not name else
                             f"{base}::{name}".removeprefix("::"))
                i = k + 1
                continue
        if text == "template" and i + 1 < n and tokens[i + 1].text == "<":
            close, names = _template_head(tokens, i + 1)
            hidden.update(names)
            params.update(names)
            statement.append(t)
            i = close + 1
            continue
        if text == "{":
            close = _close(tokens, i, "{", "}")
            words = [s.text for s in statement]
            if "enum" in words and words[words.index("enum") + 1:][:1] not in (["class"],
                                                                                ["struct"]):
                here.update(x.text for x in tokens[i + 1:close] if identifier(x))
                statement.append(Tok("{}", t.start, t.end))
            elif "(" in words and "=" not in words:
                end()  # a function's body ends its definition
            else:  # a class's body, an initialiser: the declaration goes on
                statement.append(Tok("{}", t.start, t.end))
            i = close + 1
            continue
        if text == "}":
            end()
            if len(paths) > 1:
                paths.pop()
            i += 1
            continue
        if text == ";":
            end()
            i += 1
            continue
        if text == "(" and _parameters(tokens, i):
            close = _close(tokens, i, "(", ")")
            # a parameter's name is its function's; `struct S *p` declares S around it
            here.update(x.text for k, x in enumerate(tokens[i + 1:close], i + 1)
                        if identifier(x) and tokens[k - 1].text in
                        ("struct", "class", "union", "enum"))
            statement.extend(tokens[i:close + 1])
            i = close + 1
            continue
        # a name after :: or . is another scope's (ns::N, S::f, x.n)
        if identifier(t) and text not in hidden and not (
                statement and statement[-1].text in ("::", ".", "->")):
            here.add(text)
        statement.append(t)
        i += 1
    return Names({p: frozenset(s) for p, s in spaces.items()},
                 {p: frozenset(s) for p, s in using.items()}, frozenset(params))


def _close(tokens: list[Tok], i: int, opener: str, closer: str) -> int:
    """Where the group opened at ``tokens[i]`` closes (the last token when it does not)."""
    depth = 0
    for k in range(i, len(tokens)):
        text = tokens[k].text
        depth += (text == opener) - (text == closer)
        if depth == 0:
            return k
    return len(tokens) - 1


def _template_head(tokens: list[Tok], i: int) -> tuple[int, set[str]]:
    """The template head whose ``<`` is ``tokens[i]``: where its ``>`` is, and the names of
    the parameters it declares (``typename T``, ``unsigned N = 64``, ``class... Ts``; the last
    word of each before its default)."""
    depth = 0
    names: set[str] = set()
    last: str | None = None
    defaulted = False
    k = i
    while k < len(tokens):
        text = tokens[k].text
        if text in "([{":
            k = _close(tokens, k, text, {"(": ")", "[": "]", "{": "}"}[text]) + 1
            continue
        if text == "<":
            depth += 1
        elif text in (">", ">>"):
            depth -= len(text)
        if depth <= 0 or (text == "," and depth == 1):
            if last is not None:
                names.add(last)
            last, defaulted = None, False
            if depth <= 0:
                return k, names
        elif text == "=" and depth == 1:
            defaulted = True
        elif depth == 1 and not defaulted and identifier(tokens[k]) and text not in CPP_KEYWORDS:
            last = text
        k += 1
    return len(tokens) - 1, names


def _parameters(tokens: list[Tok], i: int) -> bool:
    """Is the ``(`` at ``tokens[i]`` a function declarator's parameter list (a name after a
    return type, as ``int f(int x)``), not a parenthesised declarator (``int (*fp)(int)``), an
    initialiser's call or a cast?"""
    if i == 0 or not identifier(tokens[i - 1]) or tokens[i - 1].text in CPP_KEYWORDS:
        return False
    if i + 1 < len(tokens) and tokens[i + 1].text in ("*", "&", "&&", "^"):
        return False
    return return_type_end(tokens, i - 1) >= 0


@functools.cache
def _api_names() -> Names:
    """What the AIE API's headers (the host's, which aiedsl ships and ``kernel test``
    compiles with) declare, by namespace; their directives aside."""
    tokens: list[Tok] = []
    for f in sorted((KERNELS_CPP / "host" / "aie_api").glob("*.hpp")):
        code = blank(f.read_text())
        tokens += [t for _, _, directive, lexed in logical_lines(code) if directive is None
                   for t in lexed]
    return declared(tokens)


@functools.cache
def _api_macros() -> frozenset[str]:
    """The macros the AIE API's headers define."""
    return frozenset().union(*(_defined_macros(f.read_text()) for f in
                               sorted((KERNELS_CPP / "host" / "aie_api").glob("*.hpp"))))
