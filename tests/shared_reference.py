"""The project's reference material (``../shared/reference`` beside the checkout): real mlir-aie
designs and lowerings that some tests compare with. CI has it; a user's clone does not, so a test
that needs it skips, saying why. ``AIEDSL_REFERENCE`` points at another copy."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = Path(os.environ.get("AIEDSL_REFERENCE") or ROOT.parent / "shared" / "reference")


def reference_file(*parts: str) -> Path:
    """The path of a reference file; skips the calling test when it is not on this machine."""
    path = REFERENCE.joinpath(*parts)
    if not path.is_file():
        pytest.skip(f"needs the project's reference material ({path} is absent: it sits beside "
                    "the checkout in CI, not in a user's clone)")
    return path
