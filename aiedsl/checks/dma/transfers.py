"""Runtime transfer rules: the n-d pattern of an ``rt.fill``/``rt.drain`` on a shim DMA
(mlir-aie's ``AIEX::verifyStridesWraps``), a plain contiguous run being a linear transfer."""

from __future__ import annotations

import math

from aiedsl.checks.dma.dims import _check_dims, _fail, aligned_stride_fix
from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.ir.runtime import Transfer
from aiedsl.ir.types import Pattern
from aiedsl.targets import TargetModel


def _check_transfer(d: Design, t: Transfer, target: TargetModel) -> None:
    tensor = d.tensor(t.tensor)
    itemsize = tensor.type.dt.itemsize
    p = t.pattern
    where = f"rt.{t.op} of '{t.fifo}' from '{t.tensor}'" if t.op == "fill" else \
        f"rt.{t.op} of '{t.fifo}' into '{t.tensor}'"
    shown = f"offset {p.offset}, sizes {list(p.sizes)}, strides {list(p.strides)}"
    if any(s < 1 for s in p.sizes) or any(s < 0 for s in p.strides) or p.offset < 0:
        _fail(t.loc, where, "sizes >= 1, strides and offset >= 0", shown,
              "use positive sizes and non-negative strides and offset")
    if p.sizes[0] > target.max_shim_iterations:  # checked for linear transfers too
        limit = (f"outermost (iteration) size <= {target.max_shim_iterations} on a shim DMA "
                 "(its 6-bit iteration wrap holds the count less one: mlir-aie's "
                 "NpuWriteBdOp::verify)" if p.strides[0] else
                 f"outermost (repeat) size <= {target.max_shim_iterations} on a shim DMA "
                 "(aiedsl's bound, the iteration wrap's: mlir-aie's verifyStridesWraps lets "
                 "a stride-0 repeat of one more through, as the task's repeat count)")
        _fail(t.loc, where, limit, f"{p.sizes[0]} ({shown})",
              "split the transfer into several fills or drains")
    # judged as aie.mlir says it: a size-1 dimension's stride, which moves nothing, is 0 there
    # (1 innermost), so [1, 1, 1, n] is a linear transfer whatever strides were written
    linear = _is_linear(p.sizes, p.canonical().strides)
    if not linear:
        for i in (1, 2, 3):
            if p.sizes[i] > 1 and p.strides[i] < 1:
                # verifyStridesWraps: only the outermost (iteration) dimension repeats
                if t.op == "drain":  # a drain that repeats writes the same elements again
                    fix = (f"give that dimension the stride that moves it on through "
                           f"'{t.tensor}': a drain has nothing to repeat (it would write the "
                           "same host elements again, and leave others unwritten)")
                elif p.sizes[0] == 1:  # the outermost slot is free: the pattern, moved there
                    sizes, strides = list(p.sizes), list(p.strides)
                    sizes[0], sizes[i] = sizes[i], 1
                    strides[0], strides[i] = 0, 0
                    fix = (f"put the repeat in the outermost of the four dimensions: "
                           f"({p.offset}, {sizes}, {strides}) (a pattern of fewer is padded with "
                           "size-1 dimensions on the left, outermost; tiles(..., repeat=n) "
                           "repeats this way)")
                else:
                    fix = ("put the repeat in the outermost dimension, e.g. sizes "
                           f"[{p.sizes[i]}, 1, ...] strides [0, 0, ...] (tiles(..., repeat=n) "
                           "does)")
                _fail(t.loc, where, "a stride >= 1 on every dimension but the outermost "
                      "(mlir-aie's verifyStridesWraps: 'Stride must be a positive integer'; "
                      "only the iteration dimension may repeat with stride 0)",
                      f"size {p.sizes[i]} with stride {p.strides[i]} ({shown})", fix)
        # verifyStridesWraps: for 4-byte elements the innermost stride is any whole number of
        # words (getHardwareStridesWraps encodes it as stride - 1, e.g. the DMA-only transpose
        # sizes [32, 64] strides [1, 32] of i32); for smaller elements it moves whole words, so
        # only stride 1 means what the pattern says.
        try:
            _check_dims(where, p.sizes[1:], p.strides[1:], itemsize, target, t.loc, shown,
                        strided_inner=itemsize == target.dma_granularity)
        except DesignError as e:
            if not _contiguous(p.sizes, p.strides):
                raise
            # out of bounds is said first: the one run rewritten would leave the tensor too
            _check_bounds(t, p, itemsize, tensor.type.numel, where, shown)
            # a rule the one run breaks as well is said instead: its rewrite would not pass
            _check_offset(t.loc, where, p, itemsize, target, shown)
            # one run spelt over several dimensions: mlir-aie moves [*, 1, 1, n][*, 0, 0, 1]
            # as a plain linear transfer, exempt from the wrap limits (isLinearTransfer)
            n = p.numel // p.sizes[0]
            one = (f"({p.offset}, [{n}], [1])" if p.sizes[0] == 1 else
                   f"({p.offset}, [{p.sizes[0]}, 1, 1, {n}], [{p.strides[0]}, 0, 0, 1])")
            raise DesignError(e.rule, e.message, loc=e.loc, limit=e.limit, found=e.found,
                              related=e.related, fix=f"this is one contiguous run: write it as "
                              f"{one}, which mlir-aie moves as a plain linear transfer, free of "
                              "these limits") from None
    elif (p.sizes[3] * itemsize) % target.dma_granularity:
        # a linear transfer skips only the wrap limit: it still moves whole words
        _fail(t.loc, where, f"the innermost run is a multiple of {target.dma_granularity} "
              "bytes (mlir-aie's verifyStridesWraps: 'Transfer sizes must be multiples of 4 "
              "bytes', linear transfers too)",
              f"{p.sizes[3]} x {itemsize} B = {p.sizes[3] * itemsize} B ({shown})",
              f"move a multiple of {target.dma_granularity // itemsize or 1} elements")
    # of size 1, the iteration stride is emitted as 0 (Pattern.canonical): no word to miss
    if p.sizes[0] > 1 and (p.strides[0] * itemsize) % target.dma_granularity:
        _fail(t.loc, where, f"strides are multiples of {target.dma_granularity} bytes (the "
              "iteration stride too: mlir-aie's verifyStridesWraps)",
              f"stride {p.strides[0]} x {itemsize} B = {p.strides[0] * itemsize} B ({shown})",
              aligned_stride_fix(p.strides[0], itemsize, target.dma_granularity))
    for size, stride in zip(p.sizes, p.strides):  # linear or not
        words = stride * itemsize // target.dma_granularity
        step = target.shim.bd_step_words
        if size > 1 and words > step:
            _fail(t.loc, where, f"each stride <= {step} words of "
                  f"{target.dma_granularity} bytes (the shim BD's 20-bit step fields hold "
                  "the stride less one; aiedsl's bound: mlir-aie's verifyStridesWraps lets "
                  "one more through, which the field cannot hold)",
                  f"stride {stride} = {words} words ({shown})",
                  "split the transfer into several fills or drains nearer each other")
    _check_offset(t.loc, where, p, itemsize, target, shown)
    if p.offset * itemsize >= target.max_shim_offset_bytes:
        _fail(t.loc, where, f"a start below {target.max_shim_offset_bytes:,} bytes (4 GiB) into "
              "the host buffer: the offset is written as the address patch's 32-bit arg_plus "
              "(mlir-aie's AIETargetNPU.cpp appendAddressPatch), so a larger one wraps",
              f"{p.offset * itemsize:,} bytes ({shown})",
              f"pass the part of '{t.tensor}' beyond 4 GiB as a host tensor of its own")
    if p.per_dimension_offsets() is None:
        steps = sorted({s for n, s in zip(p.sizes, p.strides) if n > 1 and s > 1})
        _fail(t.loc, where, "an offset dma_memcpy_nd can spell: it starts at the sum of each "
              "dimension's offset times its stride (mlir-aie's NpuDmaMemcpyNdOp::"
              "getOffsetInBytes), so the offset sits on a dimension of stride 1 or size 1, or "
              "is a sum of multiples of the strides", f"offset {p.offset} with every "
              f"dimension stepping by {', '.join(map(str, steps))} ({shown})",
              "start at a sum of multiples of those strides, or give the pattern a size-1 "
              "dimension to carry the offset", None)
    _check_bounds(t, p, itemsize, tensor.type.numel, where, shown)


