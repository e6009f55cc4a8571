"""``aiedsl kernel cost``: a library kernel's declared cost model, against the core's peak and,
where one exists, a published measurement.

The cycles printed are the kernel's own ``cycles=``, from the library factory that a design
calls: the number the simulator charges per call. Nothing here computes cycles itself; the
table below says only how ``--shape`` and ``--dtype`` map to each factory's arguments.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable

from aiedsl.dtypes import DTYPES, dtype
from aiedsl.errors import DesignError
from aiedsl.ir.kernel import Kernel
from aiedsl.ir.types import TensorType
from aiedsl.kernels import library
from aiedsl.kernels.base import Kernel as Declared
from aiedsl.kernels.host_notes import conversions_left_out
from aiedsl.kernels.matmul import MATMUL_PATCH_FAMILY
from aiedsl.targets import TargetModel
from aiedsl.targets import DEVICES, get_target

DISAGREE = 0.15
"""Model and publication further apart than this are called out."""

Build = Callable[[tuple[int, ...], str, str, str], Kernel]
"""Makes a library kernel from ``--shape``'s sizes, ``--dtype``, ``--device`` and a variant
(``""`` for a kernel that has none)."""
Largest = Callable[[tuple[int, ...], str], int]
"""The bytes of a kernel's largest buffer at ``--shape``'s sizes and ``--dtype``."""


def _whole(dims: tuple[int, ...], dt: str) -> int:
    """One buffer of the whole shape (the element-wise, reduction and activation kernels)."""
    return math.prod(dims) * DTYPES[dt].itemsize


def _gemm(out: Callable[[str], str]) -> Largest:
    """A, B and C of an m x k by k x n product, C of type ``out(input type)``."""
    def largest(dims: tuple[int, ...], dt: str) -> int:
        m, k, n = dims
        size = DTYPES[dt].itemsize
        return max(m * k * size, k * n * size, m * n * DTYPES[out(dt)].itemsize)
    return largest


def _conv3x3_bytes(dims: tuple[int, ...], dt: str) -> int:
    """An input row, the nine taps' weights, the output row (all i8)."""
    width, cin, cout = dims
    return max(width * cin, 9 * cin * cout, width * cout) * DTYPES[dt].itemsize


def _on_tensor(factory: Callable[[TensorType], Declared]) -> Build:
    """A factory of one tensor type (``zero(Tensor[64, 64, bf16])``)."""
    return lambda dims, dt, device, variant: factory(TensorType(shape=dims, dtype=dt)).ir


def _on_size(factory: Callable[[int], Declared]) -> Build:
    """A factory of an element count whose type is fixed (``scale(1024)``)."""
    return lambda dims, dt, device, variant: factory(dims[0]).ir


def _on_device(factory: Callable[..., Declared]) -> Build:
    """A factory of its sizes whose C++ follows the device (``softmax(4, 256, device=...)``;
    the convolutions with their default shift and relu)."""
    return lambda dims, dt, device, variant: factory(*dims, device=device).ir


def _matmul(dims: tuple[int, ...], dt: str, device: str, variant: str) -> Kernel:
    """``matmul(m, k, n, dt)``: the accumulating output (the output type does not enter its
    cycles)."""
    m, k, n = dims
    return library.matmul(m, k, n, dt, device=device).ir


def _narrow(dims: tuple[int, ...], dt: str, device: str, variant: str) -> Kernel:
    """``matmul_narrow(m, n, dt, dt)``: a tile of int32 sums of a ``dt`` matmul narrowed back to
    ``dt``, with no shift (its cycles depend on none)."""
    m, n = dims
    return library.matmul_narrow(m, n, dt, dt, device=device).ir


def _narrow_bytes(dims: tuple[int, ...], dt: str) -> int:
    """The int32 tile it reads."""
    return math.prod(dims) * DTYPES["i32"].itemsize


def _cascade(dims: tuple[int, ...], dt: str, device: str, role: str) -> Kernel:
    """One stage of the cascade GEMM."""
    m, k, n = dims
    return library.matmul_cascade(m, k, n, role, device=device).ir


