"""What every check of :func:`~aiedsl.validate.validate` shares: :class:`Validator`, one
validation's state (the design, where it came from, its device) and the checks of one field.

The checks of a part of the IR (its names, its programs, its kernels...) are functions of the
modules of :mod:`aiedsl.validate` that take a :class:`Validator`; this module imports none of
them, so imports run one way: from :mod:`aiedsl.validate` down to here.

Each mistake is a DesignError of rule ``design IR`` naming where the IR came from, the field
by its path (``cores[0].body[0].body[0].fifo``), the value found and the fix, at the design
line of the nearest node that has one.
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable, NoReturn

from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import TensorType
from aiedsl.targets import TargetModel

RULE = "design IR"
"""The rule every error of :mod:`aiedsl.validate` (and its modules) and
of :mod:`aiedsl.design_json` names."""

_REBUILD = "a design.json aiedsl wrote holds none: rebuild the design (aiedsl build) rather " \
    "than edit its design.json"


def _shown(value: object) -> str:
    """A JSON value as a message quotes it."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def key_path(path: str, key: str) -> str:
    """The JSON path of ``key`` of the object at ``path``: ``defines.N``, or
    ``defines["odd key"]`` for a key that is no plain name."""
    return f"{path}.{key}" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) else \
        f"{path}[{json.dumps(key)}]"


class Validator:
    """One validation of a design IR, refusing the first field that breaks a rule: the design,
    where it came from, its device's target, and the checks of one field."""

    def __init__(self, d: Design, source: str) -> None:
        self.d, self.source = d, source
        self.target: TargetModel  # the device's, set once the device is known to be one

    def fail(self, path: str, message: str, found: object, fix: str, loc: Loc | None = None,
             limit: str | None = None) -> NoReturn:
        """A DesignError about field ``path``: ``message`` says what is wrong with it,
        ``found`` is its value (quoted as JSON: ``"nope"``, ``0``, ``null``)."""
        if loc is not None and loc.line < 0:  # the broken line itself: no place to point at
            loc = None
        raise DesignError(RULE, f"{self.source}: {path} {message}", loc=loc, limit=limit,
                          found=_shown(found), fix=fix)

    def refers(self, path: str, name: str | None, what: str, names: list[str],
               loc: Loc | None) -> None:
        """``name`` (field ``path``) is one of ``names``, the design's ``what``s."""
        if name in names:
            return
        listed = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8
                                         else "")
        named = "nothing" if name is None else f"'{name}'"
        self.fail(path, f"names {what} {named}, which the design does not declare",
                  name, f"name one of them; {_REBUILD}", loc,
                  limit=f"one of the design's {what}s: {listed or 'none'}")

    def at_least(self, path: str, value: int, low: int, loc: Loc | None) -> None:
        """``value`` (field ``path``) is ``low`` or more."""
        if value < low:
            self.fail(path, f"is {value}", value, f"give {low} or more; {_REBUILD}", loc,
                      limit=f"{low} or more")

    def index(self, path: str, value: int, n: int, of: str, loc: Loc | None) -> None:
        """``value`` (field ``path``) is an index into ``n`` things, ``of`` says which."""
        if not 0 <= value < n:
            self.fail(path, f"is {value}, outside {of}", value, f"give 0 to {n - 1}; {_REBUILD}",
                      loc, limit=f"0 to {n - 1}")

    def within(self, path: str, value: int, low: int, high: int, loc: Loc | None,
               what: str) -> None:
        """``value`` (field ``path``) is from ``low`` to ``high``, ``what`` says of what."""
        if not low <= value <= high:
            self.fail(path, f"is {value}", value, f"give {low} to {high}; {_REBUILD}", loc,
                      limit=f"{low} to {high} ({what})")

    def dtype(self, path: str, name: str, near: Loc | None) -> None:
        """``name`` (field ``path``) is a dtype aiedsl knows."""
        from aiedsl.dtypes import DTYPES

        if name not in DTYPES:
            self.fail(path, f"is '{name}', which aiedsl does not know", name,
                      f"use one of {', '.join(DTYPES)}", near,
                      limit="one of " + ", ".join(DTYPES))

    def front(self, path: str, loc: Loc | None, check: Callable[..., object], *args: Any,
              **kwargs: Any) -> None:
        """Run one of the front end's own checks on field ``path`` (one rule, one function:
        the JSON cannot drift from what a design file may write); its DesignError comes back
        as one of rule ``design IR``, naming the field, with the front end's limit and fix."""
        try:
            check(*args, **kwargs)
        except DesignError as e:
            if loc is not None and loc.line < 0:
                loc = None
            raise DesignError(RULE, f"{self.source}: {path}: {e.message}", loc=loc,
                              limit=e.limit, found=e.found, fix=e.fix) from None

    def herd_size(self, path: str, cols: int, rows: int, loc: Loc) -> None:
        """A herd the front end would trace (before its cells are laid out one by one)."""
        from aiedsl.lang.core import herd_traceable

        t = self.target
        if not herd_traceable(cols, rows, t):
            self.fail(f"{path}.cols", f"and rows make a {cols}x{rows} herd, which does not fit "
                      f"on {t.name}", [cols, rows], f"give a herd that fits; {_REBUILD}", loc,
                      limit=f"{t.cols} column(s) x {t.rows} core row(s)")

    def local_init(self, path: str, init: str | None, t: TensorType, loc: Loc) -> None:
        """A local's initial value is the bytes of its type, in hexadecimal, as local() writes
        them (``ndarray.tobytes().hex()``: lowercase, two digits a byte)."""
        if init is None:
            return
        if len(init) != 2 * t.nbytes or re.fullmatch(r"[0-9a-f]*", init) is None:
            self.fail(path, f"is not the {t.nbytes} bytes of a {t} buffer in hexadecimal",
                      init, f"give {2 * t.nbytes} lowercase hexadecimal digits, or null for "
                      f"none; {_REBUILD}", loc,
                      limit=f"{2 * t.nbytes} hexadecimal digits (0-9, a-f)")
