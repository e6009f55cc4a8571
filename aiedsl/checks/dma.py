"""DMA layout rules: the n-d patterns of runtime transfers and of fifo ``dims`` on each tile.

AIE2 DMAs count sizes and strides in 4-byte words (``aie2-facts.md`` s2): a transfer's innermost
run must be whole words and contiguous, each wrap is at most ``max_dma_size``, a shim pattern has
3 dimensions plus an iteration (repeat) dimension of at most ``max_shim_iterations``, and memtile
and compute-tile DMAs have 4 and 3 dimensions. A plain contiguous run is a linear transfer and is
exempt from the wrap limits.
"""

from __future__ import annotations

import numpy as np

from aiedsl.errors import DesignError
from aiedsl.ir import Design, Dim, Endpoint, Fifo, Loc, Transfer
from aiedsl.targets import TargetModel, get_target


def check_dma(d: Design) -> None:
    """Check every runtime pattern and every fifo's ``dims_to_stream``/``dims_from_stream``."""
    target = get_target(d.device)
    for f in d.fifos:
        if f.elem.nbytes % target.dma_granularity:
            raise DesignError(
                "dma pattern", f"fifo '{f.name}' has {f.elem.nbytes}-byte elements ({f.elem})",
                loc=f.loc, limit=f"whole {target.dma_granularity}-byte words (a DMA buffer "
                "descriptor counts its length in words)", found=f"{f.elem.nbytes} bytes",
                fix=f"make each element a multiple of {target.dma_granularity} bytes")
    for t in d.runtime:
        if isinstance(t, Transfer):
            _check_transfer(d, t, target)
    for f in d.fifos:
        ends = [(f.producer, "dims_to_stream")] + [(c, "dims_from_stream") for c in f.consumers]
        for e, what in ends:
            if e.dims:
                _check_fifo_dims(f, e, what, target)


def _check_transfer(d: Design, t: Transfer, target: TargetModel) -> None:
    tensor = d.tensor(t.tensor)
    itemsize = tensor.type.dt.itemsize
    p = t.pattern
    where = f"rt.{t.op} of '{t.fifo}' from '{t.tensor}'" if t.op == "fill" else \
        f"rt.{t.op} of '{t.fifo}' into '{t.tensor}'"
    shown = f"offset {p.offset}, sizes {list(p.sizes)}, strides {list(p.strides)}"
    if any(s < 1 for s in p.sizes) or any(s < 0 for s in p.strides) or p.offset < 0:
        _fail(t.loc, where, "sizes >= 1, strides and offset >= 0", shown,
              "use positive sizes and non-negative strides and offset")
    linear = _is_linear(p.sizes, p.strides)
    if not linear:
        _check_dims(where, p.sizes[1:], p.strides[1:], itemsize, target, t.loc, shown)
        if p.sizes[0] > target.max_shim_iterations:
            _fail(t.loc, where, f"outermost (iteration) size <= {target.max_shim_iterations} "
                  "on a shim DMA", f"{p.sizes[0]} ({shown})",
                  "split the transfer into several fills or drains")
    if (p.offset * itemsize) % target.dma_granularity:
        _fail(t.loc, where, f"offset a multiple of {target.dma_granularity} bytes",
              f"{p.offset * itemsize} bytes ({shown})", "align the offset to 4 bytes")
    hi = p.offset + sum((size - 1) * stride for size, stride in zip(p.sizes, p.strides))
    if hi >= tensor.type.numel:
        _fail(t.loc, where, f"every index inside '{t.tensor}' ({tensor.type.numel} elements)",
              f"index {hi} ({shown})", "shrink the sizes or the offset")


