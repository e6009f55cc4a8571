"""Buffer-descriptor lengths: what one BD of an objectfifo's DMA chain moves fits its length field.

mlir-aie's objectfifo lowering gives every buffer of a fifo end one BD that moves the whole buffer
(or, on a memtile link, one BD per part). The BD's length field counts 4-byte words in 14 bits on
a core and 17 on a memtile (:attr:`aiedsl.targets.limits.TileLimits.bd_len_words`); mlir-aie's
``AIEDmaToNpu`` and aie-rt write only its low bits, and before mlir-aie PR 3398 (July 2026: the
same limits in ``DMABDOp::verify``) no verifier looked, so a buffer one word too long (a 512 KB
memtile element, a 64 KB core one) became a transfer of almost nothing and the run hung with no
error anywhere.
"""

from __future__ import annotations

from aiedsl.errors import DesignError
from aiedsl.place.objectfifo import Lowering
from aiedsl.targets import TargetModel


def check_bd_lengths(low: Lowering, target: TargetModel) -> None:
    """Refuse a BD of the lowering planned in ``low`` longer than its tile's length field holds.

    Example: ``fifo(Tensor[256, 512, i32], depth=1).forward()``: the memtile's buffer is 131,072
    words, one more than a memtile BD can move.
    """
    for ch in low.channels:
        kind = ch.end.endpoint.tile_kind
        most = target.limits(kind).bd_len_words
        itemsize = ch.end.fifo.elem.dt.itemsize
        word = target.dma_granularity
        for bd in ch.chain:
            nbytes = bd.length * itemsize
            words = -(-nbytes // word)
            if words <= most:
                continue
            store = low.store_of[ch.end.symbol]
            raise DesignError(
                "BD length", f"fifo '{ch.end.fifo.name}' moves {nbytes:,} bytes in one buffer "
                f"descriptor of {kind} {ch.tile} ({ch.direction} of buffer {bd.buffer})",
                loc=store.loc, limit=f"{most:,} {word}-byte words ({word * most:,} bytes) per "
                f"BD on a "
                f"{kind}: the BD's length field is {most.bit_length()} bits, and mlir-aie "
                "writes only its low bits (the transfer would move the wrong amount and the run "
                "hang)", found=f"{words:,} words",
                fix="use smaller elements (the same data in more, smaller pieces: e.g. half "
                "the rows per acquire, the runtime moving the tensor in tiles)")
