"""The C++ scan's preprocessor: one reading of a file, its directives followed (``#if`` decided
with the kernel's ``defines=``, or as a reading's choices say where it cannot be), its macros
expanded. A reading that goes another way at an undecidable condition starts where the one before
it stood there (:class:`State`), not at the file's start: up to there both read alike."""

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
    error: tuple[int, str] | None = None
    """The first ``#error`` the reading reaches: its line (1-based) and its text."""
    macros: frozenset[str] = frozenset()
    """The macros defined at its end (``defines=`` and the compiles' own among them): what
    rewrites a name in the C++ aiedsl writes after the file."""
    object_macros: frozenset[str] = frozenset()
    """Those of :attr:`macros` that are object-like: what rewrites a name not followed by
    ``(`` (an argument's, in the generated function)."""


_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(\w*)", re.M)
"""A directive's start and name, at a physical line's start (a logical line's, unless a splice
joins it to the line before)."""


Line = tuple[int, int, str | None, list[Tok]]
"""A directive's logical line, or a run of lines without one: (start, end, the directive's name
or None, tokens)."""


def logical_lines(code: str) -> list[Line]:
    """The logical lines of blanked ``code`` that hold a directive, and the runs of lines
    between them (a reading takes or leaves a run whole): (start, end, directive name or None,
    tokens); runs without a token left out.

    Each is lexed here once: every reading of the file shares its tokens (a token is never
    changed once made), where lexing per reading cost most of a cold check's time; a run is
    lexed whole (no token goes past a line's end)."""
    out: list[Line] = []
    at = 0  # where the lines not yet taken start
    for m in _DIRECTIVE.finditer(code):
        start = m.start()
        if start < at or (start >= 2 and code[start - 2] == "\\"):
            continue  # not a logical line's start: a splice joins it to the line before
        _run(code, at, start - 1, out)
        end = line_end(code, start)
        out.append((start, end, m[1], lex(code, start, end)))
        at = end + 1
    _run(code, at, len(code), out)
    return out


def _run(code: str, start: int, end: int, out: list[Line]) -> None:
    """Add the run of lines without a directive ``code[start:end]`` to ``out``, if it holds a
    token."""
    tokens = lex(code, start, end) if start < end else []
    if tokens:
        out.append((start, end, None, tokens))


def places(lines: list[Line]) -> list[dict[str, list[int]]]:
    """Per line of :func:`logical_lines`: where each word is among a run's tokens (nothing for
    a directive), what a reading's expansion looks up its macros' names in (a run holds
    hundreds of tokens, a reading a few macros)."""
    out = []
    for _, _, directive, tokens in lines:
        where: dict[str, list[int]] = {}
        if directive is None:
            for i, t in enumerate(tokens):
                where.setdefault(t.text, []).append(i)
        out.append(where)
    return out


@dataclass
class State:
    """Where a reading stands before one of the file's lines: what a reading that went the same
    way up to there starts from (its tokens and runs read so far are the first ``ntokens`` and
    ``nruns`` of the lists, which the reading that made them goes on adding to)."""

    line: int
    """The line (of :func:`logical_lines`) it stands before."""
    macros: dict[str, Macro]
    frames: list[list[bool]]
    tokens: list[Tok]
    ntokens: int
    runs: list[tuple[int, dict[str, list[int]]]]
    nruns: int
    decisions: list[bool]
    unsure: str


def initial(defines: Mapping[str, str]) -> State:
    """Where every reading of a file compiled with ``defines`` starts: its first line, the
    macros every compile defines and ``defines``."""
    macros = {name: Macro(None, False, tuple(lex(text, 0, len(text))))
              for name, text in {**PRESET, **defines}.items()}
    return State(0, macros, [], [], 0, [], 0, [], "")


def read(source: str, code: str, lines: list[Line], wheres: list[dict[str, list[int]]],
         at: State, choices: list[bool], forks: list[State]) -> Reading:
    """Preprocess ``code`` (``source`` blanked; ``lines`` and their :func:`places`) once from
    ``at`` (taken over: it is not used again), the first undecidable conditions going as
    ``choices`` say and the later ones taken (True); where it takes one so, what it stood on
    before it is added to ``forks``, for the reading that goes the other way from there (reading
    the file up to there again would give the same)."""
    macros = at.macros
    decisions = at.decisions
    # per open #if: (the enclosing region is read, a branch was taken, this branch is read)
    frames = at.frames
    reading = Reading(at.tokens[:at.ntokens], decisions, at.unsure)
    tokens = reading.tokens
    runs = at.runs[:at.nruns]  # where each run read starts among `tokens`, and its words
    active = all(f[2] for f in frames)
    here = at.line

    def decide(value: int | None) -> bool:
        if value is not None:
            return bool(value)
        k = len(decisions)
        if k >= len(choices):  # (nothing is changed yet on the line deciding)
            forks.append(State(here, dict(macros), [f[:] for f in frames], tokens, len(tokens),
                               runs, len(runs), decisions[:], reading.unsure))
        decisions.append(choices[k] if k < len(choices) else True)
        return decisions[-1]

    for here in range(at.line, len(lines)):
        start, end, directive, lexed = lines[here]
        if directive is None:
            if active:
                runs.append((len(tokens), wheres[here]))
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
        elif directive == "error":
            if reading.error is None:  # the first the compile reports (it goes on after it)
                text = source[start:end].split("error", 1)[1].strip()
                reading.error = (source.count("\n", 0, start) + 1, " ".join(text.split()))
        elif directive == "include":
            # a header, <...> or "aie_api/..." (the one quoted form a kernel file may take),
            # may define what later conditions test
            if re.search(r'include\s*(?:<|"aie_api/)', source[start:end]):
                macros[HEADERS] = NO_BODY
            quoted = re.search(r'"[^"\n]*"', source[start:end])
            if quoted and not reading.unsure:
                reading.unsure = f"it includes {quoted[0]}, which is not read"
        active = all(f[2] for f in frames)
    if frames:
        raise Gaveup("an #if without #endif")
    named = sorted(first + i for first, where in runs for name in macros
                   for i in where.get(name, ()))
    reading.tokens = expand(tokens, macros, named)
    reading.macros = frozenset(name for name in macros if name != HEADERS)
    reading.object_macros = frozenset(name for name in reading.macros
                                      if macros[name].params is None)
    return reading
