"""A kernel as the design IR declares it: its C symbol and source, its signature, its numpy
reference and its cost."""

from __future__ import annotations

from typing import Literal

from aiedsl.ir.base import _Node
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import TensorType


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
    """Estimated cycles per call."""
    cycles_source: Literal["declared", "profile"] = "declared"
    """Where :attr:`cycles` comes from: the declaration's ``cycles=``, or, when it gave none,
    the kernel's profile (``aiedsl kernel profile``: the busiest unit's cycles)."""
    arch: Literal["aie2", "aie2p"] | None = None
    """The AI Engine architecture its C++ variant and cycles were made for (a library kernel
    that differs by device, a kernel whose cycles come from a profile); None: any."""
    cascade_in: TensorType | None = None
    """What one call reads from the cascade (its upstream neighbour's accumulators), or None."""
    cascade_out: TensorType | None = None
    """What one call writes to the cascade (to its downstream neighbour), or None."""
    ops: int = 0
    """Arithmetic operations per call (a multiply-accumulate counts 2), for GFLOPS/GOPS."""
    exact: bool = False
    """Its results are copies or selections of its inputs (a copy, relu, a max): it rounds
    nothing, so the comparison of an output counts no rounding for it."""
    chained: bool = False
    """Its C++ rounds intermediate values of its results' scale to the output type before the
    last step (a norm's centred value and scale): one call's result may carry more than one
    rounding, which the comparison of an output allows as a chain of kernels."""
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

    @property
    def operand_dtype(self) -> str | None:
        """The element type of the buffers it only reads (those it reads and writes, when it
        has none), the operands its multiplies take (a matmul's A and B, not its accumulating
        C); None when it has none, or they differ."""
        buffers = [a for a in self.args if a.kind == "buffer"]
        ins = {a.dtype for a in buffers if a.access == "in"} or \
            {a.dtype for a in buffers if a.access == "inout"}
        return next(iter(ins)) if len(ins) == 1 else None

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
