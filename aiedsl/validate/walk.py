"""The walk of :func:`~aiedsl.validate.validate` over every node of a design IR: the rules
that hold wherever a location, a tensor type or a dtype appears, whichever model holds it.

Its own module because it is the one check that goes by the pydantic models' fields rather
than by what the design means, and the one whose speed counts: it visits every value.
"""
from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel

from aiedsl.ir.core_ops import RtpArg, ScalarArg
from aiedsl.ir.kernel import KernelArg
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import TensorType
from aiedsl.validate.fields import _REBUILD, Validator

MAX_LINE = 2 ** 32 - 1
"""Largest line a location may give: ``aie.mlir`` writes each as a ``loc("file":line:col)``,
and MLIR's ``FileLineColLoc`` holds its line as an ``unsigned`` (32 bits: mlir's
BuiltinLocationAttributes.td, ``FileLineColLoc::get``)."""

_PLAIN = frozenset({str, int, float, bool, type(None)})
"""The types of values :meth:`_Walk.walk` has nothing to check in (exactly these types:
a subclass, an enum's member, is walked)."""


def walk_design(v: Validator) -> None:
    """Every location, tensor type and dtype of ``v``'s design, wherever it is (see
    :meth:`_Walk.walk`)."""
    d = v.d
    _Walk(v).walk(d, "", d.loc)


class _Walk:
    """One walk over a design IR, with what it learnt of each model class it met."""

    def __init__(self, v: Validator) -> None:
        self.validator = v
        self.models: dict[type[BaseModel], tuple[tuple[str, ...], bool]] = {}
        """What :meth:`_model` found of each model class the walk met."""

    def walk(self, node: Any, path: str, near: Loc | None) -> None:
        """Every location's line is 0 (none known) or more; every tensor type has a known
        dtype and dimensions of 1 or more; every scalar's dtype is known. ``near``: the
        location of the innermost node around ``node`` that has one, for the message."""
        # a plain value holds nothing to check: it is passed by, not walked (most of an IR's
        # fields are plain, and naming each one's path cost validate() half its time)
        if type(node) is tuple or type(node) is list:  # the commonest: nothing else to ask
            for i, v in enumerate(node):
                if type(v) not in _PLAIN:
                    self.walk(v, f"{path}[{i}]", near)
            return
        if isinstance(node, Loc):
            if node.line < 0:
                self.validator.fail(
                    f"{path}.line", "is negative", node.line, "give the 1-based line, or "
                    f"0 for none; {_REBUILD}", near, limit="0 or more")
            if node.line > MAX_LINE:
                self.validator.fail(
                    f"{path}.line", f"is {node.line}, past the lines MLIR locations hold",
                    node.line, f"give the 1-based line, or 0 for none; {_REBUILD}", None,
                    limit=f"0 to {MAX_LINE} (MLIR's FileLineColLoc: an unsigned line)")
            return
        if isinstance(node, TensorType):
            from aiedsl.lang.tensor import MAX_ELEMENTS

            self.validator.dtype(f"{path}.dtype", node.dtype, near)
            for j, n in enumerate(node.shape):
                self.validator.at_least(f"{path}.shape[{j}]", n, 1, near)
            numel = math.prod(node.shape)
            if numel >= MAX_ELEMENTS:  # Tensor[...]'s own rule (lang/tensor.py)
                self.validator.fail(
                    f"{path}.shape", f"has {numel:,} elements", list(node.shape),
                    f"give a shape of fewer elements; {_REBUILD}", near,
                    limit=f"fewer than 2^31 = {MAX_ELEMENTS:,} elements")
            return
        if isinstance(node, (ScalarArg, RtpArg, KernelArg)):
            self.validator.dtype(f"{path}.dtype", node.dtype, near)
        if isinstance(node, BaseModel):
            fields, has_loc = self._model(type(node))
            if has_loc:
                here = getattr(node, "loc", None)
                near = here if isinstance(here, Loc) and here.line >= 0 else near
            for name in fields:
                v = getattr(node, name)
                if type(v) not in _PLAIN:
                    self.walk(v, f"{path}.{name}" if path else name, near)
        elif isinstance(node, (list, tuple)):
            for i, v in enumerate(node):
                if type(v) not in _PLAIN:
                    self.walk(v, f"{path}[{i}]", near)
        elif isinstance(node, dict):
            for k, v in node.items():
                if type(v) not in _PLAIN:
                    self.walk(v, f"{path}.{k}", near)

    def _model(self, cls: type[BaseModel]) -> tuple[tuple[str, ...], bool]:
        """A model class's fields, and whether its instances may have a ``loc`` (a field, a
        class attribute, or an extra field where the class allows them); kept per class."""
        known = self.models.get(cls)
        if known is None:
            fields = tuple(cls.model_fields)
            known = self.models[cls] = (fields, "loc" in fields or hasattr(cls, "loc")
                                        or cls.model_config.get("extra") == "allow")
        return known
