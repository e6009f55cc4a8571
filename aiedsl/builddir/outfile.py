"""One output file a command writes beside its work (``aiedsl sim --trace``, ``--stats``).

Such a file may land in a build directory (its marker then lists it) or anywhere else; aiedsl
replaces only a file it wrote itself (``ours`` tells from its first 4 KB), and refuses the path
before the long work, not after (:func:`check_file`).

Example
-------
>>> write_file("build/gemm/trace.json", "{}", design="gemm", ours=lambda head: True,
...            option="--trace", example="trace.json")  # doctest: +SKIP
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

from aiedsl.builddir.lock import claim
from aiedsl.builddir.marker import MARKER, build_dir_of, read_marker, relist, write_marker
from aiedsl.errors import DesignError, display_path, printable
from aiedsl.files import make_dirs, os_error, os_errors, replace_file, unmake_dirs


def check_file(path: str | Path, *, ours: Callable[[str], bool], option: str,
               example: str) -> None:
    """Raise the DesignError :func:`write_file` would raise before writing ``path``, so that a
    command refuses it before its long work (a simulation) rather than after.

    A pipe or a terminal (``/dev/stdout``, ``>(jq .)``: :func:`is_stream`) is taken as it is.
    Refused: ``-`` (taken by most tools for standard output, it would be a file of that name), a
    folder (or a path ending in ``/``: ``example`` is the file name the fix suggests in it), a
    file aiedsl did not write (``ours`` is given its first 4 KB), and a path whose
    folder is a file or, as far as ``os.access`` tells, not writable.
    """
    shown = Path(path)
    real = Path(os.path.realpath(shown))
    if str(path) not in ("", "-") and is_stream(shown):
        return
    if str(path) == "":  # an unset variable: no file at all, not the working directory
        raise DesignError("output file", f"{option} '' names no file",
                          fix=f"name the file, e.g. {option} {example}")
    if str(path) == "-":  # the usual spelling of standard output, which these files never go to
        raise DesignError("output file", f"{option} - would write a file named '-'",
                          fix=f"name the file, e.g. {option} {example}, or a pipe, e.g. "
                          f"{option} >(jq .) (aiedsl's own lines go to standard output)")
    if str(path).endswith(("/", os.sep)) or os.path.isdir(real):
        raise DesignError("output file", f"{printable(path)} is a folder, not a file",
                          fix=f"name the file, e.g. {option} {printable(shown / example)}")
    if os.path.islink(shown) and not os.path.exists(shown):
        # a link to nothing is no more aiedsl's than a link to a file is: writing through it
        # would make a file wherever it points
        label = printable(shown)
        raise DesignError("output file", f"{label} is a symbolic link to "
                          f"{printable(os.readlink(shown))}, which does not exist, and aiedsl "
                          "did not make it", fix=f"choose another file with {option}, or remove "
                          f"the link {label}")
    if os.path.lexists(real) and not _is_ours(real, ours):
        label = printable(shown)
        kind = _other_kind(real)
        raise DesignError("output file", f"{label} exists and aiedsl did not write it" if kind
                          is None else f"{label} is {kind} aiedsl wrote, not what {option} "
                          "writes", fix=f"choose another file with {option}, or move {label} "
                          "away")
    there = _existing(real.parent)
    # What the write would meet first: the folder itself, or the first folder it must make.
    first = real.parent if there == real.parent else \
        next(p for p in (real.parent, *real.parent.parents) if p.parent == there)
    if not os.path.isdir(there):
        e: OSError = NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(first))
        raise os_error(e, shown, rule="output file", option=option)
    if not os.access(there, os.W_OK | os.X_OK):
        # os.access says no for a read-only file system too: name that reason when it is one
        readonly = bool(os.statvfs(there).f_flag & os.ST_RDONLY) if hasattr(os, "statvfs") \
            else False
        code = errno.EROFS if readonly else errno.EACCES
        e = OSError(code, os.strerror(code), str(first))
        raise os_error(e, shown, rule="output file", option=option)


def write_file(path: str | Path, text: str, *, design: str, ours: Callable[[str], bool],
               option: str, example: str,
               fits: Callable[[Path, str], bool] | None = None) -> bool:
    """Write ``text`` to ``path`` through a temporary file and one rename.

    Refuses (DesignError "output file", :func:`check_file`) a folder and a file aiedsl did not
    write. A folder it makes is a build directory, with a marker; a file written in a build
    directory is added to its marker. ``option`` names the command-line option that chose
    ``path``, and ``example`` a file name, for the fix.

    In a build directory, ``fits`` is asked first, under the directory's lock (so no build
    swaps in between), with the directory and ``path`` relative to it: it raises to refuse a
    file that would not agree with the build there, and returns False to leave the file there
    as it is (nothing is written). Returns whether ``path`` was written.
    """
    check_file(path, ours=ours, option=option, example=example)
    shown = Path(path)
    if is_stream(shown):  # a pipe or a terminal: written through, nothing to replace
        with os_errors(shown, rule="output file", option=option), \
                open(shown, "w", encoding="utf-8") as f:
            f.write(text)
        return True
    real = Path(os.path.realpath(shown))
    made: list[Path] = []
    try:
        with os_errors(shown, rule="output file", option=option):
            home = build_dir_of(_existing(real.parent))
            if home is None and not os.path.exists(real.parent):
                made = make_dirs(real.parent)
                write_marker(real.parent, design, [])
                home = real.parent
            if home is None:
                replace_file(real, text, real.parent)
                return True
            with claim(home, display_path(str(home))) as staging:
                rel = real.relative_to(home)
                if fits is not None and not fits(home, rel.as_posix()):
                    return False
                real.parent.mkdir(parents=True, exist_ok=True)
                replace_file(real, text, staging)
                added = {str(rel)} | {f"{p}/" for p in rel.parents if str(p) != "."}
                marker = read_marker(home) or {"design": design, "files": []}
                relist(home, marker, staging, added.__contains__)
            return True
    except BaseException:
        if made and not os.path.lexists(real):  # the folder this call made holds only its
            (real.parent / MARKER).unlink(missing_ok=True)  # marker: the file never got there
            unmake_dirs(made)
        raise


def is_stream(path: Path) -> bool:
    """Is ``path`` a pipe, a terminal or another character device (``/dev/stdout``,
    ``/dev/fd/3``, a shell's ``>(jq .)``)? Asked of the path itself: its realpath under
    ``/proc`` (``pipe:[...]``) names no file."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


def _existing(folder: Path) -> Path:
    while not os.path.exists(folder) and folder != folder.parent:
        folder = folder.parent
    return folder


KINDS = (("a trace", re.compile(r'\{"otherData": \{"generator": "aiedsl ')),
         ("stats", re.compile(r'\{\s*"generator": "aiedsl ')),
         ("a map", re.compile(r"<!-- .*: generated by aiedsl ")))
"""How each file a command writes beside its work begins (``sim --trace``, ``--stats``,
``map -o``): a refusal of one of them where another was asked for says which it is."""


def _other_kind(path: Path) -> str | None:
    """Which of :data:`KINDS` the file at ``path`` is, when aiedsl wrote it; else None."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = f.read(4096)
    except OSError:
        return None
    return next((kind for kind, begins in KINDS if begins.search(head[:400])), None)


def _is_ours(path: Path, ours: Callable[[str], bool]) -> bool:
    if not path.is_file():
        return False
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return ours(f.read(4096))
    except OSError:
        return False
