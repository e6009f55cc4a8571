"""The largest |value| of each row of a product's A and each column of its B: what bounds the
size of each element's terms, read a slice at a time (a float32 copy of a slice, never of a
whole 4096^2 operand, 64 MB, which the simulator's memory bound would count).

>>> import numpy as np
>>> rows, cols = row_col_largest(np.array([[1.0, -3.0], [np.inf, 0.5]], np.float32),
...                              np.array([[2.0, 0.0], [-1.0, 4.0]], np.float32))
>>> rows.tolist(), cols.tolist()
([3.0, 0.5], [2.0, 4.0])
"""

from __future__ import annotations

import numpy as np

__all__ = ["row_col_largest"]

_ROWS = 256
"""Rows of an operand read at a time."""


def row_col_largest(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(max|A[i]|, max|B[:, j]|)`` as float64 vectors, non-finite values left out (0 for a
    row or column of none)."""
    rows = np.concatenate([_largest(a[lo:lo + _ROWS], 1) for lo in range(0, len(a), _ROWS)]
                          or [np.zeros(0)])
    cols = np.zeros(b.shape[1])
    for lo in range(0, len(b), _ROWS):
        np.maximum(cols, _largest(b[lo:lo + _ROWS], 0), out=cols)
    return rows, cols


def _largest(part: np.ndarray, axis: int) -> np.ndarray:
    """The largest finite |value| of ``part`` along ``axis``, as float64 (0 for none)."""
    with np.errstate(invalid="ignore", over="ignore"):
        wide = np.abs(np.asarray(part, dtype=np.float32))
        return np.max(wide, axis=axis, initial=0.0, where=np.isfinite(wide)).astype(np.float64)
