"""bfp16ebs8, as AIE2P's bf16 ``aie::mmul`` of 4x8x8 and 8x8x8 uses it: aiedsl's one model of the
conversion ``::to_v64bfp16ebs8`` (the ``vconv.bfp16ebs8.fp32`` instruction) and of the multiply
that follows, which the library matmuls' numpy references use and which the host AIE API header
(``kernels_cpp/host/aie_api/host_core.hpp``, ``aiedsl_bfp16``) implements the same way, bit for
bit.

Public: :func:`to_bfp16` (a tensor quantized and back, as float32), :func:`quantize` (its
mantissas and exponents), :func:`bfp16_accumulate` (``acc += a @ b`` as the unit adds it) and
:func:`round_by_mode`. A kernel of your own that multiplies bf16 with ``aie::mmul<4, 8, 8>`` or
``<8, 8, 8>`` on npu2 runs on this unit (``aiedsl kernel test`` and ``sim --kernels native``
say so under a FAIL), so its reference quantizes A along its rows and B along its columns, in
the rounding mode the kernel sets (the reset mode, floor, if it sets none), before it
multiplies:

>>> rng = np.random.default_rng(0)
>>> A = rng.standard_normal((4, 64)).astype(np.float32)   # a kernel's bf16 A, as float32
>>> B = rng.standard_normal((64, 8)).astype(np.float32)
>>> C = to_bfp16(A, axis=1, rounding="floor") @ to_bfp16(B, axis=0, rounding="floor")
>>> bool(np.abs(C - A @ B).max() > 0.01)                   # an exact product is off by this
True

(:func:`bfp16_accumulate` adds the blocks along K in the order the kernel's loop does; a
float32 ``@`` of the quantized operands differs from it by a sum's rounding only.)

Where it applies. Under the AIE API macro aiedsl defines for AIE2P
(:data:`~aiedsl.targets.kernel_arch.BFP16_MMUL`), ``detail/aie2p/mmul_bf16_bf16.hpp``'s 4x8x8
``mac`` widens A (4x8, row-major) to an f32 accumulator, grows it to 64 lanes, transposes B (8x8)
and widens it, converts both with ``::to_v64bfp16ebs8`` and runs ``::mac_8x8_8x8T_conf``; 8x8x8
does the same with all of A. A ``v64bfp16ebs8`` is eight blocks of eight consecutive lanes, so a
block is 8 consecutive elements along K: one row of A's block, one column of B's (a row of B
transposed). Rows 4-7 of a grown 4x8 A are blocks of their own and reach only the unused half of
the result.

The format and the conversion, with how sure each part is:

* certain (llvm-aie ``aie2p_srs.h``: ``to_v64bfp16ebs8`` writes 64 ``v64int8`` mantissas and 8
  exponent bytes; mlir-aie ``programming_examples/basic/block_datatypes/helper.h``, the host
  side of its ``bfp_conversion`` test: ``bfp16QuantFloat`` takes "the max exp of the block" as
  the shared exponent and ``bfp16ebs8ToFloat`` reads a mantissa times ``2^(E - 127) / 64``):
  each block keeps one 8-bit exponent E, the largest biased exponent field among its eight
  values, and one signed 8-bit mantissa m per value; the value is ``m * 2^(E - 133)``
  (``2^(E - 127 - 6)``), so the block's largest value has a mantissa of magnitude 64 to 127;
* certain that it rounds by the core's rounding mode (llvm-aie ``AIE2PGenInstrInfo.td``:
  ``VCONV_bfp16ebs8_fp32`` has ``Uses = [crF2BMask, crRnd]``, as the f32-to-bf16
  ``VCONV_bf16_fp32`` has), i.e. ``aie::set_rounding``'s mode: the reset mode, floor, unless
  the kernel set another. mm.cc and mm_cascade.cc set conv_even for the call, whatever C is,
  as IRON's aie2p mm.cc (amd/IRON, aie_kernels/aie2p/mm.cc) does under ``ROUND_CONV_EVEN``,
  which IRON's GEMM passes.
  A mantissa is the value over ``2^(E - 133)`` rounded by the mode, with aie::rounding_mode's
  tie rules (the same as the host header's ``round_shift``);
* not known here, and chosen: a value that rounds past 127 (under conv_even, a positive block
  maximum whose bf16 mantissa is all ones: 127.5 rounds to 128) is saturated to 127 (as
  mlir-aie's helper.h "keep[s] the current scale and round[s] down", a host-side quantizer,
  not a model of the instruction); the hardware might move the block to the next exponent
  instead, as one public third-party project's host model does and says an NPU probe settled
  (not an AMD source; its data is not available here): ``quantize(..., overflow=
  "renormalize")``, and the comparison allows for either (:mod:`aiedsl.bfp16_allowance`).
  Floor never rounds past 127, and -128 fits. A block
  holding an infinity or a NaN (exponent field 255) is all NaN here. A subnormal input is
  taken at its value (the block's E may then be 0, a step of 2^-133); whether the core flushes
  it first is not known.
* the multiply (``mac_8x8_8x8T``): the eight products of a row block and a column block share
  one scale, ``2^(Ea + Eb - 266)``, and their sum (at most 8 * 128 * 128) is exact; it is
  taken to be added to the f32 accumulator once, rounded to nearest even, block after block
  along K as the kernel's loop calls ``mac``. How the hardware adds it is not known here; an
  f32 result any order of those additions gives differs by f32 rounding only.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BLOCK", "OVERFLOWS", "ROUNDING_MODES", "bfp16_accumulate", "quantize", "round_by_mode",
           "to_bfp16"]

BLOCK = 8
"""Values that share an exponent: ``bfp16ebs8``'s block size."""
STEP_BIAS = 133
"""A mantissa's step is ``2^(E - STEP_BIAS)``: f32's exponent bias 127, plus 6 for the 7 bits of
magnitude under the sign."""
MANTISSA_MIN, MANTISSA_MAX = -128, 127
"""A signed 8-bit mantissa's range (values rounding past it are saturated: see above)."""
ROUNDING_MODES = ("floor", "ceil", "symmetric_floor", "symmetric_ceil", "positive_inf",
                  "negative_inf", "symmetric_inf", "symmetric_zero", "conv_even", "conv_odd")
