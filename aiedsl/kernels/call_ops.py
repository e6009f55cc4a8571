"""The operations of each call of a kernel declaring ``ops=`` as a function of its scalars
(``ops=lambda n: n``): the function called once per set of scalar values the design's calls pass
(:func:`~aiedsl.kernels.cases.scalar_sets`), as the design loads, and its counts kept in the IR
(:attr:`~aiedsl.ir.kernel.Kernel.op_counts`), as a profiled kernel's cycles are.

One number per kernel could not say what a call does when its work varies with a scalar: a
kernel called once with n=1024 and 3000 times with n=16 was counted 1024 elements' work for
each call, while a profile charged each call its own cycles (the simulator reported more than
the core's peak). A value a call reads from an rtp slot is counted with the value its profile
would take (``params=``, else the runtime sequence's first write into the slot): unknown until
the run, as its cycles are."""

from __future__ import annotations

from typing import Any

from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.ir.kernel import CallOps, Kernel as KernelIR
from aiedsl.source_loc import function_loc
from aiedsl.values import as_int, shown


def counted_design(d: Design, kernels: dict[str, Any]) -> Design:
    """Design ``d`` with the operations per call of each kernel declaring ``ops=`` as a
    function of its scalars counted, one count per set of scalar values its calls pass
    (``kernels``: the declared :class:`~aiedsl.kernels.base.Kernel` objects by symbol, which
    hold the functions)."""
    if not any(k.ops_source == "per call" and not k.op_counts for k in d.kernels):
        return d
    return d.model_copy(update={"kernels": tuple(
        _counted(d, k, kernels[k.symbol].count_ops)
        if k.ops_source == "per call" and not k.op_counts else k for k in d.kernels)})


def _counted(d: Design, ir: KernelIR, count: Any) -> KernelIR:
    """``ir`` with ``count``, its ``ops=`` function, called with each set of scalar values
    design ``d``'s calls pass."""
    from aiedsl.kernels.cases import declared_set, scalar_sets
    from aiedsl.user_errors import raised_by_user, user_exception

    counts = []
    # no call passing the kernel's arguments (check refuses each): its declaration's values
    for s in scalar_sets(d, ir) or [declared_set(ir)]:
        if s.missing:
            names = ", ".join(repr(m) for m in s.missing)
            raise DesignError(
                "kernel cost", f"kernel '{ir.symbol}' has ops= a function of its scalars, and "
                f"no value for its scalar {names} to count a call's operations with",
                loc=ir.loc, limit="a scalar a call passes as a constant is counted with that "
                "value; one read from an rtp slot with its params= value, else the value the "
                "runtime sequence first writes into the slot", found="ops=" + getattr(
                    count, "__name__", "a function"),
                related=[("the call", s.call.loc)] if s.call is not None else None,
                fix="give params={" + ", ".join(f"'{m}': ..." for m in s.missing)
                + "} to count it with, or ops= as a number")
        values = [s.scalars[a.name] for a in ir.args if a.kind == "scalar"]
        with_values = s.shown() or "no scalars"
        try:
            value = count(*values)
        except Exception as e:  # the user's function failed
            if not raised_by_user(e):
                raise
            raise user_exception(e, f"running ops= of kernel '{ir.symbol}' with "
                                 f"{with_values}", ir.loc) from e
        ops = as_int(value)
        if ops is None or ops < 0:  # at the function's line (a lambda's: the ops= line)
            raise DesignError(
                "kernel cost", f"ops= of kernel '{ir.symbol}' counts {shown(value)} operations "
                f"for its calls with {with_values}", loc=function_loc(count) or ir.loc,
                limit="a whole number >= 0 per call", found=shown(value),
                related=[("the call", s.call.loc)] if s.call is not None else None,
                fix="return one call's arithmetic as an int (a multiply-accumulate is 2): "
                    "// where / gives a float, int(...) around a product of floats")
        counts.append(CallOps(constants=s.constants, scalars=s.scalars, given=s.given, ops=ops))
    return ir.model_copy(update={"ops": counts[0].ops, "op_counts": tuple(counts)})
