"""Where a link end's ``dims_from_stream`` goes instead: the fix of the rule that refuses it,
naming only places that take the layout unchanged (a receiving core, or the link's sending side
in the inverse order)."""

from __future__ import annotations

import numpy as np

from aiedsl.checks.dma.bds import _link_of
from aiedsl.checks.dma.dims import _check_dims
from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.ir.fifos import Endpoint, Fifo
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import Dim
from aiedsl.targets import TargetModel


def inverse_layout(dims: tuple[Dim, ...], numel: int) -> tuple[Dim, ...] | None:
    """The layout that reads, in order, what ``dims`` writes: ``dims`` writes stream element k
    at address P(k); the result reads address Q(m) as stream element m, Q = P^-1. None unless
    ``dims`` visits each of the ``numel`` addresses once (its dimensions, ordered by stride,
    are a row-major walk of the element): a transpose or block permutation.

    >>> inverse_layout((Dim(size=16, stride=1), Dim(size=32, stride=16)), 512)
    (Dim(size=32, stride=1), Dim(size=16, stride=32))
    """
    real = [i for i, x in enumerate(dims) if x.size > 1]
    if not real or int(np.prod([dims[i].size for i in real])) != numel:
        return None
    by_stride = sorted(real, key=lambda i: dims[i].stride, reverse=True)
    step = 1
    for i in reversed(by_stride):
        if dims[i].stride != step:
            return None
        step *= dims[i].size
    natural = {i: int(np.prod([dims[j].size for j in real if j > i])) for i in real}
    return tuple(Dim(size=dims[i].size, stride=natural[i]) for i in by_stride)


def _bd_ok(dims: tuple[Dim, ...], itemsize: int, kind: str, target: TargetModel) -> bool:
    """Would ``dims`` pass the BD rules of a ``kind`` (memtile or core) DMA?"""
    if len(dims) > target.limits(kind).dma_dims:  # type: ignore[arg-type]
        return False
    try:
        _check_dims("", tuple(x.size for x in dims), tuple(x.stride for x in dims), itemsize,
                    target, Loc(file="", line=0), "", tile=kind,
                    strided_inner=itemsize == target.dma_granularity)
    except DesignError:
        return False
    return True


def _shown(dims: tuple[Dim, ...]) -> str:
    return "[" + ", ".join(f"({x.size}, {x.stride})" for x in dims) + "]"


def _moved_layout_fix(d: Design, f: Fifo, e: Endpoint, target: TargetModel) -> str:
    """Where the layout a link end would write with (its dims_from_stream) goes instead.

    Two places write the same element: the tile that receives the link's output (a core's
    dims_from_stream, the same layout: it scatters what arrives as the memtile would have),
    and the link's own sending side, reading in the inverse order (dims_to_stream, when the
    layout is a permutation of the element, or of the output's whole element when a forward
    regroups several elements into one). Each is offered when it applies unchanged: the same
    element size on both sides (or a layout over the whole output), cores that receive, no
    layout already there, and a BD that can walk it.
    """
    dims: tuple[Dim, ...] = e.dims
    shown = _shown(dims)
    itemsize = f.elem.dt.itemsize
    link = _link_of(d, f, e)
    options = []
    if link is not None and link.kind == "forward":
        out = d.fifo(link.dsts[0])
        same = out.elem.numel == f.elem.numel
        call = "forward(..., {})"
        if (same and out.consumers and all(c.kind == "core" and not c.dims
                                           for c in out.consumers)
                and _bd_ok(dims, itemsize, "core", target)):
            who = ("the core that consumes" if len(out.consumers) == 1 else
                   "the cores that consume")
            options.append(f"give the layout to {who} '{out.name}' instead: "
                           + call.format(f"dims_from_stream={shown}")
                           + " (a core's DMA writes what arrives in that order, as the memtile "
                           "would have)")
        # a regrouping forward (several elements in per element out) writes the layout over
        # the output's buffer: its inverse is then read over the whole of it
        whole = int(np.prod([x.size for x in dims])) == out.elem.numel
        inv = inverse_layout(dims, out.elem.numel if whole else f.elem.numel)
        if ((same or whole) and inv is not None and not out.producer.dims
                and _bd_ok(inv, itemsize, e.tile_kind, target)):
            options.append("send it in the inverse order: "
                           + call.format(f"dims_to_stream={_shown(inv)}"))
    elif link is not None and link.kind == "join":
        inv = inverse_layout(dims, f.elem.numel)
        p = f.producer
        if (inv is not None and p.kind == "core" and not p.dims
                and _bd_ok(inv, itemsize, "core", target)):
            options.append(f"let {p.core} send the part in the inverse order: give "
                           f"'{f.name}' dims_to_stream={_shown(inv)}")
    if options:
        return ", or ".join(options)
    if link is not None and link.kind == "forward" and e.tile_kind == "core" \
            and _bd_ok(dims, itemsize, "memtile", target):
        # neither place fits (no core receives the output, the inverse is past a core BD's
        # wraps: a layout tester's 256-word column): a memtile's DMA takes it as written
        return (f"forward '{f.name}' through a memtile instead (leave out via=), whose DMA "
                f"takes dims_from_stream={shown} as written")
    return ("write the layout where a core's DMA receives the data (its dims_from_stream), or "
            "where the link sends it (its output's dims_to_stream, the inverse order: the "
            "address each stream element is read from is where this layout would write it)")
