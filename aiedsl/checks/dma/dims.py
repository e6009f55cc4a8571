"""The rules of a DMA's dimensions that shim patterns and tile BDs share (wraps, whole words,
a contiguous innermost run), and :func:`_fail`, which raises a broken DMA rule's error."""

from __future__ import annotations

import math

from aiedsl.errors import DesignError
from aiedsl.ir.loc import Loc
from aiedsl.targets import TargetModel


def _check_dims(where: str, sizes: tuple[int, ...], strides: tuple[int, ...], itemsize: int,
                target: TargetModel, loc: Loc, shown: str,
                related: list[tuple[str, Loc]] | None = None, *, strided_inner: bool = False,
                tile: str | None = None) -> None:
    """Wrap, granularity and contiguity rules of the non-iteration dimensions, innermost last.

    ``strided_inner`` lets the innermost dimension step by whole words (4-byte elements).
    ``tile`` (``memtile``/``core``) holds every dimension to that BD's element cap
    (:attr:`~aiedsl.targets.TileLimits.bd_max_elements`) and its wrap fields (the innermost in
    words); without it (a shim) the innermost is held in words and the next to the wrap, the
    third having no wrap field.
    """
    gran = target.dma_granularity
    inner_size, inner_stride = sizes[-1], strides[-1]
    if inner_size > 1 and inner_stride != 1 and not strided_inner:
        why = ("mlir-aie's DMABDOp::verify" if tile is not None else
               "mlir-aie's verifyStridesWraps" if (inner_stride * itemsize) % gran else
               # verifyStridesWraps passes a stride of whole words; the encoding then steps
               # words, moving runs of elements where every n-th was meant
               f"verifyStridesWraps passes a stride of whole words, and getHardwareStridesWraps "
               f"steps the innermost dimension in words, so it would move runs of "
               f"{gran // itemsize} elements {inner_stride} apart")
        limit = (f"the innermost dimension is contiguous (stride 1) for {itemsize}-byte "
                 f"elements (the DMA moves whole {gran}-byte words: {why})")
        _fail(loc, where, limit, shown,
              "make the innermost dimension a contiguous run; move the stride outward (no DMA "
              f"steps {itemsize}-byte elements one by one: to transpose or gather them, use "
              f"{gran}-byte elements or a kernel)", related)
    if (inner_size * itemsize) % gran:
        _fail(loc, where, f"the innermost run is a multiple of {gran} bytes",
              f"{inner_size} x {itemsize} B = {inner_size * itemsize} B ({shown})",
              f"make the innermost size a multiple of {gran // itemsize or 1} elements", related)
    words = inner_size * itemsize // gran
    if tile is not None:
        limits = target.limits(tile)  # type: ignore[arg-type]
        cap, wrap = limits.bd_max_elements, limits.bd_wrap
        assert cap is not None, "a memtile or core BD has an element cap"
        elsewhere = "memtile" if tile == "core" else "runtime pattern"
        for size in sizes[:-1]:
            if size > min(cap, wrap):
                _fail(loc, where, f"each size <= {min(cap, wrap)} on a {tile} BD (mlir-aie's "
                      f"DMABDOp::verify: at most {cap} at 1e400306; the {wrap.bit_length()}-"
                      f"bit wrap fields since PR 3548)", f"{size} ({shown})",
                      f"split that dimension in two, or move the layout to the {elsewhere}",
                      related)
        if inner_size > cap:
            _fail(loc, where, f"innermost size <= {cap} elements on a {tile} BD (mlir-aie "
                  "1e400306's DMABDOp::verify)", f"{inner_size} ({shown})",
                  f"split the innermost dimension in two, or move the layout to the {elsewhere}",
                  related)
        if words > wrap:
            _fail(loc, where, f"innermost size <= {wrap} words of {gran} bytes on a {tile} BD "
                  f"(its {wrap.bit_length()}-bit wrap field counts words: mlir-aie's "
                  "DMABDOp::verify since PR 3548)", f"{words} words ({shown})",
                  f"split the innermost dimension in two, or move the layout to the {elsewhere}",
                  related)
    elif words > target.max_dma_size:
        _fail(loc, where, f"innermost size <= {target.max_dma_size} words of {gran} bytes",
              f"{words} words ({shown})",
              _inner_split(inner_size, inner_stride, itemsize, gran, target.max_dma_size),
              related)
    for i, (size, stride) in enumerate(zip(sizes, strides)):
        if i == len(sizes) - 1:
            if strided_inner and size > 1 and stride != 1 and (stride * itemsize) % gran:
                _fail(loc, where, f"strides are multiples of {gran} bytes",
                      f"stride {stride} x {itemsize} B = {stride * itemsize} B ({shown})",
                      aligned_stride_fix(stride, itemsize, gran), related)
            continue
        if tile is None and i == len(sizes) - 2 and size > target.max_dma_size:
            # the shim's only outer wrap field (verifyStridesWraps: sizes 0 and 1); the third
            # dimension's extent is its buffer length's
            _fail(loc, where, f"the second innermost size <= {target.max_dma_size} (mlir-aie's "
                  "verifyStridesWraps: the shim's 10-bit wrap fields)", f"{size} ({shown})",
                  "split that dimension in two, or make it the third innermost (a shim has no "
                  "wrap field there)", related)
        # A size-1 dimension's stride moves nothing: a runtime pattern's is emitted as 0
        # (Pattern.canonical, for verifyStridesWraps, which checks it), and a tile BD's
        # stays as written, which DMABDOp::verify does not hold to whole words.
        if size > 1 and (stride * itemsize) % gran:
            _fail(loc, where, f"strides are multiples of {gran} bytes",
                  f"stride {stride} x {itemsize} B = {stride * itemsize} B ({shown})",
                  aligned_stride_fix(stride, itemsize, gran), related)


