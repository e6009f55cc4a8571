"""Herds: ``@herd`` runs a core function once per core at trace time with that core's index;
what it records (acquires, releases, kernel calls through :mod:`aiedsl.lang.kernel_calls`, loops
through :mod:`aiedsl.lang.loops`) is the core's program. Loops stay loops.

Example
-------
::

    @herd(cols=4, rows=4)
    def core(x, y):
        for _ in loop(tiles_per_core):
            with c[x, y].produce() as acc:
                zero(acc)
                for _ in loop(K // k):
                    with a[y].consume() as ta, b[x].consume() as tb:
                        matmul(ta, tb, acc)
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Literal

from aiedsl.errors import DesignError
from aiedsl.ir.cores import Core, Herd
from aiedsl.lang.callables import check_traced
from aiedsl.lang.context import _CORE, active, current_design
from aiedsl.lang.loops import left_early
from aiedsl.lang.names import decorated_name
from aiedsl.lang.trace import CoreTrace
from aiedsl.source_loc import caller_loc, decorator_loc
from aiedsl.targets.geometry import STEP
from aiedsl.targets.model import TargetModel
from aiedsl.user_errors import tracing
from aiedsl.values import as_bool, as_int, shown


def herd_traceable(cols: int, rows: int, t: TargetModel) -> bool:
    """Is a ``cols x rows`` herd small enough to trace one core per cell on ``t``? Placement
    says precisely why a herd does not fit; this only stops absurd sizes (``-D COLS=2000``, a
    design.json's 2**40) before a core per cell is made."""
    return cols * rows <= 4 * t.cols * t.rows


def herd(cols: int = 1, rows: int = 1, *, anchor: tuple[int, int] | None = None,
         name: str | None = None, stack: int | None = None,
         cascade: Literal["east", "south"] | None = None, forever: bool = True
         ) -> Callable[[Callable[..., Any]], Any]:
    """Declare a ``cols x rows`` rectangle of cores running one core function.

    The function takes the core's index ``(x, y)`` (column, row inside the herd), or nothing for
    a 1x1 herd. ``anchor=(col, row)`` pins core ``(0, 0)`` to that tile; otherwise placement
    chooses. ``stack`` overrides the bytes of stack each core reserves. ``cascade="east"``
    chains each row's cores by the accumulator cascade, west to east (``"south"``: each
    column's, north to south); kernels with ``cascade_in``/``cascade_out`` use it. Only
    ``"east"`` and ``"south"`` are accepted: an AIE2 core sends its cascade east or south and
    receives it from the west or north (``check`` refuses ``"north"`` and ``"west"``).

    Each core runs the function's program again each time it ends, forever, as every run of
    the design needs (IRON's ``Worker``): a ``local()`` carries its value from one run into the
    next. ``forever=False`` runs it once, after which the core stops (IRON's
    ``Worker(while_true=False)``): the design then runs once per load, and more runs
    (``--iters``, ``--warmup``, ``run(iters=)``, ``simulate(invocations=)``) are refused.

    Example: ``@herd(cols=4, rows=1, cascade="east")`` chains core[0,0] -> ... -> core[3,0].
    """
    loc = caller_loc()
    if callable(cols):  # @herd written bare: Python hands the function over as cols
        raise DesignError(
            "herd", f"@herd is applied to '{getattr(cols, '__name__', cols)}' without its "
            "parentheses", loc=decorator_loc(loc, cols, "herd"),
            limit="@herd(...) makes the decorator: bare, it would take "
            "the function for its cols and trace no core", found="@herd",
            fix="write @herd() for one core, or @herd(cols=..., rows=...)")

    def decorate(fn: Callable[..., Any]) -> Herd:
        b = current_design("@herd", loc)  # @herd's line: applying it, 3.10 gives the def's
        hname = decorated_name(fn, name, "herd", 'herd(name="core")', loc)
        outer = _CORE.get()
        if outer is not None:  # it was traced as one more herd, idle, without a word
            around = outer.name.partition("[")[0]  # the herd of core 'core[0,0]'
            raise DesignError(
                "herd", f"herd '{hname}' is declared inside the core function of herd "
                f"'{around}'", loc=loc, limit="a herd is declared in the design function: a "
                "core function is its core's program, traced once per core, and declares no "
                "cores", found=f"@herd inside herd '{around}'",
                fix="move the @herd and its function out into the @design function, beside the "
                "other herds")
        check_traced(fn, "core function", "@herd", "herd", loc)
        size = {}
        for what, v in (("cols", cols), ("rows", rows)):
            number = as_int(v)  # numpy's integers too, as plain ints
            if number is None or number < 1:
                raise DesignError("herd", f"herd '{hname}' has {what}={shown(v)}", loc=loc,
                                  found=shown(v), fix=f"give {what} as a positive integer")
            size[what] = number
        ncols, nrows = size["cols"], size["rows"]
        t = b.target
        # Placement says precisely why a herd does not fit; this only stops absurd sizes
        # (-D COLS=2000) before one core per cell is traced.
        if not herd_traceable(ncols, nrows, t):
            raise DesignError(
                "herd placement", f"herd '{hname}' ({ncols}x{nrows}) does not fit on {t.name}",
                loc=loc, limit=f"{t.cols} column(s) x {t.rows} core row(s)",
                found=f"{ncols} column(s) x {nrows} row(s)", fix="a smaller herd, or a device "
                "with more columns (--device)")
        pin = None
        if anchor is not None:
            at = [as_int(v) for v in anchor] if isinstance(anchor, tuple) else []
            col, row = at if len(at) == 2 else (None, None)
            if col is None or row is None or col < 0 or row < 0:
                raise DesignError("herd", f"herd '{hname}' has anchor={shown(anchor)}", loc=loc,
                                  limit="a (column, row) pair of non-negative ints",
                                  found=shown(anchor), fix="write e.g. anchor=(0, 2)")
            pin = (col, row)  # plain ints (numpy's given too)
        memory = b.target.core.memory
        reserved = None if stack is None else as_int(stack)
        if stack is not None and (reserved is None or not 0 <= reserved <= memory):
            raise DesignError("herd", f"herd '{hname}' has stack={shown(stack)}", loc=loc,
                              limit=f"bytes from 0 to the core's {memory} of data memory",
                              found=shown(stack),
                              fix=f"give the stack in bytes, e.g. stack={b.target.default_stack}")
        if cascade is not None and cascade not in STEP:  # a direction the checks judge
            runs = " or ".join(f"'{d}'" for d in sorted(b.target.cascade_out))
            raise DesignError("cascade", f"herd '{hname}' has cascade={cascade!r}", loc=loc,
                              limit=f"{runs} (the directions an {b.target.arch.upper()} "
                              "cascade runs)", found=repr(cascade),
                              fix="write cascade='east' to chain each row west to east")
        runs_again = as_bool(forever)  # numpy's bools too
        if runs_again is None:  # (forever=0 would read as a count of runs)
            raise DesignError("herd", f"herd '{hname}' has forever={shown(forever)}", loc=loc,
                              limit="True (the program runs again each time it ends) or False "
                              "(it runs once)", found=shown(forever),
                              fix="write forever=False for a core that runs its program once")
        nparams = _index_arguments(fn, (ncols, nrows) == (1, 1))
        if nparams is None:
            fname = getattr(fn, "__name__", type(fn).__name__)
            raise DesignError(
                "herd", f"core function '{fname}' cannot be called with the core index (x, y)"
                + ("" if (ncols, nrows) != (1, 1) else " or with nothing"), loc=loc,
                limit="the core index (x, y) as its first two arguments, any others with "
                "defaults (def core(x, y, src=a[0]), as a loop binds them); a 1x1 herd's may "
                "take none", found=f"{fname}{_signature(fn)}",
                fix="take the core index as (x, y), and give every other argument a default")
        h = Herd(name=hname, cols=ncols, rows=nrows, anchor=pin, cascade=cascade, loc=loc)
        b.add_herd(h)
        for y in range(nrows):
            for x in range(ncols):
                cb = CoreTrace(name=f"{hname}[{x},{y}]",
                               max_ops=b.target.program_memory // 4)
                with active(_CORE, cb):
                    try:
                        fn(x, y) if nparams == 2 else fn()
                    except DesignError:
                        raise
                    except Exception as e:  # the user's own: which core it traced says why
                        tracing(e, cb.name + (f" at x={x}, y={y}" if nparams == 2 else ""))
                        raise
                if len(cb.scopes) != 1:
                    raise left_early(cb.scopes[-1], loc)
                b.cores.append(Core(
                    name=cb.name, herd=hname, index=(x, y), body=tuple(cb.scopes[0].ops),
                    stack=reserved if reserved is not None else b.target.default_stack,
                    loc=loc, forever=runs_again))
        return h

    return decorate


def _index_arguments(fn: Callable[..., Any], single: bool) -> int | None:
    """How many arguments core function ``fn`` is called with: 2, the core index (x, y), into
    its first two positional parameters when each needs a value or defaults to an int (an
    index's default: ``def core(x, y=0)``) and every later one has a default (``def core(x, y,
    src=ins[n])``, Python's way of binding a loop's values), or gathered (``def core(*xy)``);
    0 for a 1x1 herd's (``single``) that needs no argument (``def core(src=ins[n])``: its
    defaults are not overwritten with the index); None when neither call fits (``def core(x,
    src=a)`` would put y in ``src``)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # (a callable whose signature Python cannot read)
        return None
    kinds = inspect.Parameter
    positional = [p for p in params if p.kind in (kinds.POSITIONAL_ONLY,
                                                   kinds.POSITIONAL_OR_KEYWORD)]
    if any(p.kind is kinds.KEYWORD_ONLY and p.default is kinds.empty for p in params):
        return None  # no call here gives it

    def index(p: inspect.Parameter) -> bool:
        return p.default is kinds.empty or (isinstance(p.default, int)
                                            and not isinstance(p.default, bool))

    rest = any(p.kind is kinds.VAR_POSITIONAL for p in params)
    if (len(positional) >= 2 and all(index(p) for p in positional[:2])
            and all(p.default is not kinds.empty for p in positional[2:])):
        return 2
    if rest and len(positional) < 2 and all(p.default is kinds.empty for p in positional):
        return 2  # (*xy), (x, *rest)
    if single and all(p.default is not kinds.empty for p in positional):
        return 0
    return None


def _signature(fn: Callable[..., Any]) -> str:
    """``fn``'s parameters as Python writes them, ``(x, y, z)``."""
    try:
        return str(inspect.signature(fn))
    except (TypeError, ValueError):
        return "(...)"
