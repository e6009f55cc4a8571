"""Load a design file: run it with ``-D`` overrides and a device override, return its design."""

from __future__ import annotations

import difflib

import itertools
import os
import sys
import types
from pathlib import Path
from typing import Any, Mapping

from aiedsl.errors import DesignError, display_path
from aiedsl.folder_imports import FolderImports
from aiedsl.ir.loc import Loc
from aiedsl.lang.context import DESIGN_MODULE
from aiedsl.lang.load import LoadContext, loading
from aiedsl.lang.design import DesignHandle
from aiedsl.source_loc import caller_loc, file_loc, user_line
from aiedsl.targets import known_target
from aiedsl.text import DEFINE_NAME, whole_ints
from aiedsl.user_errors import raised_by_user, user_exception, with_call_chain
from aiedsl.values import by_type, shown as shown_value



_LOADS = itertools.count()
"""Numbers each load's module: ``__aiedsl_design_<n>__``."""


def _exec_file(path: Path) -> dict[str, Any]:
    """Run the Python file at ``path`` as a module of its own, as ``runpy.run_path`` does, and
    return its globals; but under a module name of this load alone
    (:data:`~aiedsl.lang.context.DESIGN_MODULE` with a number, which output writes without),
    leaving ``sys.argv`` be, and with the modules of its folder its own
    (:class:`~aiedsl.folder_imports.FolderImports`).

    runpy swaps ``sys.argv[0]`` and ``sys.modules[run_name]`` and puts back what it found, so
    two loads interleaved on two threads left the first one's path and module behind for good,
    and one shared name left an outer design file's module out of ``sys.modules`` once an inner
    load ended (its dataclasses then failed). No lock serialises loads: one around them hung a
    design file that loads designs on other threads and waits for them."""
    # bytes: its coding cookie is read; dont_inherit: this module's own `from __future__`
    # imports must not change how the design file's annotations are read
    code = compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
    name = f"{DESIGN_MODULE[:-2]}_{next(_LOADS)}__"
    module = types.ModuleType(name)
    module.__file__ = str(path)
    # its folder's modules (a helpers.py beside it, its kernels' declarations) are imported
    # from that folder for this load, as `python design.py` would, whatever the process, the
    # other loads or an outer design file hold of those names: resolved, as the design's
    # files are opened where they really are (symlinks followed)
    imports = FolderImports(str(path.resolve().parent), name, str(path.resolve()))
    module.__dict__["__builtins__"] = imports.builtins
    sys.modules[name] = module  # while it runs: dataclasses and pickle look their module up
    try:
        exec(code, module.__dict__)
    finally:
        del sys.modules[name]
        imports.close()
    return dict(module.__dict__)


def _line_of(path: Path, shown: str, line: int) -> Loc:
    """Line ``line`` of the design file at ``path``, named ``shown`` as its locations name it,
    and opened where it really is (symlinks resolved, as :func:`~aiedsl.source_loc.file_loc`
    opens its lines) whatever the working directory becomes (:attr:`Loc.path`)."""
    return Loc(file=shown, line=line).at_path(os.path.realpath(path))


def parse_defines(pairs: list[str]) -> dict[str, str]:
    """``["M=1024", "K=64"]`` -> ``{"M": "1024", "K": "64"}``."""
    out = {}
    for p in pairs:
        name, sep, value = p.partition("=")
        if not sep or not DEFINE_NAME.match(name):
            raise DesignError("define", f"-D {p} is not NAME=VALUE", found=p,
                              fix="write e.g. -D M=1024")
        out[name] = value
    return out


