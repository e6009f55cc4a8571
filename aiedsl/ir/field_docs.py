"""The design IR's JSON schema describes each field by its docstring (the string under it in
the class body), read when a schema is asked for.

pydantic's own ``use_attribute_docstrings`` reads every model's source as its module loads:
0.1 s of CPU in every ``aiedsl`` command, which never asks for a schema. Each IR model's config
names :func:`describe_fields` as its ``json_schema_extra`` instead, which pydantic calls with
the model's schema as it makes one.

>>> from aiedsl.ir.types import TensorType
>>> "description" in TensorType.model_json_schema()["properties"]["shape"]
True
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from typing import Any


def describe_fields(schema: dict[str, Any], cls: type) -> None:
    """Give each property of model ``cls``'s ``schema`` that has none the docstring of its
    field (the class's own, or the nearest base's that declares the field)."""
    docs = attribute_docs(cls)
    for name, prop in schema.get("properties", {}).items():
        if name in docs and isinstance(prop, dict) and "description" not in prop:
            prop["description"] = docs[name]


@functools.cache
def attribute_docs(cls: type) -> dict[str, str]:
    """``{field: docstring}`` of the annotated attributes of ``cls`` and its bases (a subclass's
    docstring over its base's), each cleaned as :func:`inspect.cleandoc` cleans one."""
    docs: dict[str, str] = {}
    for base in reversed(cls.__mro__):
        if base.__module__.startswith("aiedsl."):
            docs.update(_own_docs(base))
    return docs


def _own_docs(cls: type) -> dict[str, str]:
    """The docstrings under the annotated attributes in ``cls``'s own body."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):  # no source to read (a frozen build)
        return {}
    node = tree.body[0]
    if not isinstance(node, ast.ClassDef):
        return {}
    out = {}
    for a, b in zip(node.body, node.body[1:]):
        if (isinstance(a, ast.AnnAssign) and isinstance(a.target, ast.Name)
                and isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant)
                and isinstance(b.value.value, str)):
            out[a.target.id] = inspect.cleandoc(b.value.value)
    return out
