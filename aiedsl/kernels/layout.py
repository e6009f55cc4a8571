"""Blocked layouts: how the DMA packs a matrix into the mmul blocks a kernel reads.

A ``rows x cols`` matrix in ``(br, bc)`` blocks is stored block after block (blocks in row-major
order), each block row-major. :func:`block_dims` gives the memtile ``dims_to_stream`` that packs a
row-major tile; :func:`unblock_dims` the one that unpacks.
"""

from __future__ import annotations

import numpy as np


def block(m: np.ndarray, br: int, bc: int) -> np.ndarray:
    """Row-major ``(R, C)`` -> flat blocked storage of ``(br, bc)`` blocks."""
    r, c = m.shape
    return m.reshape(r // br, br, c // bc, bc).transpose(0, 2, 1, 3).reshape(-1)


def unblock(flat: np.ndarray, rows: int, cols: int, br: int, bc: int) -> np.ndarray:
    """Flat blocked storage -> row-major ``(rows, cols)`` matrix."""
    return flat.reshape(rows // br, cols // bc, br, bc).transpose(0, 2, 1, 3).reshape(rows, cols)


def block_dims(rows: int, cols: int, br: int, bc: int) -> list[tuple[int, int]]:
    """``dims_to_stream`` that reads a row-major ``rows x cols`` tile as ``(br, bc)`` blocks.

    >>> block_dims(64, 64, 4, 8)
    [(16, 256), (8, 8), (4, 64), (8, 1)]
    """
    return [(rows // br, br * cols), (cols // bc, bc), (br, cols), (bc, 1)]


def unblock_dims(rows: int, cols: int, br: int, bc: int) -> list[tuple[int, int]]:
    """``dims_to_stream`` that reads a blocked ``rows x cols`` tile out in row-major order.

    >>> unblock_dims(64, 64, 4, 4)
    [(16, 256), (4, 4), (16, 16), (4, 1)]
    """
    return [(rows // br, br * cols), (br, bc), (cols // bc, br * bc), (bc, 1)]