def _checked_defines(defines: object, caller: Loc | None) -> dict[str, object]:
    """``load_design``'s ``defines``: a dict (any mapping) of define names, as ``-D NAME=``
    names them, to values (checked against each define's type when it runs); else a
    DesignError at the caller's line."""
    if defines is None:
        return {}
    if not isinstance(defines, Mapping):
        raise DesignError(
            "define", f"defines= is {by_type(defines)}, not a dict", loc=caller,
            limit="a dict {NAME: value} of the design's define()s", found=shown_value(defines),
            fix="pass e.g. defines={\"N\": 8192}")
    for key in defines:
        if not isinstance(key, str) or not DEFINE_NAME.match(key):
            raise DesignError(
                "define", f"defines= names {shown_value(key)}, not a define's name", loc=caller,
                limit="each key the name a define() gives, a Python identifier (as -D NAME=)",
                found=shown_value(key), fix="pass e.g. defines={\"N\": 8192}")
    return dict(defines)


def _run(path: Path, shown: str, ctx: LoadContext) -> dict[str, Any]:
    """Execute the design file; anything it raises becomes a DesignError at the user's line."""
    try:
        with loading(ctx):
            return _exec_file(path)
    except DesignError as e:
        raise with_call_chain(e)
    except SyntaxError as e:
        where = file_loc(e.filename, e.lineno or 1) if e.filename else \
            _line_of(path, shown, e.lineno or 1)
        raise DesignError("python error", f"SyntaxError: {e.msg}", loc=where,
                          found=(e.text or "").rstrip() or None,
                          fix="fix the Python syntax at this line") from e
    except SystemExit as e:
        raise DesignError(
            "design file", f"{shown} called sys.exit({'' if e.code is None else repr(e.code)})"
            " while aiedsl was loading it", loc=user_line(e.__traceback__) or _line_of(
                path, shown, 1),
            fix="a design file declares a design; do not exit from it (guard script code "
            "with `if __name__ == \"__main__\":`)") from e
    except BaseException as e:
        if not raised_by_user(e):
            raise
        raise user_exception(e, f"loading {shown}", _line_of(path, shown, 1)) from e


def _unused_defines(path: Path, shown: str, scope: dict[str, Any], unused: list[str],
                    used: list[str], caller: Loc | None,
                    define_lines: dict[str, Loc] | None = None) -> DesignError:
    """The error for ``-D`` names (or, from the Python line ``caller``, ``defines=`` keys) no
    define() took: at the line of the first that the design binds to a plain constant
    (``N = 4096``, the likeliest intent: a constant meant to be set from the command line),
    whose fix makes it a define(); else at ``caller``, or the file's first line."""
    ending = "es" if len(unused) == 1 else ""
    if caller is None:
        said = f"-D {', '.join(unused)} match{ending} no define() in {shown}"
        given = " and ".join(f"-D {n}" for n in unused)
        setter = "-D"
    else:
        said = (f"defines= names {', '.join(map(repr, unused))}, which match{ending} no "
                f"define() in {shown}")
        given = " and ".join(map(repr, unused)) + " from defines="
        setter = "defines="
    plain = _plain_constants(path, scope, unused)
    if not plain:
        # a misspelt name (-D TILES, -D n): the define it likely meant, at its line
        near = {n: _closest(n, used) for n in unused}
        meant = [(n, m) for n, m in near.items() if m is not None]
        define_at = define_lines or {}
        # else the design's first define(), where the names it takes are
        at = define_at.get(meant[0][1]) if meant else min(
            define_at.values(), key=lambda loc: loc.line, default=None)
        return DesignError(
            "define", said, loc=caller or at or _line_of(path, shown, 1),
            found=", ".join(unused),
            fix=("; ".join(f"did you mean {setter} {m}? (not {n})" if setter == "-D" else
                           f"did you mean {m!r}? (not {n!r})" for n, m in meant)
                 + f" (the design defines: {', '.join(used)})") if meant else
            f"the design defines: {', '.join(used)}" if used else
            f"the design has no define(): remove {given}")
    lines = [_line_of(path, shown, line) for line, _ in plain.values()]
    made = "; ".join(f"{n} = define(\"{n}\", {v!r}) at line {line}"
                     for n, (line, v) in plain.items())
    return DesignError(
        "define", said, loc=lines[0],
        limit=f"{setter} sets a value the design takes with define(); a plain assignment "
        "ignores it",
        found="; ".join(f"{n} = {plain[n][1]!r}, a plain constant" if n in plain else
                        f"{n}: no name of the design" for n in unused),
        related=[(f"{n} = {v!r}", at) for (n, (_, v)), at in
                 list(zip(plain.items(), lines))[1:]]
        + ([("defines= given", caller)] if caller is not None else []),
        fix=f"make {' and '.join(plain)} a define() to set {'it' if len(plain) == 1 else 'them'}"
        f" with {setter}: {made} (from aiedsl import define); or remove {given}"
        + (f" (the design defines: {', '.join(used)})" if used else ""))


