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
releases gives a lower bound on the calls that have *finished* (``must_have_run``). Produce
acquires are taken to be granted at once (a free buffer is the usual case, and a bound that
assumes it stays an upper bound).

A runtime barrier's wait for v (``aie.use_lock(lock, Acquire, v)``) passes while the core's lock
holds v and leaves it there; the lock holds its initial value, then each value the runtime sets,
in order. So the upper bound lets a core's waits through as far as they can be matched, in
program order, to that sequence of values up to the point (each wait to the value the wait
before it passed on, or to one set after that; matching each to the earliest it can goes
furthest). A wait does not change the lock, so the lower bound need not match them: a core past a
release is past every wait before it. Both walks count the waits they pass (``passed``), so a
check can tell which waits a core must have passed at a point, and which it may have.

Loops are not unrolled: a loop body's releases, calls and largest acquire window are summed once
and whole iterations are applied arithmetically, so a walk costs what the loop nest has ops, not
what it runs (a body's barrier waits are matched an iteration at a time, until an iteration
leaves every match where it was: the rest pass alike).

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
from collections import Counter, deque
from dataclasses import dataclass, field
from fractions import Fraction

from aiedsl.ir.program import acquires, calls, walk
from aiedsl.ir import (Acquire, BarrierWait, Call, Core, Design, Endpoint, Loop, Op, Release,
                       RtpArg, SetBarrier, Transfer, Wait)

Key = tuple[str, str]
"""(fifo, port) of an acquire or release."""
Held = dict[str, tuple[int, ...]]
"""Per barrier, the values its lock holds in turn: the initial value, then each set's."""
Slot = tuple[str, int]
"""(rtp, index) of a runtime-parameter slot."""

UNBOUNDED = 1 << 62
"""Elements of a fifo whose supply nothing issued before the point limits (a cycle of cores)."""
ROUNDS = 64
"""Rounds past the number of cores that :meth:`Reach.settled` walks before it gives up: a cycle
of cores that keeps exchanging elements moves one exchange a round."""


@dataclass
class Progress:
    """Where a walk of one core's program stopped: what it had released, the furthest element
    of each consumed fifo it had acquired (its producer had made them all), which rtp slots its
    calls had read (a call reading a slot twice counts once), and where in each barrier's
    sequence of values its last wait was matched."""

    released: Counter[Key] = field(default_factory=Counter)
    """Elements released, per (fifo, port)."""
    reads: Counter[Slot] = field(default_factory=Counter)
    """Calls that read each rtp slot."""
    acquired: Counter[Key] = field(default_factory=Counter)
    """Per consumed (fifo, port): the furthest element acquired."""
    gate: Counter[str] = field(default_factory=Counter)
    """Per barrier: the index, in its :data:`Held` values, its last wait passed on (0, the
    initial value, before any wait)."""
    passed: Counter[BarrierWait] = field(default_factory=Counter)
    """Per barrier wait of the program: how many times the walk passed it (a wait in a loop
    once per iteration walked)."""
    blocked: Acquire | BarrierWait | None = None
    """The consume acquire or barrier wait the walk stopped at; None when it ran to the end."""


@dataclass(frozen=True)
class _Summary:
    """One pass over a body: its releases, its calls' slot reads, for each consume key the
    most elements past those released at its start that it holds at once, and whether it waits
    on a barrier."""

    delta: Counter[Key]
    """Elements released in one pass, per (fifo, port)."""
    reads: Counter[Slot]
    """Calls in one pass that read each rtp slot."""
    window: dict[Key, int]
    """Per consume key: the most elements past those released at the pass's start held at once."""
    waits: Counter[BarrierWait] = field(default_factory=Counter)
    """Times one pass passes each barrier wait in it (loops in it counted whole)."""
    gated: bool = False
    """Whether the body (or a loop in it) waits on a barrier."""
    trails: dict[frozenset[tuple[str, int]], _Trail] = field(default_factory=dict,
                                                             compare=False)
    """Per gate a pass may start from: the passes :func:`_iterations` matched from it."""


