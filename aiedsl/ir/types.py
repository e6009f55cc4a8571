"""Value types of the IR: tensor types, DMA dimensions and access patterns."""

from __future__ import annotations

import math

import numpy as np

from pydantic import BaseModel, ConfigDict

from aiedsl.ir.field_docs import describe_fields

from aiedsl.dtypes import DType, dtype


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_extra=describe_fields)


class TensorType(_Frozen):
    """A shaped, typed block of memory: a host tensor, a fifo element or a kernel argument.

    Example
    -------
    >>> TensorType(shape=(64, 64), dtype="bf16").nbytes
    8192
    """

    shape: tuple[int, ...]
    """Extent of each dimension, outermost first."""
    dtype: str
    """aiedsl dtype name (``"bf16"``, ``"i16"``, ...)."""

    @property
    def dt(self) -> DType:
        """The :class:`~aiedsl.dtypes.DType` of the elements."""
        return dtype(self.dtype)

    @property
    def numel(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Size in bytes."""
        return self.numel * self.dt.itemsize

    @property
    def written(self) -> str:
        """As a design writes it: ``Tensor[64, 64, bf16]``."""
        return f"Tensor[{', '.join(map(str, self.shape))}, {self.dtype}]"

    def __str__(self) -> str:
        return "x".join(str(s) for s in self.shape) + "x" + self.dtype


class Dim(_Frozen):
    """One dimension of a DMA address generator: ``size`` steps of ``stride`` elements."""

    size: int
    """Steps."""
    stride: int
    """Elements between steps."""


class Pattern(_Frozen):
    """An n-d access pattern over a host tensor, in elements, outermost dimension first.

    ``offset`` is linear; ``sizes`` and ``strides`` always have 4 entries, as mlir-aie's
    ``dma_memcpy_nd`` takes them. The outermost dimension with stride 0 repeats the transfer.
    """

    offset: int
    """The first element (a linear index into the tensor)."""
    sizes: tuple[int, int, int, int]
    """Elements per dimension, outermost first."""
    strides: tuple[int, int, int, int]
    """Elements between steps of each dimension (0 on the outermost: a repeat)."""

    @property
    def numel(self) -> int:
        """Number of elements the pattern moves."""
        return math.prod(self.sizes)

    def canonical(self) -> "Pattern":
        """This pattern with the stride of every size-1 dimension, which moves nothing, as
        mlir-aie wants it: 0, and 1 on the innermost. What ``aie.mlir`` says and the checks
        judge.

        mlir-aie's ``verifyStridesWraps`` wants every dimension's stride a whole number of
        4-byte words, size 1 or not, so a bf16 ``[1, 1, 8, 8]`` with strides ``[0, 5, 8, 1]``
        would be refused by aiecc for a stride that does nothing; 0 is whole words, and
        ``getHardwareStridesWraps`` encodes nothing for it. The innermost keeps 1, which
        ``verifyStridesWraps`` exempts, so ``[*, 1, 1, n][*, 0, 0, 1]`` stays the linear
        transfer mlir-aie moves free of the wrap limits (``isLinearTransfer``).

        >>> Pattern(offset=0, sizes=(1, 1, 8, 8), strides=(0, 5, 8, 1)).canonical().strides
        (0, 0, 8, 1)
        """
        t = tuple((1 if i == 3 else 0) if n == 1 else stride
                  for i, (n, stride) in enumerate(zip(self.sizes, self.strides)))
        if t == self.strides:
            return self
        return Pattern(offset=self.offset, sizes=self.sizes, strides=(t[0], t[1], t[2], t[3]))

    def per_dimension_offsets(self) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """The per-dimension offsets (and strides) that spell this pattern's linear offset in
        ``dma_memcpy_nd``; None when none can (check refuses such a pattern).

        mlir-aie starts a transfer at the sum of each dimension's offset times its stride
        (``NpuDmaMemcpyNdOp::getOffsetInBytes``), so the offset goes on a dimension of stride 1:
        the innermost one, or, when that one steps (4-byte elements walked across), a size-1
        dimension given stride 1 (its stride moves nothing); failing those, on a dimension whose
        stride divides it. Every other size-1 dimension has stride 0 (1 innermost), whatever the
        design wrote (:meth:`canonical`: mlir-aie checks those strides too).

        >>> Pattern(offset=4, sizes=(1, 2, 8, 2), strides=(0, 64, 8, 2)).per_dimension_offsets()
        ((4, 0, 0, 0), (1, 64, 8, 2))
        """
        p = self.canonical()
        offsets, strides = [0, 0, 0, 0], list(p.strides)
        if p.offset == 0 or strides[3] == 1:
            offsets[3] = p.offset
            return tuple(offsets), tuple(strides)
        for i in (2, 1, 0):
            if strides[i] == 1:
                offsets[i] = p.offset
                return tuple(offsets), tuple(strides)
        for i in (2, 1, 0):
            if p.sizes[i] == 1:
                offsets[i], strides[i] = p.offset, 1
                return tuple(offsets), tuple(strides)
        # every dimension walks with a stride > 1: one that divides the offset carries it (the
        # innermost such), or several together (10 = 1 x 6 + 1 x 4)
        one = next((i for i in (3, 2, 1, 0) if strides[i] and p.offset % strides[i] == 0), None)
        carried = {one: p.offset // strides[one]} if one is not None else _carry(
            p.offset, sorted(((strides[i], i) for i in range(4) if strides[i]), reverse=True),
            [_CARRY_STEPS])
        if carried is None:
            return None
        for i, n in carried.items():
            offsets[i] = n
        return tuple(offsets), tuple(strides)

    def indices(self) -> "np.ndarray":
        """Every element offset the pattern visits, in transfer order (outermost dimension
        slowest)."""
        idx = np.array(self.offset, dtype=np.int64)
        for size, stride in zip(self.sizes, self.strides):
            idx = idx[..., None] + np.arange(size, dtype=np.int64) * stride
        return idx.ravel()


_CARRY_STEPS = 100_000
"""How many tries :func:`_carry` makes before it calls an offset unspellable (a pattern whose
strides could carry it only in an astronomically long search is refused, never hung on)."""


def _carry(rest: int, dims: list[tuple[int, int]], budget: list[int]) -> dict[int, int] | None:
    """Counts ``{dimension: n}`` with ``sum(n x stride) == rest`` over ``dims`` ((stride,
    dimension), largest stride first; a single dividing stride found first), or None."""
    if rest == 0:
        return {}
    for stride, i in dims:
        if rest % stride == 0:
            return {i: rest // stride}
    if len(dims) < 2:
        return None
    (stride, i), others = dims[0], dims[1:]
    for n in range(rest // stride, -1, -1):
        budget[0] -= 1
        if budget[0] < 0:
            return None
        got = _carry(rest - n * stride, others, budget)
        if got is not None:
            return {i: n, **got} if n else got
    return None


def dims_index(dims: tuple[Dim, ...], numel: int) -> np.ndarray | None:
    """Element order of an n-d address generator over a buffer; None for plain order.

    The outermost dimension's size is not encoded in hardware: it steps until ``numel`` elements
    have moved.
    """
    if not dims:
        return None
    inner = 1
    for d in dims[1:]:
        inner *= d.size
    idx = np.array(0, dtype=np.int64)
    for size, stride in [(numel // inner, dims[0].stride)] + [(d.size, d.stride) for d in dims[1:]]:
        idx = idx[..., None] + np.arange(size, dtype=np.int64) * stride
    idx = idx.ravel()
    # dims that walk the buffer in order (blocks one row high, say) are plain order: the
    # simulator then moves the data as it is, never as a view it takes for a reordered copy
    return None if idx.size == numel and np.array_equal(idx, np.arange(numel)) else idx


def first_indices(p: Pattern, n: int) -> np.ndarray:
    """The host elements the first ``n`` elements ``p`` moves are, in the order it moves them
    (without walking the rest of the pattern)."""
    n = max(0, min(n, p.numel))
    if n == 0 or min(p.sizes) < 1:
        return np.zeros(0, dtype=np.int64)
    steps = np.unravel_index(np.arange(n, dtype=np.int64), p.sizes)
    out = np.full(n, p.offset, dtype=np.int64)
    for step, stride in zip(steps, p.strides):
        out += step * stride
    return out
