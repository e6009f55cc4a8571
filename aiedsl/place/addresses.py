"""Data-memory addresses, as mlir-aie's ``aie-assign-buffer-addresses`` hands them out.

A model of ``AIEAssignBuffers.cpp`` (mlir-aie ``lib/Dialect/AIE/Transforms``), default scheme:

* **bank-aware** (``simpleBankAwareAllocation``): the memory is cut into the target's banks
  (4 of 16 KB on a core, 8 of 64 KB on a memtile); a core's stack takes the bottom of bank 0.
  The tile's buffers, in IR order, are sorted largest first (``std::sort``, see
  :func:`cxx_sort`), then placed round-robin: each buffer goes at the next free address of the
  first bank, starting from the bank after the one the previous buffer went to, where it fits
  whole. The fixtures pin the round-robin: with the stack in bank 0 a 16 KB buffer skips to
  bank 1 and the next buffer starts looking at bank 2.
* **fallback** (``basicAllocation``): when some buffer fits no bank (or the stack alone is larger
  than bank 0: mlir-aie's overflow check fails the bank-aware pass), every buffer of the tile
  is laid out one after the other, largest first (the same sort), from the top of the stack.
  mlir-aie sets no ``mem_bank`` then; aiedsl records the bank the buffer starts in.

Both take the tile's buffer sizes in IR order and answer, in the order the buffers were placed
(largest first), (index into ``sizes``, address, bank).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
Placed = tuple[int, int, int]
"""(index of the buffer, address, bank)."""


def bank_aware(sizes: Sequence[int], memory: int, banks: int, stack: int
               ) -> list[Placed] | None:
    """Addresses of buffers of ``sizes`` (IR order), or None when one fits no bank."""
    bank_size = memory // banks
    free = [b * bank_size for b in range(banks)]
    free[0] += stack
    if free[0] > bank_size:  # the stack alone overflows bank 0: reported, so the fallback
        return None
    out: list[Placed] = []
    bank = 0
    for i in cxx_sort(list(range(len(sizes))), lambda a, b: sizes[a] > sizes[b]):
        for k in range(banks):
            b = (bank + k) % banks
            if free[b] + sizes[i] <= (b + 1) * bank_size:
                out.append((i, free[b], b))
                free[b] += sizes[i]
                bank = (b + 1) % banks
                break
        else:
            return None
    return out


def sequential(sizes: Sequence[int], memory: int, banks: int, stack: int) -> list[Placed]:
    """The fallback: one buffer after another from the top of the stack, largest first."""
    bank_size = memory // banks
    out: list[Placed] = []
    addr = stack
    for i in cxx_sort(list(range(len(sizes))), lambda a, b: sizes[a] > sizes[b]):
        out.append((i, addr, addr // bank_size))
        addr += sizes[i]
    return out


# -- std::sort ---------------------------------------------------------------------------------
#
# mlir-aie sorts a tile's buffers with std::sort, which is not stable: buffers of equal size
# may change places. Which places they take is decided by the algorithm, so aiedsl runs the same
# one (libstdc++'s introsort, the C++ library mlir-aie is built with on Linux): median-of-three
# quicksort down to runs of 16, heapsort past a depth of 2*log2(n), then one insertion sort.
# Up to 16 buffers it is a plain insertion sort, i.e. stable (every fixture tile is in this case).

_THRESHOLD = 16


def cxx_sort(xs: list[T], less: Callable[[T, T], bool]) -> list[T]:
    """``xs`` sorted in place by strict weak order ``less``, as libstdc++'s std::sort would."""
    n = len(xs)
    if n > 1:
        _introsort(xs, 0, n, 2 * (n.bit_length() - 1), less)
        _final_insertion_sort(xs, 0, n, less)
    return xs


def _introsort(xs: list[T], first: int, last: int, depth: int,
               less: Callable[[T, T], bool]) -> None:
    while last - first > _THRESHOLD:
        if depth == 0:
            _heapsort(xs, first, last, less)
            return
        depth -= 1
        cut = _partition_pivot(xs, first, last, less)
        _introsort(xs, cut, last, depth, less)
        last = cut


def _partition_pivot(xs: list[T], first: int, last: int, less: Callable[[T, T], bool]) -> int:
    mid = first + (last - first) // 2
    a, b, c = first + 1, mid, last - 1
    # move the median of xs[a], xs[b], xs[c] to xs[first]
    if less(xs[a], xs[b]):
        m = b if less(xs[b], xs[c]) else (c if less(xs[a], xs[c]) else a)
    else:
        m = a if less(xs[a], xs[c]) else (c if less(xs[b], xs[c]) else b)
    xs[first], xs[m] = xs[m], xs[first]
    # unguarded partition of [first + 1, last) around xs[first]
    lo, hi = first + 1, last
    while True:
        while less(xs[lo], xs[first]):
            lo += 1
        hi -= 1
        while less(xs[first], xs[hi]):
            hi -= 1
        if not lo < hi:
            return lo
        xs[lo], xs[hi] = xs[hi], xs[lo]
        lo += 1


def _final_insertion_sort(xs: list[T], first: int, last: int,
                          less: Callable[[T, T], bool]) -> None:
    if last - first > _THRESHOLD:
        _insertion_sort(xs, first, first + _THRESHOLD, less)
        for i in range(first + _THRESHOLD, last):
            _linear_insert(xs, i, less)
    else:
        _insertion_sort(xs, first, last, less)


def _insertion_sort(xs: list[T], first: int, last: int, less: Callable[[T, T], bool]) -> None:
    for i in range(first + 1, last):
        if less(xs[i], xs[first]):
            v = xs[i]
            xs[first + 1:i + 1] = xs[first:i]
            xs[first] = v
        else:
            _linear_insert(xs, i, less)


def _linear_insert(xs: list[T], i: int, less: Callable[[T, T], bool]) -> None:
    v = xs[i]
    while less(v, xs[i - 1]):
        xs[i] = xs[i - 1]
        i -= 1
    xs[i] = v


def _heapsort(xs: list[T], first: int, last: int, less: Callable[[T, T], bool]) -> None:
    """libstdc++'s partial_sort(first, last, last): make_heap, then sort_heap."""
    n = last - first
    if n >= 2:
        parent = (n - 2) // 2
        while True:
            _adjust_heap(xs, first, parent, n, xs[first + parent], less)
            if parent == 0:
                break
            parent -= 1
    while last - first > 1:
        last -= 1
        v = xs[last]
        xs[last] = xs[first]
        _adjust_heap(xs, first, 0, last - first, v, less)


def _adjust_heap(xs: list[T], first: int, hole: int, n: int, v: T,
                 less: Callable[[T, T], bool]) -> None:
    top = hole
    child = hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if less(xs[first + child], xs[first + child - 1]):
            child -= 1
        xs[first + hole] = xs[first + child]
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        xs[first + hole] = xs[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and less(xs[first + parent], v):
        xs[first + hole] = xs[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    xs[first + hole] = v
