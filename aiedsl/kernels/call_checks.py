"""A kernel call against its kernel's signature: arguments of the declared kinds and types,
scalars its C++ can take, rtp slots whose every write the kernel can take. ``check`` judges
every call (:func:`~aiedsl.checks.calls.check_kernel_calls`); a design's calls of a kernel run
as it loads (profiled for its cycles, or counted by an ``ops=`` function) are judged first,
before the kernel runs with their values (:func:`checked_calls`). A module of the kernels
package so that the step the kernel object adds to the design's loading can call it."""

from __future__ import annotations

from typing import Any

from aiedsl.dtypes import dtype
from aiedsl.errors import DesignError, counted, listed
from aiedsl.ir.core_ops import Acquire, BufferArg, Call, IndexArg, LocalArg, RtpArg, ScalarArg
from aiedsl.ir.design import Design
from aiedsl.ir.kernel import Kernel, KernelArg
from aiedsl.ir.types import TensorType
from aiedsl.ir.loc import Loc
from aiedsl.ir.program import acquires, calls, calls_in_loops
from aiedsl.ir.runtime import RtpWrite
from aiedsl.ir.scalar_rules import range_text as _range_text
from aiedsl.ir.scalar_rules import scalar_range as _scalar_range
from aiedsl.ir.scalar_rules import value_rule as _value_rule


def checked_calls(d: Design, kernels: dict[str, Any]) -> Design:
    """Design ``d``, its calls of the kernels run as it loads (profiled for their cycles, or
    counted by an ``ops=`` function) judged as ``check`` judges them. The profile and the
    ``ops=`` function take a call's values as they are: a float for an int was a ctypes
    error, a value out of range was wrapped by ctypes, and a call missing its scalar or
    passing a buffer for it was said to give no value to profile with, where ``check`` with
    ``cycles=`` given said what the call does wrong. A buffer argument whose element is not
    acquired is left to ``check`` (its held-buffers check says so first). (``kernels``: the
    kernel objects, unused: a loading step takes them.)"""
    symbols = {k.symbol for k in d.kernels if (k.cycles_source == "profile" and not k.profiles)
               or (k.ops_source == "per call" and not k.op_counts)}
    writes = rtp_writes(d)
    for core in d.cores:
        acq = acquires(core)
        for call, loops in calls_in_loops(core):
            if call.kernel in symbols:
                check_call(d, core.name, call, acq, writes, loops)
    return d


def rtp_writes(d: Design) -> dict[tuple[str, int], list[RtpWrite]]:
    """The runtime sequence's writes of each rtp slot, in order."""
    writes: dict[tuple[str, int], list[RtpWrite]] = {}
    for op in d.runtime:
        if isinstance(op, RtpWrite):
            writes.setdefault((op.rtp, op.index), []).append(op)
    return writes


