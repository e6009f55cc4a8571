"""Where in the user's design a construct was written: the line that made it (the first frame
outside aiedsl), the name it was assigned to, an argument as the user spelt it, the innermost
line of a traceback that is the user's, and a function's first, decorator and ``def`` lines.

Every message that cites a line of a design gets it here; :mod:`aiedsl.user_errors` turns a
user's own exception into a message at such a line.
"""

from __future__ import annotations

import linecache
import os
import re
import sys
import threading
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import Any

from aiedsl.errors import display_path
from aiedsl.ir.loc import Loc
from aiedsl.library_code import is_library, is_users


def source_lines(filename: str) -> list[str]:
    """The lines of ``filename`` as they are on disk now (each with its line end), read afresh:
    a design file replaced between loads in one process, even by one of the same size and time
    (``cp -p``, an unpacked archive), is read as it is, where linecache served its old lines.
    linecache's copy only for a source with no file (typed at a prompt)."""
    import tokenize

    try:  # as Python reads it: a BOM dropped, a coding cookie honoured
        with tokenize.open(filename) as f:
            return f.readlines()
    except (SyntaxError, UnicodeDecodeError):
        try:
            with open(filename, encoding="utf-8", errors="replace") as f:
                return f.readlines()
        except OSError:
            return []
    except OSError:
        return linecache.getlines(filename)


def caller_loc() -> Loc:
    """The first frame outside aiedsl itself: the line of the user's design that made a construct.

    Example::

        def fifo(...):
            loc = caller_loc()   # -> Loc(file="designs/passthrough.py", line=12)
    """
    frame = _user_frame()
    if frame is None:
        return Loc(file="<unknown>", line=0)
    return file_loc(frame.f_code.co_filename, frame.f_lineno)


def file_loc(filename: str, line: int) -> Loc:
    """Line ``line`` of the file Python names ``filename`` (a code object's ``co_filename``,
    relative to the working directory of now when relative): named as the user reads it
    (:func:`~aiedsl.errors.display_path`), and opened (:attr:`Loc.path`) where it is, so a
    process that changes directory later still reads this file, not another of that name.

    Where it is means its real path, symlinks resolved: the loader imports the modules beside a
    design from its resolved folder (:mod:`aiedsl.folder_imports`), so one beside a design
    reached through a symlink is named by its real path; the design file's own lines must be
    too, or the two would be in two folders (see :func:`~aiedsl.errors.stable_path`)."""
    loc = Loc(file=display_path(filename), line=line)
    return loc if filename.startswith("<") else loc.at_path(os.path.realpath(filename))


