"""Where aiedsl keeps what it can rebuild: host kernel libraries and compiled templates.

``$XDG_CACHE_HOME/aiedsl`` (``~/.cache/aiedsl`` by default, and when ``XDG_CACHE_HOME`` is not an
absolute path). Everything in it is keyed by content, so deleting it only costs time.
"""

from __future__ import annotations

import os
import stat
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
    can write them (none but the user's own private group, for a user whose files are made
    group-writable). A cache folder shared with, or writable by, another user would let them
    plant code that aiedsl then runs (a reviewer). Where the system has no owners (Windows),
    True; a path that cannot be read, False."""
    if not hasattr(os, "getuid"):
        return True
    me = os.getuid()
    for p in (path, path.parent):
        try:
            st = p.stat()
        except OSError:
            return False
        if st.st_uid not in (me, 0) or st.st_mode & 0o002 or (
                st.st_mode & 0o020 and not _own_group(st.st_gid)):
            return False
    return True


def private(folder: Path) -> bool:
    """Whether no other user can change what ``folder`` holds, now or later: it and every
    folder above it (as written and as its links resolve) are this user's or root's, writable
    by no one else, but for a sticky folder above it (``/tmp``), where others cannot move what
    is not theirs. A cache folder another user can write, or whose parent they can write (and
    so put a folder of their own in its place), let them swap a library between aiedsl's check
    of it and its load (a security reviewer); such a cache is not used. Windows: True."""
    if not hasattr(os, "getuid"):
        return True
    me = os.getuid()
    try:
        chains = [Path(os.path.abspath(folder)), folder.resolve()]
        for start in chains:
            for p in (start, *start.parents):
                st = os.lstat(p)
                if st.st_uid not in (me, 0):
                    return False
                if stat.S_ISLNK(st.st_mode):  # its owner alone decides where it leads
                    continue
                shared = st.st_mode & 0o002 or (st.st_mode & 0o020 and not _own_group(st.st_gid))
                if shared and (p == start or not st.st_mode & stat.S_ISVTX):
                    return False
    except (OSError, RuntimeError):  # (RuntimeError: a loop of links)
        return False
    return True


def _own_group(gid: int) -> bool:
    """Whether group ``gid`` is this user's private group (named as the user, no other
    members): where users share one primary group (``users``), its write bit is another
    user's."""
    try:
        import grp
        import pwd

        name = pwd.getpwuid(os.getuid()).pw_name
        group = grp.getgrgid(gid)
    except (ImportError, KeyError):
        return False
    return gid == os.getgid() and group.gr_name == name and set(group.gr_mem) <= {name}
