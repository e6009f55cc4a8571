"""A kernel is one declaration: C symbol, C++ source, signature, numpy reference and cost.

Example
-------
::

    from aiedsl.kernels import declare, buffer, scalar

    add_one = declare(
        "add_one_i32_8", source="add_one.cc", entry="add_one<8>",
        args=[buffer("a", Tensor[8, i32]), buffer("b", Tensor[8, i32], "out"), scalar("n", i32)],
        reference=lambda a, b, n: b.__setitem__(..., a + 1),
        cycles=40, cost="8 elements, one vector op plus call overhead")

Calling the kernel object inside a core function records a call: ``add_one(ta, tb, 8)``.
"""

from __future__ import annotations

import functools

from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, Sequence

from aiedsl.dtypes import DType
from aiedsl.errors import DesignError, counted
from aiedsl.ir import Kernel as KernelIR
from aiedsl.ir import KernelArg, TensorType
from aiedsl.kernels.faults import Stray
from aiedsl.kernels.reference import run_checked
from aiedsl.lang.callables import check_callable
from aiedsl.lang.context import current_design, design_module
from aiedsl.lang.core import _number, call_kernel
from aiedsl.lang.names import (check_argument, check_defines, check_entry, check_line,
                               check_name, check_source, check_symbol)
from aiedsl.lang.tensor import lookup_dtype
from aiedsl.source_loc import caller_loc
from aiedsl.values import as_int, shown


def buffer(name: str, type: TensorType, access: Literal["in", "out", "inout"] = "in", *,
           blocks: tuple[int, int] | None = None) -> KernelArg:
    """A buffer parameter: ``access`` is ``"in"``, ``"out"`` or ``"inout"``.

    ``blocks=(br, bc)`` states that the kernel reads (or writes) the 2-D tile in ``br x bc``
    blocks, as :func:`~aiedsl.kernels.layout.block_dims` packs it; ``aiedsl check`` then
    verifies that the fifo's DMA layouts deliver exactly that order.

    Example: ``buffer("a", Tensor[64, 64, bf16], blocks=(4, 8))``
    """
    loc = caller_loc()
    check_name(name, "kernel argument", loc)
    if not isinstance(type, TensorType):
        raise DesignError("kernel signature", f"buffer '{name}' has the type {type!r}", loc=loc,
                          limit="a Tensor[...] type", found=repr(type),
                          fix=f'write e.g. buffer("{name}", Tensor[1024, i32])')
    if access not in ("in", "out", "inout"):
        raise DesignError("kernel signature", f"buffer '{name}' has access={access!r}", loc=loc,
                          limit="'in', 'out' or 'inout'", found=repr(access),
                          fix="say whether the kernel reads it, writes it, or both")
    if blocks is not None and not _divides_blocks(type, blocks):
        raise DesignError("kernel signature", f"buffer '{name}' ({type}) has blocks="
                          f"{shown(blocks)}", loc=loc,
                          limit="(block rows, block cols) dividing a 2-D tile",
                          found=shown(blocks), fix="give blocks that tile the buffer's 2-D shape")
    if blocks is not None:  # plain ints: numpy's given too
        blocks = (as_int(blocks[0]) or 0, as_int(blocks[1]) or 0)
    return KernelArg(name=name, kind="buffer", type=type, dtype=type.dtype, access=access,
                     blocks=blocks)


def _divides_blocks(t: TensorType, blocks: object) -> bool:
    if not (isinstance(blocks, tuple) and len(blocks) == 2 and len(t.shape) == 2):
        return False
    sizes = [as_int(b) for b in blocks]  # numpy's integers too
    return all(b is not None and b > 0 and s % b == 0 for b, s in zip(sizes, t.shape))


