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
set can make. The refusals and their fixes are worded in :mod:`aiedsl.checks.barrier_messages`,
over the values each barrier holds in turn (:mod:`aiedsl.checks.barrier_history`).

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

from aiedsl.checks.barrier_history import _before, _crossed, _Held, _histories, _replaced
from aiedsl.checks.barrier_messages import _Miss, _refuse
from aiedsl.checks.carried import Left
from aiedsl.checks.runtime_order import waited_tokens
from aiedsl.ir.core_ops import BarrierWait
from aiedsl.ir.design import Design
from aiedsl.ir.program import walk
from aiedsl.ir.progress import Progress
from aiedsl.ir.reach import Reach
from aiedsl.ir.runtime import SetBarrier, Transfer, Wait


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


def _order(d: Design, core: str) -> dict[BarrierWait, int]:
    """``core``'s barrier waits, in program order."""
    body = next(c for c in d.cores if c.name == core).body
    out: dict[BarrierWait, int] = {}
    for op, _ in walk(body):
        if isinstance(op, BarrierWait):
            out.setdefault(op, len(out))
    return out


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
