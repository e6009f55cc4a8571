"""The C++ scan's preprocessor: one reading of a file, its directives followed (``#if`` decided
with the kernel's ``defines=``, or as a reading's choices say where it cannot be), its macros
expanded."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from aiedsl.kernels.cscan.blank import line_end
from aiedsl.kernels.cscan.conditions import evaluate
from aiedsl.kernels.cscan.macros import HEADERS, NO_BODY, PRESET, Macro, define, defined, expand
from aiedsl.kernels.cscan.tokens import Gaveup, Tok, lex


@dataclass
class Reading:
    """One reading of a file: its tokens after preprocessing, and the undecidable conditions it
    took one way (True: the branch taken) in order."""

    tokens: list[Tok]
    decisions: list[bool]
    unsure: str = ""


_DIRECTIVE = re.compile(r"[ \t]*#[ \t]*(\w*)")


Line = tuple[int, int, str | None, list[Tok]]


def logical_lines(code: str) -> list[Line]:
    """The logical lines of blanked ``code``: (start, end, directive name or None, tokens).

    Each line is lexed here once: every reading of the file shares its tokens (a token is never
    changed once made), where lexing per reading cost most of a cold check's time."""
    out = []
    start = 0
    n = len(code)
    while start <= n:
        end = line_end(code, start)
        m = _DIRECTIVE.match(code, start, end)
        out.append((start, end, m[1] if m else None, lex(code, start, end)))
        start = end + 1
    return out


def read(source: str, code: str, lines: list[Line],
         defines: Mapping[str, str], choices: list[bool]) -> Reading:
    """Preprocess ``code`` (``source`` blanked) once, the first undecidable conditions going as
    ``choices`` say and the later ones taken (True)."""
    macros: dict[str, Macro] = {}
    for name, text in {**PRESET, **defines}.items():
        macros[name] = Macro(None, False, tuple(lex(text, 0, len(text))))
    decisions: list[bool] = []
    # per open #if: (the enclosing region is read, a branch was taken, this branch is read)
    frames: list[list[bool]] = []
    reading = Reading([], decisions)
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
                value = evaluate(words, macros)
            else:
                value = defined(words[0].text, macros) if words else None
                if directive == "ifndef" and value is not None:
                    value = 1 - value
            taken = decide(value)
            frames.append([True, taken, taken])
        elif directive in ("elif", "elifdef", "elifndef", "else"):
            if not frames:
                raise Gaveup("an #" + directive + " without #if")
            frame = frames[-1]
            if not frame[0] or frame[1]:
                frame[2] = False
            elif directive == "else":
                frame[1] = frame[2] = True
            else:
                if directive == "elif":
                    value = evaluate(words, macros)
                else:
                    value = defined(words[0].text, macros) if words else None
                    if directive == "elifndef" and value is not None:
                        value = 1 - value
                taken = decide(value)
                frame[1] = frame[2] = taken
        elif directive == "endif":
            if not frames:
                raise Gaveup("an #endif without #if")
            frames.pop()
        elif not active:
            pass
        elif directive == "define":
            define(code, start, end, macros)
        elif directive == "undef":
            if words:
                macros.pop(words[0].text, None)
        elif directive == "include":
            if re.search(r"include\s*<", source[start:end]):
                macros[HEADERS] = NO_BODY
            quoted = re.search(r'"[^"\n]*"', source[start:end])
            if quoted and not reading.unsure:
                reading.unsure = f"it includes {quoted[0]}, which is not read"
        active = all(f[2] for f in frames)
    if frames:
        raise Gaveup("an #if without #endif")
    reading.tokens = expand(tokens, macros)
    return reading
