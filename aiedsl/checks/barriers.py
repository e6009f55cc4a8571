"""Runtime barriers: no set replaces a value before every core that waits for it got past.

A core's wait for v on a runtime barrier (IRON's ``wait_for_value``) is ``aie.use_lock(lock,
Acquire, v)``, AIE2's acquire-equal: it blocks until the core's lock holds v and leaves v there.
``rt.set_barrier`` is ``aiex.set_lock``: the lock takes the new value whatever it held. So a
wait passes only while the lock holds its value, and once a set replaced that value, a core
that had not got to its wait yet waits forever (unless a later set gives the value back). The
runtime knows where a core is only from the drains it waited for, so this check asks that every
set that replaces a value be preceded by waits showing each core that still has to wait for
that value past that wait.

:meth:`aiedsl.ir.reach.Reach.must_have_run` bounds from below how far a core got once the waits
before a point returned, and counts the barrier waits it passed on the way. Between two of the
runtime's waits that bound does not move, and nothing forces a core further: its kernel calls
and the data it waits for may take any time. The slowest run this allows has each core at that
bound while the runtime issues its sets, and moving to the next bound only while the runtime
blocks in the wait that proves it: so each wait it passes there must be for the value the
barrier holds during that runtime wait. A wait for another value hangs in that run:

* when the barrier held the value before and a set replaced it, the set may come before the core
  gets to its wait, which is timing (the core's kernel time against the firmware's), and the
  check refuses the set as ``barrier race``: a design that relies on barriers for order must not
  rely on timing. When even the most the fills before the set can let the core run
  (:meth:`~aiedsl.ir.reach.Reach.could_run`) stops short of the wait, the set always wins:
  ``hang: barrier``.
* when the runtime sets the value only after that wait, the core can never pass before the wait
  returns: ``hang: barrier``, for certain.

One step takes no time in any run: a release. A core whose bound at the set is followed by its
wait with nothing but releases between (:meth:`~aiedsl.ir.reach.Reach.next_stop`: a core that
waits first thing, or right after the release the runtime waited for) is at that wait before
the set is issued, blocked in the lock acquire if the value has not come yet; it takes the lock
within cycles of the value's coming, long before the firmware's next step (the simulator models
it so), so that set does not race it. Only that one pass of the wait is excused.

The check is sound in the other direction too: when every wait a core passes between two of the
runtime's waits is for the value the barrier holds during the second, the core passes it in
every run (it gets there no later than the runtime's wait needs it, and the value stays until
that wait returns). Waits a core passes only after the runtime's last wait do not stop the
runtime, and are left alone. On random designs (``tests/test_barrier_order.py``) what the check
accepts runs at every kernel cost tried, and what it calls a certain hang deadlocks at each.

The fix names a drain that shows the core past its wait: the fewest elements of a drained fifo
whose arrival needs the core past the wait, but no core past a wait for a value the barriers do
not hold at the set (waiting on more would hang there), and no more than the fills before the
set can make.

Every invocation, not only the first (:func:`aiedsl.checks.reruns.check_barrier_reruns`). A lock
takes its initial value once, when the design is loaded: mlir-aie's ``AIERTControl::addInitConfig``
(``lib/Targets/AIERT.cpp``) writes ``aie.lock``'s ``init`` into the array's configuration, while
what runs at each invocation is the runtime sequence, whose ``aiex.set_lock`` only replaces the
value. So the second invocation, and every one after it, starts with the value the sequence set
last; the rest is as at the load: each core is back at the start of its program (IRON wraps it in an
endless ``scf.for``, and balance has every core take per run what the run puts in), every fifo's
locks where the load put them. A barrier the sequence leaves at its initial value (none set, or the
last set gives it back) starts every invocation alike; one it leaves elsewhere is judged again with
that starting value (:func:`~aiedsl.checks.carried.next_invocation`): a wait for a value only the
load gives never passes again, and the order of sets and waits is judged as above. Either is
``barrier rerun``. (A core that gets back to its first waits while the sequence still runs, and
passes one before a set after the sequence's last wait replaces its value, is taken to start where
that set leaves the lock: such a set is judged as if it came first.)
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from typing import NamedTuple, NoReturn

from aiedsl.checks.carried import CARRIED, Left, where_it_starts
from aiedsl.checks.runtime_order import arriving, waited_tokens
from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import Acquire, BarrierWait
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
from aiedsl.ir.program import walk
from aiedsl.ir.progress import Progress
from aiedsl.ir.proven import Proven
from aiedsl.ir.reach import Reach
from aiedsl.ir.runtime import SetBarrier, Transfer, Wait

_LIMIT = ("a wait passes only while the barrier holds its value (aie.use_lock Acquire, AIE2's "
          "acquire-equal: it blocks until the core's lock equals the value, and leaves it "
          "there) and a set replaces the value (aiex.set_lock), so the runtime replaces a value "
          "only once the drains it waited for show every core that waits for it past that wait")
"""The rule a refusal of a set states."""
_LATE = ("a wait passes only while the barrier holds its value (aie.use_lock Acquire, AIE2's "
         "acquire-equal: it blocks until the core's lock equals the value); the lock holds only "
         "the values set before, so a runtime wait whose drain needs a core past a wait for a "
         "value comes after the set that gives it")
"""The rule a refusal of a wait before the set it needs states."""


class _Held(NamedTuple):
    """One value a barrier's locks hold in turn."""

    value: int
    set: SetBarrier | None
    """The set that gave it; for the value the sequence starts with (point -1), None when that
    is the initial value, the last set of the sequence when an invocation left it."""
    point: int
    """The index of that set in the runtime sequence (-1 for the value it starts with)."""


