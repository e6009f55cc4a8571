"""The C++ scan's declarations: in a reading's preprocessed tokens, the ``extern "C"`` functions
defined or declared (braces tracked through ``extern "C"`` blocks and namespaces), the macro
invocations that may hide one, and every name declared as a function of any linkage."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from aiedsl.kernels.cscan.tokens import Gaveup, Tok, identifier

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


@dataclass(frozen=True)
class Defined:
    """A function a reading defines with external linkage: the symbol its object exports."""

    name: Tok
    linkage: str
    """``"C"`` or ``"C++"``."""
    namespace: str
    """The named namespaces around it, ``a::b`` (``""`` at the top level)."""
    head: tuple[Tok, ...]
    """Its declaration's tokens before the body (where its parameters are read)."""


_NOT_EXPORTED = frozenset({"inline", "constexpr", "consteval", "weak", "__weak__"})
"""Words of a definition that keep two objects defining it from clashing at the link: an
inline function (``constexpr`` and ``consteval`` ones are) is merged by the linker, a weak one
gives way to another."""


def heads(tokens: list[Tok], texts: list[str] | None = None
          ) -> tuple[list[tuple[Tok, bool]], list[Tok], list[Tok], list[Tok], list[Defined]]:
    """The declarations in preprocessed ``tokens`` (``texts``: their texts, when the caller
    has them): the ``extern "C"`` functions ((name, defined with a body)), the invocations of
    macros not seen defined where a declaration goes (in C linkage, then in C++ linkage): what
    may hide a function; the plain (not ``static``, not template) functions declared with
    C++ linkage; and the functions of either linkage defined with a symbol another object may
    define too (not ``static``, ``inline``, a template or in an unnamed namespace)."""
    texts = [t.text for t in tokens] if texts is None else texts
    functions: list[tuple[Tok, bool]] = []
    cpp: list[Tok] = []
    defined: list[Defined] = []
    unknown_c: list[Tok] = []
    unknown_cpp: list[Tok] = []
    # per open brace at the top level: "C", "C++" or "ns:<name>" ("ns:" for an unnamed one)
    blocks: list[str] = []
    statement: list[Tok] = []
    single: str | None = None  # extern "C" before one declaration
    n = len(tokens)
    i = 0

    def linkage() -> str:
        return single or next((b for b in reversed(blocks) if not b.startswith("ns:")), "C++")

    def end(body: bool) -> None:
        nonlocal single
        head = _head(statement)
        if isinstance(head, Tok):
            if linkage() == "C":
                functions.append((head, body))
            else:
                cpp.append(head)
            if body and "ns:" not in blocks and not any(
                    x.text in _NOT_EXPORTED for x in statement):
                defined.append(Defined(head, linkage(), "::".join(
                    b[3:] for b in blocks if b.startswith("ns:")), tuple(statement)))
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
            while k < n and (identifier(tokens[k]) or tokens[k].text == "::"):
                k += 1
            if k < n and tokens[k].text == "{":
                statement.clear()
                blocks.append("ns:" + "".join(x.text for x in tokens[i + 1:k]))
                i = k + 1
                continue
        if text == "{":
            head = _head(statement)
            k = _close(texts, i)
            if k < 0:
                raise Gaveup(f"the brace at offset {t.start} does not close")
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
                raise Gaveup("a '}' closes nothing")
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
        raise Gaveup("an extern \"C\" block or namespace does not close")
    return functions, unknown_c, unknown_cpp, cpp, defined


def _close(texts: list[str], i: int) -> int:
    """Where the brace opened at ``texts[i]`` closes; -1 if it does not. (The braces are
    looked for, not every token of a function's body walked: most of a file is bodies.)"""
    depth = 0
    n = len(texts)
    opening = i
    closing = _find(texts, "}", i)
    while closing < n:
        if opening < closing:
            depth += 1
            opening = _find(texts, "{", opening + 1)
        else:
            depth -= 1
            if depth == 0:
                return closing
            closing = _find(texts, "}", closing + 1)
    return -1


def _find(texts: list[str], text: str, start: int) -> int:
    """Where ``text`` is first among ``texts`` from ``start`` on; their length if nowhere."""
    try:
        return texts.index(text, start)
    except ValueError:
        return len(texts)


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
    if not identifier(name) or name.text in _NOT_NAMES:
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


def declared_names(tokens: list[Tok], texts: list[str] | None = None) -> set[str]:
    """The names ``tokens`` declare as functions, of any linkage, in any scope (templates,
    members): a name then ``(`` after a return type's last token (a word, ``>``, ``*`` or
    ``&``), a qualifier (``ns::``) between. A superset: what is not here is not declared.
    ``texts``: the tokens' texts, when the caller has them."""
    out = set()
    texts = [t.text for t in tokens] if texts is None else texts
    n = len(tokens)
    j = _find(texts, "(", 2)  # a name's next token, from the name at 1 on (not the last)
    while j < n:
        i = j - 1
        if identifier(tokens[i]) and return_type_end(tokens, i) >= 0:
            out.add(texts[i])
        j = _find(texts, "(", j + 1)
    return out


def return_type_end(tokens: Sequence[Tok], i: int) -> int:
    """Where the return type before the name ``tokens[i]`` ends (its last token: a word,
    ``>``, ``*`` or ``&``; a qualifier ``ns::`` skipped), or -1 when what comes before the
    name is no type (``return``, ``=``, ``(``): the name is called there, not declared."""
    k = i - 1
    while k >= 1 and tokens[k].text == "::" and identifier(tokens[k - 1]):
        k -= 2
    before = tokens[k].text
    if before in (">", "*", "&", "&&", ">>") or (
            identifier(tokens[k]) and before not in _NOT_TYPES):
        return k
    return -1