def _vector_scalar(dims: tuple[int, ...], dt: str, device: str, op: str) -> Kernel:
    """``vector_scalar(op, T)``."""
    return library.vector_scalar(op, TensorType(shape=dims, dtype=dt)).ir


def _reduce(factory: Callable[[int, int, str], Declared]) -> Build:
    """``reduce_sum(rows, cols, dt)``, ``reduce_max(...)``."""
    return lambda dims, dt, device, variant: factory(dims[0], dims[1], dt).ir


def _norm(factory: Callable[[int, int], Declared]) -> Build:
    """``rms_norm(rows, cols)``, ``layer_norm(...)`` (bf16 only)."""
    return lambda dims, dt, device, variant: factory(dims[0], dims[1]).ir


@dataclass(frozen=True)
class _Costed:
    """What ``aiedsl kernel cost`` takes for one library kernel, and how it makes it."""

    shape: str
    """How ``--shape`` is written for it."""
    sizes: tuple[int, int]
    """Fewest and most sizes in ``--shape``."""
    dtypes: tuple[str, ...]
    """The element types it takes; the first is the default."""
    example: str
    """A ``--shape`` it takes with each of its types on every device it is made for."""
    build: Build
    largest: Largest = _whole
    variants: tuple[str, ...] = ("",)
    """Arguments besides the shape that name different kernels (a stage, an operation): each
    is costed, the first shown in full."""
    note: str = ""
    """What else the costed kernel was made with, printed under it."""
    macs: bool = False
    """Its ``ops=`` counts multiply-accumulates, two each (a matmul, a convolution): printed as
    MACs per cycle and their share of the core's peak for its operands, one line for every
    such kernel (the cascade matmul printed operations per cycle, twice its MACs, with no
    share, beside matmul's MACs and share for the same 2,516 cycles)."""
    patch: bool = False
    """Its cycles hold matmul's per-patch constant (:data:`~aiedsl.kernels.matmul.MATMUL_PATCH`,
    calibrated on :data:`~aiedsl.kernels.matmul.MATMUL_PATCH_FAMILY` only): on another device
    :func:`calibration` says so."""


_ANY = tuple(DTYPES)  # zero and passthrough move any element type


def _first(default: str, names: tuple[str, ...]) -> tuple[str, ...]:
    """``names`` (the library's list) with ``default`` put first."""
    return (default,) + tuple(d for d in names if d != default)


_EACH = "N (or a tensor shape such as 64x64)"
_CONV = ("shift=0 and relu=True, the library's defaults (its declared cycles depend on "
         "neither)")
