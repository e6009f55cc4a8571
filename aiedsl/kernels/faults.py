"""What a kernel's C++ did wrong when run on the host, in words ``kernel test`` and the native
simulation share: a broken AIE API rule (:class:`KernelFault`: a misaligned vector access, a
conversion to bfloat16 under a rounding mode that does not round to nearest even),
bytes written around a buffer (the guard fillings), a call that never returned, an "in" buffer
written, a signal.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal, Sequence

import numpy as np

from aiedsl.errors import DesignError
from aiedsl.ir.kernel import Kernel


class KernelFault(Exception):
    """A rule of the AIE API the kernel's C++ broke while it ran, which the host header records
    and the call raises once the C++ returns (a misaligned ``aie::load_v``, a bf16 conversion
    under the wrong rounding mode): ``what`` it did,
    as the middle of a sentence about the kernel, the rule (``limit``), how often (``found``)
    and the ``fix``."""

    def __init__(self, what: str, limit: str, found: str, fix: str) -> None:
        self.what, self.limit, self.found, self.fix = what, limit, found, fix
        super().__init__(f"{what}: {limit}; {fix}")

    def __reduce__(self) -> tuple[Any, ...]:  # back from the worker's child, whole
        return KernelFault, (self.what, self.limit, self.found, self.fix)


MISALIGNED_OPS = ("load_v", "store_v", "load_unaligned_v", "store_unaligned_v", "load_floor_v",
                  "load through a vector pointer", "store through a vector pointer")
"""The host header's vector loads and stores by the number it records them with
(``detail::ldst_op``): the AIE API's, then a vector copied from or to a kernel buffer through a
pointer to its type (``*(v16int32 *)p``)."""

ELEM_KINDS = ("int", "uint", "bfloat16", "float")
"""A vector's lanes by the number the host header records them with (``detail::elem_kind``)."""


def vector_type_name(lanes: int, elem: int, kind: int) -> str:
    """The vector type a kernel's pointer points to: its native AIE name (``v16int32``), which
    llvm-aie's headers give every vector of up to 1024 bits, or else its ``aie::vector``."""
    base = ELEM_KINDS[kind] if 0 <= kind < len(ELEM_KINDS) else "int"
    lane = f"{base}{8 * elem}" if base in ("int", "uint") else base
    if lanes * elem * 8 <= 1024:
        return f"v{lanes}{lane}"
    return f"aie::vector<{lane}, {lanes}>"