def _user_frame() -> FrameType | None:
    """The first frame outside aiedsl, Python's own modules and installed packages: numpy's
    ``np.max(buf)`` asks a traced buffer for an array two frames inside numpy, and the line is
    the design's call. Code typed at a prompt (``<stdin>``) is the user's."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if is_users(frame.f_code.co_filename):
            return frame
        frame = frame.f_back
    return None


_ASSIGNED = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]*)?=(?!=)")


def assigned_name(call: str) -> str | None:
    """The plain name on the left of the user's line that makes something by ``call(``:
    ``cin = channel(...)`` gives ``"cin"`` (and ``ins = [fifo(...) for ...]`` ``"ins"``); a line
    that assigns to anything else (an attribute, several names) or does not call ``call`` there
    (the middle line of a call spread over several) gives None. A construct the user did not
    name is then named as the user calls it, in messages and in the MLIR (Amaranth names its
    signals the same way). Of statements sharing the line, ``a = fifo(...); b = fifo(...)``,
    the one making the call (:func:`_statement_of_call`; the first on Python 3.10)."""
    frame = _user_frame()
    if frame is None:
        return None
    filename = frame.f_code.co_filename
    lines = source_lines(filename)
    line = lines[frame.f_lineno - 1] if frame.f_lineno <= len(lines) else ""
    if ";" in line:  # several statements may share the line: read the one making the call
        line = _statement_of_call(frame, line)
    m = _ASSIGNED.match(line)
    if m is None and _UNPACKED.match(line):
        return _unpacked_name(frame)
    return m[1] if m and f"{call}(" in line[m.end():] else None


_UNPACKED = re.compile(r"\s*[A-Za-z_]\w*\s*(?:,\s*[A-Za-z_]\w*\s*)+,?\s*=(?!=)")


def _unpacked_name(frame: FrameType) -> str | None:
    """Of ``fa, fb = fifo(...), fifo(...)``, the name the running call's value goes to: the
    target in the place of the value holding the call (``fb`` while the second runs); None
    when the column is not to be had (Python 3.10) or the statement is of another form."""
    import ast

    at = _call_position(frame)
    tree = _parsed(frame.f_code.co_filename) if at is not None else None
    if at is None or tree is None:
        return None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and node.lineno == frame.f_lineno
                and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple)
                and isinstance(node.value, ast.Tuple)
                and len(node.targets[0].elts) == len(node.value.elts)):
            continue
        for target, value in zip(node.targets[0].elts, node.value.elts):
            if isinstance(target, ast.Name) and (value.lineno, value.col_offset) <= at <= (
                    value.end_lineno or value.lineno, value.end_col_offset or 0):
                return target.id
    return None


def assigned_at(loc: Loc, call: str) -> str | None:
    """:func:`assigned_name` of the line ``loc`` points at, read when the call is long done:
    ``a1 = a.forward(...)`` at ``loc`` gives ``"a1"`` for ``call="forward"``."""
    lines = source_lines(loc.path)
    line = lines[loc.line - 1] if 0 < loc.line <= len(lines) else ""
    m = _ASSIGNED.match(line)
    return m[1] if m and ";" not in line and f"{call}(" in line[m.end():] else None


def _call_position(frame: FrameType) -> tuple[int, int] | None:
    """The line and column (a UTF-8 byte offset, as ``ast`` counts) where the call ``frame`` is
    running starts; None before Python 3.11, whose code objects keep no columns, or when they
    were left out (``-X no_debug_ranges``)."""
    positions = getattr(frame.f_code, "co_positions", None)
    if positions is None or frame.f_lasti < 0:
        return None
    import itertools

    # one position per 2-byte code unit; f_lasti is the running instruction's byte offset
    at = next(itertools.islice(positions(), frame.f_lasti // 2, None), None)
    if at is None or at[0] is None or at[2] is None:
        return None
    return at[0], at[2]


def _statement_of_call(frame: FrameType, line: str) -> str:
    """The text of the statement on ``line`` (the frame's line) that makes the call ``frame``
    is running, from its start to its end on that line: of ``a = fifo(...); b = fifo(...)``,
    the second when the second runs. ``line`` itself when the column or the file is not to be
    had (Python 3.10: every statement of the line is then read as the first)."""
    import ast

    at = _call_position(frame)
    tree = _parsed(frame.f_code.co_filename) if at is not None else None
    if at is None or tree is None:
        return line
    best: ast.stmt | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno == frame.f_lineno and \
                (node.lineno, node.col_offset) <= at <= (
                    node.end_lineno or node.lineno, node.end_col_offset or 0) and \
                (best is None or node.col_offset > best.col_offset):  # the innermost
            best = node
    if best is None:
        return line
    raw = line.encode()
    end = best.end_col_offset if best.end_lineno == best.lineno else None
    return raw[best.col_offset:end].decode(errors="replace")


_PARSING = threading.Lock()
"""Held around each ``ast.parse`` of aiedsl's: CPython 3.11 keeps the depth of the AST it
builds per interpreter, not per thread, and two threads parsing at once (designs loaded from a
thread pool, each fifo's name read off its line) failed one with "SystemError: AST
constructor recursion depth mismatch" (CI)."""


def parse_python(source: str, filename: str = "<unknown>", mode: str = "exec") -> Any:
    """``ast.parse(source, filename, mode)``, one thread at a time (:data:`_PARSING`)."""
    import ast

    with _PARSING:
        return ast.parse(source, filename, mode)


def _parsed(filename: str) -> Any:
    """The module ``filename`` holds, parsed (``ast.Module``), as it is on disk now; None when
    it cannot be read or parsed. Errors read it, and :func:`assigned_name` for a construct
    given no name on a line of several statements (rare enough to parse the file each time:
    nothing is cached)."""
    source = "".join(source_lines(filename))
    if not source:
        return None
    try:
        return parse_python(source, filename)
    except (SyntaxError, ValueError):
        return None


def written_argument(loc: Loc, callee: str, keyword: str) -> str | None:
    """The text of argument ``keyword=`` in the call of ``callee`` (a function or method name)
    at ``loc``'s line, as the user wrote it: ``"K_MT"`` for ``staged_inputs(..., k_run=K_MT)``;
    None when the line holds no such call, or the file cannot be read. A message then names
    the user's own knob instead of the library's parameter it went into."""
    import ast

    tree = _parsed(loc.path)
    if tree is None:
        return None
    best = None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not \
                node.lineno <= loc.line <= (node.end_lineno or node.lineno):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        value = next((k.value for k in node.keywords if k.arg == keyword), None)
        if name == callee and value is not None and (
                best is None or node.lineno >= best[0]):  # the innermost call on the line
            best = (node.lineno, ast.unparse(value))
    return None if best is None else best[1]


@dataclass(frozen=True)
class WrittenCall:
    """A call of the user's as written (:func:`written_call`)."""

    target: str | None
    """What the statement assigns the call's result to (``p2`` of ``p2 = l2.split(2)``,
    ``a, b`` of ``a, b = f.split(2)``); None when it assigns it to nothing, or to several."""
    receiver: str | None
    """What a method is called on (``l2`` of ``l2.split(2)``); None for a plain function."""
    args: tuple[str, ...]
    """The positional arguments (``("mid",)`` of ``join(mid)``)."""


def same_scope(a: Loc, b: Loc) -> bool:
    """Are lines ``a`` and ``b`` in one file and the same innermost function (or both at a
    module's top level)? A name written at one then means the same at the other: a fix that
    pastes the words of ``a``'s call at ``b`` (a join's argument, written in a helper, is not
    a name where its split is)."""
    import ast

    if a.path != b.path:
        return False
    tree = _parsed(a.path)
    if tree is None:
        return False

    def scope(line: int) -> ast.AST | None:
        best: ast.AST | None = None
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and \
                    node.lineno <= line <= (node.end_lineno or node.lineno) and (
                    best is None or node.lineno >= getattr(best, "lineno", 0)):
                best = node
        return best

    return scope(a.line) is scope(b.line)


def written_call(loc: Loc, callee: str) -> WrittenCall | None:
    """The call of ``callee`` (a function or method name) at ``loc``'s line as the user wrote
    it, the outermost when calls of that name nest (``join(mid, name="_".join(...))`` is the
    first's); None when the line holds none, or the file cannot be read. A fix then writes
    its replacement in the design's own words (``p2 = [m.forward() for m in mid]`` for
    ``l2 = join(mid); p2 = l2.split(2)``)."""
    import ast

    tree = _parsed(loc.path)
    if tree is None:
        return None
    best: ast.Call | None = None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not \
                node.lineno <= loc.line <= (node.end_lineno or node.lineno):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if name == callee and (best is None or (node.lineno, node.col_offset) < (
                best.lineno, best.col_offset)):
            best = node
    if best is None:
        return None
    target = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and node.value is best and len(node.targets) == 1:
            aim = node.targets[0]  # a, b = ... as written, not unparse's (a, b) = ...
            target = ", ".join(map(ast.unparse, aim.elts)) if isinstance(
                aim, ast.Tuple) else ast.unparse(aim)
        elif isinstance(node, ast.AnnAssign) and node.value is best:
            target = ast.unparse(node.target)
    receiver = ast.unparse(best.func.value) if isinstance(best.func, ast.Attribute) else None
    return WrittenCall(target, receiver, tuple(ast.unparse(a) for a in best.args))


def written_arguments(loc: Loc, count: int) -> list[str] | None:
    """The positional arguments, as the user wrote them, of the outermost call at ``loc``'s
    line that takes ``count`` of them and no ``*args`` (the statement's own call, not one in
    its arguments): ``["x", "b[0]", "o"]`` for ``k(x, b[0], o)``; None when the line holds no
    such call, or the file cannot be read."""
    import ast

    tree = _parsed(loc.path)
    if tree is None:
        return None
    for node in ast.walk(tree):  # breadth first: an enclosing call before those inside it
        if isinstance(node, ast.Call) and node.lineno <= loc.line <= (
                node.end_lineno or node.lineno) and len(node.args) == count and not any(
                isinstance(a, ast.Starred) for a in node.args):
            return [ast.unparse(a) for a in node.args]
    return None


def defined_below(filename: str, name: str, line: int) -> int | None:
    """The first line after ``line`` where the module ``filename`` binds ``name`` at its top
    level (a ``def``, ``class``, assignment or import); None when it binds it nowhere below."""
    import ast

    tree = _parsed(filename)
    if tree is None:
        return None
    for node in tree.body:
        if node.lineno <= line:
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = {node.name}
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = {(a.asname or a.name).split(".")[0] for a in node.names}
        else:
            continue
        if name in names:
            decorated = getattr(node, "decorator_list", None)
            return decorated[0].lineno if decorated else node.lineno
    return None

def exits_from_with(filename: str, line: int) -> list[int]:
    """The lines of the ``break`` and ``return`` statements that leave the ``with`` statement
    starting at ``line`` of ``filename`` (a ``break`` of a loop inside it excepted, and
    anything in a function defined inside it): Python gives the instructions that leave a
    ``with`` early the ``with``'s own line, so a frame there names it, not the statement."""
    import ast

    tree = _parsed(filename)
    if tree is None:
        return []
    found: list[int] = []

    def visit(node: ast.AST, in_loop: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return
        if isinstance(node, ast.Return) or (isinstance(node, ast.Break) and not in_loop):
            found.append(node.lineno)
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            for stmt in node.body:  # a break here ends that loop; its else is outside it
                visit(stmt, True)
            for stmt in node.orelse:
                visit(stmt, in_loop)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, in_loop)

    for node in ast.walk(tree):
        # (Python 3.13 gives a parenthesised with's exit its first item's line)
        if isinstance(node, (ast.With, ast.AsyncWith)) and line in (
                node.lineno, node.items[0].context_expr.lineno):
            for stmt in node.body:
                visit(stmt, False)
    return sorted(set(found))


def user_line(tb: TracebackType | None) -> Loc | None:
    """The innermost line of a traceback that is the user's code (not aiedsl, Python or a
    library it called): where a user's exception should be reported."""
    found = None
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if is_users(name):
            found = file_loc(name, tb.tb_lineno)
        tb = tb.tb_next
    return found

def function_loc(fn: object) -> Loc | None:
    """Where a user's Python function was defined (its first line, decorators included); None
    for functions without code or defined in a library (numpy's are not the user's lines)."""
    code = getattr(fn, "__code__", None)
    if code is None or is_library(code.co_filename):
        return None
    return file_loc(code.co_filename, code.co_firstlineno)


def decorator_loc(loc: Loc, fn: object, name: str) -> Loc:
    """The line of the ``@name`` decorator applied to ``fn``, where ``loc`` (the caller's line)
    is the function's ``def`` line, as Python 3.10 reports a decorator's call (3.11 on report
    the decorator's own line, which ``loc`` then already is)."""
    first = function_loc(fn)  # its first decorator's line
    if first is None or first.line >= loc.line:
        return loc
    lines = source_lines(fn.__code__.co_filename)  # type: ignore[attr-defined]
    for line in range(first.line, min(loc.line, len(lines) + 1)):  # the decorators in order
        if lines[line - 1].lstrip().startswith(f"@{name}"):
            return loc.model_copy(update={"line": line})
    return loc


def def_line(fn: object) -> Loc | None:
    """The line of ``fn``'s ``def`` (``async def``) itself, below its decorators: where what
    makes it a coroutine or a generator is written. Its first line (:func:`function_loc`) when
    the file cannot be read; None for a function that is not the user's."""
    import ast

    first = function_loc(fn)
    if first is None:
        return None
    tree = _parsed(getattr(fn, "__code__").co_filename)
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.name == getattr(fn, "__name__", None) and first.line == (
                    node.decorator_list[0].lineno if node.decorator_list else node.lineno):
            return first.model_copy(update={"line": node.lineno})
    return first
