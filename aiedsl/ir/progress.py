"""How far one core's program gets: :class:`Progress`, and the walks that make it.

A core blocks only on its acquires and barrier waits. :func:`until_blocked` walks a program as
far as the elements available to each consume acquire (and the values its barriers hold) let it;
:func:`until_released` walks it until it has released given counts; :func:`next_op` finds where
a core stops next past such a point. :mod:`aiedsl.ir.reach` builds its bounds from these walks.

A runtime barrier's wait for v (``aie.use_lock(lock, Acquire, v)``) passes while the core's lock
holds v and leaves it there; the lock holds its initial value, then each value the runtime sets,
in order. So :func:`until_blocked` lets a core's waits through as far as they can be matched, in
program order, to that sequence of values (each wait to the value the wait before it passed on,
or to one set after that; matching each to the earliest it can goes furthest). A wait does not
change the lock, so :func:`until_released` need not match them: a core past a release is past
every wait before it. Both walks count the waits they pass (``passed``), so a check can tell
which waits a core must have passed at a point, and which it may have.

Loops are not unrolled: a loop body's releases, calls and largest acquire window are summed once
and whole iterations are applied arithmetically, so a walk costs what the loop nest has ops, not
what it runs (a body's barrier waits are matched an iteration at a time, until an iteration
leaves every match where it was: the rest pass alike).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from aiedsl.ir.core_ops import Acquire, BarrierWait, Call, Loop, Op, Release, RtpArg
from aiedsl.ir.cores import Core
from aiedsl.ir.program import acquires, walk

Key = tuple[str, str]
"""(fifo, port) of an acquire or release."""
Held = dict[str, tuple[int, ...]]
"""Per barrier, the values its lock holds in turn: the initial value, then each set's."""
Slot = tuple[str, int]
"""(rtp, index) of a runtime-parameter slot."""

UNBOUNDED = 1 << 62
"""Elements of a fifo whose supply nothing limits: a fifo that :func:`until_blocked`'s
``avail`` does not name, or one a cycle of cores feeds in
:meth:`aiedsl.ir.reach.Reach.could_run`."""


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
class Summary:
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


def call_key(kernel: str) -> Key:
    """The key counting a core's calls of ``kernel`` (no fifo name has a space)."""
    return (f"call {kernel}", "call")


def _slots(call: Call) -> set[Slot]:
    return {(a.rtp, a.index) for a in call.args if isinstance(a, RtpArg)}


def _summary(ops: tuple[Op, ...], memo: dict[int, Summary]) -> Summary:
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
            delta[call_key(op.kernel)] += 1
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
    memo[id(ops)] = s = Summary(delta, reads, window, waits, gated)
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
             memo: dict[int, Summary]) -> bool:
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
                memo: dict[int, Summary]) -> int:
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


def _apply(p: Progress, s: Summary, times: int) -> None:
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


def until_blocked(ops: tuple[Op, ...], avail: dict[str, int], held: Held, p: Progress,
                   memo: dict[int, Summary]) -> bool:
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
            p.released[call_key(op.kernel)] += 1
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
                if until_blocked(op.body, avail, held, p, memo):
                    return True
    return False


def _met(p: Progress, targets: dict[Key, int]) -> bool:
    return all(p.released[k] >= t for k, t in targets.items())


def until_released(ops: tuple[Op, ...], targets: dict[Key, int], p: Progress,
                    memo: dict[int, Summary]) -> bool:
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
            called = call_key(op.kernel)
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
            if until_released(op.body, targets, p, memo):
                return True
    return False


END = object()
"""What :func:`next_op` returns when the ops it walked ended before it stopped."""


def next_op(ops: tuple[Op, ...], targets: dict[Key, int], p: Progress,
             memo: dict[int, Summary], sliding: list[bool]) -> Op | object:
    """Walk ``ops`` as :func:`until_released` does until every target is met (then
    ``sliding[0]`` is set), then on through releases only: the first other op (a loop is
    entered), or :data:`END` when ``ops`` end first."""
    if not sliding[0] and _met(p, targets):
        sliding[0] = True
    for op in ops:
        if sliding[0]:
            if isinstance(op, Release):
                p.released[(op.fifo, op.port)] += op.count
                continue
            if isinstance(op, Loop):
                # a body of releases only stops nowhere, whichever iteration it is
                got = next_op(op.body, targets, p, memo, sliding) if op.count > 0 else END
                if got is not END:
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
            called = call_key(op.kernel)
            p.released[called] += 1
            sliding[0] = called in targets and _met(p, targets)
        elif isinstance(op, Loop) and op.count > 0:
            s = _summary(op.body, memo)
            first = 0  # the first iteration within which every target is met (as until_released)
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
            got = next_op(op.body, targets, p, memo, sliding)
            if got is not END:
                return got
            if not sliding[0]:  # not met after all: the rest of the loop as a whole
                _apply(p, s, op.count - max(first, 1))
                continue
            if op.count > max(first, 1):  # met in that iteration: the next one slides
                got = next_op(op.body, targets, p, memo, sliding)
                if got is not END:
                    return got
    return END


def core_keys(core: Core) -> set[Key]:
    """The (fifo, port) pairs ``core`` acquires."""
    return {(op.fifo, op.port) for op in acquires(core).values()}


def waits_on_barrier(core: Core) -> bool:
    """Does ``core``'s program wait on a runtime barrier?"""
    return any(isinstance(op, BarrierWait) for op, _ in walk(core.body))
