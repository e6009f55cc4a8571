"""Text as aiedsl's messages and reports show it. Nothing here imports more than the standard
library, so the command line can use it before it loads a design."""

from __future__ import annotations

import re
import sys
from contextlib import contextmanager
from typing import Iterator


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


DEFINE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
"""A define's name as ``-D NAME=`` and ``defines=`` give it: an ASCII Python identifier (the
command line reads it before any design loads, the loader for ``defines=``)."""


SOURCE_ERRORS = "surrogateescape"
"""How a kernel's C++ is decoded from its bytes and encoded back, with UTF-8: a byte that is
not UTF-8 (a Latin-1 ``ö`` in a comment, which g++ and Peano take as they take any comment) is
carried as a lone surrogate and written back as the same byte. Everything that writes, reads
back or hashes text holding a kernel's source (the build's ``kernels/<name>.cc``, the host
build, the cache keys) goes through :func:`encoded` and :func:`decoded`."""


def encoded(text: str) -> bytes:
    """``text`` as the bytes of a file aiedsl writes: UTF-8, a kernel source's bytes that were
    not UTF-8 given back as they were (:data:`SOURCE_ERRORS`).

    >>> encoded(decoded(b"// Gr\\xf6\\xdfe")) == b"// Gr\\xf6\\xdfe"
    True
    """
    return text.encode("utf-8", SOURCE_ERRORS)


def decoded(data: bytes) -> str:
    """The text of a file's bytes, UTF-8 or not: :func:`encoded` gives them back unchanged."""
    return data.decode("utf-8", SOURCE_ERRORS)


LONG_NUMBER = 40
"""The most digits a message shows of a number: a longer one (``10**5000``, a ``-D`` value of
5000 nines) is shown by its ends and its length (:func:`short_numbers`)."""

_DIGITS = re.compile(rf"\d{{1,3}}(?:,\d{{3}}){{{(LONG_NUMBER - 1) // 3},}}"
                     rf"|\d{{{LONG_NUMBER + 1},}}")
"""Runs of more than :data:`LONG_NUMBER` digits, grouped in thousands (``f"{n:,}"``) or not."""


def short_numbers(text: str) -> str:
    """``text`` with every run of more than :data:`LONG_NUMBER` digits cut to its first and
    last six and its length: a screenful of digits hides the rule and the fix around it.

    >>> short_numbers(f"loop({10**50})")
    'loop(100000...000000 (51 digits))'
    """
    return _DIGITS.sub(_shortened, text)


def _shortened(m: re.Match[str]) -> str:
    digits = m[0].replace(",", "")
    if len(digits) <= LONG_NUMBER:  # (a grouped run may be a few digits short of it)
        return m[0]
    return f"{digits[:6]}...{digits[-6:]} ({len(digits)} digits)"


@contextmanager
def whole_ints() -> Iterator[None]:
    """Python's limit on turning an int of over 4300 digits into text lifted, while a design
    loads: the limit guards a server parsing untrusted input, but here it turned a design's
    ``loop(10**5000)`` into a bare ``ValueError`` where the loop's rule was to be said (its
    message then shortens the number: :func:`short_numbers`). The limit is restored after."""
    get = getattr(sys, "get_int_max_str_digits", None)  # (Python 3.10.7 and later)
    if get is None:
        yield
        return
    before = get()
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(before)