KERNELS: dict[str, _Costed] = {
    "matmul": _Costed("MxKxN", (3, 3), tuple(library.MATMUL_OUT), "64x64x64", _matmul,
                      _gemm(library.MATMUL_OUT.__getitem__), macs=True, patch=True),
    "matmul_narrow": _Costed("MxN", (2, 2), ("i8", "i16"), "64x64", _narrow, _narrow_bytes,
                             note="dtype_out the same as the matmul's input type, shift=0 (its "
                             "cycles depend on neither)"),
    "matmul_cascade": _Costed("MxKxN", (3, 3), ("bf16",), "64x64x64", _cascade,
                              _gemm(lambda dt: "f32"), library.CASCADE_ROLES, macs=True,
                              patch=True),
    "conv2d_1x1": _Costed("WIDTHxCINxCOUT", (3, 3), ("i8",), "32x64x64",
                          _on_device(library.conv2d_1x1), _gemm(lambda dt: dt), note=_CONV,
                          macs=True, patch=True),
    "conv2d_3x3": _Costed("WIDTHxCINxCOUT", (3, 3), ("i8",), "32x64x64",
                          _on_device(library.conv2d_3x3), _conv3x3_bytes, note=_CONV,
                          macs=True, patch=True),
    "zero": _Costed(_EACH, (1, 4), _first("bf16", _ANY), "1024", _on_tensor(library.zero)),
    "passthrough": _Costed(_EACH, (1, 4), _first("bf16", _ANY), "1024",
                           _on_tensor(library.passthrough)),
    "scale": _Costed("N", (1, 1), ("i16",), "1024", _on_size(library.scale)),
    "threshold": _Costed("N", (1, 1), ("u8",), "1024", _on_size(library.threshold)),
    "rgba2gray": _Costed("N", (1, 1), ("u8",), "1024", _on_size(library.rgba2gray)),
    "add": _Costed(_EACH, (1, 4), library.ELTWISE_DTYPES, "1024", _on_tensor(library.add)),
    "sub": _Costed(_EACH, (1, 4), library.ELTWISE_DTYPES, "1024", _on_tensor(library.sub)),
    "mul": _Costed(_EACH, (1, 4), library.ELTWISE_DTYPES, "1024", _on_tensor(library.mul)),
    "vector_scalar": _Costed(_EACH, (1, 4), library.ELTWISE_DTYPES, "1024", _vector_scalar,
                             variants=("add", "sub", "mul")),
    "relu": _Costed(_EACH, (1, 4), library.RELU_DTYPES, "1024", _on_tensor(library.relu)),
    # the reductions' default, as reduce_sum and reduce_max have it, first
    "reduce_sum": _Costed("ROWSxCOLS", (2, 2), _first("i32", library.REDUCE_DTYPES["add"]),
                          "8x256", _reduce(library.reduce_sum)),
    "reduce_max": _Costed("ROWSxCOLS", (2, 2), _first("i32", library.REDUCE_DTYPES["max"]),
                          "8x256", _reduce(library.reduce_max)),
    "rms_norm": _Costed("ROWSxCOLS", (2, 2), ("bf16",), "8x256", _norm(library.rms_norm)),
    "layer_norm": _Costed("ROWSxCOLS", (2, 2), ("bf16",), "8x256", _norm(library.layer_norm)),
    "exp_bf16": _Costed("N", (1, 1), ("bf16",), "1024", _on_device(library.exp_bf16)),
    "silu": _Costed("N", (1, 1), ("bf16",), "1024", _on_device(library.silu)),
    "gelu": _Costed("N", (1, 1), ("bf16",), "1024", _on_device(library.gelu)),
    "softmax": _Costed("ROWSxCOLS", (2, 2), ("bf16",), "4x256", _on_device(library.softmax)),
}
"""The library kernels ``aiedsl kernel cost`` estimates (every factory of
:mod:`aiedsl.kernels` that makes a kernel), and the options each takes."""


def calibration(spec: _Costed, k: Kernel, target: TargetModel) -> str | None:
    """What of library kernel ``k``'s cost model (made from ``spec``) was fitted on another
    device than ``target``'s, as ``aiedsl kernel cost`` says it; None when nothing was.

    The one place deciding it: a kernel whose cycles hold matmul's per-patch constant
    (``spec.patch``) is npu1's model elsewhere, the C++ following the device or not; one whose
    C++ is the same on every device (``k.arch`` None) has a model written for AIE2, whose core
    stores half what AIE2P's does per cycle
    (:attr:`~aiedsl.targets.TargetModel.core_store_bytes_per_cycle`)."""
    if spec.patch and target.family != MATMUL_PATCH_FAMILY:
        return (f"not calibrated for this device: the per-patch constant is "
                f"{MATMUL_PATCH_FAMILY}'s")
    if not spec.patch and k.arch is None and target.family != "npu1":
        return (f"not calibrated for this device: the model is AIE2's (npu1), whose core stores "
                f"{get_target('npu1').core_store_bytes_per_cycle} bytes a cycle where this one "
                f"stores {target.core_store_bytes_per_cycle}; `aiedsl kernel profile` estimates "
                "it for this device")
    return None


