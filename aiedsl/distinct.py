"""Distinct values of an integer array, found without ``np.unique``: numpy 2's loads
``numpy.ma`` on its first call, 14 ms that every simulated run of a matmul design paid (its
output check samples rows and columns) and that a sort does without.

>>> import numpy as np
>>> distinct(np.array([3, 1, 3, 0])).tolist(), has_repeats(np.array([3, 1, 3]))
([0, 1, 3], True)
"""

from __future__ import annotations

import numpy as np

__all__ = ["distinct", "has_repeats"]


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values of ``values`` (flattened), sorted: what ``np.unique`` returns."""
    s = np.sort(np.asarray(values), axis=None)
    if s.size < 2:
        return s
    return s[np.concatenate(([True], s[1:] != s[:-1]))]


def has_repeats(values: np.ndarray) -> bool:
    """Does any value occur in ``values`` more than once?"""
    s = np.sort(np.asarray(values), axis=None)
    return bool(s.size > 1 and np.any(s[1:] == s[:-1]))
