"""DMA layout rules: the n-d patterns of runtime transfers and of fifo ``dims`` on each tile.

AIE2 DMAs count sizes and strides in 4-byte words (``aie2-facts.md`` s2): a transfer's innermost
run must be whole words, each wrap is at most ``max_dma_size``, a shim pattern has 3 dimensions
plus an iteration (repeat) dimension of at most ``max_shim_iterations``, and memtile and
compute-tile DMAs have 4 and 3 dimensions. A plain contiguous run is a linear transfer and is
exempt from the wrap limits.

The limits below are mlir-aie's, each cited where it is checked (sources read at upstream
commit 1e400306, 2026-03-14, the mlir-aie of ``shared/reference/mlir-aie-lowered``, and at the
PRs that changed them since; aiedsl takes the stricter where two versions differ, so a design it
accepts lowers on both):

* shim (runtime ``rt.fill``/``rt.drain``, lowered to ``aiex.npu.dma_memcpy_nd``): mlir-aie's
  ``AIEX::verifyStridesWraps`` and ``getHardwareStridesWraps`` (lib/Dialect/AIEX/IR/
  AIEXDialect.cpp);
* memtile and compute-tile BDs (a fifo's ``dims_to_stream``/``dims_from_stream``, copied into
  ``aie.dma_bd`` by the objectfifo lowering): ``DMABDOp::verify`` (lib/Dialect/AIE/IR/
  AIEDialect.cpp) and the BD field widths of the target model.

:func:`check_dma` runs the rules in order: each fifo's elements are whole words (here), then the
runtime patterns (:mod:`.transfers`), the layouts of splits and joins (:mod:`.link_dims`) and each
fifo end's layout (:mod:`.fifo_dims`). The rules of dimensions shared by shim patterns and BDs
are :mod:`.dims`'s, the BDs a fifo end's layout is applied by and how far it walks in them
:mod:`.bds`'s, and the fix for a link end's ``dims_from_stream`` :mod:`.moved_layout`'s.
"""

from __future__ import annotations

import math

from aiedsl.checks.dma.bds import _bds, _link_of
from aiedsl.checks.dma.fifo_dims import _check_fifo_dims, _repeat_how
from aiedsl.checks.dma.link_dims import _check_link_dims
from aiedsl.checks.dma.moved_layout import _moved_layout_fix
from aiedsl.checks.dma.transfers import _check_transfer
from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.ir.fifos import Endpoint, Fifo
from aiedsl.ir.runtime import Transfer
from aiedsl.ir.types import TensorType
from aiedsl.targets import TargetModel

# The limits are the target model's (TileLimits.bd_wrap, bd_max_elements, bd_step_words,
# TargetModel.max_bd_stride, dma_granularity), each with its mlir-aie source there.


def _whole_words_fix(elem: TensorType, gran: int) -> str:
    """Two ways to whole words for an element of ``elem``: several of it in one element, or
    its rows padded.

    >>> fix = _whole_words_fix(TensorType(shape=(1918,), dtype="u8"), 4)
    >>> fix[fix.index("2 of"):fix.index(", or")]
    '2 of these in one (Tensor[2, 1918, u8], 3836 bytes)'
    >>> fix[fix.index("or each"):]
    'or each row padded to 1920 elements (Tensor[1920, u8])'
    """
    times = gran // math.gcd(elem.nbytes, gran)
    per = gran // math.gcd(gran, elem.dt.itemsize)  # elements in a whole number of words
    padded = (*elem.shape[:-1], -(-elem.shape[-1] // per) * per)
    return (f"make each element a multiple of {gran} bytes: {times} of these in one "
            f"(Tensor[{times}, {', '.join(map(str, elem.shape))}, {elem.dtype}], "
            f"{times * elem.nbytes} bytes), or each row padded to {padded[-1]} elements "
            f"(Tensor[{', '.join(map(str, padded))}, {elem.dtype}])")


def check_dma(d: Design, target: TargetModel) -> None:
    """Check every runtime pattern and every fifo's ``dims_to_stream``/``dims_from_stream``
    against ``target``'s DMAs."""
    for f in d.fifos:
        if f.elem.nbytes % target.dma_granularity:
            raise DesignError(
                "dma pattern", f"fifo '{f.name}' has {f.elem.nbytes}-byte elements ({f.elem})",
                loc=f.loc, limit=f"whole {target.dma_granularity}-byte words (a DMA buffer "
                "descriptor counts its length in words)", found=f"{f.elem.nbytes} bytes",
                fix=_whole_words_fix(f.elem, target.dma_granularity))
    for t in d.runtime:
        if isinstance(t, Transfer):
            _check_transfer(d, t, target)
    _check_link_dims(d)
    for f in d.fifos:
        ends = [(f.producer, "dims_to_stream")] + [(c, "dims_from_stream") for c in f.consumers]
        for e, what in ends:
            if e.dims:
                buffer, bds = _bds(d, f, e)
                received = what == "dims_from_stream" and _memtile_writes_layout(d, f, e)
                moved = (_moved_layout_fix(d, f, e, target)
                         if e.is_link_end and what == "dims_from_stream" and not received
                         else "")
                _check_fifo_dims(f, e, what, target, buffer, bds, memtile_receives=received,
                                 repeat_how=_repeat_how(d, f, e, what), moved_fix=moved)


def _memtile_writes_layout(d: Design, f: Fifo, e: Endpoint) -> bool:
    """Does the memtile end ``e`` of ``f``, a split's or a forward's input, write what arrives
    in its ``dims_from_stream`` order?

    mlir-aie's objectfifo lowering puts a consumer's ``dimensionsFromStream`` on the BDs of its
    tile's S2MM channel, a memtile's too (AIEObjectFifoStatefulTransform.cpp,
    ``createMemTileDMA`` via ``createDMA``: a split input's on each part's BD, a forward's on
    the BD of the link's buffer), and ``ObjectFifoLinkOp::verify`` (AIEDialect.cpp) reads the
    input fifo's layout at the link's shared tile (IRON's ml/conv2d_14x14 writes its L3->L2
    fifo so). A join's inputs and a link through a core tile's memory are not modelled.
    """
    link = _link_of(d, f, e)
    return (e.kind == "memtile" and link is not None and f.name in link.srcs
            and link.kind in ("split", "forward"))
