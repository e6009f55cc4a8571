"""The simulator: runs a design's IR with no hardware, checks it against numpy, times it.

Example
-------
>>> from aiedsl.loader import load_design
>>> from aiedsl.sim import simulate
>>> result = simulate(load_design("designs/gemm_bf16.py"), seed=0)
>>> result.passed, round(result.timing.seconds * 1e6, 2)  # us, as the host would time it
(True, 386.03)
"""

from __future__ import annotations

from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np

from aiedsl.checks import check_design
from aiedsl.compare import outputs_summary
from aiedsl.errors import DesignError, display_path
from aiedsl.frozen_gc import older_objects_frozen
from aiedsl.output_checks import compare_outputs
from aiedsl.ir.core_ops import Call
from aiedsl.ir.design import Design
from aiedsl.ir.kernel import Kernel
from aiedsl.ir.program import stopping_core
from aiedsl.validate_ir import validate
from aiedsl.lang.design import DesignHandle
from aiedsl.sim.compare import OutputCheck, check_inputs, make_inputs, poisoned
from aiedsl.sim.explain import Deadlock
from aiedsl.sim.hang_run import say_least_depth, stopped
from aiedsl.sim.machine import Machine, SimFault, build_machine
from aiedsl.sim.options import (
    CHECK_FIX, check_clock, check_flag, check_handle, check_invocations, check_kernels,
    check_runs_once, check_seed,
)
from aiedsl.sim.stats import timing
from aiedsl.sim.summary import Timing, significant
from aiedsl.sim.trace import check_trace, write_trace
from aiedsl.source_loc import caller_loc
from aiedsl.targets import TargetModel, get_target
from aiedsl.text import whole_ints

if TYPE_CHECKING:  # loaded by native simulations only
    from aiedsl.kernels.core_copies import CoreCopies
    from aiedsl.kernels.worker import KernelWorker

__all__ = ["Deadlock", "SimFault", "SimResult", "Watch", "simulate"]

Watch = Callable[[str, Machine], None]
"""Told each stage of a run as it starts, with the machine that runs it: ``"run"`` (the
engine starts; ``machine.kernel_calls`` counts the calls made so far) and ``"check"`` (the
outputs are compared with the design's reference). It must not change the machine: a progress
display reads it (see :mod:`aiedsl.cli.progress`)."""


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
        """Every output compared matches the reference. With nothing compared (``check=False``
        leaves :attr:`checks` empty) nothing failed, so it is True: look at ``checks``."""
        return all(c.passed for c in self.checks)

    def __repr__(self) -> str:
        # the fields' own reprs run to hundreds of KB (the machine, every buffer): a notebook
        # showing a result drowned in them
        d = self.machine.design
        return (f"SimResult({d.name} on {d.device}: {outputs_summary(self.outputs, self.checks)}"
                f"; {significant(self.timing.seconds * 1e6)} us)")


