"""The lock of a build directory: its staging folder.

A build of ``<parent>/<name>`` is staged in the hidden sibling ``<parent>/.<name>.aiedsl-new``
(on the same file system, so the finished build can be swapped in by a rename); ``--compile``
runs its tools there too. The folder is also the lock: it is made with ``os.mkdir``, which fails
when it exists, and holds the pid (and host) of the build writing, in a file the build holds an
``flock`` on for as long as it lives (the kernel lets go of it when the process dies, however it
dies). A second build into the same directory fails cleanly while the first is alive; a staging
folder whose pid file is not locked is a leftover (its pid alone cannot say: after a killed
build, its pid may be another process's), removed by the next build, but only when it holds
nothing aiedsl never puts there (a folder of that name may be the user's): each folder aiedsl
makes in it carries a marker first, and keeps it while anything of it is left. A staging folder
that cannot be removed when its build is done (a file in the old build that cannot be deleted)
stays so, for the next build to remove, and a warning on standard error says so
(:func:`_release`). Where there is no ``flock`` (Windows, a file system without locks) the pid
file says so, and only its pid is asked.
The moments the folder and its pid file appear or go are serialised by ``flock`` on the parent,
so two builds never both take a leftover for theirs.

A process holds a directory's lock once: a claim inside another of the same thread (a build
that goes on to compile, under one lock) shares it, and so does a claim in another thread of the
process made inside :func:`share` (``art.compile()`` of an ``aiedsl.api.building`` block, run in
a thread pool); the last of them to leave lets it go. Any other claim of it in this process
(an unrelated build in another thread) is refused as busy, saying the holder is this process.

>>> with claim(Path("/abs/build/passthrough"), "build/passthrough") as staging:  # doctest: +SKIP
...     (staging / "build").mkdir()
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from aiedsl.errors import BUSY_EXIT, DesignError, display_path, printable
from aiedsl.files import TMP_SUFFIX, command, remove_tree
from aiedsl.builddir.marker import foreign, read_marker
from aiedsl.builddir.removal import remove_build, remove_marked

STAGING_SUFFIX = ".aiedsl-new"
STALE_SECONDS = 60.0
"""A staging directory without a pid file and older than this is a killed build's leftover."""
NEW = "build"
"""In the staging directory: the new build, until the swap."""
OLD = "old"
"""In the staging directory: the old build, moved aside while the new one goes in (only where
``renameat2`` cannot exchange them)."""
WORK = "compile"
"""In the staging directory: where ``--compile`` runs the tools, until their outputs go in."""
_PID = "pid"
"""In the staging directory: ``{"pid": ..., "host": ..., "flock": ...}`` of the build writing;
``flock`` true when that build holds an flock on the file for its whole life."""
_local = threading.local()  # .dirs: build directories this thread holds; .shared: may share


class _Claim:
    """A build directory this process holds: its staging folder, how many claims use it, the
    thread that took it (named when another build of the process is refused), the directory
    as the user named it (in a warning that its staging folder stayed), and the open pid file
    whose flock says the build is alive (None without flock)."""

    def __init__(self, staging: Path, thread: str, shown: str | Path, pid_fd: int | None
                 ) -> None:
        self.staging, self.users, self.thread, self.shown = staging, 1, thread, shown
        self.pid_fd = pid_fd


_claims: dict[Path, _Claim] = {}  # by resolved build directory: what this process holds
_releasing: dict[Path, str] = {}  # what it is letting go of (its folder not yet gone): thread
_claims_lock = threading.Lock()


def _thread_set(name: str) -> set[Path]:
    """This thread's set ``name`` (``dirs`` or ``shared``)."""
    found: set[Path] = _local.__dict__.setdefault(name, set())
    return found


