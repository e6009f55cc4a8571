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
from aiedsl.ir.core_ops import Call, IndexArg, RtpArg, ScalarArg
from aiedsl.ir.design import Design
from aiedsl.ir.kernel import CallKey, Kernel, scalars_shown
from aiedsl.ir.runtime import RtpWrite
from aiedsl.kernels.arch import check_kernel_arch
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
    shown: str = ""
    """The scalars as a profile's line names them (``n=1024``; a design's kernel with scalars
    only: :meth:`ScalarSet.shown`)."""
    called: bool = True
    """A design's kernel that some core calls (False: one its design file declares that no
    core calls, run with its declaration's scalar values: :func:`uncalled_kernels`)."""

    def run_reference(self, args: list[Any]) -> None:
        """The reference on ``args``; an exception of the user's reference is a DesignError
        at the kernel's declaration saying what was running."""
        from aiedsl.user_errors import user_exception

        try:
            self.reference(*args)
        except DesignError:
            raise
        except Exception as err:  # the user's reference
            raise user_exception(err, f"running the reference of kernel "
                                 f"'{self.kernel.symbol}'", self.kernel.loc) from err


@dataclass(frozen=True)
class ScalarSet:
    """The scalar values of a kernel's calls that pass the same constants: what its profile
    runs with, and the cycles those calls are charged (a kernel declared without ``cycles=``).

    A scalar the call passes as a constant takes that value; one it reads from an rtp slot,
    unknown until the run, takes ``params=``, else the value the runtime sequence first writes
    into the slot; one ``equals=`` fixes, that value."""

    constants: tuple[CallKey, ...]
    """:meth:`~aiedsl.ir.kernel.Kernel.constants` of these calls."""
    scalars: dict[str, int | float]
    """A value per scalar parameter that has one."""
    given: dict[str, str]
    """Where each value the calls do not pass as a constant came from (as
    :attr:`~aiedsl.ir.kernel.ProfiledCycles.given`)."""
    missing: tuple[str, ...]
    """Scalar parameters with no value: read from an rtp slot that neither ``params=`` nor the
    runtime sequence gives one."""
    call: Call | None
    """The first call passing these constants (None: :func:`declared_set`)."""

    def shown(self) -> str:
        """The values, as :meth:`~aiedsl.ir.kernel.ProfiledCycles.shown` says them."""
        return scalars_shown(self.scalars, self.given)


def scalar_sets(d: Design, k: Kernel) -> list[ScalarSet]:
    """The distinct scalar values design ``d``'s calls of kernel ``k`` pass, one
    :class:`ScalarSet` per set of constants, in the order of their first calls (a loop's index
    passed as a scalar stands for its first value, 0). A call whose arguments are not the
    kernel's (a buffer for a scalar, one missing) is left out: ``check`` refuses it."""
    from aiedsl.ir.program import calls

    # an rtp slot holds, until the runtime writes it again, what it first wrote
    writes = {(w.rtp, w.index): w.value for w in reversed(d.runtime) if isinstance(w, RtpWrite)}
    out: dict[tuple[CallKey, ...], ScalarSet] = {}
    for core in d.cores:
        for call in calls(core):
            if call.kernel != k.symbol or len(call.args) != len(k.args) or any(
                    p.kind == "scalar" and not isinstance(a, (ScalarArg, RtpArg, IndexArg))
                    for p, a in zip(k.args, call.args)):
                continue
            key = k.constants(call.args)
            if key in out:
                continue
            scalars: dict[str, int | float] = {}
            given: dict[str, str] = {}
            missing = []
            for p, a in zip(k.args, call.args):
                if p.kind != "scalar":
                    continue
                if p.equals is not None:
                    scalars[p.name] = p.equals
                    if not (isinstance(a, ScalarArg) and a.value == p.equals):
                        given[p.name] = "equals="
                elif isinstance(a, ScalarArg):
                    scalars[p.name] = a.value
                elif p.name in k.params:
                    scalars[p.name] = k.params[p.name]  # type: ignore[assignment]
                    given[p.name] = "params="
                    if isinstance(a, RtpArg) and (a.rtp, a.index) in writes and \
                            writes[(a.rtp, a.index)] != k.params[p.name]:
                        # the runtime's value is not the one run (a library kernel's params=
                        # is set for its tests, unseen in the design): say both
                        given[p.name] = (f"params=, not the {writes[(a.rtp, a.index)]!r} the "
                                         f"runtime first writes into {a.rtp}[{a.index}]")
                elif isinstance(a, RtpArg) and (a.rtp, a.index) in writes:
                    scalars[p.name] = writes[(a.rtp, a.index)]
                    given[p.name] = f"{a.rtp}[{a.index}]'s first rtp_write"
                elif isinstance(a, IndexArg):
                    scalars[p.name] = 0
                    given[p.name] = "its loop's first index"
                else:
                    missing.append(p.name)
            out[key] = ScalarSet(key, scalars, given, tuple(missing), call)
    return list(out.values())


