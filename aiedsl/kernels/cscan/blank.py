"""Blanking a C++ source: its comments, and its string and character literals' insides, made
spaces, offsets and line numbers kept, so that no text in them is taken for code
(``'{'`` opens no block, ``R"(void f();)"`` declares nothing)."""

from __future__ import annotations

import re


def blank(source: str, strings: bool = True) -> str:
    """``source`` with its comments blanked, and (``strings``) its string and character
    literals' insides too (raw strings included), the same length: offsets and line numbers
    stay. ``extern "C"`` keeps its ``"C"``. A comment becomes spaces (a block comment's line
    breaks too: a directive goes on past it, as after the preprocessor's one space); a
    literal's line breaks (a raw string's) become spaces, so nothing in it starts a directive.
    """
    if source.isascii():
        return _blank_ascii(source, strings)
    return _blank_chars(source, strings)


_EVENT = re.compile(r"""//|/\*|\.[0-9]|(?<!\w)[0-9]|(?<!\w)(?:u8R|LR|uR|UR|R)"|["']""", re.ASCII)
"""Where the reading of ASCII text stops: a comment, a number (a digit that starts no word, or a
point before one), a raw string literal, a quote. A word is passed by whole like every other
character: nothing in it starts anything (a digit inside one starts no number)."""
_NUMBER_REST = re.compile(r"(?:[\w.']|(?<=[eEpP])[+-])*", re.ASCII)
"""A number after its first character: its digits, letters, points and digit separators
(``1'000``), and a sign after an exponent's letter."""
_LITERAL_REST = {q: re.compile(rf"(?:[^\\\n{q}]|\\[\s\S])*") for q in "\"'"}
"""A literal's inside after its opening quote: up to its closing quote or the line's end,
a backslash taking the character after it whatever it is."""


def _blank_ascii(source: str, strings: bool) -> str:
    """:func:`_blank_chars` for ASCII text, read by regular expressions from one thing that
    can start a comment or a literal to the next: the same reading (a C++ file of ASCII text
    costs a cold check a millisecond less)."""
    n = len(source)
    wiped: list[tuple[int, int]] = []
    m = _EVENT.search(source)
    while m is not None:
        i = m.start()
        c = source[i]
        if c == "/" and source[i + 1] == "/":
            j = line_end(source, i)
            wiped.append((i, j))
        elif c == "/":
            j = source.find("*/", i + 2)
            j = n if j < 0 else j + 2
            wiped.append((i, j))
        elif c in "0123456789.":
            j = _match_end(_NUMBER_REST, source, i + 1)
        elif c in "\"'":
            j = min(_match_end(_LITERAL_REST[c], source, i + 1), n - 1)
            keep = c == '"' and source[i + 1:j] in ("C", "C++") and \
                re.search(r"\bextern\s*$", source[max(0, i - 40):i]) is not None
            if strings and not keep:
                wiped.append((i + 1, j))
            j += 1
        else:  # a raw string literal: its prefix, then its quote
            quote = m.end() - 1
            j = _raw_end(source, quote)
            if strings:
                wiped.append((quote + 1, j - 1))
        m = _EVENT.search(source, j)
    out = []
    at = 0
    for a, b in wiped:
        if a < b:
            out += [source[at:a], " " * (b - a)]
            at = b
    out.append(source[at:])
    return "".join(out)


def _match_end(pattern: re.Pattern[str], text: str, at: int) -> int:
    """Where ``pattern`` (which may match nothing) stops matching ``text`` from ``at``."""
    m = pattern.match(text, at)
    return at if m is None else m.end()


_RAW = ("R", "LR", "uR", "UR", "u8R")
"""The prefixes of a raw string literal."""


def _raw_end(source: str, j: int) -> int:
    """Where the raw string literal whose opening quote is at ``j`` ends (past its closing
    quote, or the text's end): ``R"delim( ... )delim"``."""
    n = len(source)
    paren = source.find("(", j)
    delim = source[j + 1:paren] if paren >= 0 else ""
    end = source.find(f"){delim}\"", paren + 1) if paren >= 0 else -1
    return n if end < 0 else end + len(delim) + 2


def _blank_chars(source: str, strings: bool) -> str:
    """:func:`blank`, a character at a time (with Python's own classes of letters and digits,
    for text that is not all ASCII)."""
    out = list(source)
    n = len(source)
    i = 0

    def wipe(a: int, b: int) -> None:
        for j in range(a, b):
            out[j] = " "

    while i < n:
        c = source[i]
        if c == "/" and source.startswith("//", i):
            j = line_end(source, i)
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
            if source[j:j + 1] == '"' and word in _RAW:
                end = _raw_end(source, j)
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


def line_end(text: str, start: int) -> int:
    r"""Where the logical line holding ``text[start]`` ends (its newline, or the text's end): a
    line ending in a backslash goes on to the next.

    >>> line_end("a \\\nb\nc", 0)
    5
    """
    end = start
    while True:
        end = text.find("\n", end)
        if end < 0:
            return len(text)
        if end > 0 and text[end - 1] == "\\":
            end += 1
            continue
        return end