def check_call(d: Design, core: str, call: Call, acq: dict[str, Acquire],
               writes: dict[tuple[str, int], list[RtpWrite]], loops: tuple[int, ...] = ()
               ) -> None:
    """One call of core ``core`` against its kernel's signature (``acq``: the core's acquires
    by result name; ``writes``: :func:`rtp_writes`; ``loops``: the counts of the loops around
    the call, outermost first)."""
    k = d.kernel(call.kernel)
    if len(call.args) != len(k.args):
        raise DesignError(
            "kernel signature", f"{core} calls '{k.symbol}' with "
            f"{counted(len(call.args), 'argument')}; it takes {len(k.args)}", loc=call.loc,
            limit=_sig(k), found=counted(len(call.args), 'argument'),
            fix=f"call it as {k.symbol}({', '.join(a.name for a in k.args)})")
    for i, (arg, param) in enumerate(zip(call.args, k.args)):
        if param.kind == "buffer" and isinstance(arg, LocalArg):
            _check_local_arg(d, core, call.loc, i, param, arg, _sig(k), k.symbol)
        elif param.kind == "buffer":
            if not isinstance(arg, BufferArg):
                what = (f"rtp slot '{arg.rtp}'[{arg.index}]" if isinstance(arg, RtpArg)
                        else f"the scalar {arg.value!r}" if isinstance(arg, ScalarArg)
                        else "a loop's index" if isinstance(arg, IndexArg)
                        else "something else")
                raise DesignError(
                    "kernel signature", f"argument {i} ('{param.name}') of '{k.symbol}' "
                    f"is a buffer, but {core} passes {what}",
                    loc=call.loc, limit=_sig(k), found=what,
                    fix="pass an acquired fifo element or a local")
            elem = d.fifo(acq[arg.value].fifo).elem
            assert param.type is not None
            if elem.dtype == param.type.dtype and elem.numel == param.type.numel and (
                    tuple(elem.shape) != tuple(param.type.shape)):
                # mlir-aie's func.call verifier wants each operand's memref type to be
                # the declared one exactly: the same elements in another shape fail
                fifo_name = acq[arg.value].fifo
                raise DesignError(
                    "kernel signature", f"argument {i} ('{param.name}') of '{k.symbol}' "
                    f"expects {param.type}, but {core} passes an element of "
                    f"'{fifo_name}' ({elem}): the same {elem.numel} elements in another "
                    f"shape, and func.call takes only the declared memref type",
                    loc=call.loc, limit=_sig(k), found=str(elem),
                    **_reshape_fix(d, fifo_name, param.type))
            if elem.dtype != param.type.dtype or elem.numel != param.type.numel:
                raise DesignError(
                    "kernel signature", f"argument {i} ('{param.name}') of '{k.symbol}' "
                    f"expects {param.type}, but {core} passes an element of "
                    f"'{acq[arg.value].fifo}' ({elem})", loc=call.loc,
                    limit=_sig(k), found=str(elem), fix=_element_fix(elem, param.type))
        elif isinstance(arg, RtpArg):
            if arg.dtype != param.dtype:
                raise _rtp_types(core, k, call, i)
            rule = _value_rule(param)
            if rule is not None:  # the runtime's writes are the values the kernel reads
                lo, hi, what, limit, want = rule
                w = next((w for w in writes.get((arg.rtp, arg.index), [])
                          if not lo <= w.value <= hi), None)
                if w is not None:
                    raise DesignError(
                        "kernel signature", f"rt.rtp_write of '{w.rtp}'[{w.index}] writes "
                        f"{w.value}, but {core} passes that slot as argument {i} "
                        f"('{param.name}') of '{k.symbol}', which {what}", loc=w.loc,
                        limit=limit, found=str(w.value),
                        related=[(f"{core} passes it to '{k.symbol}'", call.loc)],
                        fix=f"write {want}")
        elif isinstance(arg, IndexArg):
            _check_index(core, k, call, i, param, loops[arg.loop])
        elif isinstance(arg, LocalArg):
            raise DesignError(
                "kernel signature", f"argument {i} ('{param.name}') of '{k.symbol}' is a "
                f"scalar {param.dtype}, but {core} passes local '{arg.local}', a "
                "buffer", loc=arg.loc, limit=_sig(k),
                found=f"local '{arg.local}' ({d.local(arg.local).type})",
                fix="pass a Python int or float (a core cannot read a local's value: "
                "a kernel taking it as a buffer can), or an rtp slot")
        elif not isinstance(arg, ScalarArg):
            raise DesignError(
                "kernel signature", f"argument {i} ('{param.name}') of '{k.symbol}' is a "
                f"scalar {param.dtype}, but {core} passes a buffer", loc=call.loc,
                limit=_sig(k), fix="pass a Python int or float, or an rtp slot (thr[0]) "
                "for a value the host sets at run time (a core cannot read an "
                "element's value into a scalar argument: a kernel taking it as a "
                "buffer can)")
        elif param.dtype.startswith(("i", "u")) and not isinstance(arg.value, int):
            # an integer type takes an integer literal: MLIR's parser refuses a float
            # literal for an integer constant, and a silent int() would hide the bug
            raise DesignError(
                "kernel signature", f"argument {i} ('{param.name}') of '{k.symbol}' is "
                f"{param.dtype}, but {core} passes {arg.value!r}", loc=call.loc,
                limit=_sig(k), found=repr(arg.value),
                fix="pass an int")
        else:
            lo, hi = _scalar_range(param.dtype)
            if not lo <= arg.value <= hi:  # False for NaN too
                raise DesignError(
                    "kernel signature", f"argument {i} ('{param.name}') of '{k.symbol}' "
                    f"is {param.dtype}, but {core} passes {arg.value!r}",
                    loc=call.loc,
                    limit=_range_text(param.dtype),
                    found=repr(arg.value),
                    fix=f"pass a value {param.dtype} can hold, or declare the scalar "
                        "with a wider type")
            rule = _value_rule(param)
            if rule and not rule[0] <= arg.value <= rule[1]:
                lo, hi, what, limit, want = rule
                raise DesignError(
                    "kernel signature", f"argument {i} ('{param.name}') of '{k.symbol}' "
                    f"{what}, but {core} passes {arg.value!r}", loc=call.loc,
                    limit=limit, found=repr(arg.value), fix=f"pass {want}")


