"""A kernel is one declaration: C symbol, C++ source, signature, numpy reference and cost.

Example
-------
::

    from aiedsl.kernels import declare, buffer, scalar

    add_one = declare(
        "add_one_i32_8", source="add_one.cc", entry="add_one<8>",
        args=[buffer("a", Tensor[8, i32]), buffer("b", Tensor[8, i32], "out"), scalar("n", i32)],
        reference=lambda a, b, n: b.__setitem__(..., a + 1),
        cycles=40, cost="8 elements, one vector op plus pipeline fill and drain")

Calling the kernel object inside a core function records a call: ``add_one(ta, tb, 8)``.

The parameters are :mod:`~aiedsl.kernels.args`'s, ``prepared=`` is a
:class:`~aiedsl.kernels.prepared.Prepared`, and ``cycles=None`` is
:mod:`~aiedsl.kernels.profiled_cycles`'s.
"""

from __future__ import annotations

import functools
import os
import sys

from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping, Sequence

from aiedsl.errors import DesignError
from aiedsl.flags import check_flag
from aiedsl.ir.kernel import Kernel as KernelIR, KernelArg
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import TensorType
from aiedsl.kernels.call_ops import counted_design
from aiedsl.kernels.prepared import Prepared
from aiedsl.kernels.profiled_cycles import profiled_design
from aiedsl.kernels.reference import run_checked
from aiedsl.lang.callables import check_callable
from aiedsl.lang.context import current_design, design_module
from aiedsl.lang.kernel_calls import _number, call_kernel
from aiedsl.lang.names import (check_argument, check_defines, check_entry, check_line,
                               check_name, check_source, check_symbol)
from aiedsl.lang.tensor import lookup_dtype
from aiedsl.library_code import PACKAGE_DIR
from aiedsl.source_loc import caller_loc
from aiedsl.targets import CASCADE_BITS
from aiedsl.values import as_int, shown


@dataclass(frozen=True)
class Kernel:
    """A declared kernel; call it inside a core function to record a call."""

    ir: KernelIR
    reference: Callable[..., Any]
    """numpy reference: ``reference(*args, **ir.reference_params)`` updates its output arrays in
    place."""
    prepared: Prepared | None = None
    """The reference split for sharing work between cores (library kernels), if it is."""
    count_ops: Callable[..., Any] | None = None
    """``ops=`` given as a function of the call's scalars (in their declared order): called
    once per set of values the design's calls pass, as it loads
    (:mod:`~aiedsl.kernels.call_ops`); None for a number."""

    @property
    def symbol(self) -> str:
        """The C symbol."""
        return self.ir.symbol

    def __call__(self, *args: Any, **named: Any) -> None:
        """Record a call in the core being traced: arguments in the declared order, or by the
        names ``declare`` gave them (``scale_k(src, dst, f, n=TILE)``), as a Python call binds
        them; the IR holds them in order either way."""
        loc = caller_loc()
        trace = current_design(f"calling kernel '{self.symbol}'")
        trace.add_kernel(self.ir, self)
        if self.ir.cycles_source == "profile":  # profiled once the design's calls are known
            trace.finish.setdefault("profiled cycles", profiled_design)
        if self.ir.ops_source == "per call":  # counted once the design's calls are known
            trace.finish.setdefault("operations per call", counted_design)
        call_kernel(self.symbol, self._bound(args, named, loc), loc, self.ir.args)

    def _bound(self, args: tuple[Any, ...], named: dict[str, Any], loc: Any) -> tuple[Any, ...]:
        """``args`` and then ``named`` in the order of the kernel's parameters.

        Names are unambiguous: ``declare`` refuses two parameters of one name. What Python's
        own binding refuses is refused here too, in the kernel's terms: a name the kernel has
        not, one given by position too, and a gap (a later parameter named, an earlier one
        not given at all), which no call of the C function can have. Parameters missing at
        the end are left to the signature check, as in a call by position.
        """
        if not named:
            return args
        params = [a.name for a in self.ir.args]
        order = ", ".join(params)
        for key in named:
            if key not in params:
                raise DesignError(
                    "kernel call", f"kernel '{self.symbol}' has no parameter '{key}'", loc=loc,
                    limit=f"its parameters, in order: {order}", found=f"{key}=",
                    fix=f"name one of its parameters ({order}), or pass the arguments by "
                    "position in that order")
            at = params.index(key)
            if at < len(args):
                raise DesignError(
                    "kernel call", f"parameter '{key}' of kernel '{self.symbol}' is given twice: "
                    f"as argument {at} and as {key}=", loc=loc,
                    limit=f"its parameters, in order: {order}", found=f"{key}=",
                    fix=f"give '{key}' once: by position or as {key}=, not both")
        last = max(params.index(key) for key in named)
        missing = [p for p in params[len(args):last] if p not in named]
        if missing:
            raise DesignError(
                "kernel call", f"the call of kernel '{self.symbol}' names "
                f"{', '.join(f'{k}=' for k in named)} but gives no {', '.join(missing)}", loc=loc,
                limit=f"every parameter up to the last one given (the C function takes them "
                f"in order: {order})", found=", ".join(f"{k}=" for k in named),
                fix=f"pass {', '.join(missing)} too: by position, or as "
                f"{', '.join(f'{p}=...' for p in missing)}")
        return args + tuple(named[p] for p in params[len(args):last + 1])

    def run_reference(self, *args: Any) -> None:
        """Run the numpy reference on buffers (numpy arrays) and scalars; a reference that
        returns a value, leaves an "out" buffer it got as poison untouched, or exits is a
        DesignError at its ``def`` (see :func:`~aiedsl.kernels.reference.run_checked`)."""
        run_checked(self.ir, self.reference,
                    functools.partial(self.reference, **self.ir.reference_params), args, True)

    def bound_reference(self) -> Callable[..., None]:
        """:meth:`run_reference` as one callable with the parameters bound once (the simulator
        calls it per kernel call: no keyword dictionary is built each time). Its first call
        alone looks at the "out" buffers (the later ones only check what it returns)."""
        ir, reference = self.ir, self.reference
        bound = functools.partial(reference, **ir.reference_params)
        first = [True]

        def call(*args: Any) -> None:
            looked, first[0] = first[0], False
            run_checked(ir, reference, bound, args, looked)

        return call

    def trial_reference(self, core: str, call: Any) -> Callable[..., None]:
        """The reference with its parameters bound and nothing checked, for the simulator's
        trial runs of a call that gets and puts on the cascade (its early words:
        :class:`~aiedsl.sim.cascade_stream.Early`), which run on copies."""
        return functools.partial(self.reference, **self.ir.reference_params)


