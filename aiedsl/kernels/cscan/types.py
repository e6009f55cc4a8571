"""A C++ parameter type as the mangled name the linker sees: what makes two spellings one
symbol.

A function's mangled name holds each parameter's type with its top-level ``const`` and
``volatile`` dropped (``f(const int32_t)`` is ``f(int32_t)``), an array parameter as the
pointer it is, and a typedef as the type it names. So two files defining ``int32_t bump(const
int32_t x)`` and ``int32_t bump(i32 y)`` (``using i32 = int32_t;``) export one symbol, which
lld refuses twice (a reviewer: the scan compared types as written and let it pass).

Only what the language itself fixes is made one: the file's own aliases, ``std::`` on the
``<cstdint>``/``<cstddef>`` names, and the orders and abbreviations of the built-in integer
words (``unsigned`` is ``unsigned int``). Whether ``int32_t`` is ``int`` or ``long`` is the
target's library's choice; the two stay apart, so a clash may go unsaid (lld says it), never
one made up.

Example
-------
>>> type_key("const int32_t", {})
'int32_t'
>>> type_key("i32 * const", {"i32": "std :: int32_t"})
'int32_t *'
>>> type_key("int const * const", {})
'const int *'
>>> type_key("unsigned [16]", {})
'unsigned int *'
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from aiedsl.kernels.cscan.signatures import spelled

_STD_NAMES = frozenset({
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
    "int_fast8_t", "int_fast16_t", "int_fast32_t", "int_fast64_t", "int_least8_t",
    "int_least16_t", "int_least32_t", "int_least64_t", "uint_fast8_t", "uint_fast16_t",
    "uint_fast32_t", "uint_fast64_t", "uint_least8_t", "uint_least16_t", "uint_least32_t",
    "uint_least64_t", "intmax_t", "uintmax_t", "intptr_t", "uintptr_t", "size_t",
    "ptrdiff_t"})
"""Names ``<cstdint>`` and ``<cstddef>`` declare both in ``std`` and globally: one type."""

_INTEGER_WORDS = frozenset({"signed", "unsigned", "short", "long", "int", "char"})
_CV = frozenset({"const", "volatile"})


def aliases_of(words: Sequence[str]) -> dict[str, str]:
    """The simple aliases a reading's tokens (``words``) define, name -> type as tokens joined
    by spaces: ``using i32 = int32_t;`` and ``typedef int32_t i32;``. A name defined two ways
    (in two scopes) is left out: which one a parameter means is not known."""
    found: dict[str, set[str]] = {}
    n = len(words)
    for j, w in enumerate(words):
        if w == "using" and j + 2 < n and words[j + 2] == "=" and _name(words[j + 1]):
            end = _semicolon(words, j + 3)
            if end is not None:
                found.setdefault(words[j + 1], set()).add(" ".join(words[j + 3:end]))
        elif w == "typedef":
            end = _semicolon(words, j + 1)
            if end is not None and end - j >= 3 and _name(words[end - 1]):
                found.setdefault(words[end - 1], set()).add(" ".join(words[j + 1:end - 1]))
    return {name: next(iter(types)) for name, types in found.items()
            if len(types) == 1 and _simple(next(iter(types)))}


def _name(word: str) -> bool:
    return re.fullmatch(r"[A-Za-z_]\w*", word) is not None


def _semicolon(words: Sequence[str], start: int) -> int | None:
    """Where the declaration from ``start`` ends, when nothing in it nests (no function
    pointer, template or array alias: those are left as written)."""
    for j in range(start, min(len(words), start + 16)):
        if words[j] == ";":
            return j
        if words[j] in ("(", ")", "{", "}", "<", ">", "[", "]", ","):
            return None
    return None


def _simple(type_text: str) -> bool:
    return bool(type_text) and all(_name(w) or w in ("::", "*", "&") for w in type_text.split())


def type_key(text: str, aliases: dict[str, str]) -> str:
    """Parameter type ``text`` (tokens joined by spaces, its name left out) as its mangled
    name tells it: aliases expanded, ``std::`` dropped from the ``<cstdint>`` names, integer
    words in one order, top-level ``const``/``volatile`` dropped, a first array bound made a
    pointer."""
    words = _expanded(_tokens(text), aliases)
    words = _unqualified(words)
    words = _integers(words)
    if "[" in words:  # an array parameter is a pointer; only its first bound decays
        at = words.index("[")
        close = words.index("]", at) if "]" in words[at:] else len(words) - 1
        rest = words[close + 1:]
        if not rest:
            words = words[:at] + ["*"]
    if "[" not in words:
        words = _cv_placed(words)
    return spelled(words)


def _cv_placed(words: list[str]) -> list[str]:
    """``words`` with the base type's qualifiers first (``int const *`` is ``const int *``)
    and the parameter's own, after its last ``*`` or ``&`` (or on a type without one),
    dropped: they are not in the mangled name."""
    marks = [j for j, w in enumerate(words) if w in ("*", "&", "&&")]
    if not marks:
        return [w for w in words if w not in _CV]
    first, last = marks[0], marks[-1]
    base = words[:first]
    cv = sorted({w for w in base if w in _CV})
    return (cv + [w for w in base if w not in _CV] + words[first:last + 1]
            + [w for w in words[last + 1:] if w not in _CV])


def _tokens(text: str) -> list[str]:
    return re.findall(r"::|&&|[A-Za-z_]\w*|\d+|\S", text)


def _expanded(words: list[str], aliases: dict[str, str], depth: int = 0) -> list[str]:
    """``words`` with each alias replaced by its type (aliases of aliases too, a few deep)."""
    out: list[str] = []
    changed = False
    for j, w in enumerate(words):
        qualified = j > 0 and words[j - 1] == "::"
        if w in aliases and not qualified:
            out += _tokens(aliases[w])
            changed = True
        else:
            out.append(w)
    return _expanded(out, aliases, depth + 1) if changed and depth < 4 else out


def _unqualified(words: list[str]) -> list[str]:
    """``words`` without ``std ::`` (or a leading ``::``) before a ``<cstdint>`` name."""
    out: list[str] = []
    j = 0
    while j < len(words):
        if words[j] == "std" and j + 2 < len(words) and words[j + 1] == "::" and \
                words[j + 2] in _STD_NAMES and (j == 0 or words[j - 1] != "::"):
            j += 2
            continue
        if words[j] == "::" and j + 1 < len(words) and words[j + 1] in _STD_NAMES and (
                j == 0 or not _name(words[j - 1])):
            j += 1
            continue
        out.append(words[j])
        j += 1
    return out


def _integers(words: list[str]) -> list[str]:
    """``words`` with each run of built-in integer words (cv-qualifiers may sit among them)
    spelled one way: ``long unsigned int`` is ``unsigned long``, ``signed`` is ``int``."""
    out: list[str] = []
    j = 0
    while j < len(words):
        if words[j] not in _INTEGER_WORDS:
            out.append(words[j])
            j += 1
            continue
        run: list[str] = []
        cv: list[str] = []
        while j < len(words) and (words[j] in _INTEGER_WORDS or words[j] in _CV):
            (run if words[j] in _INTEGER_WORDS else cv).append(words[j])
            j += 1
        out += cv + _integer(Counter(run))
    return out


def _integer(count: Counter[str]) -> list[str]:
    """One built-in integer type's words in one spelling."""
    if count["char"]:  # char, signed char and unsigned char are three types
        sign = "signed " if count["signed"] else "unsigned " if count["unsigned"] else ""
        return (sign + "char").split()
    size = "short" if count["short"] else "long long" if count["long"] >= 2 else \
        "long" if count["long"] else "int"
    return (("unsigned " if count["unsigned"] else "") + size).split()
