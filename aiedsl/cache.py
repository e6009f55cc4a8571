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
