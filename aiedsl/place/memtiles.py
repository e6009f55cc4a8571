"""Which memtile each memtile link goes to, so that no memtile runs out of DMA channels.

A link keeps all its channels on its memtile: one S2MM per input fifo, one MM2S per output
fifo (mlir-aie's objectfifo lowering puts a link's ends on its shared tile, and its
``DMAChannelAnalysis`` hands out a tile's channels one by one until none is left: "number of
input/output DMA channel exceeded!"). Placing links is then packing them into the device's
memtiles by two sizes at once. :func:`fit` searches for a packing, trying the columns in the
order the caller prefers, so the first packing it finds is the caller's greedy choice whenever
that choice fits; :mod:`aiedsl.checks.memtiles` asks it whether any packing exists.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from aiedsl.ir.fifos import Link

Need = tuple[int, int]
"""A link's channels: (S2MM, MM2S)."""

BUDGET = 200_000
"""Search steps before :func:`fit` gives up (a packing of a few dozen links into at most eight
memtiles takes a few hundred; an impossible one is usually settled by the memo long before)."""


def channels(link: Link) -> Need:
    """The DMA channels memtile link ``link`` takes on its memtile: (S2MM, MM2S)."""
    return len(link.srcs), len(link.dsts)


@dataclass(frozen=True)
class Fit:
    """What :func:`fit` found: ``columns`` (one per link) when a packing exists, ``None``
    when none does; ``settled`` is False when it gave up before knowing."""

    columns: list[int] | None
    settled: bool = True


def fit(needs: Sequence[Need], pins: Sequence[int | None], cols: int, cap: Need,
        prefer: Callable[[int, list[Need]], list[int]] | None = None,
        budget: int = BUDGET) -> Fit:
    """Columns for links needing ``needs`` channels, in order, within ``cap`` per memtile.

    ``pins[i]`` fixes link ``i``'s column. ``prefer(i, loads)`` orders the columns to try for
    an unpinned link ``i`` given the loads of the links before it in declaration order (pinned
    ones included as they come); the search tries only columns with room for the link beside
    every pinned link. Without ``prefer``, columns are tried left to right.
    """
    need_in, need_out = cap
    base = [[0, 0] for _ in range(cols)]
    for n, p in zip(needs, pins):
        if p is not None:
            base[p][0] += n[0]
            base[p][1] += n[1]
    if any(a > need_in or b > need_out for a, b in base):
        return Fit(None)
    free = [i for i, p in enumerate(pins) if p is None]
    failed: set[tuple[int, tuple[Need, ...]]] = set()
    steps = 0
    out: list[int] = [p if p is not None else -1 for p in pins]

    def loads_before(i: int) -> list[Need]:
        """The loads the caller's greedy order sees at link ``i``: every link before it."""
        got = [[0, 0] for _ in range(cols)]
        for j in range(i):
            got[out[j]][0] += needs[j][0]
            got[out[j]][1] += needs[j][1]
        return [(a, b) for a, b in got]

    def search(k: int, strict: list[list[int]]) -> bool:
        nonlocal steps
        if k == len(free):
            return True
        key = (k, tuple(sorted((a, b) for a, b in strict)))
        if key in failed:
            return False
        steps += 1
        if steps > budget:
            raise _GaveUp
        i = free[k]
        a, b = needs[i]
        order = prefer(i, loads_before(i)) if prefer else []
        order += [c for c in range(cols) if c not in order]  # every column, to be complete
        for c in order:
            if strict[c][0] + a > need_in or strict[c][1] + b > need_out:
                continue
            strict[c][0] += a
            strict[c][1] += b
            out[i] = c
            if search(k + 1, strict):
                return True
            strict[c][0] -= a
            strict[c][1] -= b
        out[i] = -1
        failed.add(key)
        return False

    try:
        found = search(0, base)
    except _GaveUp:
        return Fit(None, settled=False)
    return Fit(out if found else None)


class _GaveUp(Exception):
    """The search ran past its budget."""
