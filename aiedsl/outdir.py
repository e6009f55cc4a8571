"""The build directory: what aiedsl owns and how it is replaced.

aiedsl never deletes or moves anything it did not write. Every directory it makes carries a
marker, ``.aiedsl-build.json``, listing every file and folder in it (folders end in ``/``): what
a build wrote, what the tools it ran there left (``--compile``), and what ``aiedsl map`` or
``--trace`` added; and what the build's ``build.sh``, run by hand, writes (``script_outputs``:
the kernels' ``.o``, ``aie.xclbin``, ``insts.bin``, aiecc's ``aie.mlir.prj/``). A build refuses an
output directory holding anything else (and any non-empty directory without a marker), and
refuses the working directory or one of its ancestors, which it could not replace.

A build is replaced whole, never file by file: the new one is written beside the old, in the
staging directory ``<parent>/.<name>.aiedsl-new/build``, the old build's tool outputs are
hard-linked into it (only when the files the tools read are unchanged: outputs made from other
inputs are dropped), and the two are swapped by one ``renameat2(RENAME_EXCHANGE)``. An interrupt
or a crash leaves either the old build or the new one, whole.

The staging directory is also the lock (:mod:`aiedsl.build_lock`): a second build into the same
directory fails cleanly while the first is alive. ``build --compile`` holds it from the write to
the end of the compile (:func:`building`); the tools run in the staging folder, on the files the
build wrote, and their outputs go into the build directory only when they are done
(:func:`compiling`, :func:`install_outputs`), so an interrupted compile changes nothing there.

Example
-------
>>> write_build("build/passthrough", {"aie.mlir": "..."}, design="passthrough")  # doctest: +SKIP
PosixPath('build/passthrough')
"""

from __future__ import annotations

import errno
import functools
import json
import os
import shutil
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any

from aiedsl.build_lock import (
    NEW, OLD, WORK, busy, check_staging, claim, holder, remove_marked, share, staging_path,
)
from aiedsl.errors import DesignError, printable
from aiedsl.files import command, make_dirs, os_errors, replace_file, unmake_dirs
from aiedsl.marker import MARKER, entries, foreign, owned, read_marker
from aiedsl.version import __version__

MAX_NAMED = 5
"""How many foreign files an error names."""

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


# -- the marker -----------------------------------------------------------------------------------


def write_marker(folder: Path, design: str, listed: Iterable[str] | None = None,
                 tmp_dir: Path | None = None, script_outputs: Iterable[str] = ()) -> None:
    """Write ``folder``'s marker: ``listed`` (default: everything in it now), plus itself, and
    ``script_outputs``, what its ``build.sh`` writes (a folder, ending in ``/``, with all in it).

    With ``tmp_dir`` the marker is written there first and renamed into place, so a reader
    never sees half a marker and a killed process leaves no stray file in ``folder``.
    """
    files = sorted(set(entries(folder) if listed is None else listed) | {MARKER})
    data: dict[str, Any] = {"aiedsl": __version__, "design": design, "files": files}
    if script_outputs:
        data["script_outputs"] = sorted(set(script_outputs))
    text = json.dumps(data, indent=2) + "\n"
    if tmp_dir is None:
        _put(folder / MARKER, text)
    else:
        replace_file(folder / MARKER, text, tmp_dir)


def build_dir_of(folder: Path) -> Path | None:
    """The aiedsl build directory ``folder`` is in (itself or an ancestor), if any."""
    for d in (folder, *folder.parents):
        if read_marker(d) is not None:
            return d
    return None


# -- checks before writing ------------------------------------------------------------------------


def check_output_dir(out_dir: str | Path, design: str) -> None:
    """Raise a DesignError unless a build may replace ``out_dir``: it is new, an empty
    directory, or an aiedsl build directory holding only what its marker lists, and it is
    neither the working directory nor one of its ancestors."""
    shown = Path(out_dir)
    real = Path(os.path.realpath(shown))
    _refuse_working_dir(real, shown, design)
    with os_errors(shown, rule="output directory", option="-o", verb="read"):
        _refuse_foreign(real, shown)
        staging = staging_path(real)
        # a live build's, which changes as it is read: claim() says it is busy
        if staging.is_symlink() or not os.path.isdir(staging) \
                or holder(staging, locked=False) is None:
            check_staging(staging, shown)