def scalar(name: str, dt: DType | str | Any, *, equals: int | None = None,
           narrows_to: DType | str | Any | None = None) -> KernelArg:
    """A scalar parameter passed by value: ``scalar("n", i32)`` (or ``np.int32``).

    ``equals=1024`` says 1024 is the one value the kernel is right for: its C++ is compiled for
    it and ignores the argument (an element count fixed by a template parameter), or reads it
    but its buffers are sized for it (a Riallto kernel's width): ``aiedsl check`` then refuses
    any other value.
    ``narrows_to=i16`` says the C++ converts the scalar to that narrower type before using it
    (``(int16_t)s``): ``aiedsl check`` then refuses a value outside its range, which would wrap
    on the NPU. Both hold for a value passed by a core and for every ``rt.rtp_write`` into an
    rtp slot a core passes.
    """
    loc = caller_loc()
    name = check_name(name, "kernel argument", loc)
    d = lookup_dtype(dt, loc)
    if equals is not None and d.is_float:
        raise DesignError("kernel signature", f"scalar '{name}' ({d.name}) has "
                          f"equals={equals!r}, which is for integer scalars", loc=loc,
                          limit="equals= on an integer scalar (an element count)",
                          found=d.name, fix="declare the scalar with an integer type, or leave "
                          "equals= out")
    if equals is not None and as_int(equals) is None:
        raise DesignError("kernel signature", f"scalar '{name}' has equals={shown(equals)}",
                          loc=loc, limit="an int", found=shown(equals),
                          fix="give the one value the C++ is compiled for")
    equals = None if equals is None else as_int(equals)  # numpy's integers as plain ints
    narrow = None if narrows_to is None else lookup_dtype(narrows_to, loc)
    if narrow is not None and narrow.is_float != d.is_float:
        raise DesignError("kernel signature", f"scalar '{name}' ({d.name}) has "
                          f"narrows_to={narrow.name}", loc=loc,
                          limit=f"{'a float' if d.is_float else 'an integer'} type, as "
                          f"{d.name} is", found=narrow.name,
                          fix="give the type the C++ converts the scalar to, or leave it out")
    return KernelArg(name=name, kind="scalar", dtype=d.name, equals=equals,
                     narrows_to=None if narrow is None else narrow.name)


@dataclass(frozen=True)
class Prepared:
    """A kernel's reference in two steps, so the simulator can share the first between cores.

    ``operands`` maps positions of input buffers to pure functions of their contents, and
    ``finish`` does the rest: ``finish(*[operands[i](x) if i in operands else x ...])`` does
    exactly what ``reference(*args, **params)`` does. When a broadcast fill brings the same
    data to several cores, the simulator makes each operand once per fill (e.g. matmul's A tile
    unblocked and widened to f32 once for the four cores of a row) and hands the others the
    same, read-only, array.
    """

    operands: dict[int, Callable[[Any], Any]]
    finish: Callable[..., None]
    accumulator: Accumulator | None = None
    """How the kernel may keep one output in a layout of its own between calls, if it may."""
    reorders: dict[int, Reorder] = field(default_factory=dict)
    """The operands that only move and widen elements, and how (see :class:`Reorder`)."""


@dataclass(frozen=True, eq=False)
class Reorder:
    """An operand function that only moves elements and widens them: ``operands[i](x)`` is
    ``x.reshape(-1)[order].astype(dtype).reshape(shape)``, exactly.

    When a buffer holds data a DMA gathered in an order of its own (a memtile packing mmul
    blocks), the simulator then makes the operand from the data before that gather in one
    step, the two orders composed (often to none: the kernel unpacks what the memtile packed).
    """

    order: Any
    """Where each element of the operand comes from (indices into the flat buffer)."""
    dtype: Any
    shape: tuple[int, ...]


@dataclass(frozen=True)
class Accumulator:
    """An output a kernel only adds into, kept by the simulator in the kernel's own layout
    from call to call on the same buffer (matmul's C row-major, not in mmul blocks), and
    written back to the buffer before anything else reads it: the core releases it, or
    another call takes it.

    ``load(buffer)`` makes the private copy, ``store(acc, buffer)`` writes it back, and
    ``finish(*args)`` (with the private copy at ``position``) adds one call's result into it;
    load, one or more finishes and store must leave the buffer bit for bit as the same calls
    of ``Prepared.finish`` do.
    """

    position: int
    load: Callable[[Any], Any]
    store: Callable[[Any, Any], None]
    finish: Callable[..., None]


@dataclass(frozen=True)
class Kernel:
    """A declared kernel; call it inside a core function to record a call."""

    ir: KernelIR
    reference: Callable[..., Any]
    """numpy reference: ``reference(*args, **ir.reference_params)`` updates its output arrays in
    place."""
    prepared: Prepared | None = None
    """The reference split for sharing work between cores (library kernels), if it is."""

    @property
    def symbol(self) -> str:
        """The C symbol."""
        return self.ir.symbol

    def __call__(self, *args: Any, **named: Any) -> None:
        """Record a call in the core being traced: arguments in the declared order, or by the
        names ``declare`` gave them (``scale_k(src, dst, f, n=TILE)``), as a Python call binds
        them; the IR holds them in order either way."""
        loc = caller_loc()
        current_design(f"calling kernel '{self.symbol}'").add_kernel(self.ir, self)
        call_kernel(self.symbol, self._bound(args, named, loc), loc)

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