@contextmanager
def share(out: Path) -> Iterator[None]:
    """Let claims of build directory ``out`` (a resolved path) in this thread, over the block,
    share the lock this process already holds on it from another thread (a compile inside an
    ``aiedsl.api.building`` block, run in a thread pool). Without such a lock held, a claim
    takes it as usual."""
    shared = _thread_set("shared")
    if out in shared:
        yield
        return
    shared.add(out)
    try:
        yield
    finally:
        shared.discard(out)


def staging_path(out: Path) -> Path:
    """Where a build of ``out`` is staged: a hidden sibling, on the same file system."""
    return out.parent / f".{out.name}{STAGING_SUFFIX}"


@contextmanager
def claim(out: Path, shown: str | Path) -> Iterator[Path]:
    """Hold the lock of build directory ``out`` (a resolved path) and yield its staging folder.

    Raises a DesignError when another live aiedsl build holds it; removes a dead build's
    leftover first. On leaving, however that happens, the staging folder and all in it go.
    Inside a claim of ``out`` by this thread, yields that claim's folder and leaves it held.
    """
    mine = _thread_set("dirs")
    with _claims_lock:
        held = _claims.get(out)
        if held is not None and (out in mine or out in _thread_set("shared")):
            held.users += 1
        elif held is not None:
            raise busy_here(held.thread, shown)
    if held is not None:  # shared: the last claim to leave lets the lock go
        added = out not in mine
        mine.add(out)
        try:
            yield held.staging
        finally:
            if added:
                mine.discard(out)
            _leave(out)
        return
    staging = staging_path(out)
    with _parent_lock(out.parent) as locked:
        try:
            os.mkdir(staging)
        except FileExistsError:
            who = holder(staging, locked)
            with _claims_lock:
                leaving = _releasing.get(out)
            if leaving is not None:  # this process's, letting go: not a leftover
                raise busy_here(leaving, shown) from None
            if who is not None:
                raise busy(who, shown, staging) from None
            check_staging(staging, shown)  # not a live build's: a leftover, or the user's?
            _remove_leftover(staging, out)
            os.mkdir(staging)
        try:
            pid_fd = _write_pid(staging)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        with _claims_lock:  # under the parent lock: a thread finding the folder finds this
            _claims[out] = _Claim(staging, threading.current_thread().name, shown, pid_fd)
    mine.add(out)
    try:
        yield staging
    finally:
        mine.discard(out)
        _leave(out)


def _write_pid(staging: Path) -> int | None:
    """Write ``staging``'s pid file, and return it open with an exclusive flock on it, which the
    build keeps until it lets go of the lock (None where flock is not to be had: the file then
    says so, and only its pid tells a live build from a killed one's leftover).

    The file is written and locked under a temporary name, then renamed into place: a pid file
    of this build is never seen unlocked while the build lives.
    """
    tmp = staging / f".{_PID}{TMP_SUFFIX}"
    # O_EXCL: the folder was just made, by this build; anything there already is not its own
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        locked = _flock(fd)
        os.write(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                 "flock": locked}).encode())
        os.replace(tmp, staging / _PID)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    if not locked:
        os.close(fd)
        return None
    return fd


def _flock(fd: int, probe: bool = False) -> bool | None:
    """Take an flock on open file ``fd`` without waiting: exclusive, or shared to ``probe``
    whether anyone holds it exclusively. True when taken, False when another holds it, None
    where flock is not available (no fcntl, a file system without locks)."""
    try:
        import fcntl
    except ImportError:
        return None
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if probe else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        return None
    return True


def _leave(out: Path) -> None:
    """One claim of ``out`` ends; the last lets the lock go."""
    with _claims_lock:
        held = _claims[out]
        held.users -= 1
        if held.users:
            return
        del _claims[out]
        _releasing[out] = held.thread
    try:
        _release(held.staging, out, held.shown, held.pid_fd)
    finally:
        with _claims_lock:
            del _releasing[out]


class DirectoryBusy(DesignError):
    """Another live build holds the build directory: exit code :data:`~aiedsl.errors.BUSY_EXIT`,
    as the same command may succeed once it is done."""

    exit_code = BUSY_EXIT