def declare(symbol: str, *, source: str, entry: str | None = None, args: Sequence[KernelArg],
            reference: Callable[..., Any], cycles: int | None, cost: str,
            ops: int | Callable[..., Any] = 0,
            params: Mapping[str, int | float | str] | None = None,
            defines: Mapping[str, int | float | str] | None = None,
            source_kind: Literal["file", "template"] = "file",
            cascade_in: TensorType | None = None,
            cascade_out: TensorType | None = None,
            cascade_step: tuple[int, int] | None = None, prepared: Prepared | None = None,
            arch: Literal["aie2", "aie2p"] | None = None, exact: bool = False,
            chained: bool = False) -> Kernel:
    """Declare a kernel (see the module docstring).

    ``source`` names a C++ file (``source_kind="file"``): one beside the design file that
    declares the kernel (``source="add_one.cc"`` next to ``add1.py``), looked for first, else
    one of aiedsl's ``kernels_cpp/``; or a jinja2 template rendered with ``params``
    (``source_kind="template"``), beside the declaring file first, else in
    ``aiedsl/kernels/templates/``. aiedsl's own library kernels read only aiedsl's files: a
    user's copy of ``scale.cc`` beside the design is the user's. ``entry`` is the C++ call the
    generated ``extern "C"`` function makes, e.g. ``"matmul_bf16_f32<64, 64, 64>"``. Without
    ``entry`` (a file only), ``symbol`` is an ``extern "C"`` function the file defines itself,
    as mlir-aie's kernel files do (``matvec_scalar_i16_i32``), and cores call it directly:
    nothing is generated around it.

    ``defines={"BIT_WIDTH": 8}`` are macros every compile of the C++ gets (``-DBIT_WIDTH=8``,
    on Peano's command line and the host's): the sizes mlir-aie's kernel files read. Kernels of
    one file with the same defines are compiled into one object, which holds the file once.

    ``cascade_in``/``cascade_out`` declare what one call reads from and writes to the
    accumulator cascade (``get_scd``/``put_mcd`` in the C++), e.g. ``Tensor[64, 64, f32]``:
    whole 512-bit words of any element type (``Tensor[64, bf16]`` is two words of 32 bf16
    values each). The reference then takes them as extra arrays after the declared arguments:
    the cascade input (read it), then the cascade output (fill it). The stream moves bits: a
    get reads what its neighbour put as its own type, bit for bit. A kernel that gets and puts
    passes the stream through, its puts going out as its gets come in: word j of its put
    once ceil((j + 1) G / P) of its G words came in (a C++ that gets a word and puts a word),
    or, with ``cascade_step=(g, p)``, p words at a time once each next g words came in (a C++
    that gets g words, then puts p, over and over; ``(G, P)``: all of its get before any put).

    ``cycles=None`` takes the cycles per call from the kernel's profile (its C++ run on the
    host, ``aiedsl kernel profile``: the busiest unit's cycles, a bound at best), made when
    the design calling it is traced: once per set of scalar values its calls pass, each call
    charged its own. A scalar a call reads from an rtp slot takes its ``params`` value (else
    the runtime sequence's first write into the slot). The report and the simulator say
    which kernels' cycles came from there, and with which values.

    ``ops`` is one call's arithmetic (a multiply-accumulate counting 2), for the throughput
    the simulator reports; for a kernel whose work varies with its scalars, a function of them,
    taking them in their declared order (``ops=lambda n: 2 * n``): called as the design
    loads, once per set of values its calls pass (a value read from an rtp slot as
    ``cycles=None`` takes it), each call counting its own.

    ``prepared`` splits the reference so the simulator can share its first step between cores
    that receive the same fill (see :class:`Prepared`); it must compute exactly what
    ``reference`` does.

    ``exact=True`` says the kernel's results are copies or selections of its inputs (a copy,
    relu, a max): it rounds nothing, so an output it passes on keeps the tolerance of what it
    was given (see :func:`aiedsl.ir.program.rounding`). ``chained=True`` says its C++ rounds
    intermediate values of its results' scale to the output type (a norm's centred value and
    scale, each rounded to bf16 before the product): one call's result may carry several
    roundings, compared as a chain of kernels is.

    ``arch`` (``"aie2"``, ``"aie2p"``) says the C++ variant and ``cycles`` are one
    architecture's: a design on another device refuses the kernel. A kernel profiled for its
    cycles takes the architecture of the design it was profiled in.
    """
    loc = caller_loc()
    # declared by aiedsl's library (its factories call declare): the C++ is aiedsl's own
    shipped = sys._getframe(1).f_code.co_filename.startswith(PACKAGE_DIR + os.sep)
    symbol = check_symbol(symbol, loc)
    if source_kind not in ("file", "template"):
        raise DesignError("kernel source", f"kernel '{symbol}' has source_kind={source_kind!r}",
                          loc=loc, limit="'file' or 'template'", found=repr(source_kind),
                          fix="leave source_kind out for a C++ file")
    if source_kind == "file":
        check_source(source, symbol, loc)
    if entry is not None or source_kind == "template":
        check_entry(entry, symbol, loc)
    macros = check_defines({} if defines is None else defines, symbol, loc)
    check_line(cost, f"cost of kernel '{symbol}'", loc)
    if arch not in (None, "aie2", "aie2p"):
        raise DesignError("kernel signature", f"kernel '{symbol}' has arch={arch!r}", loc=loc,
                          limit="'aie2' (npu1), 'aie2p' (npu2) or None (any)",
                          found=repr(arch), fix="leave arch out for C++ that builds for both")
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
    scalar_names = [a.name for a in args if a.kind == "scalar"]
    exact = check_flag(exact, "exact", loc, "give exact=True when the kernel only copies or "
                       "selects its inputs, or leave it out", rule="kernel signature")
    chained = check_flag(chained, "chained", loc, "give chained=True when the C++ rounds each "
                         "intermediate value to the output type, or leave it out",
                         rule="kernel signature")
    count_ops = None
    if callable(ops) and not isinstance(ops, type):
        count_ops, ops = ops, 0
        _check_count_ops(symbol, count_ops, scalar_names, loc)
    for what, value, least in (("cycles", 1 if cycles is None else cycles, 1), ("ops", ops, 0)):
        count = as_int(value)  # numpy's integers too
        if count is None or count < least:
            raise DesignError("kernel cost", f"kernel '{symbol}' has {what}={shown(value)}",
                              loc=loc, limit=f"an integer >= {least}", found=shown(value),
                              fix=f"give {what} as a whole number per call"
                              + (" (a call takes time: the simulator charges these cycles)"
                                 if least else ""))
    cycles = None if cycles is None else as_int(cycles)  # as plain ints
    ops = as_int(ops) or 0
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
    step = _cascade_step(symbol, cascade_step, cascade_in, cascade_out, loc)
    n_cascade = (cascade_in is not None) + (cascade_out is not None)
    scalars = {a.name for a in args if a.kind == "scalar"}  # as KernelIR.reference_params
    check_callable(reference, len(args) + n_cascade, f"the reference of kernel '{symbol}'", loc,
                   keywords={k: v for k, v in params.items() if k not in scalars})
    ref = f"{design_module(reference.__module__)}:{reference.__qualname__}"
    ir = KernelIR(symbol=symbol, source=source, source_kind=source_kind, shipped=shipped,
                  entry=entry,
                  defines=macros, args=tuple(args), params=params, reference=ref,
                  cycles=cycles or 0, cycles_source="profile" if cycles is None else "declared",
                  ops=ops, ops_source="declared" if count_ops is None else "per call",
                  cost=cost, cascade_in=cascade_in,
                  cascade_out=cascade_out, cascade_step=step, loc=loc, arch=arch, exact=exact,
                  chained=chained)
    # cycles=None: profiled when the design that calls it is traced, with its calls' scalars
    # (aiedsl.kernels.profiled_cycles), not here, where no call is known yet
    return Kernel(ir, reference, prepared, count_ops)


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
    top = float(ml_dtypes.finfo(d.numpy).max)
    if not (math.isfinite(value) and -top <= value <= top):
        raise DesignError(
            "kernel signature", f"parameter '{key}' of kernel '{symbol}' is {value!r}",
            loc=loc, limit=f"a finite {d.name}: -{top:g} to {top:g}", found=repr(value),
            fix=f"give scalar '{key}' a value {d.name} holds")
    return value


def _short(value: object) -> str:
    """``repr(value)``, cut to a line."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _cascade_step(symbol: str, step: Any, cascade_in: TensorType | None,
                  cascade_out: TensorType | None, loc: Loc) -> tuple[int, int] | None:
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