class _Miss(NamedTuple):
    """A wait a core must pass during a runtime wait while its barrier holds another value."""

    core: str
    wait: BarrierWait
    done: int
    """Times the core is shown past ``wait`` before that runtime wait."""
    need: int
    """Times that runtime wait's drains need it past ``wait``."""


def check_barrier_order(d: Design) -> None:
    """No set of a runtime barrier replaces a value a core may still have to wait for, and no
    wait of the runtime needs a core past a wait for a value set only later."""
    check_order(d, None)


def check_order(d: Design, left: dict[str, Left] | None) -> None:
    """:func:`check_barrier_order` of ``d`` (and of every invocation after the first:
    :mod:`aiedsl.checks.reruns`); ``left``: for :func:`~aiedsl.checks.carried.next_invocation`'s
    design, what the invocation before left in its barriers (its refusals then say so)."""
    gated = {c for b in d.barriers for c in b.cores}
    if not gated or not any(isinstance(op, SetBarrier) for op in d.runtime):
        return
    reach = Reach(d)
    drained = {i: d.runtime[token] for i, _, token in waited_tokens(d)}
    shown: dict[str, Progress] = {name: Progress() for name in sorted(gated)}  # nothing yet
    # built once: a wait asks for them for every core (each a scan of the program or sequence)
    histories = _histories(d, left)
    orders = {core: _order(d, core) for core in shown}
    for i, op in enumerate(d.runtime):
        if not isinstance(op, Wait) or i not in drained:
            continue  # only a drain waited for shows a core further
        proven = reach.proven(i + 1)
        for core in shown:
            now = proven.progress(core)
            miss = _missed(reach, core, shown[core], now, i, histories, orders[core])
            if miss is not None:
                drain = drained[i]
                assert isinstance(drain, Transfer)
                _refuse(d, reach, i, drain, miss, left)
            shown[core] = now


