"""Where aiedsl keeps what it can rebuild: host kernel libraries and compiled templates.

``$XDG_CACHE_HOME/aiedsl`` (``~/.cache/aiedsl`` by default). Everything in it is keyed by
content, so deleting it only costs time.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(kind: str) -> Path:
    """The cache folder for ``kind`` (``"host-kernels"``, ``"templates"``), not yet created."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "aiedsl" / kind
