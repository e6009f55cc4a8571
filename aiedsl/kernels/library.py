"""The shipped kernel library: zero, passthrough, scale, threshold, rgba2gray, element-wise and
reductions,
with the matmul family of :mod:`aiedsl.kernels.matmul`, :mod:`~aiedsl.kernels.cascade` and
:mod:`~aiedsl.kernels.conv`, and the norms and activations of
:mod:`aiedsl.kernels.activations`.

Each factory returns a :class:`~aiedsl.kernels.base.Kernel` whose symbol carries its shape, whose
C++ is a file in ``kernels_cpp/``, and whose numpy reference computes on the buffers exactly as the
C++ does (including the blocked layouts of the mmul kernels). Cost formulas are documented in the
header of each C++ file.

Example
-------
::

    from aiedsl.kernels import matmul, zero
    mm = matmul(64, 64, 64)             # matmul_bf16_f32_64x64x64
    z = zero(Tensor[64, 64, f32])       # zero_f32_4096
"""

from __future__ import annotations

import numpy as np

from aiedsl.dtypes import DType, i16, i32, u8
from aiedsl.errors import DesignError
from aiedsl.ir.types import TensorType
from aiedsl.kernels.args import buffer, scalar
from aiedsl.kernels.base import Kernel, declare
from aiedsl.kernels.params import positive_size, tensor_type
from aiedsl.kernels.activations import (  # noqa: F401 (re-exported: the library's)
    NORM_EPS, activation_ref, exp_bf16, gelu, layer_norm, norm_ref, rms_norm, silu, softmax,
)
from aiedsl.kernels.cascade import (  # noqa: F401 (the library's, re-exported)
    CASCADE_ROLES, matmul_cascade, matmul_cascade_ref,
)
from aiedsl.kernels.conv import conv2d_1x1, conv2d_3x3  # noqa: F401 (likewise)
from aiedsl.kernels.matmul import (  # noqa: F401 (likewise)
    MATMUL_OUT, MATMUL_OUTS, MATMUL_PATCH, PUBLISHED, matmul, matmul_cycles, matmul_narrow,
    matmul_ref, srs,
)
from aiedsl.lang.tensor import lookup_dtype
from aiedsl.library_vectors import ELTWISE_DTYPES, library_lanes
from aiedsl.source_loc import caller_loc


def _vector_cycles(nbytes: int) -> int:
    return nbytes // 32 + 14


def zero_ref(c: np.ndarray, **_: object) -> None:
    """Set every element to 0."""
    c[...] = 0


def zero(t: TensorType) -> Kernel:
    """Set a buffer of type ``t`` to zero (``zero_<dtype>_<n>``)."""
    t = tensor_type(t, "zero")
    width = library_lanes(t.dtype)
    _check_width(t, width, "zero")
    return declare(
        f"zero_{t.dtype}_{t.numel}", source="zero.cc", entry=f"zero<{t.dt.cpp}, {t.numel}>",
        args=[buffer("c", t, "out")], reference=zero_ref, cycles=_vector_cycles(t.nbytes),
        cost="bytes/32 + 14: one 256-bit store per cycle plus pipeline fill and drain "
        "(kernels_cpp/zero.cc)", params={"n": t.numel})


def passthrough_ref(src: np.ndarray, dst: np.ndarray, **_: object) -> None:
    """Copy ``src`` to ``dst``."""
    dst.reshape(-1)[...] = src.reshape(-1)


def passthrough(t: TensorType) -> Kernel:
    """Copy a buffer of type ``t`` into another (``passthrough_<dtype>_<n>``)."""
    t = tensor_type(t, "passthrough")
    _check_width(t, library_lanes(t.dtype), "passthrough")
    return declare(
        f"passthrough_{t.dtype}_{t.numel}", source="passthrough.cc",
        entry=f"passthrough<{t.dt.cpp}, {t.numel}>",
        args=[buffer("src", t), buffer("dst", t, "out")], reference=passthrough_ref, exact=True,
        cycles=_vector_cycles(t.nbytes),
        cost="bytes/32 + 14: store-bound copy plus pipeline fill and drain "
        "(kernels_cpp/passthrough.cc)",
        params={"n": t.numel})