def _histories(d: Design, left: dict[str, Left] | None = None) -> dict[str, list[_Held]]:
    """Per barrier, the values its locks hold in turn over the whole runtime sequence (starting
    with what ``left`` says the invocation before left, when given)."""
    out: dict[str, list[_Held]] = {}
    for b in d.barriers:  # the first of a name, as Design.barrier finds it
        gave = left[b.name].set if left and b.name in left else None
        out.setdefault(b.name, [_Held(b.init, gave, -1)])
    for i, op in enumerate(d.runtime):
        if isinstance(op, SetBarrier) and op.barrier in out:
            out[op.barrier].append(_Held(op.value, op, i))
    return out


def _before(held: list[_Held], point: int) -> list[_Held]:
    """The first of ``held`` (a barrier's :func:`_histories`): those held before runtime op
    ``point``."""
    return held[:bisect_left(held, point, key=lambda h: h.point)]


def _history(d: Design, barrier: str, point: int,
             left: dict[str, Left] | None = None) -> list[_Held]:
    """The values barrier ``barrier``'s locks hold in turn before runtime op ``point``."""
    return _before(_histories(d, left)[barrier], point)


def _order(d: Design, core: str) -> dict[BarrierWait, int]:
    """``core``'s barrier waits, in program order."""
    body = next(c for c in d.cores if c.name == core).body
    out: dict[BarrierWait, int] = {}
    for op, _ in walk(body):
        if isinstance(op, BarrierWait):
            out.setdefault(op, len(out))
    return out


def _crossed(before: Progress, after: Progress) -> list[BarrierWait]:
    """The waits a core passes going from ``before`` to ``after``."""
    return [w for w, n in after.passed.items() if n > before.passed[w]]


def _missed(reach: Reach, core: str, before: Progress, after: Progress, point: int,
            histories: dict[str, list[_Held]], order: dict[BarrierWait, int]) -> _Miss | None:
    """The first wait (in program order) ``core`` must pass going from ``before`` to ``after``,
    while the runtime blocks in its wait at ``point``, that is for a value its barrier does not
    hold then, and that the core is not already at while the barrier held its value
    (``histories`` as :func:`_histories` gives them, ``order`` as :func:`_order`)."""
    for w in sorted(_crossed(before, after), key=order.__getitem__):
        held = _before(histories[w.barrier], point)
        if held[-1].value == w.value:
            continue
        miss = _Miss(core, w, before.passed[w], after.passed[w])
        gone = _replaced(held, w.value)
        if gone is not None and miss.need == miss.done + 1 and \
                reach.next_stop(core, reach.must_have_run(core, gone.point)) == (w, miss.need):
            # only releases (no time) lie between where the drains waited for before the set
            # show the core and its wait: it is at the wait by then, while the lock holds the
            # value or before, and passes within cycles of the lock's taking it, long before
            # the firmware's next step
            continue
        return miss
    return None


def _replaced(held: list[_Held], value: int) -> _Held | None:
    """The last of ``held`` that replaced ``value`` (the value before it), if any."""
    gone = [h for before, h in zip(held, held[1:]) if before.value == value != h.value]
    return gone[-1] if gone else None