def misaligned_fault(k: Kernel, record: Sequence[int], count: int,
                     aie_arch: int | None, kt: Any = None) -> KernelFault:
    """The fault for ``count`` misaligned vector accesses by kernel ``k``'s C++, the first
    described by ``record`` (``aiedsl_host::misaligned_first``: op, lanes, element bytes,
    bytes of alignment needed, buffer index or -1, byte offset or address, aligned_elems,
    element kind, the line of the generated file that made it or 0). ``kt``, the
    :class:`~aiedsl.kernels.text.KernelText` built, turns that line into the kernel file's
    (``misc.cc:8``); without it the generated file's line is named."""
    op, lanes, elem, align, buffer, offset, aligned_elems, kind = (int(x) for x in record[:8])
    line = int(record[8]) if len(record) > 8 else 0
    name = MISALIGNED_OPS[op] if 0 <= op < len(MISALIGNED_OPS) else "a vector access"
    verb = "wrote" if name.startswith("store") else "read"
    buffers = [a.name for a in k.args if a.kind == "buffer"]
    where = (f"'{buffers[buffer]}' at byte {offset}" if 0 <= buffer < len(buffers)
             else "a local array")
    call = f"aie::{name}<{lanes}>"
    if line > 0:  # where the call is: the kernel file's line when the text built is known
        where += f" (at {kt.origin(line) if kt is not None else f'line {line} of its C++'})"
    pointer = name.endswith("vector pointer")
    if pointer:
        what = (f"{verb} {where} through a {vector_type_name(lanes, elem, kind)} pointer, not a "
                f"multiple of {align} bytes")
    elif name in ("load_unaligned_v", "store_unaligned_v", "load_floor_v") and (
            aligned_elems <= 0 or aligned_elems & (aligned_elems - 1)):
        what = f"{verb} {where} with {call} given {aligned_elems} elements, not a power of two"
    else:
        if name in ("load_unaligned_v", "store_unaligned_v"):
            call += f"(p, {aligned_elems})"
        what = f"{verb} {where} with {call}, not a multiple of {align} bytes"
    found = (f"{count} misaligned vector accesses in the call; the first: {what}" if count > 1
             else f"1 misaligned vector access in the call: {what}")
    if name in ("load_unaligned_v", "store_unaligned_v"):
        limit = ("aie::load_unaligned_v(p, n) and aie::store_unaligned_v(p, v, n) take a "
                 "pointer aligned to n elements, n a power of two (the AIE API asserts "
                 "\"Insufficient alignment\")")
        fix = "pass the n the pointer is aligned to (1 when it is aligned only to its elements)"
    else:
        arch = "AIE2P" if aie_arch == 21 else "AIE2"
        sizes = ("16 bytes for a 128-bit vector, 32 for 256 bits, 64 for 512 bits or more"
                 if aie_arch == 21 else "16 bytes for a 128-bit vector, 32 for larger ones")
        if pointer:  # no assertion: the compiler takes the pointer as the type's alignment
            limit = ("a vector read or written through a pointer to its type "
                     f"(*({vector_type_name(lanes, elem, kind)} *)p) takes a pointer aligned to "
                     f"the vector, as aie::load_v and aie::store_v do ({sizes} on {arch}): the "
                     "core drops the low address bits, so it reads or writes other elements")
        else:
            limit = (f"aie::load_v and aie::store_v take a pointer aligned to the vector "
                     f"({sizes} on {arch}; the AIE API asserts \"Insufficient alignment\", "
                     "and the core drops the low address bits, so it reads or writes other "
                     "elements)")
        fix = ("use aie::load_unaligned_v / aie::store_unaligned_v where a pointer is aligned "
               "only to its elements, or align the pointer (alignas(aie::vector_decl_align) "
               "for a local array)")
    if count > 1:
        what += f" (and {count - 1} more misaligned access{'es' if count > 2 else ''})"
    return KernelFault(what, limit, found, fix)


BF16_OPS = ("aie::accum<accfloat>::to_vector<bfloat16>", "aie::mmul::to_vector<bfloat16>",
            "aie::add of bfloat16 vectors", "aie::sub of bfloat16 vectors",
            "aie::reduce_add of bfloat16", "aie::to_float<bfloat16>", "aie::inv of bfloat16",
            "aie::invsqrt of bfloat16", "a float cast to bfloat16")
"""The host header's conversions to bfloat16 by the number it records them with
(``detail::bf16_op``)."""

ROUNDING_MODES = ("floor", "ceil", "symmetric_floor", "symmetric_ceil", "positive_inf",
                  "negative_inf", "symmetric_inf", "symmetric_zero", "conv_even", "conv_odd")
"""``aie::rounding_mode``'s enumerators in the host header's order."""

BF16_ROUNDING_FIX = ("set aie::rounding_mode::conv_even for the call, and restore the previous "
                     "mode, as mm.cc does")


