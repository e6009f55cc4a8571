"""The cycle collector kept off the objects that were alive before a run or a check: see
:func:`older_objects_frozen` (the simulator and :func:`~aiedsl.checks.check_design` use it)."""

from __future__ import annotations

import gc
import sys
import weakref
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

_FROZEN_AT_START = gc.get_freeze_count()
"""Objects frozen before aiedsl loaded: CPython 3.12 freezes a few hundred of its own at
start-up (375 on 3.12.1), which are no caller's (a run gives them back with its own)."""


@contextmanager
def older_objects_frozen() -> Iterator[None]:
    """Every object alive before the run kept out of the cycle collector's sight while it runs
    (:func:`gc.freeze`), and given back after.

    A run allocates millions of short-lived objects (heap entries, queued chunks; a check, tens
    of thousands of IR nodes and route steps); their count triggers collections, and a full one
    walked every live object of the process (every loaded module's), some 20 ms each time for
    nothing (where it lands is chance: one more import moved one into a small design's check,
    3 ms -> 30 ms). Frozen, a collection looks only at what the run
    made, so cycles it makes (a user's reference may make some) are still collected. A caller
    that froze objects of its own keeps its state: nothing is frozen or given back then. (One
    that froze them before this module was imported cannot be told from the interpreter's own
    start-up freeze, :data:`_FROZEN_AT_START`; its objects are given back after a run.)
    """
    # Inside one of our own (a check inside a run) nothing is counted: the count walks every
    # frozen object, 5 ms at 1024^3's simulate for nothing.
    if _ours.get() or gc.get_freeze_count() > _FROZEN_AT_START:
        yield
        return
    _collect_if_grown()
    gc.freeze()
    token = _ours.set(True)
    try:
        yield
    finally:
        _ours.reset(token)
        gc.unfreeze()


GROWTH = 0.5
"""How much the process's memory blocks (:func:`sys.getallocatedblocks`) may grow, as a part
of what it held after the last collection a run started with (at least :data:`LEAST_GROWTH`),
before the next run starts with a full collection. A command's check then simulation grows by
about a fifth (gemm_bf16 at 1024^3: 249,000 blocks to 297,000), and a full collection there
takes 25-40 ms, which a command does not pay; a notebook's simulation of a 256x512x512 GEMM
left 32,000 a run."""
LEAST_GROWTH = 100_000


def remember(machine: object) -> None:
    """Note the machine a simulation made: alive when the next run starts (kept by its
    caller's result, or a garbage cycle nobody freed), that run starts with a full collection.
    Its arrays are most of what a run leaves (a passthrough of 4M elements, 30 MB), which
    memory blocks do not count: a process holding millions of objects of its own grew by them
    run after run, under :data:`GROWTH` (a reviewer)."""
    global _previous
    _previous = weakref.ref(machine)


def _collect_if_grown() -> None:
    """A full collection before freezing, when an earlier simulation's machine is alive
    (:func:`remember`) or the process has grown by :data:`GROWTH` since the last: a machine its
    caller dropped is a garbage cycle (its processes' generators hold it) that only a full
    collection frees, and frozen at the next run's start it was freed by none: a notebook's
    sweep grew by 16 MB a simulation, 3 GB in 200 (a tester), as the interpreter's own full
    collections, which come only while much is allocated, came while it was frozen. A
    command's single check and run collect nothing."""
    global _baseline, _previous
    now = sys.getallocatedblocks()
    alive = _previous is not None and _previous() is not None
    if _baseline is None or now < _baseline:
        _baseline = now
    if alive or now - _baseline > max(LEAST_GROWTH, GROWTH * _baseline):
        gc.collect()
        _baseline = sys.getallocatedblocks()
        _previous = None  # kept by its caller, it would make every later run collect again


# The cycle collector's own state is the process's (gc.freeze freezes every thread's objects):
# what these two remember is about that collector, not about any design or run.
_baseline: int | None = None
"""The process's allocated blocks after the last collection :func:`_collect_if_grown` ran (or
when it was first asked)."""
_previous: weakref.ref[object] | None = None
"""The machine of the last simulation, until a collection after it."""

_ours: ContextVar[bool] = ContextVar("aiedsl_frozen_by_us", default=False)
"""Whether the objects are frozen by an :func:`older_objects_frozen` still running here."""
