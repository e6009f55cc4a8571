"""The C++ scan's signatures: the parameters a reading declares a function with, each read as far
as a kernel's declaration can be held against it (a pointer or a value, its element type when it
is a plain C type, its name), and the function template's own parameters."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from aiedsl.kernels.cscan.declarations import return_type_end
from aiedsl.kernels.cscan.tokens import Tok, identifier

QUALIFIERS = frozenset({"const", "volatile", "restrict", "__restrict", "__restrict__",
                        "register", "struct", "typename"})
"""Words of a parameter that say nothing of its type's size."""

C_TYPES: dict[str, tuple[int, bool]] = {
    "int8_t": (1, False), "uint8_t": (1, False), "char": (1, False), "signed char": (1, False),
    "unsigned char": (1, False),
    "int16_t": (2, False), "uint16_t": (2, False), "short": (2, False),
    "short int": (2, False), "signed short": (2, False), "unsigned short": (2, False),
    "int32_t": (4, False), "uint32_t": (4, False), "int": (4, False), "signed": (4, False),
    "signed int": (4, False), "unsigned": (4, False), "unsigned int": (4, False),
    "int64_t": (8, False), "uint64_t": (8, False), "long long": (8, False),
    "unsigned long long": (8, False),
    "float": (4, True), "double": (8, True), "bfloat16": (2, True),
}
"""Plain C/C++ element types as (bytes, floating point) on the core (AIE's ``int`` is 32 bits);
``long``, whose size differs between the core and a host, is left out, so it is never judged."""


@dataclass(frozen=True)
class Param:
    """One parameter of a C/C++ function declaration."""

    text: str
    """As written, tokens joined by single spaces (``const int32_t * in``)."""
    name: str | None
    """Its name, when it has one."""
    pointer: bool
    """A pointer (or an array, which a parameter is too)."""
    base: str | None
    """Its (pointed-to) type when it is one of :data:`C_TYPES` or ``void``; None when it is
    another type (a typedef, a class, a template parameter), which is not judged."""
    reference: bool = False
    """A C++ reference (``int32_t &n``, ``const int32_t &n``, ``int32_t &&n``) and no pointer:
    the C ABI passes it as an address."""


@dataclass(frozen=True)
class Signature:
    """A declaration of a function: its parameters and, for a template, its own parameters."""

    params: tuple[Param, ...]
    variadic: bool
    """Ends in ``...``: it takes any number of arguments after its parameters."""
    defaults: int
    """How many of the last parameters have default arguments."""
    template: tuple[str, ...] | None
    """A function template's parameter names (None for a plain function)."""
    defaulted: tuple[str, ...]
    """The template parameters that have defaults."""
    line: int
    """Where its name is (1-based)."""
    types: tuple[str, ...] = ()
    """The template parameters that are types (``typename T``, ``class T``)."""

    def undeducible(self) -> list[str]:
        """The template parameters without defaults that no function parameter's type names:
        a call must give them (``f<1024>(...)``)."""
        used = {w for p in self.params for w in p.text.split()}
        return [t for t in self.template or () if t not in used and t not in self.defaulted]

    def key(self) -> tuple[object, ...]:
        """What tells two declarations apart (not where they are)."""
        return (self.params, self.variadic, self.defaults, self.template, self.defaulted,
                self.types)


def signatures(tokens: Sequence[Tok], name: str, source: str,
               texts: Sequence[str] | None = None,
               read: dict[tuple[str, ...], tuple[tuple[Param, ...], bool, int]] | None = None
               ) -> list[Signature]:
    """Every declaration or definition of a function ``name`` in a reading's ``tokens`` (a
    name then ``(`` after a return type, as
    :func:`~aiedsl.kernels.cscan.declarations.declared_names` finds them), in order.
    ``texts``: the tokens' texts, when the caller has them; ``read``: the parameters already
    read by the texts between a declarator's parentheses (shared by the readings of a file,
    which mostly declare a function alike)."""
    out = []
    n = len(tokens)
    texts = tuple(t.text for t in tokens) if texts is None else texts
    read = {} if read is None else read
    i = 0
    while True:
        try:  # the next place it is named (found in C: a kernel file has thousands of tokens)
            i = texts.index(name, i + 1, n - 1)
        except ValueError:
            break
        if texts[i + 1] != "(":
            continue
        k = return_type_end(tokens, i)
        if k < 0:
            continue
        close = _close_paren(tokens, i + 1)
        if close < 0:
            continue
        inside = tuple(texts[i + 2:close])
        if inside not in read:  # (the parameters are their texts' alone)
            read[inside] = _params(tokens[i + 2:close])
        params, variadic, defaults = read[inside]
        template, defaulted, types = _template(tokens, k)
        out.append(Signature(params, variadic, defaults, template, defaulted,
                             source.count("\n", 0, tokens[i].start) + 1, types))
    return out


def _close_paren(tokens: Sequence[Tok], i: int) -> int:
    depth = 0
    for k in range(i, len(tokens)):
        t = tokens[k].text
        if t == "(":
            depth += 1
        elif t == ")":
            depth -= 1
            if depth == 0:
                return k
        elif t in (";", "{", "}"):
            return -1
    return -1


