"""The device-wide shim channel check: the design's host ends need no more shim DMA channels of
a direction than every shim tile of the device has together.

It runs before each tile is checked (:mod:`aiedsl.checks.tile_limits`): where the total is over,
pinning a fifo's host end to another column cannot help, so the error lists every host end to
merge rather than the ones on one tile.
"""

from __future__ import annotations

import re

from aiedsl.checks.tile_usage import Coord, TileUsage
from aiedsl.errors import DesignError, counted
from aiedsl.targets import TargetModel, wider_device

SHOWN_USES = 8
"""The most host ends the device-wide shim channel error lists under its count: more are cut
to one fewer, and the count says how many are left out."""


def _check_shim_totals(table: dict[Coord, TileUsage], target: TargetModel) -> None:
    """Refuse host ends no placement fits: more fills (or drains) than every shim tile of the
    device has channels together, where pinning a fifo to another column cannot help."""
    shims = [u for u in table.values() if u.kind == "shim"]
    for direction, field_, per, fewer in (
            ("output (MM2S)", "dma_out", target.shim.dma_out,
             "fill fewer fifos from the host: one fifo filled once can feed several cores, "
             "split at a memtile (f.split(...)) or consumed by each (a broadcast)"),
            ("input (S2MM)", "dma_in", target.shim.dma_in,
             "drain fewer fifos to the host: one fifo drained once can gather several cores' "
             "results, joined at a memtile (join([...]))")):
        # by line, and on one line (a loop's fifos) by name, numbers as numbers: in0 .. in9,
        # in10, as the loop made them (the shim tiles' order listed in8 before in6)
        uses = sorted((x for u in shims for x in getattr(u, field_)),
                      key=lambda x: (x.loc.file, x.loc.line, _numbered(x.label)))
        have = per * target.cols
        if len(uses) <= have:
            continue
        # every host end that needs a channel, so the user sees all the fifos to merge (three
        # were listed under "found: 4"); a long list is cut, and says how many it leaves out
        shown = uses if len(uses) <= SHOWN_USES else uses[:SHOWN_USES - 1]
        left = len(uses) - len(shown)
        raise DesignError(
            f"shim DMA {direction} channels",
            f"the design's host ends need {len(uses)} shim DMA {direction} channels, and the "
            f"{counted(target.cols, 'shim tile')} of {target.name} "
            f"{'has' if target.cols == 1 else 'have'} {have}",
            loc=uses[have].loc, limit=f"{have} ({per} per shim tile, "
            f"{counted(target.cols, 'shim tile')}): no choice of columns can fit them",
            found=str(len(uses)) + (f" (the first {len(shown)} below, and {left} more)"
                                    if left else ""),
            related=[(x.label, x.loc) for x in shown],
            fix=fewer + (_core_over(table, target) or _wider(target, field_, len(uses))))


def _core_over(table: dict[Coord, TileUsage], target: TargetModel) -> str:
    """When a core tile needs more DMA channels of a direction than a core has, which no
    device gives it: the clause saying so (the fix then offers no wider device); else ""."""
    for u in table.values():
        if u.kind != "core":
            continue
        for direction, uses, limit in (("input", u.dma_in, target.core.dma_in),
                                       ("output", u.dma_out, target.core.dma_out)):
            if len(uses) > limit:
                return (f"; a device with more columns would not do: the core at {u.tile} also "
                        f"needs {len(uses)} DMA {direction} channels, and every core has "
                        f"{limit}")
    return ""


def _numbered(name: str) -> tuple[tuple[int, str], ...]:
    """``name`` as a sort key whose runs of digits compare as numbers (in9 before in10)."""
    return tuple((int(part), "") if part.isdigit() else (-1, part)
                 for part in re.split(r"(\d+)", name) if part)


def _wider(target: TargetModel, field_: str, need: int) -> str:
    """``, or a device with more columns (--device npu2_5col)``: the narrowest whose shim tiles
    have ``need`` channels of ``field_`` together, or nothing."""
    wider = wider_device(target, lambda t: getattr(t.shim, field_) * t.cols >= need)
    return f", or a device with more columns (--device {wider.name})" if wider else ""
