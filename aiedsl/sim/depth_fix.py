"""How much depth ends a hang: for a deadlock whose cycle waits on a full fifo, the least depth of
that fifo with which the same run ends, found by running it again (kernels timed only) at other
depths. A fix that names the depth is one the user can take; "more depth" alone sent users
through several that hang the same way.

The search is the simulator's own: a depth is said only when a run with it ends (every check
passes at that depth and the runtime sequence completes), so the number is never a guess. Each
trial is a whole run, so the trials are few: doubling from the depth given, then halving the gap
between the last depth that hangs and the first that ends.
"""

from __future__ import annotations

from typing import Callable

from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.targets import TargetModel

TRIALS = 12
"""Runs at most, per fix: doubling from the given depth reaches 63 (the most a lock counts to on
AIE2) from 1 in six, and halving the gap left (at most 31 depths) takes five more."""

Run = Callable[[Design], None]
"""A run of a design at some depth: returns when its runtime sequence completes, raises the
:class:`DesignError` that stops it (a check refusing the depth, a deadlock) otherwise."""


def with_depth(d: Design, fifo: str, depth: int) -> Design:
    """``d`` with every end of ``fifo`` given ``depth``, as ``fifo(..., depth=depth)`` does."""
    return d.model_copy(update={"fifos": tuple(
        f.model_copy(update={
            "producer": f.producer.model_copy(update={"depth": depth}),
            "consumers": tuple(c.model_copy(update={"depth": depth}) for c in f.consumers)})
        if f.name == fifo else f for f in d.fifos)})


def least_depth(d: Design, fifo: str, target: TargetModel, run: Run) -> tuple[int | None, str]:
    """The least depth of ``fifo`` (every end) above its present one with which ``run`` of
    ``d`` ends, or None and why there is none: the largest depth that still hangs and the least
    the checks refuse (its rule and limit), or that the lock's largest depth still hangs. ``d``
    is the unplaced design (placement and memory are checked again per depth).

    Depths are taken to order their outcomes: those that hang, then those that end, then those a
    check refuses (more memory, more lock values). Doubling finds a depth past the hanging ones;
    halving the gap finds the boundary, so the depth named is the least that ends the run and
    one less hangs (within :data:`TRIALS` runs; if they run out first, what was not tried is
    said)."""
    top = target.max_lock_value
    hangs = d.fifo(fifo).producer.depth
    now = hangs
    above: int | None = None  # the least depth known not to hang
    kind: tuple[bool, str] | None = None  # what that depth did: None ends, else refused
    trials = 0
    while above is None and hangs < top and trials < TRIALS:
        depth = min(max(hangs * 2, hangs + 1), top)
        trials += 1
        outcome = _try(d, fifo, depth, run)
        if outcome is not None and not outcome[0]:
            hangs = depth
        else:
            above, kind = depth, outcome
    if above is None:
        return None, f"depth {hangs} still hangs"
    while above - hangs > 1 and trials < TRIALS:
        depth = (hangs + above) // 2
        trials += 1
        outcome = _try(d, fifo, depth, run)
        if outcome is not None and not outcome[0]:
            hangs = depth
        else:
            above, kind = depth, outcome
    untried = (f" (depths {hangs + 1} to {above - 1} not tried)" if above - hangs > 1
               else "")
    if kind is None:
        return above, untried
    return None, (f"depth {hangs} still hangs, and " if hangs > now else "") + kind[1] + untried


def _try(d: Design, fifo: str, depth: int, run: Run) -> tuple[bool, str] | None:
    """None when ``run`` at ``depth`` ends; else (whether a check refused the depth, why)."""
    from aiedsl.sim.explain import Deadlock

    try:
        run(with_depth(d, fifo, depth))
    except Deadlock:
        return False, ""
    except DesignError as e:
        return True, f"depth {depth} is refused: {e.message}" + (
            f" ({e.limit})" if e.limit else "")
    return None


def depth_fix(fix: str, fifo: str, d: Design, found: tuple[int | None, str]) -> str:
    """``fix`` (the deadlock's "... give 'fifo', the fifo that is full, more depth") with the
    depth found: how much, and the line to change."""
    depth, why = found
    f = d.fifo(fifo)
    now = f.producer.depth
    plain = f"give '{fifo}', the fifo that is full, more depth"
    if depth is not None and why:  # the runs ran out before the boundary was found
        said = (f"give '{fifo}' depth={depth} (line {f.loc.line}; now {now}): with it this run "
                f"ends, simulated{why}")
    elif depth is not None:
        said = (f"give '{fifo}' depth={depth} (line {f.loc.line}; now {now}): the least depth "
                "with which this run ends, simulated")
    else:
        said = f"{plain}; no depth of it alone ends this run ({why})"
    return fix.replace(plain, said) if plain in fix else fix

