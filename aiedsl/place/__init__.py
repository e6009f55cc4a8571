"""Placement: decide the tile of every herd, memtile link and shim endpoint."""

from aiedsl.place.placer import place

__all__ = ["place"]
