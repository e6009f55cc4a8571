"""A loaded design run again, as the NPU runs it (``aiedsl run --iters``,
``simulate(invocations=)``): later invocations on one timeline with the first, what each starts
from, and the time from one run's end to the next's when the host starts them back to back.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.lang.design import DesignHandle
from aiedsl.output_checks import compare_outputs
from aiedsl.sim.compare import OutputCheck, poisoned
from aiedsl.sim.explain import Deadlock
from aiedsl.sim.hang_run import stopped
from aiedsl.sim.machine import Machine, build_machine
from aiedsl.sim.state import Watch
from aiedsl.sim.summary import Timing
from aiedsl.sim.trace import write_trace
from aiedsl.targets import TargetModel

__all__ = ["BACK_TO_BACK_MOST", "Watch", "back_to_back", "host_arrays", "in_invocation",
           "later_invocations", "stopped_traced", "what_carries"]


def later_invocations(handle: DesignHandle, placed: Design, target: TargetModel,
                      ins: dict[str, np.ndarray], impls: Any, checks: list[OutputCheck],
                      expected: dict[str, Any], *, invocations: int, check: bool,
                      compute: bool, clock_hz: float | None, watch: Watch) -> None:
    """Invocations 2 to ``invocations`` of ``placed``, run after the first on one timeline
    (the first again, the same run up to its end, then the rest, the cores carrying on between
    them as on the NPU). A later one that hangs or faults raises its error, saying which
    invocation; with ``check``, an output a later one computes unlike the reference
    ``expected`` replaces its passing entry in ``checks``, with a note on what that invocation
    started from. Unless a local with an initial value makes the reference describe the first
    only (as on the NPU), every invocation is held to it."""
    drained = set(handle.outputs)
    hosts = [host_arrays(placed, ins, drained) for _ in range(invocations)]
    whole = build_machine(placed, target, hosts[0], impls, compute=compute,
                          clock_hz=clock_hz, later=hosts[1:])
    watch("run", whole)
    try:
        whole.engine.run()
        stopped_traced(whole, None)
    except DesignError as e:  # a deadlock, or a fault, of a later invocation
        raise in_invocation(e, whole) from None
    if not check or any(b.init is not None for b in placed.locals):
        return
    inputs = {o: ins[o] for o in handle.inputs}
    for n in range(2, invocations + 1):
        again = hosts[n - 1]
        got = compare_outputs(placed, {o: again[o] for o in handle.outputs}, expected, inputs,
                              nonfinite=handle.nonfinite, poison=True)
        for i, (first, this) in enumerate(zip(checks, got)):
            if first.passed and not this.passed:
                this.note = (f"invocation {n} (which starts from what invocation "
                             f"{n - 1} left: {what_carries(placed, whole, n)}) "
                             "computed this; invocation 1, from the load, matched")
                checks[i] = this


BACK_TO_BACK_MOST = 24
"""Invocations at most simulated to time back-to-back runs (see :func:`back_to_back`)."""


def back_to_back(placed: Design, target: TargetModel, ins: dict[str, np.ndarray],
                  drained: set[str], impls: Any, clock_hz: float | None, tm: Timing,
                  watch: Watch) -> Timing:
    """``tm`` of a run whose cores work past the host's wait, with the time from one
    invocation's end to the next's when the host starts each as the one before returns, in the
    steady state: invocations simulated on one timeline, kernels timed only (what they compute
    does not change when they end), the last two ends apart.

    The first gaps can be short of the steady state: the first invocation ends late behind its
    own transfers' issue while its core already works on (a call of 500 us past the wait gave
    493 us from the first end to the second), and a core whose input buffers let it lag behind
    the others falls behind for as many invocations as they hold (117.2 us apart twice, then
    259.3, then 500.0 from there on). Every invocation needs one pass of every core, so the
    steady gap is at least the busiest core's busy time per invocation: three invocations
    first, twice as many while the last gap is shorter than that, up to
    :data:`BACK_TO_BACK_MOST` (then that busy time, the gap's least possible value)."""
    n = 3
    while True:
        whole = build_machine(placed, target, host_arrays(placed, ins, drained), impls,
                              compute=False, clock_hz=clock_hz,
                              later=[host_arrays(placed, ins, drained) for _ in range(n - 1)])
        watch("run", whole)
        try:
            whole.engine.run()
            stopped_traced(whole, None)
        except DesignError:  # a later invocation hangs or faults: simulate(invocations=) says
            return replace(tm, back_to_back_stopped=True)
        period = round(whole.ends[-1] - whole.ends[-2], 6)
        busiest = max((p.busy for p in whole.engine.procs if p.kind == "core"),
                      default=0.0) / n
        if period + 0.5 >= busiest:
            return replace(tm, back_to_back_cycles=period)
        if n * 2 > BACK_TO_BACK_MOST:
            return replace(tm, back_to_back_cycles=round(busiest, 6))
        n *= 2


def host_arrays(placed: Design, ins: dict[str, np.ndarray], drained: set[str]
          ) -> dict[str, np.ndarray]:
    """The host arrays of one invocation: the inputs, and unwritten outputs."""
    host: dict[str, np.ndarray] = {}
    for t in placed.tensors:
        if t.name not in ins:
            host[t.name] = poisoned(placed, t.name)
        else:  # the simulator only reads tensors it does not drain: no copy needed (but for a
            # view numpy does not lay out in order: its DMA reads memory in logical order)
            arr = np.ascontiguousarray(ins[t.name]).reshape(t.type.shape)
            host[t.name] = arr.copy() if t.name in drained else arr
    return host


def stopped_traced(m: Machine, trace: str | None) -> None:
    """After machine ``m``'s run: raise what kept it from the end of its runtime sequence, a
    hang with its trace written up to it."""
    try:
        stopped(m)
    except Deadlock as stuck:
        if trace is not None:  # what ran until the hang: the first thing to look at
            write_trace(m, m.clock_hz, trace)
            stuck.fix = (f"{stuck.fix}; " if stuck.fix else "") + \
                f"{trace} holds the trace up to the hang"
            stuck.args = (stuck.render(),)
        raise


def what_carries(placed: Design, m: Machine, n: int) -> str:
    """What invocation ``n`` of machine ``m``'s run started from: what the one before left of
    ``placed``'s barriers, rtps and locals, and its cores carrying on."""
    at = m.barriers_at[n - 1] if n - 1 < len(m.barriers_at) else {}
    parts = [f"barrier '{b.name}' at {at[(b.name, b.cores[0])]}"
             for b in placed.barriers if b.cores and (b.name, b.cores[0]) in at]
    if placed.rtps:
        parts.append("the rtp slots as last written")
    if placed.locals:
        parts.append("the locals as its kernels left them")
    parts.append("each core where it was (its program starts again as soon as it ends"
                 + (", but for a core of forever=False, which has stopped)"
                    if not all(c.forever for c in placed.cores) else ")"))
    return ", ".join(parts)


def in_invocation(e: DesignError, m: Machine) -> DesignError:
    """``e``, raised in a later invocation of machine ``m``'s run, saying which."""
    n = m.runtime.info.get("invocation", 1) if m.runtime is not None else 1
    if n < 2:
        return e
    e.message = (f"on invocation {n} of the runtime sequence (invocation {n - 1} ran to its "
                 f"end; this one starts from what it left: {what_carries(m.design, m, n)}): "
                 f"{e.message}")
    e.args = (e.render(),)
    return e
