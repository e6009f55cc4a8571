"""The base every node of the design IR shares (frozen, no fields beyond its own), and the
tile coordinate nodes are placed at."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from aiedsl.ir.field_docs import describe_fields

Coord = tuple[int, int]


class _Node(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_extra=describe_fields)
