"""What a kernel's scalar argument takes: its dtype's range, and what its C++ makes of a
value (``equals=``, ``narrows_to=``). A module of the IR's because the checks of the calls a
core makes (:mod:`aiedsl.checks.calls`) and a kernel's declaration (``params=``,
:mod:`aiedsl.kernels.base`) both ask it, and the kernels package imports no check.
"""

from __future__ import annotations

import functools

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
                f"{range_text(narrow)}: the C++ converts the "
                f"{param.dtype} to {narrow}, and a value outside {lost}",
                f"a value {narrow} can hold")
    return None


@functools.lru_cache(maxsize=None)
def scalar_range(dt: str) -> tuple[float, float]:
    """Smallest and largest value of a scalar kernel argument of dtype ``dt`` (finite).

    Integers: the dtype's own range (MLIR's parser would also take a signless bit pattern such
    as ``200 : i8``, but the kernel would then read -56). Floats: the values that round to a
    finite one of the type, as the constant is converted (MLIR's parser and the host's C both
    round the double to nearest, ties to even): the largest finite value, and a little beyond
    it. ``3.4028235e38``, FLT_MAX as numpy prints it, is a double just above FLT_MAX that
    rounds to it; it was refused. Rounding goes to infinity from the midpoint between the
    largest finite value and the next power of two on (the tie goes to the even neighbour,
    and the largest value's significand is odd), so the end is the double just below it.
    """
    import numpy as np

    info = dtype(dt)
    if info.is_float:
        import ml_dtypes  # numpy's finfo does not know bfloat16

        fi = ml_dtypes.finfo(info.numpy)
        top = float(fi.max)
        # from the midpoint to the next power of two on, a value rounds to infinity: the end
        # is the largest double below it whose conversion is finite, found by bisecting the
        # doubles' bit patterns (ml_dtypes converts a double to bfloat16 through float32, a
        # second rounding that moves the end below the midpoint)
        lo = int(np.float64(top).view(np.int64))  # finite
        hi = int(np.float64(top + 2.0 ** (fi.maxexp - 2 - fi.nmant)).view(np.int64))  # not
        with np.errstate(over="ignore"):
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if np.isfinite(info.numpy(np.int64(mid).view(np.float64))):
                    lo = mid
                else:
                    hi = mid
        end = float(np.int64(lo).view(np.float64))
        return -end, end
    ii = np.iinfo(info.numpy)
    return int(ii.min), int(ii.max)


def range_text(dt: str) -> str:
    """The values a scalar of dtype ``dt`` takes, as a limit says them: ``i16 values from
    -32768 to 32767``; a float type's ends are its largest finite value written with the
    digits that tell it apart (``3.4028235e+38``, not ``3.40282e+38``, which is below it and
    made a value taken look refused beyond it). A float refused is beyond that value (it
    rounds past it: :func:`scalar_range`)."""
    info = dtype(dt)
    if info.is_float:
        import ml_dtypes

        top = _float_text(info.numpy, ml_dtypes.finfo(info.numpy).max)
        return f"{dt} values from -{top} to {top}"
    lo, hi = scalar_range(dt)
    return f"{dt} values from {bound(lo)} to {bound(hi)}"


def _float_text(numpy_type: object, value: object) -> str:
    """``value`` held as ``numpy_type`` written with the fewest digits that read back as it
    (numpy's ``str`` of a float32, ml_dtypes' of a bfloat16)."""
    return str(numpy_type(value))  # type: ignore[operator]


def bound(x: float) -> str:
    """An end of an integer scalar range, exactly (2147483647, not 2.14748e+09); a float
    shortly (:func:`range_text` says a float type's own ends)."""
    return str(x) if isinstance(x, int) else f"{x:g}"
