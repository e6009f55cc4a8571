"""The library's bf16 normalisations and activations: RMS norm and layer norm (f32 statistics),
exp, SiLU, GELU (tanh form) and row-wise softmax (f32 inside; 2^x by a polynomial on AIE2, by
the hardware's exp2 on AIE2P). Their C++ are the templates ``norm.cc.j2`` and
``activation.cc.j2``; each reference computes as the C++ does, step by step.

Example
-------
::

    from aiedsl.kernels import rms_norm, softmax
    n = rms_norm(4, 256)          # rms_norm_bf16_4x256
    s = softmax(4, 256)           # softmax_bf16_4x256 (softmax_bf16_4x256_exp2 on npu2)
"""

from __future__ import annotations

import functools

import numpy as np
import numpy.typing as npt

from aiedsl.dtypes import bf16
from aiedsl.errors import DesignError
from aiedsl.ir.types import TensorType
from aiedsl.kernels.args import buffer
from aiedsl.kernels.base import Kernel, declare
from aiedsl.kernels.fp32_emulation import MULTIPLIES, emulated_mul
from aiedsl.kernels.params import kernel_target, positive_size
from aiedsl.source_loc import caller_loc
from aiedsl.values import as_int, shown


NORM_EPS = 1e-5
"""The epsilon the norms add to the mean square / variance."""


def _row_stats(x: np.ndarray, width: int) -> tuple[np.float32, np.float32]:
    """Sum and sum of squares of a row as the kernel forms them: ``width`` float lanes
    accumulated chunk by chunk, then the lanes added in order."""
    lanes = x.astype(np.float32).reshape(-1, width)
    s = np.zeros(width, np.float32)
    q = np.zeros(width, np.float32)
    for chunk in lanes:
        s = s + chunk
        q = q + chunk * chunk
    total, squares = np.float32(0), np.float32(0)
    for i in range(width):
        total = np.float32(total + s[i])
        squares = np.float32(squares + q[i])
    return total, squares


def norm_ref(src: np.ndarray, dst: np.ndarray, *, kind: str, rows: int, cols: int,
             width: int, **_: object) -> None:
    """RMS norm (``x / sqrt(mean(x^2) + eps)``) or layer norm (``(x - mean) / sqrt(var +
    eps)``) of each row, statistics in f32 as the kernel forms them, the scale rounded to bf16
    before the bf16 multiply (as the kernel does)."""
    x = src.reshape(rows, cols)
    out = dst.reshape(rows, cols)
    n = np.float32(cols)
    for r in range(rows):
        total, squares = _row_stats(x[r], width)
        mean = np.float32(total / n) if kind == "layer" else np.float32(0)
        var = np.float32(squares / n - mean * mean)
        inv = np.float32(np.float32(1) / np.sqrt(np.float32(var + np.float32(NORM_EPS))))
        centred = (x[r].astype(np.float32) - mean).astype(src.dtype)
        scale = np.float32(inv.astype(src.dtype))
        out[...][r] = (centred.astype(np.float32) * scale).astype(src.dtype)


_EXP_POLY = [np.float32(c) for c in (1.0, 0.693147181, 0.240226507, 0.0555041087,
                                      0.00961812911, 0.00133335581)]


_BF16 = np.dtype(bf16.numpy)


def _exp_f32(x: np.ndarray, exp2: bool = False) -> np.ndarray:
    """e^x as activation.cc.j2 computes it, in float32 step by step: 2^y, y = x log2(e) clamped
    to [-126, 127], n = y rounded to the nearest integer, ties to even (as aie::to_fixed
    rounds), 2^(y - n) by the degree-5 polynomial, 2^n exactly; with ``exp2`` (AIE2P) 2^y by
    the hardware's exp2 instead, which gives bf16."""
    f32 = np.float32
    y = _fmul(x.astype(f32), f32(1.44269504))
    y = np.minimum(np.maximum(y, f32(-126.0)), f32(127.0))
    if exp2:
        return np.exp2(y.astype(np.float64)).astype(f32).astype(_BF16).astype(f32)
    n = np.rint(y)  # half to even
    f = (y - n).astype(f32)
    p = np.full_like(f, _EXP_POLY[5])
    for k in range(4, -1, -1):
        p = (_fmul(p, f) + _EXP_POLY[k]).astype(f32)
    return _fmul(p, np.ldexp(f32(1), n.astype(np.int32)).astype(f32))


def _fmul(a: npt.ArrayLike, b: npt.ArrayLike) -> np.ndarray:
    """activation.cc.j2's ``aiedsl_fmul``, an ``aie::mul`` of float vectors: the product the
    core emulates with bf16 multiplies (:mod:`aiedsl.kernels.fp32_emulation`), its pieces split
    under conv_even, the mode every call of these kernels sets."""
    a, b = np.broadcast_arrays(np.asarray(a, np.float32), np.asarray(b, np.float32))
    return emulated_mul(a, b, "safe", "conv_even")