def _refuse_working_dir(real: Path, shown: Path, design: str) -> None:
    # The build is swapped in by renaming the directory: the directory this process (and the
    # user's shell) is in would be renamed away under them, and its other files with it.
    cwd = Path(os.path.realpath(os.getcwd()))
    if cwd == real or real in cwd.parents:
        what = "the working directory" if cwd == real else "it holds the working directory"
        raise DesignError(
            "output directory", f"cannot build into {printable(shown)} ({what}): a build "
            "replaces its "
            "output directory whole, by renaming it",
            fix=f"build into a directory of its own, e.g. -o build/{design}")


def _refuse_foreign(real: Path, shown: Path, locked: bool = False) -> None:
    """Refuse ``real`` when it holds what aiedsl did not write; ``locked``: this build holds its
    lock, so no other is writing there."""
    if not os.path.lexists(real):
        return
    if not real.is_dir():
        label = printable(shown)
        raise DesignError("output directory", f"{label} is a file, not a directory",
                          fix=f"choose another directory with -o, or move {label} away")
    # Read without the lock, the directory may be changing under another build (swapped,
    # its compile's outputs going in): what then looks foreign, or vanishes as it is read,
    # says it is busy.
    staging = staging_path(real)
    try:
        alien = foreign(real)
    except FileNotFoundError:
        if not locked and os.path.isdir(staging):
            who = holder(staging, locked=False)
            if who is not None:
                raise busy(who, shown, staging) from None
        raise
    if alien:
        if not locked and os.path.isdir(staging):
            who = holder(staging, locked=False)
            if who is not None:
                raise busy(who, shown, staging)
        named = printable(", ".join(alien[:MAX_NAMED]))
        if len(alien) > MAX_NAMED:
            named += f" and {len(alien) - MAX_NAMED} more"
        label = printable(shown)
        fix = f"choose another directory with -o, or move those files out of {label}"
        if read_marker(real) is None and _older_build(real):
            fix = (f"{label} looks like a build from an aiedsl older than the build marker "
                   f"({MARKER}): delete it once ({command(['rm', '-r'], str(shown))}) and build "
                   "again")
        raise DesignError(
            "output directory", f"{label} holds {_count(len(alien), 'file')} aiedsl did not "
            "write, and a build replaces the whole directory",
            limit="a new or empty directory, or a build directory holding only what aiedsl "
                  "wrote", found=named, fix=fix)


def _older_build(folder: Path) -> bool:
    """Did an aiedsl without markers write this directory (its aie.mlir says so)?"""
    try:
        with open(folder / "aie.mlir", encoding="utf-8", errors="replace") as f:
            return "generated by aiedsl" in f.readline()
    except OSError:
        return False


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


# -- writing a build ------------------------------------------------------------------------------


def write_build(out_dir: str | Path, files: dict[str, str], *, design: str,
                executable: Iterable[str] = (),
                tool_input: Callable[[str], bool] | None = None,
                script_outputs: Iterable[str] = ()) -> Path:
    """Replace build directory ``out_dir`` with ``files`` (relative path -> text), atomically.

    Refuses (DesignError, nothing written) a directory holding files aiedsl did not write, the
    working directory and its ancestors, and a directory another build is writing. The previous
    build's tool outputs (xclbin, logs, cache ...) are carried over while they belong to these
    files: ``tool_input`` says which files the tools read, and when one of them differs from the
    previous build's (or is new or gone), nothing of the previous build is carried. ``kernels/``
    is never carried. ``script_outputs`` go into the marker (see :func:`owned`). Returns
    ``out_dir`` as given.
    """
    with building(out_dir, files, design=design, executable=executable, tool_input=tool_input,
                  script_outputs=script_outputs) as shown:
        return shown


