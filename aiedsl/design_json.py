"""The one way back from ``design.json``: :func:`load_json` reads it, has pydantic check its
shape (every field there, of its type) and :func:`~aiedsl.validate.validate` its rules.

What pydantic refuses is worded here as the rules' refusals are: a DesignError of rule
``design IR`` naming where the IR came from, the field by its path as the JSON spells it
(``cores[0].body[0].count``), the value found and the fix, at the design line of the nearest
object that records one.

Example
-------
>>> from aiedsl import load_json
>>> d = load_json("build/passthrough/design.json", home="designs")    # doctest: +SKIP
>>> d.name                                                              # doctest: +SKIP
'passthrough'
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from aiedsl.errors import DesignError, display_path
from aiedsl.ir.design import IR_VERSION, Design
from aiedsl.ir.loc import Loc, with_locs
from aiedsl.validate import _REBUILD, RULE, _shown, _version_error, validate


def load_json(source: str | Path, *, home: str | Path | None = None) -> Design:
    """The design IR in ``source``: the text of a ``design.json``, or the path of one (a
    :class:`~pathlib.Path`, or a string that is not JSON text), validated as :func:`validate`
    does. A DesignError (rule ``design IR``) for a file that cannot be read, text that is not
    JSON, another version of the schema, a field missing or of the wrong type, and every rule
    :func:`validate` holds the IR to.

    ``home`` is the design file's folder, which ``design.json`` names files relative to: the
    IR's locations are then opened there (:attr:`~aiedsl.ir.loc.Loc.path`), so a kernel's C++
    beside the design is found whatever the working directory. Without it they are opened
    relative to the working directory, as their names read.

    Example
    -------
    >>> d = load_json(Path("build/passthrough/design.json"), home="designs")  # doctest: +SKIP
    """
    text, where = _read(source)
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except ValueError as e:
        raise DesignError(RULE, f"{where} is not JSON: {e}", found=_excerpt(text),
                          fix="give the text of a design.json, or its path") from None
    except RecursionError:  # Python's parser recurses per nested array or object
        raise DesignError(RULE, f"{where} nests arrays or objects deeper than Python's JSON "
                          "reader goes (its recursion limit)",
                          found=_excerpt(text), limit="the nesting of a design.json (a "
                          "loop's body in a loop's body: a few levels)",
                          fix="give the text of a design.json, or its path") from None
    if not isinstance(data, dict):
        raise DesignError(RULE, f"{where} holds a JSON {type(data).__name__}, not a design",
                          found=_excerpt(text), fix="give the text of a design.json, or its path")
    version = data.get("ir_version")
    if version != IR_VERSION:  # before the fields: another version's may mean other things
        _version_error(where, "ir_version" in data, version, None)
    try:
        # strict: a number given as a string ("count": "4") or a boolean (true for 1) is a
        # tool's mistake the IR would otherwise take in silence; JSON arrays stand for tuples
        d = Design.model_validate_json(text, strict=True)
        if home is not None:
            folder = os.path.realpath(home)
            d = with_locs(d, lambda loc: loc if loc.file.startswith("<") else loc.at_path(
                os.path.realpath(os.path.join(folder, loc.file))))
        _kernels_at_home(d, os.path.realpath(home if home is not None else "."), where)
        return validate(d, where)
    except ValidationError as e:
        raise _shape_error(where, e, data) from None
    except RecursionError:  # loops nested in loops past what the walks over the IR take
        raise DesignError(RULE, f"{where} nests loops deeper than aiedsl reads "
                          "(Python's recursion limit)",
                          found=_excerpt(text), limit="loops nested a few levels deep",
                          fix=f"nest fewer loops; {_REBUILD}") from None


def _kernels_at_home(d: Design, folder: str, where: str) -> None:
    """A kernel's C++ or template is looked for beside the file its ``loc`` names: read from
    JSON, that file must lie in the design's folder (``home=``) or below it, or a design.json
    could have any folder's C++ compiled and run, or any template rendered."""
    for i, k in enumerate(d.kernels):
        if k.shipped:
            continue
        # a declaration's file that is no file (<stdin>, a notebook's cell) puts the source in
        # the working directory (kernels.source.source_file), which must lie there too
        at = os.path.realpath("<" if k.loc.file.startswith("<") else k.loc.path)
        if os.path.commonpath([folder, at]) != folder:
            raise DesignError(
                RULE, f"{where}: kernels[{i}].loc.file puts the source of kernel '{k.symbol}' "
                "outside the design's folder", found=k.loc.file,
                limit=f"a file in {display_path(folder) or '.'} (home=) or below it: a "
                "kernel's C++ is looked for beside the file that declared it",
                fix="load the design.json with home= the design file's folder; a kernel "
                "declared in a module outside that folder is read back by building from the "
                "design file itself (aiedsl build), which imports the module")


