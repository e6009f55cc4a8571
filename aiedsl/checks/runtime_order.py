"""Runtime order: a wait is not blocked forever by a fill issued after it.

``rt.sync()`` and ``rt.wait(f)`` block the runtime sequence until the drain they wait for is
complete, and the sequence issues nothing more meanwhile. A drain's channel finishes its
transfers in order, so the drain completes only once its fifo has delivered every element of
that drain and of the drains of the fifo issued before it. If those elements can only be made
from data the runtime sends after the wait, the runtime waits for itself: on the NPU the
sequence blocks there forever, with no error.

:meth:`aiedsl.ir.reach.Reach.could_run` bounds from above how far every core's program can run
on the fills issued before a point (through links and other cores; around a cycle of cores,
its least fixed point, or nothing when that does not settle). Counting what the producer of the
drained fifo can have released from that gives the most elements that can arrive at the drain
before the wait returns. When that is fewer than the waited drains need, the design hangs for
certain: this check refuses it, naming the fills issued after the wait that the data needs.

The check is sound because every step over-approximates: produce acquires are taken to be
granted at once, cascades to pass freely, and a design is refused only when even that bound
falls short. It speaks only when moving fills issued after the wait
(those that feed the drained fifo, the fewest first ones needed) to before it makes the bound
suffice, so the fix it gives is one that removes the shortfall it found. A shortfall no later
fill makes up is another check's: a cycle of cores waiting on one another is
:mod:`aiedsl.checks.cycles`'; the rest is left to ``aiedsl sim``, whose deadlock explanation this
check's wording follows.
"""

from __future__ import annotations

from collections.abc import Iterator

from aiedsl.errors import DesignError, counted, listed
from aiedsl.ir.design import Design
from aiedsl.ir.reach import Reach
from aiedsl.ir.runtime import Transfer, Wait
from aiedsl.ir.tally import wait_tokens


def check_runtime_order(d: Design) -> None:
    """No wait of the runtime sequence waits for a drain whose data needs a later fill."""
    reach: Reach | None = None
    last_fill = max((i for i, t in enumerate(d.runtime)
                     if isinstance(t, Transfer) and t.op == "fill"), default=-1)
    for i, wait, token in waited_tokens(d):
        if i < last_fill:  # else no fill is late
            reach = reach or Reach(d)
            _check_wait(d, reach, i, wait, token)


def waited_drains(d: Design) -> Iterator[tuple[int, Wait, list[Transfer]]]:
    """Each wait of ``d``'s runtime sequence that waits for a drain: its index, the wait, and
    the drains of its fifo up to the one it waits for (the last), which its channel completes
    in order."""
    for i, wait, token in waited_tokens(d):
        yield i, wait, drains_through(d, token)


def waited_tokens(d: Design) -> Iterator[tuple[int, Wait, int]]:
    """As :func:`waited_drains`, with the index in ``d.runtime`` of the drain each wait waits
    for in place of the list (which costs the sequence's length at every wait)."""
    for i, op, token in wait_tokens(d):
        if _transfer(d, token).op == "drain":
            yield i, op, token


def drains_through(d: Design, token: int, after: int = -1) -> list[Transfer]:
    """The drains of the fifo of drain ``token`` (an index in ``d.runtime``) issued after op
    ``after`` and up to ``token``, in order: those its channel completes with it, less those
    waited for by op ``after`` or before."""
    fifo = _transfer(d, token).fifo
    return [t for t in d.runtime[after + 1:token + 1]
            if isinstance(t, Transfer) and t.op == "drain" and t.fifo == fifo]


def _transfer(d: Design, i: int) -> Transfer:
    t = d.runtime[i]
    assert isinstance(t, Transfer)
    return t


