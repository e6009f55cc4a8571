"""What :mod:`aiedsl.checks.barriers` says when it refuses a set or a wait of a runtime barrier:
the refusal (``barrier race``, ``hang: barrier``, and ``barrier rerun`` on an invocation after the
first) and its fix, a drain to wait for before the set that shows the core past its wait (the
fewest of its elements that do, and no more than keep every core off a wait for a value not
held), or the set moved after the fills that feed the core.
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple, NoReturn

from aiedsl.checks.barrier_history import _before, _crossed, _Held, _histories, _history, _replaced
from aiedsl.checks.carried import Left, back_fix, carried_limit, where_it_starts
from aiedsl.checks.runtime_order import arriving
from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import Acquire, BarrierWait
from aiedsl.ir.design import Design
from aiedsl.ir.loc import Loc
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


class _Miss(NamedTuple):
    """A wait a core must pass during a runtime wait while its barrier holds another value."""

    core: str
    wait: BarrierWait
    done: int
    """Times the core is shown past ``wait`` before that runtime wait."""
    need: int
    """Times that runtime wait's drains need it past ``wait``."""


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
    timed = rule == "barrier race" or any(end.timing for end in left.values())
    kind = "a hang that depends on timing" if timed else "a certain hang"
    raise DesignError(
        "barrier rerun", f"on every invocation after the first ({kind} there): {message}",
        loc=loc, limit=f"{limit}; {carried_limit(left)}", found=f"{starts}; {found}",
        related=related, fix=f"{fix}; or {back_fix(left)}, so that every invocation starts as "
        "the first does")


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