def activation_ref(src: np.ndarray, dst: np.ndarray, *, kind: str, **params: int | str) -> None:
    """exp, SiLU, GELU (tanh form) or row-wise softmax of bf16 values as activation.cc.j2
    computes them: f32 step by step, each result rounded to bf16. Overflow to infinity is the
    C++'s too (x^3 of a large x): numpy says nothing of it."""
    with np.errstate(over="ignore", invalid="ignore"):
        _activation_ref(src, dst, kind=kind, **params)


def _activation_ref(src: np.ndarray, dst: np.ndarray, *, kind: str, **params: int | str) -> None:
    f32 = np.float32
    x = src.astype(f32)
    one = f32(1)
    hw = bool(params.get("exp2", 0))
    _exp = functools.partial(_exp_f32, exp2=hw)
    if kind == "exp":
        y = _exp(x)
    elif kind in ("silu", "gelu"):
        # x s where a >= 0, x t s where a < 0: t = e^-|a|, s = 1 / (1 + t), a = x (silu) or 2z
        # (gelu's tanh(z)), so the inverse only ever sees 1 + t in [1, 2]
        a = x
        if kind == "gelu":  # x clamped to [-20, 20] for tanh's argument, as the C++ does
            xc = np.minimum(np.maximum(x, f32(-20)), f32(20))
            x3 = _fmul(_fmul(xc, xc), xc)
            a = _fmul((xc + _fmul(x3, f32(0.044715))).astype(f32), f32(1.59576912))
        t = _exp((f32(0) - np.abs(a)).astype(f32))
        t = np.where(np.abs(a) > f32(87.33654), f32(0), t)  # subnormal: flushed to 0
        s = (one / (t + one).astype(f32)).astype(f32)
        y = _fmul(x, np.where(a < 0, _fmul(t, s), s))
    else:
        rows, cols, width = int(params["rows"]), int(params["cols"]), int(params["width"])
        xr = x.reshape(rows, cols)
        y = np.empty_like(xr)
        for r in range(rows):
            e = _exp((xr[r] - xr[r].max()).astype(f32))
            lanes = e.reshape(-1, width)
            acc = np.zeros(width, f32)
            for chunk in lanes:
                acc = (acc + chunk).astype(f32)
            total = f32(0)
            for v in acc:
                total = f32(total + v)
            y[r] = _fmul(e, one / total)
    dst[...] = y.reshape(dst.shape).astype(dst.dtype)


def _activation(kind: str, shape: tuple[int, ...], device: str | None = None) -> Kernel:
    loc = caller_loc()
    sizes = [as_int(v) for v in shape]  # numpy's integers too, as plain ints
    if not all(v is not None and v > 0 for v in sizes):
        raise DesignError("kernel", f"{kind} of shape {shown(shape)}", loc=loc,
                          limit="positive ints", found=shown(shape), fix="give the tile's size")
    shape = tuple(v for v in sizes if v is not None)
    width = 16
    if shape[-1] % width:
        raise DesignError("kernel", f"{kind} of {shape[-1]} elements per row", loc=loc,
                          limit=f"a multiple of {width}", found=str(shape[-1]),
                          fix=f"use a multiple of {width} elements")
    t = TensorType(shape=shape, dtype="bf16")
    target = kernel_target(device)
    hw = target.exp2_unit  # 2^x in hardware (aie::exp2)
    # vector steps per 16 lanes, about 1.3x the busiest unit `aiedsl kernel profile` counts:
    # the vector MAC, each float multiply (aiedsl_fmul, and aie::inv's Newton step on AIE2)
    # being 13 bf16 multiplies (the core has no fp32 multiplier:
    # aiedsl/kernels/fp32_emulation.py): exp 91 (7 multiplies), silu 182, gelu 234, softmax
    # 195 on AIE2; 13, 39, 91, 39 on AIE2P, whose 2^x and 1/x are no multiplies
    steps = ({"exp": 17, "silu": 51, "gelu": 118, "softmax": 51} if hw else
             {"exp": 118, "silu": 237, "gelu": 304, "softmax": 254})[kind]
    # The work is the function's, the same on every device (AIE2P's exp2 takes fewer steps for
    # it, a higher throughput): per element, exp 1; silu 4 (negate, exp, add 1, divide); gelu
    # 8 (cube, two multiplies and an add inside tanh, tanh, add 1, two multiplies); softmax 3
    # (exp, add to the row's sum, multiply by its inverse)
    work = {"exp": 1, "silu": 4, "gelu": 8, "softmax": 3}[kind]
    name = "x".join(str(v) for v in shape) + ("_exp2" if hw else "")
    entry = (f"softmax_bf16<{shape[0]}, {shape[1]}>" if kind == "softmax"
             else f"{kind}_bf16<{shape[0]}>")
    params: dict[str, int | str] = {"kind": kind, "width": width, "steps": steps,
                                    "exp2": int(hw)}
    if kind == "softmax":
        params |= {"rows": shape[0], "cols": shape[1]}
    how = "the hardware's exp2, to bf16" if hw else "polynomial exp"
    return declare(
        f"{kind}_bf16_{name}", source="activation.cc.j2", source_kind="template", entry=entry,
        args=[buffer("src", t), buffer("dst", t, "out")], reference=activation_ref,
        cycles=t.numel // width * steps + 16, ops=t.numel * work,
        cost=f"n/{width} x {steps} + 16: about {steps} f32 vector ops per {width} lanes "
        f"({how}) plus pipeline fill and drain and setting and restoring the rounding mode "
        "(bf16 rounds to nearest even) (aiedsl/kernels/templates/activation.cc.j2; an estimate)",
        params=params, arch=target.arch)