def _check_wait(d: Design, reach: Reach, point: int, wait: Wait, token: int) -> None:
    """Refuse the wait at runtime op ``point`` when the drains of its fifo up to the one it
    waits for (op ``token``) need more elements than the fills issued before it can make."""
    name = _transfer(d, token).fifo
    need = reach.issued("drain", name, token + 1)
    have = arriving(reach, name, point)
    if have is None or have >= need:
        return
    drains = drains_through(d, token)
    waited = drains[-1]
    feeds = _feeds(reach, name)
    late = [t for t in d.runtime[point + 1:]
            if isinstance(t, Transfer) and t.op == "fill" and t.fifo in feeds]
    moved = _fewest(d, name, point, late, need)
    if moved is None:  # not a shortfall the later fills make up: leave it to the simulator
        return
    where = ("the end of its sequence" if wait.by == "end" else
             "rt.wait()" if wait.by == "wait" else "rt.sync()")
    lines = ", ".join(str(t.loc.line) for t in drains)
    what = (f"its drain of '{name}' (line {lines})" if len(drains) == 1 else
            f"its drains of '{name}' (lines {lines})")
    by_fifo: dict[str, list[int]] = {}
    for t in moved:
        by_fifo.setdefault(t.fifo, []).append(t.loc.line)
    fills = listed([f"'{f}' (line{'s' * (len(n) > 1)} {', '.join(map(str, n))})"
                     for f, n in by_fifo.items()])
    fill, them = ("fill", "it") if len(moved) == 1 else ("fills", "them")
    related = [(f"the drain of '{name}' waited for" if t is waited else
                f"an earlier drain of '{name}', which completes first", t.loc)
               for t in drains]
    related += [(f"the runtime issues its fill of '{t.fifo}' only after the wait it is "
                 "blocked in", t.loc) for t in moved]
    raise DesignError(
        "hang: wait before fill",
        f"the runtime waits at {where} for {what} to complete, but that data needs the "
        f"{fill} of {fills}, issued only after the wait: the runtime blocks in the wait "
        "forever (a silent hang on the NPU)",
        loc=wait.loc,
        limit="the drains a wait waits for (and the earlier drains of their fifo, which "
        "complete first) get only what the fills issued before the wait can make",
        found=f"they need {counted(need, 'element')} of '{name}'; at most {have} can arrive "
        "from the fills before the wait",
        related=related,
        fix=f"issue every fill and drain that the waited drain depends on before the {where} "
        f"that waits for it: move the {fill} of {fills} before line {wait.loc.line}, or "
        f"wait for the drain of '{name}' after issuing {them}")


def arriving(reach: Reach, name: str, point: int) -> int | None:
    """The most elements of fifo ``name`` its consumers can have received from the fills
    issued before runtime op ``point`` (each sent ``repeat`` times); None when nothing
    issued bounds it."""
    made = _made(reach, name, point, set())
    return None if made is None else made * reach.fifos[name].repeat


def _made(reach: Reach, name: str, point: int, seen: set[str]) -> int | None:
    """The most elements of ``name`` its producer (a fill, a core, a link) can have put in:
    :meth:`Reach.could_run`'s own count, with None where it would assume no limit."""
    f = reach.fifos[name]
    if f.producer.kind == "shim":
        return reach.issued("fill", name, point)
    if f.producer.kind == "core" and f.producer.core:
        return reach.could_run(f.producer.core, point).released[(name, "produce")]
    link = reach.link_of_dst.get(name)
    if link is None or name in seen:
        return None
    parts = [_made(reach, s, point, seen | {name}) for s in link.srcs]
    if any(p is None for p in parts):
        return None
    return reach.link_makes(name, [p * reach.fifos[s].repeat
                                   for s, p in zip(link.srcs, parts) if p is not None])


def _feeds(reach: Reach, name: str) -> set[str]:
    """The fifos the runtime fills whose data reaches fifo ``name``."""
    f = reach.fifos[name]
    if f.producer.kind == "shim":
        return {name}
    if f.producer.kind == "core" and f.producer.core:
        return reach.upstream(f.producer.core)
    link = reach.link_of_dst.get(name)
    return set() if link is None else set().union(*(_feeds(reach, s) for s in link.srcs))


def _fewest(d: Design, name: str, point: int, late: list[Transfer],
            need: int) -> list[Transfer] | None:
    """The fewest first of ``late`` that, issued before runtime op ``point``, let enough of
    ``name`` arrive; None when not even all of them do."""
    def enough(n: int) -> bool:
        moved = d.model_copy(update={"runtime": (*d.runtime[:point], *late[:n])})
        have = arriving(Reach(moved), name, len(moved.runtime))
        return have is None or have >= need

    if not late or not enough(len(late)):
        return None
    lo, hi = 1, len(late)  # more fills never make less: the first n that is enough
    while lo < hi:
        mid = (lo + hi) // 2
        if enough(mid):
            hi = mid
        else:
            lo = mid + 1
    return late[:lo]
