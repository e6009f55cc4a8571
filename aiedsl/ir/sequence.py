"""Facts read off a runtime sequence: which transfers each wait retires, and the shim BD each
transfer takes.

A wait takes the oldest completion token on its fifo's shim channel, and a channel finishes its
tasks in order, so a wait retires its transfer and every earlier one on that fifo. A waited
drain is also taken to retire every transfer issued before it, as mlir-aie's designs assume when
they reuse BD ids after a sync and IRON's task groups when they free a group's fills once its
drains are awaited: the drain needed the fills before it. (Where it did not, the simulator's
count of each channel's queue on the run's own clocks finds it.) A waited fill needs nothing
else, so it retires only its own fifo's transfers; a sync that waited for a drain retires
everything issued before it.

>>> from aiedsl.loader import load_design                          # doctest: +SKIP
>>> shim_bd_ids(load_design("designs/passthrough.py").ir)          # doctest: +SKIP
{0: 0, 1: 1}
"""

from __future__ import annotations

from aiedsl.ir.nodes import Coord, Design, Transfer, Wait


def retirements(d: Design) -> dict[int, list[int]]:
    """For each wait (by its index in ``d.runtime``), the transfers it retires (their indices,
    in issue order): those not retired by an earlier wait."""
    out: dict[int, list[int]] = {}
    live: dict[int, None] = {}  # issued and not retired, in issue order
    waited: dict[str, list[int]] = {}  # fifo -> its waited transfers not yet waited for
    drained = False  # a drain was waited for since the last wait that left nothing pending
    for i, op in enumerate(d.runtime):
        if isinstance(op, Transfer):
            live[i] = None
            if op.wait:
                waited.setdefault(op.fifo, []).append(i)
        elif isinstance(op, Wait):
            queue = waited.get(op.fifo)
            token = queue.pop(0) if queue else None
            first = d.runtime[token] if token is not None else None
            is_drain = isinstance(first, Transfer) and first.op == "drain"
            drained = drained or is_drain
            if not any(waited.values()) and drained:
                gone = list(live)  # a sync that waited for a drain
            elif token is None:
                gone = []
            elif is_drain:
                gone = [t for t in live if t <= token]
            else:
                gone = [t for t in live if t <= token and _fifo(d, t) == op.fifo]
            if not any(waited.values()):
                drained = False
            out[i] = gone
            for t in gone:
                del live[t]
    return out


def _fifo(d: Design, i: int) -> str:
    op = d.runtime[i]
    assert isinstance(op, Transfer)
    return op.fifo


def shim_bd_ids(d: Design) -> dict[int, int]:
    """The BD id each transfer takes on its shim tile (by its index in ``d.runtime``): the
    lowest id no unretired transfer of that tile holds."""
    retired = retirements(d)
    held: dict[Coord, dict[int, int]] = {}  # tile -> id -> the transfer holding it
    out: dict[int, int] = {}
    for i, op in enumerate(d.runtime):
        if isinstance(op, Transfer):
            tile = d.shim_end(op).tile
            assert tile is not None
            taken = held.setdefault(tile, {})
            bd = next(n for n in range(len(taken) + 1) if n not in taken)
            taken[bd] = i
            out[i] = bd
        elif isinstance(op, Wait):
            gone = set(retired[i])
            for taken in held.values():
                for bd in [b for b, t in taken.items() if t in gone]:
                    del taken[bd]
    return out
