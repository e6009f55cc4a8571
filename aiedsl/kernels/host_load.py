"""A kernel's host build loaded with ctypes and run on numpy arrays and scalars
(:func:`load_native`), or loaded as a copy of its own, its data its own (:func:`load_copy`:
each core's): what runs a :class:`~aiedsl.kernels.host_build.HostBuild`, in the process that
built it or in another.

The callable also hands the calling core's rounding and saturation modes in and out
(:data:`RESET_MODES`), reads back the header's operation counts (:data:`COUNTED`), and raises
after the call what the header recorded: a misaligned vector access, a bf16 conversion under
another rounding mode than conv_even (:mod:`aiedsl.kernels.faults`), cascade words other than
the declared (:mod:`aiedsl.kernels.host_cascade`).

Example
-------
(``kernel_ir`` a declared kernel's IR, ``build`` the build of it that ``build_native`` made,
``a, b, c`` its arrays)

>>> load_native(kernel_ir, build.path, build.aie_arch)(a, b, c)   # doctest: +SKIP
"""

from __future__ import annotations

import ctypes
import itertools
import os
from pathlib import Path
from typing import Any, Callable

import numpy as np

from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.errors import DesignError
from aiedsl.ir.kernel import Kernel
from aiedsl.kernels.faults import bf16_rounding_fault, misaligned_fault
from aiedsl.kernels.host_build import HostBuild
from aiedsl.kernels.host_cascade import ORDER_WORDS, WORD_BYTES, cascade_mismatch, order_mismatch
from aiedsl.kernels.host_notes import bfp16_shapes
from aiedsl.kernels.text import KernelText

RESET_MODES = (0, 0)
"""A core's rounding and saturation modes at reset, in ``aie::rounding_mode``'s and
``aie::saturation_mode``'s order: floor, none (keep the low bits)."""
COUNTED = ("vector MAC", "vector ALU", "shuffle", "load bytes", "store bytes", "MACs",
           "buffer load bytes", "buffer store bytes")
"""What the host header counts, in its order (``aiedsl_host::unit``): the last two are the load
and store bytes inside the call's buffers (a local array's are not)."""
WORK = COUNTED[:6]
"""Of :data:`COUNTED`, the units of work a profile shows per call."""

_CTYPES = {"i8": ctypes.c_int8, "u8": ctypes.c_uint8, "i16": ctypes.c_int16,
           "u16": ctypes.c_uint16, "i32": ctypes.c_int32, "u32": ctypes.c_uint32,
           "f32": ctypes.c_float, "bf16": ctypes.c_uint16}
"""The C type of a scalar argument by dtype. A bf16 goes as its 16 bits: the host header's
``bfloat16`` is a trivially copyable struct of one ``uint16_t``, which the C ABI passes as that
integer."""


def _scalar(dtype: str, value: Any) -> Any:
    """A scalar argument as ctypes takes it for a parameter of ``dtype`` (a bf16 as its bits,
    rounded to nearest even as the MLIR constant is)."""
    dt = lookup_dtype(dtype)
    if dt.name == "bf16":
        return int(np.array(value, dtype=dt.numpy).view(np.uint16))
    return value


_copies = itertools.count()
"""Numbers the copies :func:`load_copy` writes in this process."""


def load_copy(path: str | os.PathLike[str]) -> ctypes.CDLL:
    """A copy of the shared library ``path`` loaded as a library of its own: its data (a
    kernel's ``static`` and global variables, and the header's state) its own, starting at
    their initial values, whatever calls of ``path`` or of other copies have left in theirs.

    The dynamic loader loads a file once per process (it knows it by its name and by its
    device and inode): loading ``path`` again gives the same library, and a hard link too.
    So the bytes are written to a new file, named after this process and a counter (a name
    already loaded would give that library back), in the build's own folder (where a library
    is known to load: a temporary folder may be mounted ``noexec``), loaded, and removed: the
    loaded library keeps its pages, and nothing is left behind. (Copy and load take about
    0.1 ms for a small kernel's library.)"""
    src = Path(path)
    data = src.read_bytes()
    while True:
        copy = src.with_name(f".{src.stem}.{os.getpid()}-{next(_copies)}.so")
        try:
            fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o700)
            break
        except FileExistsError:  # left by an earlier process of this pid, killed before the
            continue             # unlink: the next number
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        return ctypes.CDLL(os.fspath(copy))
    finally:
        try:
            copy.unlink()
        except PermissionError:  # Windows keeps a loaded DLL's file: it stays there
            pass