class _Native:
    """A host-built kernel where the machine expects a declared kernel: called in-process, or
    through ``worker`` (kernel number ``index`` there), whose faults it reports as the design
    errors of the call that made them."""

    def __init__(self, k: Kernel, fn: Callable[..., None], worker: KernelWorker | None,
                 index: int, design_file: str, modes: dict[str, list[int]],
                 copies: CoreCopies | None = None) -> None:
        self.kernel = k
        self.copies = copies
        """Each core's copy of the kernels' libraries, when they run in this process (no
        worker)."""
        self.modes = modes
        """Each core's rounding and saturation modes, shared by every kernel of the run (a core
        keeps what its last call left, whichever kernel or library it was)."""
        self.worker = worker
        self.index = index
        self.design_file = design_file
        self._calls: dict[str, list[int]] = {}
        """Calls made so far, by core (a list: one counter shared by the core's call sites)."""
        self._fn = fn
        self.run_reference_fn = fn
        """The kernel's host-built callable (:func:`~aiedsl.kernels.host.native`'s): what its
        C++ is, whichever process runs it."""
        self.run_reference = fn
        if worker is not None:
            self.run_reference = self.at_call("a core", None)

    def bound_reference(self) -> Any:
        """The callable the simulator calls per kernel call."""
        return self.run_reference

    def at_call(self, core: str, call: Call | None) -> Callable[..., None]:
        """The callable for ``core``'s call ``call``: a fault names the core, the call's line
        and how many calls of this kernel the core had made."""
        from aiedsl.kernels.faults import KernelFault
        from aiedsl.kernels.host import RESET_MODES
        from aiedsl.kernels.worker import NativeFault, fault_error

        worker = self.worker
        count = self._calls.setdefault(core, [0])
        index = self.index
        copies = self.copies
        here = self._fn
        modes = self.modes.setdefault(core, list(RESET_MODES))

        def run(*args: Any) -> None:
            count[0] += 1
            try:
                if worker is not None:
                    worker.call(index, args, modes, core)
                elif copies is not None:  # the core's own copy, loaded at its first call
                    copies(core, index)(*args, modes=modes)
                else:
                    here(*args, modes=modes)
            except (NativeFault, KernelFault) as fault:
                raise fault_error(fault, self.kernel, core, count[0], call,
                                  self.design_file) from None

        return run

    def trial_reference(self, core: str, call: Call | None) -> Callable[..., None]:
        """The callable for a trial run of ``core``'s call ``call`` (a call that gets and
        puts, making its early words: :class:`~aiedsl.sim.cascade_stream.Early`): on the
        arrays given (copies), in a library copy of its own (the core's ``static`` variables
        are not touched) and from a copy of the core's rounding and saturation modes (its
        registers keep what its calls left), not counted among the core's calls. A fault is
        reported as the call's, which would make it."""
        from aiedsl.kernels.faults import KernelFault
        from aiedsl.kernels.host import RESET_MODES
        from aiedsl.kernels.worker import NativeFault, fault_error

        worker, index, copies, here = self.worker, self.index, self.copies, self._fn
        count = self._calls.setdefault(core, [0])
        modes = self.modes.setdefault(core, list(RESET_MODES))
        trial_core = f"{core} (trial runs)"

        def run(*args: Any) -> None:
            own = list(modes)
            try:
                if worker is not None:
                    worker.call(index, args, own, trial_core)
                elif copies is not None:
                    copies(trial_core, index)(*args, modes=own)
                else:
                    here(*args, modes=own)
            except (NativeFault, KernelFault) as fault:
                raise fault_error(fault, self.kernel, core, count[0] + 1, call,
                                  self.design_file) from None

        return run


@contextmanager
def native_kernels(d: Design, target: TargetModel) -> Iterator[dict[str, Any]]:
    """Every kernel of ``d`` built from its C++ for the host, as ``target``'s cores run it, for
    the time of the ``with`` block, each core calling its own copy of a kernel's library (its
    ``static`` variables its own: :mod:`aiedsl.kernels.core_copies`). The calls run in one
    forked child process (:mod:`aiedsl.kernels.worker`): a kernel that crashes or writes
    outside its buffers is a DesignError naming it and its call, not the end of the
    simulator. Where there is no ``os.fork`` (Windows) they run in this process, as before:
    such a kernel then crashes it."""
    from aiedsl.kernels.core_copies import CoreCopies
    from aiedsl.kernels.text import kernel_text
    from aiedsl.kernels.host import native
    from aiedsl.kernels.worker import isolated

    arch = target.aie_arch
    fns = [(k, native(k, kernel_text(d, k), arch)) for k in d.kernels]
    modes: dict[str, list[int]] = {}
    with isolated(fns) as worker:
        copies = CoreCopies(fns) if worker is None else None  # the child loads its own
        try:
            yield {k.symbol: _Native(k, fn, worker, i, display_path(d.loc.path), modes, copies)
                   for i, (k, fn) in enumerate(fns)}
        finally:
            if copies is not None:
                copies.close()




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
            return _simulate(handle, inputs, seed, clock_hz, trace, check, compute, placed, kernels,
                             watch or _unwatched, invocations)


def _unwatched(stage: str, m: Machine) -> None:
    """The :data:`Watch` of a run nobody watches."""


