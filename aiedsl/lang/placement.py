"""Pins: ``memtile``, ``shim`` and ``tile(col, row)`` say where an endpoint goes.

``via=memtile`` lets the placer choose the memtile; ``via=memtile(2)`` pins column 2.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiedsl.errors import DesignError, caller_loc


@dataclass(frozen=True)
class TilePin:
    """A tile kind, optionally pinned to a column (and row)."""

    kind: str
    col: int | None = None
    row: int | None = None

    def __call__(self, col: int, row: int | None = None) -> "TilePin":
        """Pin this kind of tile to column ``col``."""
        for what, v in (("column", col), ("row", row)):
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
                raise DesignError("placement", f"{self.kind}({col!r}) pins to {what} {v!r}",
                                  loc=caller_loc(), limit="a non-negative int",
                                  found=repr(v), fix=f"write e.g. {self.kind}(0)")
        return TilePin(self.kind, col, row)

    def coord(self, default_row: int) -> tuple[int, int] | None:
        """(col, row) when pinned, else None."""
        return None if self.col is None else (self.col, self.row if self.row is not None
                                              else default_row)

    def __repr__(self) -> str:
        return self.kind if self.col is None else f"{self.kind}({self.col})"


memtile = TilePin("memtile")
"""The memtile (L2) row: ``via=memtile`` or ``via=memtile(col)``."""
shim = TilePin("shim")
"""The shim (host interface) row: ``shim=shim(col)`` pins a fifo's host end."""
