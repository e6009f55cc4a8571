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
