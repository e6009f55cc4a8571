"""Files written whole, folders made and unmade, and what a file-system error tells the user.

What the build directory (:mod:`aiedsl.builddir`) and the single output files of ``--trace``
and ``--stats`` (:mod:`aiedsl.builddir.outfile`) share: a file is written to a temporary name
and renamed into place, so a reader never sees half of it; folders a write had to make are
removed again when it fails; and an ``OSError`` becomes a DesignError naming the path, the
reason and a fix.

Example
-------
>>> import tempfile
>>> d = Path(tempfile.mkdtemp())
>>> replace_file(d / "a.txt", "hello", d)
>>> (d / "a.txt").read_text()
'hello'
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from aiedsl.errors import DesignError, display_path
from aiedsl.shell import shell_line
from aiedsl.text import printable

TMP_SUFFIX = ".aiedsl-tmp"
"""Ends the name of a temporary file :func:`replace_file` renames into place."""


def os_error(e: OSError, shown: str | Path, *, rule: str, option: str,
             verb: str = "write") -> DesignError:
    """The DesignError for file-system error ``e``, met while aiedsl wrote (or read, ``verb``)
    ``shown``: the path the system refused, its reason, and a fix fitting the reason.

    ``option`` names the command-line option that chose ``shown`` (``-o``, ``--trace``).

    >>> print(os_error(PermissionError(13, "Permission denied", "/r/.b.aiedsl-new"), "/r/b",
    ...                rule="output directory", option="-o"))  # doctest: +NORMALIZE_WHITESPACE
    error [output directory]: cannot write /r/b: Permission denied (at /r/.b.aiedsl-new)
      fix: make /r writable for you (ls -ld /r shows who may write it), or choose another path
      with -o
    """
    failed = Path(os.fsdecode(e.filename)) if e.filename is not None else Path(shown)
    if failed.name.endswith(TMP_SUFFIX):  # a temporary file's random name says nothing
        failed = failed.parent
    where = display_path(str(failed))
    # The folder whose permissions or space decide: the failing path when it is a folder
    # (renaming a folder rewrites its ".."), else the folder it was to be made in.
    # (os.path's tests never raise: Path.is_dir re-raises EACCES from a folder it cannot enter)
    folder = display_path(str(failed if os.path.isdir(failed) else failed.parent))
    blocker = _file_on_the_way(failed) if e.errno in (errno.ENOTDIR, errno.EEXIST) else None
    shown_folder = printable(folder)
    if blocker is not None:
        fix = f"{printable(display_path(str(blocker)))} is a file, not a folder: choose " \
              f"another path with {option}"
    elif e.errno in (errno.EACCES, errno.EPERM):
        able, may = ("readable", "read") if verb == "read" else ("writable", "write")
        fix = f"make {shown_folder} {able} for you ({command(['ls', '-ld'], folder)} shows who " \
              f"may {may} it), or choose another path with {option}"
    elif e.errno in (errno.ENOSPC, errno.EDQUOT):
        fix = f"free space on the file system of {shown_folder}, or choose another path with " \
              f"{option}"
    elif e.errno == errno.EROFS:
        fix = f"{shown_folder} is on a read-only file system: choose another path with {option}"
    else:
        fix = f"choose another path with {option}, in a folder you may write"
    reason = e.strerror or type(e).__name__
    at = "" if where == display_path(str(shown)) else f" (at {printable(where)})"
    return DesignError(rule, f"cannot {verb} {printable(shown)}: {reason}{at}", fix=fix)


def command(words: Sequence[str], path: str) -> str:
    """Command ``words`` applied to ``path``, as one shell line a message tells the user to run:
    quoted by the one quoting function (:func:`aiedsl.shell.shell_line`), so a
    paste runs it on that path alone, ``path`` written ``./-...`` when it starts with ``-`` (not
    to be read as an option), control characters (which would split the message) as escapes.

    >>> print(command(["rm", "-r"], "my build"))
    rm -r 'my build'
    """
    return printable(shell_line([*words, f"./{path}" if path.startswith("-") else path]))


def _file_on_the_way(path: Path) -> Path | None:
    """``path`` or its nearest existing ancestor, when that is not a folder."""
    for p in (path, *path.parents):
        if os.path.lexists(p):
            return None if os.path.isdir(p) else p
    return None


@contextmanager
def os_errors(shown: str | Path, *, rule: str, option: str,
               verb: str = "write") -> Iterator[None]:
    """Turn a file-system error met inside into :func:`os_error`'s DesignError."""
    try:
        yield
    except OSError as e:
        raise os_error(e, shown, rule=rule, option=option, verb=verb) from e


