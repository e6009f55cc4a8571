"""The ``aiedsl`` command's first module (the console script's, and ``python -m aiedsl``'s).

It imports nothing but the standard library before it loads the command line itself (typer and
the commands take a good tenth of a second), so a Ctrl-C in that time ends as one during a
command does: ``aborted`` and exit 130, not a traceback of the import it stopped.
"""

from __future__ import annotations

import sys


def run() -> None:
    """Load :mod:`aiedsl.cli.process` and run the program (:func:`aiedsl.cli.process.run`)."""
    try:
        from aiedsl.cli.process import run as program
    except KeyboardInterrupt:
        sys.stderr.write("aborted\n")
        raise SystemExit(130) from None
    program()
