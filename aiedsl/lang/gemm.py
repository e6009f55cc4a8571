"""The runtime sequence of a whole-array GEMM, as one call.

The dataflow it drives: channel ``a`` has one fifo per herd row (tile rows of A, every K tile),
``b`` one per herd column (tile columns of B), ``c`` one per core, joined per column (``c[x, :]``).
The herd passes over C's tiles in row groups of ``rows`` tile rows; each column's cores cover tile
columns ``x, x + cols, ...``. A shim tile has 16 BDs: per column one drains C and two per row group
fill A and B, so row groups go in batches of ``rows_per_sync`` with a wait after each batch.

Example
-------
::

    with runtime() as rt:
        gemm_runtime(rt, a, b, c, A, B, C, tile=(m, k, n), herd=(COLS, ROWS))
"""

from __future__ import annotations

from aiedsl.lang.channel import Channel
from aiedsl.lang.runtime import RuntimeBuilder, tiles
from aiedsl.lang.tensor import HostTensorRef


def gemm_runtime(rt: RuntimeBuilder, a: Channel, b: Channel, c: Channel, A: HostTensorRef,
                 B: HostTensorRef, C: HostTensorRef, *, tile: tuple[int, int, int],
                 herd: tuple[int, int], rows_per_sync: int = 7) -> None:
    """Fill A and B and drain C for a ``herd = (cols, rows)`` GEMM with ``tile = (m, k, n)``."""
    m, k, n = tile
    cols, rows = herd
    M, N = A.shape[0], B.shape[1]
    row_groups = M // (m * rows)
    col_groups = N // (n * cols)
    for first in range(0, row_groups, rows_per_sync):
        batch = range(first, min(first + rows_per_sync, row_groups))
        for i in range(max(rows, cols)):
            if i < cols:
                rt.drain(c[i, :], C, tiles(C, (m, n), rows=range(batch.start * rows,
                                                                 batch.stop * rows),
                                           cols=range(i, N // n, cols), order="grouped",
                                           group=rows))
            for rg in batch:
                if i < rows:
                    rt.fill(a[i], A, tiles(A, (m, k), rows=rg * rows + i, repeat=col_groups))
                if i < cols:
                    rt.fill(b[i], B, tiles(B, (k, n), cols=range(i, N // n, cols),
                                           order="col"))
        rt.sync()
