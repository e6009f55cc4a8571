"""How much depth ends a hang: for a deadlock whose cycle waits on a full fifo, the least depth of
that fifo with which the same run ends, found by running it again (kernels timed only) at other
depths. A fix that names the depth is one the user can take; "more depth" alone sent users
through several that hang the same way.

The search is the simulator's own: a depth is said only when a run with it ends (every check
passes at that depth and the runtime sequence completes), so the number is never a guess. Each
trial is a whole run, so the trials are few: doubling from the depth given, then halving the gap
between the last depth that hangs and the first that ends.

Where one depth for every end cannot help (a core's end over a DMA holds its largest acquire + 1
buffers whatever that depth is: mlir-aie's ``findObjectFifoSize``), the search is of the full
end's depth alone, every other end given what it holds now; the fix then names both
(``depth=2, consumer_depth=3``).
"""

from __future__ import annotations

from typing import Any, Callable

from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.targets import TargetModel

TRIALS = 12
"""Runs at most, per fix: doubling from the given depth reaches 63 (the most a lock counts to on
AIE2) from 1 in six, and halving the gap left (at most 31 depths) takes five more."""

Run = Callable[[Design], None]
"""A run of a design at some depth: returns when its runtime sequence completes, raises
:class:`Hangs` when it hangs, or the :class:`DesignError` of a check refusing the depth."""


class Hangs(Exception):
    """A run of the search hung (its :data:`Run` raises it for the deadlock it found)."""


def with_depth(d: Design, fifo: str, depth: int, end: tuple[str, int, int] | None = None
               ) -> Design:
    """``d`` with every end of ``fifo`` given ``depth``, as ``fifo(..., depth=depth)`` does; or,
    for ``end`` (port, buffers it holds, buffers every other end holds), the ends on that port
    (``consume``: every consumer's) given ``depth`` and the others what they hold, as
    ``depth=<theirs>, consumer_depth=depth`` does (``produce``: ``depth=depth,
    consumer_depth=<theirs>``)."""
    def given(e: Any, port: str) -> Any:
        n = depth if end is None or end[0] == port else end[2]
        return e.model_copy(update={"depth": n})
    return d.model_copy(update={"fifos": tuple(
        f.model_copy(update={
            "producer": given(f.producer, "produce"),
            "consumers": tuple(given(c, "consume") for c in f.consumers)})
        if f.name == fifo else f for f in d.fifos)})


def end_depth_phrase(fifo: str, size: int) -> str:
    """The fix's words for more depth at one end of ``fifo`` (every end has one depth, so a
    core's end holds ``size`` buffers whatever it is): what :func:`depth_fix` replaces with the
    depth found."""
    return (f"give '{fifo}' depths per end (depth= for its producer's, consumer_depth= for its "
            "consumers', not all equal): with one depth for every end, a core's end holds its "
            f"largest acquire + 1 buffers (here {size}), whatever the depth")


