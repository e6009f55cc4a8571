"""Kernels on the host: compile a kernel's C++ with g++ against aiedsl's host AIE API header,
load it with ctypes and run it on numpy buffers (what ``aiedsl kernel test``
(:mod:`~aiedsl.kernels.host_check`), ``kernel profile`` and ``sim --kernels native`` run).

The C++ compiled is exactly the file a build writes (``kernels/<name>.cc``: the kernel source
plus the ``extern "C"`` entries of the kernels declared from it), with the ``-D`` words of their
``defines=``, so what is tested is what Peano would compile; a compiler error is shown at the
line of the user's own C++ file. Libraries are cached by content under
``$XDG_CACHE_HOME/aiedsl/host-kernels`` (``~/.cache`` by default).

Example
-------
(needs g++; ``kernel_ir`` a declared kernel's IR, ``a, b, c`` its arrays)

>>> fn = native(kernel_ir, kernel_text(None, kernel_ir))     # doctest: +SKIP
>>> fn(a, b, c)                         # runs the C++ on the arrays   # doctest: +SKIP

:func:`native` is two steps, each its own function: :func:`build_native` (build, or find
cached: a :class:`HostBuild`, the library's path and the ``aie_arch`` it was built for) and
:func:`load_native` (load a build: the callable), which another process can run on a build
made here.
"""

from __future__ import annotations

import ctypes
import hashlib
import itertools
import os
import re
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from aiedsl.cache import cache_dir
from aiedsl.dtypes import dtype as lookup_dtype
from aiedsl.errors import DesignError, counted
from aiedsl.ir.kernel import Kernel
from aiedsl.ir.loc import Loc
from aiedsl.ir.types import TensorType
from aiedsl.kernels.faults import bf16_rounding_fault, misaligned_fault
from aiedsl.kernels.host_notes import bfp16_shapes
from aiedsl.kernels.host_cxx import find_host_compiler
from aiedsl.kernels.host_errors import explain, redefined
from aiedsl.kernels.text import KernelText
from aiedsl.kernels.paths import KERNELS_CPP
from aiedsl.kernels.source import check_file_kernel
from aiedsl.targets import CASCADE_BITS
from aiedsl.targets.kernel_arch import arch_define_words, arch_of
from aiedsl.text import encoded

HOST_INCLUDE = KERNELS_CPP / "host"
"""Holds ``aie_api/aie.hpp``, the host stand-in for the AIE API."""
CXX_FLAGS = ["-std=c++20", "-O2", "-shared", "-fPIC", "-w", "-fno-gnu-unique"]
"""g++'s flags for a host build. ``-fno-gnu-unique``: g++ makes an ``inline`` variable and a
``static`` inside an inline function or a template a ``STB_GNU_UNIQUE`` symbol, which the
dynamic loader binds to one definition for the whole process, so every copy of a library that
:func:`load_copy` loads (each core's own) would share it; without the flag it is an ordinary
weak symbol, each copy's own (ctypes loads with ``RTLD_LOCAL``). Clang makes no such symbols
and rejects the flag: :func:`compile_host` builds without it then."""
_NO_UNIQUE = "-fno-gnu-unique"

_CTYPES = {"i8": ctypes.c_int8, "u8": ctypes.c_uint8, "i16": ctypes.c_int16,
           "i32": ctypes.c_int32, "f32": ctypes.c_float, "bf16": ctypes.c_uint16}
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


