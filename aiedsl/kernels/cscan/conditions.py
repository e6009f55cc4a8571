"""The C++ scan's ``#if`` conditions: their value with the macros a reading has, or None where
it cannot be known (a name the compiler may predefine, something this reader does not parse)."""

from __future__ import annotations

import re
from typing import Mapping

from aiedsl.kernels.cscan.macros import Macro, defined, expand, unknowable
from aiedsl.kernels.cscan.tokens import Gaveup, Tok, identifier

_BINARY = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, ">": 7,
           "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}


def evaluate(words: list[Tok], macros: Mapping[str, Macro]) -> int | None:
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
            value = defined(words[k].text, macros)
            # not known: a reserved name, which evaluates as not known either
            resolved.append(Tok("__unknown__" if value is None else str(value), t.start, t.end))
            i = k + (2 if paren else 1)
            continue
        resolved.append(t)
        i += 1
    try:
        expanded = expand(resolved, macros)
    except Gaveup:
        return None
    values: list[int | None | str] = []
    for t in expanded:
        if identifier(t):
            values.append(1 if t.text == "true" else 0 if t.text == "false" else
                          None if unknowable(t.text, macros) or t.text in macros else 0)
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
