"""The C++ scan's macros: recording ``#define``, asking whether a name is defined (or cannot be
known), and expanding macros as the preprocessor does (hide sets, ``#`` and ``##``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from aiedsl.kernels.cscan.tokens import Gaveup, Tok, lex
from aiedsl.lang.names import reserved_macro

PRESET = {"NDEBUG": "1", "__AIE_API_AIE_ADF_HPP__": "1", "__cplusplus": "202002L"}
"""Macros every kernel compile defines (Peano's and the host's command lines; both compile
C++20, so a C header's ``#ifdef __cplusplus`` / ``extern "C" {`` guard is read as taken)."""


@dataclass(frozen=True)
class Macro:
    """A macro as its ``#define`` (or a ``-D`` word) gives it: its parameters and its body's
    tokens."""

    params: tuple[str, ...] | None
    """None for an object-like macro."""
    variadic: bool
    body: tuple[Tok, ...]


def define(code: str, start: int, end: int, macros: dict[str, Macro]) -> None:
    """Record the ``#define`` on ``code[start:end]``."""
    m = re.compile(r"[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\()?").match(code, start, end)
    if m is None:
        return
    at = m.end()
    params: tuple[str, ...] | None = None
    variadic = False
    if m[2]:  # function-like: the parameters up to ')'
        close = code.find(")", at, end)
        if close < 0:
            return
        names = [p.strip() for p in code[at:close].replace("\\\n", " ").split(",") if p.strip()]
        if names and names[-1].endswith("..."):
            variadic = True
            names[-1] = names[-1][:-3].strip() or "__VA_ARGS__"
        params = tuple(names)
        at = close + 1
    macros[m[1]] = Macro(params, variadic, tuple(lex(code, at, end)))


def defined(name: str, macros: Mapping[str, Macro]) -> int | None:
    """Is macro ``name`` defined: 1, 0, or None for a name the compiler may predefine or, once
    a ``<header>`` is included, one the headers may define (:func:`library_macro`)."""
    if name in macros:
        return 1
    return None if unknowable(name, macros) else 0


def unknowable(name: str, macros: Mapping[str, Macro]) -> bool:
    """Can it not be known whether macro ``name`` is defined: a name the compiler reserves, or,
    once a ``<header>`` is included (:data:`HEADERS` in ``macros``), one a header may define?"""
    return reserved_macro(name) or (HEADERS in macros and library_macro(name))


HEADERS = "#include <>"
"""The key in a reading's macros that says a ``<header>`` has been included (no macro can be
called that)."""
NO_BODY = Macro(None, False, ())

_LIBRARY = re.compile(r"""
    (?:U?INT(?:8|16|32|64|MAX|PTR)?|U?INT_(?:LEAST|FAST)(?:8|16|32|64)|SIZE|PTRDIFF|SIG_ATOMIC
       |WCHAR|WINT|S?CHAR|UCHAR|U?SHRT|U?LONG|U?LLONG|MB_LEN)_(?:MAX|MIN|WIDTH)
  | U?INT(?:8|16|32|64|MAX)_C | CHAR_BIT | FLT_EVAL_METHOD | DECIMAL_DIG | FLT_RADIX | FLT_ROUNDS
  | (?:FLT|DBL|LDBL)_(?:MANT_DIG|DIG|DECIMAL_DIG|MIN_EXP|MIN_10_EXP|MAX_EXP|MAX_10_EXP|MAX|MIN
                       |EPSILON|TRUE_MIN|HAS_SUBNORM)
  | (?:PRI|SCN)[diouxX](?:8|16|32|64|MAX|PTR|LEAST(?:8|16|32|64)|FAST(?:8|16|32|64))
  | EOF | BUFSIZ | FILENAME_MAX | FOPEN_MAX | TMP_MAX | L_tmpnam
  | SEEK_(?:SET|CUR|END) | EXIT_(?:SUCCESS|FAILURE) | RAND_MAX | MB_CUR_MAX | NULL
  | EDOM | ERANGE | EILSEQ | errno | HUGE_VAL[FL]? | INFINITY | NAN
  | M_(?:E|LOG2E|LOG10E|LN2|LN10|PI|PI_2|PI_4|1_PI|2_PI|2_SQRTPI|SQRT2|SQRT1_2)l?
  | FP_(?:NAN|INFINITE|ZERO|SUBNORMAL|NORMAL|FAST_FMA[FL]?|ILOGB0|ILOGBNAN)
  | MATH_ERR(?:NO|EXCEPT) | math_errhandling | assert | static_assert | offsetof | alignas
  | alignof | bool | AIE_API_\w+
""", re.X)


def library_macro(name: str) -> bool:
    """Might a standard C/C++ header (``<stdint.h>``, ``<limits.h>``, ``<float.h>``,
    ``<math.h>``, ...) or the AIE API define macro ``name``? A file that includes one is read
    both ways on a condition that tests such a name; a name of its own (``DIM_M``) is defined
    only by ``defines=`` and the file.

    >>> library_macro("UINT8_MAX"), library_macro("DIM_M")
    (True, False)
    """
    return _LIBRARY.fullmatch(name) is not None


def expand(tokens: list[Tok], macros: Mapping[str, Macro],
           places: list[int] | None = None) -> list[Tok]:
    """``tokens`` with their macros expanded and the results rescanned, as the preprocessor
    does (each expansion hides its macro from what it made). ``places``: the places in
    ``tokens``, in order, of every token named as a macro (others may be among them), when the
    caller knows them."""
    out: list[Tok] = []
    work = tokens[::-1]  # a stack: the next token last
    # While the stack holds nothing but the rest of `tokens` (`left` of them), the run up to
    # the next token named as a macro is copied whole, not token by token (a reading of a
    # kernel file is thousands of tokens, a few of them macros' names)
    n = len(tokens)
    at = [i for i, t in enumerate(tokens) if t.text in macros] if places is None else places[:]
    at.append(n)
    k = 0
    left = n
    while work:
        if len(work) == left:
            i = n - left
            while at[k] < i:
                k += 1
            if at[k] > i:
                out.extend(tokens[i:at[k]])
                left = n - at[k]
                del work[left:]
                if not work:
                    break
        t = work.pop()
        if len(work) < left:
            left = len(work)
        m = macros.get(t.text)
        if m is None or t.text in t.hide:
            out.append(t)
            continue
        hide = t.hide | {t.text}
        if m.params is None:
            work.extend(reversed(_substitute(m, {}, hide, macros)))
            continue
        if not work or work[-1].text != "(":  # a function-like macro's name alone
            out.append(t)
            continue
        args = _arguments(work)
        left = min(left, len(work))
        if args is None:
            raise Gaveup(f"the arguments of {t.text}(...) do not close")
        if m.params == () and args == [[]]:
            args = []
        count = len(m.params)
        fits = len(args) >= count - 1 if m.variadic else len(args) == count
        if not fits:
            raise Gaveup(f"{t.text}(...) is given {len(args)} argument(s) for {count}")
        named = dict(zip(m.params, args))
        if m.variadic:
            joined: list[Tok] = []
            for k, a in enumerate(args[count - 1:]):
                if k:
                    joined.append(Tok(",", t.start, t.end))
                joined.extend(a)
            named[m.params[-1]] = joined
        work.extend(reversed(_substitute(m, named, hide, macros)))
    return out


def _arguments(work: list[Tok]) -> list[list[Tok]] | None:
    """Pop a macro call's ``( ... )`` off ``work`` (a stack): its arguments, split at the
    commas outside parentheses; None when it does not close."""
    work.pop()  # '('
    args: list[list[Tok]] = [[]]
    depth = 0
    while work:
        t = work.pop()
        if t.text == "(":
            depth += 1
        elif t.text == ")":
            if depth == 0:
                return args
            depth -= 1
        elif t.text == "," and depth == 0:
            args.append([])
            continue
        args[-1].append(t)
    return None


def _substitute(m: Macro, args: Mapping[str, list[Tok]], hide: frozenset[str],
                macros: Mapping[str, Macro]) -> list[Tok]:
    """Macro ``m``'s body with its parameters replaced by ``args`` (expanded first, unless
    next to ``##`` or ``#``), its ``##`` pasted; every token made hides ``hide``."""
    body = m.body
    out: list[Tok] = []
    i = 0
    while i < len(body):
        # a run a ## b ## c: pasted into one token, spelled as the body writes it
        j = i
        while j + 2 < len(body) and body[j + 1].text == "##":
            j += 2
        if j > i:
            pasted: list[Tok] = []
            for k in range(i, j + 1, 2):
                operand = body[k]  # a parameter's argument as given, not expanded
                piece = [Tok(a.text, a.start, a.end)
                         for a in args.get(operand.text, [operand])]
                if pasted and piece:
                    left = pasted.pop()
                    piece[0] = Tok(left.text + piece[0].text, body[i].start, body[j].end)
                pasted.extend(piece)
            out.extend(Tok(p.text, p.start, p.end, hide) for p in pasted)
            i = j + 1
            continue
        t = body[i]
        if t.text == "#" and m.params is not None and i + 1 < len(body) \
                and body[i + 1].text in args:
            out.append(Tok('""', t.start, body[i + 1].end, hide))  # a string: its text unread
            i += 2
            continue
        if t.text in args:
            out.extend(Tok(a.text, a.start, a.end, a.hide | hide)
                       for a in expand(list(args[t.text]), macros))
        else:
            out.append(Tok(t.text, t.start, t.end, hide))
        i += 1
    return out