def _check_index(core: str, k: Kernel, call: Call, i: int, param: KernelArg, count: int
                 ) -> None:
    """A loop's index (of ``count`` iterations) passed to scalar ``param``: an integer type
    that holds 0 to ``count - 1``, a value the kernel takes in every iteration, and a kernel
    charged the same for every call (its cycles and operations are one per set of constant
    scalars)."""
    head = f"argument {i} ('{param.name}') of '{k.symbol}'"
    passes = f"{core} passes the index of a loop({count}), 0 to {count - 1}"
    if dtype(param.dtype).is_float:
        raise DesignError(
            "kernel signature", f"{head} is {param.dtype}, but {passes}", loc=call.loc,
            limit=f"{_sig(k)}; a loop's index is an integer (an scf.for's induction variable, "
            "cast with arith.index_cast, which makes integers only)", found="a loop's index",
            fix=f"declare it scalar('{param.name}', i32) and convert it in the C++")
    span = f"0 to {count - 1}" if count > 1 else "0"
    if param.equals is not None and not (count == 1 and param.equals == 0):
        raise DesignError(
            "kernel signature", f"{head} is fixed to equals={param.equals!r}, but {passes}",
            loc=call.loc, limit="its C++ is right for that value only",
            found=f"a loop's index, {span}", fix=f"pass {param.equals!r}")
    most = int(_scalar_range(param.dtype)[1])
    if count - 1 > most:
        widest = param.dtype in ("i32", "u32") or count - 1 > _scalar_range("i32")[1]
        raise DesignError(
            "kernel signature", f"{head} is {param.dtype}, but {passes}", loc=call.loc,
            limit=_range_text(param.dtype), found=str(count - 1),
            fix="split the loop in two, one inside the other (loop(a) around loop(b), a x b "
            "iterations), and pass both indices" if widest else
            # the C++ parameter too: the source check holds the declaration to it (a tester
            # widened the declaration alone and was sent back by that check)
            f"declare the scalar with a wider type (scalar('{param.name}', i32)) and take it "
            f"as that type in the C++ (int32_t), or make the loop at most loop({most + 1})")
    rule = _value_rule(param)
    if rule is not None and not (rule[0] <= 0 and count - 1 <= rule[1]):
        _, _, what, limit, want = rule
        raise DesignError(
            "kernel signature", f"{head} {what}, but {passes}", loc=call.loc, limit=limit,
            found=str(count - 1),
            fix=f"pass {want}, or a loop whose index stays within it")
    per_call = ("its cycles come from a profile per set of scalar values"
                if k.cycles_source == "profile" else
                "its ops= is a function of its scalars" if k.ops_source == "per call" else "")
    if per_call:
        raise DesignError(
            "kernel signature", f"{head} is the index of a loop({count}) (0 to {count - 1}) "
            f"that {core} passes, but {per_call}, and the index is another value in every "
            "iteration", loc=call.loc,
            limit="a kernel whose calls cost what their scalars say takes constant scalars "
            "(and rtp slots, charged as their first write)", found="a loop's index",
            fix=("declare cycles= for it" if k.cycles_source == "profile" else
                 "declare ops= as a number") + ", or pass a constant")