def load_native(k: Kernel, path: str | os.PathLike[str], aie_arch: int | None = None, *,
                kt: KernelText | None = None, lib: ctypes.CDLL | None = None
                ) -> Callable[..., None]:
    """A callable running kernel ``k`` from its host build ``path`` (a library
    :func:`~aiedsl.kernels.host_build.build_native` made for ``aie_arch``, which words the
    faults it reports) on numpy arrays and scalars: ``fn(*args, modes=None)``, the kernel's
    arguments then the cascade arrays it declares, and ``modes`` the calling core's rounding and
    saturation modes (:data:`RESET_MODES` when not given), updated to what the call left. It
    also has ``fn.counts(reset=True)``, the header's operation counts (:data:`COUNTED`'s order),
    ``fn.build``, the :class:`~aiedsl.kernels.host_build.HostBuild` it runs, and ``fn.bfp16``,
    the bf16 ``aie::mmul`` shapes its C++ runs on npu2's bfp16 unit
    (:mod:`aiedsl.kernels.host_notes`). ``kt``, the C++ the library was built from, only names
    the source in the error for a library without the kernel's entry point.
    ``lib``: a copy of ``path`` already loaded (:func:`load_copy`: a core's own), run instead
    of the library the path names."""
    if lib is None:
        lib = ctypes.CDLL(os.fspath(path))
    try:
        fn = getattr(lib, k.symbol)
    except AttributeError:  # no entry=: the source's own function, under #if it does not take
        source = kt.source.label if kt is not None else "its source"
        flags = f" (with {' '.join(kt.flags)})" if kt is not None and kt.flags else ""
        built = f"kernels/{kt.name}.cc" if kt is not None else os.fspath(path)
        raise DesignError(
            "kernel entry", f"kernel '{k.symbol}' has no entry=, so cores call "
            f"{source}'s own extern \"C\" function {k.symbol}, which it does not define "
            "as compiled" + flags, loc=k.loc,
            limit="without entry=, the name of an extern \"C\" function the source defines",
            found=f"no function {k.symbol} in {built}",
            fix="give the defines= that select it, name a function the source defines, or "
                "give entry= the C++ function to call") from None
    fn.restype = None
    fn.argtypes = [ctypes.c_void_p if a.kind == "buffer" else _CTYPES[lookup_dtype(a.dtype).name]
                   for a in k.args]

    profile = getattr(lib, "aiedsl_profile", None)  # absent when the C++ skips the header
    if profile is not None:
        profile.restype = None
        profile.argtypes = [ctypes.c_void_p, ctypes.c_int]
    set_buffers = getattr(lib, "aiedsl_buffers", None)
    if set_buffers is not None:
        set_buffers.restype = None
        set_buffers.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint]
        misaligned = lib.aiedsl_misaligned
        misaligned.restype = ctypes.c_uint
        misaligned.argtypes = [ctypes.c_void_p]
        record = (ctypes.c_int64 * 9)()
        bf16_rounding = lib.aiedsl_bf16_rounding
        bf16_rounding.restype = ctypes.c_uint
        bf16_rounding.argtypes = [ctypes.c_void_p]
        rounding_record = (ctypes.c_int64 * 2)()
    set_modes = getattr(lib, "aiedsl_set_modes", None)  # absent, as aiedsl_buffers
    if set_modes is not None:
        set_modes.restype = None
        set_modes.argtypes = [ctypes.c_uint, ctypes.c_uint]
        get_modes = lib.aiedsl_get_modes
        get_modes.restype = None
        get_modes.argtypes = [ctypes.c_void_p]
        modes_after = (ctypes.c_uint * 2)()
    buffer_args = [i for i, a in enumerate(k.args) if a.kind == "buffer"]
    cascade = k.cascade_in is not None or k.cascade_out is not None
    if cascade:
        set_cascade = lib.aiedsl_cascade
        set_cascade.restype = None
        set_cascade.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p, ctypes.c_uint]
        cascade_moved = lib.aiedsl_cascade_moved
        cascade_moved.restype = None
        cascade_moved.argtypes = [ctypes.c_void_p]
        moved = (ctypes.c_uint * 2)()
        cascade_order = lib.aiedsl_cascade_order
        cascade_order.restype = None
        cascade_order.argtypes = [ctypes.c_void_p, ctypes.c_uint]

    def run(conv: list[Any], sizes: list[int]) -> None:
        """The C++ on ``conv``; a misaligned vector access it made, or else a conversion to
        bfloat16 under a rounding mode other than conv_even, raised after it returns."""
        if set_buffers is None:
            fn(*conv)
            return
        n = len(buffer_args)
        set_buffers((ctypes.c_uint64 * n)(*(conv[i] for i in buffer_args)),
                    (ctypes.c_uint64 * n)(*sizes), n)
        fn(*conv)
        count = misaligned(record)
        if count:
            raise misaligned_fault(k, list(record), count, aie_arch, kt)
        count = bf16_rounding(rounding_record)
        if count:
            raise bf16_rounding_fault(list(rounding_record), count)

    def call(*args: Any, modes: list[int] | None = None) -> None:
        """The C++ on ``args`` under the calling core's rounding and saturation ``modes``
        (:data:`RESET_MODES` when not given), which it updates to what the call left: a core's
        control registers are its own and outlive the call, where each library (each kernel
        source, per core: :mod:`aiedsl.kernels.core_copies`) keeps modes of its own."""
        if set_modes is None:
            arrays(*args)
            return
        set_modes(*(modes if modes is not None else RESET_MODES))
        try:
            arrays(*args)
        finally:  # a fault raised after the call: the modes it set stand
            if modes is not None:
                get_modes(modes_after)
                modes[:] = list(modes_after)

    def arrays(*args: Any) -> None:
        conv = []
        sizes = []
        for a, v in zip(k.args, args):
            if a.kind == "buffer":
                arr = np.asarray(v)
                if not arr.flags.c_contiguous:
                    raise ValueError(f"{k.symbol}: argument {a.name} is not contiguous")
                conv.append(arr.ctypes.data)
                sizes.append(arr.nbytes)
            else:
                conv.append(_scalar(a.dtype, v))
        if not cascade:
            run(conv, sizes)
            return
        # the cascade arrays follow the declared arguments: the input, then the output, both
        # handed over as their bits (the stream moves words, whatever their type)
        extra = list(args[len(k.args):])
        cin = (np.ascontiguousarray(extra.pop(0)).reshape(-1).view(np.uint8)
               if k.cascade_in else None)
        cout = extra.pop(0) if k.cascade_out else None
        bits = np.zeros(k.cascade_out.nbytes, np.uint8) if k.cascade_out else None
        words_in = cin.size // WORD_BYTES if cin is not None else 0
        words_out = bits.size // WORD_BYTES if bits is not None else 0
        set_cascade(cin.ctypes.data if cin is not None else None, words_in,
                    bits.ctypes.data if bits is not None else None, words_out)
        run(conv, sizes)
        cascade_moved(moved)
        if (moved[0], moved[1]) != (words_in, words_out):
            raise cascade_mismatch(k, moved[0], moved[1])
        if words_in and words_out:  # a middle stage: in the order it declares
            n = min(words_out, ORDER_WORDS)
            order = (ctypes.c_uint * n)()
            cascade_order(order, n)
            late = order_mismatch(k, list(order), words_in, words_out)
            if late is not None:
                raise late
        if cout is not None and bits is not None:
            np.asarray(cout).reshape(-1).view(np.uint8)[...] = bits

    def counts(reset: bool = True) -> list[int]:
        """The header's operation counts since the last reset (``aiedsl_host::unit`` order)."""
        buf = (ctypes.c_uint64 * len(COUNTED))()
        if profile is not None:
            profile(buf, int(reset))
        return list(buf)

    marker = getattr(lib, "aiedsl_bfp16_mmuls", None)  # absent, as aiedsl_buffers
    if marker is not None:
        marker.restype = ctypes.c_uint
        marker.argtypes = []
    call.counts = counts  # type: ignore[attr-defined]
    call.build = HostBuild(Path(path), aie_arch)  # type: ignore[attr-defined]
    call.kt = kt  # type: ignore[attr-defined]  # (a served child's faults name lines by it)
    # the bf16 mmul shapes its C++ runs on npu2's bfp16 unit (aiedsl/kernels/host_notes.py)
    call.bfp16 = bfp16_shapes(marker() if marker is not None else 0)  # type: ignore[attr-defined]
    return call
