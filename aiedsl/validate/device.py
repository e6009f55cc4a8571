"""The checks of :func:`~aiedsl.validate.validate` against the device: that aiedsl knows the
design's device (every other check reads its target), and, for a placed design, that every
core, fifo end and link is on a tile of the device of its kind.
"""
from __future__ import annotations

from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.validate.fields import _REBUILD, Validator


def check_device(v: Validator, d: Design) -> None:
    """``d``'s device is one aiedsl knows."""
    from aiedsl.targets import DEVICES, device_hint

    if d.device not in DEVICES:
        hint = device_hint(d.device)
        v.fail("device", f"is '{d.device}', which aiedsl does not know",
               d.device, f"use {hint}" if hint else "use one of them (the device the "
               "design was built for)", d.loc, limit="one of " + ", ".join(DEVICES))


def check_placed(v: Validator) -> None:
    """Placed: every core, fifo end and link on a tile of its kind (on ``v.target``, the
    device's, which :func:`~aiedsl.validate.validate` set)."""
    d = v.d
    if not d.placed:
        v.fail("placed", "is false: this design is not placed", False,
               "give the placed design check_design returns (a build's design.json "
               "holds one), or leave placed= out to check and place this one", d.loc)
    target = v.target

    def on(path: str, tile: tuple[int, int] | None, kind: str, loc: Loc) -> None:
        if tile is None:
            v.fail(path, "is not decided in a placed design", None,
                   f"give the {kind} tile it is on; {_REBUILD}", loc)
        if target.kind_of(tile) != kind:
            v.fail(path, f"is {list(tile)}, not a {kind} tile of {d.device}", list(tile),
                   f"give the {kind} tile it is on; {_REBUILD}", loc)

    for i, core in enumerate(d.cores):
        on(f"cores[{i}].tile", core.tile, "core", core.loc)
    for i, f in enumerate(d.fifos):
        ends = [("producer", f.producer)] + [(f"consumers[{j}]", c)
                                             for j, c in enumerate(f.consumers)]
        for name, e in ends:
            on(f"fifos[{i}].{name}.tile", e.tile, e.tile_kind, e.loc)
    for i, link in enumerate(d.links):
        on(f"links[{i}].tile", link.tile, "memtile" if link.via == "memtile" else "core",
           link.loc)
