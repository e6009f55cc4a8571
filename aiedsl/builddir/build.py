"""Writing a build directory, and holding it while tools run on what was written.

A build goes in whole (:mod:`aiedsl.builddir.swap`), after the checks of
:mod:`aiedsl.builddir.refuse`, under the build directory's lock: its staging directory
(:mod:`aiedsl.builddir.lock`), so a second build into the same directory fails cleanly while the
first is alive. ``build --compile`` holds it from the write to the end of the compile
(:func:`building`); the tools run in the staging folder, on the files the build wrote, and their
outputs go into the build directory only when they are done (:func:`compiling`,
:func:`aiedsl.builddir.swap.install_outputs`), so an interrupted compile changes nothing there.
Tools run in the build directory itself (:func:`tool_outputs`) hold the lock too, and what they
make is listed in its marker.

Example
-------
>>> write_build("build/passthrough", {"aie.mlir": "..."}, design="passthrough")  # doctest: +SKIP
PosixPath('build/passthrough')
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from aiedsl.builddir.lock import NEW, OLD, WORK, claim, share, warn
from aiedsl.builddir.removal import remove_build, remove_marked
from aiedsl.builddir.marker import (
    digest, digests_of, entries, owned_in, read_marker, relist, write_marker,
)
from aiedsl.builddir.refuse import (
    OlderBuild, _changed_inputs, _refuse_edited, _refuse_foreign, _refuse_other_build,
    check_output_dir,
)
from aiedsl.builddir.swap import _carried, _carry, _rename_new, _same_inputs, _swap
from aiedsl.errors import printable
from aiedsl.files import make_dirs, os_errors, unmake_dirs
from aiedsl.text import encoded


# -- writing a build ------------------------------------------------------------------------------


def write_build(out_dir: str | Path, files: dict[str, str], *, design: str,
                executable: Iterable[str] = (),
                tool_input: Callable[[str], bool] | None = None,
                script_outputs: Iterable[str] = (),
                older_build: OlderBuild | None = None) -> Path:
    """Replace build directory ``out_dir`` with ``files`` (relative path -> text), atomically.

    Refuses (DesignError, nothing written) a directory holding files aiedsl did not write, the
    working directory and its ancestors, and a directory another build is writing. The previous
    build's tool outputs (xclbin, logs, cache ...) are carried over while they belong to these
    files: ``tool_input`` says which files the tools read, and when one of them differs from the
    previous build's (or is new or gone), nothing of the previous build is carried. ``kernels/``
    is never carried. ``script_outputs`` go into the marker (see
    :func:`aiedsl.builddir.marker.owned`). ``older_build`` tells a build of an aiedsl older than
    the marker, which a refusal may advise deleting (:data:`~aiedsl.builddir.refuse.OlderBuild`).
    Returns ``out_dir`` as given.
    """
    with building(out_dir, files, design=design, executable=executable, tool_input=tool_input,
                  script_outputs=script_outputs, older_build=older_build) as shown:
        return shown


@contextmanager
def building(out_dir: str | Path, files: dict[str, str], *, design: str,
             executable: Iterable[str] = (),
             tool_input: Callable[[str], bool] | None = None,
             script_outputs: Iterable[str] = (),
             older_build: OlderBuild | None = None) -> Iterator[Path]:
    """:func:`write_build`, whose lock is held on over the block that follows (yielding
    ``out_dir`` as given): what the block does in the directory (place the lowering's outputs,
    compile) meets this build, never one that another build swapped in meanwhile."""
    shown = Path(out_dir)
    out = Path(os.path.realpath(shown))  # a symlinked output: replace what it points at
    check_output_dir(shown, design, older_build)  # before anything is touched
    made: list[Path] = []
    swapped = False
    try:
        with os_errors(shown, rule="output directory", option="-o"):
            made = make_dirs(out.parent)
        with _locked(out, shown) as staging:
            with os_errors(shown, rule="output directory", option="-o"):
                # What the old build holds, all aiedsl's if the check after says so (read
                # first: what comes after the read is either refused by the check or not in
                # it): what it holds after the swap and not now, someone put there meanwhile
                before = entries(out) if out.is_dir() and not out.is_symlink() else []
                # again: now no other aiedsl build can change it
                _refuse_foreign(out, shown, locked=True, older_build=older_build)
                _refuse_edited(out, shown)
                # a marker of an aiedsl before digests: an edit there could not be told
                old_marker = read_marker(out) if out.is_dir() else None
                undigested = old_marker is not None and "digests" not in old_marker
                same = out.is_dir() and _same_inputs(out, files, tool_input)
                carried = _carried(out, set(files)) if same else []
                # the previous build's tool outputs, made from other inputs: not carried
                dropped = _carried(out, set(files)) if out.is_dir() and not same else []
                changed = _changed_inputs(out, files, tool_input) \
                    if dropped and tool_input is not None else []
                new = staging / NEW
                new.mkdir()
                # First, what is to be written: a killed build's staged build is known for
                # aiedsl's by its marker (lock.check_staging), whatever it got to write.
                digests = {rel: digest(encoded(text)) for rel, text in files.items()}
                # what is carried over (a compile's outputs, checked unedited just above)
                # keeps the digest it had
                digests.update({rel: d for rel, d in digests_of(read_marker(out)).items()
                                if rel in carried and rel not in digests})
                write_marker(new, design, [*files, *_folders_of(files), *carried], staging,
                             script_outputs, digests)
                for rel, text in files.items():
                    path = new / rel
                    path.parent.mkdir(parents=True, exist_ok=True)
                    _put(path, text)
                for rel in executable:
                    _executable(new / rel)
                _carry(out, new, carried)
                write_marker(new, design, None, staging, script_outputs,  # what is there
                             digests)
                _swap(new, out)
                swapped = True
                for name in (NEW, OLD):  # the old build, now in the staging folder
                    if os.path.isdir(staging / name):
                        _clear_old(staging / name, before, out, shown, staging)
            yield shown
            # after the block: what a compile in it made again is not gone
            gone = [rel for rel in dropped if not os.path.lexists(out / rel)]
            if gone:
                warn(_dropped(gone, changed, shown))
            if undigested:
                warn(_undigested(shown))
    except BaseException:
        if not swapped:
            unmake_dirs(made)  # a failed build leaves nothing, not even the folders above it
        raise


def _clear_old(old: Path, before: list[str], out: Path, shown: Path, staging: Path) -> None:
    """Remove the old build, swapped out into the staging folder as ``old``, keeping what
    aiedsl did not write: only ``before`` is aiedsl's, what the directory held when the build
    took its lock (the marker, build.sh's record and the lock's check said so). Anything else
    in ``old`` came while the build wrote (a file saved into the directory, a shell there
    following it into the staging folder): it is moved back into the build directory, now the
    new build, where it was, and a warning names it; the new build stays in, replaced in one
    step, never undone (a reader of the directory never sees the old build come back). What
    cannot go back (the new build has an entry of its name) stays in the staging folder, which
    the lock then keeps, with a warning naming it (:func:`aiedsl.builddir.removal.remove_build`).

    The old build's marker is rewritten first to list what is aiedsl's by both: in ``before``,
    and owned by the old marker still (a file of a name build.sh writes that came since, newer
    than build.sh's record, is not)."""
    marker = read_marker(old)
    ours = owned_in(old, marker)
    write_marker(old, str((marker or {}).get("design", "")),
                 [rel for rel in before if ours(rel)], staging)
    kept, _ = remove_build(old)  # an error: what stayed goes with the lock, or stays
    back: list[str] = []
    for rel in kept:
        src, dst = old / rel.rstrip("/"), out / rel.rstrip("/")
        try:
            dst.parent.mkdir(parents=True, exist_ok=True)  # an old build's folder it was in
            if _rename_new(src, dst):
                back.append(rel)
        except OSError:
            pass  # stays where it is: the lock's release names it
    if back:
        warn(_moved_back(back, shown))
        remove_build(old)  # the folders that held them, the marker


def _moved_back(back: list[str], shown: Path) -> str:
    """The warning for ``back``, entries put in build directory ``shown`` while a build
    replaced it, moved into the new build (:func:`_clear_old`)."""
    label, named = printable(shown), printable(", ".join(back))
    it, was, is_ = ("it", "it was", "it is") if len(back) == 1 else ("them", "they were",
                                                                      "they are")
    return (f"warning [output directory]: {named} appeared in {label} while the build replaced "
            f"it: aiedsl did not write {it}, so {was} moved into the new build, not deleted\n"
            f"  fix: move {it} out of {label} (a build directory holds only what aiedsl "
            f"writes: the next build of {label} refuses to start while {is_} there)\n")


def _dropped(dropped: list[str], changed: list[str], shown: Path) -> str:
    """The note for the previous build's tool outputs (``dropped``: an xclbin, instructions,
    objects, logs) that a build of other tool inputs (``changed``) did not keep, and no compile
    after it made again: silently, a long compile was gone after a rebuild whose kernel C++
    changed in a comment (a tester)."""
    tops = sorted({rel.split("/")[0] + ("/" if "/" in rel else "") for rel in dropped})
    named = ", ".join(tops[:6]) + (f" and {len(tops) - 6} more" if len(tops) > 6 else "")
    why = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
    return (f"note [output directory]: {printable(shown)} no longer holds {printable(named)}, "
            f"the toolchain's outputs of its previous build: {printable(why)} changed, so they "
            "were not this build's; run its build.sh (or build --compile) to make them again\n")


def _undigested(shown: Path) -> str:
    """The note for a rebuild of a build directory whose marker, an older aiedsl's, holds no
    digests: a file edited there by hand could not be told from the generated one, and was
    replaced (a tester upgrading aiedsl lost hand edits without a word)."""
    label = printable(shown)
    return (f"note [output directory]: {label} was written by an older aiedsl, which recorded "
            "no digest of its files: a file edited there by hand, if any, could not be told "
            "from aiedsl's, and was replaced; from this build on, an edited file is refused "
            "instead\n")


def _executable(path: Path) -> None:
    """Make ``path`` executable by whoever may read it (``chmod +x`` under the umask): its
    read bits, which the umask set when it was made, give the execute bits. A fixed 0o755 made
    build.sh readable by all under a umask of 077 (a packager's tester)."""
    mode = os.stat(path).st_mode & 0o7777
    os.chmod(path, mode | ((mode & 0o444) >> 2))


def _folders_of(files: Iterable[str]) -> set[str]:
    """The folders that hold ``files`` (relative paths), as entries (``kernels/``)."""
    return {f"{p}/" for rel in files for p in PurePosixPath(rel).parents if str(p) != "."}


def _put(path: Path, text: str) -> None:
    """Write one file (a seam for tests that interrupt a build midway): UTF-8, a kernel
    source's bytes that are not given back as they were (:func:`aiedsl.text.encoded`)."""
    path.write_bytes(encoded(text))


# -- holding it -----------------------------------------------------------------------------------


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
    another thread of this process holds on it (:func:`aiedsl.builddir.lock.share`)."""
    with share(Path(os.path.realpath(Path(out_dir)))):
        yield


@contextmanager
def _locked(out: Path, shown: Path) -> Iterator[Path]:
    """:func:`aiedsl.builddir.lock.claim`: a file-system error taking or letting go of the lock is
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


# -- after a build: the tools' outputs ------------------------------------------------------------


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
                relist(out, marker, staging, lambda e: e not in before, rewritten=True)


@contextmanager
def compiling(out_dir: str | Path, files: dict[str, str], *, design: str,
              tool_input: Callable[[str], bool], writes: Iterable[str]) -> Iterator[Path]:
    """Hold build directory ``out_dir``'s lock over a compile of ``files`` and yield the folder
    to run the tools in: ``compile/`` in the staging folder, holding the files they read
    (``tool_input``). Nothing reaches the build directory until
    :func:`aiedsl.builddir.swap.install_outputs` moves it there; an interrupted compile leaves
    the directory as it was, and its folder goes with the lock (a killed one's with the next
    build).

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
            # first: a killed compile's folder is known for aiedsl's by it (lock.check_staging)
            write_marker(work, design, [*inputs, *_folders_of(inputs)], staging)
            for rel, text in inputs.items():
                (work / rel).parent.mkdir(parents=True, exist_ok=True)
                (work / rel).write_bytes(encoded(text))  # as _put writes it
        try:
            yield work
        finally:
            remove_marked(work, strict=False)
