"""The checks of :func:`~aiedsl.validate.validate` on what a design IR hands the kernel
compiler: each kernel as ``declare`` takes one, and the design's ``define(...)`` values.

These run the front end's own checks (:mod:`aiedsl.lang.names`,
:mod:`aiedsl.kernels.declare_checks`) through :meth:`~aiedsl.validate.fields.Validator.
front`, so a design.json may hold no kernel a design file could not declare.
"""
from __future__ import annotations

import math
import re
from typing import Any

from aiedsl.validate.fields import _REBUILD, Validator, key_path

_REFERENCE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z0-9_.<>]+\Z")
"""A reference as the front end writes it, ``module:qualname`` (``helpers:ref``,
``__aiedsl_design__:<lambda>``, ``f.<locals>.g``): a name, never imported."""


_SHIPPED_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z|[-+*]\Z")
"""A text parameter of aiedsl's own kernels, as its library writes them (``op``, ``dtype``,
``cpp``, ``role``: C++ names; ``symbol_op``: an operator): their templates paste them into
C++, so a design.json may hold no other."""


def check_design_defines(v: Validator) -> None:
    """The design's ``define(...)`` names and values, as ``define`` takes them: a plain
    name, and an int, a bool, a finite float or one line of text."""
    from aiedsl.lang.names import check_line, check_name

    d = v.d
    for name, value in d.defines.items():
        at = key_path("defines", name)
        v.front(at, d.loc, check_name, name, "define", None)
        if isinstance(value, float) and not math.isfinite(value):
            v.fail(at, "is not a finite number", value, "give an int, a finite float, "
                   f"a bool or a str; {_REBUILD}", d.loc,
                   limit="an int, a finite float, a bool or a str")
        if isinstance(value, str):
            v.front(at, d.loc, check_line, value, f"define '{name}' =", None)


def check_kernel(v: Validator, at: str, k: Any) -> None:
    """Kernel ``k`` (field ``at``) as ``declare`` takes one, by ``declare``'s own checks:
    its source, entry, defines, cost, arguments, parameters and cascade words; and a
    reference aiedsl may import when it is aiedsl's (:mod:`aiedsl.kernels.
    library_refs`)."""
    from aiedsl.kernels.declare_checks import (
        _cascade_step, _check_cascade_words, _checked_args, _checked_params,
        check_roundings_apply, checked_roundings,
    )
    from aiedsl.lang.names import (
        check_argument, check_defines, check_entry, check_line, check_name, check_source,
    )

    loc, symbol = k.loc, k.symbol
    v.front(f"{at}.source", loc, check_source, k.source, symbol, None,
            template=k.source_kind == "template")
    if k.entry is not None:
        v.front(f"{at}.entry", loc, check_entry, k.entry, symbol, None)
    for name, value in k.defines.items():
        v.front(key_path(f"{at}.defines", name), loc, check_defines, {name: value}, symbol,
                None)
    v.front(f"{at}.cost", loc, check_line, k.cost, f"cost of kernel '{symbol}'", None)
    for j, a in enumerate(k.args):
        v.front(f"{at}.args[{j}].name", loc, check_name, a.name, "kernel argument", None)
        v.front(f"{at}.args[{j}].name", loc, check_argument, a.name, symbol, k.entry, None)
        if a.narrows_to is not None:  # (the walk knows dtype fields, not this one)
            v.dtype(f"{at}.args[{j}].narrows_to", a.narrows_to, loc)
        if (a.kind == "buffer") != (a.type is not None) or \
                a.type is not None and a.type.dtype != a.dtype:
            v.fail(f"{at}.args[{j}].type", "does not match the argument: a buffer has "
                   "the type of its dtype, a scalar none", None if a.type is None
                   else a.type.model_dump(), f"as buffer(...) and scalar(...) make "
                   f"them; {_REBUILD}", loc)
    v.front(f"{at}.args", loc, _checked_args, symbol, k.entry, k.args, None)
    for name, value in k.params.items():
        v.front(key_path(f"{at}.params", name), loc, _checked_params, symbol, {name: value},
                k.args, None)
        if k.shipped and isinstance(value, str) and not _SHIPPED_WORD.match(value):
            v.fail(key_path(f"{at}.params", name), "is not a text aiedsl's own kernels take "
                   "(their templates paste it into the C++)", value,
                   f"as the library writes it (a C++ name, or + - *); {_REBUILD}", loc,
                   limit="a C++ name, or one of + - *")
    v.front(f"{at}.cascade_in", loc, _check_cascade_words, symbol, k.cascade_in,
            k.cascade_out, None)
    v.front(f"{at}.cascade_step", loc, _cascade_step, symbol, k.cascade_step,
            k.cascade_in, k.cascade_out, None)
    v.front(f"{at}.roundings", loc, checked_roundings, symbol, k.roundings, k.exact, None)
    v.front(f"{at}.roundings", loc, check_roundings_apply, k, None)
    # the front end writes any function's module:qualname (a library kernel's bound
    # run_reference too); which of them the simulator may import is call_refs's rule
    # (aiedsl.kernels.library_refs), applied where a kernel's reference is looked up
    if _REFERENCE.match(k.reference) is None:
        v.fail(f"{at}.reference", "is no module:function the front end writes",
               k.reference, f"give the reference's module and name; {_REBUILD}", loc,
               limit="module:qualname of the reference's function")