def busy_here(thread: str, shown: str | Path) -> DesignError:
    """The error for a build directory another build of this process (in thread ``thread``)
    holds: not a leftover, so not to be deleted. Exit code :data:`~aiedsl.errors.BUSY_EXIT`."""
    return DirectoryBusy(
        "output directory", f"another aiedsl build in this process (pid {os.getpid()}, thread "
        f"{printable(thread)}) is writing {printable(shown)}",
        fix="try again when it is done (it lets go of the directory when it ends); to compile a "
            "build inside `with aiedsl.api.building(...) as art:` from another thread, call "
            "art.compile(), which shares the block's lock")


def check_staging(staging: Path, shown: str | Path) -> None:
    """Raise a DesignError when ``staging`` holds what aiedsl never puts in a staging folder,
    or is not a folder: a folder of the name with anything else is not a killed build's
    leftover, and is not aiedsl's to delete (nor, ``old/``, to move back).

    aiedsl puts there its pid, temporary files, and three folders, each empty or marked first:
    ``build/`` and ``old/``, builds holding only what their markers list, and ``compile/``,
    where the tools ran (what they wrote there is theirs).
    """
    if not os.path.lexists(staging):
        return
    if staging.is_symlink() or not staging.is_dir():
        found = ["a symbolic link" if staging.is_symlink() else "a file"]
    else:
        found = []
        with os.scandir(staging) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    found += (f"{e.name}/{rel}" for rel in _not_aiedsls(Path(e.path)))
                elif e.name != _PID and not e.name.endswith(TMP_SUFFIX):
                    found.append(e.name)
    if found:
        where, label = printable(display_path(str(staging))), printable(shown)
        raise DesignError(
            "output directory", f"{where} is in the way of {label}: aiedsl stages a build of "
            f"{label} in a folder of that name, and this one holds what aiedsl never puts there",
            found=printable(", ".join(sorted(found))),
            fix=f"move {where} out of the way (aiedsl leaves it alone: it may be yours), or "
                "choose another directory with -o")


def _not_aiedsls(folder: Path) -> list[str]:
    """What in ``folder``, a folder in a staging folder, shows it is not aiedsl's: ``[""]`` for
    a folder aiedsl never makes there, else the entries its marker does not own."""
    if folder.name not in (NEW, OLD, WORK):
        return [""]
    if not any(folder.iterdir()):
        return []  # made, and killed before its marker
    if folder.name == WORK and read_marker(folder) is not None:
        return []
    return foreign(folder)


def busy(who: str, shown: str | Path, staging: Path) -> DesignError:
    """The error for a build directory another live build (``who``: ``"pid N"`` or ``""``)
    holds. Exit code :data:`~aiedsl.errors.BUSY_EXIT`: trying again later may succeed."""
    return DirectoryBusy(
        "output directory", "another aiedsl build" + (f" ({printable(who)})" if who else "")
        + f" is writing {printable(shown)}",
        fix=f"try again when it is done (if no aiedsl is running, delete "
            f"{printable(display_path(str(staging)))})")


