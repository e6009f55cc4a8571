"""The runtime sequence of a whole-array GEMM, as one call; and its inputs staged in K runs.

The dataflow it drives: channel ``a`` has one fifo per herd row (tile rows of A, every K tile),
``b`` one per herd column (tile columns of B), ``c`` one per core, joined per column (``c[x, :]``).
Each fill element carries ``k_run`` of K: the core's ``k`` (a channel of ``m x k`` tiles), or a
longer run staged in the memtile by :func:`staged_inputs` (an ``m x k_run`` block of A's tile
row, a ``k_run x n`` block of B's tile column), which the memtile hands on ``k`` at a time.
The herd passes over C's tiles in row groups of ``rows`` tile rows; each column's cores cover tile
columns ``x, x + cols, ...``. A shim tile has 16 BDs: per column one drains C and two per row group
fill A and B, so row groups go in batches of ``rows_per_sync`` with a wait after each batch
(with ``prefetch``, the default for a staged K run, the next batch's fills go out before the
wait, so the shim never idles between batches).
A shim pattern's iteration dimension takes at most ``max_shim_iterations`` (64) steps, so with more
column groups than that A and B go in several fills per row group (at most 64 column groups each)
and the batches shrink to stay within the BDs.

Example
-------
::

    with runtime() as rt:
        gemm_runtime(rt, a, b, c, A, B, C, tile=(m, k, n), herd=(COLS, ROWS))
"""

from __future__ import annotations

import math
from typing import Sequence

from aiedsl.errors import DesignError, counted
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import TensorType
from aiedsl.lang.channel import Channel
from aiedsl.lang.described import described
from aiedsl.lang.load import load_context
from aiedsl.lang.fifo import ObjectFifo, fifo
from aiedsl.lang.runtime import RuntimeBuilder, RuntimeSequence
from aiedsl.lang.tensor import HostTensorRef
from aiedsl.lang.tiles import tiles
from aiedsl.lang.records import FifoRecord
from aiedsl.source_loc import caller_loc, written_argument
from aiedsl.values import as_int, plain, shown