"""aie::rounding_mode's modes, in its order (the host header's ``aie::rounding_mode``)."""


def round_by_mode(v: np.ndarray, mode: str) -> np.ndarray:
    """``v`` (float64, exact) rounded to whole numbers as the core's rounding ``mode`` rounds:
    floor, ceil, toward zero (symmetric_floor), away from zero (symmetric_ceil), or to nearest
    with a tie going up (positive_inf), down (negative_inf), away from zero (symmetric_inf),
    toward zero (symmetric_zero), to even or to odd.

    >>> round_by_mode(np.array([-2.5, -0.5, 0.5, 1.5, 2.25]), "conv_even").tolist()
    [-2.0, 0.0, 0.0, 2.0, 2.0]
    >>> round_by_mode(np.array([-0.25, 0.75]), "floor").tolist()
    [-1.0, 0.0]
    """
    if mode not in ROUNDING_MODES:
        raise ValueError(f"unknown rounding mode {mode!r}; one of {', '.join(ROUNDING_MODES)}")
    low = np.floor(v)
    frac = v - low
    high = low + 1
    neg = v < 0
    if mode == "floor":
        out = low
    elif mode == "ceil":
        out = high
    elif mode == "symmetric_floor":
        out = np.where(neg, high, low)
    elif mode == "symmetric_ceil":
        out = np.where(neg, low, high)
    else:
        odd = np.mod(low, 2) == 1
        tie = {"positive_inf": high, "negative_inf": low,
               "symmetric_inf": np.where(neg, low, high),
               "symmetric_zero": np.where(neg, high, low),
               "conv_even": np.where(odd, high, low),
               "conv_odd": np.where(odd, low, high)}[mode]
        out = np.where(frac > 0.5, high, np.where(frac < 0.5, low, tie))
    return np.where(frac == 0, low, out)


OVERFLOWS = ("saturate", "renormalize")
"""What a mantissa rounding past 127 does (not known of the hardware: see above): saturate to
127, the model's choice, or move its block to the next exponent, rounded again there."""