def bf16_rounding_fault(record: Sequence[int], count: int) -> KernelFault:
    """The fault for ``count`` conversions to bfloat16 that kernel C++ made while the rounding
    mode was not conv_even, the first described by ``record``
    (``aiedsl_host::bf16_rounding_first``: op, rounding mode)."""
    op, mode = (int(x) for x in record)
    name = BF16_OPS[op] if 0 <= op < len(BF16_OPS) else "a conversion"
    mode_name = ROUNDING_MODES[mode] if 0 <= mode < len(ROUNDING_MODES) else str(mode)
    what = f"converted to bfloat16 ({name}) under rounding mode {mode_name}"
    found = (f"{count} conversions to bfloat16 under a rounding mode other than conv_even in "
             f"the call; the first: {what}" if count > 1
             else f"1 conversion to bfloat16 under a rounding mode other than conv_even in the "
             f"call: {what}")
    limit = ("the core rounds a conversion from the accumulator to a vector (float to bfloat16 "
             "too) by its rounding mode, whose reset value, floor, truncates; the numpy "
             "reference rounds to nearest even, as only conv_even does (this header computes "
             "that whatever the mode, so the results here do not show the difference)")
    if count > 1:
        what += f" (and {count - 1} more such conversion{'s' if count > 2 else ''})"
    return KernelFault(what, limit, found, BF16_ROUNDING_FIX)


GUARD = 1024
"""Bytes of known filling kept before and after each buffer the C++ gets: what it writes
there, or reads from there into a result, it would write or read past its buffer on a core."""
FILLS = (0xA5, 0x5A)
"""The two guard fillings of the first array (``kernel test`` runs a kernel once with each)."""


def guard_fill(base: int, index: int) -> int:
    """The guard bytes' value around a kernel's ``index``-th array when the first gets
    ``base``: each array its own, so a byte copied from one array's guard into another's
    shows (``kernel test`` and the native worker alike)."""
    return (base + 0x11 * index) & 0xFF


@dataclass(frozen=True)
class Stray:
    """Bytes a call wrote in the guard bytes on one side of a buffer: what it would write
    outside the buffer on a core, over whatever is placed next to it."""

    buffer: str
    """The buffer's name (its kernel argument's)."""
    nbytes: int
    """The buffer's size in bytes."""
    side: Literal["before", "past the end of"]
    changed: int
    """Guard bytes on that side that no longer hold their filling (one written with the
    filling's own value is not seen)."""
    first: int
    """The first and last of them, in bytes from the buffer's first byte (negative before it)."""
    last: int
    whole: bool
    """Every guard byte on that side changed: the write may go on beyond them, unseen."""

    def text(self) -> str:
        """What the call did, after the kernel's name (``kernel test``, ``kernel profile`` and
        the native simulation alike)."""
        if self.whole:
            return (f"wrote at least {self.changed} bytes {self.side} buffer '{self.buffer}' "
                    "(the guard's size: all of it)")
        return f"wrote {self.changed} byte(s) {self.side} buffer '{self.buffer}'"


def guard_strays(raw: np.ndarray, n: int, fill: int, name: str,
                 before: int = GUARD) -> list[Stray]:
    """What a call wrote around buffer ``name``: ``raw`` holds ``before`` guard bytes
    (:data:`GUARD` unless given), the buffer's ``n`` bytes, then guard bytes to its end, every
    guard byte ``fill`` before the call. A byte written with ``fill`` itself is not seen
    (:func:`~aiedsl.kernels.host_check.check_kernel` runs twice, with two fillings, for that)."""
    strays = []
    sides: tuple[tuple[Literal["before", "past the end of"], np.ndarray, int], ...] = (
        ("before", raw[:before], -before), ("past the end of", raw[before + n:], n))
    for side, guard, start in sides:
        at = np.flatnonzero(guard != fill)
        if at.size:
            strays.append(Stray(name, n, side, int(at.size), start + int(at[0]),
                                start + int(at[-1]), int(at.size) == len(guard)))
    return strays


def guard_faults(raw: np.ndarray, n: int, fill: int, name: str,
                 before: int = GUARD) -> list[str]:
    """:func:`guard_strays` in words: what a call wrote around buffer ``name``."""
    return [s.text() for s in guard_strays(raw, n, fill, name, before)]