def _no_constant(name: str) -> None:
    """Refuse ``NaN``, ``Infinity`` and ``-Infinity``, which Python's reader takes but JSON
    has not (RFC 8259, section 6) and no design.json aiedsl writes holds."""
    raise ValueError(f"{name} is no JSON number (a design IR's numbers are finite)")


def _read(source: str | Path) -> tuple[str, str]:
    """The text of ``source`` (text, or a path) and how messages name it."""
    if isinstance(source, str) and source.lstrip()[:1] in ("{", "["):
        return source, "the design IR text"
    path = Path(source)
    shown = display_path(str(path))
    try:
        return path.read_text(encoding="utf-8"), shown
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise DesignError(RULE, f"cannot read {shown}: {reason}", found=shown,
                          fix="give the path of a design.json (aiedsl build writes one into the "
                          "build directory), or its text") from None


def _excerpt(text: str) -> str:
    """The start of ``text``, on one line, as a message quotes it."""
    flat = " ".join(text.split())
    return repr(flat[:60] + ("..." if len(flat) > 60 else ""))


def _shape_error(where: str, e: ValidationError, data: Any) -> DesignError:
    """pydantic's first complaint about ``data`` as a DesignError: the field's path as the
    JSON spells it (pydantic's own adds the tag of each op and argument), its value, and
    pydantic's words."""
    errors = e.errors()
    first = errors[0]
    paths = [_json_path(err["loc"], data, err["type"] == "missing")[0] for err in errors]
    path, node = _json_path(first["loc"], data, first["type"] == "missing")
    # a value of a union type (a define's bool, int, float or str) fails once per member at
    # the same place: one complaint naming every type it may have
    same = [err for err, at in zip(errors, paths) if at == path]
    msg = first["msg"]
    if len(same) > 1 and all(err["msg"].startswith(_SHOULD) for err in same):
        kinds = list(dict.fromkeys(err["msg"][len(_SHOULD):] for err in same))
        msg = _SHOULD + ", ".join(kinds[:-1]) + " or " + kinds[-1]
    # the other fields wrong, each once (a union's complaints are one field's)
    rest = len(set(paths) - {path}) + (0 if msg != first["msg"] else len(same) - 1)
    more = f" (and {rest} more)" if rest else ""
    value = first.get("input")
    found = "nothing" if first["type"] == "missing" else _shown(value)
    return DesignError(
        RULE, f"{where}: {path or 'the design'}: {msg}{more}", loc=_loc_in(node),
        found=found, fix=f"give {path or 'the design'} as the design IR has it; {_REBUILD}")


_SHOULD = "Input should be "
"""How pydantic's type complaints start."""


_GONE = object()
"""Where a path leaves the JSON (a missing key's place): nothing there."""


def _json_path(loc: tuple[Any, ...], data: Any, missing: bool = False) -> tuple[str, Any]:
    """pydantic's error location ``loc`` in ``data`` as the JSON spells it
    (``cores[0].body[0].count``), and the innermost object on the way with a ``loc`` (for its
    line). ``missing``: the error is of a field that is not there (its name is then part of the
    path; any other name no key of the JSON holds is the tag of a union's member)."""
    out, node, inner = "", data, data
    for step in loc:
        if isinstance(step, int) and isinstance(node, list) and 0 <= step < len(node):
            out += f"[{step}]"
            node = node[step]
        elif isinstance(node, dict) and step in node:
            out += f".{step}" if out else str(step)
            node = node[step]
        elif isinstance(node, dict) and step in (node.get("op"), node.get("kind")):
            continue  # the tag pydantic names a union member by: no key of the JSON
        elif isinstance(step, str) and node is not _GONE and not missing:
            continue  # a member of a union of plain types (a define's "bool"): no key either
        else:
            out += f".{step}" if out else str(step)
            node = _GONE
        if isinstance(node, dict) and "loc" in node:  # a shape's or type's line is its owner's
            inner = node
    return out, inner


def _loc_in(node: Any) -> Loc | None:
    """The design line a JSON object records (its ``loc``), if it is a well-formed one."""
    loc = node.get("loc") if isinstance(node, dict) else None
    try:
        return Loc.model_validate(loc) if isinstance(loc, dict) else None
    except ValidationError:
        return None
