"""One target model per device; :func:`get_target` is the only way in."""

from __future__ import annotations

from aiedsl.errors import DesignError
from aiedsl.ir.loc import Loc
from aiedsl.targets.devices import DEVICES, device_hint
from aiedsl.targets.model import ShimMux, TargetModel, TileKind, TileLimits
from aiedsl.targets.timing import TimingModel

__all__ = ["DEVICES", "device_hint", "ShimMux", "TargetModel", "TileKind", "TileLimits",
           "TimingModel", "get_target", "known_target"]


def get_target(name: str) -> TargetModel:
    """The target model of mlir-aie device ``name``; KeyError naming the known devices otherwise."""
    if name not in DEVICES:
        hint = device_hint(name)
        raise KeyError(f"unknown device {name!r}; " + (
            f"did you mean {hint}?" if hint else f"known: {', '.join(DEVICES)}"))
    return DEVICES[name]


def known_target(device: object, loc: Loc | None) -> TargetModel:
    """The target model of ``device`` as a design or a kernel names it (``design(device=...)``,
    a library kernel's ``device=``); a DesignError at ``loc`` naming the device it most likely
    means (:func:`device_hint`), or the known ones, otherwise."""
    if not isinstance(device, str) or device not in DEVICES:
        hint = device_hint(device)
        raise DesignError("device", f"unknown device {device!r}", loc=loc, found=str(device),
                          fix=f"use {hint}" if hint else "use one of " + ", ".join(DEVICES))
    return DEVICES[device]