def _check_placed(handle: DesignHandle, placed: Design) -> None:
    """``placed``, given to :func:`simulate` as ``handle``'s design checked and placed, is a
    valid placed IR (:func:`~aiedsl.validate_ir.validate`) of ``handle``'s tensors: the checks
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
    host = _host(placed, ins, drained)
    with (nullcontext(handle.kernels) if kernels == "reference" else
          native_kernels(placed, target)) as impls:
        m = build_machine(placed, target, host, impls, trace=trace is not None,
                          compute=compute, clock_hz=clock_hz)
        watch("run", m)
        m.engine.run()
        try:
            _stopped(m, trace)
        except Deadlock as e:
            if e.full_fifo is not None:
                # the least depth that ends it, searched by runs at other depths to their end
                say_least_depth(e, e.full_fifo, handle.ir, impls, target, clock_hz=clock_hz)
            raise
        tm = timing(m)
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
                _note_native(checks, impls)
        # the reference describes the first invocation only when a local starts it from its
        # initial value (the NPU checks that one then: aiedsl.api); else every one alike
        alike = not any(b.init is not None for b in placed.locals)
        if invocations > 1:
            # on one timeline: the first again (the same run as m's up to its end), then the
            # rest, the cores carrying on between them as on the NPU
            hosts = [_host(placed, ins, drained) for _ in range(invocations)]
            whole = build_machine(placed, target, hosts[0], impls, compute=compute,
                                  clock_hz=clock_hz, later=hosts[1:])
            watch("run", whole)
            try:
                whole.engine.run()
                _stopped(whole, None)
            except DesignError as e:  # a deadlock, or a fault, of a later invocation
                raise _in_invocation(e, whole) from None
            for n in range(2, invocations + 1):
                if not (check and alike):
                    break
                again = hosts[n - 1]
                got = compare_outputs(placed, {o: again[o] for o in handle.outputs}, expected,
                                      {o: ins[o] for o in handle.inputs},
                                      nonfinite=handle.nonfinite, poison=True)
                for i, (first, this) in enumerate(zip(checks, got)):
                    if first.passed and not this.passed:
                        this.note = (f"invocation {n} (which starts from what invocation "
                                     f"{n - 1} left: {_what_carries(placed, whole, n)}) "
                                     "computed this; invocation 1, from the load, matched")
                        checks[i] = this
        if tm.after_cycles and stopping_core(placed) is not None:
            tm = replace(tm, runs_once=True)  # no back-to-back runs to time
        elif tm.after_cycles:  # after the invocations asked for: a later one's error goes first
            tm = _back_to_back(placed, target, ins, drained, impls, clock_hz, tm, watch)
    return SimResult(ins, outputs, checks, tm, m)


def _note_native(checks: list[Any], impls: dict[str, Any]) -> None:
    """Under each FAIL of a native run, a note for each kernel whose C++ runs a bf16 mmul on
    npu2's bfp16 unit (:mod:`aiedsl.kernels.host_notes`): the design's reference, or the
    kernel's, may be one of exact products, which the NPU's results differ from as the host
    build's do. aiedsl's own kernels' references model it, and are not noted."""
    from aiedsl.kernels.host_notes import bfp16_note

    notes = [f"{n.kernel.loc}: {bfp16_note(n.kernel.symbol, shapes)}"
             for n in impls.values()
             if (shapes := getattr(n.run_reference_fn, "bfp16", ())) and not n.kernel.shipped]
    for c in checks:
        if not c.passed:
            c.hints.extend(notes)


BACK_TO_BACK_MOST = 24
"""Invocations at most simulated to time back-to-back runs (see :func:`_back_to_back`)."""


def _back_to_back(placed: Design, target: TargetModel, ins: dict[str, np.ndarray],
                  drained: set[str], impls: Any, clock_hz: float | None, tm: Timing,
                  watch: Watch) -> Timing:
    """``tm`` of a run whose cores work past the host's wait, with the time from one
    invocation's end to the next's when the host starts each as the one before returns, in the
    steady state: invocations simulated on one timeline, kernels timed only (what they compute
    does not change when they end), the last two ends apart.

    The first gaps can be short of the steady state: the first invocation ends late behind its
    own transfers' issue while its core already works on (a call of 500 us past the wait gave
    493 us from the first end to the second), and a core whose input buffers let it lag behind
    the others falls behind for as many invocations as they hold (116.8 us apart twice, then
    259.7, then 500.0 from there on). Every invocation needs one pass of every core, so the
    steady gap is at least the busiest core's busy time per invocation: three invocations
    first, twice as many while the last gap is shorter than that, up to
    :data:`BACK_TO_BACK_MOST` (then that busy time, the gap's least possible value)."""
    n = 3
    while True:
        whole = build_machine(placed, target, _host(placed, ins, drained), impls,
                              compute=False, clock_hz=clock_hz,
                              later=[_host(placed, ins, drained) for _ in range(n - 1)])
        watch("run", whole)
        try:
            whole.engine.run()
            _stopped(whole, None)
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


def _host(placed: Design, ins: dict[str, np.ndarray], drained: set[str]
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


def _stopped(m: Machine, trace: str | None) -> None:
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


def _what_carries(placed: Design, m: Machine, n: int) -> str:
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


def _in_invocation(e: DesignError, m: Machine) -> DesignError:
    """``e``, raised in a later invocation of machine ``m``'s run, saying which."""
    n = m.runtime.info.get("invocation", 1) if m.runtime is not None else 1
    if n < 2:
        return e
    e.message = (f"on invocation {n} of the runtime sequence (invocation {n - 1} ran to its "
                 f"end; this one starts from what it left: {_what_carries(m.design, m, n)}): "
                 f"{e.message}")
    e.args = (e.render(),)
    return e
