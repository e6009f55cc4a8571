"""Replacing a build directory whole, and moving a compile's outputs into it.

A build is replaced whole, never file by file: the new one is written beside the old, in the
staging directory ``<parent>/.<name>.aiedsl-new/build`` (:mod:`aiedsl.builddir.lock`), the old
build's tool outputs are hard-linked (build.sh's copied) into it (only when the files the tools
read are unchanged: outputs made from other inputs are dropped; :func:`_same_inputs`,
:func:`_carried`, :func:`_carry`), and the two are swapped by one
``renameat2(RENAME_EXCHANGE)`` (:func:`_swap`). An interrupt or a crash leaves either the old
build or the new one, whole. What was put in the old one while the new one was written goes
back into the new one (:func:`_rename_new`, :func:`aiedsl.builddir.build._clear_old`).

What ``--compile``'s tools made in the staging folder goes in the same way, each file in one
exchange, once they are done (:func:`install_outputs`): an interrupted compile changes nothing
in the build directory.

>>> _swap(Path("build/.passthrough.aiedsl-new/build"), Path("build/passthrough"))  # doctest: +SKIP
"""

from __future__ import annotations

import errno
import functools
import os
import shutil
import stat
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from aiedsl.builddir.lock import OLD
from aiedsl.builddir.marker import (
    MARKER, _entry, digests_of, entries, owned, owned_in, read_marker, relist, write_marker,
)
from aiedsl.builddir.refuse import _changed_inputs, _refuse_in_the_way
from aiedsl.files import os_errors

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


# -- a new build, beside the old ------------------------------------------------------------------


def _same_inputs(old: Path, files: dict[str, str], tool_input: Callable[[str], bool] | None
                 ) -> bool:
    """Do the files the tools read (``tool_input``) in build ``old`` hold exactly ``files``?
    Their outputs there (an xclbin, instructions) were made from them: carried over beside
    other inputs, they would pass for the new build's."""
    return tool_input is None or not _changed_inputs(old, files, tool_input)


def _carried(old: Path, generated: set[str]) -> list[str]:
    """What of the previous build ``old`` a new one carries: what the toolchain made there
    (xclbin, logs, cache), everything the new generation does not write itself, except
    ``kernels/`` (regenerated)."""
    return [rel for rel in entries(old) if rel != MARKER and rel not in generated
            and not rel.startswith("kernels/")]


def _carry(old: Path, new: Path, carried: list[str]) -> None:
    """Link ``carried`` (:func:`_carried`) from ``old`` into ``new``.

    Hard links, not moves: the old build stays whole until the swap. A file the old marker
    does not list (build.sh's output, aiedsl's because build.sh's record is no older than the
    file's ``ctime``: :func:`~aiedsl.builddir.marker.script_wrote`) is copied instead: a link
    sets the ``ctime`` of the file it links, and the old build, left in place by a build that
    stops before its swap, would no longer vouch for it (the next build refused it as the
    user's).
    """
    listed = set((read_marker(old) or {}).get("files", []))
    for rel in carried:
        src, dst = old / rel, new / rel
        if os.path.lexists(dst):
            continue  # the new generation's own file wins
        if rel.endswith("/"):
            dst.mkdir(parents=True)
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if rel in listed:
            _link(src, dst)
        else:
            _copy(src, dst)


