"""The cycle collector kept off the objects that were alive before a run or a check: see
:func:`older_objects_frozen` (the simulator and :func:`~aiedsl.checks.check_design` use it)."""

from __future__ import annotations

import gc
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
    gc.freeze()
    token = _ours.set(True)
    try:
        yield
    finally:
        _ours.reset(token)
        gc.unfreeze()


_ours: ContextVar[bool] = ContextVar("aiedsl_frozen_by_us", default=False)
"""Whether the objects are frozen by an :func:`older_objects_frozen` still running here."""