@contextmanager
def _parent_lock(parent: Path) -> Iterator[bool]:
    """Serialise, among aiedsl processes, the moments a staging folder appears or goes, and
    its pid file with it; yields whether it could (no flock on Windows or on a file system
    without locks).

    Without it two builds could both judge a leftover stale, and the second could remove the
    staging folder the first just made. flock is released by the kernel when a process dies, so
    it never outlives a killed build. Where there is no flock the race is left open.
    """
    try:
        import fcntl
    except ImportError:
        yield False
        return
    fd = os.open(parent, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:  # a file system without locks (some NFS setups)
            locked = False
        else:
            locked = True
        yield locked
    finally:
        os.close(fd)  # releases the lock


def holder(staging: Path, locked: bool) -> str | None:
    """Who holds ``staging``: ``"pid N"`` (``""`` when unknown) while it is alive, None when the
    build that made it is dead and the folder is a leftover.

    ``locked``: the caller holds the parent lock, under which a live build always has its pid
    file in place; a staging folder without one is then a killed build's, whatever its age.

    A pid file its build locked (``"flock": true``) is a live build's while the lock is held,
    whatever process its pid now names (a killed build's pid may since be another's); without
    that, or where the lock cannot be asked, the pid must name a live process.
    """
    free: bool | None = None  # is the pid file's flock free (None: not known)
    try:
        with open(staging / _PID, encoding="utf-8") as f:
            info = json.loads(f.read())
            pid, host = int(info["pid"]), str(info["host"])
            if info.get("flock") is True and host == socket.gethostname():
                free = _lock_free(f.fileno(), pid, staging)
    except FileNotFoundError:
        if not staging.exists():
            return None  # finished meanwhile
        pid, host = -1, ""
    except (OSError, ValueError, KeyError, TypeError):
        pid, host = -1, ""
    if pid < 0:
        # Killed between mkdir and writing its pid, or between removing them. Without the
        # parent lock a live build may be in that window: only an old folder is a leftover.
        if locked:
            return None
        try:
            age = time.time() - staging.stat().st_mtime
        except FileNotFoundError:
            return None
        return None if age > STALE_SECONDS else ""
    if host != socket.gethostname():
        return f"pid {pid} on {host}"  # a shared file system: we cannot tell, so wait
    if free is not None:
        return None if free else f"pid {pid}"
    return f"pid {pid}" if _alive(pid) else None


def _lock_free(fd: int, pid: int, staging: Path) -> bool | None:
    """Is the flock on open pid file ``fd`` (naming ``pid``) of staging folder ``staging`` free:
    True, the build that locked it is gone; False, it lives; None, flock cannot tell."""
    if pid == os.getpid():
        # This process's own pid: it is alive if this process holds the folder. Asked by flock,
        # a file system that emulates flock with POSIX locks (NFS) would answer "free" to the
        # process holding it, and closing the probe would drop that process's lock.
        with _claims_lock:
            mine = {c.staging for c in _claims.values()} | {staging_path(o) for o in _releasing}
        return staging not in mine
    return _flock(fd, probe=True)  # taken: let go of as the caller closes the file


def _alive(pid: int) -> bool:
    if os.name == "nt":
        return True  # os.kill(pid, 0) would terminate the process there
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def _remove_leftover(staging: Path, out: Path) -> None:
    """Remove a killed build's staging folder; it is aiedsl's own."""
    _restore(staging, out)
    for child in staging.iterdir():
        if child.is_dir() and not child.is_symlink():
            remove_marked(child)
    remove_tree(staging)


def _restore(staging: Path, out: Path) -> None:
    """When a build stopped in the fallback swap's window (old build moved aside, the new one
    not yet in), put the old build back."""
    old = staging / OLD
    if not os.path.lexists(out) and old.is_dir() and read_marker(old) is not None:
        os.rename(old, out)


def _release(staging: Path, out: Path, shown: str | Path, pid_fd: int | None) -> None:
    """Let go of the lock of ``out``: remove its staging folder and all aiedsl put in it. What
    cannot be removed stays, with its markers, for the next build to remove as a killed build's
    leftover (:func:`check_staging`), and a warning says so (:func:`_left_behind`). ``pid_fd``,
    the open pid file whose flock says the build lives, is closed last, however this ends."""
    try:
        _remove_staging(staging, out, shown)
    finally:
        if pid_fd is not None:
            os.close(pid_fd)  # lets go of its flock


def _remove_staging(staging: Path, out: Path, shown: str | Path) -> None:
    """:func:`_release`'s work: the staging folder goes, its pid file with it, under the
    parent lock."""
    _restore(staging, out)
    # The long part (the old build's files) goes first, while our pid still says "busy"; the
    # pid file and the folder itself go under the parent lock, so another build never sees a
    # folder without a pid that it could take for a leftover and remove while we do.
    failed: OSError | None = None
    kept: list[str] = []  # what a build there holds that aiedsl did not write
    for child in staging.iterdir() if staging.is_dir() else ():
        if child.name != _PID:
            if child.is_dir() and not child.is_symlink() and child.name in (NEW, OLD):
                # a build: what its marker does not own stays
                held, e = remove_build(child)
                kept += (f"{child.name}/{rel}" for rel in held)
                failed = failed or e
            elif child.is_dir() and not child.is_symlink():
                e = remove_marked(child, strict=False)  # each child, whatever came before
                failed = failed or e
            else:
                try:
                    child.unlink(missing_ok=True)
                except OSError as e:
                    failed = failed or e
    with _parent_lock(staging.parent):
        (staging / _PID).unlink(missing_ok=True)
        try:
            os.rmdir(staging)
        except FileNotFoundError:
            return
        except OSError as e:  # something in it resisted: without a pid, a leftover
            left = failed or e
        else:
            return
    warn(_kept_behind(kept, staging, shown) if kept else _left_behind(left, staging, shown))


def _left_behind(e: OSError, staging: Path, shown: str | Path) -> str:
    """The warning for staging folder ``staging`` of build directory ``shown``, which stayed
    because of ``e``: a warning, for what the command did stands (a build it swapped in stays),
    and the next build removes what is left, all of it aiedsl's, once it can."""
    where = printable(display_path(str(staging)))
    failed = Path(os.fsdecode(e.filename)) if e.filename is not None else staging
    at = printable(display_path(str(failed)))
    reason = (e.strerror or type(e).__name__) + ("" if at == where else f" (at {at})")
    label = printable(shown)
    fix = f"the next build of {label} removes it: it holds only what aiedsl wrote"
    if e.errno == errno.EPERM and os.access(failed.parent, os.W_OK):
        # a writable folder whose file may not go: an attribute of the file's (chattr +i)
        shown_file = display_path(str(failed))
        fix = f"let {printable(shown_file)} be removed ({command(['lsattr'], shown_file)} shows " \
              f"an immutable or append-only file, which chattr -i or -a clears), and the next " \
              f"build of {label} removes it: it holds only what aiedsl wrote"
    elif e.errno in (errno.EACCES, errno.EPERM):
        folder = display_path(str(failed if os.path.isdir(failed) else failed.parent))
        fix = f"make {printable(folder)} writable for you ({command(['ls', '-ld'], folder)} " \
              f"shows who may write it), and the next build of {label} removes it: it holds " \
              "only what aiedsl wrote"
    return (f"warning [output directory]: could not remove {where}, aiedsl's staging folder of "
            f"{label}: {reason}\n  fix: {fix}\n")


def _kept_behind(kept: list[str], staging: Path, shown: str | Path) -> str:
    """The warning for staging folder ``staging`` of build directory ``shown``, which stayed
    because a build in it holds ``kept``, entries aiedsl did not write (put in the build
    directory while a build replaced it): not deleted, and the next build refuses to start
    until they are moved out (:func:`check_staging`)."""
    where = printable(display_path(str(staging)))
    named = printable(", ".join(kept))
    return (f"warning [output directory]: kept {where}, aiedsl's staging folder of "
            f"{printable(shown)}: it holds what aiedsl did not write ({named})\n"
            f"  fix: move {'it' if len(kept) == 1 else 'them'} out of {where}, then delete "
            f"{where} (the next build of {printable(shown)} refuses to start while "
            f"{'it is' if len(kept) == 1 else 'they are'} there)\n")


def warn(text: str) -> None:
    """Write warning ``text`` to standard error; a reader that has gone changes nothing."""
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, AttributeError):  # AttributeError: no standard error at all (None)
        pass