def _link(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError:  # a file system without hard links
        _copy(src, dst)


def _copy(src: Path, dst: Path) -> None:
    """``src`` at ``dst``, a copy (a link copied as a link), its times kept."""
    if src.is_symlink():
        os.symlink(os.readlink(src), dst)
    else:
        shutil.copy2(src, dst)


# -- the swap -------------------------------------------------------------------------------------


def _swap(new: Path, out: Path) -> None:
    """Put ``new`` at ``out`` in one step; the old build (if any) ends up inside the staging
    folder, which the caller removes. ``new`` first takes the old build directory's group and
    permissions: a rebuild keeps a private (0700) or a shared (setgid group) folder as it was."""
    if not os.path.lexists(out):
        os.rename(new, out)
        return
    _keep_mode(out, new)
    if _exchange(new, out):
        return
    # No renameat2 (not Linux, old glibc, or a file system without RENAME_EXCHANGE): two
    # renames. Between them ``out`` does not exist for a moment: a build interrupted there puts
    # the old build back as it leaves (_release); one killed there leaves it in the staging
    # folder, and the next build puts it back (_remove_leftover).
    os.rename(out, new.parent / OLD)
    os.rename(new, out)


def _keep_mode(old: Path, new: Path) -> None:
    """Give folder ``new`` the group and permission bits of folder ``old`` (its setgid bit
    too), as far as this user may (a group it is not in stays the new folder's own), the
    owner's read, write and search bits always."""
    try:
        st = os.lstat(old)
    except OSError:
        return
    if not stat.S_ISDIR(st.st_mode):
        return
    try:
        if hasattr(os, "chown") and os.stat(new).st_gid != st.st_gid:
            os.chown(new, -1, st.st_gid)  # before chmod: a chown may clear the setgid bit
    except OSError:
        pass
    try:
        # the owner's own bits stay: the build goes on writing into it (what it carries back)
        os.chmod(new, stat.S_IMODE(st.st_mode) | stat.S_IRWXU)
    except OSError:
        pass
    if st.st_mode & stat.S_ISGID and hasattr(os, "chown"):
        # a shared (setgid) folder: what is inside takes its group, as files made in it would
        for root, dirs, files in os.walk(new):
            for name in dirs + files:
                path = os.path.join(root, name)
                try:
                    if os.lstat(path).st_gid != st.st_gid:
                        os.chown(path, -1, st.st_gid, follow_symlinks=False)
                    if name in dirs:
                        os.chmod(path, stat.S_IMODE(os.lstat(path).st_mode) | stat.S_ISGID)
                except OSError:
                    continue


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically with Linux's renameat2(RENAME_EXCHANGE); False where the
    system cannot."""
    fn = _renameat2()
    if fn is None:
        return False
    import ctypes

    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


_RENAME_NOREPLACE = 1


def _rename_new(src: Path, dst: Path) -> bool:
    """Move ``src`` to ``dst`` unless something is at ``dst`` (False then, nothing moved):
    renameat2(RENAME_NOREPLACE), so that nothing arriving at ``dst`` meanwhile is replaced.
    Where the system cannot, a file is hard-linked then unlinked (the link fails on anything
    there) and a folder renamed after a look (an empty folder arriving between the look and
    the rename would be replaced)."""
    fn = _renameat2()
    if fn is not None:
        import ctypes

        if fn(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), _RENAME_NOREPLACE) == 0:
            return True
        err = ctypes.get_errno()
        if err == errno.EEXIST:
            return False
        if err not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
            raise OSError(err, os.strerror(err), str(dst))
    if os.path.lexists(dst):
        return False
    if src.is_dir() and not src.is_symlink():
        os.rename(src, dst)
        return True
    try:
        os.link(src, dst, follow_symlinks=False)
    except FileExistsError:
        return False
    except OSError:  # a file system without hard links: the look above is all there is
        os.rename(src, dst)
        return True
    src.unlink()
    return True


@functools.lru_cache(maxsize=1)
def _renameat2() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # glibc before 2.28, or another libc without it
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


# -- a compile's outputs --------------------------------------------------------------------------


def install_outputs(work: Path, out_dir: str | Path, *, keep: Callable[[str], bool],
                    drop: Iterable[str], last: Sequence[str] = ()) -> None:
    """Move what the tools left in ``work`` (:func:`aiedsl.builddir.build.compiling`'s folder:
    every name but the files they read, for which ``keep`` is true) into build directory
    ``out_dir``, each file in one rename, replacing aiedsl's own of that name (a folder joins the
    one there: ``logs/`` holds the lowering's logs too); then remove the names in ``drop`` (a
    previous compile's outputs) the tools did not make again. The marker lists what arrives
    before it arrives. The names in ``last`` go in last, in that order, and their old ones
    first: a compile stopped midway leaves none (``cache.json`` says the outputs are whole).

    Run inside :func:`aiedsl.builddir.build.compiling`: under the directory's lock, which a file
    of the user's in the way also refuses (DesignError, nothing moved).
    """
    shown = Path(out_dir)
    out = Path(os.path.realpath(shown))
    staging = work.parent
    with os_errors(shown, rule="output directory", option="-o"):
        marker = read_marker(out) or {"files": []}
        ours = owned_in(out, marker)
        inputs = owned(read_marker(work))
        names = sorted(n for n in os.listdir(work)
                       if n != MARKER and keep(n) and not inputs(_entry(work, n) or n))
        arriving = {rel for n in names for rel in
                    ([f"{n}/", *(f"{n}/{r}" for r in entries(work / n))]
                     if _is_folder(work / n) else [n])}
        _refuse_in_the_way(shown, sorted(rel for rel in (_entry(out, r.rstrip("/"))
                                                          for r in arriving)
                                         if rel is not None and not ours(rel)))
        listed = [e for e in entries(out) if ours(e)]
        write_marker(out, str(marker.get("design", "")), [*listed, *arriving], staging,
                     marker.get("script_outputs", []),
                     {rel: d for rel, d in digests_of(marker).items() if rel not in arriving})
        for name in last:
            if ours(name):
                (out / name).unlink(missing_ok=True)
        for name in [n for n in names if n not in last]:
            _move_in(work / name, out / name)
        for name in drop:
            if name not in names and ours(name):
                (out / name).unlink(missing_ok=True)
        for name in [n for n in last if n in names]:
            _move_in(work / name, out / name)
        relist(out, marker, staging, arriving.__contains__)


def _is_folder(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _move_in(src: Path, dst: Path) -> None:
    """Put ``src`` at ``dst``: a file in one step (what was at ``dst``, aiedsl's, ends up at
    ``src`` or is removed), a folder into the folder there, entry by entry."""
    if not os.path.lexists(dst):
        os.rename(src, dst)
    elif _is_folder(src) and _is_folder(dst):
        for child in sorted(os.listdir(src)):
            _move_in(src / child, dst / child)
    elif not _exchange(src, dst):
        if _is_folder(dst):
            shutil.rmtree(dst)
        elif _is_folder(src):
            dst.unlink()
        os.replace(src, dst)