@dataclass
class _Trail:
    """Where each pass over a gated body, from one gate, left the gate, as far as matched: the
    values a point's barriers hold extend an earlier point's, and a pass matches each wait to
    the earliest value it can, so every point's passes are the first of these (those whose
    gates its values reach), and a later point only matches on from the last."""

    gates: list[Counter[str]]
    """The gate after each pass (the first: the gate it starts from)."""
    still: bool = False
    """Whether a pass after the last left the gate where it was (every later one does too)."""


def _called(kernel: str) -> Key:
    """The key counting a core's calls of ``kernel`` (no fifo name has a space)."""
    return (f"call {kernel}", "call")


def _slots(call: Call) -> set[Slot]:
    return {(a.rtp, a.index) for a in call.args if isinstance(a, RtpArg)}


def _summary(ops: tuple[Op, ...], memo: dict[int, _Summary]) -> _Summary:
    got = memo.get(id(ops))
    if got is not None:
        return got
    delta: Counter[Key] = Counter()
    reads: Counter[Slot] = Counter()
    window: dict[Key, int] = {}
    waits: Counter[BarrierWait] = Counter()
    gated = False
    for op in ops:
        if isinstance(op, Acquire) and op.port == "consume":
            held: Key = (op.fifo, op.port)
            window[held] = max(window.get(held, 0), delta[held] + op.count)
        elif isinstance(op, BarrierWait):  # matched by _through; counted as passed
            gated = True
            waits[op] += 1
        elif isinstance(op, Release):
            delta[(op.fifo, op.port)] += op.count
        elif isinstance(op, Call):
            reads.update(_slots(op))
            delta[_called(op.kernel)] += 1
        elif isinstance(op, Loop) and op.count > 0:
            inner = _summary(op.body, memo)
            gated = gated or inner.gated
            for key, w in inner.window.items():
                # releases only grow, so the last iteration holds the furthest window
                last = delta[key] + (op.count - 1) * inner.delta[key] + w
                window[key] = max(window.get(key, 0), last)
            for key, n in inner.delta.items():
                delta[key] += op.count * n
            for slot, n in inner.reads.items():
                reads[slot] += op.count * n
            for wait, n in inner.waits.items():
                waits[wait] += op.count * n
    memo[id(ops)] = s = _Summary(delta, reads, window, waits, gated)
    return s


def _wait(op: BarrierWait, held: Held, gate: Counter[str]) -> bool:
    """Pass wait ``op`` on the earliest value of its barrier's sequence, at or after where the
    core's last wait on it passed, that is the value it waits for; False when none is."""
    values = held.get(op.barrier, ())
    for i in range(gate[op.barrier], len(values)):
        if values[i] == op.value:
            gate[op.barrier] = i
            return True
    return False


def _through(ops: tuple[Op, ...], held: Held, gate: Counter[str],
             memo: dict[int, _Summary]) -> bool:
    """Match the barrier waits of one pass over ``ops`` (``gate`` moves on); False when one
    cannot be matched (``gate`` is then left part way)."""
    for op in ops:
        if isinstance(op, BarrierWait):
            if not _wait(op, held, gate):
                return False
        elif isinstance(op, Loop) and op.count > 0 and _summary(op.body, memo).gated:
            if _iterations(op.body, op.count, held, gate, memo) < op.count:
                return False
    return True


