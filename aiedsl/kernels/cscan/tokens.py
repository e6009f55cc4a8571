"""The C++ scan's preprocessing tokens: the token, the lexer that makes them from blanked text,
and the exception every later stage raises on text it cannot read soundly."""

from __future__ import annotations

import re


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


def lex(code: str, start: int, end: int) -> list[Tok]:
    """The tokens of ``code[start:end]`` (a line splice is white space)."""
    return [Tok(m[0], m.start(), m.end()) for m in _TOKEN.finditer(code, start, end)
            if m[0] != "\\"]


def identifier(t: Tok) -> bool:
    """Is ``t`` a word (a name or a keyword), not a number, a literal or punctuation?"""
    return t.text[0].isalpha() or t.text[0] == "_"


class Gaveup(Exception):
    """A file the scan cannot read soundly (why: its message)."""
