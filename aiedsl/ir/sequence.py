"""Facts read off a runtime sequence: which transfers each wait retires, and the shim BD each
transfer takes.

A wait takes the oldest completion token on its fifo's shim channel, and a channel finishes its
tasks in order, so a wait retires its transfer and every earlier one on that fifo. A wait that
leaves no waited transfer pending (the end of an ``rt.sync()``, or of the sequence) is taken to
retire everything issued before it, as mlir-aie's designs assume when they reuse BD ids after a
sync: the drains it waited for needed the fills before them. (Where they did not, the
simulator's count of each channel's queue on the run's own clocks finds it.) A wait that leaves
others pending (``rt.wait(f)``) retires only its own fifo's transfers: the rest may still be
moving, and their BDs stay taken.

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
    live: list[int] = []  # issued and not retired
    waited: dict[str, list[int]] = {}  # fifo -> its waited transfers not yet waited for
    for i, op in enumerate(d.runtime):
        if isinstance(op, Transfer):
            live.append(i)
            if op.wait:
                waited.setdefault(op.fifo, []).append(i)
        elif isinstance(op, Wait):
            queue = waited.get(op.fifo)
            token = queue.pop(0) if queue else None
            if not any(waited.values()):
                gone = live
            else:
                gone = [t for t in live if token is not None and t <= token
                        and _fifo(d, t) == op.fifo]
            out[i] = gone
            live = [t for t in live if t not in gone]
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
