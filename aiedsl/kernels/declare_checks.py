"""What :func:`~aiedsl.kernels.base.declare` checks of its arguments beyond their names:
the arguments (:func:`_checked_args`), ``cycles=`` and ``ops=`` (:func:`_checked_cost`,
:func:`_check_count_ops`), ``params=`` (:func:`_checked_params`: a scalar's test value of its
type, and of its ``narrows_to=``), and the cascade's words (:func:`_check_cascade_words`,
:func:`_cascade_step`). Each refusal is a DesignError at the ``declare`` line.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from aiedsl.errors import DesignError
from aiedsl.ir.kernel import MOST_ROUNDINGS, Kernel as KernelIR, KernelArg
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import TensorType
from aiedsl.lang.callables import check_callable
from aiedsl.lang.kernel_calls import _number
from aiedsl.lang.names import check_argument, check_line, check_name
from aiedsl.dtypes import dtype as dtype_of
from aiedsl.lang.tensor import lookup_dtype
from aiedsl.targets import CASCADE_BITS
from aiedsl.values import as_int, shown


def _checked_args(symbol: str, entry: str | None, args: Sequence[KernelArg],
                  loc: Loc | None) -> list[KernelArg]:
    """``args=`` of kernel ``symbol`` as a list: each a :class:`~aiedsl.ir.kernel.KernelArg`
    (``buffer(...)`` or ``scalar(...)``) of a name ``entry`` can take, no two of one name."""
    args = list(args)
    for i, a in enumerate(args):
        if not isinstance(a, KernelArg):
            raise DesignError("kernel signature", f"args[{i}] of kernel '{symbol}' is "
                              f"{type(a).__name__} {_short(a)}", loc=loc,
                              limit="buffer(...) and scalar(...) entries", found=_short(a),
                              fix="declare each argument with buffer(name, type) or "
                                  "scalar(name, dtype)")
        check_argument(a.name, symbol, entry, loc)
    names = [a.name for a in args]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise DesignError("kernel signature", f"kernel '{symbol}' has two arguments named "
                          f"'{twice}'", loc=loc, limit="one name per argument", found=twice,
                          fix="give each argument its own name")
    return args


def _checked_cost(symbol: str, cycles: Any, ops: Any, loc: Loc) -> tuple[int | None, int]:
    """``cycles=`` and ``ops=`` (a number: a function of the scalars is
    :func:`_check_count_ops`'s) of kernel ``symbol`` as plain ints: whole numbers, at least 1
    cycle and 0 operations a call (``cycles=None``, profiled later, stays None)."""
    for what, value, least in (("cycles", 1 if cycles is None else cycles, 1), ("ops", ops, 0)):
        count = as_int(value)  # numpy's integers too
        if what == "cycles" and callable(value):
            # ops= takes a function of the scalars; cycles that vary with them come from the
            # kernel's profile, one per set of values its calls pass
            raise DesignError(
                "kernel cost", f"kernel '{symbol}' has cycles= a function", loc=loc,
                limit="an integer >= 1, or None", found=f"cycles={_function_name(value)}",
                fix="give cycles as a whole number per call, or cycles=None: the kernel is "
                    "then profiled as the design loads, once per set of scalar values its "
                    "calls pass, and each call charged its own values' cycles (a function "
                    "is taken by ops=, not cycles=)")
        if count is None or count < least:
            raise DesignError("kernel cost", f"kernel '{symbol}' has {what}={shown(value)}",
                              loc=loc, limit=f"an integer >= {least}", found=shown(value),
                              fix=f"give {what} as a whole number per call"
                              + (" (a call takes time: the simulator charges these cycles)"
                                 if least else ""))
    cycles = None if cycles is None else as_int(cycles)  # as plain ints
    ops = as_int(ops) or 0
    return cycles, ops


def _function_name(f: Callable[..., Any]) -> str:
    """A function as a message names it: its name, ``a lambda`` for one."""
    name = getattr(f, "__name__", "")
    return "a lambda" if name in ("", "<lambda>") else name


def _checked_cost_text(symbol: str, cost: object, loc: Loc) -> str:
    """``cost=`` of kernel ``symbol``: text, the one-line reason for its cycles that reports
    print beside them (``32 cycles per call (...)``), so neither empty nor another type (the
    text check's fix, to remove line breaks, was wrong for None or a number)."""
    limit = ("text: the one-line reason for the kernel's cycles, printed beside them in the "
             "report and the simulator's timing")
    fix = ('say where the cycles come from, e.g. cost="n/16 vector adds + 14 for the call" '
           '(with cycles=None, cost="profiled")')
    if not isinstance(cost, str):
        raise DesignError("kernel cost", f"kernel '{symbol}' has cost={shown(cost)}, not text",
                          loc=loc, limit=limit, found=f"{shown(cost)} ({type(cost).__name__})",
                          fix=fix)
    if not cost.strip():
        raise DesignError("kernel cost", f"kernel '{symbol}' has an empty cost=", loc=loc,
                          limit=limit, found=repr(cost), fix=fix)
    return cost


def _check_count_ops(symbol: str, count: Callable[..., Any], scalars: list[str],
                     loc: Any) -> None:
    """``ops=`` given as function ``count`` of kernel ``symbol``'s scalars ``scalars``: the
    kernel has scalars to count with, and it takes them (in their declared order)."""
    if not scalars:
        raise DesignError(
            "kernel cost", f"kernel '{symbol}' has ops= a function, but no scalar argument to "
            "call it with", loc=loc, limit="ops= a number, or a function of the call's scalar "
            "arguments (the work of a call that varies with them)",
            found=f"ops={getattr(count, '__name__', 'a function')}, no scalar(...) in args",
            fix="give ops= as a whole number per call: every call of a kernel without scalars "
                "does the same work")
    check_callable(count, len(scalars), f"ops= of kernel '{symbol}'", loc,
                   rule="kernel cost", takes=f"the kernel's scalars in order: "
                   f"{', '.join(scalars)}")


def _checked_params(symbol: str, params: Mapping[str, int | float | str] | None,
                    args: Sequence[KernelArg], loc: Loc | None) -> dict[str, int | float | str]:
    """``params=`` of kernel ``symbol`` as a dict of plain values: names, ints and one-line
    strings, and for each scalar of ``args`` it names, a test value its type holds."""
    if params is not None and not isinstance(params, dict):
        raise DesignError("kernel signature", f"kernel '{symbol}' has params={params!r}",
                          loc=loc, limit="a dict of template parameters", found=repr(params),
                          fix="write e.g. params={'n': 256}")
    params = dict(params or {})
    scalar_types = {a.name: a.dtype for a in args if a.kind == "scalar"}
    for key, setting in params.items():
        check_name(key, f"parameter of kernel '{symbol}'", loc)
        number = None if isinstance(setting, bool) else _number(setting)
        if key in scalar_types and number is not None:  # numpy's too, as a call takes them
            params[key] = (_float_param(symbol, key, number, scalar_types[key], loc)
                           if isinstance(number, float) else number)
        elif isinstance(setting, str):
            check_line(setting, f"parameter '{key}' of kernel '{symbol}' =", loc, limit=100)
        elif (integer := as_int(setting)) is not None:
            params[key] = integer  # numpy's integers as plain ints
        else:
            limit, fix = "an int or a str", "pass sizes and names as ints and strings"
            if key in scalar_types:
                limit = (f"a number, the test value of scalar '{key}' "
                         f"({scalar_types[key]})")
                fix = f"give scalar '{key}' a value its type holds, e.g. params={{'{key}': 2}}"
            raise DesignError("kernel signature", f"parameter '{key}' of kernel '{symbol}' is "
                              f"{shown(setting)}", loc=loc, limit=limit, found=shown(setting),
                              fix=fix)
    _check_narrowed_params(symbol, args, params, loc)
    return params


def _check_narrowed_params(symbol: str, args: Sequence[KernelArg],
                           params: dict[str, int | float | str], loc: Any) -> None:
    """``params=`` values of scalars declared with ``narrows_to=`` must lie in that type's
    range, as a call's constant must (``check``): ``kernel test`` and the profiles run the C++
    with them, which would keep only their low bits (a scalar ``equals=`` fixes takes that
    value, whatever ``params=`` says)."""
    from aiedsl.ir.scalar_rules import value_rule as _value_rule

    for a in args:
        value = params.get(a.name)
        if a.kind != "scalar" or a.equals is not None or a.narrows_to is None \
                or not isinstance(value, (int, float)):
            continue
        rule = _value_rule(a)
        if rule is not None and not rule[0] <= value <= rule[1]:
            lo, hi, what, limit, want = rule
            raise DesignError(
                "kernel signature", f"scalar '{a.name}' of kernel '{symbol}' {what}, but "
                f"params= gives {value!r}", loc=loc, limit=limit, found=repr(value),
                fix=f"give {want} (params={{'{a.name}': ...}})")


def _float_param(symbol: str, key: str, value: float, dt: str, loc: Any) -> float:
    """``params={key: value}`` giving float ``value`` to scalar ``key`` of type ``dt``: a
    float scalar takes a finite value its type holds; an integer scalar none (the C++ would
    get it truncated)."""
    import math

    import ml_dtypes

    d = lookup_dtype(dt, loc)
    if not d.is_float:
        raise DesignError(
            "kernel signature", f"parameter '{key}' of kernel '{symbol}' is {value!r}, but "
            f"scalar '{key}' is {d.name}", loc=loc, limit=f"an int, as scalar '{key}' is "
            f"{d.name}", found=repr(value),
            fix=f"give a whole number (params={{'{key}': {int(value)}}}), or declare "
                f"scalar('{key}', f32) if the C++ takes a float")
    from aiedsl.ir.scalar_rules import scalar_range

    lo, hi = scalar_range(d.name)  # a value rounding to the largest finite one is taken
    if not (math.isfinite(value) and lo <= value <= hi):
        top = str(d.numpy(ml_dtypes.finfo(d.numpy).max))  # (digits that tell it apart)
        raise DesignError(
            "kernel signature", f"parameter '{key}' of kernel '{symbol}' is {value!r}",
            loc=loc, limit=f"a finite {d.name}: -{top} to {top}", found=repr(value),
            fix=f"give scalar '{key}' a value {d.name} holds")
    return value


def _check_cascade_words(symbol: str, cascade_in: TensorType | None,
                         cascade_out: TensorType | None, loc: Loc | None) -> None:
    """``cascade_in=`` and ``cascade_out=`` of kernel ``symbol`` are Tensors of whole cascade
    words (or None)."""
    for what, t in (("cascade_in", cascade_in), ("cascade_out", cascade_out)):
        if t is None or isinstance(t, TensorType) and not t.nbytes * 8 % CASCADE_BITS:
            continue
        # mlir-aie's PutCascadeOp::verify and GetCascadeOp::verify ask only that a cascade
        # value be the target's cascade width in bits (getAccumulatorCascadeSize), whatever
        # its element type; llvm-aie's put_mcd / get_scd_* move 512-bit vectors of every type
        tensor = isinstance(t, TensorType)
        per = CASCADE_BITS // (8 * t.dt.itemsize) if tensor else CASCADE_BITS // 32
        dt = t.dtype if tensor else "f32"
        whole = -(-t.numel // per) * per if tensor else 64 * 64
        raise DesignError(
            "kernel signature", f"kernel '{symbol}' has {what}={t}", loc=loc,
            limit=f"a Tensor whose values fill whole {CASCADE_BITS}-bit cascade words, of any "
            f"element type ({per} {dt} values a word; mlir-aie's PutCascadeOp and "
            f"GetCascadeOp take any {CASCADE_BITS}-bit value)",
            found=f"{t}: {t.nbytes * 8} bits" if tensor else shown(t),
            fix=f"write e.g. {what}=Tensor[{whole}, {dt}]")


def _cascade_step(symbol: str, step: Any, cascade_in: TensorType | None,
                  cascade_out: TensorType | None, loc: Loc | None) -> tuple[int, int] | None:
    """``cascade_step=`` as plain ints, or a DesignError: (g, p) for a kernel that gets and
    puts, g dividing the words it gets and p those it puts, in as many steps."""
    if step is None:
        return None
    shown_step = shown(step)
    if cascade_in is None or cascade_out is None:
        raise DesignError(
            "kernel signature", f"kernel '{symbol}' has cascade_step={shown_step} but "
            f"{'no cascade_in' if cascade_in is None else 'no cascade_out'}", loc=loc,
            limit="cascade_step= says how a kernel that gets and puts interleaves them",
            found=f"cascade_step={shown_step}", fix="leave cascade_step out")
    words = (cascade_in.nbytes * 8 // CASCADE_BITS, cascade_out.nbytes * 8 // CASCADE_BITS)
    pair = tuple(as_int(v) for v in step) if isinstance(step, (tuple, list)) else ()
    if (len(pair) != 2 or any(v is None or v < 1 for v in pair)
            or words[0] % pair[0] or words[1] % pair[1]  # type: ignore[operator]
            or words[0] // pair[0] != words[1] // pair[1]):  # type: ignore[operator]
        raise DesignError(
            "kernel signature", f"kernel '{symbol}' has cascade_step={shown_step}", loc=loc,
            limit=f"(g, p): the C++ gets g words, then puts p, over and over, through its "
            f"{words[0]} words got and {words[1]} put (g divides {words[0]}, p divides "
            f"{words[1]}, as many times each)", found=f"cascade_step={shown_step}",
            fix=f"write e.g. cascade_step=({words[0]}, {words[1]}) (every word got before the "
            "first put), or leave it out for a kernel that gets and puts word by word")
    return (int(pair[0]), int(pair[1]))  # type: ignore[arg-type]


def _short(value: object) -> str:
    """``repr(value)``, cut to a line."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def checked_roundings(symbol: str, roundings: object, exact: bool, loc: Loc) -> int:
    """``roundings=`` of kernel ``symbol``: a whole number from 1 to :data:`MOST_ROUNDINGS`,
    and 1 for a kernel declared ``exact`` (which rounds nothing)."""
    n = as_int(roundings)
    if n is None or isinstance(roundings, bool) or not 1 <= n <= MOST_ROUNDINGS:
        raise DesignError(
            "kernel signature", f"kernel '{symbol}': roundings={shown(roundings)}", loc=loc,
            limit=f"a whole number from 1 to {MOST_ROUNDINGS}: how many roundings each result "
            "goes through in one call", found=shown(roundings),
            fix="count the result's own rounding and that of each value it is a product or "
            "quotient of (a scale rounded to bf16, then the product: roundings=2)")
    if exact and n > 1:
        raise DesignError(
            "kernel signature", f"kernel '{symbol}' is declared exact=True and roundings={n}",
            loc=loc, limit="an exact kernel (a copy, relu, max) rounds nothing",
            found=f"exact=True, roundings={n}", fix="leave one of them out")
    return n


def check_roundings_apply(ir: KernelIR, loc: Loc) -> None:
    """``roundings=`` above 1 only where the comparison uses it: a kernel that sums gets a
    sum's allowance instead, and integers match exactly (a reviewer: it was taken and
    ignored)."""
    if ir.roundings == 1:
        return
    floats = [a for a in ir.args if a.kind == "buffer" and a.access != "in"
              and dtype_of(a.dtype).is_float]
    why = ("it sums into what it writes (an accumulator, a reduction or a cascade), whose "
           "outputs get a sum's allowance" if ir.sums else
           None if floats else "it writes no float buffer: integers must match exactly")
    if why is not None:
        raise DesignError(
            "kernel signature", f"kernel '{ir.symbol}' declares roundings={ir.roundings}, "
            f"which its comparison does not use: {why}", loc=loc,
            limit="roundings= for a kernel whose float results each go through that many "
            "roundings, without summing", found=f"roundings={ir.roundings}",
            fix="leave roundings= out")
