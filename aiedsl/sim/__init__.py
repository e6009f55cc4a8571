"""The simulator: runs a design's IR with no hardware, checks it against numpy, times it.

Example
-------
>>> from aiedsl.loader import load_design
>>> from aiedsl.sim import simulate
>>> result = simulate(load_design("designs/gemm_bf16.py"), seed=0)
>>> result.passed, round(result.timing.seconds * 1e6, 2)  # us, as the host would time it
(True, 379.35)
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from aiedsl.checks import check_design
from aiedsl.compare import outputs_summary, run_lines
from aiedsl.errors import DesignError
from aiedsl.frozen_gc import older_objects_frozen, remember
from aiedsl.output_checks import compare_outputs
from aiedsl.ir.design import Design
from aiedsl.ir.program import stopping_core
from aiedsl.validate import validate
from aiedsl.lang.design import DesignHandle
from aiedsl.sim.compare import OutputCheck, check_inputs, make_inputs
from aiedsl.sim.explain import Deadlock
from aiedsl.sim.hang_run import say_least_depth
from aiedsl.sim.invocations import (
    Watch, back_to_back, host_arrays, later_invocations, stopped_traced,
)
from aiedsl.sim.machine import Machine, SimFault, build_machine
from aiedsl.sim.native import native_kernels, note_native
from aiedsl.sim.options import (
    CHECK_FIX, check_clock, check_flag, check_handle, check_invocations, check_kernels,
    check_runs_once, check_seed,
)
from aiedsl.sim.stats import timing
from aiedsl.sim.summary import Timing, significant
from aiedsl.sim.trace import check_trace, write_trace
from aiedsl.source_loc import caller_loc
from aiedsl.targets import get_target
from aiedsl.text import whole_ints

__all__ = ["Deadlock", "SimFault", "SimResult", "Watch", "simulate"]


@dataclass
class SimResult:
    """A simulated run: outputs, their comparison with the reference, and its timing."""

    inputs: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]
    checks: list[OutputCheck]
    timing: Timing
    machine: Machine

    @property
    def passed(self) -> bool:
        """Outputs were compared with the reference and every one matches. False when nothing
        was compared (``check=False``, or ``compute=False``, whose outputs mean nothing, leave
        :attr:`checks` empty): a sweep keeping the runs that passed must not keep those."""
        return bool(self.checks) and all(c.passed for c in self.checks)

    def __getstate__(self) -> dict[str, Any]:
        # pickled (a result a pool's worker returns): the machine, whose processes are
        # generators, stays behind; its design goes along, for what a result says of itself
        return {**self.__dict__, "machine": MachineLeftBehind(self.machine.design)}

    def lines(self) -> list[str]:
        """What the command line prints of a run: one line per output (a FAIL's wrong elements
        and notes under it), then the timing, indented."""
        return run_lines(self.checks, self.timing)

    def __str__(self) -> str:
        """What ``print(result)`` shows: :meth:`lines`."""
        return "\n".join(self.lines())

    def __repr__(self) -> str:
        # the fields' own reprs run to hundreds of KB (the machine, every buffer): a notebook
        # showing a result drowned in them
        d = self.machine.design
        return (f"SimResult({d.name} on {d.device}: {outputs_summary(self.outputs, self.checks)}"
                f"; {significant(self.timing.seconds * 1e6)} us)")


@dataclass(frozen=True)
class MachineLeftBehind:
    """A pickled :class:`SimResult`'s ``machine``: the simulated machine stays in the process
    that ran it (its processes are generators, which do not pickle); what it ran goes along.
    Anything else asked of it says so."""

    design: Design

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(
            f"machine.{name}: a SimResult pickled (returned from a process pool, say) leaves "
            "its machine in the process that simulated it; the inputs, outputs, checks and "
            "timing came along")


def simulate(handle: DesignHandle, inputs: dict[str, np.ndarray] | None = None, *,
             seed: int = 0, clock_hz: float | None = None, trace: str | None = None,
             check: bool = True, compute: bool = True,
             placed: Design | None = None, kernels: str = "reference",
             watch: Watch | None = None, invocations: int = 1) -> SimResult:
    """Run ``handle``'s design on the simulator; raises :class:`Deadlock` when it hangs.

    ``inputs`` default to seeded random tensors; with ``check`` the outputs are compared with the
    design's numpy reference. ``trace`` writes a Chrome trace-event JSON file. With
    ``compute=False`` kernels only take their time (no data is computed): for timing studies of
    large problems; outputs are then meaningless and not checked. ``kernels="native"`` runs
    each kernel's C++, built for the host (:mod:`aiedsl.kernels.host`), instead of its numpy
    reference. ``watch`` hears each stage as it starts (a progress display).

    ``invocations`` runs the runtime sequence that many times, as the NPU runs a loaded design
    again (``aiedsl run --target npu`` runs a warm-up and ``--iters`` more), all on one
    timeline: each invocation starts the fixed invocation cost after the last instruction of
    the one before, on the inputs again, outputs unwritten, finding what that one left where
    only the load sets the state (barrier locks, rtp slots, core-local buffers) and each core
    where it is: a core's program starts again as soon as it ends, as on the NPU
    (:func:`~aiedsl.sim.core.run_core`). The result (outputs, timing, trace) is the first's; a
    later one that hangs raises its :class:`Deadlock`, and, unless a local with an initial value
    makes the reference describe the first only (as on the NPU), a later one's output that
    differs from the reference is that output's FAIL.
    """
    loc = caller_loc()
    with whole_ints():  # a message may quote a huge int given (invocations=10**5000)
        handle = check_handle(handle, "simulate", loc)
        seed, clock_hz = check_seed(seed, loc), check_clock(clock_hz, loc)
        kernels = check_kernels(kernels, loc)
        invocations = check_invocations(invocations, loc)
        # (the placed design given is the one run: a design.json read back may differ from handle's)
        check_runs_once(handle.ir if placed is None else placed, invocations,
                        f"{invocations} invocations were asked",
                        "simulate one invocation (invocations=1)")
        check = check_flag(check, "check", loc, CHECK_FIX)
        compute = check_flag(compute, "compute", loc, "give compute=True to compute the outputs, "
                             "False for the timing alone (the kernels take their time and compute "
                             "nothing)")
        if trace is not None:
            check_trace(trace, handle.name)  # before simulating: a refusal then costs nothing
        with older_objects_frozen():
            result = _simulate(handle, inputs, seed, clock_hz, trace, check, compute, placed,
                               kernels, watch or _unwatched, invocations)
        remember(result.machine)  # a dropped machine is a cycle: the next run collects it
        return result


def _unwatched(stage: str, m: Machine) -> None:
    """The :data:`Watch` of a run nobody watches."""


def _check_placed(handle: DesignHandle, placed: Design) -> None:
    """``placed``, given to :func:`simulate` as ``handle``'s design checked and placed, is a
    valid placed IR (:func:`~aiedsl.validate.validate`) of ``handle``'s tensors: the checks
    are not run again (the caller ran them, as a build does), and an IR read back or edited
    ran unchecked (a loop of count 0 simulated as passed) or ended in a KeyError."""
    validate(placed, "simulate(placed=...)", placed=True)
    if [(t.name, t.type) for t in placed.tensors] != [(t.name, t.type)
                                                      for t in handle.ir.tensors]:
        def listed(d: Design) -> str:
            return ", ".join(f"{t.name}: {t.type}" for t in d.tensors)
        raise DesignError(
            "design IR", f"simulate(placed=...): the placed design '{placed.name}' is not of "
            f"'{handle.name}': its host tensors differ", loc=caller_loc(),
            limit=f"{handle.name}'s: {listed(handle.ir)}", found=listed(placed),
            fix="give the placed design of this handle's design (check_design(handle.ir)[0], "
            "or its build's design.json), or leave placed= out")
    # the C++ a native run compiles and the reference a run calls are the handle's kernel's:
    # one the placed IR declares otherwise (an edited entry, defines, source) is not this
    # handle's, and would be compiled as the IR says
    from aiedsl.kernels.library_refs import LIBRARY_FORM, is_aiedsl, library_reference

    mine = {k.symbol: k for k in handle.ir.kernels}
    for i, k in enumerate(placed.kernels):
        own = mine.get(k.symbol)
        if own is None and is_aiedsl(k.reference) and library_reference(k.reference) is None:
            # the one reference the simulator would import from the IR: aiedsl's library's
            # alone (kernels/library_refs.py), before anything is imported
            raise DesignError(
                "design IR", f"simulate(placed=...): kernels[{i}].reference names no reference "
                "of aiedsl's library", loc=k.loc, limit=LIBRARY_FORM, found=k.reference,
                fix="simulate the placed design of this handle's design (its kernels hold "
                "their references), or name the library reference the kernel was declared with")
        if own is not None and _kernel_code(k) != _kernel_code(own):
            raise DesignError(
                "design IR", f"simulate(placed=...): kernels[{i}] '{k.symbol}' is not the "
                f"kernel '{handle.name}' declares by that symbol: its C++ or its reference "
                "differs", loc=caller_loc(), limit="the handle's kernel, as declared",
                found=f"kernels[{i}]: source {k.source}, entry {k.entry}",
                fix="give the placed design of this handle's design (check_design(handle.ir)"
                "[0], or its build's design.json), or leave placed= out")
    # after each kernel's own check (a reference no library names is refused first)
    ours, theirs = [k.symbol for k in handle.ir.kernels], [k.symbol for k in placed.kernels]
    if sorted(ours) != sorted(theirs):
        # another design's placement (an older build's design.json beside an upgraded design
        # file) ran its own kernels against this design's reference: a FAIL that blamed it
        only = sorted(set(theirs) - set(ours)) or sorted(set(ours) - set(theirs))
        raise DesignError(
            "design IR", f"simulate(placed=...): the placed design '{placed.name}' is not of "
            f"'{handle.name}': its kernels differ ({', '.join(only)} "
            f"{'only in the placed design' if set(theirs) - set(ours) else 'only in the handle'})",
            loc=caller_loc(), limit=f"{handle.name}'s: {', '.join(ours) or 'none'}",
            found=", ".join(theirs) or "none",
            fix="give the placed design of this handle's design (check_design(handle.ir)[0], "
            "or its build's design.json), or leave placed= out")


def _kernel_code(k: Any) -> tuple[object, ...]:
    """What makes a kernel's code: its C++ (source, entry, defines, signature, parameters)
    and its reference."""
    return (k.source, k.source_kind, k.shipped, k.entry, k.defines, k.args, k.params,
            k.reference, k.cascade_in, k.cascade_out, k.cascade_step, k.arch)


def _simulate(handle: DesignHandle, inputs: dict[str, np.ndarray] | None, seed: int,
              clock_hz: float | None, trace: str | None, check: bool, compute: bool,
              placed: Design | None, kernels: str, watch: Watch,
              invocations: int = 1) -> SimResult:
    if placed is None:
        placed, _ = check_design(handle.ir)
    else:  # checked and placed by the caller (api's run: a build's); only validated again
        _check_placed(handle, placed)
    if inputs is not None:
        check_inputs(placed, inputs, caller_loc())
    ins = inputs if inputs is not None else make_inputs(placed, seed)
    drained = set(handle.outputs)
    target = get_target(placed.device)
    check = check and compute
    host = host_arrays(placed, ins, drained)
    calls = None
    if kernels == "native" and check:  # loaded for native runs only, as their kernels are
        from aiedsl.sim.call_check import CallChecks

        calls = CallChecks()
    with (nullcontext(handle.kernels) if kernels == "reference" else
          native_kernels(placed, target, handle.kernels, calls)) as impls:
        m = build_machine(placed, target, host, impls, trace=trace is not None,
                          compute=compute, clock_hz=clock_hz)
        watch("run", m)
        m.engine.run()
        try:
            stopped_traced(m, trace)
        except Deadlock as e:
            if e.full_fifo is not None:
                # the least depth that ends it, searched by runs at other depths to their end
                say_least_depth(e, e.full_fifo, handle.ir, impls, target, clock_hz=clock_hz)
            raise
        tm = timing(m, watch)
        if trace is not None:
            write_trace(m, tm.clock_hz, trace)
        outputs = {n: host[n] for n in handle.outputs}
        checks = []
        expected: dict[str, Any] = {}
        if check:
            watch("check", m)
            expected = handle.expected({n: ins[n] for n in handle.inputs})
            checks = compare_outputs(placed, outputs, expected,
                                     {n: ins[n] for n in handle.inputs},
                                     nonfinite=handle.nonfinite, poison=True)
            if kernels == "native":
                note_native(checks, impls, placed)
            if calls is not None:
                checks += calls.fails()
        if invocations > 1:
            later_invocations(handle, placed, target, ins, impls, checks, expected,
                              invocations=invocations, check=check, compute=compute,
                              clock_hz=clock_hz, watch=watch)
        if tm.after_cycles and stopping_core(placed) is not None:
            tm = replace(tm, runs_once=True)  # no back-to-back runs to time
        elif tm.after_cycles:  # after the invocations asked for: a later one's error goes first
            tm = back_to_back(placed, target, ins, drained, impls, clock_hz, tm, watch)
    return SimResult(ins, outputs, checks, tm, m)


