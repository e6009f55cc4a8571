"""The runtime sequence of a whole-array GEMM, as one call.

The dataflow it drives: channel ``a`` has one fifo per herd row (tile rows of A, every K tile),
``b`` one per herd column (tile columns of B), ``c`` one per core, joined per column (``c[x, :]``).
The herd passes over C's tiles in row groups of ``rows`` tile rows; each column's cores cover tile
columns ``x, x + cols, ...``. A shim tile has 16 BDs: per column one drains C and two per row group
fill A and B, so row groups go in batches of ``rows_per_sync`` with a wait after each batch.
A shim pattern's iteration dimension takes at most ``max_shim_iterations`` (63) steps, so with more
column groups than that A and B go in several fills per row group (at most 63 column groups each)
and the batches shrink to stay within the BDs.

Example
-------
::

    with runtime() as rt:
        gemm_runtime(rt, a, b, c, A, B, C, tile=(m, k, n), herd=(COLS, ROWS))
"""

from __future__ import annotations

from aiedsl.errors import DesignError, caller_loc
from aiedsl.lang.channel import Channel
from aiedsl.lang.runtime import RuntimeBuilder, tiles
from aiedsl.lang.tensor import HostTensorRef


def gemm_runtime(rt: RuntimeBuilder, a: Channel, b: Channel, c: Channel, A: HostTensorRef,
                 B: HostTensorRef, C: HostTensorRef, *, tile: tuple[int, int, int],
                 herd: tuple[int, int], rows_per_sync: int = 4) -> None:
    """Fill A and B and drain C for a ``herd = (cols, rows)`` GEMM with ``tile = (m, k, n)``.

    Row groups go in batches of at most ``rows_per_sync``, fewer when the column groups need
    several fills each (see the module docstring); a DesignError when even one row group's
    fills exceed a shim tile's BDs.
    """
    m, k, n = tile
    cols, rows = herd
    loc = caller_loc()
    (M, K), (K2, N) = A.shape, B.shape
    if (K2, tuple(C.shape)) != (K, (M, N)):
        raise DesignError("gemm runtime", f"A {list(A.shape)}, B {list(B.shape)} and C "
                          f"{list(C.shape)} are not M x K, K x N and M x N", loc=loc,
                          fix="pass A, B and C of one GEMM, in that order")
    if not isinstance(rows_per_sync, int) or rows_per_sync < 1:
        raise DesignError("gemm runtime", f"rows_per_sync={rows_per_sync!r}", loc=loc,
                          limit="an int >= 1", found=repr(rows_per_sync),
                          fix="leave it out (4), or give how many row groups to send between "
                          "waits")
    for what, size, step_ in (("M", M, m * rows), ("K", K, k), ("N", N, n * cols)):
        if size % step_:
            unit = {"M": f"m x rows = {m} x {rows}", "K": f"k = {k}",
                    "N": f"n x cols = {n} x {cols}"}[what]
            raise DesignError(
                "gemm runtime", f"{what}={size} is not a multiple of {unit} = {step_}: the "
                f"herd would leave part of C uncomputed", loc=loc,
                limit=f"{what} a multiple of {step_}", found=f"{size} = {size // step_} x "
                f"{step_} + {size % step_}", fix=f"make {what} a multiple of {step_}, or change "
                "the tile or the herd")
    row_groups = M // (m * rows)
    col_groups = N // (n * cols)
    target = rt.builder.target
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
    for first in range(0, row_groups, per_sync):
        batch = range(first, min(first + per_sync, row_groups))
        for i in range(max(rows, cols)):
            if i < cols:
                for g in ([range(rg, rg + 1) for rg in batch] if c_per_group else [batch]):
                    rt.drain(c[i, :], C, tiles(C, (m, n), rows=range(g.start * rows,
                                                                     g.stop * rows),
                                               cols=range(i, N // n, cols), order="grouped",
                                               group=rows))
            for rg in batch:
                if i < rows:
                    for part in parts:
                        rt.fill(a[i], A, tiles(A, (m, k), rows=rg * rows + i,
                                               repeat=len(part)))
                if i < cols:
                    for part in parts:
                        rt.fill(b[i], B, tiles(B, (k, n), cols=range(
                            i + part.start * cols, i + part.stop * cols, cols), order="col"))
        rt.sync()
