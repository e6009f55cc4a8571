"""A library kernel's arguments as its factory takes them: sizes as plain positive ints, an
integer C's scaling shift, and the device the kernel is declared for.

Example
-------
::

    m = positive_size(m, "m", "matmul")     # numpy's int64(64) -> 64; 0 or 64.0 -> DesignError
    t = tensor_type(t, "relu")              # Tensor[1024, i32]; 1024 or (1024,) -> DesignError
    target = kernel_target(device)          # the design's device while one is traced
"""

from __future__ import annotations

from aiedsl.dtypes import DType
from aiedsl.errors import DesignError
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import TensorType
from aiedsl.lang.context import _DESIGN
from aiedsl.source_loc import caller_loc
from aiedsl.targets import DEFAULT_DEVICE, TargetModel, known_target
from aiedsl.values import as_int, shown

MAX_SHIFT = 23
"""The largest right shift of an integer kernel's 32-bit sums to an i8 output: C << shift must
still fit the accumulator (kernels_cpp/mm.cc, "Narrow outputs")."""


def positive_size(value: object, what: str, kernel: str, *, fix: str = "give the tile's size",
                  loc: Loc | None = None) -> int:
    """Size ``what`` of library kernel ``kernel`` as a plain int (numpy's integers too: the
    symbol, the C++ and the IR read ``64``); a DesignError at the design's line when it is not
    a positive integer."""
    n = as_int(value)
    if n is None or n < 1:
        raise DesignError("kernel", f"{kernel} has {what}={shown(value)}",
                          loc=loc or caller_loc(), limit="a positive int", found=shown(value),
                          fix=fix)
    return n


def tensor_type(value: object, kernel: str, *, loc: Loc | None = None) -> TensorType:
    """The type of the buffers library kernel ``kernel`` takes (``Tensor[1024, i32]``), as its
    factory is given it; a DesignError at the design's line for anything else, a size, a shape
    or a dtype, each of which, read as a type, only failed deep inside the factory ('int' object
    has no attribute 'dt')."""
    if isinstance(value, TensorType):
        return value
    example = _example_type(value)
    raise DesignError(
        "kernel", f"{kernel} takes the element type, {example}, not {shown(value)}",
        loc=loc or caller_loc(), limit="a Tensor[...] type", found=shown(value),
        fix=f"give it the type of the buffers it is called with (the fifo's element type), "
        f"e.g. {example}")


def _example_type(value: object) -> str:
    """A Tensor type like the one meant by ``value``: its sizes, when it is a size or a shape;
    its element type, when it is one; i32 elements, 1024 of them, otherwise."""
    sizes = [as_int(v) for v in (value if isinstance(value, (tuple, list)) else [value])]
    if not sizes or not all(v is not None and v > 0 for v in sizes):
        sizes = [1024]
    dtype = value.name if isinstance(value, DType) else "i32"
    return f"Tensor[{', '.join(map(str, sizes))}, {dtype}]"


def scale_shift(shift: object, kernel: str, *, loc: Loc | None = None) -> int:
    """The right shift of an i8-output kernel as a plain int in 0..:data:`MAX_SHIFT`."""
    bits = as_int(shift)
    if bits is None or not 0 <= bits <= MAX_SHIFT:
        raise DesignError("kernel", f"{kernel} has shift={shown(shift)}", loc=loc or caller_loc(),
                          limit=f"0..{MAX_SHIFT}", found=shown(shift),
                          fix=f"scale by 0..{MAX_SHIFT} bits")
    return bits


def kernel_target(device: str | None) -> TargetModel:
    """The device a kernel is declared for: the design being traced, else ``device``, else
    :data:`~aiedsl.targets.DEFAULT_DEVICE` (a kernel declared outside any design, as in a
    notebook or a test). An unknown
    ``device`` is the DesignError ``design(device=...)`` gives, at the user's line."""
    trace = _DESIGN.get()
    if trace is not None:
        return trace.target
    return known_target(device or DEFAULT_DEVICE, caller_loc())
