"""A design's reference against the tensors the runtime fills: it is handed them by position,
so a parameter named after a host tensor must get that tensor, and one the runtime never fills
is the runtime's omission, said as such."""

from __future__ import annotations

import inspect
from typing import Any, Callable

from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.ir.runtime import Transfer
from aiedsl.source_loc import function_loc


def _positional(fn: Callable[..., Any]) -> list[str] | None:
    """The names of ``fn``'s positional parameters, in order; None when it shows no signature
    (a builtin)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def check_reference_names(fn: Callable[..., Any], inputs: list[str], tensors: set[str],
                           what: str, loc: Loc) -> None:
    """A reference parameter named after a host tensor gets that tensor.

    The reference is handed the filled tensors by position; a parameter that names another
    tensor (one the runtime never fills, or a filled one at another position) would silently
    compute on the wrong array, and the simulated run could agree with it (``rt.fill(a, C)``
    where ``A`` was meant: the reference ``def ref(A)`` got C's array and said PASS).
    """
    positional = _positional(fn)
    if positional is None:  # a builtin without a signature: nothing is named
        return
    for i, (name, given) in enumerate(zip(positional, inputs)):
        if name in tensors and name != given:
            where = (f"'{name}' is argument {inputs.index(name)}" if name in inputs
                     else f"the runtime never fills '{name}'")
            fix = (f"take them in argument order: {getattr(fn, '__name__', 'reference')}"
                   f"({', '.join(inputs)})" if name in inputs else
                   f"fill '{name}' where the runtime should (rt.fill(fifo, {name})), or name "
                   "the parameter after the tensor it gets")
            raise DesignError(
                "reference", f"{what} names argument {i} '{name}', but is handed '{given}' "
                f"there ({where})", loc=function_loc(fn) or loc,
                limit=f"the tensors the runtime fills, in argument order: {', '.join(inputs)}",
                found=f"{getattr(fn, '__name__', 'reference')}({', '.join(positional)})",
                fix=fix)



def check_unfilled_parameters(fn: Callable[..., Any], inputs: list[str], d: Design, what: str,
                               loc: Loc) -> None:
    """A reference parameter past the filled tensors that names a host tensor the runtime
    never moves: the runtime left that input out (``rt.fill(fb, a)`` where ``b`` was meant),
    which is the mistake, not the reference's arguments (a newcomer's tester: the fix said to
    drop ``b`` from the reference)."""
    positional = _positional(fn)
    if positional is None:
        return
    moved = {t.tensor for t in d.runtime if isinstance(t, Transfer)}
    host = {t.name: t for t in d.tensors}
    missing = [n for n in positional[len(inputs):] if n in host and n not in moved]
    if not missing:
        return
    fills: dict[str, list[Transfer]] = {}
    for t in d.runtime:
        if isinstance(t, Transfer) and t.op == "fill":
            fills.setdefault(t.tensor, []).append(t)
    # a tensor filled into several fifos may be one that should have been the missing one
    twice = [(n, ts) for n, ts in fills.items() if len({t.fifo for t in ts}) > 1]
    name = missing[0]
    hint = "".join(
        f"; '{n}' fills {' and '.join(repr(t.fifo) for t in ts)} (lines "
        f"{', '.join(str(t.loc.line) for t in ts)}): is one of them to be filled from '{name}'?"
        for n, ts in twice[:1])
    raise DesignError(
        "reference", f"{what} takes '{name}', a host tensor the runtime never fills: it is "
        f"handed the tensors the runtime fills ({', '.join(inputs) or 'none'})",
        loc=function_loc(fn) or loc,
        related=[(f"host tensor '{name}'", host[name].loc)],
        limit=f"the tensors the runtime fills, in argument order: {', '.join(inputs) or 'none'}",
        found=f"{getattr(fn, '__name__', 'reference')}({', '.join(positional)})",
        fix=f"fill '{name}' in the runtime sequence (rt.fill(<fifo>, {name})){hint}")
