"""Kernels built from their C++ for the host, called where the simulator calls a kernel
(``aiedsl sim --kernels native``): each core with its own copy of a kernel's library, in a
forked worker process where there is one, a fault named as the call that made it.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator

from aiedsl.errors import DesignError, display_path
from aiedsl.ir.core_ops import Call
from aiedsl.ir.design import Design
from aiedsl.ir.kernel import Kernel
from aiedsl.targets import TargetModel

if TYPE_CHECKING:  # loaded by native simulations only
    from aiedsl.kernels.core_copies import CoreCopies
    from aiedsl.kernels.worker import KernelWorker
    from aiedsl.sim.call_check import CallChecks

__all__ = ["NativeKernel", "in_place_calls", "native_kernels", "note_native"]


class NativeKernel:
    """A host-built kernel where the machine expects a declared kernel: called in-process, or
    through ``worker`` (kernel number ``index`` there), whose faults it reports as the design
    errors of the call that made them."""

    def __init__(self, k: Kernel, fn: Callable[..., None], worker: KernelWorker | None,
                 index: int, design_file: str, modes: dict[str, list[int]],
                 copies: CoreCopies | None = None,
                 checked: tuple[CallChecks, Callable[..., None]] | None = None) -> None:
        self.kernel = k
        self.checked = checked
        """The run's :class:`~aiedsl.sim.call_check.CallChecks` and the kernel's numpy
        reference, each call's results are compared with; None: not compared."""
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

        if self.checked is not None and call is not None:
            checks, reference = self.checked
            return checks.checked(self.kernel, run, reference, core, call, count, modes)
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
def native_kernels(d: Design, target: TargetModel, references: dict[str, Any] | None = None,
                   checks: CallChecks | None = None) -> Iterator[dict[str, Any]]:
    """Every kernel of ``d`` built from its C++ for the host, as ``target``'s cores run it, for
    the time of the ``with`` block, each core calling its own copy of a kernel's library (its
    ``static`` variables its own: :mod:`aiedsl.kernels.core_copies`). The calls run in one
    forked child process (:mod:`aiedsl.kernels.worker`): a kernel that crashes or writes
    outside its buffers is a DesignError naming it and its call, not the end of the
    simulator. Where there is no ``os.fork`` (Windows) they run in this process, as before:
    such a kernel then crashes it. With ``checks``, each call's results are compared with its
    reference's (the kernel objects of ``references``, a handle's), as
    :mod:`aiedsl.sim.call_check` says which."""
    from aiedsl.kernels.core_copies import CoreCopies
    from aiedsl.kernels.text import kernel_text
    from aiedsl.kernels.host import native
    from aiedsl.kernels.host_build import prebuild
    from aiedsl.kernels.worker import isolated
    from aiedsl.sim.call_refs import reference

    arch = target.aie_arch
    try:  # several at a time first; a kernel whose C++ cannot be made is said below, in turn
        prebuild([(k, kernel_text(d, k), arch) for k in d.kernels])
    except DesignError:
        pass
    fns = [(k, native(k, kernel_text(d, k), arch)) for k in d.kernels]
    modes: dict[str, list[int]] = {}

    def checked(k: Kernel, fn: Any) -> tuple[CallChecks, Callable[..., None]] | None:
        if checks is None or references is None or k.cascade_in is not None or \
                k.cascade_out is not None or (bool(getattr(fn, "bfp16", None)) and not k.shipped):
            return None
        return checks, reference(k, references)

    with isolated(fns) as worker:
        copies = CoreCopies(fns) if worker is None else None  # the child loads its own
        try:
            yield {k.symbol: NativeKernel(k, fn, worker, i, display_path(d.loc.path), modes, copies,
                                          checked(k, fn))
                   for i, (k, fn) in enumerate(fns)}
        finally:
            if copies is not None:
                copies.close()


def note_native(checks: list[Any], impls: dict[str, Any], d: Design) -> None:
    """Under each FAIL of a native run, a note for each kernel whose C++ runs a bf16 mmul on
    npu2's bfp16 unit (:mod:`aiedsl.kernels.host_notes`): the design's reference, or the
    kernel's, may be one of exact products, which the NPU's results differ from as the host
    build's do. aiedsl's own kernels' references model it, and are not noted. And one for each
    call of ``d`` passing one buffer as two arguments, one of them written (in place)."""
    from aiedsl.kernels.host_notes import bfp16_note

    notes = [f"{n.kernel.loc}: {bfp16_note(n.kernel.symbol, shapes)}"
             for n in impls.values()
             if (shapes := getattr(n.run_reference_fn, "bfp16", ())) and not n.kernel.shipped]
    notes += in_place_calls(d)
    # a native run guards writes, not reads: an element read from past a buffer looks as
    # unwritten as one nothing wrote (a tester's `i <= N` loop was sent looking for a zero
    # call), which kernel test tells apart
    unguarded = ("the native run does not check the C++'s reads: elements read from past a "
                 "kernel's buffer look like unwritten memory too; aiedsl kernel test on the "
                 "design checks every kernel's reads")
    for c in checks:
        if not c.passed:
            c.hints.extend(notes + ([unguarded] if c.poisoned else []))


def in_place_calls(d: Design) -> list[str]:
    """A note for each kernel call of ``d`` that passes one buffer as two of its arguments,
    one written: the C++ may read what it already wrote there (a loop shifting lanes), which a
    numpy reference that reads its inputs first does not, and Peano may take ``__restrict``
    pointers not to overlap. The native simulation is where that shows (a tester's
    ``shift(best, best)`` FAILed with nothing pointing at the call)."""
    from aiedsl.ir.core_ops import BufferArg, LocalArg
    from aiedsl.ir.program import calls

    out: list[str] = []  # one per call site: a herd's cores make the same call
    for core in d.cores:
        for call in calls(core):
            k = d.kernel(call.kernel)
            seen: dict[tuple[str, ...], list[int]] = {}
            for i, a in enumerate(call.args):
                key = (("fifo", a.value, str(a.index)) if isinstance(a, BufferArg) else
                       ("local", a.local) if isinstance(a, LocalArg) else None)
                if key is not None:
                    seen.setdefault(key, []).append(i)
            for at in seen.values():
                if len(at) > 1 and any(k.args[i].access != "in" for i in at):
                    names = " and ".join(f"'{k.args[i].name}'" for i in at)
                    note = (f"{call.loc}: {core.name}'s call of '{k.symbol}' passes one "
                            f"buffer as {names}, written in place: the C++ may read what it "
                            "has already written there (its reference may read first), and "
                            "Peano may take __restrict pointers not to overlap; pass another "
                            "buffer to write")
                    if not any(n.startswith(f"{call.loc}: ") for n in out):
                        out.append(note)
    return out
