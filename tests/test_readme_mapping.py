"""README's "Coming from IRON, MLIR-AIR or Riallto" tables: every call written in aiedsl's column
is a name aiedsl has, with keywords its signature takes, and every command one the CLI has."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path
from typing import Any, Callable

import aiedsl
import aiedsl.kernels
from aiedsl.api import Artifacts
from aiedsl.cli.commands import app
from aiedsl.cli.kernel import kernel_app
from aiedsl.lang.fifo import ObjectFifo
from aiedsl.lang.rtp import BarrierRef
from aiedsl.lang.runtime import RuntimeBuilder

README = Path(__file__).resolve().parents[1] / "README.md"
HEADING = "## Coming from IRON, MLIR-AIR or Riallto"
PROSE = {"scf.for", "scf.for`, never unrolled"}
"""Spans of the column that are words about code, not code."""
RECEIVERS: dict[str, type] = {"f": ObjectFifo, "rt": RuntimeBuilder, "go": BarrierRef,
                              "c": ObjectFifo}
"""What the README's short names stand for (``c[x, y]`` is one fifo of a channel)."""


def _aiedsl_cells() -> list[str]:
    section = README.read_text().split(HEADING, 1)[1].split("\n## ", 1)[0]
    cells = []
    for line in section.splitlines():
        if not line.startswith("| ") or line.startswith("|---"):
            continue
        parts = line.split(" | ")
        assert len(parts) == 2, f"a row of two cells, no ' | ' inside one: {line}"
        cell = parts[1].rstrip(" |")
        if cell != "aiedsl":
            cells.append(cell)
    return cells


def _spans() -> list[str]:
    return [s for cell in _aiedsl_cells() for s in re.findall(r"`([^`]+)`", cell)]


def _parse(span: str) -> ast.AST | None:
    code = span.lstrip("@").rstrip(":")
    for text in (code, code + ":\n    pass"):
        try:
            return ast.parse(text)
        except SyntaxError:
            continue
    return None


def _resolve(func: ast.expr) -> Callable[..., Any]:
    if isinstance(func, ast.Name):
        for namespace in (aiedsl, aiedsl.kernels):
            if func.id in getattr(namespace, "__all__", ()):
                return getattr(namespace, func.id)
        raise AssertionError(f"aiedsl has no {func.id}()")
    assert isinstance(func, ast.Attribute), ast.dump(func)
    owner = func.value
    if isinstance(owner, ast.Subscript):
        owner = owner.value
    if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and \
            owner.func.id == "build":
        cls: type = Artifacts
    else:
        assert isinstance(owner, ast.Name) and owner.id in RECEIVERS, ast.dump(func)
        cls = RECEIVERS[owner.id]
    assert hasattr(cls, func.attr), f"{cls.__name__} has no {func.attr}()"
    return getattr(cls, func.attr)


def _commands() -> set[str]:
    """``aiedsl``'s commands as a user types them (``kernel test`` for a group's)."""
    names = {c.name or (c.callback.__name__ if c.callback else "") for c in
             app.registered_commands}
    return names | {f"kernel {c.name}" for c in kernel_app.registered_commands}


def test_the_tables_are_there() -> None:
    assert len(_aiedsl_cells()) >= 18 and len(_spans()) >= 40


def test_every_call_in_aiedsls_column_exists_with_its_keywords() -> None:
    calls = 0
    for span in _spans():
        if span.startswith("aiedsl ") or span in PROSE:
            continue
        tree = _parse(span)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            fn = _resolve(node.func)
            calls += 1
            sig = inspect.signature(fn)
            params = sig.parameters
            if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
                for kw in node.keywords:
                    assert kw.arg in params, f"{span}: {getattr(fn, '__qualname__', fn)} " \
                                             f"takes no {kw.arg}="
            if any(isinstance(a, ast.Constant) and a.value is Ellipsis for a in node.args):
                continue  # "...": the other arguments are left out on purpose
            method = isinstance(node.func, ast.Attribute)
            try:  # every required argument is written
                sig.bind(*[None] * (len(node.args) + method),
                         **{kw.arg: None for kw in node.keywords if kw.arg})
            except TypeError as e:
                raise AssertionError(f"{span}: {e}") from None
    assert calls >= 25


def test_every_command_in_aiedsls_column_exists() -> None:
    commands = _commands()
    named = [s.split() for s in _spans() if s.startswith("aiedsl ")]
    assert named and all(w[1] in commands or " ".join(w[1:3]) in commands for w in named), named


def test_every_span_is_code_or_a_command() -> None:
    odd = [s for s in _spans() if not s.startswith("aiedsl ") and s not in PROSE
           and _parse(s) is None]
    assert odd == []