CALL_SECONDS = 10.0
"""Seconds a host call of a kernel may run before it is taken for one that never returns
(a loop whose step is 0): :func:`call_limit`. ``AIEDSL_KERNEL_TIMEOUT=SECONDS`` sets it."""


def call_limit(k: Kernel) -> float:
    """Seconds one host call of kernel ``k`` may take: :data:`CALL_SECONDS` (or
    ``$AIEDSL_KERNEL_TIMEOUT``, unless empty), or 1 us per declared cycle when that is more
    (the host runs the AIE API some 10 to 50 times slower than a 1 GHz core: a kernel that long
    still has 20 times its time)."""
    # set but empty is unset, as CXX and NO_COLOR read (a script's AIEDSL_KERNEL_TIMEOUT=$T)
    setting = os.environ.get("AIEDSL_KERNEL_TIMEOUT") or None
    seconds = CALL_SECONDS
    if setting is not None:
        try:
            seconds = float(setting)
        except ValueError:
            seconds = -1.0
        if not 0 < seconds < 1e6:
            raise DesignError("kernel time limit", f"AIEDSL_KERNEL_TIMEOUT={setting!r}",
                              limit="seconds per kernel call, more than 0 and below 1e6",
                              found=setting, fix="set it to e.g. 60, or unset it for 10 s")
    return max(seconds, k.cycles * 1e-6)


def hang_text(limit: float) -> str:
    """What a call that did not return within ``limit`` seconds did, after the kernel's name
    (``kernel test`` and the native simulation alike)."""
    return f"did not return within {limit:g} s"


HANG_FIX = ("a loop that never ends? check the kernel's loop bounds and steps (a step of 0, a "
            "counter that wraps before its bound); AIEDSL_KERNEL_TIMEOUT=SECONDS gives a slow "
            "kernel longer")


def input_write_text(name: str) -> str:
    """What a call that wrote input buffer ``name`` did, after the kernel's name (``kernel
    test`` and the native simulation alike)."""
    return (f"wrote input buffer '{name}' (declared \"in\": the DMA may be refilling or "
            "another core reading it; a kernel that updates it in place declares it "
            "\"inout\")")


SATURATION_MODES = {0: "none", 1: "saturate", 3: "symmetric"}
"""aie::saturation_mode's modes by number (truncate is saturate's old name, also 1)."""


def mode_leak_text(found: tuple[int, int], left: tuple[int, int]) -> str:
    """What a call that left the core's rounding or saturation mode other than it ``found``
    it did (``kernel test``): the kernels called after it on the core run under it.

    >>> mode_leak_text((0, 0), (8, 1)).split(": ")[0]
    "left the core's rounding mode conv_even and saturation mode saturate (it found floor and none)"
    """
    from aiedsl.kernels.bfp16 import ROUNDING_MODES

    def name(kind: str, value: int) -> str:
        names = dict(enumerate(ROUNDING_MODES)) if kind == "rounding" else SATURATION_MODES
        return names.get(value, str(value))

    changed = [(kind, i) for i, kind in enumerate(("rounding", "saturation"))
               if found[i] != left[i]]
    now = " and ".join(f"{kind} mode {name(kind, left[i])}" for kind, i in changed)
    was = " and ".join(name(kind, found[i]) for kind, i in changed)
    fix = " and the same with aie::get_saturation()" if len(changed) == 2 else ""
    get = "get_" + changed[0][0]
    put = "set_" + changed[0][0]
    one = len(changed) == 1
    return (f"left the core's {now} (it found {was}): the kernels called after it on the core "
            f"run under {'it' if one else 'them'}; restore {'it' if one else 'them'} before "
            f"returning (auto old = aie::{get}(); ... aie::{put}(old);{fix})").replace(";)", ")")


def signal_name(number: int) -> str:
    """``SIGSEGV`` for 11: the name of signal ``number`` (the number itself if it has none)."""
    import signal

    return signal.Signals(number).name if number in signal.valid_signals() else str(number)