def staged_dims_a(m: int, k: int, k_run: int, r: int, s: int
                  ) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The memtile's ``dims_to_stream`` and the core's ``dims_from_stream`` that deliver an
    ``m x k_run`` row-major block of A (as the host sends it: ``m`` rows of ``k_run``
    contiguous elements) as ``k_run / k`` tiles of ``m x k`` in the kernel's ``r x s`` blocks.

    Five loops (tile, block row, block column, row, column) do not fit a memtile's four
    dimensions, so the work is shared: the memtile sends each tile's blocks column by column
    (the tile and block-column loops merge: both step ``s`` along K), the core's DMA puts
    each ``r x s`` block (one contiguous run) at its row-major block position.

    >>> staged_dims_a(8, 16, 32, 4, 8)
    ([(4, 8), (2, 128), (4, 32), (8, 1)], [(2, 32), (2, 64), (32, 1)])
    """
    to_stream = [(k_run // s, s), (m // r, r * k_run), (r, k_run), (s, 1)]
    from_stream = [(k // s, r * s), (m // r, r * k), (r * s, 1)]
    return to_stream, from_stream


def staged_inputs(a_tile: TensorType, b_tile: TensorType, *, k_run: int,
                  herd: tuple[int, int], mmul: tuple[int, int, int], depth: int = 2
                  ) -> tuple[list[ObjectFifo], list[ObjectFifo]]:
    """A's and B's fifos of a whole-array GEMM whose memtiles hold ``k_run`` of K at a time.

    Per herd row ``y``: host fifo ``a_l3_<y>`` of ``m x k_run`` elements (a row-major block of
    A's tile row: ``m`` DRAM runs of ``k_run``), forwarded by the memtile as ``a_<y>``, tiles of
    ``a_tile`` (``m x k``) in the mmul's ``r x s`` blocks, broadcast to the row's cores (see
    :func:`staged_dims_a`). Per herd column ``x``: ``b_l3_<x>`` of ``k_run x n`` (``k_run`` rows
    of B's tile column), forwarded as ``b_<x>``, ``k x n`` tiles in ``s x t`` blocks. Each memtile
    element is ``depth``-buffered (2: the next run arrives while the cores take this one).
    Returns ``(a, b)``, indexed like channels (``a[y]``, ``b[x]``), for the cores and for
    :func:`gemm_runtime`, which reads ``k_run`` back from the fill elements.
    """
    loc = caller_loc()
    (m, k), (k2, n) = (_matrix(a_tile, "a_tile", "staged_inputs", loc),
                       _matrix(b_tile, "b_tile", "staged_inputs", loc))
    r, s, t = _positive(mmul, "mmul", "staged_inputs", loc)
    cols, rows = _positive(herd, "herd", "staged_inputs", loc)
    if k2 != k or a_tile.dtype != b_tile.dtype:
        raise DesignError("gemm inputs", f"A tile {a_tile} and B tile {b_tile} are not m x k "
                          "and k x n of one dtype", loc=loc,
                          fix="pass Tensor[m, k, dt] and Tensor[k, n, dt]")
    run = as_int(k_run)  # numpy's integers too, as a plain int
    if run is None or run < k or run % k:
        knob, written = _knob(loc, "staged_inputs", "k_run")
        closest = _multiples_near(k_run, k)
        raise DesignError(
            "gemm inputs", f"{written}={shown(k_run)}, the K run each memtile element stages, "
            f"is not a multiple of the core's k={k}", loc=loc,
            limit=f"a multiple of {k}: the memtile hands the cores whole tiles, {m}x{k} of A "
            f"and {k}x{n} of B", found=f"{written}={shown(k_run)}",
            fix=f"give {_alternatives(knob, closest)} (the "
            f"{'multiples' if len(closest) > 1 else 'multiple'} of {k} nearest "
            f"{shown(k_run)})")
    k_run = run
    if m % r or k % s or n % t:
        raise DesignError("gemm inputs", f"tiles {m}x{k} and {k}x{n} are not whole {r}x{s} and "
                          f"{s}x{t} blocks", loc=loc, fix="take mmul from the kernel "
                          "(mm.ir.params r, s, t)")
    dt = a_tile.dtype
    a_out, a_in = staged_dims_a(m, k, k_run, r, s)
    a = []
    for y in range(rows):
        host = fifo(TensorType(shape=(m * k_run,), dtype=dt), depth=depth, name=f"a_l3_{y}")
        a.append(host.forward(a_tile, depth=depth, dims_to_stream=a_out, dims_from_stream=a_in,
                              name=f"a_{y}"))
    b = []
    for x in range(cols):
        host = fifo(TensorType(shape=(k_run * n,), dtype=dt), depth=depth, name=f"b_l3_{x}")
        b.append(host.forward(b_tile, depth=depth, dims_to_stream=[
            (k_run // s, s * n), (n // t, t), (s, n), (t, 1)], name=f"b_{x}"))
    return a, b


def _fill_numel(rt: RuntimeBuilder, f: FifoRecord) -> int:
    """Elements per element of the fifo a fill of ``f`` goes into (following forward links
    toward the host, as the runtime does)."""
    return _fill_fifo(rt, f).elem.numel


def _fill_fifo(rt: RuntimeBuilder, f: FifoRecord) -> FifoRecord:
    """The fifo a fill of ``f`` goes into (following forward links toward the host, as the
    runtime does)."""
    while True:
        up = next((rec.srcs[0] for rec in rt.trace.links
                   if rec.kind == "forward" and f in rec.dsts), None)
        if up is None:
            return f
        f = up


_SIZES = {"tile": "(m, k, n)", "herd": "(cols, rows)", "mmul": "(r, s, t)"}
"""The sizes each tuple argument holds, in order."""


def _positive(values: object, what: str, call: str, loc: Loc) -> list[int]:
    """A tuple of sizes given to ``call`` (``tile=(m, k, n)``, ``herd=(cols, rows)``) as plain
    ints (numpy's integers too); a DesignError when there are not as many as it holds, or one
    is not a positive integer."""
    names = _SIZES[what]
    count = names.count(",") + 1
    ints = [as_int(v) for v in values] if isinstance(values, (tuple, list)) else None
    if ints is None or len(ints) != count or not all(v is not None and v > 0 for v in ints):
        short = f" gives {len(ints)} of the {count} sizes {names}" if ints is not None and \
            len(ints) != count else ""
        raise DesignError(_rule(call), f"{call}'s {what}={shown(values)}{short}", loc=loc,
                          limit=f"a tuple of {count} positive ints, {names}",
                          found=shown(values),
                          fix={"tile": "write tile=(m, k, n), the core's tile",
                               "herd": "write herd=(cols, rows), the herd's size",
                               "mmul": "take mmul from the kernel (mm.ir.params r, s, t)"}[what])
    return [v for v in ints if v is not None]


def _rule(call: str) -> str:
    """The rule a mistake in a call of ``call`` breaks."""
    return "gemm runtime" if call == "gemm_runtime" else "gemm inputs"


def _matrix(t: object, what: str, call: str, loc: Loc) -> tuple[int, int]:
    """The shape of ``t``, a 2-D host tensor (``kind="tensor"``) or tile type, as ``call``
    takes it for matrix ``what`` (``"A"``, ``"a_tile"``); a DesignError for anything else (a
    1-D ``Tensor[M * K, bf16]`` failed unpacking its shape)."""
    tile = what.endswith("_tile")
    sizes = {"A": "M, K", "B": "K, N", "C": "M, N", "a_tile": "m, k", "b_tile": "k, n"}[what]
    typed = t.type if isinstance(t, HostTensorRef) and not tile else \
        t if isinstance(t, TensorType) and tile else None
    if typed is not None and len(typed.shape) == 2:
        return typed.shape[0], typed.shape[1]
    wanted = f"Tensor[{sizes}, {typed.dtype if typed is not None else 'bf16'}]"
    given = f"Tensor[{', '.join(map(str, typed.shape))}, {typed.dtype}]" if typed is not None \
        and tile else described(t)
    raise DesignError(
        _rule(call), f"{call}'s {what} is {given}, not a matrix {sizes.replace(', ', ' x ')}",
        loc=loc, limit=f"a 2-D {'tile type' if tile else 'host tensor'}, {wanted}",
        found=given, fix=f"pass a {wanted}" if tile else
        f"declare it 2-D among the @design function's parameters: "
        f"{t.name if isinstance(t, HostTensorRef) else what}: {wanted}")


def _fifos(fifos: object, what: str, count: int, loc: Loc) -> None:
    """Refuse ``a`` or ``b`` of gemm_runtime (``what``) that is not a channel or a list of
    ``count`` fifos, one per herd row (column): ``a[0]`` where ``a`` goes failed as "'ObjectFifo'
    object is not subscriptable"."""
    if isinstance(fifos, Channel):
        return
    if isinstance(fifos, (list, tuple)) and len(fifos) == count and all(
            isinstance(f, ObjectFifo) for f in fifos):
        return
    axis = "row" if what == "a" else "column"
    if isinstance(fifos, (list, tuple)) and all(isinstance(f, ObjectFifo) for f in fifos):
        given = f"a list of {counted(len(fifos), 'fifo')}"
    else:
        given = described(fifos)
    raise DesignError(
        "gemm runtime", f"gemm_runtime's {what} is {given}", loc=loc,
        limit=f"the channel of {'A' if what == 'a' else 'B'}'s fifos, or the list staged_inputs "
        f"returns: one fifo per herd {axis}, {count} here", found=given,
        fix="pass the channel or list itself, as the cores index it: gemm_runtime(rt, a, b, c, "
        "A, B, C, ...)")


def _knob(loc: Loc, callee: str, keyword: str) -> tuple[str | None, str]:
    """What the design wrote for argument ``keyword`` of its ``callee(...)`` call at ``loc``:
    (the define it names, if it is one, such as ``"K_MT"``; how a message names the argument:
    the define, the expression with its parameter (``k_run=4 * k``), or the parameter alone
    when the line cannot be read)."""
    text = written_argument(loc, callee, keyword)
    ctx = load_context()
    if text is not None and ctx is not None and text in ctx.used:
        return text, text
    return None, keyword if text is None else f"{keyword}={text}"


def _multiples_near(value: object, k: int) -> list[int]:
    """The one or two multiples of ``k`` (at least ``k``) nearest ``value``: below and above
    it, or ``k`` alone for anything that is not a number."""
    number = plain(value)
    if isinstance(number, bool) or not isinstance(number, (int, float)) or \
            not math.isfinite(number):
        return [k]
    below = int(number // k) * k
    if below == number:
        return [max(below, k)]
    return [v for v in (below, below + k) if v >= k]


def _alternatives(knob: str | None, values: list[int]) -> str:
    """``values`` as settings of ``knob``: ``-D K_MT=64 or -D K_MT=128`` for a define (what
    the design exposes), ``k_run=64 or k_run=128`` otherwise."""
    return " or ".join(f"-D {knob}={v}" if knob else f"k_run={v}" for v in values)


def gemm_runtime(rt: RuntimeBuilder, a: Channel | Sequence[ObjectFifo],
                 b: Channel | Sequence[ObjectFifo], c: Channel, A: HostTensorRef,
                 B: HostTensorRef, C: HostTensorRef, *, tile: tuple[int, int, int],
                 herd: tuple[int, int], rows_per_sync: int = 4, k_run: int | None = None,
                 prefetch: bool | None = None) -> None:
    """Fill A and B and drain C for a ``herd = (cols, rows)`` GEMM with ``tile = (m, k, n)``.

    ``a`` and ``b`` are channels (``a[y]``, ``b[x]``) or the lists :func:`staged_inputs`
    returns; each fill element carries ``k_run`` of K, read from A's and B's fill elements
    (``m x k_run``, ``k_run x n``) unless given. Row groups go in batches of at most
    ``rows_per_sync``, fewer when the column groups need several fills each (see the module
    docstring); a DesignError when even one row group's fills exceed a shim tile's BDs. With
    ``prefetch`` (default: when a K run is staged) the fills of the next batch are issued before
    the wait for this batch's drains, in batches half as large; without, each batch's transfers
    go out after the previous batch's wait (the shim idles while the host re-arms its BDs).
    """
    loc = caller_loc()
    if not isinstance(rt, RuntimeBuilder):
        given = "runtime() outside a `with`" if isinstance(rt, RuntimeSequence) else \
            described(rt)
        raise DesignError(
            "gemm runtime", f"gemm_runtime is given {given} where the runtime sequence goes",
            loc=loc, limit="the rt of `with runtime() as rt:`, first", found=given,
            fix="call it in the runtime sequence's block: `with runtime() as rt:` then "
            "gemm_runtime(rt, a, b, c, A, B, C, tile=..., herd=...)")
    m, k, n = _positive(tile, "tile", "gemm_runtime", loc)
    cols, rows = _positive(herd, "herd", "gemm_runtime", loc)
    _fifos(a, "a", rows, loc)
    _fifos(b, "b", cols, loc)
    if not isinstance(c, Channel):
        raise DesignError(
            "gemm runtime", f"gemm_runtime's c is {described(c)}", loc=loc,
            limit="the channel of C's fifos, one per core, joined per herd column (join=1)",
            found=described(c), fix="pass the channel itself: gemm_runtime(rt, a, b, c, A, B, "
            "C, ...)")
    (M, K), (K2, N), C_shape = (_matrix(A, "A", "gemm_runtime", loc),
                                _matrix(B, "B", "gemm_runtime", loc),
                                _matrix(C, "C", "gemm_runtime", loc))
    if (K2, C_shape) != (K, (M, N)):
        raise DesignError("gemm runtime", f"A {list(A.shape)}, B {list(B.shape)} and C "
                          f"{list(C.shape)} are not M x K, K x N and M x N", loc=loc,
                          fix="pass A, B and C of one GEMM, in that order")
    if k_run is None:
        runs = {_fill_numel(rt, a[0]) // m, _fill_numel(rt, b[0]) // n}
        if len(runs) != 1:
            raise DesignError("gemm runtime", f"A's fill elements carry {min(runs)} or "
                              f"{max(runs)} of K, B's the other", loc=loc,
                              found=", ".join(map(str, sorted(runs))),
                              fix="stage the same K run of A and of B (staged_inputs)")
        k_run = runs.pop()
    run = as_int(k_run)  # numpy's integers too, as a plain int
    if run is None or run < k or run % k:
        raise DesignError("gemm runtime", f"k_run={shown(k_run)} is not a multiple of k={k}",
                          loc=loc, limit=f"a multiple of {k}", found=shown(k_run),
                          fix="give the K run the memtile stages (staged_inputs' k_run)")
    k_run = run
    per_batch = as_int(rows_per_sync)
    if per_batch is None or per_batch < 1:
        raise DesignError("gemm runtime", f"rows_per_sync={shown(rows_per_sync)}", loc=loc,
                          limit="an int >= 1", found=shown(rows_per_sync),
                          fix="leave it out (4), or give how many row groups to send between "
                          "waits")
    rows_per_sync = per_batch
    for what, size, step_ in (("M", M, m * rows), ("K", K, k_run), ("N", N, n * cols)):
        if size % step_:
            # each says its value once ("k = 56", not "k = 56 = 56")
            unit = {"M": f"m x rows = {m} x {rows} = {step_}",
                    "K": f"k = {k}" if k_run == k else f"the staged K run = {k_run}",
                    "N": f"n x cols = {n} x {cols} = {step_}"}[what]
            fix = f"make {what} a multiple of {step_}, or change the tile or the herd"
            if what == "K" and k_run != k:
                # the K run is the design's knob too: the ones near it that divide K
                knob, _ = _knob(_fill_fifo(rt, a[0]).loc, "staged_inputs", "k_run")
                dividing = [v for v in range(k, K + 1, k) if K % v == 0]
                closest = sorted(sorted(dividing, key=lambda v: (abs(v - k_run), v))[:2])
                fix = (f"make K a multiple of {k_run}, or stage a K run that divides K={K}: "
                       f"{_alternatives(knob, closest)} (the "
                       f"{'multiples' if len(closest) > 1 else 'multiple'} of k={k} nearest "
                       f"{k_run} that {'do' if len(closest) > 1 else 'does'})")
            raise DesignError(
                "gemm runtime", f"{what}={size} is not a multiple of {unit}: the "
                + ("herd would leave part of C uncomputed" if what != "K" else
                   "herd would leave part of each element's sum over K undone"), loc=loc,
                limit=f"{what} a multiple of {step_}", found=f"{size} = {size // step_} x "
                f"{step_} + {size % step_}", fix=fix)
    row_groups = M // (m * rows)
    col_groups = N // (n * cols)
    target = rt.trace.target
    # A repeats its tile row once per column group and B walks one tile column per column
    # group, both in the pattern's iteration dimension when the rest takes 3 dimensions: so
    # at most max_shim_iterations column groups per fill.
    step = target.max_shim_iterations
    parts = [range(g, min(g + step, col_groups)) for g in range(0, col_groups, step)]
    # One drain of C per batch of row groups, unless one row group of C is further from the
    # next than a shim BD can step (20-bit step fields): then a drain per row group.
    group_words = rows * m * N * C.type.dt.itemsize // target.dma_granularity
    c_per_group = group_words > target.shim.bd_step_words
    # Per shim column and batch: the C drains, and per row group the fills of A and of B.
    # Between waits, a shim channel queues at most shim_task_queue tasks: the row groups of a
    # batch push len(parts) fills each onto A's and B's channels (and a drain each onto C's).
    per_sync = min(rows_per_sync, (target.shim.bds - (0 if c_per_group else 1))
                   // (2 * len(parts) + (1 if c_per_group else 0)),
                   target.shim_task_queue // len(parts))
    if per_sync < 1:
        most = min(target.shim_task_queue, (target.shim.bds - 1) // 2)
        raise DesignError(
            "gemm runtime", f"{col_groups} column groups (N={N} over {cols} x n={n}) need "
            f"{len(parts)} fills each of A and B per row group, more than a shim channel "
            f"queues ({target.shim_task_queue} tasks) or a shim tile holds "
            f"({target.shim.bds} BDs)", loc=loc, limit=f"{most} fills each of A and B per "
            f"row group (a fill walks at most {step} column groups)",
            found=f"{len(parts)} each", fix="use more herd columns or a larger n, or split N "
            "over several calls")
    def issue(batch: range, drains: bool, fills: bool) -> None:
        """The batch's drains of C and fills of A and B, shim column by shim column."""
        for i in range(max(rows, cols)):
            if drains and i < cols:
                for g in ([range(rg, rg + 1) for rg in batch] if c_per_group else [batch]):
                    rt.drain(c[i, :], C, tiles(C, (m, n), rows=range(g.start * rows,
                                                                     g.stop * rows),
                                               cols=range(i, N // n, cols), order="grouped",
                                               group=rows))
            if not fills:
                continue
            for rg in batch:
                if i < rows:
                    for part in parts:
                        rt.fill(a[i], A, tiles(A, (m, k_run), rows=rg * rows + i,
                                               repeat=len(part)))
                if i < cols:
                    for part in parts:
                        rt.fill(b[i], B, tiles(B, (k_run, n), cols=range(
                            i + part.start * cols, i + part.stop * cols, cols), order="col"))

    if prefetch is None:
        prefetch = k_run > k
    # Prefetch: the next batch's fills go out before the wait for this batch's drains, so the
    # shim never idles while the host re-arms its BDs (Taka et al.: not overlapping costs
    # 27-28%). Two batches of fills then share a wait: half the batch, when that fits.
    half = min(per_sync, target.shim_task_queue // (2 * len(parts)),
               (target.shim.bds - (per_sync if c_per_group else 1)) // (4 * len(parts)))
    if prefetch and half >= 1 and row_groups > half:
        batches = [range(f, min(f + half, row_groups)) for f in range(0, row_groups, half)]
        issue(batches[0], drains=True, fills=True)
        for j in range(len(batches)):
            if j + 1 < len(batches):
                issue(batches[j + 1], drains=False, fills=True)
            rt.sync()
            if j + 1 < len(batches):
                issue(batches[j + 1], drains=True, fills=False)
        return
    for first in range(0, row_groups, per_sync):
        issue(range(first, min(first + per_sync, row_groups)), drains=True, fills=True)
        rt.sync()