def compile_host(kt: KernelText, loc: Loc | None = None, aie_arch: int | None = None) -> Path:
    """A shared library built from the generated C++ ``kt`` (cached by content and flags), with
    its kernels' ``defines=`` as Peano gets them. With ``aie_arch``
    (:attr:`~aiedsl.targets.TargetModel.aie_arch`) the build defines ``__AIE_ARCH__`` as Peano
    does for that architecture, so the kernel takes the same ``#if`` branches and ``aie::mmul``
    accepts only that architecture's modes, and the architecture's own macros as aiedsl's Peano
    line does (:data:`~aiedsl.targets.kernel_arch.ARCH_DEFINES`: on AIE2P, a bf16 ``aie::mmul``
    of 4x8x8 or 8x8x8 quantizes A and B to bfp16 as the core's does)."""
    compiler = find_host_compiler()
    cxx = compiler.path
    if cxx is None:  # a tool missing (exit 4), not the design line's mistake
        what = f"kernel{'s' if len(kt.symbols) > 1 else ''} {kt.label}"
        raise compiler.missing_error(what)
    header = "".join(p.read_text() for p in sorted((HOST_INCLUDE / "aie_api").glob("*.hpp")))
    arch = arch_of(aie_arch)
    flags = [*CXX_FLAGS, *([f"-D__AIE_ARCH__={aie_arch}"] if aie_arch is not None else []),
             *(arch_define_words(arch) if arch is not None else []), *kt.flags]
    key = hashlib.sha256(encoded(kt.text + header + " ".join(flags) + cxx)).hexdigest()[:24]
    out = cache_dir("host-kernels") / f"{key}.so"
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        name = f"{kt.name}.cc"
        src = Path(tmp) / name
        src.write_bytes(encoded(kt.text))  # the source's own bytes, UTF-8 or not
        lib = Path(tmp) / "k.so"
        r = _compile(cxx, flags, src, lib)
        if r.returncode != 0 and _NO_UNIQUE in r.stderr:  # clang: it has no such symbols
            r = _compile(cxx, [f for f in flags if f != _NO_UNIQUE], src, lib)
        if r.returncode != 0:
            stderr = kt.map_output(r.stderr, name)
            message, fix = explain(stderr, kt.label, HOST_INCLUDE / "aie_api" / "aie.hpp",
                                   kt.symbols, kt.source.label, kt.callees)
            twice = redefined(stderr, kt.symbols)  # said at the declaration of the one named
            found = _first_errors(stderr)
            culprit = None
            if len(kt.symbols) > 1 and message == f"{kt.label} does not compile on the host":
                # one object holds them all: one kernel's error fails every kernel's build,
                # so the others are not blamed; the first error's kernel is named if known
                culprit = _first_error_kernel(kt, found)
                message = (f"the object of kernels {kt.label} ({kt.source.label}) does not "
                           "compile on the host" + (f": the first error is in {culprit}'s code"
                                                    if culprit else ""))
            entry = _first_error_entry(kt, found)
            if entry is not None and message == f"{kt.label} does not compile on the host":
                # the first error is in the call aiedsl generated from entry=, not in the file
                message = (f"the extern \"C\" entry aiedsl generates for {entry}, "
                           f"{kt.entry_call(entry)}, does not compile on the host")
                fix = (f"make entry= call a function of {kt.source.label} with the template "
                       "arguments it takes and the kernel's arguments in its order (or fix that "
                       f"function); {fix.removeprefix('fix the C++; ')}")
                culprit = entry
            named = twice[0] if twice else culprit
            loc = next((at for s, at in kt.declared if s == named), loc)
            if f"kernels/{kt.name}.cc:" in found:  # lines of a file the user cannot open
                found += f"\n({kt.layout()})"
            raise DesignError("host kernel build", message, loc=loc, found=found, fix=fix)
        # the process's and the thread's own: two threads of one process building the same
        # library (native simulations in a thread pool, the header changed) shared one name,
        # and the second's rename found the first had taken it
        tmp_out = out.with_suffix(f".{os.getpid()}-{threading.get_ident()}.tmp")
        shutil.copyfile(lib, tmp_out)
        tmp_out.replace(out)  # atomic: parallel test runs may build the same library
    return out


def _compile(cxx: str, flags: list[str], src: Path, lib: Path
             ) -> subprocess.CompletedProcess[str]:
    """``cxx`` run on ``src`` with ``flags`` and the host header, writing ``lib``."""
    # replace: its excerpts quote the source's lines, whose bytes need not be UTF-8 (a Latin-1
    # comment), and what it says is shown, never written back
    return subprocess.run([cxx, *flags, f"-I{HOST_INCLUDE}", str(src), "-o", str(lib)],
                          capture_output=True, text=True, encoding="utf-8", errors="replace",
                          env={**os.environ, "LC_ALL": "C"})


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