@contextmanager
def building(out_dir: str | Path, files: dict[str, str], *, design: str,
             executable: Iterable[str] = (),
             tool_input: Callable[[str], bool] | None = None,
             script_outputs: Iterable[str] = ()) -> Iterator[Path]:
    """:func:`write_build`, whose lock is held on over the block that follows (yielding
    ``out_dir`` as given): what the block does in the directory (place the lowering's outputs,
    compile) meets this build, never one that another build swapped in meanwhile."""
    shown = Path(out_dir)
    out = Path(os.path.realpath(shown))  # a symlinked output: replace what it points at
    check_output_dir(shown, design)  # before anything is touched
    made: list[Path] = []
    swapped = False
    try:
        with os_errors(shown, rule="output directory", option="-o"):
            made = make_dirs(out.parent)
        with _locked(out, shown) as staging:
            with os_errors(shown, rule="output directory", option="-o"):
                # again: now no other aiedsl build can change it
                _refuse_foreign(out, shown, locked=True)
                carried = _carried(out, set(files)) \
                    if out.is_dir() and _same_inputs(out, files, tool_input) else []
                new = staging / NEW
                new.mkdir()
                # First, what is to be written: a killed build's staged build is known for
                # aiedsl's by its marker (build_lock.check_staging), whatever it got to write.
                write_marker(new, design, [*files, *_folders_of(files), *carried], staging,
                             script_outputs)
                for rel, text in files.items():
                    path = new / rel
                    path.parent.mkdir(parents=True, exist_ok=True)
                    _put(path, text)
                for rel in executable:
                    os.chmod(new / rel, 0o755)
                _carry(out, new, carried)
                write_marker(new, design, None, staging, script_outputs)  # what is there
                _swap(new, out)
                swapped = True
                for name in (NEW, OLD):  # the old build, now in the staging folder
                    if os.path.isdir(staging / name):
                        remove_marked(staging / name, strict=False)
            yield shown
    except BaseException:
        if not swapped:
            unmake_dirs(made)  # a failed build leaves nothing, not even the folders above it
        raise


@contextmanager
def held(out_dir: str | Path) -> Iterator[None]:
    """Hold build directory ``out_dir``'s lock over a block (a compile, then loading what it
    made): no other build replaces the directory meanwhile. Claims inside share it."""
    shown = Path(out_dir)
    with _locked(Path(os.path.realpath(shown)), shown):
        yield


@contextmanager
def sharing(out_dir: str | Path) -> Iterator[None]:
    """Claims of build directory ``out_dir`` in this thread, over the block, share the lock
    another thread of this process holds on it (:func:`aiedsl.build_lock.share`)."""
    with share(Path(os.path.realpath(Path(out_dir)))):
        yield


@contextmanager
def _locked(out: Path, shown: Path) -> Iterator[Path]:
    """:func:`aiedsl.build_lock.claim`: a file-system error taking or letting go of the lock is
    the output directory's (:func:`aiedsl.files.os_error`), the block's own stay as they are."""
    body_error: OSError | None = None
    with os_errors(shown, rule="output directory", option="-o"):
        with claim(out, shown) as staging:
            try:
                yield staging
            except OSError as e:  # the block's (a tool's): not the output directory's to explain
                body_error = e
    if body_error is not None:
        raise body_error


def _folders_of(files: Iterable[str]) -> set[str]:
    """The folders that hold ``files`` (relative paths), as entries (``kernels/``)."""
    return {f"{p}/" for rel in files for p in PurePosixPath(rel).parents if str(p) != "."}


def _put(path: Path, text: str) -> None:
    """Write one file (a seam for tests that interrupt a build midway)."""
    path.write_text(text)


def _same_inputs(old: Path, files: dict[str, str], tool_input: Callable[[str], bool] | None
                 ) -> bool:
    """Do the files the tools read (``tool_input``) in build ``old`` hold exactly ``files``?
    Their outputs there (an xclbin, instructions) were made from them: carried over beside
    other inputs, they would pass for the new build's."""
    return tool_input is None or not _changed_inputs(old, files, tool_input)


