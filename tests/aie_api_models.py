"""Numpy models of what the AIE API (2026.1, jgmelber/aie_api) computes on the core, step by
step, for the tests of aiedsl's host AIE API header: written from the API's sources, not from
the header, so that a test compares two readings of them.

* ``inv_f32``, ``invsqrt_f32``: AIE2's float vector inv / invsqrt,
  ``detail/aie2/elementary.hpp``, ``elementary_vector_bits_impl<Inv / InvSqrt, 32, float, float,
  N>``: an integer seed and one Newton step. Every fp32 product is the core's emulated one
  (llvm-aie ``aiev2_core.h``'s plain ``mul_elem_16`` ..., of bf16 pieces split by the rounding
  mode: aiedsl's model, ``aiedsl/kernels/fp32_emulation.py``, in the accuracy the kernel is
  compiled with), and an operand or result below float's smallest normal is a zero of its sign
  (AM020: the AIE-ML floating-point data path has no denormals).
* ``inv_bf16``, ``invsqrt_bf16``: the same file's bf16 specializations: the same steps with bf16
  operands, each accfloat result converted to bf16 (to nearest even: the tests set conv_even).
* ``fold_sum``, ``rows_sum_bf16``: ``detail/aie2/add_reduce.hpp``: a float reduction folded in
  halves (AIE2 and AIE2P, and bf16 on AIE2P), and AIE2's bf16 one by rows of 8.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import numpy.typing as npt

from aiedsl.kernels.fp32_emulation import emulated_mul

F = np.float32
BF16 = ml_dtypes.bfloat16
Floats = npt.NDArray[np.float32]

C1 = np.uint32(0x5F1FFFF9)
C2 = F(0.703952253)
C3 = F(2.38924456)
C2C3 = F(C2 * C3)  # the API's constexpr float product


def ftz(x: npt.ArrayLike) -> Floats:
    """``x`` as float32 with values below the smallest normal made zeros of their sign."""
    a = np.asarray(x, F)
    return np.where(np.abs(a) < F(2.0 ** -126), np.copysign(F(0), a), a).astype(F)


def fmul(a: npt.ArrayLike, b: npt.ArrayLike, rounding: str = "floor",
         accuracy: str = "safe") -> Floats:
    """One fp32 product as AIE2's plain intrinsics emulate it (its pieces split by the tile's
    ``rounding`` mode), flushed."""
    return emulated_mul(ftz(a), ftz(b), accuracy, rounding)


def bf(x: npt.ArrayLike) -> Floats:
    """An accfloat value converted to bf16 (to nearest even), as float32."""
    return ftz(x).astype(BF16).astype(F)


def inv_f32(x: npt.ArrayLike, rounding: str = "floor", accuracy: str = "safe") -> Floats:
    """AIE2's float vector inv: y = bits(0x7eb53567 - bits(x)); -(x*y) + k2; times y; times -k1
    (that is -y1); y1 * (2 - y1 * x) as negmul(-y1, mac(-y1, x, 2)), each product emulated."""
    xs = np.asarray(x, F)

    def mul(a: npt.ArrayLike, b: npt.ArrayLike) -> Floats:
        return fmul(a, b, rounding, accuracy)

    with np.errstate(all="ignore"):
        y = ftz((np.uint32(0x7EB53567) - xs.view(np.uint32)).view(F))
        acc = ftz(-mul(xs, y) + F(1.436142))
        acc = mul(acc, y)
        neg_y = -mul(acc, F(1.9395974))
        r = ftz(mul(neg_y, xs) + F(2))
        return -mul(neg_y, r)


def halved(bits: npt.NDArray[np.int32], rounding: str) -> npt.NDArray[np.int64]:
    """``bits / 2`` as ``accum<acc64>(bits).to_vector<int32>(1)`` rounds it: down under floor,
    a tie to even under conv_even."""
    b = bits.astype(np.int64)
    q = b >> 1
    if rounding == "floor":
        return q
    return np.where(((b & 1) == 1) & ((q & 1) == 1), q + 1, q)


def seed(x: npt.ArrayLike, rounding: str) -> Floats:
    """invsqrt's seed: C1 minus the float's bits halved (an int32 sub: it wraps)."""
    h = halved(np.asarray(x, F).view(np.int32), rounding)
    return ftz((C1 - h.astype(np.uint32)).view(F))


def invsqrt_f32(x: npt.ArrayLike, rounding: str = "floor", accuracy: str = "safe") -> Floats:
    """AIE2's float vector invsqrt: x2 = x*C2; y the seed; C2C3 - x2*(y*y) (the product rounded,
    then the difference); y times that, each product emulated."""
    xs = np.asarray(x, F)

    def mul(a: npt.ArrayLike, b: npt.ArrayLike) -> Floats:
        return fmul(a, b, rounding, accuracy)

    with np.errstate(all="ignore"):
        x2 = mul(xs, C2)
        y = seed(xs, rounding)
        x2yy = ftz(C2C3 - mul(x2, mul(y, y)))
        return mul(y, x2yy)


def inv_bf16(x: npt.ArrayLike) -> npt.NDArray[np.generic]:
    """AIE2's bf16 vector inv: the seed 0x7eb5 - bits(x) (an int16 sub), then inv_f32's steps
    with k1 as bf16 (1.9375), each result converted to bf16 (a bf16 product is exact in fp32)."""
    xs = np.asarray(x, BF16)
    with np.errstate(all="ignore"):
        xf = ftz(xs.astype(F))
        y = ftz((np.uint16(0x7EB5) - xs.view(np.uint16)).view(BF16).astype(F))
        t = bf(-(xf * y) + F(1.436142))
        t = bf(t * y)
        neg_y = bf(-(t * F(1.9375)))
        r = bf(neg_y * xf + F(2))
        return bf(-(neg_y * r)).astype(BF16)


def invsqrt_bf16(x: npt.ArrayLike, rounding: str = "floor") -> npt.NDArray[np.generic]:
    """AIE2's bf16 vector invsqrt: x2 = bf16(x * bf16(C2)); y = bf16(seed); yy = bf16(y*y);
    bf16(C2C3 - x2*yy); bf16(y * that)."""
    xs = np.asarray(x, BF16)
    with np.errstate(all="ignore"):
        xf = xs.astype(F)
        x2 = bf(ftz(xf) * F(0.703125))
        y = bf(seed(xf, rounding))
        yy = bf(y * y)
        x2yy = bf(C2C3 - x2 * yy)
        return bf(y * x2yy).astype(BF16)


def fold_sum(x: npt.ArrayLike) -> np.float32:
    """Lanes summed in fp32 by folding halves: lane i + lane i + n/2, n halving to 1."""
    t = np.asarray(x, F).copy()
    n = t.size
    while n > 1:
        t[: n // 2] = t[: n // 2] + t[n // 2: n]
        n //= 2
    return F(t[0])


def rows_sum_bf16(x: npt.ArrayLike) -> np.float32:
    """AIE2's bf16 reduce_add before its conversion: each 32 lanes a 4 x 8 block times ones
    (each row of 8 summed in order here), the blocks' rows accumulated, then rows 0 + 2 and
    1 + 3, then 0 + 1 (as far as the lanes reach)."""
    v = np.asarray(x, BF16).astype(F)
    n = v.size
    rows = np.zeros(4, F)
    for base in range(0, n, 32):
        for r in range(4):
            if base + 8 * r < n:
                dot = F(0)
                for k in range(8):
                    dot = F(dot + v[base + 8 * r + k])
                rows[r] = F(rows[r] + dot)
    if n > 16:
        rows[0], rows[1] = F(rows[0] + rows[2]), F(rows[1] + rows[3])
    if n > 8:
        rows[0] = F(rows[0] + rows[1])
    return F(rows[0])