def _iterations(body: tuple[Op, ...], most: int, held: Held, gate: Counter[str],
                memo: dict[int, _Summary]) -> int:
    """How many whole passes over ``body``, up to ``most``, the barrier waits in it let
    through, moving ``gate`` past them. A pass that leaves ``gate`` where it was leaves it
    there every time after, so at most one pass per value of the sequences is matched.

    The passes are kept in ``body``'s summary (a :class:`_Trail` per gate they start from), so
    every ``held`` given with one ``memo`` must be, per barrier, a prefix of one sequence of
    values (:meth:`Reach._held` at its points): a walk at each point then matches only the
    passes the values set since the last one allow, not every pass again."""
    trail = _summary(body, memo).trails.setdefault(frozenset((+gate).items()),
                                                   _Trail([gate.copy()]))
    gates = trail.gates
    # the passes matched before whose waits all got values these ones have: gates only move
    # on, so a pass's gate within the values here is the whole pass matched within them
    lo, hi = 0, len(gates) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if all(i < len(held.get(b, ())) for b, i in gates[mid].items()):
            lo = mid
        else:
            hi = mid - 1
    done = lo
    while done < most and done == len(gates) - 1 and not trail.still:
        after = gates[-1].copy()
        if not _through(body, held, after, memo):
            break
        if +after == +gates[-1]:
            trail.still = True
            break
        gates.append(after)
        done += 1
    gate.clear()
    gate.update(gates[min(done, most)])
    if done == len(gates) - 1 and trail.still:
        return most  # the pass after the last matched leaves the gate there, as all after it
    return min(done, most)


def _apply(p: Progress, s: _Summary, times: int) -> None:
    if times > 0:  # the last iteration applied holds the furthest window
        for key, w in s.window.items():
            last = p.released[key] + (times - 1) * s.delta[key] + w
            p.acquired[key] = max(p.acquired[key], last)
    for key, n in s.delta.items():
        p.released[key] += times * n
    for slot, n in s.reads.items():
        p.reads[slot] += times * n
    for wait, n in s.waits.items():
        p.passed[wait] += times * n