def _rtp_types(core: str, k: Kernel, call: Call, first: int) -> DesignError:
    """The error for rtp slots passed to scalars of another type, from argument ``first`` on:
    one error for all of them in the call (each was a round of ``check`` of its own)."""
    bad = [(i, p, a) for i, (a, p) in enumerate(zip(call.args, k.args))
           if i >= first and p.kind == "scalar" and isinstance(a, RtpArg) and a.dtype != p.dtype]
    i, param, arg = bad[0]

    def fix(p: KernelArg, a: RtpArg) -> str:
        return (f"declare it scalar('{p.name}', {a.dtype}, narrows_to={p.dtype}): an rtp slot "
                "is a 32-bit word, which the kernel narrows") if not dtype(p.dtype).is_float \
            else (f"an rtp slot holds an {a.dtype}: declare it scalar('{p.name}', {a.dtype}) "
                  "and convert it in the C++, or pass the float in the call")
    more = bad[1:]
    if not more:
        return DesignError(
            "kernel signature", f"argument {i} ('{param.name}') of '{k.symbol}' is "
            f"{param.dtype}, but {core} passes rtp slot '{arg.rtp}'[{arg.index}] ({arg.dtype})",
            loc=call.loc, limit=_sig(k), found=arg.dtype, fix=fix(param, arg))
    names = [f"'{p.name}'" for _, p, _ in more]
    found = arg.dtype + "".join(
        f"\n  found: {a.dtype} in rtp slot '{a.rtp}'[{a.index}] for argument {j} "
        f"('{p.name}', {p.dtype})" for j, p, a in more)
    ints = [(p, a) for _, p, a in bad if not dtype(p.dtype).is_float]
    said = []
    if len(ints) > 1:  # one declaration fix for every integer scalar
        decls = [f"scalar('{p.name}', {a.dtype}, narrows_to={p.dtype})" for p, a in ints]
        said.append(f"declare them {listed(decls)}: an rtp slot is a 32-bit word, which the "
                    "kernel narrows")
    said += [f"for '{p.name}', {fix(p, a)}" for _, p, a in bad
             if len(ints) <= 1 or dtype(p.dtype).is_float]
    fixes = "; ".join(said)
    return DesignError(
        "kernel signature", f"argument {i} ('{param.name}') of '{k.symbol}' is {param.dtype}, "
        f"but {core} passes rtp slot '{arg.rtp}'[{arg.index}] ({arg.dtype}); and "
        f"{len(more)} more argument{'s' if len(more) > 1 else ''} of another type than the "
        f"rtp slot passed: {listed(names)}", loc=call.loc, limit=_sig(k), found=found,
        fix=fixes)


def _check_local_arg(d: Design, core: str, loc: Loc, i: int, param: KernelArg, arg: LocalArg,
                     sig: str, symbol: str) -> None:
    """A local passed to buffer parameter ``param``: its type must be the parameter's, shape
    and all (mlir-aie's func.call takes only the declared memref type)."""
    t = d.local(arg.local).type
    want = param.type
    assert want is not None
    if (t.dtype, tuple(t.shape)) == (want.dtype, tuple(want.shape)):
        return
    same = t.dtype == want.dtype and t.numel == want.numel
    related = [(f"local '{arg.local}' is declared", d.local(arg.local).loc)]
    fix = (f"declare the local as Tensor[{', '.join(map(str, want.shape))}, {want.dtype}]"
           + (" (the same bytes)" if same else "") + ", or pass it to a kernel of its type")
    other = _taking_as_declared(d, arg.local, t) if same else None
    if other is not None:
        # declared the other way, that call would be refused in turn: two library kernels
        # that agree on the bytes and not the shape sent a newcomer's tester round in a circle
        related.append((f"'{other.kernel}' takes it as {t}", other.loc))
        fix = (f"no one shape of the local fits both calls: '{other.kernel}' takes it as {t}; "
               f"declare a kernel of your own for one of them in the other's shape (its C++ "
               f"takes a pointer, so the same C++ serves both: declare(..., args=[buffer(..., "
               f"{want.written}), ...]))")
    raise DesignError(
        "kernel signature", f"argument {i} ('{param.name}') of '{symbol}' expects {want}, but "
        f"{core} passes local '{arg.local}' ({t})" + (
            f": the same {t.numel} elements in another shape, and func.call takes only the "
            "declared memref type" if same else ""), loc=loc, limit=sig, found=str(t),
        related=related, fix=fix)


