"""Which ``extern "C"`` functions a kernel's C++ file defines, read as the compiler would read it
with the kernel's ``defines=``: a small C preprocessor and a declaration scanner.

``aiedsl check`` uses it to refuse two mistakes before any compiler runs: a kernel without
``entry=`` whose symbol the file does not define (the core's link would fail), and one with
``entry=`` whose symbol the file defines itself (the generated entry would define it twice).
Each refusal is a claim about the file, so the reading is made sound where it claims and says
when it cannot know:

- comments, string and character literals (raw strings too) are blanked first, so no text in
  them is taken for code (``'{'`` no longer opens a block, ``R"(void f();)"`` defines nothing);
- macros are expanded as the preprocessor expands them: only the invocations present, with
  their real arguments (mlir-aie's ``combos(matvec_scalar_c_func)`` makes
  ``matvec_scalar_i16_i32`` and nothing else; a commented-out combination makes nothing);
- ``#if`` is evaluated with the kernel's ``defines=`` and the file's own ``#define`` lines (a
  name neither sets is undefined, as on the compiler's command line); a condition on a name the
  compiler or its library reserves (``__chess__``, ``_FOO``), or, after a ``<header>`` is
  included, on one a standard header or the AIE API may define (``UINT8_MAX``,
  ``AIE_API_NATIVE``: :func:`~aiedsl.kernels.cscan.macros.library_macro`), cannot be decided,
  and each way it can go is read (:data:`MAX_READINGS` at most);
- braces are tracked: a function is one at the top level of an ``extern "C"`` block (through
  namespaces, whose functions keep C linkage), not a ``static`` helper (no external symbol), a
  template (C++ linkage only), a variable (``int table(3);``), a ``typedef``, a class's member
  or anything in a function's body.

Where it cannot know (a macro it does not see defined invoked where a declaration goes, a
quoted ``#include``, too many readings, unbalanced braces), :attr:`CScan.complete` is False and
nothing is refused on its word: the host compile (``kernel test``, ``sim --kernels native``) and
Peano say it instead.

The stages, one module each: :mod:`~aiedsl.kernels.cscan.blank` (comments and literals
blanked), :mod:`~aiedsl.kernels.cscan.tokens` (the lexer), :mod:`~aiedsl.kernels.cscan.macros`
(``#define`` and expansion), :mod:`~aiedsl.kernels.cscan.conditions` (``#if`` values),
:mod:`~aiedsl.kernels.cscan.preprocess` (one reading of the file) and
:mod:`~aiedsl.kernels.cscan.declarations` (the functions a reading declares); this module runs
every reading and says what they found together.

Example
-------
>>> scan = extern_c('#define F(t) void zero_##t(t *c) {}\\nextern "C" { F(int) }\\n')
>>> [(f.name, f.spelled, f.line, f.sure) for f in scan.functions], scan.complete
([('zero_int', 'zero_##t', 1, True)], True)
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Mapping

from aiedsl.kernels.cscan.blank import blank
from aiedsl.kernels.cscan.declarations import Defined, declared_names, heads
from aiedsl.kernels.cscan.preprocess import (Reading, State, initial, logical_lines, places,
                                             read)
from aiedsl.kernels.cscan.signatures import Param, Signature, _params, signatures
from aiedsl.kernels.cscan.tokens import Gaveup, Tok
from aiedsl.kernels.cscan.types import aliases_of, type_key

MAX_READINGS = 32
"""Readings of a file (one per way its undecidable ``#if`` conditions can go) before the scan
gives up and says it cannot know."""


@dataclass(frozen=True)
class CFunction:
    """An ``extern "C"`` function a C++ file defines or declares."""

    name: str
    """The symbol: ``matvec_scalar_i16_i32`` (pasted names expanded)."""
    spelled: str
    """As the file writes it: the name, or the macro's pasting
    (``matvec_scalar_##mlir_type_in##_##mlir_type_out``)."""
    line: int
    """Where it is spelled (1-based)."""
    sure: bool
    """Defined (with a body) whichever way the file's undecidable ``#if`` go: a second
    definition of it certainly fails."""

    @property
    def pasted(self) -> bool:
        """Is its name pasted together by a macro (``##``)?"""
        return self.spelled != self.name


@dataclass(frozen=True)
class Exported:
    """A function a file defines with external linkage, in every reading: a symbol its object
    exports, which another object of one core's link defining it too makes lld refuse."""

    symbol: str
    """What tells it apart at the link: an ``extern "C"`` function's name; a C++ function's
    namespaces, name and parameter types as written (``ns::bump(int32_t)``), which its mangled
    name is made of (two overloads are two symbols)."""
    linkage: str
    """``"C"`` or ``"C++"``."""
    name: str
    """The function's name."""
    line: int
    """Where its name is (1-based), in the first reading."""


@dataclass(frozen=True)
class CScan:
    """What :func:`extern_c` found in a file."""

    functions: tuple[CFunction, ...]
    """Every ``extern "C"`` function it defines or declares in any reading, in file order."""
    complete: bool
    """No ``extern "C"`` function can hide from the scan: a name not listed is not defined."""
    entry_complete: bool
    """No function of any linkage can hide (what ``entry=`` calls): a name the text does not
    declare is not declared."""
    unsure: str = ""
    """Why the scan is not complete (the first reason)."""
    declared: frozenset[str] = frozenset()
    """The names the file declares as functions, any linkage, any scope (after expansion; a
    superset, see :func:`~aiedsl.kernels.cscan.declarations.declared_names`)."""
    cpp_linkage: frozenset[str] = frozenset()
    """The plain functions it declares with C++ linkage (outside ``extern "C"``, not
    ``static``, not templates): a symbol the core's link does not find by its name."""
    source: str = field(default="", repr=False, compare=False)
    readings: tuple[tuple[Tok, ...], ...] = field(default=(), repr=False, compare=False)
    """Each reading's tokens, preprocessed."""
    texts: tuple[tuple[str, ...], ...] = field(default=(), repr=False, compare=False)
    """Each reading's tokens' texts (what a name is looked for among)."""
    error: tuple[int, str] | None = None
    """An ``#error`` every reading reaches (its line and text): the file cannot compile with
    these defines, whichever way its undecidable conditions go."""
    exported: tuple[Exported, ...] = ()
    macros: frozenset[str] = frozenset()
    """The macros defined at the file's end whichever way its undecidable ``#if`` go (its
    ``#define`` lines not undone, the ``defines=`` it is read with, the compiles' own)."""
    object_macros: frozenset[str] = frozenset()
    """Those of :attr:`macros` that are object-like (rewrite a name without ``(`` after it)."""
    """The functions it defines with external linkage whichever way its undecidable
    ``#if`` go (not ``static``, ``inline``, a template or in an unnamed namespace)."""

    def find(self, name: str) -> CFunction | None:
        """The ``extern "C"`` function called ``name``, if the file makes one."""
        return next((f for f in self.functions if f.name == name), None)

    def signature(self, name: str) -> Signature | None:
        """The one signature every declaration of function ``name`` has, in every reading;
        None when the scan is not complete, the file does not declare it, or declares it
        several ways (overloads, or a signature that depends on an ``#if``)."""
        if not self.entry_complete:
            return None
        found: dict[tuple[object, ...], Signature] = {}
        read: dict[tuple[str, ...], tuple[tuple[Param, ...], bool, int]] = {}
        for tokens, texts in zip(self.readings, self.texts):
            if name not in texts:
                continue
            for sig in signatures(tokens, name, self.source, texts, read):
                found.setdefault(sig.key(), sig)
        return next(iter(found.values())) if len(found) == 1 else None


def extern_c(source: str, defines: Mapping[str, object] | None = None) -> CScan:
    """The ``extern "C"`` functions C++ ``source`` defines or declares when compiled with
    ``defines`` (``{"DIM_M": 32}``: a kernel's ``defines=``), read as the module's docstring
    says."""
    given = tuple(sorted((str(k), _value(v)) for k, v in (defines or {}).items()))
    return _scan(source, given)


def _value(v: object) -> str:
    """A define's value as its ``-D`` word writes it."""
    return repr(float(v)) if isinstance(v, float) else str(v)


@functools.lru_cache(maxsize=64)
def _scan(source: str, defines: tuple[tuple[str, str], ...]) -> CScan:
    code = blank(source)
    lines = logical_lines(code)
    wheres = places(lines)
    readings: list[Reading] = []
    # each reading still to make: where it starts, and the way its undecidable conditions go
    # up to the one it takes the other way (the others: taken)
    pending: list[tuple[State, list[bool]]] = [(initial(dict(defines)), [])]
    unsure = ""
    try:
        while pending:
            if len(readings) == MAX_READINGS:
                raise Gaveup(f"its #if conditions the scan cannot decide (on names the "
                              "compiler or an included header may define) make more than "
                              f"{MAX_READINGS} readings")
            at, choices = pending.pop()
            forks: list[State] = []
            r = read(source, code, lines, wheres, at, choices, forks)
            readings.append(r)
            for fork in reversed(forks):  # the last condition it took, the first taken back
                pending.append((fork, r.decisions[:len(fork.decisions)] + [False]))
        found: dict[str, list[tuple[Tok, bool]]] = {}
        declared: set[str] = set()
        unknown_c: list[Tok] = []
        unknown_cpp: list[Tok] = []
        cpp_linkage: set[str] = set()
        texts = [[t.text for t in r.tokens] for r in readings]
        exported: dict[str, Exported] | None = None
        for r, words in zip(readings, texts):
            functions, uc, ucpp, cpp, defined = heads(r.tokens, words)
            cpp_linkage.update(t.text for t in cpp)
            aliases = aliases_of(words)
            mine = {e.symbol: e for e in (_exported(source, x, aliases) for x in defined)}
            exported = mine if exported is None else {
                key: e for key, e in exported.items() if key in mine}
            declared.update(declared_names(r.tokens, words))
            unknown_c += uc
            unknown_cpp += ucpp
            seen: dict[str, tuple[Tok, bool]] = {}
            for tok, body in functions:
                if tok.text not in seen or (body and not seen[tok.text][1]):
                    seen[tok.text] = (tok, body)
            for name, item in seen.items():
                found.setdefault(name, []).append(item)
            unsure = unsure or r.unsure
    except Gaveup as e:
        return CScan((), False, False, f"{e}", frozenset())
    out = []
    for name, items in found.items():
        tok = min((t for t, _ in items), key=lambda t: t.start)
        sure = len(items) == len(readings) and all(body for _, body in items)
        spelled = re.sub(r"[\s\\]+", "", source[tok.start:tok.end])
        out.append(CFunction(name, spelled if "##" in spelled else name,
                             source.count("\n", 0, tok.start) + 1, sure))
    out.sort(key=lambda f: (f.line, f.name))
    if unknown_c and not unsure:
        t = unknown_c[0]
        unsure = (f"{t.text}(...) on its line {source.count(chr(10), 0, t.start) + 1} is a "
                  "macro it does not define (from a header?), which may define functions")
    entry_unsure = unsure or (f"{unknown_cpp[0].text}(...) is a macro it does not define"
                              if unknown_cpp else "")
    # sure only when every reading reaches one and none is unsure of the file (a header it
    # does not read may define what a condition before the #error tests)
    errors = [r.error for r in readings if r.error is not None and not r.unsure]
    error = min(errors) if readings and len(errors) == len(readings) else None
    return CScan(tuple(out), not unsure, not entry_unsure, unsure, frozenset(declared),
                 frozenset(cpp_linkage), source, tuple(tuple(r.tokens) for r in readings),
                 tuple(map(tuple, texts)), error, tuple((exported or {}).values()),
                 _in_all([r.macros for r in readings]),
                 _in_all([r.object_macros for r in readings]))


def _in_all(sets: list[frozenset[str]]) -> frozenset[str]:
    """What every reading's set holds (nothing, for no reading)."""
    return frozenset.intersection(*sets) if sets else frozenset()


def _exported(source: str, d: Defined, aliases: dict[str, str]) -> Exported:
    """Definition ``d`` as the symbol it exports. A C++ function's parameter types are
    compared as its mangled name holds them (:func:`~aiedsl.kernels.cscan.types.type_key`:
    names, defaults and top-level ``const`` left out, the file's ``aliases`` expanded); a
    type the target's library may spell two ways (``int`` and ``int32_t``) is taken for two,
    so a clash may go unsaid (lld says it), never one made up by two overloads."""
    line = source.count("\n", 0, d.name.start) + 1
    if d.linkage == "C":
        return Exported(d.name.text, "C", d.name.text, line)
    at = next(j for j, t in enumerate(d.head) if t is d.name)
    depth, close = 0, len(d.head)
    for j in range(at + 1, len(d.head)):
        depth += (d.head[j].text == "(") - (d.head[j].text == ")")
        if depth == 0:
            close = j
            break
    params, variadic, _ = _params(d.head[at + 2:close])
    types = [type_key(_unnamed(p), aliases) for p in params] + (["..."] if variadic else [])
    where = f"{d.namespace}::" if d.namespace else ""
    return Exported(f"{where}{d.name.text}({', '.join(types)})", "C++", d.name.text, line)


def _unnamed(p: Param) -> str:
    """Parameter ``p``'s type as written: its text without its name."""
    if p.name is None:
        return p.text
    at = p.text.rfind(p.name)
    return (p.text[:at] + p.text[at + len(p.name):]).replace("  ", " ").strip()
