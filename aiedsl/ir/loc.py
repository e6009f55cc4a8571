"""Source locations carried by every IR node."""

from __future__ import annotations

from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, PrivateAttr

from aiedsl.ir.field_docs import describe_fields


class Loc(BaseModel):
    """A line of a design file (``file`` as the user reads it, relative to the working
    directory).

    ``file`` is for reading, not for opening: it is relative to the working directory of the
    moment the line was recorded (or, read back from ``design.json``, to the design's folder),
    so a process that changed directory since would open another file by it. :attr:`path` is
    the file to open. It is kept beside the IR, not in it: ``design.json`` and every other
    output stay the same wherever the design and the working directory are."""

    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_extra=describe_fields)

    file: str
    """Path of the file, relative to the working directory when below it."""
    line: int
    """1-based line number."""
    _path: str | None = PrivateAttr(default=None)
    """The file itself, absolute, when it was known as the line was recorded."""

    @property
    def path(self) -> str:
        """The file to open to read this line: where it was when the line was recorded,
        whatever the working directory is now; :attr:`file` when that is not known (a location
        made by hand, or read from JSON without the design's folder)."""
        return self._path or self.file

    def at_path(self, path: str | None) -> Loc:
        """This location, its file to be opened at ``path`` (an absolute path; None: not
        known)."""
        new = self.model_copy()
        new._path = path
        return new

    # A location is its file and line as the user reads them: the path it is opened at is no
    # part of it (the same line read back from design.json is the same location).
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Loc):
            return NotImplemented
        return self.file == other.file and self.line == other.line

    def __hash__(self) -> int:
        return hash((self.file, self.line))

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


def with_locs(node: Any, change: Callable[[Loc], Loc]) -> Any:
    """``node`` (a design, any part of one, or a list or dict of them) with every ``Loc`` in it
    replaced by ``change(loc)``; the nodes nothing changed in are kept as they are."""
    if isinstance(node, Loc):
        return change(node)
    if isinstance(node, BaseModel):
        changed = {}
        for name in type(node).model_fields:
            value = getattr(node, name)
            new = with_locs(value, change)
            if new is not value:
                changed[name] = new
        return node.model_copy(update=changed) if changed else node
    if isinstance(node, (list, tuple)):
        items = [with_locs(v, change) for v in node]
        same = all(a is b for a, b in zip(items, node))
        return node if same else type(node)(items)
    if isinstance(node, dict):
        pairs = {k: with_locs(v, change) for k, v in node.items()}
        return node if all(pairs[k] is v for k, v in node.items()) else pairs
    return node
