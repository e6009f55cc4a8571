"""The shim task queue check: no more runtime transfers pushed onto one shim DMA channel between
waits than its queue holds, and :func:`queue_fix`, the fix the check and the simulator's count
(:func:`aiedsl.sim.runtime.check_task_queues`) both give.

The limit is the target's ``shim_task_queue``: the NPU drops a push onto a full queue and the run
hangs (mlir-aie PR 3734).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from aiedsl.checks.tile_usage import Coord
from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.ir.runtime import Transfer, Wait
from aiedsl.ir.sequence import Retired, retirements
from aiedsl.targets import TargetModel


def queue_fix(op: str) -> str:
    """How to keep a shim channel's task queue from overflowing, for fills or drains (said by
    the check and by the simulator's count)."""
    if op == "fill":
        return ("a sync retires what it waits for (drains, and fills given wait=True), what the "
                "same channel did before, and the fills the waited drains needed: give every "
                "fourth of these fills wait=True and rt.sync() after it, with every fill and "
                "drain the waited fill's data needs to get through (the other inputs, the "
                "drains making room for it) issued before that sync, or move more data per "
                "transfer")
    return ("rt.sync() after every fourth drain, with the fills those drains need issued "
            "before it, or move more data per transfer")


def check_task_queues(d: Design, target: TargetModel,
                      retired: Callable[[], Retired] | None = None) -> None:
    """At most ``shim_task_queue`` transfers are pushed onto one shim channel between waits.

    A wait retires what :func:`aiedsl.ir.sequence.retirements` says (its own transfer and the
    earlier ones of its fifo; for a drain also the fills it is shown to have needed); until then
    every transfer issued on a channel may still be queued, and the NPU drops a fifth. The
    simulator counts again on the run's own clocks
    (:func:`aiedsl.sim.runtime.check_task_queues`). ``retired`` as for
    :func:`~aiedsl.checks.tile_usage.usage`.
    """
    queued: dict[tuple[Coord, str], list[Transfer]] = defaultdict(list)
    waits = retired() if retired else retirements(d)
    for i, op in enumerate(d.runtime):
        if isinstance(op, Wait):
            gone = {id(d.runtime[t]) for t in waits[i]}
            for q in queued.values():
                q[:] = [t for t in q if id(t) not in gone]
            continue
        if not isinstance(op, Transfer):  # an rtp write pushes no task
            continue
        e = d.shim_end(op)
        assert e.tile is not None
        q = queued[(e.tile, op.fifo)]
        q.append(op)
        if len(q) > target.shim_task_queue:
            raise DesignError(
                "shim task queue", f"{len(q)} transfers ({'fills' if op.op == 'fill' else 'drains'}"
                f" of '{op.fifo}') are pushed onto one DMA channel of shim tile {e.tile} before a "
                "wait shows the first done", loc=op.loc,
                limit=f"{target.shim_task_queue} queued tasks per channel: the NPU drops a push "
                "onto a full queue and the run hangs (mlir-aie PR 3734)", found=str(len(q)),
                related=[(f"rt.{t.op} {i + 1}", t.loc) for i, t in enumerate(q[:-1])
                         if t.loc != op.loc],
                fix=queue_fix(op.op))