def _bytes_text(name: str) -> str:
    r"""A file name that is not UTF-8 as its bytes: ``p\xff.py``."""
    return repr(os.fsencode(name))[2:-1]


def _closest(name: str, names: list[str]) -> str | None:
    """The one of ``names`` that ``name`` most likely misspells (another case, a letter off),
    or None.

    >>> _closest("TILES", ["N", "TILE"]), _closest("n", ["N", "TILE"]), _closest("Q", ["N"])
    ('TILE', 'N', None)
    """
    same_case = [n for n in names if n.lower() == name.lower()]
    if same_case:
        return same_case[0]
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return close[0] if close else None


def _plain_constants(path: Path, scope: dict[str, Any], names: list[str]
                     ) -> dict[str, tuple[int, int | float | str]]:
    """Of ``names`` (``-D`` names no define() took), those the design file binds at its top
    level to a value define() could take (``N = 4096``): each one's line and value."""
    from aiedsl.source_loc import defined_below

    out = {}
    for n in names:
        v = scope.get(n)
        if isinstance(v, (int, float, str)) and not isinstance(v, bool):
            line = defined_below(str(path), n, 0)
            if line is not None:
                out[n] = (line, v)
    return out


def _declared_kernels(scope: dict[str, Any]) -> dict[str, Any]:
    """The kernels a design file's module binds to names at its top level, by symbol, in the
    order of its names (:attr:`~aiedsl.lang.design.DesignHandle.declared`)."""
    if "aiedsl.kernels.base" not in sys.modules:  # nothing declared a kernel: not loaded for it
        return {}
    from aiedsl.kernels.base import Kernel

    declared: dict[str, Any] = {}
    for value in scope.values():
        if isinstance(value, Kernel):
            declared.setdefault(value.symbol, value)
    return declared


def load_design(path: str | Path, defines: Mapping[str, object] | None = None,
                device: str | None = None, name: str | None = None) -> DesignHandle:
    """Run the design file at ``path`` and return the design it declares.

    ``defines`` set the design's define()s as ``-D`` does: a str is read as ``-D`` reads its
    text (``"8192"``); any other value must be of the define's own type (an int for an int
    define, an int or a float for a float one, a bool for a bool one: nothing is converted,
    so ``8192.7`` or ``True`` for an int define is an ``error [define]``, as its text is).

    Example
    -------
    >>> d = load_design("designs/passthrough.py", {"N": 8192})     # doctest: +SKIP
    >>> d.ir.defines["N"]                                            # doctest: +SKIP
    8192
    """
    caller = caller_loc()
    with whole_ints():  # a message may quote a huge int the design gave (loop(10**5000))
        return _load(path, defines, device, name, caller if caller.line else None)


def load_from_command_line(path: str | Path, pairs: list[str], device: str | None = None,
                           name: str | None = None) -> DesignHandle:
    """:func:`load_design` as the command line asks: ``pairs`` the ``-D NAME=VALUE`` words
    (values read as text), and a mistake in them said in ``-D`` words, as the user typed them,
    never as a Python line's ``defines=`` (which this function's caller is not).

    >>> load_from_command_line("designs/passthrough.py", ["N=8192"])   # doctest: +SKIP
    """
    with whole_ints():
        return _load(path, parse_defines(pairs), device, name, None)