def _is_linear(sizes: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """A pattern that is one contiguous run (possibly spelled over several dims)."""
    expect = 1
    for size, stride in zip(reversed(sizes), reversed(strides)):
        if size > 1 and stride != expect:
            return False
        expect *= size
    return True


def _check_dims(where: str, sizes: tuple[int, ...], strides: tuple[int, ...], itemsize: int,
                target: TargetModel, loc: Loc, shown: str,
                related: list[tuple[str, Loc]] | None = None) -> None:
    """Wrap, granularity and contiguity rules of the non-iteration dimensions, innermost last."""
    gran = target.dma_granularity
    inner_size, inner_stride = sizes[-1], strides[-1]
    if inner_size > 1 and inner_stride != 1:
        _fail(loc, where, "the innermost dimension is contiguous (stride 1)", shown,
              "make the innermost dimension a contiguous run; move the stride outward", related)
    if (inner_size * itemsize) % gran:
        _fail(loc, where, f"the innermost run is a multiple of {gran} bytes",
              f"{inner_size} x {itemsize} B = {inner_size * itemsize} B ({shown})",
              f"make the innermost size a multiple of {gran // itemsize or 1} elements", related)
    words = inner_size * itemsize // gran
    if words > target.max_dma_size:
        _fail(loc, where, f"innermost size <= {target.max_dma_size} words of {gran} bytes",
              f"{words} words ({shown})", "split the innermost dimension in two", related)
    for size, stride in zip(sizes[:-1], strides[:-1]):
        if size > target.max_dma_size:
            _fail(loc, where, f"each size <= {target.max_dma_size}", f"{size} ({shown})",
                  "split that dimension in two", related)
        if size > 1 and (stride * itemsize) % gran:
            _fail(loc, where, f"strides are multiples of {gran} bytes",
                  f"stride {stride} x {itemsize} B = {stride * itemsize} B ({shown})",
                  "use word-aligned strides",
                  related)


def _check_fifo_dims(f: Fifo, e: Endpoint, what: str, target: TargetModel) -> None:
    where = f"{what} of '{f.name}' on {e.label()}"
    dims: tuple[Dim, ...] = e.dims
    shown = "[" + ", ".join(f"({x.size}, {x.stride})" for x in dims) + "]"
    # Report the line that wrote the dims (the fifo, link or channel), and where the endpoint is.
    loc = f.loc
    who = {"shim": "the runtime", "memtile": "the memtile"}.get(e.kind, e.label())
    verb = ("fills" if e.kind == "shim" else "produces") if what == "dims_to_stream" else (
        "drains" if e.kind == "shim" else "consumes")
    related = [(f"{who} {verb} it here", e.loc)] if e.loc != f.loc else []
    if e.kind == "shim":
        _fail(loc, where, "no layout transform on a shim endpoint (mlir-aie's rule)", shown,
              "apply the layout in the runtime pattern instead, or on the memtile", related)
    if e.kind == "memtile" and what == "dims_from_stream":
        _fail(loc, where, "no dims_from_stream on a memtile endpoint (aiedsl applies a memtile's "
              "layout as it sends)", shown, "give the layout as dims_to_stream of the fifo the "
              "memtile sends (forward(..., dims_to_stream=...)), or as the core's "
              "dims_from_stream", related)
    max_dims = target.limits(e.kind).dma_dims
    if len(dims) > max_dims:
        _fail(loc, where, f"at most {max_dims} dimensions on a {e.kind} DMA",
              f"{len(dims)} ({shown})", "merge contiguous dimensions" + (
                  ", or share the transform between the memtile's dims_to_stream and the "
                  "core's dims_from_stream" if e.kind == "memtile" else
                  ", or move the transform to the memtile (4 dimensions)"), related)
    sizes = tuple(x.size for x in dims)
    strides = tuple(x.stride for x in dims)
    itemsize = f.elem.dt.itemsize
    # The outermost dimension's size is not encoded: it steps until the element is done.
    _check_dims(where, sizes, strides, itemsize, target, loc, shown, related)
    inner = int(np.prod(sizes[1:]))
    if f.elem.numel % inner:
        _fail(loc, where, f"the inner dimensions tile the {f.elem.numel}-element buffer",
              f"{inner} elements per outer step ({shown})",
              "choose dims whose inner sizes divide the element", related)
    hi = (f.elem.numel // inner - 1) * strides[0] + sum(
        (s - 1) * st for s, st in zip(sizes[1:], strides[1:]))
    if hi >= f.elem.numel:
        _fail(loc, where, f"every address inside the {f.elem.numel}-element buffer",
              f"address {hi} ({shown})", "fix the strides so they stay inside the element",
              related)


def _fail(loc: Loc, where: str, limit: str, found: str, fix: str,
          related: list[tuple[str, Loc]] | None = None) -> None:
    raise DesignError("dma pattern", f"{where} breaks a DMA rule", loc=loc, limit=limit,
                      found=found, fix=fix, related=related)
