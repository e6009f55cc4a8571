"""Source locations carried by every IR node."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Loc(BaseModel):
    """A line of a design file (``file`` as the user reads it, relative to the working
    directory)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str
    """Path of the file, relative to the working directory when below it."""
    line: int
    """1-based line number."""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"
