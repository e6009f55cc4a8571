"""The runtime sequence: what the host moves in and out, and when it waits.

Example
-------
::

    with runtime() as rt:
        rt.fill(of_in, A)                       # whole tensor, in order
        rt.fill(a[0], A, tiles(A, (64, 64), rows=0))
        rt.drain(of_out, C)                     # waited for at the end of the sequence
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Sequence

from aiedsl.errors import DesignError, caller_loc
from aiedsl.ir import Loc, Pattern
from aiedsl.lang.context import current_design
from aiedsl.lang.fifo import ObjectFifo
from aiedsl.lang.tensor import HostTensorRef

if TYPE_CHECKING:
    from aiedsl.lang.builder import DesignBuilder

PatternSpec = Pattern | tuple[int, Sequence[int], Sequence[int]] | None


@dataclass
class RuntimeRecord:
    """A runtime operation as traced, before fifos are resolved to their host ends."""

    op: str
    fifo: ObjectFifo
    tensor: HostTensorRef | None
    pattern: Pattern | None
    wait: bool
    loc: Loc


class RuntimeBuilder:
    """The ``rt`` of ``with runtime() as rt``: fill, drain and wait."""

    def __init__(self, builder: "DesignBuilder") -> None:
        self.builder = builder
        self.records: list[RuntimeRecord] = []
        self.pending: list[RuntimeRecord] = []

    def fill(self, fifo: ObjectFifo, tensor: HostTensorRef, pattern: PatternSpec = None) -> None:
        """Send ``tensor``'s elements, in ``pattern`` order, into ``fifo`` (its host end).

        ``pattern`` is a :class:`Pattern` (see :func:`tiles`), ``(offset, sizes, strides)``, or
        None for the whole tensor in order.
        """
        loc = caller_loc()
        self._record("fill", fifo, tensor, pattern, False, loc)

    def drain(self, fifo: ObjectFifo, tensor: HostTensorRef, pattern: PatternSpec = None, *,
              wait: bool = True) -> None:
        """Receive ``fifo``'s elements into ``tensor`` in ``pattern`` order.

        With ``wait=True`` (the default) the sequence waits for this transfer before it ends (or
        at the next :meth:`sync`), as IRON's ``drain(..., wait=True)`` does.
        """
        loc = caller_loc()
        self._record("drain", fifo, tensor, pattern, wait, loc)

    def sync(self) -> None:
        """Wait here for every waited transfer issued so far."""
        loc = caller_loc()
        for rec in self.pending:
            self.records.append(RuntimeRecord("wait", rec.fifo, None, None, False, loc))
        self.pending.clear()

    def _record(self, op: str, fifo: ObjectFifo, tensor: HostTensorRef, pattern: PatternSpec,
                wait: bool, loc: Loc) -> None:
        if not isinstance(fifo, ObjectFifo):
            raise DesignError("runtime", f"rt.{op} needs a fifo, got {type(fifo).__name__}",
                              loc=loc, fix="pass a fifo or a channel index such as a[0]")
        if not isinstance(tensor, HostTensorRef):
            raise DesignError(
                "runtime", f"rt.{op} needs one of the design's tensor arguments, got "
                f"{type(tensor).__name__}", loc=loc,
                fix="pass the argument of the @design function, e.g. rt.fill(a, A)")
        pat = to_pattern(pattern, tensor, loc)
        rec = RuntimeRecord(op, fifo, tensor, pat, wait, loc)
        self.records.append(rec)
        if wait:
            self.pending.append(rec)


def to_pattern(spec: PatternSpec, tensor: HostTensorRef, loc: Loc) -> Pattern:
    """Normalize a pattern spec to a 4-d :class:`Pattern`."""
    if spec is None:
        return Pattern(offset=0, sizes=(1, 1, 1, tensor.type.numel), strides=(0, 0, 0, 1))
    if isinstance(spec, Pattern):
        return spec
    try:
        offset, sizes, strides = spec
        sizes, strides = list(sizes), list(strides)
        if len(sizes) != len(strides) or not 1 <= len(sizes) <= 4:
            raise ValueError
        pad = 4 - len(sizes)
        return Pattern(offset=int(offset), sizes=tuple([1] * pad + sizes),
                       strides=tuple([0] * pad + strides))
    except (TypeError, ValueError):
        raise DesignError(
            "dma pattern", f"pattern {spec!r} is not (offset, sizes, strides) with 1-4 dims",
            loc=loc, fix="write (offset, [sizes...], [strides...]) outermost first, or use "
            "tiles(...)") from None


@contextmanager
def runtime() -> Iterator[RuntimeBuilder]:
    """Open the design's runtime sequence (once per design)."""
    loc = caller_loc()
    b = current_design("runtime()")
    if b.runtime is not None:
        raise DesignError("runtime", "a design has one runtime sequence; this is a second",
                          loc=loc, related=[("the first", b.runtime_loc)] if b.runtime_loc
                          else None, fix="put every fill and drain in one `with runtime()`")
    rt = RuntimeBuilder(b)
    b.runtime, b.runtime_loc = rt, loc
    yield rt
    rt.sync()


