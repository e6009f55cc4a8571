"""What a build removes of its own: only what a marker owns, the marker last, so a build stopped
midway leaves a folder still known for aiedsl's (:mod:`aiedsl.builddir.lock` removes the old
build and a killed build's leftovers with these; what it says when something stays is its own).
"""

from __future__ import annotations

import os
from pathlib import Path

from aiedsl.builddir.marker import MARKER, SCRIPT_LIST, entries, foreign, owned_in, read_marker
from aiedsl.files import remove_tree


def remove_marked(folder: Path, strict: bool = True) -> OSError | None:
    """Remove ``folder``, a folder aiedsl made in a staging folder, its marker last: stopped
    midway, it still holds its marker and only what the marker owns
    (:func:`~aiedsl.builddir.lock.check_staging` takes it for aiedsl's). ``strict``: raise
    the first error (naming the whole path), else remove what can be removed, keep the
    marker when anything else stayed, and return the first error (None when all went)."""
    def remove(path: Path) -> None:
        if path.is_dir() and not path.is_symlink():
            remove_tree(path)
        else:
            path.unlink(missing_ok=True)

    first: OSError | None = None
    try:
        # build.sh's record goes last, just before the marker: it is what vouches for the
        # files build.sh wrote, so it stays whenever one of them does
        inside = sorted((p for p in folder.iterdir() if p.name != MARKER),
                        key=lambda p: p.name == SCRIPT_LIST)
    except OSError as e:
        if strict:
            raise
        return e
    for path in inside:
        if first is not None and path.name == SCRIPT_LIST:
            break  # something it vouches for stayed
        try:
            remove(path)
        except OSError as e:
            if strict:
                raise
            first = first or e
    if first is not None:
        return first  # the marker stays: what is left is known for aiedsl's, and removed later
    try:
        (folder / MARKER).unlink(missing_ok=True)
        os.rmdir(folder)
    except OSError as e:
        if strict:
            raise
        return e
    return None


def remove_build(folder: Path) -> tuple[list[str], OSError | None]:
    """Remove what ``folder``, a build in a staging folder (``build/``, ``old/``), holds of
    aiedsl's: what its marker owns (:func:`~aiedsl.builddir.marker.owned_in`), innermost
    first, build.sh's record and the marker last, then the folder. What the marker does not
    own (a file someone put in the build directory while a build replaced it) is never
    aiedsl's to delete: it stays, with the folders that hold it and the marker (by which
    :func:`~aiedsl.builddir.lock.check_staging` names it). Returns those entries, topmost
    first (none when the folder went), and the first error met: an entry that cannot be
    removed does not stop the others, and the record and the marker then stay (what is left
    is still known for aiedsl's)."""
    marker = read_marker(folder)
    try:
        if marker is None and any(folder.iterdir()):
            return foreign(folder), None  # not marked by aiedsl: nothing is known for its own
        ours = owned_in(folder, marker)
        kept, found = foreign(folder), entries(folder)
    except OSError as e:
        return [], e
    first: OSError | None = None
    for rel in sorted(found, reverse=True):  # a folder's entries before the folder
        if rel in (MARKER, SCRIPT_LIST) or not ours(rel):
            continue
        path = folder / rel.rstrip("/")
        try:
            if rel.endswith("/"):
                if not any(path.iterdir()):  # one holding what is kept (or failed) stays
                    os.rmdir(path)
            elif not path.is_dir() or path.is_symlink():  # a folder where a file was: kept
                _unlink(path)
        except OSError as e:
            first = first or e
    if first is not None or kept:
        return kept, first
    try:
        _unlink(folder / SCRIPT_LIST)
        _unlink(folder / MARKER)
        os.rmdir(folder)
    except OSError as e:
        return [], e
    return [], None


def _unlink(path: Path) -> None:
    """Remove the file ``path`` if it is there, by ``os.unlink`` itself: ``Path.unlink`` of
    Python 3.10 calls the ``os.unlink`` its module bound at import, which the tests' stand-in
    for an undeletable file (``chattr +i``) then never meets."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
