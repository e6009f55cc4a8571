"""User-facing errors and the source locations they cite.

Every mistake a user can make in a design is a :class:`DesignError`. It names the design file and
line of the construct, the rule broken, the limit, the value found, and how to fix it, so the CLI
can print it as is, with no traceback.
"""

from __future__ import annotations

import functools
import linecache
import os
import re
import sys
import sysconfig
from collections.abc import Mapping
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, NamedTuple

from aiedsl.ir.loc import Loc

_PACKAGE_DIR = str(Path(__file__).resolve().parent)


def printable(value: object) -> str:
    r"""``value`` as one line of a message: control characters (a line break in a path would
    split the message, or forge a line of it) written as Python escapes.

    >>> printable("new\nline/o")
    'new\\nline/o'
    """
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(value))


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is one: the count of a message.

    >>> counted(1, "buffer"), counted(3, "buffer")
    ('1 buffer', '3 buffers')
    """
    return f"{n} {noun}" + ("" if n == 1 else "s")


def display_path(filename: str) -> str:
    """Return ``filename`` as a user reads it: relative to the working directory when below it."""
    try:
        rel = os.path.relpath(filename)
    except ValueError:  # another drive on Windows
        return filename
    return filename if rel.startswith("..") else rel


def stable_path(filename: str, home: str) -> str:
    """``filename`` as generated files record it, the same whatever the working directory and
    wherever the design, aiedsl and its environment live: relative to ``home`` (the design
    file's folder), or, for a file of aiedsl or of an installed package, relative to the
    folder packages are installed in (``aiedsl/kernels/base.py``). ``<unknown>`` stays."""
    if filename.startswith("<"):
        return filename
    path, home = os.path.abspath(filename), os.path.abspath(home)
    base = home
    if not path.startswith(home + os.sep):
        if path.startswith(_PACKAGE_DIR + os.sep):
            base = os.path.dirname(_PACKAGE_DIR)
        else:  # the innermost: site-packages may sit inside the standard library's folder
            inside = [d.rstrip(os.sep) for d in _library_dirs() if path.startswith(d)]
            base = max(inside, key=len, default=home)
    try:
        return Path(os.path.relpath(path, base)).as_posix()
    except ValueError:  # another drive on Windows
        return filename


def caller_loc() -> Loc:
    """The first frame outside aiedsl itself: the line of the user's design that made a construct.

    Example::

        def fifo(...):
            loc = caller_loc()   # -> Loc(file="designs/passthrough.py", line=12)
    """
    frame = _user_frame()
    if frame is None:
        return Loc(file="<unknown>", line=0)
    return Loc(file=display_path(frame.f_code.co_filename), line=frame.f_lineno)


def _user_frame() -> FrameType | None:
    """The first frame outside aiedsl (and contextlib, and Python's frozen modules)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(_PACKAGE_DIR + os.sep) and not name.endswith("contextlib.py"):
            if not name.startswith("<frozen"):
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
    signals the same way)."""
    frame = _user_frame()
    if frame is None:
        return None
    import linecache

    filename = frame.f_code.co_filename
    # linecache serves a file's text as first read: a design file edited and loaded again in
    # the same process would be named after its old lines (the loader runs the new ones)
    linecache.checkcache(filename)
    line = linecache.getline(filename, frame.f_lineno)
    m = _ASSIGNED.match(line)
    return m[1] if m and f"{call}(" in line[m.end():] else None


def _parsed(filename: str) -> Any:
    """The module ``filename`` holds, parsed (``ast.Module``), as it is on disk now; None when
    it cannot be read or parsed. Only errors read it: nothing is cached beyond linecache."""
    import ast
    import linecache

    linecache.checkcache(filename)  # a design edited and loaded again: its new text
    source = "".join(linecache.getlines(filename))
    if not source:
        return None
    try:
        return ast.parse(source, filename)
    except (SyntaxError, ValueError):
        return None


def written_argument(loc: Loc, callee: str, keyword: str) -> str | None:
    """The text of argument ``keyword=`` in the call of ``callee`` (a function or method name)
    at ``loc``'s line, as the user wrote it: ``"K_MT"`` for ``staged_inputs(..., k_run=K_MT)``;
    None when the line holds no such call, or the file cannot be read. A message then names
    the user's own knob instead of the library's parameter it went into."""
    import ast

    tree = _parsed(loc.file)
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


def _is_library(filename: str) -> bool:
    """Is ``filename`` part of aiedsl, Python itself or an installed package (not the user's)?
    Code without a file (``<string>``, ``<frozen ...>``) is never the user's line either."""
    if filename.startswith("<"):
        return True
    filename = os.path.abspath(filename)
    return filename.startswith(_PACKAGE_DIR + os.sep) or filename.startswith(_library_dirs())


@functools.lru_cache(maxsize=1)
def _library_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple({paths[k] + os.sep for k in ("stdlib", "platstdlib", "purelib", "platlib")})


def user_line(tb: TracebackType | None) -> Loc | None:
    """The innermost line of a traceback that is the user's code (not aiedsl, Python or a
    library it called): where a user's exception should be reported."""
    found = None
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not _is_library(name):
            found = Loc(file=display_path(name), line=tb.tb_lineno)
        tb = tb.tb_next
    return found


def raised_by_user(e: BaseException) -> bool:
    """Does ``e``, raised while aiedsl ran a user's function, stand for a mistake in it? All but
    an interrupt (Ctrl-C ends aiedsl as it always does), a generator's close, and aiedsl's own
    DesignError (already in the design's terms). ``sys.exit`` counts: it would end aiedsl
    silently, with any exit code, 0 included."""
    return not isinstance(e, (KeyboardInterrupt, GeneratorExit, DesignError))


def user_exception(e: BaseException, what: str, fallback: Loc | None = None) -> "DesignError":
    """A DesignError for exception ``e`` raised by user code while aiedsl ran ``what``, at the
    user's line (``AIEDSL_TRACEBACK=1`` shows the whole traceback)."""
    if isinstance(e, SystemExit):
        code = "" if e.code is None else repr(e.code)
        return DesignError(
            "python error", f"sys.exit({code}) called while {what}",
            loc=user_line(e.__traceback__) or fallback,
            fix="return from the function instead: sys.exit would end aiedsl itself")
    detail = str(e)
    fix = "fix the code at this line; AIEDSL_TRACEBACK=1 shows the whole traceback"
    keyword = re.search(r"([\w.]+)\(\) got an unexpected keyword argument '(\w+)'", detail)
    if isinstance(e, TypeError) and keyword and keyword[2] in FOREIGN_KEYWORDS:
        callees, hint = FOREIGN_KEYWORDS[keyword[2]]
        if keyword[1].rsplit(".", 1)[-1] in callees:  # aiedsl's call, not one of the user's
            fix = hint + "; AIEDSL_TRACEBACK=1 shows the whole traceback"
    frames = _user_frames(e.__traceback__)
    if isinstance(e, NameError):
        fix = _defined_below_fix(e, frames) or fix
    return DesignError(
        "python error", f"{type(e).__name__}{': ' + detail if detail else ''} (while {what})",
        loc=user_line(e.__traceback__) or fallback, fix=fix, related=_call_chain(frames))


class _Frame(NamedTuple):
    """One line of the user's code in a traceback (see :func:`_user_frames`)."""

    loc: Loc
    function: str
    """Its code's name: ``core``, ``<module>``, ``<lambda>``."""
    file: str
    """Its file as Python names it (the one to read, whatever the working directory)."""
    direct: bool
    """Called by the user frame before it, with no frame of aiedsl or a library between."""
    via_design: bool
    """Run by ``@design`` (its decorator in aiedsl.lang.design is between it and the frame
    before)."""


def _user_frames(tb: TracebackType | None) -> list[_Frame]:
    """The lines of the user's code in traceback ``tb``, outermost first (what
    :func:`user_line` takes the last of)."""
    out: list[_Frame] = []
    previous_user, design_between = False, False
    while tb is not None:
        code = tb.tb_frame.f_code
        if _is_library(code.co_filename):
            previous_user = False
            design_between |= code.co_filename == _DESIGN_FILE and code.co_name == "decorate"
        else:
            out.append(_Frame(Loc(file=display_path(code.co_filename), line=tb.tb_lineno),
                              code.co_name, code.co_filename, previous_user and bool(out),
                              design_between))
            previous_user, design_between = True, False
        tb = tb.tb_next
    return out


_DESIGN_FILE = os.path.join(_PACKAGE_DIR, "lang", "design.py")
"""The module of ``@design``'s decorator, whose ``decorate`` runs the design function."""

_UNNAMED = {"<module>": "the module", "<lambda>": "a lambda", "<listcomp>": "a list "
            "comprehension", "<dictcomp>": "a dict comprehension", "<setcomp>": "a set "
            "comprehension", "<genexpr>": "a generator expression"}
MAX_CHAIN = 10
"""Most call-chain lines an error shows: the outermost ones and the innermost, a count of the
ones left out between (a recursion would list a thousand)."""


def _called(function: str) -> str:
    """A function of the chain as a message names it: ``core()``, ``the module``."""
    return _UNNAMED.get(function, f"{function}()")


def _call_chain(frames: list[_Frame]) -> list[tuple[str, Loc]]:
    """The user's lines that led to the innermost one, outermost first, each labelled with the
    call it made (``core() calls outer()``; ``the module: @design runs pt()`` and ``pt():
    aiedsl runs core()`` where aiedsl ran it): only when one of the user's functions called
    another itself (a helper). Without one, the error's own line is in the function aiedsl ran,
    which its line and message place. A recursion's repeated lines are one entry with their
    count; a long chain keeps its ends."""
    if not any(f.direct for f in frames):
        return []
    chain: list[tuple[str, Loc, int]] = []
    for f, callee in zip(frames, frames[1:]):
        runs = "calls" if callee.direct else "@design runs" if callee.via_design else \
            "aiedsl runs"
        label = f"{_called(f.function)}{' ' if callee.direct else ': '}{runs} " \
            f"{_called(callee.function)}"
        if chain and chain[-1][0] == label and chain[-1][1] == f.loc:
            chain[-1] = (label, f.loc, chain[-1][2] + 1)
        else:
            chain.append((label, f.loc, 1))
    shown = [(label + (f" ({n} times)" if n > 1 else ""), loc) for label, loc, n in chain]
    if len(shown) > MAX_CHAIN:
        head, tail = MAX_CHAIN // 2, MAX_CHAIN - MAX_CHAIN // 2
        left = len(shown) - head - tail
        first = shown[-tail]
        shown = shown[:head] + [(f"({left} calls between left out) {first[0]}", first[1])] + \
            shown[len(shown) - tail + 1:]
    return shown


def _defined_below(e: NameError, frames: list[_Frame]) -> tuple[int, int] | None:
    """For a name the design function (or a function it ran) did not find: the line of
    ``@design`` that ran it and the line below it that defines the name, when the design
    file's top level does."""
    name = getattr(e, "name", None)
    top = next((f for f in frames if f.function == "<module>"), None)
    if not isinstance(name, str) or top is None or frames[-1] is top or not any(
            f.via_design for f in frames[frames.index(top) + 1:]):
        return None
    below = defined_below(top.file, name, top.loc.line)
    return None if below is None else (top.loc.line, below)


def _defined_below_fix(e: NameError, frames: list[_Frame]) -> str | None:
    """The fix of a NameError for a name the design file defines below its ``@design``."""
    found = _defined_below(e, frames)
    if found is None:
        return None
    at, below = found
    return (f"move '{e.name}' above line {at} (it is defined at line {below}): @design runs "
            "the function where it is decorated, so the names it uses must be defined above it")


_PATTERNED = ("fill", "drain", "channel", "fifo", "forward")
FOREIGN_KEYWORDS: dict[str, tuple[tuple[str, ...], str]] = {
    "broadcast_shape": (("channel",), "MLIR-AIR's broadcast_shape=[1, n] is broadcast=n on an "
                        "aiedsl channel (each consuming core uses the one index c[i])"),
    "sizes": (("herd", *_PATTERNED), "MLIR-AIR's herd sizes=[c, r] is @herd(cols=c, rows=r); a "
              "transfer's sizes go in its pattern: rt.fill(f, t, (offset, sizes, strides))"),
    "offsets": (_PATTERNED, "a transfer's offset is one linear element offset in its pattern: "
                "rt.fill(f, t, (offset, sizes, strides)), or tiles(t, (th, tw)) for a whole "
                "tiling"),
    "strides": (_PATTERNED, "a transfer's strides go in its pattern: rt.fill(f, t, (offset, "
                "sizes, strides)); a fifo's or channel's layout is dims_to_stream=[(size, "
                "stride), ...]"),
    "indices": (("channel", "consume", "produce"), "a channel's index goes in brackets: "
                "c[x, y].consume()"),
}
"""Keywords of MLIR-AIR and IRON calls that aiedsl spells otherwise: the aiedsl calls a porter
writes them on, and how aiedsl spells them (the README's "Coming from" tables). The fix of the
TypeError a design gets for writing one on those calls; a function of the user's own with the
same keyword keeps the plain fix."""


def function_loc(fn: object) -> Loc | None:
    """Where a user's Python function was defined (its first line, decorators included); None
    for functions without code or defined in a library (numpy's are not the user's lines)."""
    code = getattr(fn, "__code__", None)
    if code is None or _is_library(code.co_filename):
        return None
    return Loc(file=display_path(code.co_filename), line=code.co_firstlineno)


def decorator_loc(loc: Loc, fn: object, name: str) -> Loc:
    """The line of the ``@name`` decorator applied to ``fn``, where ``loc`` (the caller's line)
    is the function's ``def`` line, as Python 3.10 reports a decorator's call (3.11 on report
    the decorator's own line, which ``loc`` then already is)."""
    first = function_loc(fn)  # its first decorator's line
    if first is None or first.line >= loc.line:
        return loc
    filename = fn.__code__.co_filename  # type: ignore[attr-defined]
    for line in range(first.line, loc.line):  # the decorators, first to last
        if linecache.getline(filename, line).lstrip().startswith(f"@{name}"):
            return loc.model_copy(update={"line": line})
    return loc


def check_callable(fn: object, nargs: int, what: str, loc: Loc | None, *,
                   keywords: Mapping[str, object] | None = None) -> None:
    """``fn`` is a function that can be called with ``nargs`` positional arguments (and
    ``keywords``); else a DesignError at its ``def`` line (or ``loc``) saying what it takes."""
    import inspect

    if not callable(fn):
        raise DesignError("reference", f"{what} is {type(fn).__name__} {fn!r}, not a function",
                          loc=loc, fix="give a function (def or lambda) that computes it")
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a signature: trust it
        return
    try:
        sig.bind(*range(nargs), **(keywords or {}))
    except TypeError as e:
        extra = f" and the keywords {', '.join(keywords)}" if keywords else ""
        raise DesignError(
            "reference", f"{what} cannot be called with {nargs} argument(s){extra}: {e}",
            loc=function_loc(fn) or loc, limit=f"{nargs} positional argument(s){extra}",
            found=f"{getattr(fn, '__name__', 'it')}{sig}",
            fix=f"make it take {nargs} argument(s)" + (" (and **params)" if keywords else "")
        ) from None


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
            return Loc(file=first.file, line=node.lineno)
    return first


def check_traced(fn: object, what: str, decorator: str, rule: str, loc: Loc | None) -> None:
    """``fn``, a function aiedsl traces by calling it once (a design's, a core's), runs its body
    when called; else a DesignError at its ``def``. Called, an ``async def`` only makes a
    coroutine (Python then warns, from inside aiedsl, that it was never awaited) and a function
    with ``yield`` only makes a generator: either way nothing of its body is traced, and the
    design would go on without it."""
    import inspect

    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        kind, how, word = "an async def", "an async def only makes a coroutine, which nothing " \
            "awaits", "async"
    elif inspect.isgeneratorfunction(fn):
        kind, how = "a generator (a yield in its body)", "a function with yield only makes a " \
            "generator, which nothing iterates"
        word = "yield"
    else:
        return
    name = getattr(fn, "__name__", "it")
    raise DesignError(
        rule, f"{what} '{name}' is {kind}", loc=def_line(fn) or loc,
        limit=f"{decorator} traces the function by calling it: called, {how}, and none of its "
        "body would run",
        found=f"async def {name}(...)" if word == "async" else f"yield in {name}()",
        fix=f"write a plain def {name}(...)" + (" without async: aiedsl calls it and nothing "
                                                "awaits it" if word == "async" else
                                                " without yield: its body records the "
                                                "program as it runs, and returns nothing"))


class DesignError(Exception):
    """A mistake in a design, reported in the design's own terms.

    Parameters
    ----------
    rule:
        Short name of the rule broken, e.g. ``"L1 memory"``.
    message:
        One sentence saying what is wrong, naming the objects involved.
    loc:
        Where the offending construct was written.
    limit, found:
        The limit and the value found, when the rule is a limit.
    fix:
        How to fix it.
    related:
        Other lines involved (e.g. every fifo sharing an exhausted tile), each with a short label.

    Example
    -------
    >>> from aiedsl.ir.loc import Loc
    >>> e = DesignError("fifo depth", "fifo 'a' has depth 0", loc=Loc(file="d.py", line=3),
    ...                 limit="depth >= 1", found="0", fix="give depth=1 or more")
    >>> print(e)
    d.py:3: error [fifo depth]: fifo 'a' has depth 0
      limit: depth >= 1
      found: 0
      fix: give depth=1 or more
    """

    def __init__(
        self,
        rule: str,
        message: str,
        *,
        loc: Loc | None = None,
        limit: str | None = None,
        found: str | None = None,
        fix: str | None = None,
        related: list[tuple[str, Loc]] | None = None,
    ) -> None:
        self.rule = rule
        self.message = message
        self.loc = loc
        self.limit = limit
        self.found = found
        self.fix = fix
        self.related = related or []
        super().__init__(self.render())

    def __reduce__(self) -> tuple[Any, ...]:
        # Exception's own rebuilds an error as cls(*args): rule and message are not its args,
        # so pickle and copy failed (a multiprocessing pool hung on a worker's DesignError).
        # Rebuilt without __init__, then given every field back: subclasses' too.
        return _rebuilt, (type(self), self.args), dict(self.__dict__)

    def render(self) -> str:
        """The full multi-line text the CLI prints."""
        where = f"{self.loc.file}:{self.loc.line}: " if self.loc else ""
        lines = [f"{where}error [{self.rule}]: {self.message}"]
        if self.limit is not None:
            lines.append(f"  limit: {self.limit}")
        if self.found is not None:
            lines.append(f"  found: {self.found}")
        for label, loc in self.related:
            lines.append(f"  {loc.file}:{loc.line}: {label}")
        if self.fix is not None:
            lines.append(f"  fix: {self.fix}")
        return "\n".join(lines)


def _rebuilt(cls: type[DesignError], args: tuple[Any, ...]) -> DesignError:
    """A :class:`DesignError` (or subclass) with ``args``, its fields still to be set: how
    pickle and copy remake one (:meth:`DesignError.__reduce__`)."""
    return cls.__new__(cls, *args)


class ToolchainError(DesignError):
    """Peano, aiecc or XRT is missing or failed: printed like a DesignError, with its own exit code.

    ``exit_code`` is 4 when a tool is missing, 5 when one ran and failed; ``notes`` are printed
    as they are, before the fix (a tool's command line and the tail of its output).
    """

    def __init__(self, rule: str, message: str, *, exit_code: int,  # type: ignore[no-untyped-def]
                 notes: list[str] | None = None, **kwargs) -> None:
        self.exit_code = exit_code
        self.notes = notes or []
        super().__init__(rule, message, **kwargs)

    def render(self) -> str:
        """Like a DesignError, with the notes before the fix."""
        lines = super().render().splitlines()
        fix = [i for i, line in enumerate(lines) if line.startswith("  fix: ")]
        at = fix[0] if fix else len(lines)
        return "\n".join(lines[:at] + [f"  {n}" for n in self.notes] + lines[at:])
