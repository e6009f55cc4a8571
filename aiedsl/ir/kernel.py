"""A kernel as the design IR declares it: its C symbol and source, its signature, its numpy
reference and its cost."""

from __future__ import annotations

from typing import Literal, NamedTuple, Sequence

from pydantic import Field

from aiedsl.ir.base import _Node
from aiedsl.ir.core_ops import Arg, RtpArg, ScalarArg
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import TensorType

CallKey = int | float | tuple[str, int] | None
"""What tells one scalar of a kernel's calls apart (:meth:`Kernel.constants`): the constant a
call passes, the rtp slot ``(rtp, index)`` it reads, or None."""


class KernelArg(_Node):
    """One parameter of a kernel's C signature."""

    name: str
    """The parameter's name in the C signature."""
    kind: Literal["buffer", "scalar"]
    """An acquired buffer (a pointer in C) or a scalar."""
    type: TensorType | None = None
    """For buffers: the element type the kernel expects."""
    dtype: str
    """Element dtype (buffers) or scalar dtype."""
    access: Literal["in", "out", "inout"] = "in"
    """For buffers: whether the kernel reads it, writes it, or both."""
    blocks: tuple[int, int] | None = None
    """For 2-D buffers the kernel reads or writes in blocks: (block rows, block cols). The
    buffer holds the tile block after block (blocks row-major, each block row-major), as the
    mmul kernels expect; the checks compare it with what the fifo's DMA layouts deliver."""
    equals: int | None = None
    """For scalars: the only value the kernel is right for. Its C++ is compiled for it and does
    not read the argument (a library kernel's element count ``n``: passing less would not make
    the kernel do less), or reads it with buffers sized for it; ``check`` refuses any other
    value."""
    narrows_to: str | None = None
    """For scalars: the type the C++ converts the argument to before using it (``(int16_t)s``
    for the i32 scalar of an i16 kernel), when narrower than :attr:`dtype`. ``check`` refuses a
    value outside that type's range, which would otherwise wrap (or become infinity) unseen."""


class ProfiledCycles(_Node):
    """The cycles per call the profile of a kernel declared without ``cycles=`` gives the calls
    that pass one set of scalar values (its C++ run once on the host with them)."""

    constants: tuple[CallKey, ...]
    """Per scalar parameter, in order: the constant these calls pass, the rtp slot ``(rtp,
    index)`` they read it from (its value unknown until the run: the slot's first write), or
    None where nothing tells calls apart (``params=`` standing in for a value read from an rtp
    slot, or the one ``equals=`` allows). A call is charged the cycles of the entry its
    constants match (:meth:`Kernel.call_cycles`)."""
    scalars: dict[str, int | float]
    """The value each scalar parameter had in the profiled run."""
    given: dict[str, str] = {}
    """Where each of :attr:`scalars` that the calls do not pass as a constant came from:
    ``"params="``, ``"equals="``, or the rtp slot's first write (``"thr[0]'s first
    rtp_write"``)."""
    cycles: int
    """The profile's estimate: the busiest unit's cycles."""
    binding: str
    """The unit that sets it (``"store"``)."""

    def shown(self) -> str:
        """The scalars as reports say them (:func:`scalars_shown`)."""
        return scalars_shown(self.scalars, self.given)


class CallOps(_Node):
    """The operations per call a kernel declaring ``ops=`` as a function of its scalars
    counts for the calls that pass one set of scalar values (the function called with them as
    the design loads: the IR holds the counts, not the function)."""

    constants: tuple[CallKey, ...]
    """As :attr:`ProfiledCycles.constants`: the calls it counts are those whose constants
    match (:meth:`Kernel.call_ops`)."""
    scalars: dict[str, int | float]
    """The value each scalar parameter had when the function counted them."""
    given: dict[str, str] = {}
    """Where each of :attr:`scalars` the calls do not pass as a constant came from (as
    :attr:`ProfiledCycles.given`)."""
    ops: int
    """Arithmetic operations of one such call (a multiply-accumulate counting 2)."""

    def shown(self) -> str:
        """The scalars as reports say them (:func:`scalars_shown`)."""
        return scalars_shown(self.scalars, self.given)