def declare(symbol: str, *, source: str, entry: str | None = None, args: Sequence[KernelArg],
            reference: Callable[..., Any], cycles: int | None, cost: str, ops: int = 0,
            params: Mapping[str, int | float | str] | None = None,
            defines: Mapping[str, int | float | str] | None = None,
            source_kind: Literal["file", "template"] = "file",
            cascade_in: TensorType | None = None,
            cascade_out: TensorType | None = None, prepared: Prepared | None = None,
            arch: Literal["aie2", "aie2p"] | None = None, exact: bool = False) -> Kernel:
    """Declare a kernel (see the module docstring).

    ``source`` names a file in ``kernels_cpp/`` (``source_kind="file"``) or a template in
    ``aiedsl/kernels/templates/``; ``entry`` is the C++ call the generated ``extern "C"``
    function makes, e.g. ``"matmul_bf16_f32<64, 64, 64>"``. Without ``entry`` (a file only),
    ``symbol`` is an ``extern "C"`` function the file defines itself, as mlir-aie's kernel files
    do (``matvec_scalar_i16_i32``), and cores call it directly: nothing is generated around it.

    ``defines={"BIT_WIDTH": 8}`` are macros every compile of the C++ gets (``-DBIT_WIDTH=8``,
    on Peano's command line and the host's): the sizes mlir-aie's kernel files read. Kernels of
    one file with the same defines are compiled into one object, which holds the file once.

    ``cascade_in``/``cascade_out`` declare what one call reads from and writes to the
    accumulator cascade (``get_scd``/``put_mcd`` in the C++), e.g. ``Tensor[64, 64, f32]``:
    whole 512-bit words of 32-bit values. The reference then takes them as extra arrays after
    the declared arguments: the cascade input (read it), then the cascade output (fill it).

    ``cycles=None`` takes the cycles per call from the kernel's profile (its C++ run once on
    the host, ``aiedsl kernel profile``: the busiest unit's cycles, a bound at best), with the
    scalars of ``params``; the simulator says which kernels' cycles came from there.

    ``prepared`` splits the reference so the simulator can share its first step between cores
    that receive the same fill (see :class:`Prepared`); it must compute exactly what
    ``reference`` does.

    ``exact=True`` says the kernel's results are copies or selections of its inputs (a copy,
    relu, a max): it rounds nothing, so an output it passes on keeps the tolerance of what it
    was given (see :func:`aiedsl.ir.program.rounding`).

    ``arch`` (``"aie2"``, ``"aie2p"``) says the C++ variant and ``cycles`` are one
    architecture's: a design on another device refuses the kernel. A kernel profiled for its
    cycles takes the architecture it was profiled on.
    """
    loc = caller_loc()
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
    for what, t in (("cascade_in", cascade_in), ("cascade_out", cascade_out)):
        if t is None:
            continue
        if not isinstance(t, TensorType) or t.dt.itemsize != 4 or t.nbytes % 64:
            raise DesignError(
                "kernel signature", f"kernel '{symbol}' has {what}={t}", loc=loc,
                limit="a Tensor of 32-bit values (f32 or i32) filling whole 512-bit cascade "
                "words (16 values each)", found=str(t),
                fix=f"write e.g. {what}=Tensor[64, 64, f32]")
    n_cascade = (cascade_in is not None) + (cascade_out is not None)
    scalars = {a.name for a in args if a.kind == "scalar"}  # as KernelIR.reference_params
    check_callable(reference, len(args) + n_cascade, f"the reference of kernel '{symbol}'", loc,
                   keywords={k: v for k, v in params.items() if k not in scalars})
    ref = f"{design_module(reference.__module__)}:{reference.__qualname__}"
    ir = KernelIR(symbol=symbol, source=source, source_kind=source_kind, entry=entry,
                  defines=macros, args=tuple(args), params=params, reference=ref,
                  cycles=cycles or 0, ops=ops, cost=cost, cascade_in=cascade_in,
                  cascade_out=cascade_out, loc=loc, arch=arch, exact=exact)
    if cycles is None:
        ir = _profiled(ir, reference)
    return Kernel(ir, reference, prepared)


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


