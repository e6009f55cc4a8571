"""What the command line asks of a design file being loaded: its ``-D`` overrides, its
``--device``, and the value each ``define`` took.

Apart from the tracing context (:mod:`aiedsl.lang.context`) because the modules below it read
it too: a message about a value that came from a define names the define (``-D OUT=f16`` is
told as ``-D OUT``), and ``Tensor[...]`` (:mod:`aiedsl.lang.tensor`) sits below the trace.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Iterator

from aiedsl.ir.loc import Loc


@dataclass
class LoadContext:
    """What the command line asks of a design file being loaded."""

    overrides: dict[str, object] = field(default_factory=dict)
    """``-D NAME=VALUE`` pairs, values as given: text (``-D``'s, or a str from Python), read
    as the define's type; or a Python value of ``defines=`` (``{"N": 8192}``), which a define
    takes when it is of its type (:func:`aiedsl.lang.context.define`)."""
    caller: Loc | None = None
    """The Python line that called the load (``load_design``, ``build``) with ``defines=``,
    where a Python value a define refuses is reported; None from the command line."""
    device: str | None = None
    """``--device`` override."""
    used: dict[str, int | float | str] = field(default_factory=dict)
    """Every ``define`` evaluated, with the value it took."""
    lines: dict[str, Loc] = field(default_factory=dict)
    """The line of each ``define`` evaluated (where :func:`aiedsl.lang.context.refuse` points)."""
    owners: dict[str, str | None] = field(default_factory=dict)
    """The design whose function evaluated each ``define`` (None: the file's top level): two
    designs of one file may each define a name of their own."""
    file: str | None = None
    """The design file being loaded, as its locations name it: the one file that may call
    ``define`` (None: any may)."""

    def defines_of(self, text: str) -> list[str]:
        """The defines whose value is the text ``text``, in the order they were defined: where
        a name the design uses (a dtype's, ``OUT = define("OUT", "f32")``) came from."""
        return [name for name, value in self.used.items()
                if isinstance(value, str) and value == text]


_LOAD: ContextVar[LoadContext | None] = ContextVar("aiedsl_load", default=None)


@contextmanager
def loading(ctx: LoadContext) -> Iterator[LoadContext]:
    """Run a design file's top level with ``ctx`` active."""
    token = _LOAD.set(ctx)
    try:
        yield ctx
    finally:
        _LOAD.reset(token)


def load_context() -> LoadContext | None:
    """The active load context, if a design file is being loaded by aiedsl."""
    return _LOAD.get()
