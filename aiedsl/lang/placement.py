"""Pins: ``memtile``, ``shim`` and ``tile(col, row)`` say where an endpoint goes.

``via=memtile`` lets the placer choose the memtile; ``via=memtile(2)`` pins column 2;
``via=coretile(0, 2)`` forwards through the memory of core tile (0, 2).
"""

from __future__ import annotations

from dataclasses import dataclass

from aiedsl.errors import DesignError
from aiedsl.source_loc import caller_loc
from aiedsl.values import as_int, shown


@dataclass(frozen=True)
class TilePin:
    """A tile kind, optionally pinned to a column (and row)."""

    kind: str
    col: int | None = None
    row: int | None = None

    def __call__(self, col: int, row: int | None = None) -> "TilePin":
        """Pin this kind of tile to column ``col``."""
        at = []
        for what, v in (("column", col), ("row", row)):
            number = None if v is None else as_int(v)  # numpy's integers too, as plain ints
            if v is not None and (number is None or number < 0):
                raise DesignError("placement", f"{self.kind}({shown(col)}) pins to {what} "
                                  f"{shown(v)}", loc=caller_loc(), limit="a non-negative int",
                                  found=shown(v), fix=f"write e.g. {self.kind}(0)")
            at.append(number)
        return TilePin(self.kind, at[0], at[1])

    def coord(self, default_row: int) -> tuple[int, int] | None:
        """(col, row) when pinned, else None."""
        return None if self.col is None else (self.col, self.row if self.row is not None
                                              else default_row)

    def __repr__(self) -> str:
        if self.col is None:
            return self.kind
        return f"{self.kind}({self.col})" if self.row is None else \
            f"{self.kind}({self.col}, {self.row})"


memtile = TilePin("memtile")
"""The memtile (L2) row: ``via=memtile`` or ``via=memtile(col)``."""
coretile = TilePin("coretile")
"""A compute tile's memory as a link point: ``f.forward(via=coretile(0, 2))`` (a 1 -> 1 forward
only, as mlir-aie allows; ``coretile`` alone lets the placer take a tile no core runs on)."""
shim = TilePin("shim")
"""The shim (host interface) row: ``shim=shim(col)`` pins a fifo's host end."""
