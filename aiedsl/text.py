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


def tool_output(text: str) -> str:
    r"""A tool's output as aiedsl echoes it to the terminal (the tail of a failing tool's,
    what doctor quotes): its lines kept (a ``\r\n`` line end read as ``\n``) and its tabs, every
    other control character written as a Python escape. An escape sequence in it (a colour, a
    window title set with ``ESC ] 0; ... BEL``) would act on the user's terminal, a carriage
    return write over the line before; its log keeps it as it was.

    >>> tool_output("\x1b[31mred\x1b[0m\tok\r\n\x1b]0;title\x07 x\rover")
    '\\x1b[31mred\\x1b[0m\tok\n\\x1b]0;title\\x07 x\\rover'
    """
    return "".join(c if c in "\n\t" else printable(c) for c in text.replace("\r\n", "\n"))
