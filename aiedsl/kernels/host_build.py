"""A kernel's C++ built for the host: a shared library compiled by g++ against aiedsl's host AIE
API header (:func:`compile_host`), and the :class:`HostBuild` that names it
(:func:`build_native`), which :mod:`aiedsl.kernels.host_load` loads, in this process or
another.

The C++ compiled is exactly the file a build writes (``kernels/<name>.cc``: the kernel source
plus the ``extern "C"`` entries of the kernels declared from it), with the ``-D`` words of their
``defines=``, so what is tested is what Peano would compile; a compiler error is shown at the
line of the user's own C++ file. Libraries are cached by content under
``$XDG_CACHE_HOME/aiedsl/host-kernels`` (``~/.cache`` by default), where g++ also keeps the
header precompiled (:mod:`~aiedsl.kernels.host_pch`).

Building is a step of its own, apart from loading, because the two need not run in one
process: :mod:`aiedsl.kernels.worker_server`'s workers load the simulating process's builds and
build nothing.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from aiedsl.cache import cache_dir, private, trusted
from aiedsl.errors import DesignError
from aiedsl.ir.kernel import Kernel
from aiedsl.ir.loc import Loc
from aiedsl.kernels.host_cxx import find_host_compiler
from aiedsl.kernels.host_errors import explain, redefined
from aiedsl.kernels.host_fit import define_clash, header_clash, refuse_host_sizes
from aiedsl.kernels.host_pch import FOLDER_PREFIX, pch_flags
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
    refuse_host_sizes(kt, loc)
    compiler = find_host_compiler()
    cxx = compiler.path
    if cxx is None:  # a tool missing (exit 4), not the design line's mistake
        what = f"kernel{'s' if len(kt.symbols) > 1 else ''} {kt.label}"
        raise compiler.missing_error(what)
    header = "".join(p.read_text() for p in sorted((HOST_INCLUDE / "aie_api").glob("*.hpp")))
    arch = arch_of(aie_arch)
    base = [*CXX_FLAGS, *([f"-D__AIE_ARCH__={aie_arch}"] if aie_arch is not None else []),
            *(arch_define_words(arch) if arch is not None else [])]
    flags = [*base, *kt.flags]
    identity = _compiler_identity(cxx)
    key = hashlib.sha256(encoded(kt.text + header + " ".join(flags) + cxx
                                 + identity)).hexdigest()[:24]
    cached = cache_dir("host-kernels") / f"{key}.so"
    folder = library_folder()
    out = folder / f"{key}.so"
    if out.is_file() and trusted(out) and _headers_hold(out):
        # (one another user could have written, or whose headers changed, is built again)
        try:  # used now: the last the pruning deletes
            os.utime(out)
        except OSError:  # (a cache another user's)
            pass
        return out
    if out != cached and cached.is_file() and trusted(cached) and private(cached.parent) \
            and _headers_hold(cached):
        shutil.copyfile(cached.with_suffix(DEPS_SUFFIX), out.with_suffix(DEPS_SUFFIX))
        shutil.copyfile(cached, out)  # a read-only cache's build: loaded from a copy
        return out
    with tempfile.TemporaryDirectory() as tmp:
        name = f"{kt.name}.cc"
        src = Path(tmp) / name
        src.write_bytes(encoded(kt.text))  # the source's own bytes, UTF-8 or not
        lib = Path(tmp) / "k.so"
        deps = Path(tmp) / "k.d"
        # the headers it reads beyond aiedsl's own, recorded with the library: an absolute or
        # a macro-computed #include is in no key, and a cached build of an edited header
        # computed what it no longer does (a tester)
        listed = ["-MD", "-MF", str(deps)]
        pch = pch_flags(cxx, identity, base, header, HOST_INCLUDE, folder, kt.text)
        r = _compile(cxx, [*flags, *pch, *listed], src, lib)
        if r.returncode != 0 and pch:  # its error as g++ says it reading the header's text
            r = _compile(cxx, [*flags, *listed], src, lib)
        if r.returncode != 0 and _NO_UNIQUE in r.stderr:  # clang: it has no such symbols
            r = _compile(cxx, [*(f for f in flags if f != _NO_UNIQUE), *listed], src, lib)
        if r.returncode != 0:
            stderr = kt.map_output(r.stderr, name)
            message, fix = explain(stderr, kt.label, HOST_INCLUDE / "aie_api" / "aie.hpp",
                                   kt.symbols, kt.source.label, kt.callees)
            clash = header_clash(kt.flags, header, stderr, HOST_INCLUDE / "aie_api")
            if clash:  # the cause, before whatever g++ made of the header it broke
                message, fix = define_clash(kt.label, clash)
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
        tmp_deps = out.with_suffix(f".{os.getpid()}-{threading.get_ident()}.deps.tmp")
        tmp_deps.write_text(json.dumps(_header_digests(deps, src, _system_dirs(cxx), folder),
                                       sort_keys=True))
        tmp_deps.replace(out.with_suffix(DEPS_SUFFIX))  # before the library: a hit sees both
        shutil.copyfile(lib, tmp_out)
        tmp_out.replace(out)  # atomic: parallel test runs may build the same library
    if out == cached:
        prune_host_kernels(out.parent)
    return out


DEPS_SUFFIX = ".deps"
"""Beside each cached library ``<key>.so``, ``<key>.deps``: the headers its build read that the
key does not cover (all but aiedsl's own host header), each with its SHA-256, as JSON."""
INCLUDE_ENV = ("CPATH", "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH")
"""Environment variables that add folders to the compiler's include path."""


def _compiler_identity(cxx: str) -> str:
    """What tells one compiler install from another at the same path (an upgrade in place),
    and the include path the environment adds: part of a library's key."""
    try:
        real = os.path.realpath(cxx)
        st = os.stat(real)
        ident = f"{real} {st.st_size} {st.st_mtime_ns}"
    except OSError:
        ident = cxx
    return ident + "".join(f" {v}={os.environ.get(v, '')}" for v in INCLUDE_ENV)


@functools.lru_cache(maxsize=8)
def _system_dirs(cxx: str) -> tuple[str, ...]:
    """The compiler's own include folders (its C++ and C libraries' headers), as it searches
    them without the folders the environment adds (:data:`INCLUDE_ENV`): what is there is the
    compiler install's, which a library's key names; what the environment adds is the user's,
    recorded with the library."""
    env = {k: v for k, v in os.environ.items() if k not in INCLUDE_ENV}
    try:
        r = subprocess.run([cxx, "-xc++", "-E", "-v", os.devnull], capture_output=True,
                           text=True, errors="replace", env={**env, "LC_ALL": "C"}, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return ()
    lines = r.stderr.splitlines()
    try:
        start = lines.index("#include <...> search starts here:")
        end = lines.index("End of search list.", start)
    except ValueError:
        return ()
    # clang marks a framework folder "(framework directory)"
    return tuple(os.path.realpath(line.strip().split(" (")[0]) for line in lines[start + 1:end])


def _header_digests(deps: Path, src: Path, system: tuple[str, ...] = (),
                    cache: Path | None = None) -> dict[str, str]:
    """The headers a build's ``-MD`` file lists, but the source, aiedsl's host header (and its
    precompiled copy's stand-in in ``cache``: :mod:`~aiedsl.kernels.host_pch`) and the
    compiler's own (under ``system``), by absolute path, each with its SHA-256."""
    try:
        text = deps.read_text(errors="surrogateescape").replace("\\\n", " ")
    except OSError:
        return {}
    words = re.findall(r"(?:\\.|[^\s\\])+", text.partition(": ")[2])
    ours = os.path.realpath(HOST_INCLUDE)
    out: dict[str, str] = {}
    for word in words:
        path = os.path.abspath(re.sub(r"\\(.)", r"\1", word))
        real = os.path.realpath(path)
        if path == os.path.abspath(src) or real.startswith(ours + os.sep) or any(
                real.startswith(d + os.sep) for d in system) or (
                cache is not None and os.path.basename(os.path.dirname(real)).startswith(
                    FOLDER_PREFIX) and os.path.dirname(os.path.dirname(real))
                == os.path.realpath(cache)):
            continue  # (a precompiled header's one-line stand-in: aiedsl's own header)
        try:
            out[path] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        except OSError:
            continue
    return out


def _headers_hold(lib: Path) -> bool:
    """Do the headers recorded beside library ``lib`` (:data:`DEPS_SUFFIX`) still hold what
    its build read? False without a record of this user's (a library built before records were
    kept is built again)."""
    side = lib.with_suffix(DEPS_SUFFIX)
    try:
        if not trusted(side):
            return False
        recorded = json.loads(side.read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(recorded, dict):
        return False
    for path, want in recorded.items():
        try:
            if hashlib.sha256(Path(path).read_bytes()).hexdigest() != want:
                return False
        except (OSError, TypeError):
            return False
    return True


def library_folder() -> Path:
    """Where host kernel libraries are built and loaded from: the cache folder, or, where it
    cannot be made or written (a read-only home, a CI sandbox's), a folder of this process's
    own, removed at its exit (:func:`_own_folder`): a cache folder that cannot be written is
    not used. (A tester's read-only cache crashed ``kernel test`` with a PermissionError.)"""
    folder = cache_dir("host-kernels")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return _own_folder()
    # a library is loaded from a copy written beside it (host_load.load_copy): the folder must
    # take new files, not only hold the library; and no other user may change them meanwhile
    if os.access(folder, os.W_OK | os.X_OK) and private(folder):
        return folder
    return _own_folder()


@functools.lru_cache(maxsize=1)
def _own_folder() -> Path:
    """A temporary folder for this process's host kernel libraries, made once and removed
    when the process exits."""
    own = Path(tempfile.mkdtemp(prefix="aiedsl-host-kernels-"))
    atexit.register(shutil.rmtree, own, True)
    return own


HOST_KERNELS_KEPT = 1024
"""Host kernel libraries the cache keeps (~20 KB each): past that, the least recently used go.
A tester's cache had grown to 3,212 (69 MB), nothing ever removed."""
PRUNE_AGE = 3600.0
"""Seconds a library (or a build's leftover copy) is left alone after its last use, however
many there are: a simulation still running loads each core's copy at its first call, perhaps
long after its build was found in the cache."""
_CACHED = re.compile(r"[0-9a-f]{24}\.so")
_DEPS = re.compile(r"[0-9a-f]{24}\.deps")
_LEFTOVER = re.compile(r"\.?[0-9a-f]{24}\..*\.(?:tmp|so)")
"""A build's copy on its way into the cache (``<key>.<pid>-<thread>.tmp``), left by a killed
process, and a core's loaded copy of a library (``.<key>.<...>.so``), left where it could not
be deleted."""


def prune_host_kernels(folder: Path, keep: int = HOST_KERNELS_KEPT,
                       age: float = PRUNE_AGE) -> int:
    """Delete the least recently used host kernel libraries in ``folder`` past the ``keep``
    newest (by modification time, which a cache hit renews), and builds' leftovers, when unused
    for ``age`` seconds; only files named as :func:`compile_host` and the loader name them are
    touched. Returns how many were deleted."""
    try:
        entries = [(e.stat().st_mtime, e.name, e.path) for e in os.scandir(folder)
                   if e.is_file(follow_symlinks=False)]
    except OSError:
        return 0
    old = time.time() - age
    libraries = sorted(((t, p) for t, n, p in entries if _CACHED.fullmatch(n)), reverse=True)
    gone = [p for t, p in libraries[keep:] if t < old]
    gone += [p for t, n, p in entries if _LEFTOVER.fullmatch(n) and t < old]
    # a library's header record goes with it (or, left without one, once unused for `age`)
    kept = {os.path.basename(p) for _, p in libraries} - {os.path.basename(p) for p in gone}
    gone += [p for t, n, p in entries if _DEPS.fullmatch(n)
             and n.removesuffix(DEPS_SUFFIX) + ".so" not in kept
             and (t < old or os.path.join(os.path.dirname(p), n.removesuffix(DEPS_SUFFIX)
                                          + ".so") in gone)]
    deleted = 0
    for path in gone:
        try:
            os.unlink(path)  # a process that loaded it keeps its mapping
            deleted += 1
        except OSError:
            pass
    return deleted


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


def prebuild(builds: Sequence[tuple[Kernel, KernelText, int | None]],
             jobs: int | None = None) -> None:
    """Build the host libraries of ``builds`` (each a kernel, its generated C++ and the
    ``aie_arch`` to build it for, as :func:`build_native` takes them) up to ``jobs`` at a time
    (one per CPU by default, at most :data:`PREBUILD_JOBS`), so that the :func:`build_native`
    of each that follows, one by one and in order, finds its library cached: ``make -j`` for
    ``kernel test --all``, whose 71 library files took 58 s one after another on two cores
    (34 s so).

    Nothing is said here: a build that fails fails again in its own turn, where its error is
    said as before, in the same order (it costs that one build twice). Builds of the same text,
    flags and architecture are made once.

    >>> prebuild([(k, kernel_text(None, k), None) for k in kernels])  # doctest: +SKIP
    """
    unique: dict[tuple[str, tuple[str, ...], int | None], tuple[Kernel, KernelText, int | None]]
    unique = {}
    for k, kt, arch in builds:
        unique.setdefault((kt.text, tuple(kt.flags), arch), (k, kt, arch))
    jobs = min(jobs or _cpus(), len(unique))
    if jobs < 2:
        return
    from concurrent.futures import ThreadPoolExecutor

    def build(item: tuple[Kernel, KernelText, int | None]) -> None:
        try:
            build_native(*item)
        except Exception:  # noqa: BLE001 (said by the build that follows, in its turn)
            pass

    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="aiedsl host build")
    try:
        for _ in pool.map(build, unique.values()):
            pass
    finally:  # Ctrl-C: the builds not started are not started; those running end first
        pool.shutdown(wait=True, cancel_futures=True)


PREBUILD_JOBS = 8
"""The most g++ runs :func:`prebuild` makes at a time by default, however many CPUs there are:
each of mm.cc's took up to 98 MB (its precompiled header's build included), and a
container may see its host's CPUs."""


def _cpus() -> int:
    """The CPUs this process may run on (its affinity, where the system says it), at most
    :data:`PREBUILD_JOBS`."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # (macOS, Windows)
        n = os.cpu_count() or 1
    return max(1, min(n, PREBUILD_JOBS))


def build_native(k: Kernel, kt: KernelText, aie_arch: int | None = None) -> HostBuild:
    """Kernel ``k``'s generated C++ ``kt`` built for the host (for ``aie_arch`` when given: see
    :func:`compile_host`), or found built in the cache; a file kernel's source is checked
    first, as ``aiedsl check`` says it (not as g++ does). Nothing is loaded:
    :func:`~aiedsl.kernels.host_load.load_native` does that."""
    if k.source_kind == "file":
        check_file_kernel(k, kt.source, f"kernels/{kt.name}.cc")
    return HostBuild(compile_host(kt, k.loc, aie_arch), aie_arch)
