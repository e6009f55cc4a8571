"""How far each core's program can have run, and must have run, at a point of the runtime
sequence, counted from the transfers issued and waited for before it.

A core blocks only on its acquires and barrier waits. From the fills issued before a point, each
consume acquire can be granted only as far as the data issued reaches; walking the program until
an acquire asks for more gives an upper bound on the calls that may have *started* there
(``could_run``). Cores feed one another, so every core is walked again on what the others
released until none gets further: from nothing released, that reaches the least fixed point,
which no real run passes (a cycle of cores that each take before they put settles where it
blocks). From the drains waited for before a point, the elements consumed downstream were
produced, so the core has passed the release that handed on the last of them; walking until those
releases gives a lower bound on the calls that have *finished* (``must_have_run``,
:mod:`aiedsl.ir.proven`). Produce acquires are taken to be granted at once (a free buffer is the
usual case, and a bound that assumes it stays an upper bound). The walks themselves, barrier waits
and loops included, are :mod:`aiedsl.ir.progress`'s; the runtime sequence's running totals are
:mod:`aiedsl.ir.tally`'s.

Before the second batch's parameter writes (op 8, after both drains of the first batch were
waited for), core[0,0] has read its threshold at most and at least 8 times:

>>> from aiedsl.loader import load_design
>>> r = Reach(load_design("designs/threshold_rtp.py").ir)
>>> key = ("thr0", 0)
>>> r.could_run("core[0,0]", 8).reads[key], r.must_have_run("core[0,0]", 8).reads[key]
(8, 8)
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import Counter

from aiedsl.ir.core_ops import Acquire, BarrierWait, Call, Op
from aiedsl.ir.dataflow import Dataflow
from aiedsl.ir.design import Design
from aiedsl.ir.progress import UNBOUNDED, Held, Progress, next_op, until_blocked
from aiedsl.ir.proven import Proven
from aiedsl.ir.tally import Tally

ROUNDS = 64
"""Rounds past the number of cores that :meth:`Reach.settled` walks before it gives up: a cycle
of cores that keeps exchanging elements moves one exchange a round."""


class Reach(Dataflow):
    """Bounds on every core's progress at each point of ``d``'s runtime sequence (a point is
    the index of a runtime op: the state just before it)."""

    def __init__(self, d: Design) -> None:
        super().__init__(d)
        self._settled: dict[int, dict[str, Progress] | None] = {}
        self._ordered: list[str] | None = None
        self._climbs: list[int] = []  # the points that settled, in order (see settled)
        self._tally: Tally | None = None

    def issued(self, op: str, fifo: str, point: int) -> int:
        """Elements the transfers of kind ``op`` ("fill" or "drain") of ``fifo`` issued before
        runtime op ``point`` move."""
        steps = self._tallied().issued.get((op, fifo))
        moved = None if steps is None else steps.before(point)
        return moved or 0


    def _tallied(self) -> Tally:
        """The runtime sequence's :class:`~aiedsl.ir.tally.Tally` (made on first use)."""
        if self._tally is None:
            self._tally = Tally.of(self.d, self.elements)
        return self._tally

    # -- upper bound: what the fills issued so far let run ------------------------------------

    def could_run(self, core: str, point: int) -> Progress:
        """The furthest ``core``'s program can have got on the data filled before ``point``."""
        settled = self.settled(point)
        if settled is not None:
            return settled[core]
        return self._through_cycles(core, point)

    def settled(self, point: int) -> dict[str, Progress] | None:
        """Every core's furthest progress on the fills issued before ``point``, or None when
        the bound does not settle within :data:`ROUNDS` rounds past the number of cores.

        Each core runs as far as what its producers released (and the fills) lets it; that
        is walked again for every core, from nothing released anywhere, until no walk gets
        further. The least fixed point, reached from below, bounds every real run: a run
        starts from nothing, and a core never gets past an acquire before what it acquires
        was released, so no step of a run passes the bound. A cycle of cores that each take
        before they put therefore settles where it blocks, and one that keeps exchanging
        needs a round per exchange, hence the cap.

        The walks start from the bound at the latest earlier point that settled, when there
        is one: fills and barrier values only accumulate along the sequence, so that bound is
        below this one's, and the walks climb from it to the same least fixed point in the
        rounds the fills in between allow: a long exchange filled batch by batch settles at
        every wait when each batch allows fewer exchanges than the cap (one filled in a few
        large batches still runs into it, and is left unjudged)."""
        if point not in self._settled:
            filled = self._filled(point)
            held = self._held(point)
            below = bisect_left(self._climbs, point)  # the latest earlier point that settled
            earlier = self._climbs[below - 1] if below else None
            progress = (dict(self._settled[earlier] or {}) if earlier is not None else
                        {name: Progress() for name in self.cores})
            order = self._order()
            out: dict[str, Progress] | None = None
            for _ in range(len(order) + ROUNDS):
                moved = False
                for name in order:
                    avail = {f: self._supplied(f, filled, progress, set())
                             for f in self.consumed[name]}
                    p = Progress()
                    until_blocked(self.cores[name].body, avail, held, p, self.memo)
                    moved = moved or p.released != progress[name].released
                    progress[name] = p
                if not moved:
                    out = progress
                    break
            self._settled[point] = out
            if out:
                insort(self._climbs, point)
        return self._settled[point]

    def more_to_supply(self, point: int, core: str, out: str, wanted: str,
                       wants: int) -> int | None:
        """How many more elements of fifo ``out`` than the bound at ``point`` has ``core``
        release would let ``wants`` elements of fifo ``wanted`` (``out`` itself, or what a link
        makes of it) reach its consumers; None when no number of them would (up to
        :data:`ROUNDS` times ``wants``)."""
        settled = self.settled(point)
        assert settled is not None
        filled = self._filled(point)
        progress = dict(settled)
        base = settled[core].released[(out, "produce")]
        for more in range(1, ROUNDS * max(wants, 1) + 1):
            p = Progress(released=Counter(settled[core].released))
            p.released[(out, "produce")] = base + more
            progress[core] = p
            if self._supplied(wanted, filled, progress, set()) >= wants:
                return more
        return None

    def _filled(self, point: int) -> Counter[str]:
        """Elements the fills issued before ``point`` put in each fifo."""
        filled: Counter[str] = Counter()
        for (kind, fifo), steps in self._tallied().issued.items():
            moved = steps.before(point)
            if kind == "fill" and moved is not None:
                filled[fifo] = moved
        return filled

    def _supplied(self, name: str, filled: Counter[str], progress: dict[str, Progress],
                  seen: set[str]) -> int:
        """Elements of fifo ``name`` its consumers can have received while every core stands
        at ``progress``: what was put in, each sent ``repeat`` times."""
        f = self.fifos[name]
        if f.producer.kind == "shim":
            made = filled[name]
        elif f.producer.kind == "core" and f.producer.core:
            made = progress[f.producer.core].released[(name, "produce")]
        else:
            link = self.link_of_dst.get(name)
            if link is None or name in seen:
                return 0
            made = self.link_makes(name, [self._supplied(s, filled, progress, seen | {name})
                                          for s in link.srcs])
        return made * f.repeat

    def _order(self) -> list[str]:
        """The cores, each after the cores whose fifos it consumes (within a cycle, in design
        order): a design without cycles settles in one round, and a second confirms it."""
        if self._ordered is None:
            feeders = {name: self.feeders(name) for name in self.cores}
            out: list[str] = []
            placed: set[str] = set()

            def visit(name: str, path: set[str]) -> None:
                if name in placed or name in path:
                    return
                for up in sorted(feeders[name]):
                    visit(up, path | {name})
                placed.add(name)
                out.append(name)

            for name in self.cores:
                visit(name, set())
            self._ordered = out
        return self._ordered

    def _through_cycles(self, core: str, point: int) -> Progress:
        """:meth:`could_run` for a design whose bound does not settle: what a cycle of cores
        sends round itself is taken as unlimited, so the rest of the design bounds it."""
        filled = self._filled(point)
        held = self._held(point)
        supply: dict[str, int] = {}
        running: set[str] = set()

        def produced(name: str) -> int:
            """Elements of fifo ``name`` its consumers can have received: what was put in,
            each sent ``repeat`` times."""
            if name not in supply:
                supply[name] = UNBOUNDED  # a cycle through cores limits nothing here
                supply[name] = made(name) * self.fifos[name].repeat
            return supply[name]

        def made(name: str) -> int:
            f = self.fifos[name]
            if f.producer.kind == "shim":
                return filled[name]
            if f.producer.kind == "core" and f.producer.core:
                return run(f.producer.core).released[(name, "produce")]
            link = self.link_of_dst.get(name)
            if link is None:
                return 0
            return self.link_makes(name, [produced(s) for s in link.srcs])

        def run(name: str) -> Progress:
            if name in running:  # only while a cycle is walked: nothing bounds it
                return Progress(Counter({k: UNBOUNDED for k in self.keys[name]}))
            running.add(name)
            c = self.cores[name]
            avail = {f: produced(f) for f, port in self.keys[c.name] if port == "consume"}
            p = Progress()
            until_blocked(c.body, avail, held, p, self.memo)
            running.discard(name)
            return p

        return run(core)

    def _held(self, point: int) -> Held:
        """The values each barrier's locks hold in turn before ``point``: the initial value,
        then each set's (a set replaces the value)."""
        sets = self._tallied().sets
        return {b.name: (b.init, *sets[b.name].value[:sets[b.name].count(point)])
                for b in self.d.barriers}

    # -- lower bound: what the drains waited for prove ----------------------------------------

    def must_have_run(self, core: str, point: int) -> Progress:
        """How far ``core``'s program has certainly got once the waits before ``point`` returned:
        it has released every element the waited drains (and the cores downstream, by the same
        reasoning) took."""
        return self.proven(point).progress(core)

    def next_stop(self, core: str, at: Progress) -> tuple[Op | None, int]:
        """Where ``core`` stops next once it is as far as lower bound ``at``: going on through
        releases only (they take no time), the first other op it reaches (an acquire, a call,
        a barrier wait; None at the program's end), and for a wait the pass of it that is
        (1 for its first). A core that stops at a wait is at that wait as soon as it is past
        ``at``."""
        # the first point whose counts all reach ``at``'s is where the walk that made ``at``
        # stopped: right after a release (or call), every earlier point is short on its key
        targets = {key: n for key, n in at.released.items() if n > 0}
        p = Progress()
        got = next_op(self.cores[core].body, targets, p, self.memo, [False])
        if isinstance(got, BarrierWait):
            return got, p.passed[got] + 1
        return (got if isinstance(got, (Acquire, Call)) else None), 0

    def proven(self, point: int) -> Proven:
        """What the drains waited for before ``point`` prove."""
        drained: Counter[str] = Counter()
        for fifo, steps in self._tallied().drained.items():
            took = steps.before(point)
            if took is not None:
                drained[fifo] = took
        return Proven(self, drained)
