"""What the shipped kernel library's element-wise kernels take (zero, passthrough, add, sub,
mul, vector_scalar, relu, the reductions' rows): whole 512-bit vectors of their element type,
and, for the arithmetic ones, which element types.

Kept out of :mod:`aiedsl.kernels.library`, which imports the language, so that the language's
messages can ask whether a library kernel takes a buffer before suggesting it: a fix naming
passthrough for one i32 sent a tester into passthrough's own refusal of the size.

Example
-------
>>> library_lanes("i32"), library_lanes("bf16"), library_lanes("i8")
(16, 32, 64)
>>> takes_vectors(TensorType(shape=(1,), dtype="i32"))
False
"""

from __future__ import annotations

from aiedsl.dtypes import DTYPES
from aiedsl.ir.types import TensorType

LIBRARY_VECTOR_BYTES = 64
"""The bytes of the vector the library's element-wise kernels load and store at a time: one
512-bit ``aie::vector<T, 64 / sizeof(T)>``, whose ``N % W == 0`` their C++ static_asserts
(kernels_cpp/passthrough.cc, zero.cc; aiedsl/kernels/templates/). A choice of the library's
C++, not a limit of the core: a kernel of one's own may move any number of elements."""

ELTWISE_DTYPES = ("bf16", "i16", "i32")
"""Element types of the elementwise and vector-scalar kernels (add, sub, mul)."""


def library_lanes(dtype: str) -> int:
    """Elements of ``dtype`` in one of the library's vectors (16 i32, 32 bf16, 64 i8)."""
    return LIBRARY_VECTOR_BYTES // DTYPES[dtype].itemsize


def takes_vectors(t: TensorType) -> bool:
    """Is a buffer of type ``t`` a whole number of the library's vectors, as its element-wise
    kernels need?"""
    return t.numel % library_lanes(t.dtype) == 0
