"""g++'s precompiled copy of aiedsl's host AIE API header, which host builds read in place of
the header's text.

Most of a host build's time is g++ reading the header and the standard headers it includes
(0.64 s of a 0.85 s build of a 64x64x64 matmul); read precompiled, the build takes 0.48 s.
:func:`pch_flags` gives the words that make g++ read it (``-include`` of a folder holding it),
building it once per compiler and flags, or none where it would not be the same build:

* only with g++ (a precompiled header is one compiler's own file);
* only when the source reaches ``#include <aie_api/aie.hpp>`` with nothing before it that the
  header could read (:func:`forced_include_safe`): ``-include`` reads the header before the
  source's first line, so a ``#define`` above the source's own include would no longer reach it;
* only from the second build with the same flags on (:data:`WANTED`): the first pays for a
  build, not for a precompiled header too (1.7 s), which one build alone would not win back.

A kernel's ``defines=`` are g++'s to judge: it reads the precompiled header only where every
macro defined on the command line is one the header never uses, and reads the header's text
otherwise (``-Winvalid-pch`` says which), so the build is the same either way. A build that
fails with it is built again without it (:func:`~aiedsl.kernels.host_build.compile_host`), so a
compiler error reads as it always has.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
import threading
import time
from pathlib import Path

from aiedsl.cache import private, trusted
from aiedsl.kernels.cscan.blank import blank
from aiedsl.text import encoded

FOLDER_PREFIX = "pch-"
"""Each precompiled header's folder in the host kernel cache: ``pch-<key>``, holding
``aie.hpp.gch`` and the one-line ``aie.hpp`` g++ reads where the precompiled header does not
fit (an ``#include`` of the real header)."""
WANTED = ".wanted"
"""Beside the folders, ``pch-<key>.wanted``: a build with these flags missed the cache once;
the next one builds the precompiled header."""
KEPT = 4
"""Precompiled headers kept (about 30 MB each): one per architecture a build names (none, AIE2,
AIE2P) and one more; past that, the least recently used go once unused for an hour."""
SHIM = "#include <aie_api/aie.hpp> // aiedsl: where the precompiled header does not fit\n"
MARK = "-DAIEDSL_HOST_PCH"
"""Defined in the precompiled header's build and in every build that reads it: the header then
takes the file being compiled from ``aie_api/host_base_file.hpp`` (read after it), as its own
``__BASE_FILE__`` would name the header. A build without it has no such function at all."""

STANDARD_HEADERS = frozenset("""
    algorithm any array atomic barrier bit bitset cassert cctype cerrno cfenv cfloat charconv
    chrono cinttypes climits clocale cmath compare complex concepts condition_variable coroutine
    csetjmp csignal cstdarg cstddef cstdint cstdio cstdlib cstring ctime cuchar cwchar cwctype
    deque exception execution expected filesystem format forward_list fstream functional future
    initializer_list iomanip ios iosfwd iostream istream iterator latch limits list locale map
    memory memory_resource mutex new numbers numeric optional ostream queue random ranges ratio
    regex scoped_allocator semaphore set shared_mutex source_location span sstream stack
    stdexcept stop_token streambuf string string_view syncstream system_error thread tuple
    type_traits typeindex typeinfo unordered_map unordered_set utility valarray variant vector
    version assert.h ctype.h errno.h fenv.h float.h inttypes.h limits.h locale.h math.h
    setjmp.h signal.h stdarg.h stdbool.h stddef.h stdint.h stdio.h stdlib.h string.h time.h
    uchar.h wchar.h wctype.h
""".split())
"""The C++ and C standard library's headers: included above the AIE API header, one reads as
well after it (none reads a macro a source defines, and ``#define`` above is refused anyway)."""

_AIE_INCLUDE = re.compile(r'#\s*include\s*[<"]aie_api/aie\.hpp[>"]\s*$')
_STD_INCLUDE = re.compile(r"#\s*include\s*<([\w./]+)>\s*$")
_GUARD = re.compile(r"#\s*(ifndef|define)\s+(\w+)\s*$")
_ALLOWED = re.compile(r"#\s*(?:pragma\s+once|line\b.*)?\s*$")
"""A ``#pragma once``, a ``#line`` or an empty directive."""


def forced_include_safe(source: str) -> bool:
    """Does ``source`` read aiedsl's host header (``#include <aie_api/aie.hpp>``) the same when
    g++ reads it first (``-include``)? Yes when every line above its first such include is
    blank, a comment, a standard library header's ``#include``, ``#pragma once``, ``#line`` or
    the source's own include guard (``#ifndef G`` then ``#define G``): nothing there defines
    a macro the header could read, or puts the include under a condition.

    >>> forced_include_safe("#include <stdint.h>\\n#include <aie_api/aie.hpp>\\n")
    True
    >>> forced_include_safe("#define AIE_API_X 1\\n#include <aie_api/aie.hpp>\\n")
    False
    >>> forced_include_safe("void f() {}\\n")  # never includes it: -include would add it
    False
    """
    guard = None
    for line in blank(source, strings=False).splitlines():
        text = line.strip()
        if not text:
            continue
        if text.endswith("\\"):  # a directive spliced across lines: not read here
            return False
        g = _GUARD.match(text)
        if guard:  # an #ifndef is a guard only with its #define next
            if not (g and g[1] == "define" and g[2] == guard):
                return False
            guard = ""  # taken: no second guard
            continue
        if _AIE_INCLUDE.match(text):
            return True
        m = _STD_INCLUDE.match(text)
        if m:
            if m[1] not in STANDARD_HEADERS:
                return False
            continue
        if g and g[1] == "ifndef" and guard is None:
            guard = g[2]
            continue
        if _ALLOWED.fullmatch(text):
            continue
        return False
    return False


@functools.lru_cache(maxsize=8)
def is_gcc(cxx: str) -> bool:
    """Is ``cxx`` g++ (not clang, which takes g++'s name on some systems)?"""
    try:
        r = subprocess.run([cxx, "-dM", "-E", "-xc++", os.devnull], capture_output=True,
                           text=True, errors="replace", timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return False
    macros = r.stdout
    return r.returncode == 0 and "#define __GNUC__ " in macros and "__clang__" not in macros


def pch_flags(cxx: str, identity: str, flags: list[str], header: str, include: Path,
              folder: Path, source: str) -> list[str]:
    """The words that make ``cxx`` read the precompiled ``include/aie_api/aie.hpp`` (whose
    files' text is ``header``) in a build of ``source`` with ``flags`` (the build's own, but
    for its kernels' ``defines=``), building it in ``folder`` (the host kernel cache) when a
    second build with these flags asks; ``[]`` for a build that reads the header's text (see
    the module's docstring). ``identity`` tells one install of ``cxx`` from another."""
    if not forced_include_safe(source) or not is_gcc(cxx):
        return []
    key = hashlib.sha256(encoded(header + " ".join(flags) + cxx + identity)).hexdigest()[:24]
    here = folder / f"{FOLDER_PREFIX}{key}"
    gch = here / "aie.hpp.gch"
    if gch.is_file():
        if not (trusted(gch) and trusted(here / "aie.hpp") and private(here)):
            return []
        try:
            os.utime(gch)  # used now: the last the pruning deletes
        except OSError:
            pass
        return _words(here, include)
    wanted = folder / f"{FOLDER_PREFIX}{key}{WANTED}"
    if not wanted.exists():
        try:
            wanted.touch()
        except OSError:
            pass
        return []
    with _BUILDING:
        if gch.is_file():  # built by another thread while this one waited
            return pch_flags(cxx, identity, flags, header, include, folder, source)
        built = _build(cxx, flags, include, here)
    if not built:
        wanted.unlink(missing_ok=True)  # (a full disk: tried again a build later, not each)
        return []
    prune(folder)
    return _words(here, include)


_BUILDING = threading.Lock()
"""Held by the thread of this process building a precompiled header: builds made several at a
time (:func:`~aiedsl.kernels.host_build.prebuild`) of the same flags would each build it (1.7 s
and 30 MB each) where one can, the others reading it."""


def _words(here: Path, include: Path) -> list[str]:
    """g++'s words reading the precompiled header in ``here``, then
    ``aie_api/host_base_file.hpp``, which tells the header the file being compiled (in a
    precompiled header ``__BASE_FILE__`` names the header itself), with :data:`MARK`."""
    return [MARK, "-include", str(here / "aie.hpp"),
            "-include", str(include / "aie_api" / "host_base_file.hpp")]


def _build(cxx: str, flags: list[str], include: Path, here: Path) -> bool:
    """Build ``here/aie.hpp.gch`` from ``include/aie_api/aie.hpp`` with ``flags`` (and the
    one-line ``here/aie.hpp`` beside it); False where it cannot be."""
    tag = f"{os.getpid()}-{threading.get_ident()}"
    try:
        here.mkdir(exist_ok=True)
        shim_tmp = here / f"aie.hpp.{tag}.tmp"
        shim_tmp.write_text(SHIM)
        shim_tmp.replace(here / "aie.hpp")
        out = here / f"aie.hpp.gch.{tag}.tmp"
        r = subprocess.run([cxx, *(f for f in flags if f != "-shared"), MARK, f"-I{include}",
                            "-xc++-header", str(include / "aie_api" / "aie.hpp"), "-o", str(out)],
                           capture_output=True, text=True, errors="replace",
                           env={**os.environ, "LC_ALL": "C"}, stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            out.unlink(missing_ok=True)
            return False
        out.replace(here / "aie.hpp.gch")  # atomic: another process may build it too
    except OSError:
        return False
    return True


def prune(folder: Path, keep: int = KEPT, age: float = 3600.0) -> None:
    """Delete the least recently used precompiled headers in ``folder`` past the ``keep``
    newest, once unused for ``age`` seconds, with their marks; only folders and files named as
    :func:`pch_flags` names them."""
    try:
        entries = [e for e in os.scandir(folder) if e.name.startswith(FOLDER_PREFIX)]
    except OSError:
        return
    built = []
    for e in entries:
        if e.is_dir(follow_symlinks=False) and re.fullmatch(r"pch-[0-9a-f]{24}", e.name):
            try:
                used = os.stat(os.path.join(e.path, "aie.hpp.gch")).st_mtime
            except OSError:
                used = e.stat(follow_symlinks=False).st_mtime
            built.append((used, e.path))
    built.sort(reverse=True)
    old = time.time() - age
    for used, path in built[keep:]:
        if used >= old:
            continue
        try:
            for name in os.listdir(path):
                if name in ("aie.hpp", "aie.hpp.gch") or name.endswith(".tmp"):
                    Path(path, name).unlink(missing_ok=True)
        except OSError:
            continue
        for gone in (path, path + WANTED):
            try:  # a folder holding what aiedsl did not write stays
                (os.rmdir if gone == path else os.unlink)(gone)
            except OSError:
                pass