def _check_offset(loc: Loc, where: str, p: Pattern, itemsize: int, target: TargetModel,
                  shown: str) -> None:
    """The transfer starts on a word: ``NpuDmaMemcpyNdOp::verify``'s 'Offset must be
    4-byte-aligned'."""
    gran = target.dma_granularity
    start = p.offset * itemsize
    if start % gran == 0:
        return
    per = gran // math.gcd(gran, itemsize)  # elements from one aligned start to the next
    lo = p.offset // per * per
    _fail(loc, where, f"offset a multiple of {gran} bytes (mlir-aie's NpuDmaMemcpyNdOp::verify: "
          "'Offset must be 4-byte-aligned')", f"{start} bytes ({shown})",
          f"start at element {lo}, the nearest {gran}-byte boundary below, and let the kernel "
          f"skip the {p.offset - lo} element(s) before the ones it wants; or lay out the host "
          f"tensor so that each transfer starts on one (rows padded to a multiple of {gran} "
          "bytes)")


def _check_bounds(t: Transfer, p: Pattern, itemsize: int, numel: int, where: str,
                  shown: str) -> None:
    """The pattern stays inside its tensor of ``numel`` elements."""
    hi = p.offset + sum((size - 1) * stride for size, stride in zip(p.sizes, p.strides))
    if hi >= numel:
        _fail(t.loc, where, f"every index inside '{t.tensor}' ({numel} elements)",
              f"index {hi} ({shown})", _bytes_fix(p, itemsize, numel, t.tensor)
              or "shrink the sizes, the strides or the offset")


