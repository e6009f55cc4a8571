"""``Tensor[...]`` type expressions and the host-tensor handles a design function receives."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NoReturn

from aiedsl.dtypes import DTYPES, DType, dtype, numpy_like, numpy_name
from aiedsl.errors import DesignError
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import TensorType
from aiedsl.lang.load import load_context
from aiedsl.source_loc import caller_loc
from aiedsl.values import as_int, plain, shown


class Tensor:
    """Spell a tensor type: ``Tensor[64, 64, bf16]`` is a 64x64 block of bf16 (the shape may
    be one tuple, ``Tensor[(64, 64), bf16]``, and the element type numpy's, ``np.int32``).

    Example
    -------
    >>> from aiedsl import Tensor, bf16
    >>> Tensor[64, 64, bf16]
    TensorType(shape=(64, 64), dtype='bf16')
    """

    def __class_getitem__(cls, item: object) -> TensorType:
        loc = caller_loc()
        items = item if isinstance(item, tuple) else (item,)
        *shape, dt = items or (None,)
        if len(shape) == 1 and isinstance(shape[0], tuple):  # Tensor[(64, 64), i32], as numpy
            shape = list(shape[0])                              # shapes are written in IRON
        if not (isinstance(dt, (DType, str)) or numpy_like(dt)) or not shape:
            raise DesignError(
                "tensor type", f"Tensor[{', '.join(map(str, items))}] needs sizes then a dtype",
                loc=loc, fix="write e.g. Tensor[64, 64, bf16]",
            )
        sizes: list[int] = []  # numpy's integers too (np.prod((32, 32))), as plain ints
        for s in shape:
            size = as_int(s)
            if size is None or size <= 0:
                raise DesignError(
                    "tensor type", f"Tensor size {shown(s)} is not a positive integer",
                    loc=loc, found=shown(s),
                    fix="sizes are positive ints; use // for integer division"
                    if isinstance(plain(s), float) else
                    "sizes are positive ints, e.g. Tensor[1024, i32]")
            sizes.append(size)
        numel = math.prod(sizes)
        if numel >= MAX_ELEMENTS:
            raise DesignError(
                "tensor type", f"Tensor[{', '.join(map(str, items))}] has {numel:,} elements",
                loc=loc, limit=f"fewer than 2^31 = {MAX_ELEMENTS:,} elements", found=f"{numel:,}",
                fix="split the problem over several runs")
        return TensorType(shape=tuple(sizes), dtype=lookup_dtype(dt, loc).name)


MAX_ELEMENTS = 2 ** 31
"""Host tensors and fifo elements are indexed with 32-bit offsets (the simulator's runtime
patterns; mlir-aie's memref offsets in the runtime sequence are i64, the NPU's host buffers far
smaller than this)."""


def lookup_dtype(dt: object, loc: Loc | None) -> DType:
    """The dtype named ``dt`` (``i16``, ``"int16"``, ``bf16``, ``np.int16`` ...); a DesignError
    listing the known ones otherwise.

    A name that is the value of a define (``OUT = define("OUT", "f32")``, given ``-D OUT=f16``)
    is told as that define's: the user typed it on the command line, not in the file. A
    define's value is a str like any other, so this is judged by value: a name some define
    took. Another str may be written in the file or computed, and its fix names both ways."""
    try:
        return dtype(dt)
    except (KeyError, TypeError):
        pass
    found = numpy_name(dt) or repr(dt)  # float64, not "<class 'numpy.float64'>"
    names = ", ".join(DTYPES)
    message, fix = f"unknown element type {found}", "use an aiedsl dtype: from aiedsl import " \
        "i32, bf16, ..."
    ctx = load_context()
    defines = ctx.defines_of(dt) if ctx is not None and isinstance(dt, str) else []
    if defines:
        given = [n for n in defines if ctx is not None and n in ctx.overrides]
        told = " and ".join(f"-D {n}" for n in given) if given else " and ".join(
            f"define '{n}'" for n in defines)
        message += f" (the value of {told})"
        fix = (f"give {told} one of the dtype names {names}" if given else
               f"give {told} one of the dtype names {names}, in its default or with "
               f"-D {defines[0]}=...")
    elif isinstance(dt, str):
        fix = (f"use a dtype name, one of {names}, or an aiedsl dtype (from aiedsl import "
               "i32, bf16, ...); from the command line, -D NAME= takes a dtype name")
    raise DesignError("tensor type", message, loc=loc,
                      limit=f"one of {names} (numpy's too: int16, np.int16)", found=found,
                      fix=fix)


def _index_text(x: object) -> str:
    """An index as written: ``256:512``, ``::2``, ``3``."""
    if isinstance(x, slice):
        parts = ["" if v is None else str(v) for v in (x.start, x.stop)]
        return ":".join(parts) + ("" if x.step is None else f":{x.step}")
    return str(x)


@dataclass(frozen=True)
class HostTensorRef:
    """A runtime argument of a design (a host tensor), as the design function sees it."""

    name: str
    index: int
    type: TensorType
    loc: Loc

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of the host tensor."""
        return self.type.shape

    @property
    def dtype(self) -> str:
        """dtype name of the host tensor."""
        return self.type.dtype

    def __getitem__(self, index: object) -> NoReturn:
        """A host tensor is moved whole or by a pattern, not sliced: say the pattern that moves
        the slice (a newcomer's ``rt.fill(f, a[i*P:(i+1)*P])`` was a TypeError)."""
        items = index if isinstance(index, tuple) else (index,)
        shape = self.type.shape
        fix = ("pass the whole tensor and a pattern, rt.fill(f, t, (offset, [sizes], "
               "[strides])), or tiles(t, (rows, cols)) for tiles of a matrix")
        if len(items) == len(shape) and all(isinstance(x, slice) for x in items):
            spans = [x.indices(n) for x, n in zip(items, shape)]  # type: ignore[union-attr]
            if all(step == 1 and stop > start for start, stop, step in spans):
                strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]
                offset = sum(start * st for (start, _, _), st in zip(spans, strides))
                sizes = [stop - start for start, stop, _ in spans]
                fix = (f"pass the whole tensor and the pattern that moves the slice: "
                       f"rt.fill(f, {self.name}, ({offset}, {sizes}, {strides})) (rt.drain "
                       "alike)")
        raise DesignError(
            "host tensor", f"host tensor '{self.name}' ({self.type}) is sliced", loc=caller_loc(),
            limit="rt.fill and rt.drain take a host tensor whole, with a pattern of the "
            "elements they move", found=f"{self.name}[{', '.join(map(_index_text, items))}]",
            fix=fix)
