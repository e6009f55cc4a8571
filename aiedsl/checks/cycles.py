"""Core cycles: a wait for data that cores waiting on one another can never make.

Cores joined in a ring of fifos (a worker-to-worker exchange, a halo swap, a feedback path)
deadlock when each core of the ring waits to acquire what the one before it sends before it
sends its own: none moves first. On the NPU every core of the ring stalls in its lock acquire
and the runtime blocks in the wait for the drain the ring feeds, with no error.

:meth:`aiedsl.ir.reach.Reach.settled` bounds how far every core can get: the least fixed point
of "each core runs as far as what its producers released lets it", reached from nothing
released. When a wait's drains need more than that bound lets arrive, and the cores that make
the drained data stand, in that bound, at acquires of one another's data, the design hangs for
certain: this check refuses it, naming the cycle and the acquire each of its cores is stuck at.

The check is sound because the bound over-approximates every real run: produce acquires are
taken to be granted at once, cascades to pass freely. So a ring that blocks only because a
buffer is full, a cycle through a cascade call, and a ring that exchanges more elements than
the bound follows (it stops after a round per exchange, past
:data:`~aiedsl.ir.reach.ROUNDS`) are left to ``aiedsl sim``, whose deadlock explanation this
check's wording follows. So are the waits after the runtime's first wait for a fill: that wait
may be the one the runtime blocks in, and whether a fill completes is not judged here.
"""

from __future__ import annotations

from typing import NamedTuple

from aiedsl.checks.runtime_order import arriving, drains_through, waited_tokens
from aiedsl.errors import DesignError, counted, listed
from aiedsl.ir.core_ops import Acquire
from aiedsl.ir.design import Design
from aiedsl.ir.program import acquires
from aiedsl.ir.reach import Reach
from aiedsl.ir.runtime import Transfer, Wait
from aiedsl.ir.tally import wait_tokens


class _Stuck(NamedTuple):
    """A core of the chain behind a drain: what it makes, and the acquire it cannot pass."""

    core: str
    makes: str
    """The fifo it produces that the chain followed to it."""
    acquire: Acquire
    """The consume acquire the bound stops it at."""


def check_core_cycles(d: Design) -> None:
    """No wait of the runtime sequence waits for data a cycle of cores can never make."""
    reach = Reach(d)
    if not reach.cyclic():
        return
    stop = _first_fill_wait(d)
    # fifo -> the last drain earlier waits took (its index) and the elements they took
    taken: dict[str, tuple[int, int]] = {}
    for i, wait, token in waited_tokens(d):
        if stop is not None and i > stop:  # the runtime may already be blocked there
            return
        drain = d.runtime[token]
        assert isinstance(drain, Transfer)
        name = drain.fifo
        done, before = taken.get(name, (-1, 0))
        need = reach.issued("drain", name, token + 1)
        taken[name] = (token, need)
        if reach.settled(i) is None:
            continue
        have = arriving(reach, name, i)
        if have is None or have >= need:
            continue
        chain = _chain(reach, name, i)
        if chain is not None:
            _refuse(reach, i, wait, drains_through(d, token, done), before, need, have, *chain)


def _first_fill_wait(d: Design) -> int | None:
    """The index of the runtime's first wait for a fill (``wait=True``): whether that returns
    is not this check's to judge, so no later wait is."""
    return next((i for i, _, token in wait_tokens(d)
                 if isinstance(t := d.runtime[token], Transfer) and t.op == "fill"), None)


def _chain(reach: Reach, name: str, point: int) -> tuple[list[_Stuck], int, str] | None:
    """The cores behind fifo ``name`` at ``point``, each stopped at an acquire of what the next
    makes, up to a core met twice: the chain, where its cycle starts, and what the cycle's
    first core makes for its last; None when the chain ends elsewhere (at a fill, a barrier, a
    core that ran to its end)."""
    settled = reach.settled(point)
    assert settled is not None
    chain: list[_Stuck] = []
    at: dict[str, int] = {}
    links_seen: set[str] = set()
    while True:
        f = reach.fifos[name]
        if f.producer.kind == "core" and f.producer.core:
            core = f.producer.core
            if core in at:
                return chain, at[core], name
            blocked = settled[core].blocked
            if not isinstance(blocked, Acquire):
                return None
            at[core] = len(chain)
            chain.append(_Stuck(core, name, blocked))
            name = blocked.fifo
            continue
        link = reach.link_of_dst.get(name)
        if f.producer.kind == "shim" or link is None or name in links_seen:
            return None
        links_seen.add(name)
        # a join waits for its scarcest part; a split or forward has one source
        name = min(link.srcs, key=lambda s: arriving(reach, s, point) or 0)


