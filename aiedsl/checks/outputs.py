"""What the drains write into the host tensors: every element of an output, and no element by
two drains that nothing orders.

Walked element by element for outputs up to :data:`EXACT_COVERAGE` elements, through strided
views of one array per tensor (no index arrays: a 4096x4096 output would need 128 MB of them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.ir.runtime import Transfer
from aiedsl.ir.sequence import Retired, retirements
from aiedsl.ir.types import Pattern

if TYPE_CHECKING:  # numpy loads only when a check needs it (aiedsl check starts faster)
    import numpy as np


EXACT_COVERAGE = 1 << 26
"""Outputs up to this many elements are checked element by element; larger ones by count."""


def check_outputs_written(d: Design, retired: Callable[[], Retired] | None = None) -> None:
    """Every element of every drained host tensor is written by some drain, and no two drains
    race for one (``retired``: :func:`~aiedsl.ir.sequence.retirements` of ``d`` when the
    caller has it, else it is worked out here).

    An element no drain writes keeps whatever the host buffer held: the run would look done
    and be wrong (a GEMM whose tile rows do not divide M leaves its last rows unwritten). A
    tensor the runtime also fills is the exception: the host gave every element a value (an
    in-place update), and an element no drain writes keeps it. Two drains of different fifos
    run on different channels at once: an element both write keeps whichever lands last,
    unless a wait retired the first before the second was issued.
    """
    drains: dict[str, list[tuple[int, Transfer]]] = {}
    for i, t in enumerate(d.runtime):
        if isinstance(t, Transfer) and t.op == "drain":
            drains.setdefault(t.tensor, []).append((i, t))
    filled = set(d.filled_tensors())
    for name, its in drains.items():
        ts = [t for _, t in its]
        host = d.tensor(name).type
        moved = sum(t.pattern.numel for t in ts)
        missing = host.numel - moved
        several = len({t.fifo for t in ts}) > 1
        if name in filled and not several:
            continue  # in place: nothing can race, and what is not drained keeps its value
        written: np.ndarray | None = None
        if host.numel <= EXACT_COVERAGE and moved <= 4 * EXACT_COVERAGE and (
                missing <= 0 or several):
            import numpy as np

            # one fifo's drains run in order on one channel: only several can race
            written = _writers(d, name, its, retired) if several else _marked(ts, host.numel)
            missing = int(host.numel - np.count_nonzero(written))
        if missing > 0 and name not in filled:
            if written is None and host.numel <= EXACT_COVERAGE:
                written = _marked(ts, host.numel)
            first = None if written is None else int((written == 0).argmax())
            where = "" if first is None else (
                f"; the first is element {first}" + (
                    f" (row {first // host.shape[-1]}, column {first % host.shape[-1]})"
                    if len(host.shape) == 2 else ""))
            raise DesignError(
                "output coverage", f"the drains of '{name}' never write {missing} of its "
                f"{host.numel} elements{where}", loc=ts[0].loc, limit="every element of an "
                "output is drained, unless the runtime also fills the tensor (then it is updated "
                "in place, and an element no drain writes keeps the host's value)",
                found=f"{host.numel - missing} elements written",
                related=[(f"drain of '{t.fifo}'", t.loc) for t in ts[1:4] if t.loc != ts[0].loc],
                fix="drain every element: make the tiles cover the whole tensor (for a tiled "
                "design its sizes must be multiples of what one pass of the herd computes), or "
                "shrink the output to the part the design writes; or, for the host's values to "
                f"stay where no drain writes, fill from '{name}' too (rt.fill(f, {name}, ...) "
                f"into a fifo f a core consumes): '{name}' is then updated in place, the host "
                "copies its values to the device before the run, that fill reads what it moves "
                f"of it from DRAM through f's DMA channels, and the reference is handed '{name}' "
                "and returns all of it")


def _writers(d: Design, name: str, its: list[tuple[int, Transfer]],
             retired: Callable[[], Retired] | None) -> "np.ndarray":
    """Which drain (its place in ``its``, from 1; 0: none) last wrote each element of tensor
    ``name``; a DesignError where two drains of different fifos write an element with nothing
    ordering them (the first not retired by a wait before the second is issued)."""
    import numpy as np

    retired_at = {t: w for w, ts in (retired() if retired else retirements(d)).items()
                  for t in ts}
    host = d.tensor(name).type
    # the writer is a drain's place among the drains, +1 (0: none): a byte per element, or two
    ids = {i: k + 1 for k, (i, _) in enumerate(its)}
    kind = np.uint8 if len(its) < 255 else np.int16 if len(its) < (1 << 15) - 1 else np.int32
    writer = np.zeros(host.numel, dtype=kind)
    for i, t in its:
        view = _view(writer, t.pattern)
        seen = np.zeros(len(its) + 1, dtype=bool)
        if view is not None:
            if view.any():  # (elements no drain wrote yet mark only 0, unmarked below)
                seen[view] = True
        else:
            seen[writer[_inside(t.pattern, writer)]] = True
        seen[0] = False
        for w in (its[k - 1][0] for k in np.flatnonzero(seen)):
            first = d.runtime[int(w)]
            assert isinstance(first, Transfer)
            if first.fifo != t.fifo and retired_at.get(int(w), len(d.runtime)) > i:
                shared = np.flatnonzero(writer == ids[w])
                mine = np.zeros(host.numel, dtype=bool)
                _mark(mine, t.pattern)
                element = int(shared[mine[shared]][0])
                at = (f" (row {element // host.shape[-1]}, column {element % host.shape[-1]})"
                      if len(host.shape) == 2 else "")
                raise DesignError(
                    "output race", f"rt.drain of '{t.fifo}' writes elements of '{name}' that "
                    f"the drain of '{first.fifo}' also writes, and nothing orders the two",
                    loc=t.loc, limit="two drains of different fifos run on different channels "
                    "at once: they write the same element only when a wait retired the first "
                    "before the second was issued (else the element keeps whichever lands last)",
                    found=f"element {element}{at}", related=[(f"the drain of '{first.fifo}'",
                                                              first.loc)],
                    fix="drain disjoint parts of the tensor, or wait for the first drain "
                    "(rt.wait or rt.sync()) before issuing the second")
        if view is not None:
            view[...] = ids[i]
        else:
            writer[_inside(t.pattern, writer)] = ids[i]
    return writer


def _view(a: "np.ndarray", pattern: Pattern) -> "np.ndarray | None":
    """``a`` seen through ``pattern`` (a strided view, no index array), or None when the
    pattern leaves ``a`` or steps backwards."""
    import numpy as np

    last = pattern.offset + sum((n - 1) * s for n, s in zip(pattern.sizes, pattern.strides))
    if min(pattern.strides) < 0 or pattern.offset < 0 or last >= a.size:
        return None
    return np.lib.stride_tricks.as_strided(
        a[pattern.offset:], shape=pattern.sizes,
        strides=tuple(s * a.itemsize for s in pattern.strides), writeable=True)


def _inside(pattern: Pattern, a: "np.ndarray") -> "np.ndarray":
    """The indices ``pattern`` visits inside ``a``."""
    idx = pattern.indices()
    return idx[(idx >= 0) & (idx < a.size)]


def _marked(ts: list[Transfer], numel: int) -> "np.ndarray":
    """Which of ``numel`` elements the transfers ``ts`` visit."""
    import numpy as np

    written = np.zeros(numel, dtype=bool)
    for t in ts:
        _mark(written, t.pattern)
    return written


def _mark(written: "np.ndarray", pattern: Pattern) -> None:
    """Set every element ``pattern`` visits: through a strided view when the pattern stays
    inside the tensor (no index array: a 4096x4096 output would need 128 MB of them)."""
    view = _view(written, pattern)
    if view is None:
        written[_inside(pattern, written)] = True
    else:
        view[...] = True
