"""One target model per device; :func:`get_target` is the only way in."""

from __future__ import annotations

from aiedsl.targets.devices import DEVICES, device_hint
from aiedsl.targets.model import ShimMux, TargetModel, TileKind, TileLimits
from aiedsl.targets.timing import TimingModel

__all__ = ["DEVICES", "device_hint", "ShimMux", "TargetModel", "TileKind", "TileLimits",
           "TimingModel", "get_target"]


def get_target(name: str) -> TargetModel:
    """The target model of mlir-aie device ``name``; KeyError naming the known devices otherwise."""
    if name not in DEVICES:
        hint = device_hint(name)
        raise KeyError(f"unknown device {name!r}; " + (
            f"did you mean {hint}?" if hint else f"known: {', '.join(DEVICES)}"))
    return DEVICES[name]
