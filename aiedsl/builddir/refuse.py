"""What a build refuses to replace or write into, before it touches anything.

aiedsl never deletes or moves anything it did not write (:mod:`aiedsl.builddir.marker`). A build
refuses an output directory holding anything its marker does not list (and any non-empty
directory without a marker), a file where the directory should be, a staging folder of its name
holding what aiedsl never puts there, and the working directory or one of its ancestors, which
it could not replace (:func:`check_output_dir`, before anything is touched; what is foreign
again under the lock, :func:`_refuse_foreign`). Read without the lock, a directory another live
build is changing is reported busy, not foreign. A compile refuses a directory that no longer
holds the build it compiles, and a name of the user's where its outputs go
(:func:`_refuse_other_build`, :func:`_refuse_in_the_way`).

>>> check_output_dir("build/passthrough", "passthrough")  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from aiedsl.builddir.lock import busy, check_staging, holder, staging_path
from aiedsl.builddir.marker import (
    MARKER, SCRIPT_LIST, _entry, edited, entries, foreign, owned_in, read_marker,
)
from aiedsl.errors import DesignError, counted, display_path, printable
from aiedsl.files import command, os_errors
from aiedsl.text import decoded

MAX_NAMED = 5
"""How many foreign files an error names."""
OlderBuild = Callable[[Path], bool]
"""Does a directory without a marker hold nothing but what aiedsl writes into a build
(:func:`aiedsl.emit.holds_only_a_build`)? Then, its ``aie.mlir`` written by aiedsl, it is the
build of an aiedsl older than the marker, which a refusal tells the user to delete."""


# -- before a build -------------------------------------------------------------------------------


def check_output_dir(out_dir: str | Path, design: str, older_build: OlderBuild | None = None
                     ) -> None:
    """Raise a DesignError unless a build may replace ``out_dir``: it is new, an empty
    directory, or an aiedsl build directory holding only what its marker lists, none of it
    edited since (:func:`_refuse_edited`), and it is neither the working directory nor one of
    its ancestors. ``older_build`` (:data:`OlderBuild`;
    None: nothing is) tells a build of an aiedsl older than the marker, whose refusal says to
    delete it."""
    shown = Path(out_dir)
    if os.path.islink(shown) and not os.path.exists(shown) \
            and not os.path.islink(os.path.realpath(shown)):  # (a loop: said below)
        # as --stats and --trace refuse one: building through it would make folders wherever
        # it points (a link into another tree, a stale one in a checkout)
        raise DesignError(
            "output directory", f"{printable(shown)} is a symbolic link to "
            f"{printable(os.readlink(shown))}, which does not exist, and aiedsl did not make it",
            fix=f"choose another directory with -o, or make the folder the link names, or "
            f"remove the link {printable(shown)}")
    real = Path(os.path.realpath(shown))
    if os.path.ismount(real):  # (a bind-mounted output folder, as container jobs use)
        raise DesignError(
            "output directory", f"cannot build into {printable(shown)}: it is a mount point, and "
            "a build replaces its output directory whole, by renaming it, which a mount point "
            "refuses", fix=f"build into a folder inside it, e.g. -o {printable(shown / design)}")
    _refuse_working_dir(real, shown, design)
    with os_errors(shown, rule="output directory", option="-o", verb="read"):
        _refuse_foreign(real, shown, older_build=older_build)
        _refuse_edited(real, shown, locked=False)  # before a lowering's tools run (a
        staging = staging_path(real)  # reviewer), and again under the lock
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


def _refuse_foreign(real: Path, shown: Path, locked: bool = False,
                    older_build: OlderBuild | None = None) -> None:
    """Refuse ``real`` when it holds what aiedsl did not write; ``locked``: this build holds its
    lock, so no other is writing there; ``older_build`` as :func:`check_output_dir` takes it."""
    if not os.path.lexists(real):
        return
    if real.is_symlink():  # realpath stops at a link it cannot follow: one leading back to itself
        label, link = printable(shown), display_path(str(real))
        try:
            target = os.readlink(real)
        except OSError:
            target = "?"
        raise DesignError(
            "output directory", f"{label} is a symbolic link that does not resolve: following it "
            "leads back to itself (a loop)", found=printable(f"{link} -> {target}"),
            fix=f"point {label} at a directory, or choose another directory with -o")
    if not real.is_dir():
        label = printable(shown)
        if real.is_file():
            raise DesignError("output directory", f"{label} is a file, not a directory",
                              fix=f"choose another directory with -o, or move {label} away")
        raise DesignError("output directory", f"{label} is a device, a pipe or a socket, not "
                          "a directory", fix="choose a directory with -o")
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
        marker = read_marker(real)
        outputs = (marker or {}).get("script_outputs", [])
        script = [rel for rel in alien if rel in outputs and rel != SCRIPT_LIST]
        why = [f"{SCRIPT_LIST}: not a record build.sh writes"] \
            if SCRIPT_LIST in alien and SCRIPT_LIST in outputs else []
        if script:  # names build.sh writes: say why these are not taken for build.sh's
            one = len(script) == 1
            why.append(f"{printable(', '.join(script))}: {'a name' if one else 'names'} build.sh "
                       f"writes, but no run of build.sh recorded in {SCRIPT_LIST} wrote "
                       f"{'it' if one else 'them'}")
        if why:
            fix += f" ({'; '.join(why)})"
        # Delete it whole only when nothing in it can be the user's (their thesis beside an
        # aie.mlir copied from a build was to be deleted with it, a tester found)
        if marker is None and older_build is not None and _older_build(real) \
                and older_build(real):
            fix = (f"{label} looks like a build from an aiedsl older than the build marker "
                   f"({MARKER}): delete it once ({command(['rm', '-r'], str(shown))}) and build "
                   "again")
        raise DesignError(
            "output directory", f"{label} holds {counted(len(alien), 'file')} aiedsl did not "
            "write, and a build replaces the whole directory",
            limit="a new or empty directory, or a build directory holding only what aiedsl "
                  "wrote", found=named, fix=fix)


def _refuse_edited(real: Path, shown: Path, locked: bool = True) -> None:
    """Refuse to replace build directory ``real`` while a file a build wrote there was edited
    since (:func:`~aiedsl.builddir.marker.edited`): the rebuild would overwrite the edit, a
    user's work, with the generated file (a hand-tuned ``aie.mlir`` or ``build.sh``).
    Not ``locked``, another build may be swapping the directory as it is read (a marker of
    one build beside files of another): a difference is taken for an edit only when no build
    is live and the marker read after the files is the one read before; otherwise it is left
    to the check under the lock (a concurrent build's test met it)."""
    if not real.is_dir() or real.is_symlink():
        return
    marker = read_marker(real)
    changed = edited(real, marker)
    if changed and not locked and (holder(staging_path(real), locked=False) is not None
                                   or read_marker(real) != marker):
        return
    if not changed:
        return
    label, named = printable(shown), printable(", ".join(changed[:MAX_NAMED]))
    if len(changed) > MAX_NAMED:
        named += f" and {len(changed) - MAX_NAMED} more"
    it = "it" if len(changed) == 1 else "them"
    raise DesignError(
        "output directory", f"{label} holds {counted(len(changed), 'file')} aiedsl wrote that "
        f"{'was' if len(changed) == 1 else 'were'} edited since, and a build replaces the whole "
        f"directory: the {'edit' if len(changed) == 1 else 'edits'} would be lost", found=named,
        fix=f"copy {it} out of {label} to keep the {'edit' if len(changed) == 1 else 'edits'}"
            f", then delete {it} there (the build writes {it} again), or build into another "
            "directory with -o")


def _older_build(folder: Path) -> bool:
    """Did an aiedsl without markers write this directory (its aie.mlir says so)?"""
    try:
        with open(folder / "aie.mlir", encoding="utf-8", errors="replace") as f:
            return "generated by aiedsl" in f.readline()
    except OSError:
        return False



# -- before a compile -----------------------------------------------------------------------------


def _refuse_other_build(out: Path, shown: Path, files: dict[str, str], design: str,
                        tool_input: Callable[[str], bool], writes: Iterable[str]) -> None:
    """Refuse a compile of ``files`` in ``out`` (:func:`aiedsl.builddir.build.compiling`)."""
    label = printable(shown)
    marker = read_marker(out) if out.is_dir() else None
    changed = [f"no {MARKER}"] if marker is None else _changed_inputs(out, files, tool_input)
    if changed:
        raise DesignError(
            "output directory", f"{label} no longer holds the build of {design} to be "
            "compiled: another build replaced it since", found=printable(", ".join(changed)),
            fix="build and compile again (aiedsl build --compile holds the directory from the "
                "build to the end of the compile)")
    ours = owned_in(out, marker)
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


def _changed_inputs(old: Path, files: dict[str, str], tool_input: Callable[[str], bool]
                    ) -> list[str]:
    """The files the tools read (``tool_input``) that build ``old`` does not hold as ``files``
    has them: different, missing, or there and not in ``files``."""
    want = {rel: text for rel, text in files.items() if tool_input(rel)}
    have = {rel for rel in entries(old) if not rel.endswith("/") and tool_input(rel)}
    changed = sorted(have - set(want))
    for rel, text in sorted(want.items()):
        try:
            if decoded((old / rel).read_bytes()) != text:  # read as build._put wrote it
                changed.append(rel)
        except OSError:
            changed.append(rel)
    return sorted(changed)