def cascade_mismatch(k: Kernel, got: int, put: int) -> DesignError:
    """The error for kernel ``k``'s C++ having got ``got`` cascade words and put ``put`` in a
    call, where its ``cascade_in=`` and ``cascade_out=`` declare other counts: on the array the
    core would stall waiting for a word that never comes, or its neighbour for one never put."""
    sides = (("cascade_in", k.cascade_in, got, "got",
              _GET_WORD.get(k.cascade_in.dtype, "get_scd") if k.cascade_in else "get_scd"),
             ("cascade_out", k.cascade_out, put, "put", "put_mcd"))
    wrong = [(what, t, n, t.nbytes // _WORD_BYTES if t is not None else 0, verb, fn)
             for what, t, n, verb, fn in sides
             if n != (t.nbytes // _WORD_BYTES if t is not None else 0)]

    def per(t: TensorType | None) -> int:
        """Values of ``t``'s type in one cascade word (f32's when there is no ``t``)."""
        return _WORD_BYTES // (t.dt.itemsize if t is not None else 4)

    def fix(what: str, t: TensorType | None, n: int, words: int, verb: str, fn: str) -> str:
        declare = (f"{what}=Tensor[{n * per(t)}, {t.dtype if t is not None else 'f32'}] (the "
                   f"{counted(n, 'word')} it {verb}s)" if n else f"no {what}=")
        if t is None:
            return f"declare {declare}, or remove the C++'s {fn} calls"
        return f"make the C++ call {fn} {words} times per call, or declare {declare}"

    return DesignError(
        "kernel cascade", f"kernel '{k.symbol}' moves other cascade words than it declares: "
        + "; ".join(f"its C++ {verb} {counted(n, 'word')} in a call, where "
                    + (f"{what}={t} is {words}" if t is not None else f"it declares no {what}")
                    for what, t, n, words, verb, _ in wrong),
        loc=k.loc,
        limit="; ".join((f"{what}={t}: {counted(words, 'word')} of {CASCADE_BITS} bits "
                         f"({per(t)} values each) {verb} per call" if t is not None
                         else f"no {what}: no words {verb}")
                        for what, t, _, words, verb, _ in wrong),
        found="; ".join(f"{counted(n, 'word')} {verb} ({fn}) per call"
                        for _, _, n, _, verb, fn in wrong),
        fix="; ".join(fix(*w) for w in wrong))


def _first_errors(stderr: str, most: int = 12) -> str:
    """The compiler's output from its first error on (what follows an error is often its
    consequences), at most ``most`` lines."""
    lines = stderr.strip().splitlines()
    first = next((i for i, ln in enumerate(lines) if "error:" in ln), None)
    if first is None:
        return "\n".join(lines[-most:])
    # the "In function ..." line just before the error says where it is; an error inside a
    # template (the header's size rules) follows "In instantiation of ..." and the "required
    # from" lines that lead to the kernel's own line
    start = first
    while start and (re.search(r"\brequired (?:from|by)\b", lines[start - 1])
                     or (": In " in lines[start - 1] and lines[start - 1].rstrip().endswith(":"))):
        start -= 1
    return "\n".join(lines[start:start + most])


def _first_error_entry(kt: KernelText, excerpt: str) -> str | None:
    """The kernel whose generated ``extern "C"`` entry holds the compiler's first error (the
    first ``error:`` line of ``excerpt``, mapped by :meth:`KernelText.map_output`), if it is
    in one."""
    first = next((ln for ln in excerpt.splitlines() if ": error:" in ln), "")
    m = re.match(re.escape(f"kernels/{kt.name}.cc:") + r"(\d+):", first)
    return kt.kernel_at(int(m[1])) if m else None


_FUNCTION = re.compile(r"In (?:function|instantiation of) [‘'][^’']*?(\w+)(?:<[^’']*>)?\(")
"""g++'s head of an error inside a function: ``In function 'void f(int*)'``, ``In instantiation
of 'void f(...) [with ...]'``: the function's name."""


def _first_error_kernel(kt: KernelText, excerpt: str) -> str | None:
    """The kernel of ``kt`` whose code the compiler's first error (``excerpt``, as
    :func:`_first_errors` cuts it, its lines mapped by :meth:`KernelText.map_output`) is in:
    the first generated entry it names (a template's ``required from here``), else the one
    kernel whose function the error is in; None if it cannot be told."""
    entry_line = re.compile(re.escape(f"kernels/{kt.name}.cc:") + r"(\d+)")
    for m in entry_line.finditer(excerpt):
        symbol = kt.kernel_at(int(m[1]))
        if symbol is not None:
            return symbol
    entries = dict(kt.callees)
    for m in _FUNCTION.finditer(excerpt):
        named = [s for s in kt.symbols if entries.get(s) == m[1]]
        if len(named) == 1:
            return named[0]
    return None


@dataclass(frozen=True)
class HostBuild:
    """A kernel's host build: the shared library :func:`build_native` made (or found cached)
    and the ``aie_arch`` it was built for (None: none given). What :func:`load_native` loads,
    in this process or another (:mod:`aiedsl.kernels.worker_server`'s workers load the builds
    of the simulating process, building nothing)."""

    path: Path
    aie_arch: int | None


def build_native(k: Kernel, kt: KernelText, aie_arch: int | None = None) -> HostBuild:
    """Kernel ``k``'s generated C++ ``kt`` built for the host (for ``aie_arch`` when given: see
    :func:`compile_host`), or found built in the cache; a file kernel's source is checked
    first, as ``aiedsl check`` says it (not as g++ does). Nothing is loaded:
    :func:`load_native` does that."""
    if k.source_kind == "file":
        check_file_kernel(k, kt.source, f"kernels/{kt.name}.cc")
    return HostBuild(compile_host(kt, k.loc, aie_arch), aie_arch)


def native(k: Kernel, kt: KernelText, aie_arch: int | None = None) -> Callable[..., None]:
    """A callable running kernel ``k``'s generated C++ ``kt`` on numpy arrays and scalars
    (built for ``aie_arch`` when given: see :func:`compile_host`): :func:`build_native`, then
    :func:`load_native`."""
    build = build_native(k, kt, aie_arch)
    return load_native(k, build.path, build.aie_arch, kt=kt)


def load_native(k: Kernel, path: str | os.PathLike[str], aie_arch: int | None = None, *,
                kt: KernelText | None = None, lib: ctypes.CDLL | None = None
                ) -> Callable[..., None]:
    """A callable running kernel ``k`` from its host build ``path`` (a library
    :func:`build_native` made for ``aie_arch``, which words the faults it reports) on numpy
    arrays and scalars: ``fn(*args, modes=None)``, the kernel's arguments then the cascade
    arrays it declares, and ``modes`` the calling core's rounding and saturation modes
    (:data:`RESET_MODES` when not given), updated to what the call left. It also has
    ``fn.counts(reset=True)``, the header's operation counts (:data:`COUNTED`'s order),
    ``fn.build``, the :class:`HostBuild` it runs, and ``fn.bfp16``, the bf16 ``aie::mmul``
    shapes its C++ runs on npu2's bfp16 unit (:mod:`aiedsl.kernels.host_notes`). ``kt``, the
    C++ the library was built from, only names the source in the error for a library without
    the kernel's entry point.
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
        record = (ctypes.c_int64 * 8)()
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
            raise misaligned_fault(k, list(record), count, aie_arch)
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
        words_in = cin.size // _WORD_BYTES if cin is not None else 0
        words_out = bits.size // _WORD_BYTES if bits is not None else 0
        set_cascade(cin.ctypes.data if cin is not None else None, words_in,
                    bits.ctypes.data if bits is not None else None, words_out)
        run(conv, sizes)
        cascade_moved(moved)
        if (moved[0], moved[1]) != (words_in, words_out):
            raise cascade_mismatch(k, moved[0], moved[1])
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
    # the bf16 mmul shapes its C++ runs on npu2's bfp16 unit (aiedsl/kernels/host_notes.py)
    call.bfp16 = bfp16_shapes(marker() if marker is not None else 0)  # type: ignore[attr-defined]
    return call


RESET_MODES = (0, 0)
"""A core's rounding and saturation modes at reset, in ``aie::rounding_mode``'s and
``aie::saturation_mode``'s order: floor, none (keep the low bits)."""
COUNTED = ("vector MAC", "vector ALU", "shuffle", "load bytes", "store bytes", "MACs")
"""What the host header counts, in its order (``aiedsl_host::unit``)."""
_WORD_BYTES = CASCADE_BITS // 8
"""Bytes in one cascade word: what the host header's ``get_scd_*`` and ``put_mcd`` move, of
whatever type (``aiedsl_cascade`` hands a call its words as bytes)."""
_GET_WORD = {"f32": "get_scd_v16accfloat", "i32": "get_scd_v16acc32",
             "bf16": "get_scd_v32bfloat16", "i16": "get_scd_v32int16", "i8": "get_scd_v64int8",
             "u8": "get_scd_v64uint8"}
"""The one-word get of each element type, as llvm-aie's aiev2_streams.h and aie2p_streams.h
spell it, for naming the intrinsic in a report."""
