"""Running a kernel's numpy reference, and what it must do: write its outputs in place.

A reference's mistakes that would otherwise show as a wrong result far away (``return src * 2``
instead of ``dst[...] = src * 2``, ``dst = ...`` rebinding the name, ``sys.exit()``) are
DesignErrors at its ``def``: :func:`run_checked` is the one place a kernel reference runs
(``kernel test``, the simulator, a design's reference calling it).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from aiedsl.errors import DesignError
from aiedsl.ir import Kernel as KernelIR
from aiedsl.source_loc import function_loc
from aiedsl.user_errors import raised_by_user, user_exception


def run_checked(ir: KernelIR, reference: Callable[..., Any], bound: Callable[..., Any],
                args: Sequence[Any], look: bool) -> None:
    """``bound(*args)`` (kernel ``ir``'s ``reference`` with its parameters): the one place a
    kernel reference is run (``kernel test``, the simulator, a design's reference calling it).

    Its mistakes that would otherwise show as a wrong result far away are DesignErrors: it
    returns a value (``return src * 2`` computes the result but leaves the buffer as it was),
    it calls ``sys.exit()`` (which would end the command with no word), or, with ``look``, an
    "out" buffer that held nothing but the poison of unwritten memory
    (:func:`~aiedsl.sim.state.unwritten`) holds only that after (``dst = src * 2`` rebinds the
    name), unless an input of the call holds that value too (it may have been copied: a NaN
    initial value, an INT_MIN running max). Other exceptions go up as they are: the caller says
    what it was running."""
    outs = _poisoned_outs(ir, args) if look else ()
    try:
        result = bound(*args)
    except BaseException as e:  # sys.exit() would end the command with no word
        if isinstance(e, Exception) or not raised_by_user(e):
            raise
        raise user_exception(e, f"running the reference of kernel '{ir.symbol}'",
                             _ref_loc(ir, reference)) from None
    if result is not None:
        shape = getattr(result, "shape", None)
        what = type(result).__name__ + ("" if shape is None else
                                        f" of shape {tuple(shape)} {result.dtype}")
        raise _unwritten_error(ir, reference, "returned a value instead of writing its output "
                               "in place", f"{_ref_name(reference)} returned {what}")
    for i in outs:
        # still all poison: unwritten, unless an input holds that value too (a local whose
        # initial value is NaN, a running max from INT_MIN, copied out as it is)
        if _all_poison(args[i]) and not _inputs_hold(ir, args, _poison(args[i])):
            name = ir.args[i].name
            raise _unwritten_error(
                ir, reference, f"left its \"out\" buffer '{name}' unwritten",
                f"every element of '{name}' is still the poison it was given "
                f"({_poison_text(args[i])})", name)


def _poisoned_outs(ir: KernelIR, args: Sequence[Any]) -> list[int]:
    """The positions of ``ir``'s "out" buffers that hold only the poison of unwritten memory
    (the first element looked at first: a buffer that holds data costs nothing)."""
    import numpy as np

    out = []
    for i, a in enumerate(ir.args):
        v = args[i] if i < len(args) else None
        if a.access == "out" and isinstance(v, np.ndarray) and v.size and \
                _all_poison(v.reshape(-1)[:1]) and _all_poison(v):
            out.append(i)
    return out


def _inputs_hold(ir: KernelIR, args: Sequence[Any], poison: Any) -> bool:
    """Does any of a call's inputs (its arguments but the "out" buffers and the cascade output
    it fills: buffers, scalars, the cascade input) hold nothing but the value ``poison`` (NaN:
    any NaN)? Only such an input (a local still at its initial value) can explain an output
    left all poison; one that merely contains it (a u8 input drawn over 0..255 holds 255) does
    not excuse a reference that wrote nothing."""
    import numpy as np

    filled = len(ir.args) + (ir.cascade_in is not None) if ir.cascade_out is not None else -1
    for i, v in enumerate(args):
        if (i < len(ir.args) and ir.args[i].access == "out") or i == filled:
            continue
        a = np.asarray(v)
        if a.dtype.name == "bfloat16":
            a = a.astype(np.float32)
        elif a.dtype.kind not in "biuf":
            continue
        if a.dtype.kind == "f":
            hit = bool(np.isnan(a).all() if poison != poison else (a == poison).all())
        else:  # integers hold no NaN
            hit = poison == poison and bool((a == poison).all())
        if hit:
            return True
    return False


def _poison(v: Any) -> Any:
    from aiedsl.sim.state import unwritten

    return unwritten((1,), v.dtype)[0]


def _all_poison(v: Any) -> bool:
    import numpy as np

    p = _poison(v)
    return bool(np.isnan(v.astype(np.float32)).all() if p != p else (v == p).all())


def _poison_text(v: Any) -> str:
    p = _poison(v)
    return "NaN" if p != p else str(int(p))


def _ref_name(reference: Callable[..., Any]) -> str:
    import inspect

    name = getattr(reference, "__name__", "the reference")
    try:
        return f"{name}{inspect.signature(reference)}"
    except (TypeError, ValueError):
        return name


def _ref_loc(ir: KernelIR, reference: Callable[..., Any]) -> Any:
    return function_loc(reference) or ir.loc


def _unwritten_error(ir: KernelIR, reference: Callable[..., Any], what: str, found: str,
                     name: str | None = None) -> DesignError:
    """The DesignError for a reference that did not write its output: at its ``def``."""
    if name is None:
        name = next((a.name for a in ir.args if a.kind == "buffer" and a.access != "in"),
                    "out")
    here = function_loc(reference)
    return DesignError(
        "kernel reference", f"the reference of kernel '{ir.symbol}' {what}",
        loc=here or ir.loc, limit="a kernel reference writes its results into its \"out\" "
        "and \"inout\" arrays in place and returns None", found=found,
        related=[("the kernel's declaration", ir.loc)] if here is not None else [],
        fix=f"write into the output array in place, e.g. {name}[...] = ... (`{name} = ...` "
            "only rebinds the name; a returned value is dropped)")