def _refuse(d: Design, reach: Reach, point: int, drain: Transfer, miss: _Miss,
            left: dict[str, Left] | None = None) -> None:
    """Refuse the set that replaced the value ``miss`` waits for, or, when the runtime sets it
    only later, the runtime's wait at ``point`` (``left`` as :func:`_check_order` takes it)."""
    w, core = miss.wait, miss.core
    held = _history(d, w.barrier, point, left)
    wait = d.runtime[point]
    assert isinstance(wait, Wait)
    where = _where(wait)
    took = _replaced(held, w.value)
    if took is None:  # never held before the wait: it is set later, or the barrier check said so
        later = next((op for op in d.runtime[point + 1:] if isinstance(op, SetBarrier)
                      and op.barrier == w.barrier and op.value == w.value), None)
        if later is None:
            return
        _raise(
            left, "hang: barrier", f"the runtime waits {where} for its drain of '{drain.fifo}' "
            f"(line {drain.loc.line}), which needs {core} past its wait for {w.value} "
            f"(line {w.loc.line}), but sets barrier '{w.barrier}' to {w.value} only after that "
            "wait: the runtime waits forever (a silent hang on the NPU)", loc=wait.loc,
            limit=_LATE, found=f"barrier '{w.barrier}' holds {held[-1].value} while the "
            f"runtime waits ({_given(held[-1])})",
            related=[(f"{core}'s wait for {w.value}", w.loc),
                     (f"the drain of '{drain.fifo}' waited for", drain.loc),
                     (f"rt.set_barrier to {w.value}, after the wait", later.loc)],
            fix=f"move rt.set_barrier('{w.barrier}', {w.value}) (line {later.loc.line}) before "
            f"the {_call(wait)} at line {wait.loc.line}: the drain it waits for comes only once "
            f"{core} is past its wait for {w.value}, so a set after it never comes")
    gave = held[held.index(took) - 1]  # what gave the value the set replaced
    assert took.set is not None
    at = took.point
    first = miss.done + 1  # the pass of the wait the runtime needs and the set may overtake
    reachable = reach.could_run(core, at).passed[w] >= first
    shown = reach.must_have_run(core, at).passed[w]
    if shown == 0:
        proof = f"no drain waited for before it shows {core} past its wait for {w.value}"
    else:
        proof = (f"the drains waited for before it show {core} past {shown} of the "
                 f"{miss.need} passes of its wait for {w.value} that the runtime's wait {where} "
                 "needs")
    related = [(f"{core}'s wait for {w.value}", w.loc),
               (f"barrier '{w.barrier}' starts at {w.value}", d.barrier(w.barrier).loc)
               if gave.set is None else
               (f"the invocation before leaves {w.value} here (the sequence's last set)",
                gave.set.loc) if gave.point < 0 else
               (f"the barrier holds {w.value} from here", gave.set.loc),
               (f"the drain of '{drain.fifo}' the runtime then waits for {where}", drain.loc)]
    fix = (_fix(d, reach, at, core, w, first) or _fix_later(d, reach, at, core, w, first)
           or f"before the set (line {took.set.loc.line}), wait (rt.wait() or rt.sync()) for "
           f"a drain of data {core} sends only once it is past its wait for {w.value} (line "
           f"{w.loc.line}) and before it waits for another value; if it sends none there, have "
           "it send what the runtime can drain there")
    if reachable:
        _raise(
            left, "barrier race", f"rt.set_barrier of '{w.barrier}' to {took.value} may "
            f"replace the {w.value} that {core} waits for at line {w.loc.line} before the core "
            "gets there: the core would then wait forever (a hang that depends on timing)",
            loc=took.set.loc, limit=_LIMIT,
            found=f"{proof}; the barrier holds {w.value} only {_since(gave)} to this set, and "
            "whether the core gets to the wait in that time is timing: how long it takes to "
            "get there (its kernel calls, the data it waits for) against the runtime's steps "
            "up to the set; when the core is slower, the set comes first",
            related=related, fix=fix)
    blocked = reach.could_run(core, at).blocked
    stop = ("" if blocked is None else
            f" its acquire of '{blocked.fifo}' (line {blocked.loc.line})"
            if isinstance(blocked, Acquire) else
            f" its wait for {blocked.value} (line {blocked.loc.line})")
    _raise(
        left, "hang: barrier", f"rt.set_barrier of '{w.barrier}' to {took.value} replaces the "
        f"{w.value} that {core} waits for at line {w.loc.line} before the core can get there: "
        "the core waits forever (a silent hang on the NPU)", loc=took.set.loc, limit=_LIMIT,
        found=f"{proof}, and the fills issued before the set let it get no further than"
        f"{stop or ' before that wait'}, so the set always comes first",
        related=related, fix=fix)


