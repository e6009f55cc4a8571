"""One target model per device; :func:`get_target` is the only way in.

The models load on first use (a module ``__getattr__``, PEP 562): the command line reads
:data:`DEFAULT_DEVICE` as it starts, before any command needs pydantic to build them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aiedsl.ir.loc import Loc
    from aiedsl.targets.devices import DEVICES, device_hint, wider_device
    from aiedsl.targets.limits import ShimMux, TileLimits
    from aiedsl.targets.model import CASCADE_BITS, TargetModel, TileKind
    from aiedsl.targets.timing import TimingModel

__all__ = ["CASCADE_BITS", "DEFAULT_DEVICE", "DEVICES", "device_hint", "ShimMux", "TargetModel",
           "TileKind", "TileLimits", "TimingModel", "get_target", "known_target", "wider_device"]

DEFAULT_DEVICE = "npu1"
"""The device a design, a library kernel or a ``kernel`` command is for when none is named
(``design()``'s default, a kernel declared outside any design, ``aiedsl kernel cost``)."""

_LAZY = {"CASCADE_BITS": "model", "DEVICES": "devices", "device_hint": "devices",
         "wider_device": "devices",
         "ShimMux": "limits", "TargetModel": "model", "TileKind": "model", "TileLimits": "limits",
         "TimingModel": "timing"}
"""Where each name this package exports lives, loaded when first asked for."""


def __getattr__(name: str) -> Any:
    """The exported name ``name`` from its module, which is imported now."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def get_target(name: str) -> TargetModel:
    """The target model of mlir-aie device ``name``; KeyError naming the known devices otherwise."""
    from aiedsl.targets.devices import DEVICES, device_hint

    if name not in DEVICES:
        hint = device_hint(name)
        raise KeyError(f"unknown device {name!r}; " + (
            f"did you mean {hint}?" if hint else f"known: {', '.join(DEVICES)}"))
    return DEVICES[name]


def known_target(device: object, loc: Loc | None) -> TargetModel:
    """The target model of ``device`` as a design or a kernel names it (``design(device=...)``,
    a library kernel's ``device=``); a DesignError at ``loc`` naming the device it most likely
    means (:func:`device_hint`), or the known ones, otherwise."""
    from aiedsl.errors import DesignError
    from aiedsl.targets.devices import DEVICES, device_hint

    if not isinstance(device, str) or device not in DEVICES:
        hint = device_hint(device)
        raise DesignError("device", f"unknown device {device!r}", loc=loc, found=str(device),
                          fix=f"use {hint}" if hint else "use one of " + ", ".join(DEVICES))
    return DEVICES[device]
