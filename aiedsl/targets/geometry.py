"""The words the target model speaks of the array in: the kinds of tile, the four directions
between neighbours, a step in each, and mlir-aie's stream-switch bundle toward each."""

from __future__ import annotations

from typing import Literal

TileKind = Literal["shim", "memtile", "core"]
Direction = Literal["north", "south", "east", "west"]
STEP: dict[Direction, tuple[int, int]] = {"north": (0, 1), "south": (0, -1), "east": (1, 0),
                                           "west": (-1, 0)}
"""(dcol, drow) of one step in each direction; rows grow northward (shim row 0 is south)."""


def direction_of(a: tuple[int, int], b: tuple[int, int]) -> Direction:
    """The direction of one step from tile ``a`` to its neighbour ``b``."""
    step = (b[0] - a[0], b[1] - a[1])
    return next(d for d, s in STEP.items() if s == step)


OPPOSITE: dict[Direction, Direction] = {"north": "south", "south": "north", "east": "west",
                                        "west": "east"}
BUNDLE: dict[Direction, str] = {"north": "North", "south": "South", "east": "East",
                               "west": "West"}
"""mlir-aie's ``WireBundle`` name of the stream switch ports toward each neighbour."""
