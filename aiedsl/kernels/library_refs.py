"""Which numpy references a design IR may name for aiedsl to import: the library's own.

A kernel's ``reference`` is ``module:function``. The simulator imports it only for a kernel
the design handle does not hold (an IR read back from ``design.json``), and only when it is
one of the library's references: a top-level function, by its plain name, defined in one of
the modules whose kernels aiedsl ships (:data:`LIBRARY_MODULES`). Anything else named in
``aiedsl``'s package (``aiedsl.kernels.host:subprocess.run``, a name the module imported
from elsewhere, a class, a private helper) is no reference: a tool editing ``design.json``
could otherwise make the simulator call any function reachable from aiedsl's modules.

Example
-------
>>> library_reference("aiedsl.kernels.library:passthrough_ref").__name__
'passthrough_ref'
>>> library_reference("aiedsl.kernels.host:subprocess.run") is None
True
"""

from __future__ import annotations

import importlib
import types
from typing import Callable

LIBRARY_MODULES = ("aiedsl.kernels.activations", "aiedsl.kernels.cascade",
                   "aiedsl.kernels.conv", "aiedsl.kernels.library", "aiedsl.kernels.matmul")
"""The modules that declare aiedsl's library kernels, each with its references beside it."""

LIBRARY_FORM = ("module:function of one of aiedsl's library references: a public function "
                "defined at the top of " + ", ".join(LIBRARY_MODULES))
"""The rule :func:`library_reference` keeps, as messages state it."""


def is_aiedsl(reference: str) -> bool:
    """Does ``reference`` (``module:function``) name something in aiedsl's package? Those
    are imported; a user's are not (:func:`library_reference`)."""
    module = reference.partition(":")[0]
    return module == "aiedsl" or module.startswith("aiedsl.")


def library_reference(reference: str) -> Callable[..., None] | None:
    """The library reference ``reference`` names, or None when it names none
    (:data:`LIBRARY_FORM`): only a module of :data:`LIBRARY_MODULES` is imported."""
    module, colon, name = reference.partition(":")
    if not colon or module not in LIBRARY_MODULES or not name.isidentifier() \
            or name.startswith("_"):
        return None
    fn = getattr(importlib.import_module(module), name, None)
    # defined there, under that name: not a name the module imported (its `np`, `os`)
    if not isinstance(fn, types.FunctionType) or fn.__module__ != module \
            or fn.__qualname__ != name:
        return None
    return fn
