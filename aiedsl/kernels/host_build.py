"""A kernel's C++ built for the host: a shared library compiled by g++ against aiedsl's host AIE
API header (:func:`compile_host`), and the :class:`HostBuild` that names it
(:func:`build_native`), which :mod:`aiedsl.kernels.host_load` loads, in this process or
another.

The C++ compiled is exactly the file a build writes (``kernels/<name>.cc``: the kernel source
plus the ``extern "C"`` entries of the kernels declared from it), with the ``-D`` words of their
``defines=``, so what is tested is what Peano would compile; a compiler error is shown at the
line of the user's own C++ file. Libraries are cached by content under
``$XDG_CACHE_HOME/aiedsl/host-kernels`` (``~/.cache`` by default).

Building is a step of its own, apart from loading, because the two need not run in one
process: :mod:`aiedsl.kernels.worker_server`'s workers load the simulating process's builds and
build nothing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from aiedsl.cache import cache_dir
from aiedsl.errors import DesignError, listed
from aiedsl.ir.kernel import Kernel
from aiedsl.ir.loc import Loc
from aiedsl.kernels.host_cxx import find_host_compiler
from aiedsl.kernels.host_errors import explain, redefined
from aiedsl.kernels.host_first_error import first_error_entry, first_error_kernel, first_errors
from aiedsl.kernels.paths import KERNELS_CPP
from aiedsl.kernels.source import check_file_kernel
from aiedsl.kernels.text import KernelText
from aiedsl.targets.kernel_arch import arch_define_words, arch_of
from aiedsl.text import encoded

HOST_INCLUDE = KERNELS_CPP / "host"
"""Holds ``aie_api/aie.hpp``, the host stand-in for the AIE API."""
CXX_FLAGS = ["-std=c++20", "-O2", "-shared", "-fPIC", "-w", "-fno-gnu-unique"]
"""g++'s flags for a host build. ``-fno-gnu-unique``: g++ makes an ``inline`` variable and a
``static`` inside an inline function or a template a ``STB_GNU_UNIQUE`` symbol, which the
dynamic loader binds to one definition for the whole process, so every copy of a library that
:func:`~aiedsl.kernels.host_load.load_copy` loads (each core's own) would share it; without the
flag it is an ordinary weak symbol, each copy's own (ctypes loads with ``RTLD_LOCAL``). Clang
makes no such symbols and rejects the flag: :func:`compile_host` builds without it then."""
_NO_UNIQUE = "-fno-gnu-unique"


def compile_host(kt: KernelText, loc: Loc | None = None, aie_arch: int | None = None) -> Path:
    """A shared library built from the generated C++ ``kt`` (cached by content and flags), with
    its kernels' ``defines=`` as Peano gets them. With ``aie_arch``
    (:attr:`~aiedsl.targets.TargetModel.aie_arch`) the build defines ``__AIE_ARCH__`` as Peano
    does for that architecture, so the kernel takes the same ``#if`` branches and ``aie::mmul``
    accepts only that architecture's modes, and the architecture's own macros as aiedsl's Peano
    line does (:data:`~aiedsl.targets.kernel_arch.ARCH_DEFINES`: on AIE2P, a bf16 ``aie::mmul``
    of 4x8x8 or 8x8x8 quantizes A and B to bfp16 as the core's does)."""
    _refuse_long(kt, loc)
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
        try:  # used now: the last the pruning deletes
            os.utime(out)
        except OSError:  # (a cache another user's, read-only)
            pass
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
            clash = [n for n in header_names(kt.flags, header)
                     if re.search(rf"macro [‘']{re.escape(n)}[’']", stderr)]
            if clash:  # the cause, before whatever g++ made of the header it broke
                message, fix = _define_clash(kt.label, clash)
            twice = redefined(stderr, kt.symbols)  # said at the declaration of the one named
            found = first_errors(stderr)
            culprit = None
            if len(kt.symbols) > 1 and message == f"{kt.label} does not compile on the host":
                # one object holds them all: one kernel's error fails every kernel's build,
                # so the others are not blamed; the first error's kernel is named if known
                culprit = first_error_kernel(kt, found)
                message = (f"the object of kernels {kt.label} ({kt.source.label}) does not "
                           "compile on the host" + (f": the first error is in {culprit}'s code"
                                                    if culprit else ""))
            entry = first_error_entry(kt, found)
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
    prune_host_kernels(out.parent)
    return out


HOST_KERNELS_KEPT = 1024
"""Host kernel libraries the cache keeps (~20 KB each): past that, the least recently used
go. A tester's cache had grown to 3,212 (69 MB), nothing ever removed."""
_CACHED = re.compile(r"[0-9a-f]{24}\.so")


def prune_host_kernels(folder: Path, keep: int = HOST_KERNELS_KEPT) -> int:
    """Delete the least recently used host kernel libraries in ``folder`` past the ``keep``
    newest (by modification time, which a cache hit renews); only files named as
    :func:`compile_host` names them are touched. Returns how many were deleted."""
    try:
        entries = [(e.stat().st_mtime, e.path) for e in os.scandir(folder)
                   if _CACHED.fullmatch(e.name) and e.is_file(follow_symlinks=False)]
    except OSError:
        return 0
    entries.sort(reverse=True)
    gone = 0
    for _, path in entries[keep:]:
        try:
            os.unlink(path)  # a process that loaded it keeps its mapping
            gone += 1
        except OSError:
            pass
    return gone


def _compile(cxx: str, flags: list[str], src: Path, lib: Path
             ) -> subprocess.CompletedProcess[str]:
    """``cxx`` run on ``src`` with ``flags`` and the host header, writing ``lib``."""
    # replace: its excerpts quote the source's lines, whose bytes need not be UTF-8 (a Latin-1
    # comment), and what it says is shown, never written back
    return subprocess.run([cxx, *flags, f"-I{HOST_INCLUDE}", str(src), "-o", str(lib)],
                          capture_output=True, text=True, encoding="utf-8", errors="replace",
                          env={**os.environ, "LC_ALL": "C"})


@dataclass(frozen=True)
class HostBuild:
    """A kernel's host build: the shared library :func:`build_native` made (or found cached)
    and the ``aie_arch`` it was built for (None: none given). What
    :func:`~aiedsl.kernels.host_load.load_native` loads, in this process or another
    (:mod:`aiedsl.kernels.worker_server`'s workers load the builds of the simulating process,
    building nothing)."""

    path: Path
    aie_arch: int | None


def build_native(k: Kernel, kt: KernelText, aie_arch: int | None = None) -> HostBuild:
    """Kernel ``k``'s generated C++ ``kt`` built for the host (for ``aie_arch`` when given: see
    :func:`compile_host`), or found built in the cache; a file kernel's source is checked
    first, as ``aiedsl check`` says it (not as g++ does). Nothing is loaded:
    :func:`~aiedsl.kernels.host_load.load_native` does that."""
    if k.source_kind == "file":
        check_file_kernel(k, kt.source, f"kernels/{kt.name}.cc")
    return HostBuild(compile_host(kt, k.loc, aie_arch), aie_arch)


def header_names(flags: Sequence[str], header: str) -> list[str]:
    """The names of the ``-D`` defines among ``flags`` that are words of ``header`` (the host
    AIE API header's text): the preprocessor replaces them there too."""
    names = [f[2:].partition("=")[0] for f in flags if f.startswith("-D")]
    return [n for n in dict.fromkeys(names)
            if not n.startswith("__") and re.search(rf"\b{re.escape(n)}\b", header)]


def _define_clash(label: str, names: list[str]) -> tuple[str, str]:
    """The message and fix of a host build that failed with defines named like words of the
    AIE API header (``defines={"N": 64}``: its templates' ``template <unsigned N>`` became
    ``template <unsigned 64>``, and g++ blamed the kernel's calls)."""
    said = listed([f"'{n}'" for n in names])
    return (f"{label} does not compile on the host: its defines= name {said}, which the "
            "compiler replaces everywhere after the -D, also inside the AIE API header the "
            "kernel includes, where " + ("it names" if len(names) == 1 else "they name")
            + " something else (a template parameter, a type); Peano's AIE API headers may "
            "break the same way",
            "give the defines names no header uses, prefixed for the kernel (KERNEL_N rather "
            "than N), in defines= and in the C++")


_LONG = re.compile(r"\blong\b(?!\s+(?:long|double)\b)(?<!long\slong)")
"""``long`` (``unsigned long``, ``long int``), not ``long long`` nor ``long double``."""


def _refuse_long(kt: KernelText, loc: Loc | None) -> None:
    """A kernel whose C++ function takes ``long`` (a pointer to it, or one): 4 bytes on the
    AIE core, 8 on this host, so its host build reads an i32 buffer with twice its element
    size (it wrote "4096 bytes past the end of buffer 'out'"). Refused before building, at the
    kernel's declaration."""
    from aiedsl.kernels.cscan import extern_c

    defines = dict(f[2:].partition("=")[::2] for f in kt.flags if f.startswith("-D"))
    scan = extern_c(kt.source.text, defines)
    for symbol, function in kt.callees:
        sig = scan.signature(function)
        longs = [p.text for p in (sig.params if sig is not None else ()) if _LONG.search(p.text)]
        if longs:
            at = next((where for s, where in kt.declared if s == symbol), loc)
            raise DesignError(
                "host kernel build", f"kernel '{symbol}' takes {listed(longs)} ({function} in "
                f"{kt.source.label}): long is 4 bytes on the AIE core but 8 on this host, so "
                "its host build would read and write its buffers with other element sizes than "
                "the core's", loc=at, limit="a host build runs C++ whose types have the "
                "core's sizes", found=listed(longs),
                fix="use the fixed-size types (int32_t for i32, uint32_t for u32), which are "
                "the same on both")
