"""Where aiedsl keeps what it can rebuild: host kernel libraries and compiled templates.

``$XDG_CACHE_HOME/aiedsl`` (``~/.cache/aiedsl`` by default, and when ``XDG_CACHE_HOME`` is not an
absolute path). Everything in it is keyed by content, so deleting it only costs time.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(kind: str) -> Path:
    """The cache folder for ``kind`` (``"host-kernels"``, ``"templates"``), not yet created.

    A relative ``XDG_CACHE_HOME`` is ignored: the XDG Base Directory specification calls it
    invalid, and taken as given it would put a cache in whatever folder a command runs from.
    """
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = str(Path.home() / ".cache")
    return Path(base) / "aiedsl" / kind


def trusted(path: Path) -> bool:
    """Whether aiedsl may load code from ``path`` (a host kernel library, a compiled
    template): it and the folder holding it are this user's (or root's), and no other user
    can write them (none but the owner's own group, for a user whose files are made
    group-writable). A cache folder shared with, or writable by, another user would let them
    plant code that aiedsl then runs (a reviewer). Where the system has no owners (Windows),
    True; a path that cannot be read, False."""
    if not hasattr(os, "getuid"):
        return True
    me, group = os.getuid(), os.getgid()
    for p in (path, path.parent):
        try:
            st = p.stat()
        except OSError:
            return False
        if st.st_uid not in (me, 0) or st.st_mode & 0o002 or (
                st.st_mode & 0o020 and st.st_gid != group):
            return False
    return True