def quantize(x: np.ndarray, axis: int = -1, rounding: str = "floor",
             overflow: str = "saturate") -> tuple[np.ndarray, np.ndarray]:
    """``x``'s bfp16ebs8 form, in blocks of :data:`BLOCK` consecutive elements along ``axis``
    (its length a multiple of 8): the signed mantissas (int8, shaped as ``x``) and each block's
    exponent E (int16, ``x``'s shape with ``axis`` divided by 8; 255 for a block holding an
    infinity or NaN, whose mantissas are then 0). The value of element i is
    ``m_i * 2^(E - 133)``; see the module's docstring for the model and its sources.
    ``overflow``: one of :data:`OVERFLOWS`.

    >>> m, e = quantize(np.array([1.0, -1.0, 2.0, 0.5, -1.5, 3.0, 2.0**-10, -2.0**-10]))
    >>> m.tolist(), e.tolist()
    ([32, -32, 64, 16, -48, 96, 0, -1], [128])
    """
    f = np.moveaxis(np.asarray(x, dtype=np.float32), axis, -1)
    if f.shape[-1] % BLOCK:
        raise ValueError(f"bfp16ebs8 blocks {BLOCK} values: an axis of {f.shape[-1]} is not "
                         "a whole number of blocks")
    blocks = f.reshape(*f.shape[:-1], f.shape[-1] // BLOCK, BLOCK)
    fields = ((blocks.view(np.uint32) >> 23) & 0xFF).astype(np.int16)
    big = fields.max(axis=-1)
    finite = big < 0xFF
    scale = np.ldexp(1.0, np.where(finite, big, 0).astype(np.int64) - STEP_BIAS)
    with np.errstate(invalid="ignore"):
        v = np.where(finite[..., None], blocks.astype(np.float64) / scale[..., None], 0.0)
    rounded = round_by_mode(v, rounding)
    if overflow == "renormalize":
        # (a block at the largest finite exponent has none above it: it saturates)
        past = finite & (big < 0xFE) & (
            (rounded > MANTISSA_MAX) | (rounded < MANTISSA_MIN)).any(axis=-1)
        if past.any():
            big = np.where(past, big + 1, big).astype(np.int16)
            with np.errstate(invalid="ignore"):
                rounded = np.where(past[..., None], round_by_mode(v / 2, rounding), rounded)
    elif overflow != "saturate":
        raise ValueError(f"overflow {overflow!r}: one of {', '.join(OVERFLOWS)}")
    m = np.clip(rounded, MANTISSA_MIN, MANTISSA_MAX).astype(np.int8)
    return np.moveaxis(m.reshape(f.shape), -1, axis), np.moveaxis(big, -1, axis)


def to_bfp16(x: np.ndarray, axis: int = -1, rounding: str = "floor",
             overflow: str = "saturate") -> np.ndarray:
    """``x`` converted to bfp16ebs8 along ``axis`` (:func:`quantize`) and back: float32, each
    value exactly ``m * 2^(E - 133)`` (NaN for a block holding an infinity or NaN).

    >>> to_bfp16(np.array([1.0, 1 + 2.0**-7, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]), rounding="floor"
    ...          ).tolist()[:2]
    [1.0, 1.0]
    """
    m, e = quantize(x, axis, rounding, overflow)
    mt = np.moveaxis(m, axis, -1)
    et = np.moveaxis(e, axis, -1).astype(np.int64)
    scale = np.where(et < 0xFF, np.ldexp(1.0, et - STEP_BIAS), np.nan)
    v = mt.reshape(*mt.shape[:-1], -1, BLOCK).astype(np.float64) * scale[..., None]
    return np.moveaxis(v.reshape(mt.shape).astype(np.float32), -1, axis)


def bfp16_accumulate(acc: np.ndarray, a: np.ndarray, b: np.ndarray, rounding: str) -> None:
    """``acc += a @ b`` as the mmul on the bfp16 unit adds it (f32 ``acc``, in place): ``a``
    (m x K, row-major) quantized along its rows, ``b`` (K x n) along its columns, each block of
    8 along K multiplied exactly and added to ``acc`` in f32, rounded to nearest even, block
    after block along K (the module's docstring says what of this is known)."""
    rows, depth = a.shape
    qa = to_bfp16(a, axis=1, rounding=rounding).astype(np.float64)
    qb = to_bfp16(b, axis=0, rounding=rounding).astype(np.float64)
    # each block's dot is exact in float64: eight products of one scale, at most 2^17 of it
    dots = np.matmul(qa.reshape(rows, depth // BLOCK, BLOCK).transpose(1, 0, 2),
                     qb.reshape(depth // BLOCK, BLOCK, -1))
    for d in dots:
        np.add(acc, d.astype(np.float32), out=acc)
