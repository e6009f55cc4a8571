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
from aiedsl.ir.types import TensorType
from aiedsl.kernels.aie_names import aie_name
from aiedsl.kernels.call_checks import checked_calls
from aiedsl.kernels.call_ops import counted_design
from aiedsl.kernels.declare_checks import (
    _cascade_step, _check_cascade_words, _check_count_ops, _checked_args, _checked_cost,
    _checked_cost_text, _checked_params, check_roundings_apply, checked_roundings,
)
from aiedsl.kernels.prepared import Prepared
from aiedsl.kernels.profiled_cycles import profiled_design
from aiedsl.kernels.reference import run_checked
from aiedsl.lang.callables import check_callable
from aiedsl.lang.context import current_design, design_module
from aiedsl.lang.kernel_calls import call_kernel
from aiedsl.lang.names import check_defines, check_entry, check_line, check_source, check_symbol
from aiedsl.library_code import PACKAGE_DIR
from aiedsl.source_loc import caller_loc


@dataclass(frozen=True)
class Kernel:
    """A declared kernel; call it inside a core function to record a call.

    >>> from aiedsl import Tensor, i32
    >>> from aiedsl.kernels import reduce_sum
    >>> reduce_sum(16, 64)          # the call it takes, argument by argument  # doctest: +SKIP
    <kernel reduce_sum_i32_16x64(src: in 16x64xi32, dst: out 16xi32), C++ ...>
    """

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

    def __repr__(self) -> str:
        # the call a core function makes, argument by argument: the dataclass's own repr ran
        # to the whole IR, and a newcomer's tester printed kernels to find their argument order
        args = ", ".join(
            f"{a.name}: {a.access} {a.type}" if a.kind == "buffer" else f"{a.name}: {a.dtype}"
            for a in self.ir.args)
        return f"<kernel {self.symbol}({args}), C++ {self.ir.entry} in {self.ir.source}>"

    def __call__(self, *args: Any, **named: Any) -> None:
        """Record a call in the core being traced: arguments in the declared order, or by the
        names ``declare`` gave them (``scale_k(src, dst, f, n=TILE)``), as a Python call binds
        them; the IR holds them in order either way."""
        loc = caller_loc()
        trace = current_design(f"calling kernel '{self.symbol}'")
        trace.add_kernel(self.ir, self)
        if self.ir.cycles_source == "profile" or self.ir.ops_source == "per call":
            # before the steps that run the kernel with the calls' values: a wrong call (a
            # float for an int, an argument missing) is said as check says it, not as what
            # running the kernel with it made of it
            trace.finish.setdefault("calls checked", checked_calls)
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
            chained: bool = False, roundings: int = 1) -> Kernel:
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
    ``roundings=2`` (or more) says each result goes through that many roundings in one call:
    its own and those of the values it is a product or quotient of (a scale rounded to bf16,
    then the product rounded); each element may then be off by as many of its own ulps,
    relative (where ``chained=True`` allows an absolute error of the output's scale).

    ``arch`` (``"aie2"``, ``"aie2p"``) says the C++ variant and ``cycles`` are one
    architecture's: a design on another device refuses the kernel. A kernel profiled for its
    cycles takes the architecture of the design it was profiled in.
    """
    loc = caller_loc()
    # declared by aiedsl's library (its factories call declare): the C++ is aiedsl's own
    shipped = sys._getframe(1).f_code.co_filename.startswith(PACKAGE_DIR + os.sep)
    symbol = check_symbol(symbol, loc, aie_name)
    if source_kind not in ("file", "template"):
        raise DesignError("kernel source", f"kernel '{symbol}' has source_kind={source_kind!r}",
                          loc=loc, limit="'file' or 'template'", found=repr(source_kind),
                          fix="leave source_kind out for a C++ file")
    check_source(source, symbol, loc, template=source_kind == "template")
    if entry is not None:
        check_entry(entry, symbol, loc)
    macros = check_defines({} if defines is None else defines, symbol, loc)
    check_line(_checked_cost_text(symbol, cost, loc), f"cost of kernel '{symbol}'", loc)
    if arch not in (None, "aie2", "aie2p"):
        raise DesignError("kernel signature", f"kernel '{symbol}' has arch={arch!r}", loc=loc,
                          limit="'aie2' (npu1), 'aie2p' (npu2) or None (any)",
                          found=repr(arch), fix="leave arch out for C++ that builds for both")
    args = _checked_args(symbol, entry, args, loc)
    scalar_names = [a.name for a in args if a.kind == "scalar"]
    exact = check_flag(exact, "exact", loc, "give exact=True when the kernel only copies or "
                       "selects its inputs, or leave it out", rule="kernel signature")
    chained = check_flag(chained, "chained", loc, "give chained=True when the C++ rounds each "
                         "intermediate value to the output type, or leave it out",
                         rule="kernel signature")
    roundings = checked_roundings(symbol, roundings, exact, loc)
    count_ops = None
    if callable(ops) and not isinstance(ops, type):
        count_ops, ops = ops, 0
        _check_count_ops(symbol, count_ops, scalar_names, loc)
    cycles, ops = _checked_cost(symbol, cycles, ops, loc)
    params = _checked_params(symbol, params, args, loc)
    _check_cascade_words(symbol, cascade_in, cascade_out, loc)
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
                  chained=chained, roundings=roundings)
    check_roundings_apply(ir, loc)
    # cycles=None: profiled when the design that calls it is traced, with its calls' scalars
    # (aiedsl.kernels.profiled_cycles), not here, where no call is known yet
    return Kernel(ir, reference, prepared, count_ops)
