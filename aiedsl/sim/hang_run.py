"""The hang check of ``aiedsl check`` and ``aiedsl build``: the design's run simulated without
data, to find the hangs no static check can (a core that waits for a free buffer of a fifo
whose consumer waits for it, a broadcast held back by one receiver's full buffers).

The static checks follow data and leave back-pressure to the simulator (README, "check follows
data, not back-pressure"). Whether a run of a design hangs does not depend on the values its
kernels compute (a core program's loops and acquires are fixed when it is traced), so the
simulator's engine run with kernels timed only (``compute=False``) on zero-filled host tensors
finds every hang ``aiedsl sim`` finds, in the same words, at a fraction of its cost. Its length
grows with the problem, so it stops after :data:`EVENTS` steps of the engine: a run longer than
that is checked as far as it got, and the result says how far (``aiedsl sim`` runs it whole, and
so does the check given ``whole=True``: ``--whole-run``).

Example
-------
>>> from aiedsl.checks import check_design
>>> from aiedsl.loader import load_design
>>> handle = load_design("designs/gemm_bf16.py")
>>> hang_run(handle.ir, check_design(handle.ir)[0], handle.kernels).line()
'hang check: the run ends, simulated without data (576 kernel calls)'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from aiedsl.checks import check_design
from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.ir.program import calls_per_run
from aiedsl.sim.depth_fix import Hangs, depth_fix, least_depth
from aiedsl.sim.explain import Deadlock, explain
from aiedsl.sim.machine import Machine, build_machine
from aiedsl.sim.runtime import check_shim_bds, check_task_queues
from aiedsl.sim.state import CallLimit, Watch
from aiedsl.targets import TargetModel, get_target

EVENTS = 400_000
"""Engine steps the hang check runs at most: under a second on a laptop core, the whole run of
the 2048^3 GEMM (some 287,000 steps; the 1024^3 one takes 37,000); a longer run is checked up
to there."""


CALLS = 100_000
"""Kernel calls the hang check simulates at most: a core whose calls never wait makes them all
in one engine step (:attr:`~aiedsl.sim.state.Machine.call_limit`), so the steps alone do not
bound it (0.2 s here)."""

WHOLE_CALLS = 10_000_000
"""Kernel calls ``--whole-run`` simulates at most: some 40 times the 4096^3 GEMM's, from about
10 seconds (calls that never wait, one engine step for all) to minutes (calls each waiting for
data); what is beyond is no run a check can make whole (a core looping ``2**63 - 1`` times, as
IRON's forever loops do, would never end), and the result says how far it got. A hang found
so may take as long again per depth its least-depth search tries."""


@dataclass(frozen=True)
class HangRun:
    """How far the hang check got without finding a hang."""

    ended: bool
    """The run reached the end of its runtime sequence (False: the check stopped it at
    :data:`EVENTS` steps, still moving)."""
    calls: int
    """Kernel calls simulated."""
    total: int
    """Kernel calls of the whole run."""
    whole: bool = False
    """The check was asked to run the whole run (``--whole-run``): stopped short, it stopped at
    :data:`WHOLE_CALLS`."""

    def line(self) -> str:
        """What ``aiedsl check`` and ``aiedsl build`` print about it (``report.txt`` too)."""
        if self.ended:
            return (f"hang check: the run ends, simulated without data ({self.total:,} kernel "
                    "calls)")
        why = (f"the most --whole-run simulates is {WHOLE_CALLS:,}" if self.whole else
               "--whole-run, or aiedsl sim, runs the whole run: a hang later in it is found only "
               "so")
        return (f"hang check: no hang in the first {self.calls:,} of the run's {self.total:,} "
                f"kernel calls, simulated without data (the check stops there; {why})")

    def covered(self) -> str:
        """What ``aiedsl check``'s last line adds: how far the hang check got, when it stopped
        short of the run's end."""
        more = "" if self.whole else ": --whole-run checks them all"
        return "" if self.ended else (f" (the hang check covered the first {self.calls:,} of "
                                      f"its {self.total:,} kernel calls{more})")


def hang_run(design: Design, placed: Design, kernels: dict[str, Any],
             events: int = EVENTS, calls: int = CALLS, whole: bool = False) -> HangRun:
    """Simulate ``placed``, design ``design`` checked and placed (whose kernels ``kernels``
    are, by symbol: a handle's), without data for at most ``events`` engine steps and
    ``calls`` kernel calls (with ``whole``, to the run's end however long); raise the
    :class:`~aiedsl.sim.explain.Deadlock` (or the runtime's fault) that stops it, as ``aiedsl
    sim`` says it: with the least depth that ends it when a full fifo is the cause and every
    run at another depth ends within ``events`` steps too."""
    target = get_target(placed.device)
    m = timing_machine(placed, kernels, target)
    steps: int | None = None if whole else events
    m.call_limit = WHOLE_CALLS if whole else calls
    try:
        ended = m.engine.run(limit=steps)
    except CallLimit:
        ended = False
    if ended:
        try:
            stopped(m)
        except Deadlock as e:
            e.message = "the design's run hangs, simulated without data: " + e.message
            fifo = e.full_fifo
            if fifo is not None and not say_least_depth(e, fifo, design, kernels, target,
                                                        events=steps, calls=m.call_limit):
                e.fix = (f"{e.fix}; " if e.fix else "") + (
                    f"aiedsl sim runs the search for the least depth of '{fifo}' that ends it "
                    "to its end")
            e.args = (e.render(),)
            raise
    return HangRun(ended, m.kernel_calls, calls_per_run(placed), whole)


def timing_machine(placed: Design, kernels: dict[str, Any], target: TargetModel,
                   clock_hz: float | None = None) -> Machine:
    """A machine for a run of ``placed`` with kernels timed only, on zero-filled host tensors
    (calloc'd: pages never read cost nothing)."""
    host = {t.name: np.zeros(t.type.shape, np.dtype(lookup_dtype(t.type.dtype).numpy))
            for t in placed.tensors}
    return build_machine(placed, target, host, kernels, compute=False, clock_hz=clock_hz)


def timed_cycles(placed: Design, target: TargetModel, clock_hz: float | None = None,
                 watch: tuple[str, Watch] | None = None) -> float | None:
    """Device cycles of a run of ``placed`` on ``target`` with kernels timed only (how the
    summary measures a change: more buffers, a resource made free); None when the run does
    not reach the end of its runtime sequence. ``watch``: a stage and the watcher told it as
    the run starts (a progress display)."""
    t = timing_machine(placed, {}, target, clock_hz)
    if watch is not None:
        watch[1](watch[0], t)
    t.engine.run()
    try:
        stopped(t)
    except DesignError:
        return None
    assert t.runtime is not None, "a finished run has a runtime"
    return t.ends[0] if t.ends else t.runtime.time


def stopped(m: Machine) -> None:
    """After ``m``'s run: raise what kept it from the end of its runtime sequence (a dropped
    push is the cause, when the run also stopped short)."""
    check_task_queues(m)
    check_shim_bds(m)
    if m.runtime is None or not m.runtime.finished:
        raise explain(m)


class _TooLong(Exception):
    """A run at another depth took more steps than the search was given."""


def say_least_depth(e: Deadlock, fifo: str, design: Design, kernels: dict[str, Any],
                    target: TargetModel, *, events: int | None = None, calls: int = -1,
                    clock_hz: float | None = None) -> bool:
    """Name in ``e``'s fix the least depth of ``fifo`` with which unplaced design ``design``'s
    run ends (:func:`~aiedsl.sim.depth_fix.least_depth`: runs at other depths, kernels timed
    only), or why none does; False (``e`` unchanged) when a run of the search takes more than
    ``events`` steps or ``calls`` kernel calls (whether it ends is then not known)."""
    def run(trial: Design) -> None:
        placed, _ = check_design(trial)
        m = timing_machine(placed, kernels, target, clock_hz)
        m.call_limit = calls
        try:
            if not m.engine.run(limit=events):
                raise _TooLong
        except CallLimit:
            raise _TooLong from None
        try:
            stopped(m)
        except Deadlock:
            raise Hangs from None

    try:
        found = least_depth(design, fifo, target, run, e.full_end)
    except _TooLong:
        return False
    e.fix = depth_fix(e.fix or "", fifo, design, found, e.depth_if_found, e.full_end)
    e.args = (e.render(),)
    return True