def _raise(left: dict[str, Left] | None, rule: str, message: str, *, loc: Loc, limit: str,
           found: str, related: list[tuple[str, Loc]], fix: str) -> NoReturn:
    """Raise a refusal of :func:`_refuse`; on
    :func:`~aiedsl.checks.carried.next_invocation`'s design (``left`` given) as ``barrier rerun``,
    saying where that invocation starts and how to start it as the first."""
    if left is None:
        raise DesignError(rule, message, loc=loc, limit=limit, found=found, related=related,
                          fix=fix)
    starts = "; ".join(where_it_starts(name, end) for name, end in left.items())
    back = " and ".join(f"rt.set_barrier('{name}', {end.initial})"
                        for name, end in left.items())
    kind = "a hang that depends on timing" if rule == "barrier race" else "a certain hang"
    raise DesignError(
        "barrier rerun", f"on every invocation after the first ({kind} there): {message}",
        loc=loc, limit=f"{limit}; {CARRIED}", found=f"{starts}; {found}", related=related,
        fix=f"{fix}; or {back} at the end of the runtime sequence, after an rt.sync() on its "
        "last drains, so that every invocation starts as the first does")


def _since(held: _Held) -> str:
    """Since when a barrier holds a value: the line of the set that gave it."""
    if held.set is None:
        return "from the start"
    if held.point < 0:
        return (f"from the start of the invocation (the last set of the one before, line "
                f"{held.set.loc.line}, leaves it)")
    return f"from line {held.set.loc.line}"


def _given(held: _Held) -> str:
    """What gave a barrier a value: its initial value, or the set of a line."""
    if held.set is None:
        return "its initial value"
    if held.point < 0:
        return f"left by the invocation before: its last set, line {held.set.loc.line}"
    return f"set at line {held.set.loc.line}"


def _where(wait: Wait) -> str:
    """Where the runtime waits, as its deadlock report says it."""
    if wait.by == "end":
        return "at the end of its sequence"
    return f"at the {_call(wait)} of line {wait.loc.line}"


def _call(wait: Wait) -> str:
    """What the design wrote for ``wait``."""
    return "rt.wait()" if wait.by == "wait" else "rt.sync()"


def _fix(d: Design, reach: Reach, point: int, core: str, w: BarrierWait,
         first: int) -> str | None:
    """A wait before the set at runtime op ``point`` that shows ``core`` past pass ``first`` of
    wait ``w``: on a drain the runtime already issues there, or on one split off a drain; None
    when no drain of the fills before the set can show it."""
    set_ = d.runtime[point]
    assert isinstance(set_, SetBarrier)
    proven = reach.proven(point)
    histories = _histories(d)
    values = {b.name: _before(histories[b.name], point)[-1].value for b in d.barriers}
    cores = sorted({c for b in d.barriers for c in b.cores})
    before = {c: proven.progress(c) for c in cores}

    def shows(name: str, extra: int) -> tuple[bool, bool]:
        """Whether ``extra`` more elements of drained fifo ``name`` show ``core`` past the
        wait, and whether no core gets past a wait for a value not held at the set."""
        more = Proven(reach, proven.drained + Counter({name: extra}))
        ok = all(values[x.barrier] == x.value for c in cores
                 for x in _crossed(before[c], more.progress(c)))
        return more.progress(core).passed[w] >= first, ok

    drains = [t for t in d.runtime if isinstance(t, Transfer) and t.op == "drain"]
    for name in dict.fromkeys(t.fifo for t in drains):
        total = sum(reach.elements(t) for t in drains if t.fifo == name)
        have = arriving(reach, name, point)
        most = total if have is None else min(total, have)
        room = most - proven.drained[name]
        if room <= 0 or not shows(name, room)[0]:
            continue
        lo, hi = 1, room  # more elements show a core further: the fewest that show the wait
        while lo < hi:
            mid = (lo + hi) // 2
            if shows(name, mid)[0]:
                hi = mid
            else:
                lo = mid + 1
        if not shows(name, lo)[1]:
            continue
        top = lo  # and the most that take no core past a wait for a value not held
        hi = room
        while top < hi:
            mid = (top + hi + 1) // 2
            if shows(name, mid)[1]:
                top = mid
            else:
                hi = mid - 1
        return _drain_fix(d, reach, point, name, proven.drained[name] + lo,
                          proven.drained[name] + top, core, w)
    return None


