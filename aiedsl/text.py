"""Text as aiedsl's messages and reports show it. Nothing here imports more than the standard
library, so the command line can use it before it loads a design."""

from __future__ import annotations


def printable(value: object) -> str:
    r"""``value`` as one line of a message: control characters (a line break in a path would
    split the message, or forge a line of it) written as Python escapes.

    >>> printable("new\nline/o")
    'new\\nline/o'
    """
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(value))