def _either(names: tuple[str, ...], word: str = "or") -> str:
    """``a``, ``a or b``, ``a, b or c`` (``and`` for ``word="and"``)."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {word} {names[-1]}"


def _option_error(message: str, *, limit: str, found: str, fix: str) -> DesignError:
    """A bad command-line value: no file and line (it is not a design's), the option named."""
    return DesignError("kernel cost", message, limit=limit, found=found, fix=fix)


def _sizes(name: str, shape: str, spec: _Costed) -> tuple[int, ...]:
    """The sizes of ``--shape`` for kernel ``name``: digits separated by x, each at least 1."""
    parts = shape.lower().split("x")
    if not all(re.fullmatch(r"[0-9]+", p) for p in parts):
        raise _option_error(
            f"--shape {shape!r} is not sizes separated by x", limit=f"{name} takes "
            f"{spec.shape}, whole numbers written in digits", found=repr(shape),
            fix=f"write e.g. --shape {spec.example}")
    dims = tuple(int(p) for p in parts)
    lo, hi = spec.sizes
    if not lo <= len(dims) <= hi:
        raise _option_error(
            f"--shape {shape} gives {len(dims)} size{'s' if len(dims) != 1 else ''}; {name} "
            f"takes {spec.shape}", limit=spec.shape, found=shape,
            fix=f"write e.g. --shape {spec.example}")
    if min(dims) < 1:
        raise _option_error(
            f"--shape {shape} has a size of 0", limit="every size at least 1", found=shape,
            fix=f"write e.g. --shape {spec.example}")
    return dims


def _fits(name: str, dims: tuple[int, ...], dt: str, memory: int, shape: str) -> None:
    """The kernel's largest buffer fits one core's data memory: a larger one is no kernel's
    operand. Checked before the kernel is made: a matmul's declaration builds index tables of
    its size."""
    largest = KERNELS[name].largest(dims, dt)
    if largest > memory:
        raise _option_error(
            f"--shape {shape}: a buffer of {name} would take {largest:,} bytes, more than a "
            "core's data memory", limit=f"{memory:,} bytes per buffer (a core's data memory)",
            found=f"{largest:,} bytes", fix="estimate the tile one core computes per call, "
            f"e.g. --shape {KERNELS[name].example}")


def _kernels(name: str, dims: tuple[int, ...], dt: str, device: str) -> list[Kernel]:
    """The library's kernel ``name`` at ``dims`` and ``dt`` on ``device``, one per variant.

    The library's refusal is turned into an error about the option at fault (its own would
    point at a line of aiedsl's CLI): ``--device`` when even the kernel's example shape is
    refused there, ``--shape`` otherwise."""
    spec = KERNELS[name]
    try:
        return [spec.build(dims, dt, device, v) for v in spec.variants]
    except DesignError as e:
        shown = "x".join(str(d) for d in dims)
        refused = _refusal(spec, dt, device)
        if refused is not None:
            others = [d for d in DEVICES if _refusal(spec, dt, d) is None]
            raise _option_error(
                f"--device {device}: the library has no {name} for it",
                limit=refused.limit or refused.message, found=device,
                fix=f"pass one of {', '.join(others)}, e.g. --device {others[0]}" if others
                else f"leave {name} out on this device") from None
        raise _option_error(
            f"--shape {shown} does not fit {name} of {dt}: {e.message}", limit=e.limit or
            f"a shape the library's {name} takes", found=e.found or shown,
            fix=e.fix or f"write e.g. --shape {spec.example}") from None


def _refusal(spec: _Costed, dt: str, device: str) -> DesignError | None:
    """The library's error making ``spec``'s kernel at its example shape on ``device``, if
    any: an error there is the device's, not the shape's."""
    dims = tuple(int(p) for p in spec.example.split("x"))
    try:
        spec.build(dims, dt, device, spec.variants[0])
    except DesignError as e:
        return e
    return None


def estimate(name: str, shape: str, dt: str | None, device: str) -> list[str]:
    """Lines describing kernel ``name`` at ``shape`` (``64x104x64``, ``8x256``, ``4096``) of
    element type ``dt`` (None: the kernel's first, see :data:`KERNELS`) on ``device``.

    The cycles are the kernel's declared ``cycles=`` (its body, as a trace between events at
    its start and end measures it); the simulator charges them and the target's
    ``kernel_call_cycles`` per call.
    Every bad value is a :class:`~aiedsl.errors.DesignError` naming the option, the values
    allowed and a fix, with no file and line (``aiedsl kernel cost`` prints it and exits 2).
    """
    spec = KERNELS.get(name)
    if spec is None:
        raise _option_error(
            f"no library kernel called {name!r} to estimate", limit=", ".join(KERNELS),
            found=repr(name), fix="name one of them, e.g. aiedsl kernel cost matmul --shape "
            "64x64x64; a kernel of your own has its cycles from its C++: aiedsl kernel "
            "profile DESIGN")
    if device not in DEVICES:
        raise _option_error(
            f"--device {device} is not a device aiedsl knows", limit=", ".join(DEVICES),
            found=device, fix="pass one of them, e.g. --device npu1")
    target = get_target(device)
    given = dt
    if dt is None:
        dt = spec.dtypes[0]
    else:
        try:  # every spelling a Tensor takes: bfloat16, int32, np.float32's name
            dt = dtype(dt).name
        except KeyError:
            pass  # not an element type at all: refused below with the kernel's own list
    if dt not in spec.dtypes:
        shown = given if given == dt else f"{given} ({dt})"
        raise _option_error(
            f"--dtype {shown}: {name} takes {_either(spec.dtypes)} elements",
            limit=", ".join(spec.dtypes), found=str(given),
            fix=f"pass --dtype {spec.dtypes[0]} (or leave --dtype out: {spec.dtypes[0]} is "
            f"{name}'s default)")
    dims = _sizes(name, shape, spec)
    _fits(name, dims, dt, target.limits("core").memory, shape)
    k, *others = _kernels(name, dims, dt, device)
    call = target.timing.kernel_call_cycles
    lines = [f"{k.symbol} on {device}: {k.cycles:,} cycles per call "
             f"({k.cycles / target.clock_hz * 1e6:.2f} us at {target.clock_hz / 1e9:g} GHz)",
             f"  model: {k.cost}"]
    if spec.note:
        lines.append(f"  made with {spec.note}")
    if others and all(o.cycles == k.cycles for o in others):
        lines.append(f"  the same for {_either(tuple(o.symbol for o in others), 'and')}")
    else:
        lines += [f"  {o.symbol}: {o.cycles:,} cycles per call" for o in others]
    lines.append(f"  the simulator charges {call} more a call at the call site (argument set-up, "
                 "branch and return: TimingModel.kernel_call_cycles)")
    peak = target.peak_macs(k.operand_dtype)
    if spec.macs and k.ops and peak:
        per_cycle = k.ops / 2 / k.cycles  # ops= counts a MAC as 2
        lines.append(f"  {per_cycle:.1f} MACs per cycle of the core's peak {peak}: "
                     f"{per_cycle / peak:.0%}")
        if k.on_bfp16_unit:
            lines.append(f"  not modelled: {conversions_left_out('these cycles')}")
    elif k.ops:
        lines.append(f"  {k.ops / k.cycles:.1f} operations per cycle")
    uncalibrated = calibration(spec, k, target)
    if uncalibrated:
        lines.append(f"  {uncalibrated}")
    if name == "matmul":
        per_cycle = dims[0] * dims[1] * dims[2] / k.cycles
        published = library.PUBLISHED.get((target.family, dt, dims))
        if published:
            value, source = published
            off = per_cycle / value - 1
            lines.append(f"  published: {value:g} MACs per cycle ({source}); the model is "
                         f"{abs(off):.1%} {'above' if off > 0 else 'below'} it"
                         + (f": MORE THAN {DISAGREE:.0%} APART, trust the measurement"
                            if abs(off) > DISAGREE else ""))
    return lines