def _changed_inputs(old: Path, files: dict[str, str], tool_input: Callable[[str], bool]
                    ) -> list[str]:
    """The files the tools read (``tool_input``) that build ``old`` does not hold as ``files``
    has them: different, missing, or there and not in ``files``."""
    want = {rel: text for rel, text in files.items() if tool_input(rel)}
    have = {rel for rel in entries(old) if not rel.endswith("/") and tool_input(rel)}
    changed = sorted(have - set(want))
    for rel, text in sorted(want.items()):
        try:
            if (old / rel).read_text() != text:  # read as _put wrote it
                changed.append(rel)
        except OSError:
            changed.append(rel)
    return sorted(changed)


def _carried(old: Path, generated: set[str]) -> list[str]:
    """What of the previous build ``old`` a new one carries: what the toolchain made there
    (xclbin, logs, cache), everything the new generation does not write itself, except
    ``kernels/`` (regenerated)."""
    return [rel for rel in entries(old) if rel != MARKER and rel not in generated
            and not rel.startswith("kernels/")]


def _carry(old: Path, new: Path, carried: list[str]) -> None:
    """Link ``carried`` (:func:`_carried`) from ``old`` into ``new``.

    Hard links, not moves: the old build stays whole until the swap.
    """
    for rel in carried:
        src, dst = old / rel, new / rel
        if os.path.lexists(dst):
            continue  # the new generation's own file wins
        if rel.endswith("/"):
            dst.mkdir(parents=True)
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        _link(src, dst)