def declared_set(k: Kernel) -> ScalarSet:
    """The scalar values kernel ``k``'s declaration gives: ``equals=``, else ``params=`` (as
    :func:`scalar_sets` takes them for a called kernel: its C++ is right for the ``equals=``
    value only). What a profile runs with when no call passes the kernel's arguments (each is
    refused by ``check``, but the design loads), and what ``kernel test`` runs a kernel no
    core calls with."""
    scalars: dict[str, int | float] = {}
    given: dict[str, str] = {}
    missing = []
    for p in k.args:
        if p.kind != "scalar":
            continue
        value = p.equals if p.equals is not None else k.params.get(p.name)
        if isinstance(value, (int, float)):
            scalars[p.name] = value
            given[p.name] = "equals=" if p.equals is not None else "params="
        else:
            missing.append(p.name)
    return ScalarSet((), scalars, given, tuple(missing), None)


@dataclass(frozen=True)
class Uncalled:
    """A kernel its design file declares (:attr:`~aiedsl.lang.design.DesignHandle.declared`)
    that no core of the design calls: run alone, with its declaration's scalar values
    (:func:`declared_set`), unless ``why_not`` says why it cannot be."""

    kernel: Kernel
    reference: Callable[..., None]
    values: ScalarSet
    why_not: str
    """Why it is not run (its scalars without a value, C++ made for another architecture);
    empty when it is."""

    def line(self) -> str:
        """What ``kernel test`` and ``kernel profile`` print of it, before its results (or
        instead of them, when it is not run)."""
        k = self.kernel
        head = f"{k.symbol} ({k.loc}) is declared but no core of the design calls it"
        if self.why_not:
            return f"NOT RUN {head}: {self.why_not}"
        given = f", with {self.values.shown()}" if self.values.scalars else ""
        return f"{head}: run alone{given}"


def uncalled_kernels(handle: DesignHandle) -> list[Uncalled]:
    """The kernels design ``handle``'s file declares that none of its cores calls, in the
    order of the file's names: what an author writes and tests before calling it, and what
    ``kernel test`` of the design would otherwise pass over without a word."""
    d = handle.ir
    target = get_target(d.device)
    called = {k.symbol for k in d.kernels}
    out = []
    for symbol, obj in handle.declared.items():
        if symbol in called:
            continue
        k = obj.ir
        values = declared_set(k)
        why_not = ""
        if k.arch is not None and k.arch != target.arch:
            why_not = (f"its C++ is made for {k.arch} (arch=), and the design's device "
                       f"{d.device} has {target.arch} cores")
        elif values.missing:
            names = " and ".join(values.missing)
            why_not = (f"no call gives its scalar{'s' if len(values.missing) > 1 else ''} "
                       f"{names} a value; to run it before a core calls it, give params="
                       + "{" + ", ".join(f"'{n}': ..." for n in values.missing) + "} in its "
                       "declaration")
        out.append(Uncalled(k, obj.run_reference, values, why_not))
    return out


def _index_corners(d: Design, k: Kernel, sets: list[ScalarSet]) -> list[ScalarSet]:
    """The scalars of each call of kernel ``k`` that passes loop indices, with its loops'
    indices at their first and last values, every combination (each loop once, however many
    scalars it feeds): (0, 3), (3, 0) and (3, 3) for two loop(4)s, where a causal
    mask's three kinds of block lie. Every call's own loops, in every core (a second core's
    longer loop, a call after one passing constants: a reviewer); ``sets`` are the kernel's
    :func:`scalar_sets`, which give each call's other scalars."""
    from itertools import product

    from aiedsl.ir.program import calls_in_loops

    by_key = {s.constants: s for s in sets}
    out: list[ScalarSet] = []
    for core in d.cores:
        for call, loops in calls_in_loops(core):
            if call.kernel != k.symbol or len(call.args) != len(k.args):
                continue
            base = by_key.get(k.constants(call.args))
            fed: dict[int, list[str]] = {}  # loop depth -> the scalars its index feeds
            for p, a in zip(k.args, call.args):
                if isinstance(a, IndexArg) and p.name not in k.params and loops[a.loop] > 1:
                    fed.setdefault(a.loop, []).append(p.name)
            if base is None or not fed:
                continue
            depths = sorted(fed)
            # (all first too: a call whose other scalars no earlier case passes runs there)
            corners = ([(False,) * len(depths), (True,) * len(depths)]
                       if len(depths) > MAX_INDEX_CORNERS_BITS else
                       list(product((False, True), repeat=len(depths))))
            for corner in corners:
                scalars, given = dict(base.scalars), dict(base.given)
                for depth, at_last in zip(depths, corner):
                    if at_last:
                        for name in fed[depth]:
                            scalars[name] = loops[depth] - 1
                            given[name] = "its loop's last index"
                if all(o.scalars != scalars for o in out):
                    out.append(ScalarSet(base.constants, scalars, given, base.missing, call))
    return out