def _inner_split(size: int, stride: int, itemsize: int, gran: int, most: int) -> str:
    """The fix for an innermost dimension of ``size`` elements over ``most`` words: the split
    into two whose inner part is the largest that fits, as sizes and strides (halving 2,048
    words still left 1,024, over 1,023: an IRON porter's find).

    >>> _inner_split(2048, 16, 4, 4, 1023).split(" (")[0]
    'split the innermost dimension in two, 4 x 512: sizes [..., 4, 512] strides [..., 8192, 16]'
    """
    per_word = gran // itemsize if itemsize < gran else 1
    fits = [r for r in range(min(size, most * per_word), 0, -1)
            if size % r == 0 and r * itemsize % gran == 0 and r * itemsize // gran <= most]
    if not fits or size // fits[0] > most:
        return "split the innermost dimension in two"
    r = fits[0]
    return (f"split the innermost dimension in two, {size // r} x {r}: sizes [..., {size // r}, "
            f"{r}] strides [..., {r * stride}, {stride}] ({r} elements are {r * itemsize // gran} "
            "words; a size-1 dimension outside it makes room)")


def aligned_stride_fix(stride: int, itemsize: int, gran: int) -> str:
    """The fix for a stride of ``stride`` elements of ``itemsize`` bytes that is not a whole
    number of ``gran``-byte words: the nearest strides that are, and what usually sets one (a
    row's length: 65 bf16 elements pad to 66).

    >>> aligned_stride_fix(65, 2, 4)[:51]
    'make the stride a multiple of 2 elements (64 or 66)'
    """
    step = gran // math.gcd(gran, itemsize)
    below, above = stride // step * step, -(-stride // step) * step
    near = f"{below} or {above}" if below else f"{above}"
    return (f"make the stride a multiple of {step} elements ({near}): a stride is usually a "
            f"row of the tensor it walks; pad its rows to {above} elements (a tensor of "
            f"{above}-element rows), or move the rows with a transfer each")


def _fail(loc: Loc, where: str, limit: str, found: str, fix: str,
          related: list[tuple[str, Loc]] | None = None) -> None:
    raise DesignError("dma pattern", f"{where} breaks a DMA rule", loc=loc, limit=limit,
                      found=found, fix=fix, related=related)