def make_dirs(folder: Path) -> list[Path]:
    """Make ``folder`` and its missing ancestors; returns those made, outermost first. A failure
    removes again what it made."""
    missing = []
    d = folder
    while not os.path.lexists(d) and d != d.parent:
        missing.append(d)
        d = d.parent
    made: list[Path] = []
    try:
        for d in reversed(missing):
            os.mkdir(d)
            made.append(d)
    except BaseException:
        unmake_dirs(made)
        raise
    return made


def unmake_dirs(made: list[Path]) -> None:
    """Remove the folders :func:`make_dirs` made, innermost first, each only while empty."""
    for d in reversed(made):
        try:
            os.rmdir(d)
        except OSError:
            break


def remove_tree(folder: Path) -> None:
    """``shutil.rmtree(folder)``, an error naming the whole path of the first thing it could not
    remove (rmtree raises the system's error, which names the entry alone: ``x.cc``, not where).

    The first error is kept and raised after rmtree returns: raised from its handler, Python
    3.13's rmtree catches it and reports the folder instead."""
    first: list[BaseException] = []

    def fail(e: BaseException, path: str) -> None:
        if first:
            return
        if isinstance(e, OSError) and e.filename is not None and e.errno is not None:
            # the entry's path: Python 3.12 hands the entry's, a bare name names it in path
            name = os.fsdecode(e.filename)
            if not os.path.dirname(name) and os.path.basename(path) != name:
                path = os.path.join(path, name)
            err = OSError(e.errno, e.strerror, path)  # OSError picks the subclass
            err.__cause__ = e
            first.append(err)
        else:
            first.append(e)

    if sys.version_info >= (3, 12):
        shutil.rmtree(folder, onexc=lambda fn, path, e: fail(e, path))
    else:
        shutil.rmtree(folder, onerror=lambda fn, path, info: fail(info[1], path))
    if first:
        raise first[0]


def replace_file(path: Path, text: str | bytes, tmp_dir: Path) -> None:
    """Write ``path`` whole or not at all: a temporary file in ``tmp_dir``, then os.replace.
    ``text`` as text, or as bytes written as they are."""
    fd, tmp = new_temp(tmp_dir, path.name)
    try:
        with os.fdopen(fd, "wb" if isinstance(text, bytes) else "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


TEMP_TRIES = 100
"""Names :func:`new_temp` draws before it gives up (each taken already)."""


def new_temp(folder: Path, name: str) -> tuple[int, str]:
    """A new file in ``folder`` for ``name``'s contents, open for writing: its descriptor and
    path (``.<name>.<random>`` and :data:`TMP_SUFFIX`). It is created with the mode a plain
    write gives (0666 less the process's umask, which the kernel applies), never over a file
    there already: ``tempfile.mkstemp`` makes 0600, and reading the umask to widen that meant
    setting it to 0 for a moment, which other threads' files were created under (a reviewer:
    7,971 of 20,000 came out writable by everyone)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(
        os, "O_BINARY", 0)
    for _ in range(TEMP_TRIES):
        tmp = os.path.join(folder, f".{name}.{secrets.token_hex(4)}{TMP_SUFFIX}")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, f"no free temporary name for {name}", str(folder))