def exp_bf16(n: int, *, device: str | None = None) -> Kernel:
    """``e^x`` of ``n`` bf16 values, f32 inside: a polynomial exp on AIE2 (``exp_bf16_1024``),
    the hardware's exp2 on AIE2P (``exp_bf16_1024_exp2``). The device is the design's
    (``device`` outside a design)."""
    return _activation("exp", (n,), device)


def silu(n: int, *, device: str | None = None) -> Kernel:
    """SiLU ``x / (1 + e^-x)`` of ``n`` bf16 values: ``silu_bf16_1024`` (exp as
    :func:`exp_bf16`)."""
    return _activation("silu", (n,), device)


def gelu(n: int, *, device: str | None = None) -> Kernel:
    """GELU (tanh form) of ``n`` bf16 values: ``gelu_bf16_1024`` (exp as :func:`exp_bf16`)."""
    return _activation("gelu", (n,), device)


def softmax(rows: int, cols: int, *, device: str | None = None) -> Kernel:
    """Softmax of each row of a bf16 ``rows x cols`` tile: ``softmax_bf16_4x256`` (exp as
    :func:`exp_bf16`)."""
    return _activation("softmax", (rows, cols), device)


def _norm(kind: str, rows: int, cols: int) -> Kernel:
    loc = caller_loc()
    rows, cols = (positive_size(v, what, f"{kind} norm", fix="give the tile's shape", loc=loc)
                  for what, v in (("rows", rows), ("cols", cols)))
    width = 16
    if cols % width:
        raise DesignError("kernel", f"{kind} norm rows of {cols} elements", loc=loc,
                          limit=f"a multiple of {width}", found=str(cols),
                          fix=f"use rows of a multiple of {width} elements")
    t = TensorType(shape=(rows, cols), dtype="bf16")
    steps = cols // width
    # the statistics pass squares float lanes: 13 bf16 multiplies a step (the core has no fp32
    # multiplier: aiedsl/kernels/fp32_emulation.py), the scaling pass one bf16 multiply
    return declare(
        f"{kind}_norm_bf16_{rows}x{cols}", source="norm.cc.j2", source_kind="template",
        entry=f"{kind}_norm_bf16<{rows}, {cols}>",
        args=[buffer("src", t), buffer("dst", t, "out")], reference=norm_ref,
        cycles=rows * (14 * steps + 30) + 16, ops=rows * cols * 4,
        cost=f"rows(14 cols/{width} + 30) + 16: a statistics pass of {width}-lane steps, each "
        f"squaring float lanes with {MULTIPLIES['safe']} bf16 multiplies (fp32 is emulated), "
        "and a scaling pass of "
        "one multiply a step per row, ~30 cycles of lane reduction and invsqrt per row, call "
        "overhead and setting and restoring the rounding mode (bf16 rounds to nearest even) "
        "(aiedsl/kernels/templates/norm.cc.j2; an estimate)",
        params={"kind": kind, "rows": rows, "cols": cols, "width": width},
        chained=True)  # the centred value and the scale are rounded to bf16 before the product


def rms_norm(rows: int, cols: int) -> Kernel:
    """RMS norm of each row of a bf16 ``rows x cols`` tile, statistics in f32:
    ``x / sqrt(mean(x^2) + 1e-5)`` (``rms_norm_bf16_8x256``)."""
    return _norm("rms", rows, cols)


def layer_norm(rows: int, cols: int) -> Kernel:
    """Layer norm of each row of a bf16 ``rows x cols`` tile, statistics in f32:
    ``(x - mean) / sqrt(var + 1e-5)`` (``layer_norm_bf16_8x256``)."""
    return _norm("layer", rows, cols)
