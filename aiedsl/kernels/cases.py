"""Kernel cases: a kernel to run on the host with its generated C++, its numpy reference and a
value per scalar (from a design's calls, or the library's params), and the random arguments a
test or a profile runs it on.

Example
-------
>>> [case.kernel.symbol for case in design_cases(handle)]   # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.dtypes import drawn_range, held
from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import Call, RtpArg, ScalarArg
from aiedsl.ir.kernel import Kernel
from aiedsl.ir.runtime import RtpWrite
from aiedsl.kernels.text import KernelText, kernel_text
from aiedsl.lang.design import DesignHandle
from aiedsl.targets import get_target


@dataclass(frozen=True)
class KernelCase:
    """One kernel to test on the host: its IR, generated C++, reference and scalar values."""

    kernel: Kernel
    cpp: KernelText
    reference: Callable[..., None]
    """``reference(*args)``: updates its output arrays in place."""
    scalars: dict[str, int | float]
    """A value per scalar parameter: from the design's call, or the library kernel's params."""
    aie_arch: int | None = None
    """``__AIE_ARCH__`` to build with (the design's device), if known."""


def design_cases(handle: DesignHandle) -> list[KernelCase]:
    """Every kernel a design calls, with the scalars of its first call (an rtp slot's: the
    value the runtime sequence first writes into it). The design need not place: testing a
    kernel reads only its calls."""
    from aiedsl.ir.program import calls

    d = handle.ir
    first: dict[str, Call] = {}
    for core in d.cores:
        for call in calls(core):
            first.setdefault(call.kernel, call)
    out = []
    for k in d.kernels:
        args = first[k.symbol].args
        scalars = {a.name: v.value for a, v in zip(k.args, args) if isinstance(v, ScalarArg)}
        # an rtp slot: the value the runtime writes into it first
        writes = {(w.rtp, w.index): w.value for w in reversed(d.runtime)
                  if isinstance(w, RtpWrite)}
        scalars |= {a.name: writes[(v.rtp, v.index)] for a, v in zip(k.args, args)
                    if isinstance(v, RtpArg) and (v.rtp, v.index) in writes}
        out.append(KernelCase(k, kernel_text(d, k), handle.kernels[k.symbol].run_reference,
                              scalars, get_target(d.device).aie_arch))
    return out


def case_args(case: KernelCase, rng: np.random.Generator) -> tuple[list[Any], list[Any]]:
    """Two identical argument lists for a kernel (one for its reference, one for its C++):
    random buffers, the case's scalars, then the cascade arrays it declares."""
    k = case.kernel
    args_ref: list[Any] = []
    args_cpp: list[Any] = []
    for a in k.args:
        if a.kind == "scalar":
            if a.name not in case.scalars:
                raise DesignError(
                    "kernel test", f"scalar argument '{a.name}' of kernel '{k.symbol}' has no "
                    "value to test it with", loc=k.loc, found=f"{a.name}: {a.dtype}",
                    fix=f"call the kernel in a design and test the design, or give "
                        f"params={{'{a.name}': ...}} in its declaration")
            # the reference is handed what the C++ receives (0.3 as bf16: 0.30078125)
            args_ref.append(held(case.scalars[a.name], a.dtype))
            args_cpp.append(case.scalars[a.name])
            continue
        assert a.type is not None
        arr = _random(a.type.shape, a.type.dtype, rng)
        args_ref.append(arr.copy())
        args_cpp.append(arr.copy())
    if k.cascade_in is not None:  # what the upstream core put: random accumulators
        arr = _random(k.cascade_in.shape, k.cascade_in.dtype, rng)
        args_ref.append(arr.copy())
        args_cpp.append(arr.copy())
    if k.cascade_out is not None:
        arr = np.zeros(k.cascade_out.shape, np.dtype(lookup_dtype(k.cascade_out.dtype).numpy))
        args_ref.append(arr.copy())
        args_cpp.append(arr.copy())
    return args_ref, args_cpp


def input_range(dt: str) -> tuple[int, int]:
    """The smallest and largest value :func:`_random` draws for integer type ``dt``: as the
    simulator draws it (:func:`aiedsl.dtypes.drawn_range`): an 8-bit type over its whole range
    (0..255 for u8: a pixel kernel wrong above 100, a doubling that wraps or a threshold that
    outputs 0, must fail), a wider one with |x| < 2^(bits/2 - 1), so that a kernel's integer sums
    stay inside its type: -128..127 for i16 (a 64-deep int16 matmul's sums fit in i32),
    -32768..32767 for i32 (a sum of 1024 of them fits; a reference summing in int64 and storing
    into i32 would raise on one that does not). Inputs were once -100..100 for every integer
    type, u8 included, "to keep products inside the wide types"; the library's 8-bit kernels
    pass over the whole range (their references compute in int64 and narrow as the C++ does)."""
    return drawn_range(dt)


def _random(shape: tuple[int, ...], dt: str, rng: np.random.Generator) -> np.ndarray:
    """Random values of element type ``dt`` for a kernel's input: integers over
    :func:`input_range`, its two ends among them (at random places: where wrapping and
    saturating show first); floats uniform in [-1, 1]."""
    d = lookup_dtype(dt)
    np_dt = np.dtype(d.numpy)
    if d.name in ("bf16", "f32"):
        return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32).astype(np_dt)
    lo, hi = input_range(dt)
    arr = rng.integers(lo, hi, size=shape, endpoint=True, dtype=np.int64)
    flat = arr.reshape(-1)
    if flat.size >= 2:
        flat[rng.choice(flat.size, size=2, replace=False)] = (lo, hi)
    return arr.astype(np_dt)
