"""The BDs that apply a fifo end's layout (a link's memtile buffers, a part's BD of its own) and
how far a layout walks from a BD's offset."""

from __future__ import annotations

import numpy as np

from aiedsl.ir.design import Design
from aiedsl.ir.fifos import Endpoint, Fifo, Link
from aiedsl.ir.types import Dim


def _link_of(d: Design, f: Fifo, e: Endpoint) -> Link | None:
    """The link whose buffers a link end ``e`` of ``f`` moves data in (None for other ends)."""
    if not e.is_link_end:
        return None
    names = "dsts" if e is f.producer else "srcs"
    return next((link for link in d.links if f.name in getattr(link, names)), None)


def _bds(d: Design, f: Fifo, e: Endpoint) -> tuple[int, list[tuple[int, int]]]:
    """The buffer end ``e`` of ``f`` moves data in, in elements, and the (offset, length) of
    each BD over it that applies ``e``'s layout.

    mlir-aie's objectfifo lowering (``createMemTileDMA`` in AIEObjectFifoStatefulTransform.cpp)
    gives a link's memtile ends the link's buffers: a 1-to-1 link's hold the larger of its two
    elements and each BD moves all of it; a join's (split's) hold the joined (parent) element,
    and each part moves with a BD of its own, from the part's offset, of the part's length
    (``getJoinTransferLengths``/``getDistributeTransferLengths``; parts lie back to back, see
    :func:`~aiedsl.checks.links.check_links`), the end's dims on every one of them. The
    joined output's (split input's) end has one BD per part, a part's own end one BD.
    """
    link = _link_of(d, f, e)
    if link is None:
        return f.elem.numel, [(0, f.elem.numel)]
    if link.kind == "forward":
        size = max(d.fifo(x).elem.numel for x in (*link.srcs, *link.dsts))
        return size, [(0, size)]
    parent, names = ((link.dsts[0], link.srcs) if link.kind == "join"
                     else (link.srcs[0], link.dsts))
    parts = [(off, d.fifo(n).elem.numel) for off, n in zip(link.offsets, names)]
    if f.name != parent:
        parts = [parts[names.index(f.name)]]
    return d.fifo(parent).elem.numel, parts


def _max_index(dims: tuple[Dim, ...]) -> int:
    """The highest element a layout reaches from its offset, every size as written (mlir-aie's
    ``getDimsMaxIdx``)."""
    return sum((x.size - 1) * x.stride for x in dims)


def _inner(dims: tuple[Dim, ...]) -> int:
    """Elements of one step of the outermost dimension."""
    return int(np.prod([x.size for x in dims[1:]]))


def _walk_max(dims: tuple[Dim, ...], length: int) -> int:
    """The highest element a BD of ``length`` elements reaches from its offset: the outermost
    size is not encoded, so that dimension steps until ``length`` have moved (as the simulator's
    :func:`~aiedsl.ir.types.dims_index`); ``length`` is a multiple of :func:`_inner`."""
    return (length // _inner(dims) - 1) * dims[0].stride + _max_index(dims[1:])