def _fix_later(d: Design, reach: Reach, point: int, core: str, w: BarrierWait,
               first: int) -> str | None:
    """For a set at runtime op ``point`` issued before the fills of the data that would show
    ``core`` past pass ``first`` of wait ``w``: move it after the fewest of them that give
    :func:`_fix` a drain to wait for, and wait there; None when no later fill does."""
    feeds = reach.upstream(core)
    later = [i for i in range(point + 1, len(d.runtime))
             if isinstance(t := d.runtime[i], Transfer) and t.op == "fill" and t.fifo in feeds]
    for j in later:  # the set moved right after fill j (it is then op j)
        ops = d.runtime
        moved = d.model_copy(update={"runtime": (*ops[:point], *ops[point + 1:j + 1],
                                                 ops[point], *ops[j + 1:])})
        fix = _fix(moved, Reach(moved), j, core, w, first)
        if fix is None:
            continue
        fills = [d.runtime[i] for i in later if i <= j]
        lines = ", ".join(str(t.loc.line) for t in fills)
        names = ", ".join(dict.fromkeys(f"'{t.fifo}'" for t in fills if isinstance(t, Transfer)))
        return (f"move the set after the fill{'s' * (len(fills) > 1)} of {names} (line"
                f"{'s' * (len(fills) > 1)} {lines}): the data that can show {core} past its "
                f"wait comes from {'them' if len(fills) > 1 else 'it'}; there, {fix}")
    return None


def _drain_fix(d: Design, reach: Reach, point: int, name: str, least: int, most: int,
               core: str, w: BarrierWait) -> str:
    """The fix for a set at runtime op ``point`` that needs the runtime to have received
    ``least`` to ``most`` elements of drained fifo ``name`` before it."""
    set_ = d.runtime[point]
    assert isinstance(set_, SetBarrier)
    why = f"element {least} of '{name}' comes only once {core} is past its wait for {w.value}"
    if most > least:  # a drain may end further on, up to where a core needs a value not set
        why += (f" (a drain ending at any of its elements {least} to {most} shows it; past "
                f"{most}, a core needs a value the barriers do not hold yet)")
    ends: list[tuple[int, Transfer]] = []  # the drains of the fifo issued before the set
    waited = 0
    total = 0
    for op in d.runtime[:point]:
        if isinstance(op, Transfer) and op.op == "drain" and op.fifo == name:
            total += reach.elements(op)
            ends.append((total, op))
        elif isinstance(op, Wait) and op.fifo == name and len(ends) > waited:
            waited += 1  # a wait takes the oldest drain of its fifo not yet waited for
    pending = ends[waited:]
    for n, (end, t) in enumerate(pending, 1):
        if least <= end <= most:
            times = "" if n == 1 else f" {n} times (a wait takes the oldest drain in flight)"
            return (f"rt.wait() on '{name}'{times} before the set (line {set_.loc.line}): the "
                    f"drain at line {t.loc.line} ends at element {end} of '{name}'; {why}")
    later = sum(1 for end, _ in pending if end < least) + 1
    times = "" if later == 1 else f" {later} times (a wait takes the oldest drain in flight)"
    numel = reach.fifos[name].elem.numel
    first = "its first element" if least == 1 else f"its first {least} elements"
    return (f"drain '{name}' so that one drain ends at its element {least} ({first}, "
            f"{least * numel} values), rt.wait() on '{name}'{times} before the set (line "
            f"{set_.loc.line}), and drain the rest after it: {why}")
