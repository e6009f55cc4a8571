"""Element types: one table from aiedsl names to numpy, MLIR and C++ spellings.

Example::

    from aiedsl import bf16
    bf16.numpy      # ml_dtypes.bfloat16
    bf16.mlir       # "bf16"
    bf16.itemsize   # 2
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any


@dataclass(frozen=True)
class DType:
    """An element type of host tensors, fifo elements and kernel arguments."""

    name: str
    """aiedsl's name, used in the IR (``"bf16"``)."""
    mlir: str
    """MLIR element type (``"bf16"``, ``"i16"``)."""
    cpp: str
    """C++ type in kernels (``"bfloat16"``, ``"int16_t"``)."""
    itemsize: int
    """Bytes per element."""
    numpy_name: str
    """Where the numpy scalar type lives: ``"numpy:int16"``, ``"ml_dtypes:bfloat16"``."""
    is_float: bool

    @property
    def numpy(self) -> type:
        """The numpy scalar type (``ml_dtypes.bfloat16`` for bf16), imported on first use so
        that building a design does not pay for numpy's extension types."""
        module, _, name = self.numpy_name.partition(":")
        return getattr(import_module(module), name)  # type: ignore[no-any-return]

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return self.name


i8 = DType("i8", "i8", "int8_t", 1, "numpy:int8", False)
u8 = DType("u8", "ui8", "uint8_t", 1, "numpy:uint8", False)
i16 = DType("i16", "i16", "int16_t", 2, "numpy:int16", False)
u16 = DType("u16", "ui16", "uint16_t", 2, "numpy:uint16", False)
i32 = DType("i32", "i32", "int32_t", 4, "numpy:int32", False)
u32 = DType("u32", "ui32", "uint32_t", 4, "numpy:uint32", False)
bf16 = DType("bf16", "bf16", "bfloat16", 2, "ml_dtypes:bfloat16", True)
f32 = DType("f32", "f32", "float", 4, "numpy:float32", True)

DTYPES: dict[str, DType] = {d.name: d for d in (i8, u8, i16, u16, i32, u32, bf16, f32)}
_ALIASES = {"int8": "i8", "uint8": "u8", "int16": "i16", "uint16": "u16", "int32": "i32",
            "uint32": "u32", "bfloat16": "bf16", "float32": "f32"}


def numpy_like(obj: object) -> bool:
    """Is ``obj`` a numpy scalar type or dtype (``np.int32``, ``np.dtype("int16")``,
    ``ml_dtypes.bfloat16``)? Told without importing numpy."""
    module = obj.__module__ if isinstance(obj, type) else type(obj).__module__
    return module.split(".")[0] in ("numpy", "ml_dtypes")


def numpy_name(obj: object) -> str | None:
    """numpy's name for a numpy scalar type or dtype (``np.float64`` -> ``"float64"``); None
    for anything else."""
    if not numpy_like(obj):
        return None
    return str(obj.__name__ if isinstance(obj, type) else getattr(obj, "name", obj))



def numpy_kind(dt: Any) -> str:
    """numpy's kind letter of a numpy dtype (``"i"``, ``"u"``, ``"f"`` ...), bfloat16's taken
    as ``"f"`` (numpy knows it as ``"V"``, a raw record)."""
    return "f" if dt.name == "bfloat16" else str(dt.kind)

def dtype(name: str | DType | object) -> DType:
    """Look up a dtype by aiedsl name, numpy-style alias (``"int16"`` -> ``i16``), numpy
    scalar type or numpy dtype (``np.int16``, ``np.dtype("int16")``, ``ml_dtypes.bfloat16``:
    as IRON designs spell element types)."""
    if isinstance(name, DType):
        return name
    if type(name) is str and name in DTYPES:  # the commonest: an IR's own names
        return DTYPES[name]
    name = numpy_name(name) or name
    if not isinstance(name, str):
        raise TypeError(f"{name!r} is not a dtype name")
    key = _ALIASES.get(name, name)
    if key not in DTYPES:
        raise KeyError(f"unknown dtype {name!r}; aiedsl knows {', '.join(DTYPES)}")
    return DTYPES[key]


def held(value: int | float, name: str) -> int | float:
    """``value`` as a core holds a scalar of dtype ``name``: for a floating-point type, rounded
    to it (nearest even; ``0.3`` as f32 is ``0.30000001192092896``, as bf16 ``0.30078125``;
    ``257`` as bf16 is ``256.0``) and returned as a Python float; for an integer type,
    unchanged. What a kernel's C++ receives for an MLIR constant, and so what its numpy
    reference is handed.

    >>> held(0.3, "bf16"), held(257, "bf16")
    (0.30078125, 256.0)
    """
    dt = dtype(name)
    if dt.is_float:
        return float(import_module("numpy").array(value, dtype=dt.numpy))
    return value


def unwritten(shape: tuple[int, ...], np_dtype: Any) -> Any:
    """Memory nothing has written yet: NaN for a float type, the smallest signed integer, the
    largest unsigned one (never 0).

    On the NPU a buffer holds whatever was there before (the last run's data, on a second
    run); zeros would let a kernel that reads before it writes (an accumulator never zeroed)
    look right.
    """
    np = import_module("numpy")  # this module loads without it
    if numpy_kind(np_dtype) == "f":
        return np.full(shape, np.nan, dtype=np_dtype)
    info = np.iinfo(np_dtype)
    return np.full(shape, info.max if info.min == 0 else info.min, dtype=np_dtype)


def drawn_range(name: str | DType) -> tuple[int, int]:
    """The smallest and largest value the seeded random inputs of integer type ``name`` are
    drawn from, by ``aiedsl sim`` (:func:`aiedsl.sim.compare.make_inputs`) and ``aiedsl kernel
    test`` (:func:`aiedsl.kernels.cases.input_range`) alike.

    An 8-bit type: its whole range, -128..127 or 0..255. Any sum of int8 or uint8 products
    fits the 32-bit accumulator AIE2 keeps them in (the AIE API's default for 8-bit inputs,
    ``default_accum_bits``: 32), and only large values show a kernel or reference that keeps
    them in less: drawn in -8..7, as ``aiedsl sim`` once drew i8, a GEMM whose reference wrapped
    at 16 bits passed on every seed, and -128 was never drawn. A wider type: |x| < 2^(bits/2 -
    1), so that products and sums of them stay inside the type they are kept in: -128..127 for
    i16 (a 64-deep int16 matmul's sums fit i32), -32768..32767 for i32.

    >>> drawn_range("i8"), drawn_range("u8"), drawn_range("i16")
    ((-128, 127), (0, 255), (-128, 127))
    """
    dt = dtype(name)
    bits = 8 * dt.itemsize
    signed = not dt.name.startswith("u")
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if bits == 8:
        return lo, hi
    bound = 1 << (bits // 2 - 1)
    return max(lo, -bound), min(hi, bound - 1)