def least_depth(d: Design, fifo: str, target: TargetModel, run: Run,
                end: tuple[str, int, int] | None = None) -> tuple[int | None, str]:
    """The least depth of ``fifo`` (every end) above its present one with which ``run`` of
    ``d`` ends, or None and why there is none: the largest depth that still hangs and the least
    the checks refuse (its rule and limit), or that the lock's largest depth still hangs. ``d``
    is the unplaced design (placement and memory are checked again per depth). ``end``:
    (port, buffers it holds now, buffers the other ends hold) to search the depth of the ends
    on that port above those buffers, the others keeping theirs (:func:`with_depth`).

    Depths are taken to order their outcomes: those that hang, then those that end, then those a
    check refuses (more memory, more lock values). Doubling finds a depth past the hanging ones;
    halving the gap finds the boundary, so the depth named is the least that ends the run and
    one less hangs (within :data:`TRIALS` runs; if they run out first, what was not tried is
    said)."""
    top = target.max_lock_value
    hangs = d.fifo(fifo).producer.depth if end is None else end[1]
    now = hangs
    above: int | None = None  # the least depth known not to hang
    kind: tuple[bool, str] | None = None  # what that depth did: None ends, else refused
    trials = 0
    # Searching one end, a depth equal to the other ends' makes every end one depth again,
    # which caps a core's end as now: that value is no trial (outcomes would not rise with
    # depth across it); its neighbour is tried instead, below it where there is room.
    equal = None if end is None else end[2]

    def shifted(depth: int, low: int, high: int | None) -> int | None:
        if depth != equal:
            return depth
        for other in (depth - 1, depth + 1):
            if low < other and (high is None or other < high) and other <= top:
                return other
        return None

    while above is None and hangs < top and trials < TRIALS:
        tried = shifted(min(max(hangs * 2, hangs + 1), top), hangs, None)
        if tried is None:
            break
        depth = tried
        trials += 1
        outcome = _try(with_depth(d, fifo, depth, end), depth, run)
        if outcome is not None and not outcome[0]:
            hangs = depth
        else:
            above, kind = depth, outcome
    if above is None:
        return None, f"depth {hangs} still hangs"
    while above - hangs > 1 and trials < TRIALS:
        tried = shifted((hangs + above) // 2, hangs, above)
        if tried is None:  # only the equal depth is left between them: above is the least
            break
        depth = tried
        trials += 1
        outcome = _try(with_depth(d, fifo, depth, end), depth, run)
        if outcome is not None and not outcome[0]:
            hangs = depth
        else:
            above, kind = depth, outcome
    gap = [x for x in range(hangs + 1, above) if x != equal]
    untried = f" (depths {gap[0]} to {gap[-1]} not tried)" if gap else ""
    if kind is None:
        return above, untried
    return None, (f"depth {hangs} still hangs, and " if hangs > now else "") + kind[1] + untried


def _try(trial: Design, depth: int, run: Run) -> tuple[bool, str] | None:
    """None when ``run`` of ``trial`` (at ``depth``) ends; else (whether a check refused the
    depth, why)."""
    try:
        run(trial)
    except Hangs:
        return False, ""
    except DesignError as e:
        return True, f"depth {depth} is refused: {e.message}" + (
            f" ({e.limit})" if e.limit else "")
    return None


def depth_fix(fix: str, fifo: str, d: Design, found: tuple[int | None, str],
              if_found: bool = False, end: tuple[str, int, int] | None = None) -> str:
    """``fix`` (the deadlock's "... give 'fifo', the fifo that is full, more depth", or for
    ``end``, :func:`end_depth_phrase`) with the depth found: how much, and the line to change.
    ``if_found``: the depth is only an alternative (``", or give ..."``), dropped when no depth
    ends the run."""
    depth, why = found
    f = d.fifo(fifo)
    now = f.producer.depth
    if end is None:
        plain = f"give '{fifo}', the fifo that is full, more depth"
        knob, was = f"depth={depth}", f"now {now}"
    else:
        plain = end_depth_phrase(fifo, end[1])
        knob = (f"depth={end[2]}, consumer_depth={depth}" if end[0] == "consume"
                else f"depth={depth}, consumer_depth={end[2]}")
        was = (f"now depth={now} for every end: a core's end then holds {end[1]} buffers "
               "whatever the depth")
    if if_found and depth is None:
        return fix.replace(f", or {plain}", "")
    if depth is not None and why:  # the runs ran out before the boundary was found
        said = (f"give '{fifo}' {knob} (line {f.loc.line}; {was}): with it this run ends, "
                f"simulated{why}")
    elif depth is not None:
        said = (f"give '{fifo}' {knob} (line {f.loc.line}; {was}): the least depth with which "
                "this run ends, simulated")
    elif end is None:
        said = f"{plain}; no depth of it alone ends this run ({why})"
    else:
        said = f"{plain}; no depth of that end alone ends this run ({why})"
    return fix.replace(plain, said) if plain in fix else fix
