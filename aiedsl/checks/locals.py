"""Core-local buffers: a core reads a local only once it holds a value.

A local (:func:`aiedsl.local`) holds its initial value from when the design is loaded, then
whatever the core's kernels write into it. One declared without ``initial=`` holds whatever
the memory held before (on the NPU, another design's or an earlier run's data), so the first
kernel call that touches it in each core must write it, not read it. (Its type against each
kernel's signature is checked with every other argument, by
:func:`aiedsl.checks.calls.check_kernel_calls`.)
"""

from __future__ import annotations

from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import Call, LocalArg, Loop, Op
from aiedsl.ir.design import Design
from aiedsl.ir.kernel import KernelArg
from aiedsl.ir.program import calls
from aiedsl.ir.types import TensorType
from aiedsl.library_vectors import takes_vectors


def check_locals(d: Design) -> None:
    """Refuse a call that reads a local with no initial value before any call of its core
    wrote it (in program order: a loop's first iteration is the first to run)."""
    uninitialized = {b.name for b in d.locals if b.init is None}
    if not uninitialized:
        return
    for core in d.cores:
        written: set[str] = set()
        for call in calls(core):
            k = d.kernel(call.kernel)
            reads, writes = _accesses(call, k.args)
            for name, param, position, access in reads:
                if name in uninitialized and name not in written:
                    b = d.local(name)
                    raise DesignError(
                        "local", f"{core.name} reads local '{name}' (argument {position}, "
                        f"'{param}', of '{k.symbol}', {access}) before any kernel writes it, "
                        "and it has no initial value", loc=call.loc,
                        limit="a local holds its initial value from when the design is loaded, "
                        "then what kernels write into it; with neither, whatever the memory "
                        "held before (another design's or an earlier run's data)",
                        found="no initial= and no earlier write in this core",
                        related=[(f"local '{name}' is declared", b.loc)],
                        fix=_fix(_loops_around(core.body, call) or [], b.type))
            written |= writes


def _fix(loops: list[Loop], t: TensorType) -> str:
    """The fix for a local read before written, by where the read is: in a loop (an
    accumulator), it must be written where each accumulation starts, which ``initial=`` (set
    once, at load) is not; outside any loop, either does."""
    writer = "a kernel that takes it \"out\"" + (  # zero only for a size it takes
        f" (such as zero(Tensor[{', '.join(map(str, t.shape))}, {t.dtype}]) from "
        "aiedsl.kernels)" if takes_vectors(t) else "")
    if not loops:
        return ("give it initial=... in local(...) (e.g. initial=0), or write it first with "
                + writer)
    inner = loops[-1]
    if len(loops) > 1:
        outer = loops[-2].loc.line
        return (f"write it first where each accumulation starts: call {writer} in the loop "
                f"at line {outer}, just before the loop at line {inner.loc.line} that reads "
                f"it; initial= would set it only once, when the design is loaded, not for each "
                f"iteration of the loop at line {outer}")
    return (f"write it first where the accumulation starts: call {writer} just before the "
            f"loop at line {inner.loc.line} that reads it (or first in its body, if each "
            "iteration starts anew); initial= would set it only once, when the design is "
            "loaded, so only the first run after the load would start from it")


def _loops_around(body: tuple[Op, ...], target: Call) -> list[Loop] | None:
    """The loops of a core's ``body`` that hold call ``target``, outermost first; None when
    ``body`` does not hold it."""
    for op in body:
        if op is target:
            return []
        if isinstance(op, Loop):
            inside = _loops_around(op.body, target)
            if inside is not None:
                return [op, *inside]
    return None


def _accesses(call: Call, params: tuple[KernelArg, ...]
              ) -> tuple[list[tuple[str, str, int, str]], set[str]]:
    """The locals ``call`` reads (name, parameter, position, access) and those it writes."""
    reads: list[tuple[str, str, int, str]] = []
    writes: set[str] = set()
    for i, (arg, param) in enumerate(zip(call.args, params)):
        if not isinstance(arg, LocalArg):
            continue
        if param.access in ("in", "inout"):
            reads.append((arg.local, param.name, i, param.access))
        if param.access in ("out", "inout"):
            writes.add(arg.local)
    return reads, writes