class Charge(NamedTuple):
    """What the calls of a kernel passing one set of scalar values take and do: their cycles
    and operations, and those values as reports say them ("" for a kernel whose calls all cost
    the same)."""

    cycles: int
    """Cycles per call: the profile's for these values, else the declared ``cycles=``."""
    ops: int
    """Operations per call: the count of ``ops=`` for these values, else its number."""
    shown: str
    """The values, as :meth:`ProfiledCycles.shown` says them ("" for none)."""


def scalars_shown(scalars: dict[str, int | float], given: dict[str, str]) -> str:
    """Scalar values as reports say them, each one the calls do not pass with where it came
    from: ``n=1024``, ``n=16 (params=)``; "" for none."""
    return ", ".join(f"{n}={v!r}" + (f" ({given[n]})" if n in given else "")
                     for n, v in scalars.items())


MOST_ROUNDINGS = 16
"""The most roundings a kernel may declare of each result (``declare(..., roundings=)``): 16
ulps of bf16 is an eighth of the value, past which a comparison says little (a chain that long
wants ``chained=True``)."""


class Kernel(_Node):
    """A micro-kernel: C symbol, C++ source, signature, numpy reference and cost."""

    symbol: str
    """C symbol, with its shape in the name (``matmul_bf16_f32_64x64x64_4x8x4``)."""
    source: str
    """The C++ it comes from: a file in ``kernels_cpp/`` or a template in ``aiedsl/kernels/``."""
    source_kind: Literal["file", "template"]
    """Whether :attr:`source` is a C++ file or a jinja2 template."""
    shipped: bool = False
    """A kernel of aiedsl's own library: :attr:`source` is read from aiedsl's ``kernels_cpp/``
    (or its kernel templates) only, never from a file of the same name beside the design,
    which is the user's own (a copy of ``scale.cc`` edited for a kernel of theirs)."""
    entry: str | None
    """C++ expression the generated ``extern "C"`` entry calls (``matmul_bf16_f32<64, 64, 64>``);
    None: :attr:`symbol` is an ``extern "C"`` function the source defines itself (mlir-aie's
    kernel files), which cores call directly, with no generated entry."""
    defines: dict[str, int | float | str] = {}
    """Preprocessor macros every compile of its C++ gets, ``-DNAME=VALUE`` (Peano's and the
    host's), sorted by name: the sizes an mlir-aie kernel file reads (``DIM_M``, ``BIT_WIDTH``).
    Kernels of one source with the same defines are compiled into one object."""
    args: tuple[KernelArg, ...]
    """Its C signature's parameters, in order."""
    params: dict[str, int | float | str]
    """Template parameters (sizes, mmul shape) the symbol and source were made from; a float
    only as the test value of a float scalar argument."""
    reference: str
    """``module:function`` of the numpy reference the simulator runs."""
    cycles: int
    """Estimated cycles per call: the declared ``cycles=``, or, for a kernel profiled for its
    cycles, the profile of its first call (each call is charged its own: :meth:`call_cycles`;
    0 until the design that calls it has profiled it)."""
    cycles_source: Literal["declared", "profile"] = "declared"
    """Where :attr:`cycles` comes from: the declaration's ``cycles=``, or, when it gave none,
    the kernel's profile (``aiedsl kernel profile``: the busiest unit's cycles)."""
    profiles: tuple[ProfiledCycles, ...] = ()
    """For a kernel profiled for its cycles: one profile per set of scalar values its calls
    pass, in the order of the first call of each (the design profiles them as it loads)."""
    arch: Literal["aie2", "aie2p"] | None = None
    """The AI Engine architecture its C++ variant and cycles were made for (a library kernel
    that differs by device, a kernel whose cycles come from a profile); None: any."""
    cascade_in: TensorType | None = None
    """What one call reads from the cascade (its upstream neighbour's accumulators), or None."""
    cascade_out: TensorType | None = None
    """What one call writes to the cascade (to its downstream neighbour), or None."""
    cascade_step: tuple[int, int] | None = None
    """For a kernel that gets and puts: (g, p), its C++ gets g words, then puts p, over and
    over (mm_cascade.cc's middle stage: a 2x2 patch's words each way); None: its put's word j
    goes once ceil((j + 1) G / P) of its G words came in (a kernel that gets and puts word by
    word, or in proportion). How the simulator streams its calls
    (:func:`~aiedsl.sim.cascade_stream.cascade_through`)."""
    ops: int = 0
    """Arithmetic operations per call (a multiply-accumulate counts 2), for GFLOPS/GOPS: the
    declared ``ops=``, or, for one declared as a function of its scalars, its count for the
    first call (each call counts its own: :meth:`call_ops`; 0 until the design that calls it
    has counted them)."""
    ops_source: Literal["declared", "per call"] = "declared"
    """Whether :attr:`ops` is the declaration's number or ``ops=`` is a function of the
    call's scalars, counted per set of values the calls pass (:attr:`op_counts`)."""
    op_counts: tuple[CallOps, ...] = ()
    """For ``ops=`` a function of the scalars: its count per set of scalar values the calls
    pass, in the order of the first call of each (as :attr:`profiles`)."""
    exact: bool = False
    """Its results are copies or selections of its inputs (a copy, relu, a max): it rounds
    nothing, so the comparison of an output counts no rounding for it."""
    chained: bool = False
    """Its C++ rounds intermediate values of its results' scale to the output type before the
    last step (a norm's centred value and scale): one call's result may carry more than one
    rounding, which the comparison of an output allows as a chain of kernels."""
    roundings: int = Field(default=1, ge=1, le=MOST_ROUNDINGS)
    """How many roundings each result goes through in one call, where more than one: the
    result's own, and of each value it is a product or quotient of (a norm's scale rounded to
    bf16 before the product: 2). The comparison allows each element that many of its own ulps,
    relative, where one call's result may carry them (``declare(..., roundings=2)``)."""
    cost: str
    """The cost formula and its source, for reports."""
    loc: Loc
    """Where the design declared (or first used) it."""

    @property
    def reference_params(self) -> dict[str, int | float | str]:
        """The :attr:`params` the numpy reference gets as keywords: all but those named after a
        scalar argument, which only give that scalar a value to profile or test with (the call
        passes the scalar itself, so a reference naming its parameter after it would otherwise
        get it twice)."""
        scalars = {a.name for a in self.args if a.kind == "scalar"}
        return {k: v for k, v in self.params.items() if k not in scalars}

    def constants(self, args: Sequence[Arg]) -> tuple[CallKey, ...]:
        """What tells a call with ``args`` apart for its cycles (:attr:`ProfiledCycles.constants`):
        per scalar parameter, the constant the call passes; the rtp slot ``(rtp, index)`` it
        reads (calls reading different slots take different values: each slot's first write),
        unless ``params=`` gives the scalar a value; None for anything else or for a scalar
        ``equals=`` fixes (its C++ is right for that value only, and is profiled with it)."""
        return tuple(None if p.equals is not None else a.value if isinstance(a, ScalarArg)
                     else (a.rtp, a.index) if isinstance(a, RtpArg) and p.name not in self.params
                     else None
                     for p, a in zip(self.args, args) if p.kind == "scalar")

    def profile_of(self, args: Sequence[Arg]) -> ProfiledCycles | None:
        """The profile a call with ``args`` is charged by; None for a declared kernel (or a
        call none matches: one ``check`` refuses, its arguments not the kernel's)."""
        key = self.constants(args)
        return next((p for p in self.profiles if p.constants == key), None)

    def call_cycles(self, args: Sequence[Arg]) -> int:
        """The cycles a call with ``args`` takes: its profile's, for a kernel profiled for its
        cycles (a call passing n=1024 is charged what the C++ does with 1024), else
        :attr:`cycles`."""
        p = self.profile_of(args)
        return self.cycles if p is None else p.cycles

    def call_ops(self, args: Sequence[Arg]) -> int:
        """The operations a call with ``args`` does: its own count, for a kernel declaring
        ``ops=`` as a function of its scalars (a call passing n=16 does what 16 elements
        take, not what the first call's 1024 do), else :attr:`ops`."""
        key = self.constants(args)
        return next((c.ops for c in self.op_counts if c.constants == key), self.ops)

    @property
    def counts_ops(self) -> bool:
        """Does it declare operations (a throughput counts its calls)? A function of the
        scalars that counts 0 for its first call's values may count more for others'."""
        return bool(self.ops or any(c.ops for c in self.op_counts))

    def charges(self) -> list[Charge]:
        """The cycles and operations of its calls, one :class:`Charge` per set of scalar values
        they pass (of :attr:`profiles` and :attr:`op_counts`, in the order of their first
        calls); one for a kernel whose calls all cost the same."""
        keys = list(dict.fromkeys([p.constants for p in self.profiles]
                                  + [c.constants for c in self.op_counts]))
        if len(keys) <= 1 and not any(p.scalars for p in self.profiles) \
                and not any(c.scalars for c in self.op_counts):
            return [Charge(self.cycles, self.ops, "")]
        out = []
        for key in keys:
            p = next((p for p in self.profiles if p.constants == key), None)
            c = next((c for c in self.op_counts if c.constants == key), None)
            shown = p.shown() if p is not None else c.shown() if c is not None else ""
            out.append(Charge(self.cycles if p is None else p.cycles,
                              self.ops if c is None else c.ops, shown))
        return out

    def charged(self) -> str:
        """The cycles a call is charged, as the report and the simulator say them: ``128
        cycles per call``; for a kernel profiled with scalars, with their values: ``128
        cycles per call with n=1024``, ``128 cycles per call with n=1024, 2 with n=16``."""
        if not any(p.scalars for p in self.profiles):
            return f"{self.cycles} cycles per call"
        return f"{self.profiles[0].cycles} cycles per call with " + ", ".join(
            (f"{p.cycles} with " if i else "") + p.shown() for i, p in enumerate(self.profiles))

    @property
    def on_bfp16_unit(self) -> bool:
        """A library matmul whose numpy reference models npu2's bfp16 unit
        (``matmul_bfp16_ref``, ``matmul_cascade_bfp16_ref``): its bf16 mmuls run there, and
        the conversions they need are in no cycle model."""
        return self.reference.endswith("bfp16_ref")

    @property
    def operand_dtype(self) -> str | None:
        """The element type of the buffers it only reads (those it reads and writes, when it
        has none), the operands its multiplies take (a matmul's A and B, not its accumulating
        C); None when it has none, or they differ (:attr:`operand_dtypes` has them all)."""
        types = self.operand_dtypes
        return types[0] if len(types) == 1 else None

    @property
    def operand_dtypes(self) -> tuple[str, ...]:
        """The element types of the buffers it only reads (those it reads and writes, when it
        has none), each once in the order of its arguments: :attr:`operand_dtype`'s, when they
        differ too (an i16 by i8 multiply's two)."""
        buffers = [a for a in self.args if a.kind == "buffer"]
        ins = [a.dtype for a in buffers if a.access == "in"] or \
            [a.dtype for a in buffers if a.access == "inout"]
        return tuple(dict.fromkeys(ins))

    @property
    def sums(self) -> bool:
        """Does a call add into what it writes, or reduce into it? True for a buffer it reads
        and writes (a matmul's accumulator), a cascade, or an output with fewer elements than
        its largest input (a reduction). Such an output may be an ulp of a partial sum off the
        reference's, so it is compared with an absolute tolerance (:func:`aiedsl.compare.compare`).
        """
        if self.exact:  # a max reduction selects, it does not sum
            return False
        buffers = [a for a in self.args if a.kind == "buffer" and a.type is not None]
        ins = [a.type.numel for a in buffers if a.access == "in" and a.type is not None]
        outs = [a.type.numel for a in buffers if a.access == "out" and a.type is not None]
        return (any(a.access == "inout" for a in buffers) or self.cascade_in is not None
                or self.cascade_out is not None or bool(ins and outs and min(outs) < max(ins)))