def scale_ref(src: np.ndarray, dst: np.ndarray, factor: np.ndarray, length: int,
              **_: object) -> None:
    """``dst = src * (int16)factor[0]`` over the whole buffer, keeping the low 16 bits of the
    products, as scale.cc does. ``length`` is not read: the C++ runs to its compile-time N
    (``aiedsl check`` holds a call's ``n`` to it; a value from an rtp slot is not looked at)."""
    f = _narrowed(int(factor.reshape(-1)[0]), np.dtype(np.int16)).astype(np.int64)  # (int16_t)
    prod = src.reshape(-1).astype(np.int64) * f
    dst.reshape(-1)[...] = prod.astype(np.int16)  # wraps: the AIE's default, no saturation


def scale(n: int) -> Kernel:
    """Multiply ``n`` int16 values by an int32 factor read from a 1-element buffer (its low 16
    bits: the C++ takes it as int16). The call's last argument must be ``n`` itself: the C++ is
    compiled for ``n`` elements and does not read it, so ``aiedsl check`` refuses another value
    (from an rtp slot, every ``rt.rtp_write`` of it is checked)."""
    n = _size(n, "n", "scale")
    t = TensorType(shape=(n,), dtype=i16.name)
    _check_width(t, 32, "scale")
    return declare(
        f"scale_i16_{n}", source="scale.cc", entry=f"scale_i16<{n}>",
        args=[buffer("src", t), buffer("dst", t, "out"),
              buffer("factor", TensorType(shape=(1,), dtype=i32.name)),
              scalar("n", i32, equals=n)],
        reference=scale_ref, cycles=2 * (n // 32) + 14, ops=n,
        cost="2(n/32) + 14: measured 78 cycles for n=1024 on npu1 with Peano (mlir-aie "
        "programming guide, section 4b) (kernels_cpp/scale.cc)",
        params={"n": n})


def threshold_ref(src: np.ndarray, dst: np.ndarray, level: int, length: int,
                  **_: object) -> None:
    """``dst = min(src, (uint8)level)`` over the whole buffer, as threshold.cc does (the
    truncating threshold). ``length`` is not read: the C++ runs to its compile-time N."""
    t = _narrowed(level, np.dtype(np.uint8))  # static_cast<uint8_t>: the low 8 bits
    dst.reshape(-1)[...] = np.minimum(src.reshape(-1), t)


def threshold(n: int) -> Kernel:
    """Truncate ``n`` uint8 values at a threshold (``min(x, thr)``): the threshold is an int32
    scalar, typically a runtime parameter (``thr[0]`` of an :func:`aiedsl.rtp`), which the C++
    takes as uint8: ``aiedsl check`` refuses a level outside 0..255, passed or written into the
    slot by ``rt.rtp_write`` (it would wrap: 300 would truncate at 44). The last argument must be
    ``n`` itself: the C++ is compiled for ``n`` elements and does not read it, so ``aiedsl
    check`` refuses another value (from an rtp slot, every ``rt.rtp_write`` of it is checked)."""
    n = _size(n, "n", "threshold")
    t = TensorType(shape=(n,), dtype=u8.name)
    _check_width(t, 64, "threshold")
    return declare(
        f"threshold_u8_{n}", source="threshold.cc", entry=f"threshold_u8<{n}>",
        args=[buffer("src", t), buffer("dst", t, "out"),
              scalar("thr", i32, narrows_to=u8), scalar("n", i32, equals=n)],
        reference=threshold_ref, cycles=2 * (n // 64) + 14, ops=n,
        cost="2(n/64) + 14: one 64-lane uint8 vmin per 512-bit load, store-bound at 2 cycles "
        "per vector like scale.cc (kernels_cpp/threshold.cc)",
        # thr: only the value `aiedsl kernel test` runs the C++ with (the design's comes from
        # its call); 50 sits inside the test's random pixels (0..100), so both branches run
        params={"n": n, "thr": 50})


RGBA2GRAY_WEIGHTS = (77, 150, 29)
"""BT.601's luma weights of R, G and B (0.299, 0.587, 0.114) times 256, rounded: they sum to
256, so white stays 255 (kernels_cpp/rgba2gray.cc)."""


def rgba2gray_ref(src: np.ndarray, dst: np.ndarray, **_: object) -> None:
    """``dst = (77 R + 150 G + 29 B) / 256`` per RGBA pixel of ``src``, rounded to nearest,
    ties to even, as rgba2gray.cc's srs in conv_even mode does (alpha is ignored)."""
    px = src.reshape(-1, 4).astype(np.int64)
    wr, wg, wb = RGBA2GRAY_WEIGHTS
    s = wr * px[:, 0] + wg * px[:, 1] + wb * px[:, 2]
    q, rem = s >> 8, s & 255
    q += (rem > 128) | ((rem == 128) & (q & 1 == 1))
    dst.reshape(-1)[...] = q  # at most 255: the weights sum to 256


def rgba2gray(n: int) -> Kernel:
    """``n`` RGBA pixels (``4 * n`` uint8, R, G, B, A) to ``n`` uint8 gray values, BT.601's
    luma in 8-bit fixed point: ``(77 R + 150 G + 29 B) / 256`` rounded to nearest even (the
    vision kernel of Riallto's and mlir-aie's edge-detect pipelines; alpha is ignored).

    Example
    -------
    ::

        gray = rgba2gray(1920)   # one 1080p line: src Tensor[7680, u8], dst Tensor[1920, u8]
    """
    n = _size(n, "n", "rgba2gray")
    t = TensorType(shape=(n,), dtype=u8.name)
    _check_width(t, 32, "rgba2gray")
    return declare(
        f"rgba2gray_u8_{n}", source="rgba2gray.cc", entry=f"rgba2gray_u8<{n}>",
        args=[buffer("src", TensorType(shape=(4 * n,), dtype=u8.name)), buffer("dst", t, "out")],
        reference=rgba2gray_ref, cycles=5 * (n // 32) + 20, ops=n,
        cost="5(n/32) + 20: per 32 pixels two 512-bit loads, five channel filters on the "
        "shuffle unit (the bound, one a cycle), a mul and two macs, one srs and one store "
        "(kernels_cpp/rgba2gray.cc)",
        params={"n": n})


def _size(value: object, what: str, kernel: str) -> int:
    """Size ``what`` of library kernel ``kernel`` as a plain int (a float would have named the
    kernel's ``equals=`` instead)."""
    return positive_size(value, what, kernel,
                         fix="give the tile's size as an int (// divides exactly)")


def _check_width(t: TensorType, width: int, kernel: str) -> None:
    if t.numel % width:
        raise DesignError(
            "kernel", f"{t} is not a whole number of {width}-element vectors, as library kernel "
            f"{kernel} needs (its C++ moves whole vectors)", loc=caller_loc(),
            limit=f"a multiple of {width} elements", found=str(t.numel),
            fix=f"use a size that is a multiple of {width}")


def _eltwise_ref(a: np.ndarray, b: np.ndarray, c: np.ndarray, *, op: str, **_: object) -> None:
    """Integers in int64, kept to their low bits; bf16 in float32, rounded to nearest even."""
    wide = (a.astype(np.float32), b.astype(np.float32)) if c.dtype.kind == "V" or \
        c.dtype.name == "bfloat16" else (a.astype(np.int64), b.astype(np.int64))
    out = {"add": wide[0] + wide[1], "sub": wide[0] - wide[1], "mul": wide[0] * wide[1]}[op]
    c[...] = out.astype(c.dtype)


def add_ref(a: np.ndarray, b: np.ndarray, c: np.ndarray, **params: object) -> None:
    """``c = a + b`` (integers wrap)."""
    _eltwise_ref(a, b, c, **params)  # type: ignore[arg-type]


def sub_ref(a: np.ndarray, b: np.ndarray, c: np.ndarray, **params: object) -> None:
    """``c = a - b`` (integers wrap)."""
    _eltwise_ref(a, b, c, **params)  # type: ignore[arg-type]


def mul_ref(a: np.ndarray, b: np.ndarray, c: np.ndarray, **params: object) -> None:
    """``c = a * b``, keeping the low bits of integer products (no saturation)."""
    _eltwise_ref(a, b, c, **params)  # type: ignore[arg-type]


_SYMBOL_OP = {"add": "+", "sub": "-", "mul": "*"}
_ELTWISE_REF = {"add": add_ref, "sub": sub_ref, "mul": mul_ref}

RELU_DTYPES = ("bf16", "i8", "i16", "i32")
"""Element types of relu."""
REDUCE_DTYPES = {"add": ("i16", "i32"), "max": ("bf16", "i16", "i32")}
"""Element types of reduce_sum (add) and reduce_max (max)."""


def _mode_cycles(t: TensorType) -> int:
    """Cycles a kernel of ``t`` elements spends setting the rounding mode to conv_even and
    restoring it (two control-register writes and a read): bf16 results need it, since the core
    rounds float -> bf16 by that mode (reset: floor)."""
    return 2 if t.dtype == "bf16" else 0


_MODE_COST = " and setting and restoring the rounding mode (bf16 rounds to nearest even)"


def _eltwise(op: str, t: TensorType) -> Kernel:
    t = tensor_type(t, op)
    if t.dtype not in ELTWISE_DTYPES:
        raise DesignError("kernel", f"elementwise {op} of {t.dtype} is not in the library yet",
                          loc=caller_loc(), found=t.dtype, fix="use bf16, i16 or i32 elements")
    width = library_lanes(t.dtype)
    _check_width(t, width, op)
    return declare(
        f"{op}_{t.dtype}_{t.numel}", source="eltwise.cc.j2", source_kind="template",
        entry=f"eltwise_{op}_{t.dtype}<{t.numel}>",
        args=[buffer("a", t), buffer("b", t), buffer("c", t, "out")],
        reference=_ELTWISE_REF[op], cycles=2 * (t.numel // width) + 14 + _mode_cycles(t),
        ops=t.numel,
        cost=f"2n/width + {14 + _mode_cycles(t)}: a 512-bit result per two cycles (AIE2 stores "
        f"256 bits a cycle) plus pipeline fill and drain{_MODE_COST if _mode_cycles(t) else ''} "
        "(aiedsl/kernels/templates/eltwise.cc.j2)",
        params={"op": op, "symbol_op": _SYMBOL_OP[op], "dtype": t.dtype,
                "cpp": t.dt.cpp, "n": t.numel, "width": width})


def add(t: TensorType) -> Kernel:
    """Elementwise ``c = a + b`` on buffers of type ``t`` (bf16, i16 or i32)."""
    return _eltwise("add", t)


def sub(t: TensorType) -> Kernel:
    """Elementwise ``c = a - b`` on buffers of type ``t`` (bf16, i16 or i32)."""
    return _eltwise("sub", t)


def mul(t: TensorType) -> Kernel:
    """Elementwise ``c = a * b`` on buffers of type ``t`` (bf16, i16 or i32)."""
    return _eltwise("mul", t)


def vs_ref(a: np.ndarray, c: np.ndarray, value: float, *, op: str, **_: object) -> None:
    """``c = a op value``: the scalar narrowed to the element type first, as the C++'s
    ``(T)s`` does (an i16 kernel keeps the low 16 bits of its i32 scalar, bf16 rounds the f32
    scalar to nearest even), then as :func:`_eltwise_ref` computes."""
    _eltwise_ref(a, np.full_like(a, _narrowed(value, a.dtype)), c, op=op)


def _narrowed(value: float, dt: np.dtype) -> np.ndarray:
    """``value`` as the C++ casts its scalar parameter to element type ``dt``: integers keep
    their low bits, floats go through the f32 parameter first. ``aiedsl check`` refuses a value
    that would lose bits, in a call or an ``rt.rtp_write``; this narrows anyway, so that the
    reference agrees with the C++ on whatever reaches it (``numpy.full_like`` raised
    OverflowError for 70000 in an int16 array)."""
    if dt.kind in "iu":
        return np.array(int(value), dtype=np.int64).astype(dt)
    return np.array(value, dtype=np.float32).astype(dt)


def vector_scalar(op: str, t: TensorType) -> Kernel:
    """Elementwise ``c = a op s`` with a scalar ``s`` from the call (``op``: add, sub, mul):
    ``vs_mul_bf16_1024(ta, tc, 0.5)``. bf16 kernels take an f32 scalar, integers an i32; the
    C++ narrows it to the element type, so ``aiedsl check`` refuses a value outside that type's
    range (an i16 kernel takes -32768..32767), which would wrap unseen."""
    if op not in _SYMBOL_OP:
        raise DesignError("kernel", f"vector_scalar op {op!r}", loc=caller_loc(),
                          limit="'add', 'sub' or 'mul'", found=repr(op), fix="use one of them")
    t = tensor_type(t, "vector_scalar")
    if t.dtype not in ELTWISE_DTYPES:
        raise DesignError("kernel", f"vector-scalar {op} of {t.dtype} is not in the library",
                          loc=caller_loc(), found=t.dtype, fix="use bf16, i16 or i32 elements")
    width = library_lanes(t.dtype)
    _check_width(t, width, f"vector_scalar('{op}')")
    sdt = "f32" if t.dtype == "bf16" else "i32"
    return declare(
        f"vs_{op}_{t.dtype}_{t.numel}", source="vector_scalar.cc.j2", source_kind="template",
        entry=f"vs_{op}_{t.dtype}<{t.numel}>",
        args=[buffer("a", t), buffer("c", t, "out"),
              scalar("s", sdt, narrows_to=None if t.dtype == sdt else t.dtype)],
        reference=vs_ref, cycles=2 * (t.numel // width) + 14 + _mode_cycles(t), ops=t.numel,
        cost=f"2n/width + {14 + _mode_cycles(t)}: a 512-bit result per two cycles (AIE2 stores "
        f"256 bits a cycle) plus pipeline fill and drain{_MODE_COST if _mode_cycles(t) else ''} "
        "(aiedsl/kernels/templates/vector_scalar.cc.j2)",
        params={"op": op, "dtype": t.dtype, "cpp": t.dt.cpp,
                "scpp": lookup_dtype(sdt, caller_loc()).cpp, "n": t.numel, "width": width,
                "s": 3})  # s: the value `kernel test` uses


def relu_ref(src: np.ndarray, dst: np.ndarray, **_: object) -> None:
    """``dst = max(src, 0)``."""
    dst[...] = np.maximum(src, np.zeros((), dtype=src.dtype))


def relu(t: TensorType) -> Kernel:
    """``out = max(in, 0)`` elementwise on buffers of type ``t`` (bf16, i8, i16 or i32)."""
    t = tensor_type(t, "relu")
    if t.dtype not in RELU_DTYPES:
        raise DesignError("kernel", f"relu of {t.dtype} is not in the library", loc=caller_loc(),
                          found=t.dtype, fix="use bf16, i8, i16 or i32 elements")
    width = library_lanes(t.dtype)
    _check_width(t, width, "relu")
    return declare(
        f"relu_{t.dtype}_{t.numel}", source="relu.cc.j2", source_kind="template",
        entry=f"relu_{t.dtype}<{t.numel}>", args=[buffer("src", t), buffer("dst", t, "out")],
        reference=relu_ref, exact=True, cycles=2 * (t.numel // width) + 14, ops=t.numel,
        cost="2n/width + 14: a 512-bit max per two cycles (AIE2 stores 256 bits a cycle) plus "
        "pipeline fill and drain "
        "(aiedsl/kernels/templates/relu.cc.j2)",
        params={"dtype": t.dtype, "cpp": t.dt.cpp, "n": t.numel, "width": width})


def reduce_ref(src: np.ndarray, dst: np.ndarray, *, op: str, **_: object) -> None:
    """Row-wise sum (integers keep their low bits) or max."""
    if op == "add":
        dst[...] = src.astype(np.int64).sum(axis=1).astype(dst.dtype)
    else:
        dst[...] = src.max(axis=1)


def _reduce(op: str, rows: int, cols: int, dt: DType | str) -> Kernel:
    d = lookup_dtype(dt, caller_loc())
    allowed = REDUCE_DTYPES[op]
    name = "reduce_sum" if op == "add" else "reduce_max"
    rows, cols = _size(rows, "rows", name), _size(cols, "cols", name)
    if d.name not in allowed:
        raise DesignError("kernel", f"{name} of {d} is not in the library", loc=caller_loc(),
                          found=d.name, fix=f"use {' or '.join(allowed)} elements")
    src = TensorType(shape=(rows, cols), dtype=d.name)
    width = library_lanes(d.name)
    if cols % width:
        raise DesignError("kernel", f"{name}: rows of {cols} {d} are not whole vectors",
                          loc=caller_loc(), limit=f"a multiple of {width} columns",
                          found=str(cols), fix=f"use a multiple of {width} columns")
    return declare(
        f"{name}_{d}_{rows}x{cols}", source="reduce.cc.j2", source_kind="template",
        entry=f"reduce_{op}_{d}<{rows}, {cols}>",
        args=[buffer("src", src), buffer("dst", TensorType(shape=(rows,), dtype=d.name), "out")],
        reference=reduce_ref, exact=op == "max",
        cycles=rows * (cols // width + 8) + 14, ops=rows * cols,
        cost="rows(cols/width + 8) + 14: one vector step per cycle, ~8 for the lane reduction "
        "(aiedsl/kernels/templates/reduce.cc.j2)",
        params={"op": op, "lane_op": "add" if op == "add" else "max", "dtype": d.name,
                "cpp": d.cpp, "rows": rows, "cols": cols, "width": width})


def reduce_sum(rows: int, cols: int, dt: DType | str = i32) -> Kernel:
    """Sum of each row of a ``rows x cols`` matrix (i16 or i32; sums keep their low bits)."""
    return _reduce("add", rows, cols, dt)


def reduce_max(rows: int, cols: int, dt: DType | str = i32) -> Kernel:
    """Largest element of each row of a ``rows x cols`` matrix (bf16, i16 or i32)."""
    return _reduce("max", rows, cols, dt)
