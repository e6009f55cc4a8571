"""The tracing context: the one piece of mutable state aiedsl keeps while a design is traced.

A design file is executed inside a :class:`~aiedsl.lang.load.LoadContext` (command-line
overrides, ``define`` values used; :mod:`aiedsl.lang.load`); ``@design`` opens a
:class:`~aiedsl.lang.trace.DesignTrace` and ``@herd`` a :class:`~aiedsl.lang.trace.CoreTrace`.
Each lives on a ``ContextVar`` and is restored in ``finally``, so a failed trace leaves nothing
behind.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator, NoReturn

from aiedsl.errors import DesignError
from aiedsl.ir.loc import Loc
from aiedsl.lang.load import load_context
from aiedsl.lang.names import check_line, check_name
from aiedsl.lang.trace import CoreTrace, DesignTrace
from aiedsl.source_loc import caller_loc
from aiedsl.values import as_int


DESIGN_MODULE = "__aiedsl_design__"
"""The module name design files run under, as what aiedsl writes names it (a kernel
reference's name in ``design.json``): each load runs under a name of its own,
``__aiedsl_design_<n>__`` (:func:`aiedsl.loader.load_design`), so that loads on several
threads, or one design file loading another, never share a ``sys.modules`` entry."""


def design_module(name: str) -> str:
    """Module ``name`` as output names it: one load's module as :data:`DESIGN_MODULE`, so the
    same design gives the same bytes whichever load it came from."""
    if name.startswith(DESIGN_MODULE[:-2] + "_") and name.endswith("__"):
        return DESIGN_MODULE
    return name


_DESIGN: ContextVar[DesignTrace | None] = ContextVar("aiedsl_design", default=None)
_CORE: ContextVar[CoreTrace | None] = ContextVar("aiedsl_core", default=None)


@contextmanager
def active(var: ContextVar[Any], value: Any) -> Iterator[Any]:
    """Make ``value`` the active trace of ``var`` for the ``with`` block."""
    token = var.set(value)
    try:
        yield value
    finally:
        var.reset(token)


def design_trace() -> DesignTrace | None:
    """The design being traced, or None outside one."""
    return _DESIGN.get()


def current_design(what: str, loc: Loc | None = None) -> DesignTrace:
    """The design being traced; a DesignError naming ``what`` (at ``loc``, or the caller's
    line) when there is none."""
    trace = _DESIGN.get()
    if trace is None:
        raise DesignError(
            "scope", f"{what} is only allowed inside a @design function", loc=loc or caller_loc(),
            fix="move it into the body of the function decorated with @design(...)",
        )
    return trace


def current_core(what: str) -> CoreTrace:
    """The core being traced; a DesignError naming ``what`` when there is none."""
    core = _CORE.get()
    if core is None:
        raise DesignError(
            "scope", f"{what} is only allowed inside a @herd core function", loc=caller_loc(),
            fix="call it from the body of the function decorated with @herd(...)",
        )
    return core


def define(name: str, default: int | float | str, *, doc: str = "") -> Any:
    """A design parameter that the command line can override with ``-D NAME=VALUE``.

    Example
    -------
    >>> M = define("M", 512, doc="rows of A and C")
    >>> M
    512
    """
    loc = caller_loc()
    check_name(name, "define", loc)
    integer = None if isinstance(default, bool) else as_int(default)
    if integer is not None:
        default = integer  # numpy's integers as plain ints: -D then gives an int
    elif isinstance(default, float):
        default = float(default)  # np.float64 is a float: -D then gives Python's
    if not isinstance(default, (int, float, str)) or (
            isinstance(default, float) and not math.isfinite(default)):
        raise DesignError("define", f"define '{name}' has the default {default!r}", loc=loc,
                          limit="an int, a finite float, a bool or a str", found=repr(default),
                          fix="give a plain value; compute anything else from it")
    ctx = load_context()
    if ctx is not None and ctx.file is not None and loc.file != ctx.file:
        # A module the design file imports runs once per process: loaded again, its define()
        # would not run, keeping the first value and deaf to -D
        raise DesignError(
            "define", f"define '{name}' is called in {loc.file}, not in the design file "
            f"{ctx.file}", loc=loc, limit="define() belongs in the design file aiedsl loads: a "
            "module it imports runs once per process, so a second load (with -D or not) would "
            "not run its define() and would keep the first value",
            fix=f"move {name} = define(\"{name}\", ...) into {ctx.file} and pass {name} to the "
            f"code in {loc.file} (as a function's argument)")
    value: Any = default
    if ctx is not None and name in ctx.overrides:
        text = ctx.overrides[name]
        kind = type(default).__name__
        try:
            value = type(default)(text) if not isinstance(default, bool) else _bool(text)
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(text)
        except ValueError:
            example = str(not default).lower() if isinstance(default, bool) else default
            python = not default if isinstance(default, bool) else default
            raise DesignError(
                "define", f"-D {name}={text} is not a valid {kind}", loc=loc, found=text,
                limit="true or false (or 1, 0, yes, no, on, off)" if kind == "bool" else None,
                fix=f"give {_article(kind)}, e.g. -D {name}={example} (from Python: "
                f"defines={{{name!r}: {python!r}}})") from None
    if isinstance(value, str):
        check_line(value, f"define '{name}' =", loc)
    if ctx is not None:
        ctx.used[name] = value
        ctx.lines[name] = loc
    return value


def refuse(name: str, message: str, *, limit: str, fix: str) -> NoReturn:
    """Refuse the value define ``name`` took, for a design that cannot be built with it (with
    the others' values): a DesignError at the line of ``define("NAME", ...)``, saying whether
    the value came from ``-D`` or is the default.

    Example
    -------
    ::

        if OUT == "i32" and SHIFT:
            refuse("SHIFT", f"SHIFT={SHIFT} scales an i32 C", limit="0 with OUT=i32",
                   fix="leave -D SHIFT out with OUT=i32")
    """
    ctx = load_context()
    loc = caller_loc()
    if ctx is not None and name in ctx.lines:
        loc = ctx.lines[name]
    if ctx is not None and name in ctx.overrides:
        found = f"-D {name}={ctx.overrides[name]}"
    elif ctx is not None and name in ctx.used:
        found = f"{name}={ctx.used[name]} (its default)"
    else:
        found = name
    raise DesignError("define", message, loc=loc, limit=limit, found=found, fix=fix)


def _bool(text: str) -> bool:
    """A bool from the command line, as people write one; anything else is refused (a typo must
    not read as False)."""
    word = text.strip().lower()
    if word in ("1", "true", "yes", "on"):
        return True
    if word in ("0", "false", "no", "off"):
        return False
    raise ValueError(text)


def _article(noun: str) -> str:
    return ("an " if noun[0] in "aeiou" else "a ") + noun
