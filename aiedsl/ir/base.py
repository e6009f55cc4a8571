"""The base every node of the design IR shares (frozen, no fields beyond its own), and the
tile coordinate nodes are placed at."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

Coord = tuple[int, int]


class _Node(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
