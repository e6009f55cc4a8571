"""Inputs for a simulated run (the comparison of its outputs with the design's reference is
:mod:`aiedsl.compare`, re-exported here)."""

from __future__ import annotations

import numpy as np

from aiedsl.compare import TOLERANCE, OutputCheck, compare  # noqa: F401 (re-exported)
from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.ir import Design, Transfer


def make_inputs(d: Design, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded random host tensors for every tensor the runtime fills.

    Integers are drawn small (|x| < 2^(bits/2 - 1)) so products stay in range; floats are standard
    normal, rounded to the tensor's dtype.
    """
    rng = np.random.default_rng(seed)
    filled = {t.tensor for t in d.runtime if isinstance(t, Transfer) and t.op == "fill"}
    out = {}
    for t in d.tensors:
        if t.name not in filled:
            continue
        dt = lookup_dtype(t.type.dtype)
        arr: np.ndarray
        if dt.is_float:
            arr = rng.standard_normal(t.type.shape).astype(np.float32).astype(dt.numpy)
        else:
            bound = 2 ** (dt.itemsize * 4 - 1)
            lo = 0 if dt.name == "u8" else -bound
            arr = rng.integers(lo, bound, size=t.type.shape).astype(dt.numpy)
        out[t.name] = arr
    return out


def poisoned(d: Design, name: str) -> np.ndarray:
    """An output buffer filled with a value no correct run writes everywhere (NaN, or int min)."""
    t = d.tensor(name)
    dt = lookup_dtype(t.type.dtype)
    if dt.is_float:
        return np.full(t.type.shape, np.nan, dtype=dt.numpy)
    return np.full(t.type.shape, np.iinfo(dt.numpy).min, dtype=dt.numpy)