def _taking_as_declared(d: Design, local: str, t: TensorType) -> Call | None:
    """The first call that passes core-local ``local`` to a buffer parameter of its declared
    type ``t`` (None when none does)."""
    kernels = {k.symbol: k for k in d.kernels}
    for core in d.cores:
        for call in calls(core):
            for a, param in zip(call.args, kernels[call.kernel].args):
                if isinstance(a, LocalArg) and a.local == local and param.type is not None \
                        and tuple(param.type.shape) == tuple(t.shape) \
                        and param.type.dtype == t.dtype:
                    return call
    return None


def _reshape_fix(d: Design, name: str, want: TensorType) -> dict[str, Any]:
    """The related lines and fix of fifo ``name`` passed where a kernel takes the same elements
    as ``want``: its declaration gets ``want``; for a forward's output, the forward (which
    takes a shape: ``a.forward(Tensor[...])``), or the declaration its shape comes from when
    it was given none, which the IR does not record (a forward given its input's type looks
    the same): both are said."""
    f = d.fifo(name)
    shape = want.written
    other = f"or declare the kernel for {f.elem}"
    # each forward's output -> its input (a forward has one of each)
    forwarded = {k.dsts[0]: k for k in d.links if k.kind == "forward"}
    made = forwarded.get(name)
    if made is None:
        what = f"channel '{f.channel}'" if f.channel is not None else f"'{name}'"
        return {"related": [(f"{what} is declared {f.elem}", f.loc)],
                "fix": f"declare {what} with the kernel's shape, {shape} (the same bytes), "
                       f"{other}"}
    root, seen = d.fifo(made.srcs[0]), {name}
    # the first declaration up the forwards of one type (seen: a design.json's loop ends)
    while root.name in forwarded and root.name not in seen and \
            d.fifo(forwarded[root.name].srcs[0]).elem == root.elem:
        seen.add(root.name)
        root = d.fifo(forwarded[root.name].srcs[0])
    same = root.elem == f.elem
    return {"related": [(f"'{name}' is made by a forward", made.loc)]
            + ([(f"'{root.name}' is declared {root.elem}", root.loc)] if same else []),
            "fix": f"pass the kernel's shape to the forward that makes '{name}', "
                   f".forward({shape}, ...) (the same bytes)"
                   + (f", or declare '{root.name}' with it if no forward between them gives "
                      "a shape of its own" if same else "") + f"; {other}"}


def _element_fix(elem: TensorType, want: TensorType) -> str:
    """The fix for a fifo element ``elem`` passed where a kernel takes a buffer ``want`` of
    another element type or size: what differs, said (the fix named the element type for a
    fifo of the right type and another size)."""
    if elem.dtype != want.dtype and elem.numel == want.numel:
        return (f"pass a fifo of the kernel's element type, {want.dtype}, or declare the kernel "
                f"for {elem}")
    if elem.dtype == want.dtype:
        return (f"pass a fifo of the kernel's {want.numel} elements ({want}), or declare the "
                f"kernel for {elem.numel} ({elem})")
    return f"pass a fifo of the kernel's type, {want}, or declare the kernel for {elem}"


def _sig(k: object) -> str:
    args = ", ".join(f"{a.name}: {a.type if a.type else a.dtype}" for a in k.args)  # type: ignore[attr-defined]
    return f"{k.symbol}({args})"  # type: ignore[attr-defined]