def _refuse(reach: Reach, point: int, wait: Wait, drains: list[Transfer], before: int,
            need: int, have: int, chain: list[_Stuck], start: int, closing: str) -> None:
    """Refuse the wait at runtime op ``point``: ``drains`` are its fifo's drains not waited for
    before it, after ``before`` elements earlier waits took; ``need`` and ``have`` count from
    the sequence's start."""
    settled = reach.settled(point)
    assert settled is not None
    name = drains[-1].fifo
    waited = drains[-1]
    where = ("at the end of its sequence" if wait.by == "end" else
             "at rt.wait()" if wait.by == "wait" else "at rt.sync()")
    lines = ", ".join(str(n) for n in sorted({t.loc.line for t in drains}))
    what = (f"its drain of '{name}' (line {lines})" if len(drains) == 1 else
            f"its drains of '{name}' (line{'s' * (',' in lines)} {lines})")
    ring = chain[start:]
    makers = [s.core for s in chain[1:]] + [ring[0].core]  # the last waits for the cycle's first
    steps = [f"{s.core} waits to acquire '{s.acquire.fifo}' (line {s.acquire.loc.line}), which "
             + ("it makes itself, later" if maker == s.core else f"{maker} makes")
             for s, maker in zip(chain, makers)]
    said = "; ".join(_few(steps, "core in turn", "cores in turn"))
    names = [s.core for s in ring]
    who = listed(names) if len(names) <= LONG_CYCLE else \
        f"these {len(names)} cores ({', '.join(names[:2])}, ..., {names[-1]})"
    them = (f"{names[0]} cannot move" if len(ring) == 1 else
            f"{who} wait for each other (a wait-for cycle): neither can move first"
            if len(ring) == 2 else
            f"{who} wait for one another (a wait-for cycle): none can move first")
    got = []
    for s in ring:
        key = (s.acquire.fifo, s.acquire.port)
        can = arriving(reach, s.acquire.fifo, point) or 0
        got.append(f"{s.core} can get {counted(can, 'element')} of '{s.acquire.fifo}' and waits "
                   f"for element {settled[s.core].released[key] + s.acquire.count}")
    arrive = (f"at most {have} of the {counted(need, 'element')} of '{name}' the "
              f"{'drain needs' if len(drains) == 1 else 'drains need'} can arrive" if not before
              else f"the {'drain' if len(drains) == 1 else 'drains'} waited for here "
              f"{'needs' if len(drains) == 1 else 'need'} "
              f"elements {before + 1}-{need} of '{name}' (earlier waits took the first "
              f"{before}); at most {have} can arrive")
    related = [(f"the drain of '{name}' waited for" if t is waited else
                f"an earlier drain of '{name}', which completes first", t.loc) for t in drains]
    waits = [(f"{s.core} waits here to acquire '{s.acquire.fifo}' ({s.acquire.port})",
              s.acquire.loc) for s in chain]
    if len(waits) > LONG_CYCLE:  # the first, and the last, the line each names
        waits = [*waits[:2], (f"... {len(waits) - 3} more cores of the cycle wait at these "
                              "lines", waits[2][1]), waits[-1]]
    related += waits
    raise DesignError(
        "hang: core cycle",
        f"the runtime waits {where} for {what} to complete, but {said}: {them}, and the runtime "
        "blocks in the wait forever (a silent hang on the NPU)",
        loc=wait.loc,
        limit="a cycle of cores joined by fifos moves only if one of its cores releases, before "
        "it acquires what comes back round the cycle, what the next core needs to go on",
        found=f"{arrive}; " + "; ".join(_few(got, "core", "cores")),
        related=related,
        fix=_fix(reach, point, ring, closing)
        + ". More depth does not help: no core of the cycle waits for a free buffer")


LONG_CYCLE = 6
"""Cores of a wait-for cycle a message names one by one: a longer one (32 cores of a ring) is
said by its first and last, its headline ran to 2,753 characters (a scalability tester)."""


def _few(parts: list[str], one: str, many: str) -> list[str]:
    """``parts`` (one per core of a chain), the middle ones counted when there are more than
    :data:`LONG_CYCLE`."""
    if len(parts) <= LONG_CYCLE:
        return parts
    left = len(parts) - 3
    return [*parts[:2], f"... {left} more {one if left == 1 else many} ...", parts[-1]]


def _fix(reach: Reach, point: int, ring: list[_Stuck], closing: str) -> str:
    """Which core of the cycle should send first, and how much."""
    settled = reach.settled(point)
    assert settled is not None
    # what each core of the cycle makes for the one before it
    sends = [closing, *(s.makes for s in ring[1:])]
    # best told to a core with data of its own to send first (the others only pass data on)
    waited_for = {s.acquire.fifo for s in ring}
    order = [c.name for c in reach.d.cores]
    k = min(range(len(ring)), key=lambda j: (
        not _consumes_besides(reach, ring[j].core, waited_for), order.index(ring[j].core)))
    first, out = ring[k], sends[k]
    waiter = ring[k - 1]  # the core of the cycle that waits for what ``first`` makes
    key = (waiter.acquire.fifo, waiter.acquire.port)
    wants = settled[waiter.core].released[key] + waiter.acquire.count
    released = settled[first.core].released[(out, "produce")]
    more = reach.more_to_supply(point, first.core, out, waiter.acquire.fifo, wants)
    line = first.acquire.loc.line
    if more is None:  # the waiter needs more than this core's elements (a join's other parts)
        amount = f"'{out}'"
    elif more == 1 and not released:
        amount = f"an element of '{out}'"
    elif not released:
        amount = f"{more} elements of '{out}'"
    else:
        amount = (f"{more} more {'element' if more == 1 else 'elements'} of '{out}' "
                  f"({released + more} in all)")
    if len(ring) == 1:
        return (f"break the cycle: in {first.core}, release {amount} before acquiring "
                f"'{first.acquire.fifo}' at line {line} (it waits there for element {wants}), "
                "the first made from something else")
    return (f"break the cycle: one core of it must send what the next needs before it waits "
            f"for what comes back round; in {first.core}, for instance, release {amount} before "
            f"acquiring '{first.acquire.fifo}' (line {line}): {waiter.core} waits for element "
            f"{wants} of '{waiter.acquire.fifo}' at line {waiter.acquire.loc.line}; what it "
            "sends first must not depend on what comes back")


def _consumes_besides(reach: Reach, core: str, fifos: set[str]) -> bool:
    """Whether ``core`` consumes a fifo other than ``fifos``."""
    return any(port == "consume" and f not in fifos for f, port in
               ((op.fifo, op.port) for op in acquires(reach.cores[core]).values()))
