"""An fp32 multiply as AIE2 and AIE2P cores make it: neither has an fp32 multiplier, so the
compiler's intrinsic headers build each product of float vectors from bf16 multiplies. aiedsl's
numpy model of those steps, which the host AIE API header
(``kernels_cpp/host/aie_api/host_arith.hpp``, ``detail::fp32_product``) computes the same way,
bit for bit; a kernel's reference may use it for the float products its C++ makes.

What the sources say (llvm-aie, ``clang/lib/Headers/aiev2/aiev2_core.h`` for AIE2 and
``aie2p/aie2p_vmult.h`` for AIE2P, read at their newest stored versions):

* each operand is split into bf16 pieces: ``a = bf16(x)``, then ``b = bf16(x - a)`` and
  ``c = bf16(x - a - b)``, each remainder made by an ``msc_elem`` of the piece and a vector of
  ones (exact: the remainder of a value and its rounding to 8 significant bits fits fp32), each
  conversion ``to_v16bfloat16`` / ``to_v32bfloat16``, which rounds by the core's rounding mode
  (``aie::set_rounding``'s: the reset mode, floor, unless the kernel set another; AIE2 under
  ``AIE2_FP32_EMULATION_SET_RND_MODE`` sets floor for the split and restores the mode after);
* the products of the pieces, each exact in fp32 (8 by 8 significant bits), are summed in
  accfloat one after the other in a fixed order: by default (``mul_elem_16_accuracy_safe``,
  ``mul_elem_32_accuracy_safe``) all nine, ``c*f, c*e, b*f, a*f, b*e, c*d, b*d, a*e, a*d``
  (x = a + b + c, y = d + e + f): 4 multiplies to split, 9 to multiply, 13 per vector op;
  with ``AIE2_FP32_EMULATION_ACCURACY_FAST`` (AIE2 only) three pieces each and six products,
  ``a*f, b*e, c*d, b*d, a*e, a*d`` (10); with ``AIE2_FP32_EMULATION_ACCURACY_LOW`` two pieces
  each (x = a + b, y = c + d) and three, ``b*c, a*d, a*c`` (5);
* which of them a kernel gets: the AIE API's ``aie::mul``, ``mac``, ``msc``, ``negmul`` of float
  vectors call the ``_conf`` intrinsics (``detail/aie2/mul_acc32_fp.hpp``: ``mul_elem_16_conf``;
  ``detail/aie2p/mul_acc32_fp.hpp``: ``mul_elem_32_conf``, 32 lanes an op), which both headers
  make of the default (safe) steps whatever is defined; ``mac`` and ``msc`` then add the
  rounded product to the accumulator, ``negmul`` negates it. The defines change only the plain
  intrinsics on AIE2 (``mul_elem_16``, ``mac_elem_16``, ... and ``mul_4x8_8x4`` of floats):
  what ``aie::inv`` and ``aie::invsqrt`` of float vectors and a float ``aie::mmul``'s ``mul``
  call. AIE2P's plain intrinsics are the safe ones too (it has no such defines).
* a subnormal operand, piece or sum is taken as a zero of its sign (AM020, "Floating-Point
  Vector Unit": denormals are not supported by the AIE-ML floating-point data path).

Not in those sources, and chosen here: how accfloat rounds each addition (to nearest even, as
IEEE fp32 does, here); and, for the plain ``mac_elem_16`` of AIE2's FAST and LOW and safe
variants, whose last step adds the accumulator and the last product in one ``addmac``, in
which order that three-term sum rounds (the product chain's sum, then the accumulator, here).
An infinity times a finite value is NaN under this emulation (its first remainder is
``inf - inf``), and so it is here.

>>> x, y = np.float32(1.1), np.float32(3.3)
>>> [float(emulated_mul(x, y, a)) for a in ACCURACIES], float(x * y)
([3.630000114440918, 3.629999876022339, 3.6298866271972656], 3.630000114440918)

(Over 100,000 products of uniform [-1, 1] values the default differs from fp32's one rounding
in about 0.3% of them, by less than an ulp; FAST under floor in 39%, by up to 3 ulps; LOW keeps
about 16 bits.)
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from aiedsl.kernels.bfp16 import ROUNDING_MODES, round_by_mode

__all__ = ["ACCURACIES", "MULTIPLIES", "emulated_mul", "split", "to_bf16"]

ACCURACIES = ("safe", "fast", "low")
"""The emulation's variants: the default (every kernel's ``aie::mul``/``mac``/``msc``/
``negmul`` of floats), ``AIE2_FP32_EMULATION_ACCURACY_FAST`` and ``..._LOW`` (AIE2's plain
intrinsics only)."""
MULTIPLIES = {"safe": 13, "fast": 10, "low": 5}
"""bf16 multiply instructions one vector op of each variant issues: the remainders' ``msc``
(4, or 2 for low) and the products (9, 6, 3)."""
_PRODUCTS = {"safe": ((2, 2), (2, 1), (1, 2), (0, 2), (1, 1), (2, 0), (1, 0), (0, 1), (0, 0)),
             "fast": ((0, 2), (1, 1), (2, 0), (1, 0), (0, 1), (0, 0)),
             "low": ((1, 0), (0, 1), (0, 0))}
"""The products each variant sums, in its order, as (piece of x, piece of y): 0 the first
(largest) piece."""
_TINY = np.float32(2.0 ** -126)


def _ftz(v: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """``v`` with subnormals taken as zeros of their sign (float32)."""
    f = np.asarray(v, np.float32)
    return np.where(np.abs(f) < _TINY, np.copysign(np.float32(0), f), f).astype(np.float32)


def to_bf16(x: npt.ArrayLike, rounding: str = "floor") -> npt.NDArray[np.float32]:
    """``x`` (float32) converted to bf16 as an accfloat-to-bf16 conversion does: 8 significant
    bits, rounded by the core's ``rounding`` mode (:data:`~aiedsl.kernels.bfp16.ROUNDING_MODES`),
    as float32; infinities and NaNs pass, subnormals are zeros, and a value rounding past bf16's
    largest is an infinity.

    >>> to_bf16(np.float32(1 + 2.0 ** -8 + 2.0 ** -10), "floor").item(), \\
    ...     to_bf16(np.float32(1 + 2.0 ** -8 + 2.0 ** -10), "conv_even").item()
    (1.0, 1.0078125)
    """
    if rounding not in ROUNDING_MODES:
        raise ValueError(f"unknown rounding mode {rounding!r}; one of "
                         f"{', '.join(ROUNDING_MODES)}")
    f = _ftz(x)
    finite = np.isfinite(f) & (f != 0)
    _, ex = np.frexp(np.where(finite, f, 1.0).astype(np.float64))
    scale = np.ldexp(1.0, ex - 8)  # a step of 8 significant bits
    with np.errstate(over="ignore"):
        r = (round_by_mode(np.where(finite, f, 0.0) / scale, rounding) * scale)
        out = np.where(finite, r.astype(np.float32), f)
    return _ftz(out)


def split(x: npt.ArrayLike, pieces: int, rounding: str = "floor"
          ) -> list[npt.NDArray[np.float32]]:
    """``x`` (float32) as the emulation splits it: ``pieces`` (2 or 3) bf16 values, each the
    remainder so far rounded by :func:`to_bf16`, the remainders exact (their subnormals zeros).

    >>> [p.item() for p in split(np.float32(1 + 2.0 ** -9 + 2.0 ** -20), 3)]
    [1.0, 0.001953125, 9.5367431640625e-07]
    """
    rest = _ftz(x)
    out = []
    for i in range(pieces):
        piece = to_bf16(rest, rounding)
        out.append(piece)
        if i + 1 < pieces:
            with np.errstate(invalid="ignore"):
                rest = _ftz(rest - piece)
    return out


def emulated_mul(x: npt.ArrayLike, y: npt.ArrayLike, accuracy: str = "safe",
                 rounding: str = "floor") -> npt.NDArray[np.float32]:
    """``x * y`` (float32, elementwise) as the core's emulated fp32 multiply makes it: the
    operands split into bf16 pieces by ``rounding`` (the core's mode when the kernel
    multiplies: floor at reset; floor also under AIE2's ``AIE2_FP32_EMULATION_SET_RND_MODE``),
    the ``accuracy`` variant's products summed in its order, each addition rounded to nearest
    even in float32 (see the module's docstring for what of this is known). ``aie::mul`` of
    floats is this with ``"safe"``; ``aie::mac`` adds it to the accumulator (a second
    rounding), ``aie::msc`` subtracts it, ``aie::negmul`` negates it."""
    if accuracy not in ACCURACIES:
        raise ValueError(f"unknown accuracy {accuracy!r}; one of {', '.join(ACCURACIES)}")
    pieces = 2 if accuracy == "low" else 3
    px, py = split(x, pieces, rounding), split(y, pieces, rounding)
    total: npt.NDArray[np.float32] | None = None
    with np.errstate(over="ignore", invalid="ignore"):
        for i, j in _PRODUCTS[accuracy]:
            p = _ftz(px[i] * py[j])  # exact: 8 by 8 significant bits
            total = p if total is None else _ftz(total + p)
    assert total is not None
    return total
