"""The user's functions the front end calls (a design function, a core function, a reference):
checked before aiedsl calls them, so a function that cannot be called as aiedsl calls it, or
that would not run its body when called, is a DesignError at its ``def`` rather than Python's
TypeError from inside aiedsl, or a design traced without it.
"""

from __future__ import annotations

from collections.abc import Mapping

from aiedsl.errors import DesignError
from aiedsl.ir.loc import Loc
from aiedsl.source_loc import def_line, function_loc


def check_callable(fn: object, nargs: int, what: str, loc: Loc | None, *,
                   keywords: Mapping[str, object] | None = None, rule: str = "reference",
                   takes: str = "") -> None:
    """``fn`` is a function that can be called with ``nargs`` positional arguments (and
    ``keywords``); else a DesignError of ``rule`` at its ``def`` line (or ``loc``) saying what
    it takes (``takes``: what its arguments are, for the limit)."""
    import inspect

    if not callable(fn):
        raise DesignError(rule, f"{what} is {type(fn).__name__} {fn!r}, not a function",
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
            rule, f"{what} cannot be called with {nargs} argument(s){extra}: {e}",
            loc=function_loc(fn) or loc, limit=f"{nargs} positional argument(s){extra}"
            + (f" ({takes})" if takes else ""),
            found=f"{getattr(fn, '__name__', 'it')}{sig}",
            fix=f"make it take {nargs} argument(s)" + (" (and **params)" if keywords else "")
        ) from None


def check_traced(fn: object, what: str, decorator: str, rule: str, loc: Loc | None) -> None:
    """``fn``, a function aiedsl traces by calling it once (a design's, a core's), runs its body
    when called; else a DesignError at its ``def``. Called, an ``async def`` only makes a
    coroutine (Python then warns, from inside aiedsl, that it was never awaited) and a function
    with ``yield`` only makes a generator: either way nothing of its body is traced, and the
    design would go on without it."""
    word = _body_not_run(fn)
    if word is None:
        return
    kind, how = (("an async def", "an async def only makes a coroutine, which nothing awaits")
                 if word == "async" else
                 ("a generator (a yield in its body)",
                  "a function with yield only makes a generator, which nothing iterates"))
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


def check_returning(fn: object, what: str, loc: Loc | None) -> None:
    """``fn``, a function whose result aiedsl uses (a reference), returns it when called; else
    a DesignError at its ``def``. Called, an ``async def`` makes a coroutine (and Python warns,
    from inside aiedsl, that nothing awaited it), a function with ``yield`` a generator and a
    class an instance: none of them the arrays, which were refused as "object values"."""
    import inspect

    word = _body_not_run(fn)
    if word == "async":
        kind, makes, fix = "an async def", "a coroutine", "without async"
    elif word == "yield":
        kind, makes, fix = "a generator (a yield in its body)", "a generator", \
            "that returns them rather than yielding them"
    elif inspect.isclass(fn):
        kind, makes, fix = "a class", "an instance of it", "a function, not a class,"
    else:
        return
    name = getattr(fn, "__name__", "it")
    raise DesignError(
        "reference", f"{what}, '{name}', is {kind}", loc=def_line(fn) or loc,
        limit="a function returning the expected arrays: aiedsl calls it and compares what it "
        f"returns; called, {kind} makes {makes}", found=kind,
        fix=f"write {name} as a plain def {fix} returning the arrays")


def _body_not_run(fn: object) -> str | None:
    """``"async"`` for an ``async def`` (a coroutine or async generator function), ``"yield"``
    for a generator function, None otherwise: the two kinds of ``def`` whose call returns an
    object without running the body."""
    import inspect

    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        return "async"
    return "yield" if inspect.isgeneratorfunction(fn) else None
