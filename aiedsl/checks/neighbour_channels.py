"""The memtile spill channel check: a memtile DMA channel that moves a buffer spilled to a
neighbouring memtile is one of the low channels that reach a neighbour's memory.

Rule 4 of :mod:`aiedsl.place.objectfifo`, as mlir-aie's objectfifo lowering assigns channels
(``analyzeCrossTileFIFOBuffers``, then ``assignDMAChannelIndices`` for those ends first): only
channels below ``getMaxChannelNumForAdjacentMemTile``
(:attr:`~aiedsl.targets.limits.TileLimits.neighbour_channels`) reach a neighbour, and a memtile
whose spilled ends need more fails the lowering with "number of input/output DMA channel
exceeded!".
"""

from __future__ import annotations

from aiedsl.errors import DesignError
from aiedsl.place.objectfifo import Lowering
from aiedsl.targets import TargetModel


def _check_neighbour_channels(low: Lowering, target: TargetModel) -> None:
    """A memtile DMA channel moving a buffer that spilled to a neighbouring memtile must be a
    low one (:attr:`~aiedsl.targets.limits.TileLimits.neighbour_channels`; objectfifo rule 4)."""
    cap = target.memtile.neighbour_channels
    if cap is None:
        return
    for ch in low.channels:
        if not ch.neighbour or ch.channel < cap:
            continue
        same = [c for c in low.channels if c.neighbour and c.tile == ch.tile
                and c.direction == ch.direction]
        store = low.store_of[ch.end.symbol]
        away = sorted({t for t in store.tiles if t != store.tile})
        raise DesignError(
            "memtile DMA channels", f"memtile {ch.tile} needs {len(same)} {ch.direction} "
            f"channels for fifos with buffers spilled to a neighbouring memtile "
            f"({', '.join(f'memtile {t}' for t in away)}), and only channels 0-{cap - 1} reach "
            "a neighbour's memory", loc=ch.end.endpoint.loc,
            limit=f"{cap} {ch.direction} channels per memtile (mlir-aie "
            "getMaxChannelNumForAdjacentMemTile; its objectfifo lowering fails 'number of "
            f"{'output' if ch.direction == 'MM2S' else 'input'} DMA channel exceeded!')",
            found=str(len(same)),
            related=[(f"{c.end.fifo.name} ({c.direction} {c.channel})", c.end.endpoint.loc)
                     for c in same],
            fix="give the memtile's largest fifos fewer buffers so that they fit their own "
            "memtile, or split/join over fewer parts")
