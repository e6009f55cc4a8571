"""The tracing context: the one piece of mutable state aiedsl keeps while a design is traced.

A design file is executed inside a :class:`~aiedsl.lang.load.LoadContext` (command-line
overrides, ``define`` values used; :mod:`aiedsl.lang.load`); ``@design`` opens a
:class:`~aiedsl.lang.trace.DesignTrace` and ``@herd`` a :class:`~aiedsl.lang.trace.CoreTrace`.
Each lives on a ``ContextVar`` and is restored in ``finally``, so a failed trace leaves nothing
behind.
"""

from __future__ import annotations

import math
import numbers
import re
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator, NoReturn

from aiedsl.errors import DesignError
from aiedsl.ir.loc import Loc
from aiedsl.lang.load import load_context
from aiedsl.lang.names import check_line, check_name
from aiedsl.lang.trace import CoreTrace, DesignTrace
from aiedsl.source_loc import caller_loc
from aiedsl.text import printable
from aiedsl.values import as_bool, as_int, numpy_bool, shown


DESIGN_MODULE = "__aiedsl_design__"
"""The module name design files run under, as what aiedsl writes names it (a kernel
reference's name in ``design.json``): each load runs under a name of its own,
``__aiedsl_design_<n>__`` (:func:`aiedsl.loader.load_design`), and the modules of its folder
under it (``__aiedsl_design_<n>__.helpers``: :mod:`aiedsl.folder_imports`), so that loads on
several threads, or one design file loading another, never share a ``sys.modules`` entry."""


def design_module(name: str) -> str:
    """Module ``name`` as output names it: one load's module as :data:`DESIGN_MODULE` and a
    module of its folder by the name the design imported it by (``helpers``), so the same
    design gives the same bytes whichever load it came from.

    >>> design_module("__aiedsl_design_7__"), design_module("__aiedsl_design_7__.helpers")
    ('__aiedsl_design__', 'helpers')
    """
    head, dot, rest = name.partition(".")
    if head.startswith(DESIGN_MODULE[:-2] + "_") and head.endswith("__"):
        return rest if dot else DESIGN_MODULE
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
        # A module the design file imports may run once per process (all but those of the
        # design's folder, which each load runs afresh: aiedsl.folder_imports): loaded again,
        # its define() would not run, keeping the first value and deaf to -D. One rule for all
        # modules: where a module lives does not change what -D means.
        raise DesignError(
            "define", f"define '{name}' is called in {loc.file}, not in the design file "
            f"{ctx.file}", loc=loc, limit="define() belongs in the design file aiedsl loads: a "
            "module it imports may run once per process (any but those of the design's own "
            "folder), so a second load (with -D or not) would not run its define() and would "
            "keep the first value",
            fix=f"move {name} = define(\"{name}\", ...) into {ctx.file} and pass {name} to the "
            f"code in {loc.file} (as a function's argument)")
    first = ctx.lines.get(name) if ctx is not None else None
    tracing = _DESIGN.get()
    owner = tracing.name if tracing is not None else None
    if first is not None and (first.file, first.line) != (loc.file, loc.line) \
            and ctx is not None and ctx.owners.get(name) == owner:
        # -D NAME would set both: a copy-paste's second define("N", ...) meant another name
        raise DesignError(
            "define", f"define '{name}' is defined twice", loc=loc,
            limit="one define() line per name: -D sets a name once, and every define() of "
            "it takes that value", found=f"define(\"{name}\", ...) here and at line "
            f"{first.line}", related=[(f"the first define '{name}'", first)],
            fix=f"give this define its own name (the variable's, as a rule), or use the value "
            f"of the first: {name} = define(\"{name}\", ...) once")
    value: Any = default
    given = ctx.overrides.get(name, default) if ctx is not None else default
    if ctx is not None and name in ctx.overrides and not isinstance(given, str):
        value = _given(name, default, given, loc, ctx.caller)
    elif ctx is not None and name in ctx.overrides and isinstance(given, str):
        text = given
        kind = type(default).__name__
        # Python's int() and float() also read other scripts' digits (Arabic-Indic 4096) and
        # spaces around the number: not what a command line's number is taken to be
        odd = kind in ("int", "float") and not (
            text.isascii() and text.isprintable() and text.strip() == text)
        try:
            if odd:
                raise ValueError(text)
            value = type(default)(text) if not isinstance(default, bool) else _bool(text)
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(text)
        except ValueError:
            example = str(not default).lower() if isinstance(default, bool) else default
            python = not default if isinstance(default, bool) else default
            limit = ("true or false (or 1, 0, yes, no, on, off)" if kind == "bool" else
                     "a number in the digits 0-9, with no spaces" if odd else None)
            if ctx.caller is not None:  # from Python: at its line, in its words (a tester)
                raise DesignError(
                    "define", f"defines={{{name!r}: {text!r}}} is not a valid {kind}",
                    loc=ctx.caller, found=repr(text), limit=limit,
                    related=[(f"define '{name}'", loc)],
                    fix=f"give {_article(kind)}, e.g. defines={{{name!r}: {python!r}}} (a str "
                    f"is read as -D reads it: {str(example)!r})") from None
            raise DesignError(
                "define", f"-D {name}={printable(text)} is not a valid {kind}", loc=loc,
                found=repr(text) if odd else printable(text), limit=limit,
                fix=f"give {_article(kind)}, e.g. -D {name}={example} (from Python: "
                f"defines={{{name!r}: {python!r}}})") from None
        if isinstance(value, float) and value == 0 and _nonzero(text):
            # float() reads 1e-999 as 0.0: a value written nonzero must not become zero
            raise DesignError(
                "define", f"-D {name}={printable(text)} is too small for a float: it reads as "
                "0.0", loc=loc, limit="0, or a magnitude of at least 5e-324 (the least "
                "nonzero float)", found=printable(text),
                fix=f"give -D {name}=0 if zero is meant, else a value of 5e-324 or more")
    if isinstance(value, str):
        check_line(value, f"define '{name}' =", loc)
    if ctx is not None:
        ctx.used[name] = value
        ctx.lines[name] = loc
        ctx.owners[name] = owner
    return value