MAX_INDEX_CORNERS_BITS = 3
"""The most loop indices of one call whose every combination of first and last values ``kernel
test`` runs (2^3 = 8 runs); past it, all first and all last."""


def design_cases(handle: DesignHandle, each: bool = False, corners: bool = False
                 ) -> list[KernelCase]:
    """Every kernel a design calls, with the scalars of its first call (:func:`scalar_sets`);
    with ``corners``, again with the loop indices each call passes at their last values
    (:func:`_index_corners`: what ``kernel test`` runs);
    with ``each``, a case per set of scalar values its calls pass (what a profile of the
    design runs, the simulator charging each call the cycles of its own values when the
    kernel declares none, and a test, a per-core constant wrong on one core alone failing
    there); then each kernel its file declares that no core calls and that can
    run alone (:func:`uncalled_kernels`). The design need not place: testing a kernel reads
    only its calls. A kernel a core calls that was made for another architecture than the
    design's device's is refused as ``aiedsl check`` refuses it (``--device npu2`` for a
    kernel declared ``arch="aie2"``): its test on the host would pass what the device cannot
    build, and its profile count what it does not run."""
    d = handle.ir
    target = get_target(d.device)
    check_kernel_arch(d, target)
    arch = target.aie_arch
    out = []
    for k in d.kernels:
        sets = scalar_sets(d, k)
        text = kernel_text(d, k)
        reference = handle.kernels[k.symbol].run_reference
        if not sets:  # no call passes the kernel's arguments (check refuses them)
            out.append(KernelCase(k, text, reference, {}, arch))
            continue
        out += [KernelCase(k, text, reference, s.scalars, arch, s.shown())
                for s in (sets if each else sets[:1])]
        if corners:  # and loop indices at their loops' ends (a C++ wrong for later indices,
            # a causal mask's other blocks, passed at 0 alone: a tester)
            out += [KernelCase(k, text, reference, c.scalars, arch, c.shown())
                    for c in _index_corners(d, k, sets)
                    if not any(o.kernel is k and o.scalars == c.scalars for o in out)]
    out += [KernelCase(u.kernel, kernel_text(None, u.kernel), u.reference, u.values.scalars,
                       arch, u.values.shown(), called=False)
            for u in uncalled_kernels(handle) if not u.why_not]
    return out


def case_args(case: KernelCase, rng: np.random.Generator, full_range: bool = False
              ) -> tuple[list[Any], list[Any]]:
    """Two identical argument lists for a kernel (one for its reference, one for its C++):
    random buffers, the case's scalars, then the cascade arrays it declares. ``full_range``:
    integers over their types' whole range (``aiedsl kernel test --full-range``; see
    :func:`_random`)."""
    k = case.kernel
    # full range: per element count, where the two ends go, the same in every buffer of that
    # count, so that an elementwise kernel meets MIN with MIN and MAX with MAX
    ends: dict[int, np.ndarray] | None = {} if full_range else None
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
        arr = _random(a.type.shape, a.type.dtype, rng, ends)
        args_ref.append(arr.copy())
        args_cpp.append(arr.copy())
    if k.cascade_in is not None:  # what the upstream core put: random accumulators
        arr = _random(k.cascade_in.shape, k.cascade_in.dtype, rng, ends)
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


def _random(shape: tuple[int, ...], dt: str, rng: np.random.Generator,
            ends: dict[int, np.ndarray] | None = None) -> np.ndarray:
    """Random values of element type ``dt`` for a kernel's input: integers over
    :func:`input_range`, its two ends among them (at random places: where wrapping and
    saturating show first); floats uniform in [-1, 1].

    With ``ends`` (``kernel test --full-range``), integers over the type's whole range
    (-32768..32767 for i16), the smallest and the largest at the places ``ends`` holds for
    the buffer's element count (drawn there by the first buffer of that count): an i16 add
    then meets -32768 + -32768 and 32767 + 32767 at least once, where one that wraps and one
    that saturates differ (on AIE2 ``aie::add`` of integer vectors wraps)."""
    d = lookup_dtype(dt)
    np_dt = np.dtype(d.numpy)
    if d.name in ("bf16", "f32"):
        return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32).astype(np_dt)
    if ends is None:
        lo, hi = input_range(dt)
    else:
        info = np.iinfo(d.numpy)
        lo, hi = int(info.min), int(info.max)
    arr = rng.integers(lo, hi, size=shape, endpoint=True, dtype=np.int64)
    flat = arr.reshape(-1)
    if flat.size >= 2:
        if ends is None:
            at = rng.choice(flat.size, size=2, replace=False)
        else:
            if flat.size not in ends:
                ends[flat.size] = rng.choice(flat.size, size=2, replace=False)
            at = ends[flat.size]
        flat[at] = (lo, hi)
    return arr.astype(np_dt)