def tiles(tensor: HostTensorRef | tuple[int, int], tile: tuple[int, int], *,
          rows: int | range | None = None, cols: int | range | None = None,
          order: str = "row", group: int = 1, repeat: int = 1) -> Pattern:
    """The access pattern that walks 2-D tiles of a row-major matrix, one tile after another.

    Parameters
    ----------
    tensor: the host tensor (or its 2-D shape).
    tile: (tile rows, tile cols).
    rows, cols: which tiles, by tile index: an int, a ``range`` (any step), or None for all.
    order: ``"row"`` (tile rows outer), ``"col"`` (tile columns outer) or ``"grouped"``
        (``group`` tile rows stacked as one tall tile, then the next columns).
    repeat: send the whole pattern this many times (an outer stride-0 dimension).

    Each tile is sent row by row. Example: the 64x64 A tiles of tile row 2, every K tile, twice::

        tiles(A, (64, 64), rows=2, repeat=2)
    """
    loc = caller_loc()
    shape = tensor.shape if isinstance(tensor, HostTensorRef) else tuple(tensor)
    itemsize = tensor.type.dt.itemsize if isinstance(tensor, HostTensorRef) else 4
    if len(shape) != 2:
        raise DesignError("tiles", f"tiles() walks 2-D matrices; this tensor is {list(shape)}",
                          loc=loc, fix="reshape the host tensor to 2-D or write the pattern")
    H, W = shape
    tr, tc = tile
    if H % tr or W % tc:
        raise DesignError("tiles", f"tile {tr}x{tc} does not divide the {H}x{W} matrix",
                          loc=loc, found=f"{H} % {tr} = {H % tr}, {W} % {tc} = {W % tc}",
                          fix="choose a tile size that divides the matrix")
    rr = _tile_range(rows, H // tr, "rows", loc)
    cr = _tile_range(cols, W // tc, "cols", loc)
    rstride, cstride = rr.step * tr * W, cr.step * tc
    if order == "row":
        dims = [(len(rr), rstride), (len(cr), cstride), (tr, W), (tc, 1)]
    elif order == "col":
        dims = [(len(cr), cstride), (len(rr), rstride), (tr, W), (tc, 1)]
    elif order == "grouped":
        if rr.step != 1 or len(rr) % group:
            raise DesignError("tiles", f"grouped order needs contiguous tile rows in groups of "
                              f"{group}; got {len(rr)} rows with step {rr.step}", loc=loc,
                              fix="choose rows and group so that group divides the row count")
        dims = [(len(rr) // group, group * tr * W), (len(cr), cstride), (group * tr, W), (tc, 1)]
    else:
        raise DesignError("tiles", f"order={order!r}", loc=loc,
                          fix="use 'row', 'col' or 'grouped'")
    limit = current_design("tiles(...)").target.max_dma_size
    merged = _merge(dims, limit, itemsize)
    if repeat > 1:
        merged = [(repeat, 0)] + merged
    if len(merged) > 4:
        raise DesignError("tiles", f"the pattern needs {len(merged)} dimensions: "
                          f"{merged}", loc=loc, limit="4 dimensions",
                          fix="send fewer tiles per transfer (split it into several fills)")
    merged = [(1, 0)] * (4 - len(merged)) + merged
    return Pattern(offset=rr.start * tr * W + cr.start * tc,
                   sizes=tuple(s for s, _ in merged), strides=tuple(st for _, st in merged))


def _tile_range(sel: int | range | None, n: int, what: str, loc: Loc) -> range:
    r = range(n) if sel is None else range(sel, sel + 1) if isinstance(sel, int) else sel
    if not isinstance(r, range) or len(r) == 0 or r.start < 0 or r[-1] >= n or r.step < 1:
        raise DesignError("tiles", f"{what}={sel!r} selects no valid tile of {n}", loc=loc,
                          fix=f"give a tile index or range within 0..{n - 1}")
    return r


def _merge(dims: list[tuple[int, int]], limit: int, itemsize: int) -> list[tuple[int, int]]:
    """Drop size-1 dims and merge contiguous neighbours while they stay within DMA limits."""
    dims = [d for d in dims if d[0] > 1] or [(1, 1)]
    out = [dims[-1]]
    for size, stride in reversed(dims[:-1]):
        isize, istride = out[0]
        merged = size * isize
        inner = len(out) == 1
        fits = merged * itemsize // 4 <= limit if inner else merged <= limit
        if stride == isize * istride and fits:
            out[0] = (merged, istride)
        else:
            out.insert(0, (size, stride))
    if all(st == (out[i + 1][0] * out[i + 1][1] if i + 1 < len(out) else 1)
           for i, (_, st) in enumerate(out)):
        total = 1
        for s, _ in out:
            total *= s
        return [(total, 1)]  # one contiguous run: a linear transfer, exempt from wrap limits
    return out
