"""Host-memory access patterns as the shim DMAs walk them: element offsets in transfer order,
the same pieces as strided views where they are regular, and the AXI bursts a pattern costs."""

from __future__ import annotations

from typing import Any

import numpy as np

from aiedsl.ir.types import dims_index
from aiedsl.kernels.layout import MOVE_UNITS


def pattern_steps(pattern: Any, numel: int) -> Any:
    """Element offsets of a runtime pattern in transfer order, ``numel`` at a time.

    Offsets are built one outermost step at a time (int32: host tensors are < 2^31 elements), so
    a long transfer never holds all of its indices at once.
    """
    inner: np.ndarray = np.array(0, dtype=np.int32)
    for size, stride in zip(pattern.sizes[1:], pattern.strides[1:]):
        inner = inner[..., None] + np.arange(size, dtype=np.int32) * np.int32(stride)
    inner = inner.ravel()
    carry = np.empty(0, dtype=np.int32)
    for step in range(pattern.sizes[0]):
        block = inner + np.int32(pattern.offset + step * pattern.strides[0])
        if carry.size:
            block = np.concatenate([carry, block])
        whole = block.size - block.size % numel
        for off in range(0, whole, numel):
            yield block[off:off + numel]
        carry = block[whole:]
    if carry.size:
        yield carry


def _piece_views(flat: np.ndarray, pattern: Any, numel: int, write: bool
                 ) -> list[np.ndarray] | None:
    """The pieces of :func:`pattern_steps` as strided views of ``flat``, when every piece is one
    regular block of the pattern (``r`` steps of one dimension times all the inner ones); None
    otherwise. A strided copy of such a block costs a fraction of an index gather.

    Views that would leave ``flat``, run backwards, or (for writing) hit an element twice are
    refused: the index arrays then do it as before.
    """
    sizes, strides = tuple(pattern.sizes), tuple(pattern.strides)
    total = int(np.prod(sizes))
    if numel <= 0 or total % numel or min(strides) < 0 or pattern.offset < 0:
        return None
    suffix = [1] * (len(sizes) + 1)
    for j in range(len(sizes) - 1, -1, -1):
        suffix[j] = suffix[j + 1] * sizes[j]
    j = next(j for j in range(len(sizes) + 1) if numel % suffix[j] == 0)
    if j == 0:  # numel == total: the whole pattern is one piece
        shape, vstrides, outer = sizes, strides, [pattern.offset]
    else:
        r = numel // suffix[j]
        if sizes[j - 1] % r:
            return None
        shape = (r, *sizes[j:])
        vstrides = (strides[j - 1], *strides[j:])
        outer_idx = np.array(pattern.offset, dtype=np.int64)
        for size, stride in [*zip(sizes[:j - 1], strides[:j - 1]),
                             (sizes[j - 1] // r, strides[j - 1] * r)]:
            outer_idx = outer_idx[..., None] + np.arange(size, dtype=np.int64) * stride
        outer = outer_idx.ravel().tolist()
    span = sum((n - 1) * st for n, st in zip(shape, vstrides))
    if max(outer) + span >= flat.size:
        return None
    if write:  # injective: each stride passes over everything the smaller ones cover
        reach = 0
        for st, n in sorted((st, n) for n, st in zip(shape, vstrides) if n > 1):
            if st <= reach:
                return None
            reach += (n - 1) * st
    item = flat.itemsize
    bstrides = tuple(st * item for st in vstrides)
    return [np.ndarray(shape, flat.dtype, flat, off * item, bstrides) for off in outer]


def pattern_reader(flat: np.ndarray, pattern: Any, numel: int) -> Any:
    """Copies of the pieces of :func:`pattern_steps` read from ``flat``, in transfer order."""
    views = _piece_views(flat, pattern, numel, write=False)
    if views is None:
        for idx in pattern_steps(pattern, numel):
            yield flat[idx]
        return
    for v in views:
        yield v.copy().reshape(-1)


def pattern_writer(flat: np.ndarray, pattern: Any, numel: int) -> Any:
    """One store per piece of :func:`pattern_steps` into ``flat``, in transfer order: called
    with the piece's elements (``flat``'s dtype)."""
    views = _piece_views(flat, pattern, numel, write=True)
    if views is None:
        for idx in pattern_steps(pattern, numel):
            yield lambda data, idx=idx: flat.__setitem__(idx, data)
        return
    for v in views:
        yield lambda data, v=v: v.__setitem__(Ellipsis, data.reshape(v.shape))


def bursts_per_byte(pattern: Any, itemsize: int, burst_bytes: int) -> float:
    """AXI bursts per byte a shim DMA issues for ``pattern`` over elements of ``itemsize`` bytes.

    The innermost dimensions that continue one another contiguously form one run; every run is
    ``ceil(run / burst_bytes)`` bursts (runs are taken as starting on a burst boundary).
    """
    span = 1  # elements of one contiguous run
    for size, stride in zip(reversed(pattern.sizes), reversed(pattern.strides)):
        if stride == span:
            span *= size
        elif size > 1:
            break
    run = span * itemsize
    return -(-run // burst_bytes) / run


def dims_gather(dims: Any, numel: int, dtype: np.dtype) -> Any:
    """A function copying a part of ``numel`` elements of ``dtype`` in the order of the address
    generator ``dims`` (outermost first; the outermost size steps until ``numel`` have moved):
    a strided copy where the walk stays inside the part, else an index gather. None for plain
    order.
    """
    idx = dims_index(tuple(dims), numel)
    if idx is None:
        return None
    inner = 1
    for d in dims[1:]:
        inner *= d.size
    shape = [numel // inner, *(d.size for d in dims[1:])]
    strides = [d.stride for d in dims]
    if numel % inner or min(strides) < 0 or int(idx.max()) >= numel:
        return lambda data: data.take(idx)
    unit = None
    if strides[-1] == 1:
        run = shape[-1] * dtype.itemsize
        if run in MOVE_UNITS and all(s % shape[-1] == 0 for s in strides[:-1]):
            unit = MOVE_UNITS[run]
    if unit is None:
        bstrides = tuple(s * dtype.itemsize for s in strides)
        return lambda data: np.ascontiguousarray(
            np.ndarray(shape, dtype, data, 0, bstrides)).reshape(-1)
    ushape = tuple(shape[:-1])
    ustrides = tuple(s // shape[-1] * unit.itemsize for s in strides[:-1])
    return lambda data: np.ascontiguousarray(
        np.ndarray(ushape, unit, data, 0, ustrides)).view(dtype).reshape(-1)
