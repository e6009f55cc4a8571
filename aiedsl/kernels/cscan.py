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
  ``AIE_API_NATIVE``: :func:`library_macro`), cannot be decided, and each way it can go is read
  (:data:`MAX_READINGS` at most);
- braces are tracked: a function is one at the top level of an ``extern "C"`` block (through
  namespaces, whose functions keep C linkage), not a ``static`` helper (no external symbol), a
  template (C++ linkage only), a variable (``int table(3);``), a ``typedef``, a class's member
  or anything in a function's body.

Where it cannot know (a macro it does not see defined invoked where a declaration goes, a
quoted ``#include``, too many readings, unbalanced braces), :attr:`CScan.complete` is False and
nothing is refused on its word: the host compile (``kernel test``, ``sim --kernels native``) and
Peano say it instead.

Example
-------
>>> scan = extern_c('#define F(t) void zero_##t(t *c) {}\\nextern "C" { F(int) }\\n')
>>> [(f.name, f.spelled, f.line, f.sure) for f in scan.functions], scan.complete
([('zero_int', 'zero_##t', 1, True)], True)
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Mapping

from aiedsl.lang.names import reserved_macro

MAX_READINGS = 32
"""Readings of a file (one per way its undecidable ``#if`` conditions can go) before the scan
gives up and says it cannot know."""

PRESET = {"NDEBUG": "1", "__AIE_API_AIE_ADF_HPP__": "1"}
"""Macros every kernel compile defines (Peano's and the host's command lines)."""


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
    superset, see :func:`_declared`)."""

    def find(self, name: str) -> CFunction | None:
        """The ``extern "C"`` function called ``name``, if the file makes one."""
        return next((f for f in self.functions if f.name == name), None)


# -- blanking ---------------------------------------------------------------------------------

def blank(source: str, strings: bool = True) -> str:
    """``source`` with its comments blanked, and (``strings``) its string and character
    literals' insides too (raw strings included), the same length: offsets and line numbers
    stay. ``extern "C"`` keeps its ``"C"``. A comment becomes spaces (a block comment's line
    breaks too: a directive goes on past it, as after the preprocessor's one space); a
    literal's line breaks (a raw string's) become spaces, so nothing in it starts a directive.
    """
    out = list(source)
    n = len(source)
    i = 0

    def wipe(a: int, b: int) -> None:
        for j in range(a, b):
            out[j] = " "

    while i < n:
        c = source[i]
        if c == "/" and source.startswith("//", i):
            j = i
            while True:  # to the line's end, a line ending in a backslash going on
                j = source.find("\n", j)
                if j < 0:
                    j = n
                    break
                if j > 0 and source[j - 1] == "\\":
                    j += 1
                    continue
                break
            wipe(i, j)
            i = j
        elif c == "/" and source.startswith("/*", i):
            j = source.find("*/", i + 2)
            j = n if j < 0 else j + 2
            wipe(i, j)
            i = j
        elif c.isdigit() or (c == "." and source[i + 1:i + 2].isdigit()):
            # a number, its digit separators (1'000) included
            j = i + 1
            while j < n and (source[j].isalnum() or source[j] in "_.'"
                             or (source[j] in "+-" and source[j - 1] in "eEpP")):
                j += 1
            i = j
        elif c.isalpha() or c == "_":
            j = i + 1
            while j < n and (source[j].isalnum() or source[j] == "_"):
                j += 1
            word = source[i:j]
            if source[j:j + 1] == '"' and word in ("R", "LR", "uR", "UR", "u8R"):
                paren = source.find("(", j)  # R"delim( ... )delim"
                delim = source[j + 1:paren] if paren >= 0 else ""
                end = source.find(f"){delim}\"", paren + 1) if paren >= 0 else -1
                end = n if end < 0 else end + len(delim) + 2
                if strings:
                    wipe(j + 1, end - 1)
                i = end
            else:  # a literal's prefix (L"...", u8'x') is read with the literal next
                i = j
        elif c in "\"'":
            j = i + 1
            while j < n and source[j] != c and source[j] != "\n":
                j += 2 if source[j] == "\\" else 1
            j = min(j, n - 1) if j < n else n - 1
            keep = c == '"' and source[i + 1:j] in ("C", "C++") and \
                re.search(r"\bextern\s*$", source[max(0, i - 40):i]) is not None
            if strings and not keep:
                wipe(i + 1, j)
            i = j + 1
        else:
            i += 1
    return "".join(out)


# -- tokens -------------------------------------------------------------------------------------

class Tok:
    """A preprocessing token: its text, where its spelling is in the source (``start``,
    ``end``), and the macros not to expand in it again (the preprocessor's hide set)."""

    __slots__ = ("text", "start", "end", "hide")

    def __init__(self, text: str, start: int, end: int,
                 hide: frozenset[str] = frozenset()) -> None:
        self.text, self.start, self.end, self.hide = text, start, end, hide

    def __repr__(self) -> str:
        return f"Tok({self.text!r})"


_TOKEN = re.compile(r"""
    (?P<id>[A-Za-z_]\w*)
  | (?P<num>\.?\d(?:[eEpP][+-]|[\w.'])*)
  | (?P<str>"[^"\n]*"|'[^'\n]*')
  | (?P<punct>\#\#|::|->|\.\.\.|<<|>>|<=|>=|==|!=|&&|\|\||[^\s\w])
""", re.X)


def _lex(code: str, start: int, end: int) -> list[Tok]:
    """The tokens of ``code[start:end]`` (a line splice is white space)."""
    return [Tok(m[0], m.start(), m.end()) for m in _TOKEN.finditer(code, start, end)
            if m[0] != "\\"]


def _identifier(t: Tok) -> bool:
    return t.text[0].isalpha() or t.text[0] == "_"


# -- the preprocessor -------------------------------------------------------------------------

@dataclass(frozen=True)
class _Macro:
    params: tuple[str, ...] | None
    """None for an object-like macro."""
    variadic: bool
    body: tuple[Tok, ...]


@dataclass
class _Reading:
    """One reading of a file: its tokens after preprocessing, and the undecidable conditions it
    took one way (True: the branch taken) in order."""

    tokens: list[Tok]
    decisions: list[bool]
    unsure: str = ""


class _Gaveup(Exception):
    """A file the scan cannot read soundly (why: its message)."""


_DIRECTIVE = re.compile(r"[ \t]*#[ \t]*(\w*)")


_Line = tuple[int, int, str | None, list[Tok]]


def _lines(code: str) -> list[_Line]:
    """The logical lines of blanked ``code``: (start, end, directive name or None, tokens).

    Each line is lexed here once: every reading of the file shares its tokens (a token is never
    changed once made), where lexing per reading cost most of a cold check's time."""
    out = []
    start = 0
    n = len(code)
    while start <= n:
        end = start
        while True:
            end = code.find("\n", end)
            if end < 0:
                end = n
                break
            if end > 0 and code[end - 1] == "\\":
                end += 1
                continue
            break
        m = _DIRECTIVE.match(code, start, end)
        out.append((start, end, m[1] if m else None, _lex(code, start, end)))
        start = end + 1
    return out


def _read(source: str, code: str, lines: list[_Line],
          defines: Mapping[str, str], choices: list[bool]) -> _Reading:
    """Preprocess ``code`` (``source`` blanked) once, the first undecidable conditions going as
    ``choices`` say and the later ones taken (True)."""
    macros: dict[str, _Macro] = {}
    for name, text in {**PRESET, **defines}.items():
        macros[name] = _Macro(None, False, tuple(_lex(text, 0, len(text))))
    decisions: list[bool] = []
    # per open #if: (the enclosing region is read, a branch was taken, this branch is read)
    frames: list[list[bool]] = []
    reading = _Reading([], decisions)
    tokens = reading.tokens
    active = True

    def decide(value: int | None) -> bool:
        if value is not None:
            return bool(value)
        k = len(decisions)
        decisions.append(choices[k] if k < len(choices) else True)
        return decisions[-1]

    for start, end, directive, lexed in lines:
        if directive is None:
            if active:
                tokens.extend(lexed)
            continue
        words = lexed[2:] if directive else []  # after '#' and the name
        if directive in ("if", "ifdef", "ifndef"):
            if not active:
                frames.append([False, True, False])
                continue
            if directive == "if":
                value = _evaluate(words, macros)
            else:
                value = _defined(words[0].text, macros) if words else None
                if directive == "ifndef" and value is not None:
                    value = 1 - value
            taken = decide(value)
            frames.append([True, taken, taken])
        elif directive in ("elif", "elifdef", "elifndef", "else"):
            if not frames:
                raise _Gaveup("an #" + directive + " without #if")
            frame = frames[-1]
            if not frame[0] or frame[1]:
                frame[2] = False
            elif directive == "else":
                frame[1] = frame[2] = True
            else:
                if directive == "elif":
                    value = _evaluate(words, macros)
                else:
                    value = _defined(words[0].text, macros) if words else None
                    if directive == "elifndef" and value is not None:
                        value = 1 - value
                taken = decide(value)
                frame[1] = frame[2] = taken
        elif directive == "endif":
            if not frames:
                raise _Gaveup("an #endif without #if")
            frames.pop()
        elif not active:
            pass
        elif directive == "define":
            _define(code, start, end, macros)
        elif directive == "undef":
            if words:
                macros.pop(words[0].text, None)
        elif directive == "include":
            if re.search(r"include\s*<", source[start:end]):
                macros[_HEADERS] = _NO_BODY
            quoted = re.search(r'"[^"\n]*"', source[start:end])
            if quoted and not reading.unsure:
                reading.unsure = f"it includes {quoted[0]}, which is not read"
        active = all(f[2] for f in frames)
    if frames:
        raise _Gaveup("an #if without #endif")
    reading.tokens = _expand(tokens, macros)
    return reading


def _define(code: str, start: int, end: int, macros: dict[str, _Macro]) -> None:
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
    macros[m[1]] = _Macro(params, variadic, tuple(_lex(code, at, end)))


def _defined(name: str, macros: Mapping[str, _Macro]) -> int | None:
    """Is macro ``name`` defined: 1, 0, or None for a name the compiler may predefine or, once
    a ``<header>`` is included, one the headers may define (:func:`library_macro`)."""
    if name in macros:
        return 1
    return None if _unknowable(name, macros) else 0


def _unknowable(name: str, macros: Mapping[str, _Macro]) -> bool:
    return reserved_macro(name) or (_HEADERS in macros and library_macro(name))


_HEADERS = "#include <>"
"""The key in a reading's macros that says a ``<header>`` has been included (no macro can be
called that)."""
_NO_BODY = _Macro(None, False, ())

_LIBRARY = re.compile(r"""
    (?:U?INT(?:8|16|32|64|MAX|PTR)?|U?INT_(?:LEAST|FAST)(?:8|16|32|64)|SIZE|PTRDIFF|SIG_ATOMIC
       |WCHAR|WINT|S?CHAR|UCHAR|U?SHRT|U?LONG|U?LLONG|MB_LEN)_(?:MAX|MIN|WIDTH)
  | U?INT(?:8|16|32|64|MAX)_C | CHAR_BIT | (?:FLT|DBL|LDBL)_\w+ | FLT_EVAL_METHOD | DECIMAL_DIG
  | (?:PRI|SCN)[diouxX]\w* | EOF | BUFSIZ | FILENAME_MAX | FOPEN_MAX | TMP_MAX | L_tmpnam
  | SEEK_(?:SET|CUR|END) | EXIT_(?:SUCCESS|FAILURE) | RAND_MAX | MB_CUR_MAX | NULL
  | EDOM | ERANGE | EILSEQ | errno | M_\w+ | HUGE_VAL[FL]? | INFINITY | NAN | FP_\w+
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


def _expand(tokens: list[Tok], macros: Mapping[str, _Macro]) -> list[Tok]:
    """``tokens`` with their macros expanded and the results rescanned, as the preprocessor
    does (each expansion hides its macro from what it made)."""
    out: list[Tok] = []
    work = tokens[::-1]  # a stack: the next token last
    while work:
        t = work.pop()
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
        if args is None:
            raise _Gaveup(f"the arguments of {t.text}(...) do not close")
        if m.params == () and args == [[]]:
            args = []
        count = len(m.params)
        fits = len(args) >= count - 1 if m.variadic else len(args) == count
        if not fits:
            raise _Gaveup(f"{t.text}(...) is given {len(args)} argument(s) for {count}")
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


def _substitute(m: _Macro, args: Mapping[str, list[Tok]], hide: frozenset[str],
                macros: Mapping[str, _Macro]) -> list[Tok]:
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
                       for a in _expand(list(args[t.text]), macros))
        else:
            out.append(Tok(t.text, t.start, t.end, hide))
        i += 1
    return out


# -- #if expressions --------------------------------------------------------------------------

_BINARY = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, ">": 7,
           "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}


def _evaluate(words: list[Tok], macros: Mapping[str, _Macro]) -> int | None:
    """The value of an ``#if`` condition, or None when it cannot be known (a name the compiler
    may predefine, something this reader does not parse)."""
    resolved: list[Tok] = []
    i = 0
    while i < len(words):  # defined X, defined(X): before expansion
        t = words[i]
        if t.text == "defined":
            paren = i + 1 < len(words) and words[i + 1].text == "("
            k = i + 2 if paren else i + 1
            if k >= len(words):
                return None
            value = _defined(words[k].text, macros)
            # not known: a reserved name, which evaluates as not known either
            resolved.append(Tok("__unknown__" if value is None else str(value), t.start, t.end))
            i = k + (2 if paren else 1)
            continue
        resolved.append(t)
        i += 1
    try:
        expanded = _expand(resolved, macros)
    except _Gaveup:
        return None
    values: list[int | None | str] = []
    for t in expanded:
        if _identifier(t):
            values.append(1 if t.text == "true" else 0 if t.text == "false" else
                          None if _unknowable(t.text, macros) or t.text in macros else 0)
        elif t.text[0].isdigit():
            m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*)[uUlL]*", t.text)
            if m is None:
                return None
            text = m[1]
            values.append(int(text, 16) if text[:2] in ("0x", "0X")
                          else int(text, 8) if text.startswith("0") else int(text))
        else:
            values.append(t.text)
    try:
        value, at = _expression(values, 0)
    except (IndexError, ValueError, TypeError):
        return None
    return value if at == len(values) else None


def _expression(v: list[int | None | str], i: int) -> tuple[int | None, int]:
    """``cond ? a : b`` at ``v[i]``: its value and where it ends."""
    cond, i = _binary(v, i, 1)
    if i < len(v) and v[i] == "?":
        a, i = _expression(v, i + 1)
        if v[i] != ":":
            raise ValueError("no ':'")
        b, i = _expression(v, i + 1)
        return (None if cond is None else a if cond else b), i
    return cond, i


def _binary(v: list[int | None | str], i: int, least: int) -> tuple[int | None, int]:
    left, i = _unary(v, i)
    while i < len(v) and isinstance(v[i], str) and _BINARY.get(str(v[i]), 0) >= least:
        op = str(v[i])
        right, i = _binary(v, i + 1, _BINARY[op] + 1)
        left = _apply(op, left, right)
    return left, i


def _unary(v: list[int | None | str], i: int) -> tuple[int | None, int]:
    t = v[i]
    if t in ("!", "-", "+", "~"):
        x, i = _unary(v, i + 1)
        if x is None:
            return None, i
        return {"!": int(not x), "-": -x, "+": x, "~": ~x}[str(t)], i
    if t == "(":
        x, i = _expression(v, i + 1)
        if v[i] != ")":
            raise ValueError("no ')'")
        return x, i + 1
    if isinstance(t, str):
        raise ValueError(t)
    return t, i + 1


def _apply(op: str, a: int | None, b: int | None) -> int | None:
    """``a op b``, None when it cannot be known (``&&`` and ``||`` short-circuit)."""
    if op == "&&":
        return 0 if a == 0 or b == 0 else None if a is None or b is None else 1
    if op == "||":
        return 1 if (a not in (0, None)) or (b not in (0, None)) else \
            None if a is None or b is None else 0
    if a is None or b is None:
        return None
    if op in ("/", "%"):
        if b == 0:
            return None
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        return q if op == "/" else a - q * b
    return int({"|": a | b, "^": a ^ b, "&": a & b, "==": a == b, "!=": a != b, "<": a < b,
                ">": a > b, "<=": a <= b, ">=": a >= b, "<<": a << b if 0 <= b < 64 else 0,
                ">>": a >> b if 0 <= b < 64 else 0, "+": a + b, "-": a - b,
                "*": a * b}[op])


# -- declarations -----------------------------------------------------------------------------

_NOT_NAMES = frozenset("""
alignas alignof and asm auto bool break case catch char class const constexpr consteval
constinit continue decltype default defined delete do double else enum explicit extern false
float for friend goto if inline int long mutable namespace new noexcept not operator or private
protected public register return short signed sizeof static static_assert struct switch
template this throw true try typedef typename union unsigned using virtual void volatile while
__attribute__ __declspec _Pragma __asm__ __extension__ requires
""".split())
"""Words before a ``(`` that do not name a function being declared."""
_GROUPS = frozenset({"__attribute__", "__declspec", "alignas", "decltype", "noexcept", "throw",
                     "_Pragma", "asm", "__asm__", "requires"})
"""Words whose parenthesised group is skipped when looking for a declarator's ``(``."""
_AFTER = frozenset({"const", "volatile", "noexcept", "throw", "->", "__attribute__", "override",
                    "final", "&", "&&", "=", "try", "requires", "[", "__asm__", "asm"})
"""What may follow a function declarator's parameters."""


def _heads(tokens: list[Tok]) -> tuple[list[tuple[Tok, bool]], list[Tok], list[Tok]]:
    """The declarations in preprocessed ``tokens``: the ``extern "C"`` functions ((name,
    defined with a body)), and the invocations of macros not seen defined where a declaration
    goes (in C linkage, then in C++ linkage): what may hide a function."""
    functions: list[tuple[Tok, bool]] = []
    unknown_c: list[Tok] = []
    unknown_cpp: list[Tok] = []
    blocks: list[str] = []  # per open brace at the top level: "C", "C++" or "ns"
    statement: list[Tok] = []
    single: str | None = None  # extern "C" before one declaration
    n = len(tokens)
    i = 0

    def linkage() -> str:
        return single or next((b for b in reversed(blocks) if b != "ns"), "C++")

    def end(body: bool) -> None:
        nonlocal single
        head = _head(statement)
        if isinstance(head, Tok):
            if linkage() == "C":
                functions.append((head, body))
        elif head == "unknown":
            (unknown_c if linkage() == "C" else unknown_cpp).append(statement[0])
        statement.clear()
        single = None

    while i < n:
        t = tokens[i]
        text = t.text
        if text == "extern" and i + 1 < n and tokens[i + 1].text in ('"C"', '"C++"'):
            lang = tokens[i + 1].text.strip('"')
            if i + 2 < n and tokens[i + 2].text == "{":
                if statement:
                    end(False)
                blocks.append(lang)
                i += 3
            else:
                single = lang
                i += 2
            continue
        if text == "namespace" and all(s.text == "inline" for s in statement):
            k = i + 1
            while k < n and (_identifier(tokens[k]) or tokens[k].text == "::"):
                k += 1
            if k < n and tokens[k].text == "{":
                statement.clear()
                blocks.append("ns")
                i = k + 1
                continue
        if text == "{":
            head = _head(statement)
            k = _close(tokens, i)
            if k < 0:
                raise _Gaveup(f"the brace at offset {t.start} does not close")
            top = [x.text for x in statement]
            if isinstance(head, Tok) or head == "unknown" or ("(" in top and "=" not in top):
                end(True)  # a function's body (a static or template one's too) ends it
            else:  # a class's, an enum's or an initialiser's braces: the declaration goes on
                statement.append(Tok("{}", t.start, tokens[k].end))
            i = k + 1
            continue
        if text == "}":
            if statement:
                end(False)
            if not blocks:
                raise _Gaveup("a '}' closes nothing")
            blocks.pop()
            i += 1
            continue
        if text == ";":
            end(False)
        else:
            statement.append(t)
        i += 1
    if statement:
        end(False)
    if blocks:
        raise _Gaveup("an extern \"C\" block or namespace does not close")
    return functions, unknown_c, unknown_cpp


def _close(tokens: list[Tok], i: int) -> int:
    """Where the brace opened at ``tokens[i]`` closes; -1 if it does not."""
    depth = 0
    for k in range(i, len(tokens)):
        text = tokens[k].text
        if text == "{":
            depth += 1
        elif text == "}":
            depth -= 1
            if depth == 0:
                return k
    return -1


def _group_end(s: list[Tok], j: int) -> int:
    """Where the parenthesised group opening at ``s[j]`` ends (the index after its ``)``)."""
    depth = 0
    for k in range(j, len(s)):
        depth += (s[k].text == "(") - (s[k].text == ")")
        if depth == 0:
            return k + 1
    return len(s)


def _head(s: list[Tok]) -> Tok | str | None:
    """The name a declaration ``s`` (its tokens before ``;`` or ``{``) declares as a function
    with external linkage; ``"unknown"`` for ``NAME(...)`` with nothing before it (a macro
    this scan does not expand, which may make anything); None for anything else (a variable,
    a type, a ``static`` or template function)."""
    if not s or s[0].text in ("template", "typedef", "using", "friend", "static_assert"):
        return None
    j = 0
    while j < len(s):
        text = s[j].text
        if text == "static":
            return None
        if text in _GROUPS and j + 1 < len(s) and s[j + 1].text == "(":
            j = _group_end(s, j + 1)
            continue
        if text == "[" and j + 1 < len(s) and s[j + 1].text == "[":  # [[attribute]]
            while j < len(s) and not (s[j].text == "]" and s[j - 1].text == "]"):
                j += 1
            j += 1
            continue
        if text == "=":
            return None
        if text == "(":
            break
        j += 1
    if j >= len(s) or j == 0:
        return None
    name = s[j - 1]
    if not _identifier(name) or name.text in _NOT_NAMES:
        return None
    if j == 1:
        return "unknown"
    if s[j - 2].text in ("::", "~", "operator", ".", "->"):
        return None
    close = _group_end(s, j)
    inside = s[j + 1:close - 1]
    if inside and (inside[0].text[0].isdigit() or inside[0].text[0] in "\"'.-+!~"):
        return None  # int table(3): a variable
    if close < len(s) and s[close].text not in _AFTER:
        return None
    return name


_NOT_TYPES = frozenset({"return", "else", "case", "do", "throw", "new", "delete", "co_return",
                        "co_yield", "sizeof", "alignof", "decltype", "defined"})


def _declared(tokens: list[Tok]) -> set[str]:
    """The names ``tokens`` declare as functions, of any linkage, in any scope (templates,
    members): a name then ``(`` after a return type's last token (a word, ``>``, ``*`` or
    ``&``), a qualifier (``ns::``) between. A superset: what is not here is not declared."""
    out = set()
    for i in range(1, len(tokens) - 1):
        if tokens[i + 1].text != "(" or not _identifier(tokens[i]):
            continue
        k = i - 1
        while k >= 1 and tokens[k].text == "::" and _identifier(tokens[k - 1]):
            k -= 2
        before = tokens[k].text
        if before in (">", "*", "&", "&&", ">>") or (
                _identifier(tokens[k]) and before not in _NOT_TYPES):
            out.add(tokens[i].text)
    return out


# -- the scan ---------------------------------------------------------------------------------

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
    lines = _lines(code)
    readings: list[_Reading] = []
    pending: list[list[bool]] = [[]]
    unsure = ""
    try:
        while pending:
            if len(readings) == MAX_READINGS:
                raise _Gaveup(f"its #if conditions the scan cannot decide (on names the "
                              f"compiler may predefine) make more than {MAX_READINGS} "
                              "readings")
            choices = pending.pop()
            r = _read(source, code, lines, dict(defines), choices)
            readings.append(r)
            for k in range(len(r.decisions) - 1, len(choices) - 1, -1):
                if r.decisions[k]:
                    pending.append(r.decisions[:k] + [False])
        found: dict[str, list[tuple[Tok, bool]]] = {}
        declared: set[str] = set()
        unknown_c: list[Tok] = []
        unknown_cpp: list[Tok] = []
        for r in readings:
            functions, uc, ucpp = _heads(r.tokens)
            declared.update(_declared(r.tokens))
            unknown_c += uc
            unknown_cpp += ucpp
            seen: dict[str, tuple[Tok, bool]] = {}
            for tok, body in functions:
                if tok.text not in seen or (body and not seen[tok.text][1]):
                    seen[tok.text] = (tok, body)
            for name, item in seen.items():
                found.setdefault(name, []).append(item)
            unsure = unsure or r.unsure
    except _Gaveup as e:
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
    return CScan(tuple(out), not unsure, not entry_unsure, unsure, frozenset(declared))
