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
    [\s\\]+
  | (?P<id>[A-Za-z_]\w*)
  | (?P<num>\.?\d(?:[eEpP][+-]|[\w.'])*)
  | (?P<str>"[^"\n]*"|'[^'\n]*')
  | (?P<punct>\#\#|::|->|\.\.\.|<<|>>|<=|>=|==|!=|&&|\|\||[^\s\w])
""", re.X)
"""A token, or a run of white space and line splices (matched whole, to be passed by: looking
for a token at each of its characters cost a cold check a millisecond a kernel file)."""


def lex(code: str, start: int, end: int) -> list[Tok]:
    """The tokens of ``code[start:end]`` (a line splice is white space)."""
    return [Tok(t, m.start(), m.end()) for m in _TOKEN.finditer(code, start, end)
            if not ((t := m[0])[0].isspace() or t[0] == "\\")]


def identifier(t: Tok) -> bool:
    """Is ``t`` a word (a name or a keyword), not a number, a literal or punctuation?"""
    return t.text[0].isalpha() or t.text[0] == "_"


class Gaveup(Exception):
    """A file the scan cannot read soundly (why: its message)."""