def _link(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError:  # a file system without hard links
        if src.is_symlink():
            os.symlink(os.readlink(src), dst)
        else:
            shutil.copy2(src, dst)


def _swap(new: Path, out: Path) -> None:
    """Put ``new`` at ``out`` in one step; the old build (if any) ends up inside the staging
    folder, which the caller removes."""
    if not os.path.lexists(out):
        os.rename(new, out)
        return
    if _exchange(new, out):
        return
    # No renameat2 (not Linux, old glibc, or a file system without RENAME_EXCHANGE): two
    # renames. Between them ``out`` does not exist for a moment: a build interrupted there puts
    # the old build back as it leaves (_release); one killed there leaves it in the staging
    # folder, and the next build puts it back (_remove_leftover).
    os.rename(out, new.parent / OLD)
    os.rename(new, out)


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


# -- after a build: the tools' outputs ------------------------------------------


@contextmanager
def tool_outputs(out_dir: str | Path) -> Iterator[None]:
    """Run tools in build directory ``out_dir``: hold its lock meanwhile and, however they end,
    list in its marker what they made (aiedsl ran them there, so their outputs are its own).

    What was already in the directory and not listed stays unlisted. A directory without a
    marker is not aiedsl's to claim: the tools run without the lock or a marker.
    """
    shown = Path(out_dir)
    out = Path(os.path.realpath(shown))
    if read_marker(out) is None:
        yield
        return
    with _locked(out, shown) as staging:
        marker = read_marker(out) or {"files": []}  # again, under the lock
        before = set(entries(out))
        try:
            yield
        finally:
            with os_errors(shown, rule="output directory", option="-o"):
                relist(out, marker, staging, lambda e: e not in before)


@contextmanager
def compiling(out_dir: str | Path, files: dict[str, str], *, design: str,
              tool_input: Callable[[str], bool], writes: Iterable[str]) -> Iterator[Path]:
    """Hold build directory ``out_dir``'s lock over a compile of ``files`` and yield the folder
    to run the tools in: ``compile/`` in the staging folder, holding the files they read
    (``tool_input``). Nothing reaches the build directory until :func:`install_outputs` moves
    it there; an interrupted compile leaves the directory as it was, and its folder goes with
    the lock (a killed one's with the next build).

    Refuses (DesignError, before any tool runs) a directory that no longer holds this build
    (another build replaced it since it was written: the tools would compile other files than
    ``files``, which the compile's manifest describes), and one where a name in ``writes`` (the
    compile's own outputs: ``logs``, ``manifest.json``) is not aiedsl's.
    """
    shown = Path(out_dir)
    out = Path(os.path.realpath(shown))
    with _locked(out, shown) as staging:
        work = staging / WORK
        with os_errors(shown, rule="output directory", option="-o"):
            _refuse_other_build(out, shown, files, design, tool_input, writes)
            inputs = {rel: text for rel, text in files.items() if tool_input(rel)}
            work.mkdir()
            # first: a killed compile's folder is known for aiedsl's by it (check_staging)
            write_marker(work, design, [*inputs, *_folders_of(inputs)], staging)
            for rel, text in inputs.items():
                (work / rel).parent.mkdir(parents=True, exist_ok=True)
                (work / rel).write_text(text)
        try:
            yield work
        finally:
            remove_marked(work, strict=False)


def _refuse_other_build(out: Path, shown: Path, files: dict[str, str], design: str,
                        tool_input: Callable[[str], bool], writes: Iterable[str]) -> None:
    """Refuse a compile of ``files`` in ``out`` (:func:`compiling`)."""
    label = printable(shown)
    marker = read_marker(out) if out.is_dir() else None
    changed = [f"no {MARKER}"] if marker is None else _changed_inputs(out, files, tool_input)
    if changed:
        raise DesignError(
            "output directory", f"{label} no longer holds the build of {design} to be "
            "compiled: another build replaced it since", found=printable(", ".join(changed)),
            fix="build and compile again (aiedsl build --compile holds the directory from the "
                "build to the end of the compile)")
    ours = owned(marker)
    _refuse_in_the_way(shown, [rel for rel in (_entry(out, name) for name in writes)
                               if rel is not None and not ours(rel)])


def _refuse_in_the_way(shown: Path, alien: list[str]) -> None:
    """Refuse a compile whose outputs would replace ``alien``, entries of build directory
    ``shown`` aiedsl did not write."""
    if alien:
        label = printable(shown)
        raise DesignError(
            "output directory", f"{label} holds what aiedsl did not write where the compile "
            "puts its own", found=printable(", ".join(alien)),
            fix=f"move {'it' if len(alien) == 1 else 'them'} out of {label}, and compile again")


def _entry(folder: Path, name: str) -> str | None:
    """``name`` in ``folder`` as an entry (``logs/`` for a folder), None when it is not there."""
    path = folder / name
    if not os.path.lexists(path):
        return None
    return f"{name}/" if path.is_dir() and not path.is_symlink() else name


def install_outputs(work: Path, out_dir: str | Path, *, keep: Callable[[str], bool],
                    drop: Iterable[str], last: Sequence[str] = ()) -> None:
    """Move what the tools left in ``work`` (:func:`compiling`'s folder: every name but the
    files they read, for which ``keep`` is true) into build directory ``out_dir``, each file in
    one rename, replacing aiedsl's own of that name (a folder joins the one there: ``logs/``
    holds the lowering's logs too); then remove the names in ``drop`` (a previous compile's
    outputs) the tools did not make again. The marker lists what arrives before it arrives.
    The names in ``last`` go in last, in that order, and their old ones first: a compile
    stopped midway leaves none (``cache.json`` says the outputs are whole).

    Run inside :func:`compiling`: under the directory's lock, which a file of the user's in the
    way also refuses (DesignError, nothing moved).
    """
    shown = Path(out_dir)
    out = Path(os.path.realpath(shown))
    staging = work.parent
    with os_errors(shown, rule="output directory", option="-o"):
        marker = read_marker(out) or {"files": []}
        ours = owned(marker)
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
                     marker.get("script_outputs", []))
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


def relist(folder: Path, marker: dict[str, Any], tmp_dir: Path,
            new: Callable[[str], bool]) -> None:
    """Rewrite ``folder``'s marker: what is aiedsl's (:func:`owned`) and still there, and what
    ``new`` says aiedsl added since; the rest stays unlisted (foreign)."""
    ours = owned(marker)
    try:
        now = entries(folder)
    except OSError:  # the directory went away meanwhile: nothing to list
        return
    write_marker(folder, str(marker.get("design", "")), [e for e in now if ours(e) or new(e)],
                 tmp_dir, marker.get("script_outputs", []))
