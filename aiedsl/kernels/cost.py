"""``aiedsl kernel cost``: a library kernel's declared cost model, against the core's peak and,
where one exists, a published measurement."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from aiedsl.dtypes import DTYPES
from aiedsl.errors import DesignError
from aiedsl.ir import Kernel, TensorType
from aiedsl.kernels import library
from aiedsl.targets import DEVICES, get_target

DISAGREE = 0.15
"""Model and publication further apart than this are called out."""


@dataclass(frozen=True)
class _Costed:
    """What ``aiedsl kernel cost`` takes for one library kernel."""

    shape: str
    """How ``--shape`` is written for it."""
    sizes: tuple[int, int]
    """Fewest and most sizes in ``--shape``."""
    dtypes: tuple[str, ...]
    """The element types it takes; the first is the default."""
    example: str


_ANY = tuple(DTYPES)  # zero and passthrough move any element type


def _first(default: str, names: tuple[str, ...]) -> tuple[str, ...]:
    """``names`` (the library's list) with ``default`` put first."""
    return (default,) + tuple(d for d in names if d != default)


_EACH = "N (or a tensor shape such as 64x64)"
KERNELS: dict[str, _Costed] = {
    "matmul": _Costed("MxKxN", (3, 3), tuple(library.MATMUL_OUT), "64x64x64"),
    "zero": _Costed(_EACH, (1, 4), _first("bf16", _ANY), "1024"),
    "passthrough": _Costed(_EACH, (1, 4), _first("bf16", _ANY), "1024"),
    "scale": _Costed("N", (1, 1), ("i16",), "1024"),
    "add": _Costed(_EACH, (1, 4), library.ELTWISE_DTYPES, "1024"),
    "mul": _Costed(_EACH, (1, 4), library.ELTWISE_DTYPES, "1024"),
    "relu": _Costed(_EACH, (1, 4), library.RELU_DTYPES, "1024"),
    # the reductions' default, as reduce_sum and reduce_max have it, first
    "reduce_sum": _Costed("ROWSxCOLS", (2, 2), _first("i32", library.REDUCE_DTYPES["add"]),
                          "8x256"),
    "reduce_max": _Costed("ROWSxCOLS", (2, 2), _first("i32", library.REDUCE_DTYPES["max"]),
                          "8x256"),
}
"""The library kernels ``aiedsl kernel cost`` estimates, and the options each takes."""


def _either(names: tuple[str, ...]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


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
    """The kernel's largest buffer fits one core's data memory (a larger one is no kernel's
    operand; a matmul's declaration would also build index tables of its size)."""
    if name == "matmul":
        m, k, n = dims
        out = DTYPES[library.MATMUL_OUT[dt]].itemsize
        largest = max(m * k * DTYPES[dt].itemsize, k * n * DTYPES[dt].itemsize, m * n * out)
    else:
        largest = math.prod(dims) * DTYPES[dt].itemsize
    if largest > memory:
        raise _option_error(
            f"--shape {shape}: a buffer of {name} would take {largest:,} bytes, more than a "
            "core's data memory", limit=f"{memory:,} bytes per buffer (a core's data memory)",
            found=f"{largest:,} bytes", fix="estimate the tile one core computes per call, "
            f"e.g. --shape {KERNELS[name].example}")


def _kernel(name: str, dims: tuple[int, ...], dt: str, device: str) -> Kernel:
    """The library's kernel ``name`` at ``dims`` and ``dt``; its refusal of the sizes as an
    error about ``--shape`` (the library's own error would point at a line of aiedsl's CLI)."""
    try:
        if name == "matmul":
            m, k, n = dims
            return library.matmul(m, k, n, dt, device=device).ir
        if name in ("reduce_sum", "reduce_max"):
            rows, cols = dims
            return getattr(library, name)(rows, cols, dt).ir  # type: ignore[no-any-return]
        if name == "scale":
            return library.scale(dims[0]).ir
        return getattr(library, name)(TensorType(shape=dims, dtype=dt)).ir  # type: ignore[no-any-return]
    except DesignError as e:
        shown = "x".join(str(d) for d in dims)
        raise _option_error(
            f"--shape {shown} does not fit {name} of {dt}: {e.message}", limit=e.limit or
            f"a shape the library's {name} takes", found=e.found or shown,
            fix=e.fix or f"write e.g. --shape {KERNELS[name].example}") from None


def estimate(name: str, shape: str, dt: str | None, device: str) -> list[str]:
    """Lines describing kernel ``name`` at ``shape`` (``64x104x64``, ``8x256``, ``4096``) of
    element type ``dt`` (None: the kernel's first, see :data:`KERNELS`) on ``device``.

    Every bad value is a :class:`~aiedsl.errors.DesignError` naming the option, the values
    allowed and a fix, with no file and line (``aiedsl kernel cost`` prints it and exits 2).
    """
    spec = KERNELS.get(name)
    if spec is None:
        raise _option_error(
            f"no library kernel called {name!r} to estimate", limit=", ".join(KERNELS),
            found=repr(name), fix="name one of them, e.g. aiedsl kernel cost matmul --shape "
            "64x64x64")
    if device not in DEVICES:
        raise _option_error(
            f"--device {device} is not a device aiedsl knows", limit=", ".join(DEVICES),
            found=device, fix="pass one of them, e.g. --device npu1")
    target = get_target(device)
    if dt is None:
        dt = spec.dtypes[0]
    elif dt not in spec.dtypes:
        raise _option_error(
            f"--dtype {dt}: {name} takes {_either(spec.dtypes)} elements",
            limit=", ".join(spec.dtypes), found=dt,
            fix=f"pass --dtype {spec.dtypes[0]} (or leave --dtype out: {spec.dtypes[0]} is "
            f"{name}'s default)")
    dims = _sizes(name, shape, spec)
    _fits(name, dims, dt, target.limits("core").memory, shape)
    k = _kernel(name, dims, dt, device)
    lines = [f"{k.symbol} on {device}: {k.cycles:,} cycles per call "
             f"({k.cycles / target.clock_hz * 1e6:.2f} us at {target.clock_hz / 1e9:g} GHz)",
             f"  model: {k.cost}"]
    if name == "matmul":
        macs = dims[0] * dims[1] * dims[2]
        out_dt = library.MATMUL_OUT[dt]
        peak = target.macs_per_cycle[f"{dt}_{out_dt}"]
        per_cycle = macs / k.cycles
        lines.append(f"  {per_cycle:.1f} MACs per cycle of the core's peak {peak}: "
                     f"{per_cycle / peak:.0%}")
        published = library.PUBLISHED.get((target.family, dt, dims))
        if target.family != "npu1":
            lines.append("  not calibrated for this device: the per-patch constant is npu1's "
                         "and loads are taken at 64 bytes per cycle")
        if published:
            value, source = published
            off = per_cycle / value - 1
            lines.append(f"  published: {value:g} MACs per cycle ({source}); the model is "
                         f"{abs(off):.1%} {'above' if off > 0 else 'below'} it"
                         + (f": MORE THAN {DISAGREE:.0%} APART, trust the measurement"
                            if abs(off) > DISAGREE else ""))
    elif k.ops:
        lines.append(f"  {k.ops / k.cycles:.1f} operations per cycle")
    return lines