def _is_linear(sizes: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """mlir-aie's linear transfer, exempt from the wrap limits: ``[*, 1, 1, n][*, 0, 0, 1]``
    (AIEX ``isLinearTransfer``: the outermost dimension may repeat it)."""
    return (sizes[1] == 1 and sizes[2] == 1 and strides[3] == 1 and strides[1] == 0
            and strides[2] == 0)


def _contiguous(sizes: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Do the three inner dimensions walk one contiguous run (spelt over several dimensions)?"""
    expect = 1
    for size, stride in zip(reversed(sizes[1:]), reversed(strides[1:])):
        if size > 1 and stride != expect:
            return False
        expect *= size
    return True


def _bytes_fix(p: Pattern, itemsize: int, numel: int, tensor: str) -> str | None:
    """The fix for a pattern past its tensor's end whose strides look written in bytes (as
    mlir-aie's older npu_dma_memcpy_nd and XRT's buffer offsets are): every stride above 1 a
    multiple of the element size, and, divided by it, the pattern inside the tensor with no
    element twice (strides in bytes divide into a walk of distinct elements; strides that are
    right, on sizes that are wrong, divide into one that overlaps). None otherwise."""
    if itemsize == 1:
        return None
    dims = [(n, st) for n, st in zip(p.sizes, p.strides)]
    steps = [st for n, st in dims if n > 1 and st > 1]
    if not steps or any(st % itemsize for st in steps):
        return None
    fixed = [(n, st // itemsize if n > 1 and st > 1 else st) for n, st in dims]
    if p.offset + sum((n - 1) * st for n, st in fixed) >= numel:
        return None
    extent = 1  # elements an inner dimension's walk spans: the next must step past them
    for n, st in sorted((d for d in fixed if d[0] > 1), key=lambda d: d[1]):
        if st < extent:
            return None
        extent = st * (n - 1) + extent
    first = next((i for i, (n, _) in enumerate(dims) if n > 1), len(dims) - 1)
    return (f"strides count elements of '{tensor}' ({itemsize} bytes each), not bytes: "
            f"strides {[st for _, st in fixed[first:]]} (for sizes "
            f"{[n for n, _ in fixed[first:]]}) stay inside it")