def _load(path: str | Path, defines: Mapping[str, object] | None, device: str | None,
          name: str | None, caller: Loc | None) -> DesignHandle:
    """:func:`load_design`, ``caller`` its caller's line (None: the command line, whose -D
    values are text)."""
    if isinstance(path, DesignHandle):
        raise DesignError(
            "design file", f"load_design() was given the design '{path.name}', already loaded",
            loc=caller, found=repr(path), fix="use the design as it is (simulate(design), "
            "build(design)); load_design takes a design file's path")
    if not isinstance(path, (str, os.PathLike)):
        raise DesignError(
            "design file", f"load_design() takes a design file's path, not {by_type(path)}",
            loc=caller, found=shown_value(path), fix="give the path of a .py file that defines a "
            "@design, e.g. load_design(\"designs/passthrough.py\")")
    overrides = _checked_defines(defines, caller)
    if device is not None and caller is not None:  # a Python caller's own argument: at its line
        known_target(device, caller)
    if isinstance(path, str) and not path:  # Path("") is ".", "a directory"
        raise DesignError("design file", "the design file's path is empty", found="''", loc=caller,
                          fix="give the path of a .py file that defines a @design, e.g. "
                          "designs/passthrough.py")
    path = Path(path)
    shown = display_path(str(path)) if path.exists() else str(path)  # as its lines name it
    if shown == ".":  # the working directory, given by another name: "." is not what was typed
        shown = str(path)
    if path.is_dir():
        raise DesignError("design file", f"{shown} is a directory, not a design file",
                          found=shown, loc=caller,
                          fix="give the path of a .py file that defines a @design")
    if not path.is_file():
        raise DesignError("design file", f"no design file at {shown}", found=shown, loc=caller,
                          fix="give the path of a .py file that defines a @design")
    if path.suffix != ".py":  # run as Python, a README or a kernel's C++ fails at a syntax error
        raise DesignError("design file", f"{shown} is not a Python file", found=shown, loc=caller,
                          limit="a design file ends in .py",
                          fix="give the .py file that defines the @design (" + (
                              "a build's design.json is read from Python: "
                              "aiedsl.build(aiedsl.DesignHandle(aiedsl.load_json(PATH)))"
                              if path.suffix == ".json" else
                              "a kernel's C++ is tested with `aiedsl kernel test FILE.cc`")
                          + ")")
    try:
        shown.encode("utf-8")
    except UnicodeEncodeError:  # bytes no encoding names: the design's lines could not be
        raise DesignError(       # written into design.json or the MLIR's locations
            "design file", f"the name of {_bytes_text(shown)} is not UTF-8",
            found=_bytes_text(shown),
            loc=caller, limit="a design file's path, as aiedsl shows it, in UTF-8: every line "
            "of the design is named by it in design.json and the MLIR",
            fix="rename the file (or the folders on the way to it) in UTF-8") from None
    ctx = LoadContext(overrides=overrides, device=device, file=shown, caller=caller)
    scope = _run(path, shown, ctx)
    designs = {v.name: v for v in scope.values() if isinstance(v, DesignHandle)}
    first = _line_of(path, shown, 1)
    if not designs:
        raise DesignError("design file", f"{shown} declares no @design", loc=first,
                          fix="decorate a function with @design(device=...)")
    unused = sorted(set(ctx.overrides) - set(ctx.used))
    if unused:
        raise _unused_defines(path, shown, scope, unused, sorted(ctx.used), caller, ctx.lines)
    declared = _declared_kernels(scope)
    for handle in designs.values():
        handle.declared = declared
    if name is not None:
        if name not in designs:
            raise DesignError("design file", f"{shown} has no design named '{name}'",
                              loc=first, fix="choose one of " + ", ".join(designs))
        return designs[name]
    if len(designs) > 1:
        raise DesignError("design file", f"{shown} declares {len(designs)} designs",
                          loc=first, found=", ".join(designs),
                          fix="choose one with --name (name= from Python)")
    return next(iter(designs.values()))
