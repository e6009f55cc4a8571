"""Running a kernel's numpy reference, and what it must do: write its outputs in place.

A reference's mistakes that would otherwise show as a wrong result far away (``return src * 2``
instead of ``dst[...] = src * 2``, ``dst = ...`` rebinding the name, ``sys.exit()``) are
DesignErrors at its ``def``: :func:`run_checked` is the one place a kernel reference runs
(``kernel test``, the simulator, a design's reference calling it).
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

from aiedsl.dtypes import unwritten
from aiedsl.errors import DesignError
from aiedsl.ir.kernel import Kernel as KernelIR
from aiedsl.source_loc import function_loc, user_line
from aiedsl.user_errors import raised_by_user, user_exception


def run_checked(ir: KernelIR, reference: Callable[..., Any], bound: Callable[..., Any],
                args: Sequence[Any], look: bool) -> None:
    """``bound(*args)`` (kernel ``ir``'s ``reference`` with its parameters): the one place a
    kernel reference is run (``kernel test``, the simulator, a design's reference calling it).

    Its mistakes that would otherwise show as a wrong result far away are DesignErrors: it
    returns a value (``return src * 2`` computes the result but leaves the buffer as it was),
    it calls ``sys.exit()`` (which would end the command with no word), or, with ``look``, an
    "out" buffer that held nothing but the poison of unwritten memory
    (:func:`~aiedsl.dtypes.unwritten`) holds only that after (``dst = src * 2`` rebinds the
    name), unless an input of the call holds that value too (it may have been copied: a NaN
    initial value, an INT_MIN running max). Other exceptions go up as they are: the caller says
    what it was running."""
    outs = _poisoned_outs(ir, args) if look else ()
    probe = _probe(ir, args) if look else None  # taken before the call writes the buffers
    try:
        result = bound(*_read_only_inputs(ir, args))
    except BaseException as e:  # sys.exit() would end the command with no word
        if isinstance(e, ValueError) and "read-only" in str(e) and raised_by_user(e):
            raise _wrote_input(ir, reference, e) from None
        if isinstance(e, Exception) or not raised_by_user(e):
            raise
        raise user_exception(e, f"running the reference of kernel '{ir.symbol}'",
                             _ref_loc(ir, reference)) from e  # its traceback: the cause's
    if result is not None:
        shape = getattr(result, "shape", None)
        what = type(result).__name__ + ("" if shape is None else
                                        f" of shape {tuple(shape)} {result.dtype}")
        raise _unwritten_error(ir, reference, "returned a value instead of writing its output "
                               "in place", f"{_ref_name(reference)} returned {what}")
    if probe is not None:
        _check_no_out_read(ir, reference, bound, args, probe)
    for i in outs:
        # still all poison: unwritten, unless an input holds that value too (a local whose
        # initial value is NaN, a running max from INT_MIN, copied out as it is), or the probe's
        # run, given the buffer filled with another value, wrote the poison again: a result
        # that is the poison (a sum of -2^31, a max of NaNs) is written, not left
        rewrote = probe is not None and i in probe.fills and \
            not _same(probe.args[i], probe.fills[i]).all()
        if _all_poison(args[i]) and not rewrote and \
                not _inputs_hold(ir, args, _poison(args[i])):
            name = ir.args[i].name
            raise _unwritten_error(
                ir, reference, f"left its \"out\" buffer '{name}' unwritten",
                f"every element of '{name}' is still the poison it was given "
                f"({_poison_text(args[i])})", name)


def _wrote_input(ir: KernelIR, reference: Callable[..., Any], e: ValueError) -> DesignError:
    """The error for a reference that wrote into one of its "in" buffers (numpy's ``e``)."""
    ins = [a.name for a in ir.args if a.kind == "buffer" and a.access == "in"]
    return DesignError(
        "kernel reference", f"the reference of kernel '{ir.symbol}' writes into a read-only "
        f"array, as its \"in\" buffers ({', '.join(repr(n) for n in ins)}) are to it: numpy says "
        f"{e}",
        loc=user_line(e.__traceback__) or _ref_loc(ir, reference),
        limit="a reference reads its \"in\" buffers only, as the kernel declares them: a "
        "write would change what every later reader of that element sees",
        found=f"{_ref_name(reference)} writes its input",
        fix="compute into the \"out\" buffer (dst[...] = src * 2, not src *= 2), or declare "
            "the buffer \"inout\" if the C++ writes it too")


def _read_only_inputs(ir: KernelIR, args: Sequence[Any]) -> list[Any]:
    """``args`` with each "in" buffer as a read-only view: a reference that writes into its
    input (``src *= 2``) changes what every later reader of that element sees, where the C++,
    declared so, may not; numpy then refuses the write at the reference's own line."""
    out = list(args)
    for i, a in enumerate(ir.args[:len(out)]):
        arr = out[i]
        if a.access == "in" and a.kind == "buffer" and getattr(arr, "flags", None) is not None \
                and arr.flags.writeable:
            view = arr.view()
            view.flags.writeable = False
            out[i] = view
    return out


class _Probe(NamedTuple):
    """The arguments of a second run of a reference, the same as the first's but for its "out"
    buffers, each filled with another value (:func:`_probe`)."""

    args: list[Any]
    outs: dict[int, Any]
    """The "out" buffers refilled, by position: what each held before the first run."""
    fills: dict[int, Any]
    """The value each was filled with for the second run."""
    control: list[Any]
    """Copies of the arguments as the first run had them: a run on these that writes other
    values than the first shows a reference that is not a function of its arguments alone (it
    keeps state, draws random numbers), which this probe cannot judge."""


def _probe(ir: KernelIR, args: Sequence[Any]) -> _Probe | None:
    """Copies of ``args`` (arrays that were one array stay one) with each "out" buffer filled
    with a value other than its own (0, or 1 where it held only zeros), for a second run that
    tells whether the reference reads them (:func:`_check_no_out_read`); None when the kernel
    has no "out" buffer of its own (one that shares memory with another argument, a local
    passed as both "in" and "out", is read through that one)."""
    import numpy as np

    arrays = [a for a in args if isinstance(a, np.ndarray)]
    outs = [i for i, a in enumerate(ir.args) if a.access == "out" and i < len(args)
            and isinstance(args[i], np.ndarray) and args[i].size
            and not any(b is not args[i] and np.may_share_memory(b, args[i]) for b in arrays)]
    if not outs:
        return None
    copies: dict[int, Any] = {}
    probe = [copies.setdefault(id(a), a.copy()) if isinstance(a, np.ndarray) else a
             for a in args]
    kept: dict[int, Any] = {}
    control = [kept.setdefault(id(a), a.copy()) if isinstance(a, np.ndarray) else a
               for a in args]
    before, fills = {}, {}
    for i in outs:
        before[i] = args[i].copy()
        zero = np.zeros((), args[i].dtype)
        fills[i] = zero + 1 if bool((args[i] == zero).all()) else zero
        probe[i][...] = fills[i]
    return _Probe(probe, before, fills, control)


def _check_no_out_read(ir: KernelIR, reference: Callable[..., Any], bound: Callable[..., Any],
                       args: Sequence[Any], probe: _Probe) -> None:
    """Run the reference again on ``probe``'s arguments: if what it writes differs from the
    first run's ``args`` (beyond the elements of an "out" buffer it left as they were both
    times), its results depend on what an "out" buffer held before the call, so the kernel
    reads it: the buffer is "inout". On the NPU an "out" buffer holds what was there before
    (the checks take it as unwritten until the call, so nothing need write it first), and a
    reference that reads it hides that by reading the simulator's own values."""
    import numpy as np

    try:
        bound(*probe.control)
        bound(*probe.args)
    except Exception:  # noqa: BLE001 - it failed on other values only: not this check's to say
        return
    written = [i for i, a in enumerate(ir.args) if a.access != "in" and i < len(args)]
    if ir.cascade_out is not None:
        written.append(len(ir.args) + (ir.cascade_in is not None))
    for j in written:  # the same arguments, other results: it keeps state; nothing to judge
        got, again = np.asarray(args[j]), np.asarray(probe.control[j])
        if got.shape == again.shape and not _same(got, again).all():
            return
    for j in written:
        got, again = np.asarray(args[j]), np.asarray(probe.args[j])
        if got.shape != again.shape:
            continue
        differ = ~_same(got, again)
        if j in probe.outs:  # elements left as they were in both runs: unwritten, not read
            differ &= ~(_same(got, probe.outs[j]) & _same(again, probe.fills[j]))
        if differ.any():
            read = next(iter(probe.outs)) if len(probe.outs) == 1 else None
            at = tuple(int(v) for v in np.argwhere(differ)[0])
            where = ir.args[j].name if j < len(ir.args) else "the cascade output"
            held = ("its \"out\" buffers holding other values" if read is None else
                    f"every element of '{ir.args[read].name}' set to "
                    f"{_value(probe.fills[read])}")
            found = (f"with {held} before the call instead of what it held, it wrote "
                     f"{where}{list(at)} = {_value(again[at])} instead of {_value(got[at])}")
            raise _out_read_error(ir, reference, read, found, read is not None
                                  and _all_poison(probe.outs[read]))


def _same(a: Any, b: Any) -> Any:
    """Elementwise equality of two arrays (or an array and a value), NaN equal to NaN."""
    import numpy as np

    x, y = np.asarray(a), np.asarray(b)
    if x.dtype.name == "bfloat16" or y.dtype.name == "bfloat16":
        x, y = x.astype(np.float32), y.astype(np.float32)
    if x.dtype.kind == "f" or y.dtype.kind == "f":
        return (x == y) | (np.isnan(x) & np.isnan(y))
    return x == y


def _value(v: Any) -> str:
    """One element as a message shows it: ``NaN``, ``0``, ``-3.25``."""
    import numpy as np

    x = np.asarray(v)
    if x.dtype.name == "bfloat16" or x.dtype.kind == "f":
        f = float(x.astype(np.float32))
        return "NaN" if f != f else f"{f:g}"
    return str(int(x))


def _out_read_error(ir: KernelIR, reference: Callable[..., Any], read: int | None,
                    found: str, unwritten: bool) -> DesignError:
    """The DesignError for a reference that reads an "out" buffer: at the kernel's
    declaration, where the fix goes. ``unwritten``: the buffer held only the poison of memory
    nothing wrote, so the design must also write it before the call."""
    if read is None:
        names = ", ".join(f"'{a.name}'" for a in ir.args if a.access == "out")
        what, fix = (f"reads one of its \"out\" buffers ({names})",
                     "declare the one it reads \"inout\"")
    else:
        a = ir.args[read]
        t = a.type
        typed = "..." if t is None else t.written
        what = (f"reads its \"out\" buffer '{a.name}': what it writes depends on what "
                f"'{a.name}' held before the call")
        fix = (f"declare it \"inout\", buffer(\"{a.name}\", {typed}, \"inout\"), since the "
               "kernel reads it (an accumulator)" + (
                   ", and write it before this call (a zero kernel before the loop that "
                   "accumulates into it): here it held nothing any call wrote"
                   if unwritten else "") + "; or, if the kernel only writes it, make the "
               "reference write every element without reading it first")
    here = function_loc(reference)
    return DesignError(
        "kernel reference", f"the reference of kernel '{ir.symbol}' {what}", loc=ir.loc,
        limit="a kernel never reads an \"out\" buffer, only writes it (the checks take it as "
        "holding nothing until the call); one it reads and writes is \"inout\"",
        found=found, related=[("the reference, which reads it", here)] if here else [],
        fix=fix)


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


def left_unwritten(before: Any, after: Any, poisoned: Any) -> Any:
    """The elements of an "out" buffer a reference left as they were: ``before`` what it held
    for one run (random values), ``after`` what it held after that run, ``poisoned`` after a
    run on the same inputs with the buffer holding the poison of unwritten memory
    (:func:`~aiedsl.dtypes.unwritten`). An element kept in both runs, one of random values and
    one of poison, was not written (a reference writes the same values given the same inputs;
    one that reads the buffer is :func:`_check_no_out_read`'s). An element whose random value
    was the poison itself (-128 drawn for an i8) cannot tell, and is not counted."""
    import numpy as np

    poison = _poison(np.asarray(before))
    return (_same(after, before) & _same(poisoned, poison)) & ~_same(before, poison)


def partly_unwritten_error(ir: KernelIR, reference: Callable[..., Any], name: str,
                           left: Any, cpp_after: Any, before: Any) -> DesignError | None:
    """The DesignError for a reference that left some elements of its "out" buffer ``name``
    unwritten (``left``, :func:`left_unwritten`) that the kernel's C++ wrote (``cpp_after``
    differs there from ``before``, what the buffer held): what the C++ computes there would be
    compared with what the buffer happened to hold, a "want" no reference computed. At its
    ``def``, as for one that wrote none. None when the C++ left them as they were too."""
    import numpy as np

    written = left & ~_same(cpp_after, before)
    if not written.any():
        return None
    total, n = int(np.asarray(left).size), int(np.count_nonzero(left))
    at = [tuple(int(v) for v in i) for i in np.argwhere(written)]
    one = len(at) == 1
    shown = ", ".join(str(list(i)) for i in at[:3]) + (
        f" and {len(at) - 3:,} more" if len(at) > 3 else "")
    here = function_loc(reference)
    return DesignError(
        "kernel reference", f"the reference of kernel '{ir.symbol}' left {n:,} of {total:,} "
        f"elements of its \"out\" buffer '{name}' unwritten, "
        + (f"where the kernel's C++ writes {'it' if one else 'them'}" if len(at) == n else
           f"{len(at):,} of which the kernel's C++ writes") + f": {name}{shown}",
        loc=here or ir.loc, limit="a kernel reference writes its results into its \"out\" "
        "arrays in place: every element the kernel writes (the test compares each)",
        found=f"{name}{shown} kept what {'it' if one else 'they'} held before the call in two "
        "runs of the reference (one with the buffer holding random values, one holding "
        f"poison), where the C++ wrote {'another value' if one else 'other values'}",
        related=[("the kernel's declaration", ir.loc)] if here is not None else [],
        fix=f"make the reference write all of '{name}' the C++ writes ({name}[...] = ...; a "
            f"slice such as {name}[1:] = ... leaves the rest as it was)")
