"""What a kernel's scalar argument takes: its dtype's range, and what its C++ makes of a
value (``equals=``, ``narrows_to=``). A module of the IR's because the checks of the calls a
core makes (:mod:`aiedsl.checks.calls`) and a kernel's declaration (``params=``,
:mod:`aiedsl.kernels.base`) both ask it, and the kernels package imports no check.
"""

from __future__ import annotations

from aiedsl.dtypes import dtype
from aiedsl.ir.kernel import KernelArg


def value_rule(param: KernelArg) -> tuple[float, float, str, str, str] | None:
    """What a scalar's C++ makes of its value beyond its dtype's range, when it does: (lowest,
    highest, what the argument is, the limit, the values to pass). None: any value of the
    dtype is taken as it is."""
    if param.equals is not None:
        n = param.equals
        return (n, n, f"must be {n}", f"exactly {n}: the one value the kernel is declared "
                f"right for (equals={n}: its C++ is compiled for it, or its buffers are sized "
                "for it)", f"{n}; for another size, declare the kernel (and its buffers) for "
                "that size")
    if param.narrows_to is not None:
        narrow = param.narrows_to
        lo, hi = scalar_range(narrow)
        lost = ("would become infinity" if dtype(narrow).is_float else
                "would keep only its low bits")
        return (lo, hi, f"is {param.dtype} narrowed to {narrow} by the kernel's C++",
                f"{narrow} values from {bound(lo)} to {bound(hi)}: the C++ converts the "
                f"{param.dtype} to {narrow}, and a value outside {lost}",
                f"a value {narrow} can hold")
    return None


def scalar_range(dt: str) -> tuple[float, float]:
    """Smallest and largest value of a scalar kernel argument of dtype ``dt`` (finite).

    Integers: the dtype's own range (MLIR's parser would also take a signless bit pattern such
    as ``200 : i8``, but the kernel would then read -56). Floats: the largest finite value;
    beyond it the constant becomes infinity.
    """
    import numpy as np

    info = dtype(dt)
    if info.is_float:
        import ml_dtypes  # numpy's finfo does not know bfloat16

        top = float(ml_dtypes.finfo(info.numpy).max)
        return -top, top
    ii = np.iinfo(info.numpy)
    return int(ii.min), int(ii.max)


def bound(x: float) -> str:
    """An end of a scalar range: integers exactly (2147483647, not 2.14748e+09), floats short."""
    return str(x) if isinstance(x, int) else f"{x:g}"