def _profiled(ir: KernelIR, reference: Callable[..., Any]) -> KernelIR:
    """``ir`` with the cycles its profile gives (the kernel declared no ``cycles=``): its C++
    run once on the host, on random inputs, with the scalars of its ``params``."""
    from aiedsl.kernels.text import kernel_text
    from aiedsl.kernels.cases import KernelCase
    from aiedsl.kernels.profile import profile_case
    from aiedsl.lang.context import _DESIGN
    from aiedsl.targets import get_target

    # a scalar's value: its params= entry, or the one value equals= allows
    given = {a.name: ir.params[a.name] if a.name in ir.params else a.equals
             for a in ir.args if a.kind == "scalar"}
    missing = [n for n, v in given.items() if v is None]
    if missing:
        raise DesignError(
            "kernel cost", f"kernel '{ir.symbol}' has no cycles= and no value for its scalar "
            f"{', '.join(repr(m) for m in missing)} to profile it with", loc=ir.loc,
            found="cycles=None", fix="give cycles=, or params={"
            + ", ".join(f"'{m}': ..." for m in missing) + "} to profile it with")
    trace = _DESIGN.get()
    target = trace.target if trace is not None else get_target("npu1")
    scalars = dict(given)
    case = KernelCase(ir, kernel_text(None, ir), reference, scalars)  # type: ignore[arg-type]
    prof = profile_case(case, target)
    if not prof.ran:  # crashed or hung in its child: no counts to take cycles from
        raise DesignError(
            "kernel cost", f"kernel '{ir.symbol}' has no cycles=, and the run of its C++ that "
            f"profiles it {prof.faults[0]}", loc=ir.loc,
            limit="a kernel profiled for its cycles (cycles=None) returns from its call on the "
            "host", found=f"cycles=None; {prof.faults[0]}",
            fix="fix the C++; to look into it, declare cycles= for now and run `aiedsl kernel "
                "test` on the design: it says what the kernel reads or writes outside its "
                "buffers")
    if prof.strays:
        raise _stray_error(ir, prof.strays, scalars)
    # what else it did wrong (an input written, a misaligned access, a bf16 conversion under
    # another rounding mode; it ran to its end, so the counts stand) is left to `aiedsl kernel
    # test` and `sim --kernels native`, which report it as they do with cycles= given
    if not prof.counted:
        raise DesignError(
            "kernel cost", f"kernel '{ir.symbol}' has no cycles= and its profile counts no AIE "
            "API vector operation, load or store (scalar C++ is not modelled)", loc=ir.loc,
            limit="cycles= for a kernel the profile cannot estimate", found="cycles=None",
            fix="give cycles= per call, estimated from the kernel's loop")
    return ir.model_copy(update={
        "cycles": prof.cycles, "cycles_source": "profile", "arch": target.arch,
        "cost": f"{ir.cost} [cycles from its profile on {target.name}: bound by "
                f"{prof.binding}; no cycles= declared]"})


def _stray_error(ir: KernelIR, strays: tuple[Stray, ...],
                 scalars: dict[str, Any]) -> DesignError:
    """The design error for the writes outside its buffers that the run profiling kernel
    ``ir`` made: on a core they land on whatever is placed next to the buffer (another buffer,
    an rtp), which neither ``check`` nor the simulator would say."""
    s = strays[0]
    after = s.side != "before"
    more = f" (and {counted(len(strays) - 1, 'more such write')})" if len(strays) > 1 else ""
    spans: dict[str, list[str]] = {}  # by buffer, in the order of the kernel's arguments
    notes: dict[str, str] = {}
    for w in strays:
        spans.setdefault(w.buffer, []).append(
            f"byte {w.first}" if w.first == w.last else f"bytes {w.first} to {w.last}")
        if w.whole:
            notes[w.buffer] = (f" (all the guard bytes {w.side} it: it may write further, "
                               "unseen)")
    sizes = {w.buffer: w.nbytes for w in strays}
    found = "; ".join(f"'{b}' holds {sizes[b]} bytes; {' and '.join(x)} from its start "
                      f"changed{notes.get(b, '')}" for b, x in spans.items())
    if scalars:
        found += "; the scalars it ran with: " + ", ".join(f"{n}={v!r}" for n, v in
                                                            scalars.items())
    if not after:
        size = f"make the C++ start writing at the first byte of '{s.buffer}'"
    else:
        # the size it needs runs to the last byte written (unknown past a whole guard)
        needs = "" if s.whole else f": {s.last + 1} bytes, to the last one it wrote"
        size = (f"size '{s.buffer}' for what the C++ writes{needs} (a vectorised loop writes "
                "whole vectors), or make the C++ stop at its end")
    return DesignError(
        "kernel bounds", f"kernel '{ir.symbol}' {s.text()}{more} in the run of its C++ that "
        "profiles it (cycles=None): on the core it would overwrite whatever is placed "
        f"{'after' if after else 'before'} '{s.buffer}'", loc=ir.loc,
        limit="a kernel writes only inside its buffers (the bytes around each are checked "
        "after the profiled call)", found=found,
        fix=f"{size}; to see more, declare cycles= for now and run `aiedsl kernel test` on the "
            "design: it runs the kernel alone with the design's scalars and says what it reads "
            "or writes outside its buffers")


def _short(value: object) -> str:
    """``repr(value)``, cut to a line."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
