"""Placement, allocation and routing: where everything goes, and how the streams get there."""

from aiedsl.place.alloc import allocate
from aiedsl.place.placer import place
from aiedsl.place.route import route

__all__ = ["allocate", "place", "route"]