def refuse(name: str, message: str, *, limit: str, fix: str) -> NoReturn:
    """Refuse the value define ``name`` took, for a design that cannot be built with it (with
    the others' values): a DesignError at the line of ``define("NAME", ...)``, saying whether
    the value came from ``-D``, from Python's ``defines=`` or is the default.

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
    if ctx is not None and name in ctx.overrides and ctx.caller is not None:
        found = f"defines={{{name!r}: {ctx.overrides[name]!r}}}"  # from Python: no -D given
    elif ctx is not None and name in ctx.overrides:
        found = f"-D {name}={ctx.overrides[name]}"
    elif ctx is not None and name in ctx.used:
        found = f"{name}={ctx.used[name]} (its default)"
    elif ctx is None:  # a design traced in a script or notebook: define() records no value
        found = (f"define '{name}', whose value is not known here (no design file is being "
                 "loaded, so no -D value or default was recorded)")
    else:
        found = f"'{name}', which no define() of {ctx.file} has taken (yet)"
    if ctx is not None and ctx.caller is not None:  # loaded from Python: said in its words
        limit, fix = python_words(limit), python_words(fix)
    raise DesignError("define", message, loc=loc, limit=limit, found=found, fix=fix)


_LEAVE_OUT = re.compile(r"leave -D (\w+) out")
# a sentence's own stop or colon after a value is not the value's ("give -D M=512.")
_GIVEN = re.compile(r"-D (\w+)=([^\s,;)]+?)(?=[.:!?]?(?:[\s,;)]|$))")
_NAMED = re.compile(r"-D (\w+)")


def python_words(text: str) -> str:
    """``text`` (a design's :func:`refuse` fix, written in ``-D`` words, as the command line
    gives defines) in the words of Python's ``defines=``, for a design loaded from Python.

    >>> python_words("leave -D ACC out, or give -D OUT=i8 or -D M=512")
    "leave 'ACC' out of defines=, or give defines={'OUT': 'i8'} or defines={'M': 512}"
    >>> python_words("give -D SCALE=1.5.")
    "give defines={'SCALE': '1.5'}."
    """
    def given(m: re.Match[str]) -> str:
        value = m.group(2)
        shown_value = value if re.fullmatch(r"-?\d+", value) else repr(value)
        return f"defines={{{m.group(1)!r}: {shown_value}}}"

    text = _LEAVE_OUT.sub(lambda m: f"leave {m.group(1)!r} out of defines=", text)
    text = _GIVEN.sub(given, text)
    return _NAMED.sub(lambda m: f"defines={{{m.group(1)!r}: ...}}", text)


def _given(name: str, default: int | float | str, given: object, loc: Loc,
           caller: Loc | None) -> int | float | bool:
    """The value ``defines={name: given}`` (a Python value, not text) gives define ``name`` of
    default ``default``, defined at ``loc``: a value of the define's own type only (an int for
    an int define, numpy's too; an int or a float for a float one; a bool for a bool one), never
    one converted (``int(8192.7)`` truncated to 8192, ``True`` read as 1); a str define takes a
    str, which is text as ``-D`` gives it. Else a DesignError at ``caller`` (the Python line
    that gave it) naming the define's line."""
    kind = type(default).__name__
    value: int | float | bool | None = None
    if isinstance(default, bool):
        value = as_bool(given)
    elif isinstance(default, int):
        value = as_int(given)
    elif isinstance(default, float):
        number = as_int(given)
        if number is not None:
            value = float(number)
        elif isinstance(given, numbers.Real) and not isinstance(given, bool) and \
                not numpy_bool(given):
            value = float(given)
    limits = {"bool": "a bool (numpy's too), or text as -D reads it (true, false, 1, 0, yes, "
              "no, on, off)", "int": "an int (numpy's integers too), or text as -D reads it",
              "float": "a finite float or an int (numpy's too), or text as -D reads it",
              "str": "a str"}
    gave = f"defines={{{name!r}: {shown(given)}}}"
    related = [(f"define '{name}'", loc)] if caller is not None else []
    example = str(not default).lower() if isinstance(default, bool) else default
    python = not default if isinstance(default, bool) else default
    fix = (f"give {_article(kind)}, e.g. defines={{{name!r}: {python!r}}} (-D {name}={example} "
           "on the command line)")
    if value is None:
        what = "None" if given is None else _article(type(given).__name__)
        raise DesignError(
            "define", f"{gave} gives define '{name}' {what}, not {_article(kind)}",
            loc=caller or loc, limit=limits[kind], found="None" if given is None else
            f"{shown(given)} ({type(given).__name__})", related=related, fix=fix)
    if isinstance(value, float) and not math.isfinite(value):
        raise DesignError(
            "define", f"{gave} gives define '{name}' {shown(given)}, which is not finite",
            loc=caller or loc, limit=limits[kind], found=shown(given), related=related,
            fix=fix)
    return value


def _nonzero(text: str) -> bool:
    """Whether the number ``text`` (a float's, as float() reads it) is written with a nonzero
    digit before its exponent."""
    return any(c in "123456789" for c in text.lower().partition("e")[0])


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
