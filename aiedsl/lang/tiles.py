"""``tiles()``: a 2-D tiling of a host matrix as a shim DMA pattern that the shim can run.

The walk (tile rows, tiles, rows of a tile, elements of a row) is merged where it is
contiguous and split where a dimension is over the shim BD's limits, so that what a design
asks for fits the four slots of a shim pattern, or the error says why it cannot.

Example
-------
::

    rt.fill(a[0], A, tiles(A, (64, 64), rows=0))     # tile row 0 of A, every tile of it
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple, NoReturn

from aiedsl.errors import DesignError
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import Pattern
from aiedsl.lang.context import current_design, design_trace
from aiedsl.lang.described import described
from aiedsl.lang.tensor import HostTensorRef
from aiedsl.source_loc import caller_loc
from aiedsl.targets import TargetModel
from aiedsl.values import as_int, shown


def tiles(tensor: HostTensorRef | tuple[int, int], tile: tuple[int, int], *,
          rows: int | range | None = None, cols: int | range | None = None,
          order: str = "row", group: int = 1, repeat: int = 1) -> Pattern:
    """The access pattern that walks 2-D tiles of a row-major matrix, one tile after another.

    Parameters
    ----------
    tensor: the host tensor (or its 2-D shape; then the elements count as 4 bytes).
    tile: (tile rows, tile cols).
    rows, cols: which tiles, by tile index: an int, a ``range`` (any step), or None for all.
    order: ``"row"`` (tile rows outer), ``"col"`` (tile columns outer) or ``"grouped"``
        (``group`` tile rows stacked as one tall tile, then the next columns).
    repeat: send the whole pattern this many times (an outer stride-0 dimension).

    Each tile is sent row by row. Example: the 64x64 A tiles of tile row 2, every K tile, twice::

        tiles(A, (64, 64), rows=2, repeat=2)

    The result always passes the shim DMA's rules (3 dimensions plus an iteration dimension of
    at most ``max_shim_iterations``; the innermost a contiguous run of whole 4-byte words, at
    most ``max_dma_size`` words; the next at most ``max_dma_size``; the third unbounded, as a
    shim BD has no wrap field for it). Contiguous dimensions are
    merged, and a dimension over its limit is split into two or more where its size factors
    within the limits, preferring the walk's own boundaries (tile rows, tiles). When no pattern
    visits these elements in this order within the limits, ``tiles()`` raises a
    :class:`DesignError` saying why; send the tiles in several fills or drains instead.
    """
    loc = caller_loc()
    if not isinstance(tensor, (HostTensorRef, tuple, list)):
        given = described(tensor)
        raise DesignError("tiles", f"tiles() walks a host tensor, not {given}", loc=loc,
                          limit="a host tensor (a parameter of the @design function), or its "
                          "(rows, cols)", found=given,
                          fix="pass the tensor the fill or drain moves, its second argument: "
                          "rt.fill(a, A, tiles(A, (64, 64)))")
    shape = tensor.shape if isinstance(tensor, HostTensorRef) else tuple(tensor)
    itemsize = tensor.type.dt.itemsize if isinstance(tensor, HostTensorRef) else 4
    if len(shape) != 2:
        raise DesignError("tiles", f"tiles() walks 2-D matrices; this tensor is {list(shape)}",
                          loc=loc, fix="reshape the host tensor to 2-D or write the pattern")
    matrix = _positive(shape)  # a shape given as numbers: numpy's integers too
    if matrix is None:
        raise DesignError("tiles", f"tiles() of a matrix of shape {shown(shape)}", loc=loc,
                          limit="two positive ints", found=shown(shape),
                          fix="pass the host tensor itself, or its (rows, cols)")
    H, W = matrix
    pair = _positive(tile) if isinstance(tile, (tuple, list)) and len(tile) == 2 else None
    if pair is None:
        raise DesignError("tiles", f"tile={shown(tile)} is not (rows, cols)", loc=loc,
                          limit="a pair of positive ints", found=shown(tile),
                          fix="write e.g. tiles(A, (64, 64))")
    counts = []
    for what, v in (("repeat", repeat), ("group", group)):
        number = as_int(v)  # numpy's integers too, as plain ints
        if number is None:
            raise DesignError("tiles", f"{what}={shown(v)} is not an int", loc=loc,
                              limit="an int >= 1", found=shown(v), fix=f"give {what}=1 or more")
        counts.append(number)
    repeat, group = counts
    tr, tc = pair
    if H % tr or W % tc:
        raise DesignError("tiles", f"tile {tr}x{tc} does not divide the {H}x{W} matrix",
                          loc=loc, found=f"{H} % {tr} = {H % tr}, {W} % {tc} = {W % tc}",
                          fix="choose a tile size that divides the matrix")
    if repeat < 1:
        raise DesignError("tiles", f"repeat={repeat!r} sends the pattern no times", loc=loc,
                          fix="give repeat=1 or more")
    if group != 1 and order in ("row", "col"):  # it would be ignored, silently
        raise DesignError("tiles", f"group={group} is given with order={order!r}, which "
                          "stacks no tile rows", loc=loc,
                          limit="group= is for order='grouped' (group tile rows sent as one "
                          "tall tile)", found=f"order={order!r}, group={group}",
                          fix=f"write order='grouped' to send {group} tile rows as one tall "
                          "tile, or leave group out")
    rr = _tile_range(rows, H // tr, "rows", loc)
    cr = _tile_range(cols, W // tc, "cols", loc)
    rstride, cstride = rr.step * tr * W, cr.step * tc
    if order == "row":
        dims = [(len(rr), rstride), (len(cr), cstride), (tr, W), (tc, 1)]
    elif order == "col":
        dims = [(len(cr), cstride), (len(rr), rstride), (tr, W), (tc, 1)]
    elif order == "grouped":
        if group < 1 or rr.step != 1 or len(rr) % group:
            raise DesignError("tiles", f"grouped order needs contiguous tile rows in groups of "
                              f"{group}; got {len(rr)} rows with step {rr.step}", loc=loc,
                              fix="choose rows and group so that group divides the row count")
        dims = [(len(rr) // group, group * tr * W), (len(cr), cstride), (group * tr, W), (tc, 1)]
    else:
        raise DesignError("tiles", f"order={order!r}", loc=loc,
                          fix="use 'row', 'col' or 'grouped'")
    target = current_design("tiles(...)").target
    offset = rr.start * tr * W + cr.start * tc
    return _made(_shim_pattern(offset, [(repeat, 0)] + dims, itemsize, target, loc), tensor)


def _positive(values: tuple[object, ...] | list[object]) -> list[int] | None:
    """``values`` as plain ints (numpy's integers too) when every one is a positive integer;
    else None."""
    ints = [as_int(v) for v in values]
    return [v for v in ints if v is not None and v > 0] if all(
        v is not None and v > 0 for v in ints) else None


def _tile_range(sel: int | range | None, n: int, what: str, loc: Loc) -> range:
    index = None if sel is None or isinstance(sel, range) else as_int(sel)  # numpy's too
    r = range(n) if sel is None else range(index, index + 1) if index is not None else sel
    if isinstance(r, range) and len(r) == 1:  # one tile: the step walks nothing
        r = range(r[0], r[0] + 1)
    if isinstance(r, range) and r.step < 0 and len(r) > 1:
        raise DesignError("tiles", f"{what}={shown(sel)} walks the tiles backwards", loc=loc,
                          limit="a DMA pattern steps forwards: its strides are positive "
                          "(mlir-aie's verifyStridesWraps)", found=f"step {r.step}",
                          fix=f"walk them forwards ({what}={shown(r[::-1])}) and reorder on "
                          "the core, or move each tile in a transfer of its own")
    if not isinstance(r, range) or len(r) == 0 or r.start < 0 or r[-1] >= n or r.step < 1:
        raise DesignError("tiles", f"{what}={shown(sel)} selects no valid tile of {n}", loc=loc,
                          fix=f"give a tile index or range within 0..{n - 1}")
    return r


class _Run(NamedTuple):
    """One dimension of the merged walk: ``size`` steps of ``stride`` elements.

    ``pieces`` are the sizes of the walk's own dimensions merged into it, outermost first
    (their product is ``size``): splitting there keeps the pattern readable (tile rows, tiles).
    """

    size: int
    stride: int
    pieces: tuple[int, ...]


# A shim DMA pattern has 4 slots, outermost first: slot 0 is the iteration (repeat) dimension,
# slots 1..3 the address generator's dimensions, slot 3 the innermost (contiguous) one.
_SLOTS = 4
_INNER = _SLOTS - 1


def _shim_pattern(offset: int, dims: list[tuple[int, int]], itemsize: int,
                  target: TargetModel, loc: Loc) -> Pattern:
    """A 4-d shim pattern visiting exactly the elements of nested ``dims`` (outermost first), in
    their order, within the target's DMA limits; a DesignError when none exists."""
    runs = _merge(dims)
    gran = target.dma_granularity
    if (offset * itemsize) % gran:
        # Every pattern starts at the walk's first element, so nothing can fix this but the caller.
        _no_pattern(runs, itemsize, target, loc,
                    f"the first element (index {offset}) is at byte {offset * itemsize}, not a "
                    f"multiple of {gran}",
                    f"start at a tile whose byte offset is a multiple of {gran}")
    # A repeat (a stride-0 run, outermost: tiles() puts it there) takes the iteration slot, the
    # only one mlir-aie's verifyStridesWraps lets step by 0; the walk fits the other three.
    rep = runs[0].size if runs[0].stride == 0 else 1
    inner = (runs[1:] or [_Run(1, 1, (1,))]) if rep > 1 else runs
    if rep > target.max_shim_iterations:
        _no_pattern(runs, itemsize, target, loc,
                    f"a repeat of {rep} is more than the iteration dimension's "
                    f"{target.max_shim_iterations} (only that dimension may step by 0)",
                    f"repeat at most {target.max_shim_iterations} times per transfer, and issue "
                    "more transfers for more")
    if len(inner) == 1 and inner[0].stride == 1 and (inner[0].size * itemsize) % gran == 0:
        # One contiguous run: a linear transfer, exempt from the wrap limits (see checks/dma/;
        # mlir-aie's isLinearTransfer leaves the iteration dimension out).
        return Pattern(offset=offset, sizes=(rep, 1, 1, inner[0].size), strides=(0, 0, 0, 1))
    fitted = _fit(inner, itemsize, target, first_slot=1 if rep > 1 else 0)
    if fitted is None:
        why, fix = _why_no_pattern(runs, itemsize, target)
        _no_pattern(runs, itemsize, target, loc, why, fix)
    head = [(rep, 0)] if rep > 1 else []
    (s0, t0), (s1, t1), (s2, t2), (s3, t3) = (
        head + [(1, 0)] * (_SLOTS - len(head) - len(fitted)) + fitted)
    return Pattern(offset=offset, sizes=(s0, s1, s2, s3), strides=(t0, t1, t2, t3))


def _made(p: Pattern, tensor: HostTensorRef | tuple[int, int]) -> Pattern:
    """``p``, remembered as made for ``tensor`` (the runtime refuses it for a tensor of another
    shape: the walk's offsets and strides are that matrix's)."""
    b = design_trace()
    if b is not None and isinstance(tensor, HostTensorRef):
        b.tiled[id(p)] = (p, tensor.name, tuple(tensor.shape))
    return p


def _merge(dims: list[tuple[int, int]]) -> list[_Run]:
    """Drop size-1 dims and merge every dim into its inner neighbour when they are contiguous.

    Nothing is left to merge afterwards, so every pattern with the same order is these runs,
    each split into one or more dimensions: the runs are what :func:`_fit` factors.
    """
    out: list[_Run] = []
    for size, stride in reversed([d for d in dims if d[0] > 1]):
        if out and stride == out[0].size * out[0].stride:
            inner = out[0]
            out[0] = _Run(size * inner.size, inner.stride, (size,) + inner.pieces)
        else:
            out.insert(0, _Run(size, stride, (size,)))
    return out or [_Run(1, 1, (1,))]


def _fit(runs: list[_Run], itemsize: int, target: TargetModel,
         first_slot: int = 0) -> list[tuple[int, int]] | None:
    """Split ``runs`` into (size, stride) dims that fit the shim's slots ``first_slot`` to the
    innermost, outermost first; None when no factorisation fits.

    A depth-first search from the innermost slot outward over the divisors of each run, the
    walk's own boundaries and larger inner parts first; it is exhaustive (memoised on
    (run, part left, slot)), so None means no split of the runs fits.
    """
    failed: set[tuple[int, int, int]] = set()

    def place(ri: int, rem: int, slot: int) -> list[tuple[int, int]] | None:
        # Place the outer `rem` steps of run `ri`, then the runs outside it, into slots
        # `slot`, `slot - 1`, ..., 0.
        if ri < 0:
            return []
        if ri > slot - first_slot or (ri, rem, slot) in failed:  # a slot for each run left
            return None
        run = runs[ri]
        stride = run.stride * (run.size // rem)
        for f in _split_sizes(run, rem, slot, itemsize, target):
            if not _slot_fits(slot, f, stride, itemsize, target):
                continue
            rest = place(ri, rem // f, slot - 1) if f < rem else \
                place(ri - 1, runs[ri - 1].size if ri else 1, slot - 1)
            if rest is not None:
                return rest + [(f, stride)]
        if slot == _INNER and _slot_fits(_INNER, 1, 1, itemsize, target):
            # A one-element innermost dim: 4-byte elements can be walked one by one, e.g. a
            # column of i32, whose innermost run cannot be contiguous.
            rest = place(ri, rem, slot - 1)
            if rest is not None:
                return rest + [(1, 1)]
        failed.add((ri, rem, slot))
        return None

    return place(len(runs) - 1, runs[-1].size, _INNER)


def _split_sizes(run: _Run, rem: int, slot: int, itemsize: int,
                 target: TargetModel) -> list[int]:
    """Sizes to try for the next (inner) part of the outer ``rem`` steps of ``run`` in ``slot``:
    the walk's own boundaries first, then any divisor, larger first; none over the slot's size
    limit."""
    largest = _slot_limit(slot, itemsize, target)
    done = run.size // rem
    own, tail = [], 1
    for piece in reversed(run.pieces):
        tail *= piece
        if tail % done == 0 and tail > done and tail // done <= largest:
            own.append(tail // done)
    others = [f for f in _divisors(rem) if 1 < f <= largest and f not in own]
    return sorted(own, reverse=True) + sorted(others, reverse=True)


def _slot_limit(slot: int, itemsize: int, target: TargetModel) -> int:
    """The largest size, in elements, a dim can have in ``slot``."""
    if slot == 0:
        return target.max_shim_iterations
    if slot == _INNER:
        return target.max_dma_size * target.dma_granularity // itemsize
    if slot == _INNER - 1:
        return target.max_dma_size
    return target.shim.bd_len_words  # the third: no wrap field, its extent the BD's length


def _slot_fits(slot: int, size: int, stride: int, itemsize: int, target: TargetModel) -> bool:
    """Does (size, stride) meet the rules of ``slot`` (those of checks/dma/)?"""
    gran = target.dma_granularity
    if size > _slot_limit(slot, itemsize, target):
        return False
    if size > 1 and stride * itemsize // gran > target.shim.bd_step_words:
        return False  # the shim's step fields
    if slot == _INNER:
        # The innermost dim moves whole words: a contiguous run, or, for 4-byte elements, any
        # whole-word step (verifyStridesWraps encodes it as stride - 1).
        contiguous = size == 1 or stride == 1 or itemsize == gran
        return contiguous and (size * itemsize) % gran == 0
    # Word-aligned strides, the iteration dim's too (checks/dma/, as verifyStridesWraps).
    return (stride * itemsize) % gran == 0


@functools.lru_cache(maxsize=1024)
def _divisors(n: int) -> tuple[int, ...]:
    """The divisors of ``n``, ascending."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return tuple(sorted(set(small + [n // d for d in small])))


def _why_no_pattern(runs: list[_Run], itemsize: int, target: TargetModel) -> tuple[str, str]:
    """Why :func:`_fit` found nothing, and what to do, in the user's terms."""
    gran = target.dma_granularity
    inner = runs[-1]
    split = "send the tiles in several fills or drains (fewer tiles or a smaller repeat each)"
    if inner.stride == 1 and (inner.size * itemsize) % gran:
        why = (f"its contiguous runs are {inner.size} elements = {inner.size * itemsize} B, not "
               f"whole {gran}-byte words, and a DMA moves whole words")
        return why, f"choose tiles whose contiguous rows are a multiple of {gran} bytes"
    if inner.stride != 1 and itemsize % gran:
        why = (f"its innermost step moves single {itemsize}-byte elements {inner.stride} apart, "
               f"and a DMA's innermost run is contiguous whole {gran}-byte words")
        return why, f"choose tiles at least {gran // itemsize} elements wide"
    needed = len(runs) + (inner.stride != 1)
    if needed > _SLOTS:
        why = (f"the walk has {needed} nested dimensions that do not merge "
               f"{'(with a one-element innermost one) ' if inner.stride != 1 else ''}and a shim "
               f"DMA has {_SLOTS - 1} plus an iteration dimension")
        return why, split
    why = (f"its sizes {[r.size for r in runs]} do not factor into {_SLOTS - 1} dimensions (the "
           f"innermost at most {target.max_dma_size} words, the next at most "
           f"{target.max_dma_size}) plus an iteration dimension of at most "
           f"{target.max_shim_iterations}")
    return why, split


def _no_pattern(runs: list[_Run], itemsize: int, target: TargetModel, loc: Loc, why: str,
                fix: str) -> NoReturn:
    """Raise tiles()'s error: no legal pattern, ``why``, the limits and the merged walk."""
    raise DesignError(
        "tiles", f"no legal shim DMA pattern walks these tiles in this order: {why}", loc=loc,
        limit=f"{_SLOTS - 1} dimensions (the innermost a contiguous run of at most "
        f"{target.max_dma_size} {target.dma_granularity}-byte words, the next at most "
        f"{target.max_dma_size}, the third any size) plus an iteration dimension of at most "
        f"{target.max_shim_iterations}",
        found=f"the walk, merged: sizes {[r.size for r in runs]}, strides "
        f"{[r.stride for r in runs]} ({itemsize}-byte elements)", fix=fix)
