"""The marker of a build directory, ``.aiedsl-build.json``: what in a folder aiedsl wrote.

Read by the build directory (:mod:`aiedsl.outdir`) and by its lock (:mod:`aiedsl.build_lock`),
which tells a killed build's leftovers from a user's folder by the markers in them.

>>> foreign(Path("build/passthrough"))  # doctest: +SKIP
['notes.txt']
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

MARKER = ".aiedsl-build.json"
"""The file that makes a directory an aiedsl build directory, listing what aiedsl put there."""


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


def owned(marker: dict[str, Any] | None) -> Callable[[str], bool]:
    """Whether an entry of a build directory with ``marker`` is aiedsl's: listed, or written by
    its ``build.sh`` (run by hand, it cannot list what it wrote)."""
    listed = set(marker["files"]) if marker else set()
    script = marker.get("script_outputs", []) if marker else []
    folders = tuple(s for s in script if s.endswith("/"))
    listed.update(s for s in script if not s.endswith("/"))
    return lambda rel: rel in listed or (bool(folders) and rel.startswith(folders))


def foreign(folder: Path) -> list[str]:
    """What in ``folder`` aiedsl did not write: the topmost entries that are not its own
    (:func:`owned`).

    A folder not its own is named once (``photos/``), not file by file. Without a marker every
    entry is foreign.
    """
    ours = owned(read_marker(folder))
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
