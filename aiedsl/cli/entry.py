"""The ``aiedsl`` command's first module (the console script's, and ``python -m aiedsl``'s).

It imports nothing but the standard library before it loads the command line itself (typer and
the commands take a good tenth of a second), so a Ctrl-C in that time ends as one during a
command does: ``aborted`` and exit 130, not a traceback of the import it stopped.
"""

from __future__ import annotations

import sys


def run() -> None:
    """Load :mod:`aiedsl.cli.process` and run the program (:func:`aiedsl.cli.process.run`).

    SIGTERM and SIGHUP stop the load as Ctrl-C does (the program then takes them over): a
    ``sim`` or ``run`` given ``--stats`` says in its file that it was stopped, as it does when
    stopped later (:mod:`aiedsl.cli.stopped_stats`), where the default action left an earlier
    run's file standing for it."""
    import signal

    stopped: list[int] = []

    def stop(number: int, frame: object) -> None:
        if not stopped:
            stopped.append(number)
            raise KeyboardInterrupt

    previous = {}
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            previous[getattr(signal, name)] = signal.signal(getattr(signal, name), stop)
    try:
        from aiedsl.cli.process import run as program
    except KeyboardInterrupt:
        sys.stderr.write("aborted\n")
        from aiedsl.cli.stopped_stats import write_stopped_stats

        write_stopped_stats(sys.argv[1:], stopped[0] if stopped else None)
        raise SystemExit(128 + stopped[0] if stopped else 130) from None
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    program()