def _until_blocked(ops: tuple[Op, ...], avail: dict[str, int], held: Held, p: Progress,
                   memo: dict[int, _Summary]) -> bool:
    """Walk ``ops`` granting consume acquires while ``avail`` (elements per fifo) lasts and
    barrier waits while ``held`` has their values; True when one blocked (the walk stops
    there)."""
    for op in ops:
        if isinstance(op, Acquire) and op.port == "consume":
            taken: Key = (op.fifo, op.port)
            if p.released[taken] + op.count > avail.get(op.fifo, UNBOUNDED):
                p.blocked = op
                return True
            p.acquired[taken] = max(p.acquired[taken], p.released[taken] + op.count)
        elif isinstance(op, BarrierWait):
            if not _wait(op, held, p.gate):
                p.blocked = op
                return True
            p.passed[op] += 1
        elif isinstance(op, Release):
            p.released[(op.fifo, op.port)] += op.count
        elif isinstance(op, Call):
            p.reads.update(_slots(op))
            p.released[_called(op.kernel)] += 1
        elif isinstance(op, Loop) and op.count > 0:
            s = _summary(op.body, memo)
            whole = op.count
            for key, w in s.window.items():
                room = avail.get(key[0], UNBOUNDED) - p.released[key] - w
                if room < 0:
                    whole = 0
                elif s.delta[key]:
                    whole = min(whole, room // s.delta[key] + 1)
            if s.gated:
                whole = _iterations(op.body, whole, held, p.gate, memo)
            _apply(p, s, whole)
            for _ in range(whole, op.count):  # the first of these blocks
                if _until_blocked(op.body, avail, held, p, memo):
                    return True
    return False


def _met(p: Progress, targets: dict[Key, int]) -> bool:
    return all(p.released[k] >= t for k, t in targets.items())


def _until_released(ops: tuple[Op, ...], targets: dict[Key, int], p: Progress,
                    memo: dict[int, _Summary]) -> bool:
    """Walk ``ops`` until every key has released its target; True once it has (the walk stops
    right after that release)."""
    if _met(p, targets):
        return True
    for op in ops:
        if isinstance(op, Acquire) and op.port == "consume":  # the core got that far
            taken: Key = (op.fifo, op.port)
            p.acquired[taken] = max(p.acquired[taken], p.released[taken] + op.count)
        elif isinstance(op, BarrierWait):  # so far too: the lock held its value then
            p.passed[op] += 1
        elif isinstance(op, Release):
            p.released[(op.fifo, op.port)] += op.count
            if _met(p, targets):
                return True
        elif isinstance(op, Call):
            p.reads.update(_slots(op))
            called = _called(op.kernel)
            p.released[called] += 1
            if called in targets and _met(p, targets):
                return True
        elif isinstance(op, Loop) and op.count > 0:
            s = _summary(op.body, memo)
            first = 0  # the first iteration within which every target is met
            for key, t in targets.items():
                short = t - p.released[key]
                if short <= 0:
                    continue
                if not s.delta[key]:
                    first = op.count + 1
                    break
                first = max(first, -(-short // s.delta[key]))
            if first > op.count:
                _apply(p, s, op.count)
                continue
            _apply(p, s, max(first - 1, 0))
            if _until_released(op.body, targets, p, memo):
                return True
    return False


@dataclass
class _Steps:
    """A number that changes at some ops of the runtime sequence: it is ``value[k]`` from just
    after op ``at[k]`` on (``at`` increasing)."""

    at: list[int] = field(default_factory=list)
    """The index of each op that changes it."""
    value: list[int] = field(default_factory=list)
    """What it is after each of those ops."""

    def count(self, point: int) -> int:
        """How many of the changes come before runtime op ``point``."""
        return bisect_left(self.at, point)

    def before(self, point: int) -> int | None:
        """What it is just before runtime op ``point``; None when no change comes before."""
        k = self.count(point)
        return self.value[k - 1] if k else None

    def add(self, at: int, more: int) -> None:
        """Count ``more`` on from the last value (from 0) after op ``at``."""
        self.at.append(at)
        self.value.append((self.value[-1] if self.value else 0) + more)


@dataclass
class _Tally:
    """The runtime sequence's fills, drains, waits and barrier sets, tallied in one pass: the
    counts before a point are then a bisection per fifo, not a scan of the ops before it (a
    check asks at every wait, so a scan made it quadratic in the sequence's length)."""

    issued: dict[tuple[str, str], _Steps] = field(default_factory=dict)
    """Per ("fill" or "drain", fifo): the elements its transfers move, running total."""
    drained: dict[str, _Steps] = field(default_factory=dict)
    """Per fifo: the elements of the drains its waits took, running total (first waited for
    first, in :meth:`Reach.proven`'s order)."""
    sets: dict[str, _Steps] = field(default_factory=dict)
    """Per barrier: the values its sets give (``value`` holds each, not a running total)."""


_END = object()
"""What :func:`_next_op` returns when the ops it walked ended before it stopped."""


def _next_op(ops: tuple[Op, ...], targets: dict[Key, int], p: Progress,
             memo: dict[int, _Summary], sliding: list[bool]) -> Op | object:
    """Walk ``ops`` as :func:`_until_released` does until every target is met (then
    ``sliding[0]`` is set), then on through releases only: the first other op (a loop is
    entered), or :data:`_END` when ``ops`` end first."""
    if not sliding[0] and _met(p, targets):
        sliding[0] = True
    for op in ops:
        if sliding[0]:
            if isinstance(op, Release):
                p.released[(op.fifo, op.port)] += op.count
                continue
            if isinstance(op, Loop):
                # a body of releases only stops nowhere, whichever iteration it is
                got = _next_op(op.body, targets, p, memo, sliding) if op.count > 0 else _END
                if got is not _END:
                    return got
                continue
            return op
        if isinstance(op, Acquire) and op.port == "consume":
            taken: Key = (op.fifo, op.port)
            p.acquired[taken] = max(p.acquired[taken], p.released[taken] + op.count)
        elif isinstance(op, BarrierWait):
            p.passed[op] += 1
        elif isinstance(op, Release):
            p.released[(op.fifo, op.port)] += op.count
            sliding[0] = _met(p, targets)
        elif isinstance(op, Call):
            p.reads.update(_slots(op))
            called = _called(op.kernel)
            p.released[called] += 1
            sliding[0] = called in targets and _met(p, targets)
        elif isinstance(op, Loop) and op.count > 0:
            s = _summary(op.body, memo)
            first = 0  # the first iteration within which every target is met (as _until_released)
            for key, t in targets.items():
                short = t - p.released[key]
                if short <= 0:
                    continue
                if not s.delta[key]:
                    first = op.count + 1
                    break
                first = max(first, -(-short // s.delta[key]))
            if first > op.count:
                _apply(p, s, op.count)
                continue
            _apply(p, s, max(first - 1, 0))
            got = _next_op(op.body, targets, p, memo, sliding)
            if got is not _END:
                return got
            if not sliding[0]:  # not met after all: the rest of the loop as a whole
                _apply(p, s, op.count - max(first, 1))
                continue
            if op.count > max(first, 1):  # met in that iteration: the next one slides
                got = _next_op(op.body, targets, p, memo, sliding)
                if got is not _END:
                    return got
    return _END


class Reach:
    """Bounds on every core's progress at each point of ``d``'s runtime sequence (a point is
    the index of a runtime op: the state just before it)."""

    def __init__(self, d: Design) -> None:
        self.d = d
        self.memo: dict[int, _Summary] = {}
        self.cores = {c.name: c for c in d.cores}
        self.fifos = {f.name: f for f in d.fifos}
        self.link_of_dst = {n: link for link in d.links for n in link.dsts}
        self.link_of_src = {n: link for link in d.links for n in link.srcs}
        self.kernels = {k.symbol: k for k in d.kernels}
        self.cascade_to = {c.src: c.dst for c in d.cascades}
        self._settled: dict[int, dict[str, Progress] | None] = {}
        # each core's (fifo, port) pairs, kept: Proven.progress asks for them at every point
        self._keys = {c.name: _keys(c) for c in d.cores}
        self._consumed = {c.name: sorted(f for f, port in self._keys[c.name] if port == "consume")
                          for c in d.cores}
        self._ordered: list[str] | None = None
        self._climbs: list[int] = []  # the points that settled, in order (see settled)
        # (tensor, fifo) -> (the tensor's bytes per value, the fifo's per element): a dtype's
        # lookup costs more than the rest of elements(), which the checks call per transfer
        self._sizes: dict[tuple[str, str], tuple[int, int]] = {}
        self._tally: _Tally | None = None

    def elements(self, t: Transfer) -> int:
        """Whole fifo elements a fill or drain moves (the DMA moves bytes)."""
        sizes = self._sizes.get((t.tensor, t.fifo))
        if sizes is None:
            sizes = (self.d.tensor(t.tensor).type.dt.itemsize, self.fifos[t.fifo].elem.nbytes)
            self._sizes[(t.tensor, t.fifo)] = sizes
        return t.pattern.numel * sizes[0] // sizes[1]

    def issued(self, op: str, fifo: str, point: int) -> int:
        """Elements the transfers of kind ``op`` ("fill" or "drain") of ``fifo`` issued before
        runtime op ``point`` move."""
        steps = self._tallied().issued.get((op, fifo))
        moved = None if steps is None else steps.before(point)
        return moved or 0

    def _tallied(self) -> _Tally:
        """The runtime sequence's :class:`_Tally` (made on first use)."""
        if self._tally is None:
            tally = _Tally(sets={b.name: _Steps() for b in self.d.barriers})
            pending: dict[str, deque[int]] = {}  # fifo -> its drains not waited for, oldest first
            for i, op in enumerate(self.d.runtime):
                if isinstance(op, Transfer):
                    n = self.elements(op)
                    tally.issued.setdefault((op.op, op.fifo), _Steps()).add(i, n)
                    if op.op == "drain":
                        pending.setdefault(op.fifo, deque()).append(n)
                elif isinstance(op, Wait) and pending.get(op.fifo):
                    # a channel completes its tasks in order: the oldest token is the oldest drain
                    tally.drained.setdefault(op.fifo, _Steps()).add(i, pending[op.fifo].popleft())
                elif isinstance(op, SetBarrier):
                    steps = tally.sets[op.barrier]
                    steps.at.append(i)
                    steps.value.append(op.value)
            self._tally = tally
        return self._tally

    def upstream(self, core: str) -> set[str]:
        """The fifos the runtime fills whose data reaches ``core`` (through links and other
        cores)."""
        out: set[str] = set()
        seen: set[str] = set()
        todo = [f for f, port in _keys(self.cores[core]) if port == "consume"]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            f = self.fifos[name]
            if f.producer.kind == "shim":
                out.add(name)
            elif f.producer.kind == "core" and f.producer.core:
                todo += [g for g, port in _keys(self.cores[f.producer.core]) if port == "consume"]
            elif name in self.link_of_dst:
                todo += self.link_of_dst[name].srcs
        return out

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
                             for f in self._consumed[name]}
                    p = Progress()
                    _until_blocked(self.cores[name].body, avail, held, p, self.memo)
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
            parts = [self._supplied(s, filled, progress, seen | {name}) for s in link.srcs]
            if link.kind == "join":  # one joined element takes one element of every part
                made = min(parts)
            elif link.kind == "split":
                made = parts[0]
            else:  # a forward may regroup into elements of another size
                src = link.srcs[0]
                made = int(Fraction(parts[0] * self.fifos[src].elem.numel, f.elem.numel))
        return made * f.repeat

    def _order(self) -> list[str]:
        """The cores, each after the cores whose fifos it consumes (within a cycle, in design
        order): a design without cycles settles in one round, and a second confirms it."""
        if self._ordered is None:
            feeders = {name: self._feeders(name) for name in self.cores}
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

    def cyclic(self) -> bool:
        """Whether some core consumes, through other cores and links, what it produces."""
        feeders = {name: self._feeders(name) for name in self.cores}
        for name in self.cores:
            todo, seen = list(feeders[name]), set()
            while todo:
                up = todo.pop()
                if up == name:
                    return True
                if up not in seen:
                    seen.add(up)
                    todo += feeders[up]
        return False

    def _feeders(self, core: str) -> set[str]:
        """The cores that produce what ``core`` consumes (through links)."""
        out: set[str] = set()
        todo = [f for f, port in _keys(self.cores[core]) if port == "consume"]
        seen: set[str] = set()
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            f = self.fifos[name]
            if f.producer.kind == "core" and f.producer.core:
                out.add(f.producer.core)
            elif name in self.link_of_dst:
                todo += self.link_of_dst[name].srcs
        return out

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
            if link.kind == "join":  # one joined element takes one element of every part
                return min(produced(s) for s in link.srcs)
            if link.kind == "split":
                return produced(link.srcs[0])
            src = link.srcs[0]  # a forward may regroup into elements of another size
            return int(Fraction(produced(src) * self.fifos[src].elem.numel,
                                f.elem.numel))

        def run(name: str) -> Progress:
            if name in running:  # only while a cycle is walked: nothing bounds it
                return Progress(Counter({k: UNBOUNDED for k in _keys(self.cores[name])}))
            running.add(name)
            c = self.cores[name]
            avail = {f: produced(f) for f, port in _keys(c) if port == "consume"}
            p = Progress()
            _until_blocked(c.body, avail, held, p, self.memo)
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
        got = _next_op(self.cores[core].body, targets, p, self.memo, [False])
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


class Proven:
    """What the drains known to be done prove: ``drained`` counts, per fifo, the elements its
    waited drains received. Each answer is kept (one instance per set of waits).

    A core that acquired an element had it whole in its memory, so its producer had sent every
    byte up to it; a drain that received an element had it released by the core producing it,
    which had by then passed every acquire before that release.
    """

    def __init__(self, reach: Reach, drained: Counter[str]) -> None:
        self.reach = reach
        self.drained = drained
        self._taken: dict[str, int] = {}
        self._done: dict[str, Progress] = {}

    def took(self, name: str) -> int:
        """Elements of fifo ``name`` its consumers have certainly taken (for a fifo the runtime
        fills: the elements the shim has certainly sent)."""
        if name not in self._taken:
            self._taken[name] = 0  # a cycle proves nothing more
            self._taken[name] = max(
                [0, *(self._consumed(name, c) for c in self.reach.fifos[name].consumers)])
        return self._taken[name]

    def put(self, name: str) -> int:
        """Elements of fifo ``name`` certainly put in (by its producer or its link): at least
        what its consumers took over its ``repeat``, every element being sent that many times."""
        return self.took(name) // self.reach.fifos[name].repeat

    def _consumed(self, name: str, end: Endpoint) -> int:
        r = self.reach
        if end.kind == "shim":
            return self.drained[name]
        if end.kind == "core" and end.core:
            # what the core acquired was made, whether or not it has released it yet
            return self.progress(end.core).acquired[(name, "consume")]
        link = r.link_of_src.get(name)
        if link is None:
            return 0
        if link.kind == "join":  # each joined element took one element of this part
            return self.put(link.dsts[0])
        if link.kind == "split":
            # the memtile receives each part of a parent element with a BD and locks of its
            # own (mlir-aie's createMemTileDMA), so one part taken proves only that part sent:
            # a parent element is whole only once every part of it was taken
            return min(self.put(n) for n in link.dsts)
        dst = link.dsts[0]  # (a forward repeats its larger element: whole ones are a bound)
        return int(Fraction(self.took(dst) * r.fifos[dst].elem.numel,
                            r.fifos[name].elem.numel * r.fifos[dst].repeat))

    def _cascaded(self, core: str) -> dict[Key, int]:
        """The calls ``core`` has certainly made that put partial sums on its cascade: those
        whose every word its downstream neighbour's finished calls took (the cascade is a
        blocking stream of 32-bit values between the two, however either side groups them
        into calls: a call whose last word was taken was made). Only for a core whose puts are
        all calls of one kernel (the walk counts calls by kernel)."""
        r = self.reach
        down = r.cascade_to.get(core)
        if down is None:
            return {}
        put = {op.kernel for op in calls(r.cores[core]) if r.kernels[op.kernel].cascade_out}
        got = {op.kernel for op in calls(r.cores[down]) if r.kernels[op.kernel].cascade_in}
        if len(put) != 1:
            return {}
        done = self.progress(down)
        kernel = put.pop()
        out = r.kernels[kernel].cascade_out
        assert out is not None, "a put kernel has a cascade output"
        taken = 0
        for k in got:
            cin = r.kernels[k].cascade_in
            assert cin is not None, "a get kernel has a cascade input"
            taken += done.released[_called(k)] * cin.numel
        return {_called(kernel): taken // out.numel}

    def progress(self, core: str) -> Progress:
        """How far ``core``'s program has certainly got: past the release that handed on the
        last element of each fifo it produces that its consumers certainly took."""
        if core not in self._done:
            self._done[core] = Progress()  # while a cycle is walked: nothing proven
            c = self.reach.cores[core]
            targets = {(f, port): self.put(f) for f, port in self.reach._keys[core]
                       if port == "produce"}
            targets.update(self._cascaded(core))
            p = Progress()
            _until_released(c.body, {k: t for k, t in targets.items() if t}, p,
                            self.reach.memo)
            self._done[core] = p
        return self._done[core]


def _keys(core: Core) -> set[Key]:
    """The (fifo, port) pairs ``core`` acquires."""
    return {(op.fifo, op.port) for op in acquires(core).values()}


def waits_on_barrier(core: Core) -> bool:
    """Does ``core``'s program wait on a runtime barrier?"""
    return any(isinstance(op, BarrierWait) for op, _ in walk(core.body))