def _params(inside: Sequence[Tok]) -> tuple[tuple[Param, ...], bool, int]:
    """The parameters between a declarator's parentheses, whether it ends in ``...``, and how
    many have defaults."""
    groups: list[list[Tok]] = [[]]
    depth = 0
    for t in inside:
        if t.text in ("(", "<", "[", "{"):
            depth += 1
        elif t.text in (")", ">", "]", "}"):
            depth -= 1
        elif t.text == ">>":
            depth -= 2
        if t.text == "," and depth == 0:
            groups.append([])
        else:
            groups[-1].append(t)
    if groups == [[]] or [t.text for t in groups[0]] == ["void"] and len(groups) == 1:
        return (), False, 0
    variadic = bool(groups[-1]) and groups[-1][-1].text == "..."
    if variadic:
        groups[-1] = groups[-1][:-1]
        if not groups[-1]:
            groups.pop()
    # a parameter pack (Ts *...bufs) takes any number of arguments too
    variadic = variadic or any(t.text == "..." for g in groups for t in g)
    defaults = 0
    params = []
    for g in groups:
        if any(t.text == "=" for t in g):
            defaults += 1
            g = g[:next(j for j, t in enumerate(g) if t.text == "=")]
        else:
            defaults = 0  # only trailing defaults count (earlier ones cannot be)
        params.append(_param(g))
    return tuple(params), variadic, defaults


_TYPE_WORDS = frozenset({"void", "bool", "char", "short", "int", "long", "signed", "unsigned",
                         "float", "double"})


def _spelled(g: list[Tok]) -> str:
    """Tokens as a declaration is usually written: ``const int32_t *in``, ``float c[16]``."""
    return spelled([t.text for t in g])


def spelled(words: Sequence[str]) -> str:
    """Token texts as a declaration is usually written: ``const int32_t *in``, ``float
    c[16]``."""
    text = " ".join(words)
    for pattern, by in ((r" ?\* ?", " *"), (r" ?(&&?) ?", r" \1"), (r" ?:: ?", "::"),
                        (r" ?\[ ?", "["),
                        (r" ?\] ?", "] "), (r" ?< ?", "<"), (r" ?> ?", "> "), (r" ?, ?", ", ")):
        text = re.sub(pattern, by, text)
    return text.replace("* *", "**").strip()


def _without_attributes(g: list[Tok]) -> list[Tok]:
    """``g`` without its ``[[attribute]]`` groups, which say nothing of the type."""
    out: list[Tok] = []
    j = 0
    while j < len(g):
        if g[j].text == "[" and j + 1 < len(g) and g[j + 1].text == "[":
            depth = 0
            while j < len(g):
                depth += (g[j].text == "[") - (g[j].text == "]")
                j += 1
                if depth == 0:
                    break
            continue
        out.append(g[j])
        j += 1
    return out


def _param(g: list[Tok]) -> Param:
    g = _without_attributes(g)
    text = _spelled(g)
    words: list[str] = []  # outside brackets, not qualifiers or attributes
    depth = 0  # (), [] and a template's <>
    after_star = -1
    pointer = False
    reference = False
    for t in g:
        if t.text in ("[", "(", "<"):
            if t.text == "[" and depth == 0:
                pointer = True  # an array parameter is a pointer
            depth += 1
        elif t.text in ("]", ")", ">"):
            depth -= 1
        elif t.text == ">>":
            depth -= 2
        elif depth == 0 and identifier(t) and t.text not in QUALIFIERS and (
                not t.text.startswith("__")):
            words.append(t.text)
        elif depth == 0 and t.text in ("*", "&", "&&"):
            after_star = len(words)
            pointer = pointer or t.text == "*"
            reference = reference or t.text in ("&", "&&")
    name = None
    if len(words) >= 2 and words[-1] not in _TYPE_WORDS and len(words) - 1 >= after_star:
        name = words.pop()
    # a qualified type (std::int32_t) is its last part; a class template's (aie::vector<...>)
    # is its name, which is no C type
    base = words[-1] if any(t.text == "::" for t in g) and words else " ".join(words)
    return Param(text, name, pointer, base if base in C_TYPES or base == "void" else None,
                 reference and not pointer)


def _template(tokens: Sequence[Tok], k: int
              ) -> tuple[tuple[str, ...] | None, tuple[str, ...], tuple[str, ...]]:
    """The template parameter names of the declaration whose return type ends at
    ``tokens[k]`` (None when it is not a template), those with defaults, and those that are
    types."""
    j = k
    depth = 0
    while j >= 0:
        t = tokens[j].text
        if t in (";", "{", "}") and depth == 0:
            break
        if t == ">":
            depth += 1
        elif t == ">>":
            depth += 2
        elif t == "<":
            depth -= 1
        j -= 1
    head = tokens[j + 1:k + 1]
    if not head or head[0].text != "template":
        return None, (), ()
    names = []
    defaulted = []
    types = []
    depth = 0
    default = False  # in a parameter's default (after its '='), up to the next ','
    before = ""  # the token before the one looked at
    for a, b in zip(head[1:], head[2:]):
        if a.text in ("<", "("):
            depth += 1
        elif a.text in (">", ")"):
            depth -= 1
        elif a.text == ">>":
            depth -= 2
        elif depth == 1 and a.text == ",":
            default = False
        elif depth == 1 and a.text == "=":
            default = True
        if depth == 1 and not default and identifier(a) and (
                b.text in (",", ">", "=", ">>")) and a.text not in ("typename", "class"):
            names.append(a.text)
            if b.text == "=":
                defaulted.append(a.text)
            # a type parameter's name comes right after typename or class (or a pack's ...);
            # typename T::value_type S names a value of that type
            if before in ("typename", "class", "..."):
                types.append(a.text)
        before = a.text
        if depth <= 0:
            break
    return tuple(names), tuple(defaulted), tuple(types)
