"""The marker of a build directory, ``.aiedsl-build.json``: what in a folder aiedsl wrote.

aiedsl never deletes or moves anything it did not write. Every directory it makes carries a
marker listing every file and folder in it (folders end in ``/``): what a build wrote, what the
tools it ran there left (``--compile``), and what ``aiedsl map`` or ``--trace`` added; and what
the build's ``build.sh``, run by hand, writes (``script_outputs``: the kernels' ``.o``,
``aie.xclbin``, ``insts.bin``, aiecc's ``aie.mlir.prj/``). A file of those names is aiedsl's only
when ``build.sh``'s record (:data:`SCRIPT_LIST`) shows a run that wrote it (:func:`script_wrote`),
and a folder among them (aiecc's project folder, whose files aiecc names) holds only what
``build.sh`` recorded aiecc adding to it (:func:`script_made`), besides what the marker lists.
Whatever else a folder holds is foreign (:func:`foreign`): the user's.

Read by the refusals before a build (:mod:`aiedsl.builddir.refuse`) and by the lock
(:mod:`aiedsl.builddir.lock`), which tells a killed build's leftovers from a user's folder by the
markers in them; written (:func:`write_marker`, :func:`relist`) by all that puts something in a
build directory.

>>> foreign(Path("build/passthrough"))  # doctest: +SKIP
['notes.txt']
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from aiedsl.files import replace_file
from aiedsl.version import __version__

MARKER = ".aiedsl-build.json"
"""The file that makes a directory an aiedsl build directory, listing what aiedsl put there."""
SCRIPT_LIST = ".aiedsl-script.list"
"""Where ``build.sh`` records what aiecc adds to its project folder: the folder's entries before
each run (after a ``#before`` line) and after it (after ``#after``), as ``find`` prints them."""


def entries(root: Path) -> list[str]:
    """Every file and folder under ``root``, relative, sorted; folders end in ``/``.

    Symbolic links are entries of their own, never followed (a link to a folder is not a folder).
    """
    found: list[str] = []

    def walk(folder: str, prefix: str) -> None:
        with os.scandir(folder) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    found.append(f"{prefix}{e.name}/")
                    walk(e.path, f"{prefix}{e.name}/")
                else:
                    found.append(prefix + e.name)

    walk(str(root), "")
    return sorted(found)


def _entry(folder: Path, name: str) -> str | None:
    """``name`` in ``folder`` as an entry (``logs/`` for a folder), None when it is not there."""
    path = folder / name
    if not os.path.lexists(path):
        return None
    return f"{name}/" if path.is_dir() and not path.is_symlink() else name


def read_marker(folder: Path) -> dict[str, Any] | None:
    """The marker of build directory ``folder``, or None when it has none (or not a valid one)."""
    try:
        data = json.loads((folder / MARKER).read_text())
    except (OSError, ValueError):
        return None
    ok = (isinstance(data, dict) and isinstance(data.get("aiedsl"), str) and "files" in data
          and all(isinstance(data.get(key, []), list)
                  and all(isinstance(f, str) for f in data.get(key, []))
                  for key in ("files", "script_outputs")))
    return data if ok else None


def owned(marker: dict[str, Any] | None, made: Collection[str] = ()) -> Callable[[str], bool]:
    """Whether an entry of a build directory with ``marker`` is aiedsl's: listed, or written by
    its ``build.sh`` (run by hand, it cannot list what it wrote in the marker): a folder of
    ``script_outputs`` (aiecc's project folder) and, in it, what ``made``
    (:func:`script_made`) names, or a file of ``script_outputs`` that ``made`` names
    (:func:`script_wrote`). Anything else of those names or in that folder is not: a rebuild,
    which drops them with another design, would have deleted a user's file (an ``aie.xclbin``
    of their own, a file in ``aie.mlir.prj/``)."""
    listed = set(marker["files"]) if marker else set()
    script = marker.get("script_outputs", []) if marker else []
    folders = tuple(s for s in script if s.endswith("/"))
    listed.update(folders)
    made = set(made)
    files = {s for s in script if not s.endswith("/")} & made
    return lambda rel: rel in listed or rel in files or (
        bool(folders) and rel.startswith(folders) and rel.rstrip("/") in made)


def script_made(folder: Path) -> set[str]:
    """What ``build.sh`` in build directory ``folder`` recorded its aiecc adding to its project
    folder (:data:`SCRIPT_LIST`): in each run it recorded whole (``#before`` and ``#after``),
    what was there after it and not before; entries without a trailing ``/``. A run killed
    before its ``#after`` adds nothing, and what it left stays foreign (refused, never deleted)."""
    made: set[str] = set()
    lines = _script_record(folder)
    runs: list[tuple[set[str], set[str]]] = []
    section: set[str] | None = None
    for line in lines:
        if line == "#before":
            runs.append((set(), set()))
            section = runs[-1][0]
        elif line == "#after" and runs and section is runs[-1][0]:
            section = runs[-1][1]
        elif line.startswith("#"):
            section = None  # an #after without its #before: no run to take it from
        elif section is not None:
            section.add(line.rstrip("/"))
    for before, after in runs:
        made |= after - before
    return made


def _script_record(folder: Path) -> list[str]:
    """The lines of ``build.sh``'s record in build directory ``folder`` (:data:`SCRIPT_LIST`)."""
    try:
        return (folder / SCRIPT_LIST).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def script_wrote(folder: Path, marker: dict[str, Any] | None) -> set[str]:
    """The files of ``marker``'s ``script_outputs`` in build directory ``folder`` that its
    ``build.sh``, run by hand, wrote, as far as its record (:data:`SCRIPT_LIST`) tells.

    The record itself, when it is one: ``#before`` first, then only ``#before``, ``#after`` and
    paths in the script's folders (``aie.mlir.prj``), as ``find`` prints them. The other files
    when it records a whole run (``#before``, written before the kernels' compiles, then
    ``#after``, however the script ended: a failed compile's ``set -e`` included) and they are
    no newer than the record, which the script appends to last, as it exits (the time each
    came into the folder, its ``ctime``: a copy that keeps an old ``mtime`` is not taken for
    build.sh's). A file of such a name put there by hand, after the last run, is not aiedsl's.
    """
    script = marker.get("script_outputs", []) if marker else []
    if SCRIPT_LIST not in script:
        return set()
    folders = tuple(s.rstrip("/") for s in script if s.endswith("/"))
    lines = _script_record(folder)
    if not lines or lines[0] != "#before" or not all(
            line in ("#before", "#after") or line in folders or line.startswith(
                tuple(f"{f}/" for f in folders)) for line in lines):
        return set()
    wrote = {SCRIPT_LIST}
    if "#after" not in lines:
        return wrote
    try:
        last = os.lstat(folder / SCRIPT_LIST).st_mtime_ns
    except OSError:
        return set()
    for name in script:
        if name.endswith("/") or name == SCRIPT_LIST:
            continue
        try:
            # its status change, not its modification time: cp -p, tar, rsync -t and mv keep
            # an old mtime, and only the kernel sets ctime (to when the file came here)
            if os.lstat(folder / name).st_ctime_ns <= last:
                wrote.add(name)
        except OSError:
            pass
    return wrote


def owned_in(folder: Path, marker: dict[str, Any] | None) -> Callable[[str], bool]:
    """:func:`owned` for build directory ``folder`` with ``marker``, its ``build.sh``'s record
    read (:func:`script_made`, :func:`script_wrote`)."""
    return owned(marker, script_made(folder) | script_wrote(folder, marker))


def foreign(folder: Path) -> list[str]:
    """What in ``folder`` aiedsl did not write: the topmost entries that are not its own
    (:func:`owned_in`).

    A folder not its own is named once (``photos/``), not file by file. Without a marker every
    entry is foreign.
    """
    ours = owned_in(folder, read_marker(folder))
    found: list[str] = []

    def walk(sub: str, prefix: str) -> None:
        with os.scandir(sub) as it:
            for e in sorted(it, key=lambda e: e.name):
                is_dir = e.is_dir(follow_symlinks=False)
                rel = prefix + e.name + ("/" if is_dir else "")
                if not ours(rel):
                    found.append(rel)
                elif is_dir:
                    walk(e.path, rel)

    walk(str(folder), "")
    return sorted(found)


# -- writing it -----------------------------------------------------------------------------------


def write_marker(folder: Path, design: str, listed: Iterable[str] | None = None,
                 tmp_dir: Path | None = None, script_outputs: Iterable[str] = (),
                 digests: Mapping[str, str] | None = None) -> None:
    """Write ``folder``'s marker: ``listed`` (default: everything in it now), plus itself, and
    ``script_outputs``, what its ``build.sh`` writes (a folder, ending in ``/``, with all in it);
    and ``digests``, the SHA-256 of each file the build wrote as it wrote it (of those listed),
    by which a later build tells a file the user edited since (:func:`edited`).

    With ``tmp_dir`` the marker is written there first and renamed into place, so a reader
    never sees half a marker and a killed process leaves no stray file in ``folder``.
    """
    files = sorted(set(entries(folder) if listed is None else listed) | {MARKER})
    data: dict[str, Any] = {"aiedsl": __version__, "design": design, "files": files}
    if script_outputs:
        data["script_outputs"] = sorted(set(script_outputs))
    kept = {rel: d for rel, d in sorted((digests or {}).items()) if rel in set(files)}
    if kept:
        data["digests"] = kept
    text = json.dumps(data, indent=2) + "\n"
    if tmp_dir is None:
        (folder / MARKER).write_text(text)
    else:
        replace_file(folder / MARKER, text, tmp_dir)


def relist(folder: Path, marker: dict[str, Any], tmp_dir: Path,
            new: Callable[[str], bool], *, rewritten: bool = False) -> None:
    """Rewrite ``folder``'s marker: what is aiedsl's (:func:`owned_in`) and still there, and
    what ``new`` says aiedsl added since; the rest stays unlisted (foreign). ``rewritten``:
    tools aiedsl ran there may have rewritten its files in place (a log), so each file with a
    digest is recorded as it is now (no edit of a user's can have come meanwhile: the
    directory's lock was held, and edits were refused before)."""
    ours = owned_in(folder, marker)
    try:
        now = entries(folder)
    except OSError:  # the directory went away meanwhile: nothing to list
        return
    script = marker.get("script_outputs", [])
    kept = {rel: d for rel, d in digests_of(marker).items() if not new(rel)}
    # what arrived is recorded as it is now, so that a later edit by hand is refused as any
    # generated file's is; not what build.sh run by hand rewrites (its outputs are its own)
    for rel in now:
        if (new(rel) or rewritten and rel in kept) and not rel.endswith("/") \
                and not _script_output(rel, script):
            path = folder / rel
            try:
                if path.is_file() and not path.is_symlink():
                    kept[rel] = digest(path.read_bytes())
            except OSError:
                continue
    write_marker(folder, str(marker.get("design", "")), [e for e in now if ours(e) or new(e)],
                 tmp_dir, script, kept)


def _script_output(rel: str, script: object) -> bool:
    """Is ``rel`` something ``build.sh`` writes (a ``script_outputs`` entry, or inside one of
    its folders)?"""
    listed = [s for s in script if isinstance(s, str)] if isinstance(script, list) else []
    return any(rel == s or (s.endswith("/") and rel.startswith(s)) for s in listed)


def digest(data: bytes) -> str:
    """The SHA-256 of a file's bytes, as the marker's ``digests`` hold it."""
    return hashlib.sha256(data).hexdigest()


def digests_of(marker: dict[str, Any] | None) -> dict[str, str]:
    """The marker's ``digests`` (none in a marker of an aiedsl before them, or a malformed
    one)."""
    found = (marker or {}).get("digests")
    if not isinstance(found, dict):
        return {}
    return {rel: d for rel, d in found.items() if isinstance(rel, str) and isinstance(d, str)}


def edited(folder: Path, marker: dict[str, Any] | None) -> list[str]:
    """The files of build directory ``folder`` that a build wrote and that no longer hold
    what it wrote (``digests``): edited by hand since. A file gone, or made a link or a
    folder, is not counted: the build's replacing it loses nothing of a user's."""
    changed = []
    for rel, want in sorted(digests_of(marker).items()):
        path = folder / rel
        if path.is_symlink() or not path.is_file():
            continue
        try:
            if digest(path.read_bytes()) != want:
                changed.append(rel)
        except OSError:
            continue
    return changed


def build_dir_of(folder: Path) -> Path | None:
    """The aiedsl build directory ``folder`` is in (itself or an ancestor), if any."""
    for d in (folder, *folder.parents):
        if read_marker(d) is not None:
            return d
    return None
