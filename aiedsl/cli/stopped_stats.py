"""The ``--stats`` file of a ``sim`` or ``run`` that was stopped (Ctrl-C, SIGTERM, SIGHUP) before
it had results: it says the run was interrupted, so that an earlier run's file does not stand
for it (a CI job's timeout left the last run's "passed": true; a CI integrator's tester read it
again of a run stopped 0.3 s in, while the command line loaded).

Nothing here needs numpy or the rest of aiedsl: a stop during an import (numpy's own, which it
leaves half made) must still be said. A stop in a command's work is said by the command, with
the design's own name and device (:func:`aiedsl.cli.commands._stats_of_an_end`); one before it,
from the words of the command line (:func:`write_stopped_stats`): the command, its first word
that is no option's (the design), ``--stats``'s file and ``--device``. Every option of ``sim``
and ``run`` takes a value but ``-h``/``--help``.

>>> stats_words(["sim", "-D", "N=8", "d.py", "--stats=s.json"])
('sim', 'd', 's.json', None)
"""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
from pathlib import Path
from typing import Any, Optional, Sequence

from aiedsl.version import __version__

HEAD = re.compile(r'\{\s*"generator": "aiedsl ')
"""How a stats file aiedsl wrote begins."""

_FLAGS = ("-h", "--help")


def is_aiedsl_stats(head: str) -> bool:
    """Was this stats file (its first characters) written by aiedsl?"""
    return HEAD.match(head) is not None


def interrupted_stats(design: str, device: str | None, signal: int | None) -> dict[str, Any]:
    """The stats document of a run stopped by Ctrl-C (``signal`` None) or by ``signal``
    (SIGTERM, SIGHUP) before it had results: ``passed`` false and an ``error`` of rule
    ``interrupted``."""
    import signal as signals

    name = "Ctrl-C (SIGINT)" if signal is None else signals.Signals(signal).name
    return {"generator": f"aiedsl {__version__}", "design": design, "device": device,
            "passed": False,
            "error": {"exit_code": 130 if signal is None else 128 + signal,
                      "rule": "interrupted", "message": f"stopped by {name} before it ended",
                      "file": None, "line": None}}


def stats_words(argv: Sequence[str]) -> tuple[str, Optional[str], Optional[str], Optional[str]]:
    """``(command, design, stats file, device)`` of the command line ``argv`` (without the
    program's name); None for what it does not give. The design is ``--name``'s when given (as
    the command names it), else its file's stem."""
    words = list(argv)
    at = next((i for i, w in enumerate(words) if not w.startswith("-")), len(words))
    command = words[at] if at < len(words) else ""  # after the program's flags (--version)
    design = stats = device = name = None
    i = at + 1
    while i < len(words):
        word = words[i]
        value: Optional[str] = None
        option = word
        if word.startswith("--") and "=" in word:
            option, value = word.split("=", 1)
        elif word.startswith("-") and word not in _FLAGS and not word.startswith("--") \
                and len(word) > 2:
            option, value = word[:2], word[2:]  # -DN=8
        elif word.startswith("-") and word not in _FLAGS and word != "-":
            i += 1
            value = words[i] if i < len(words) else None
        elif not word.startswith("-") and design is None:
            design = word
        if option == "--stats":
            stats = value
        elif option == "--device":
            device = value
        elif option == "--name":
            name = value
        i += 1
    return command, name or (Path(design).stem if design else None), stats, device


def write_stopped_stats(argv: Sequence[str], signal: Optional[int]) -> None:
    """Say in the ``--stats`` file of a ``sim`` or ``run`` command line ``argv`` (stopped by
    Ctrl-C, ``signal`` None, or by ``signal``) that the run was interrupted, unless the file says
    so already (the command's own words, with the design's name and device)."""
    command, design, stats, device = stats_words(argv)
    if command in ("sim", "run") and stats:
        replace_with_stopped(stats, interrupted_stats(design or "", device, signal))


def replace_with_stopped(path: str, stats: dict[str, Any]) -> None:
    """Replace the aiedsl stats file at ``path`` with ``stats`` (an interrupted run's), in one
    rename; a file that is not aiedsl's, or already says a stop, is left as it is, and so is a
    missing one (no earlier run's stands for this one) and anything but a plain file (a pipe
    to a reader, whose end aiedsl itself holds: reading it waited forever, a reviewer's find).
    Nothing is said when it cannot be done: the stop is."""
    try:
        real = os.path.realpath(path)
        if not stat.S_ISREG(os.stat(real).st_mode):
            return
        with open(real, encoding="utf-8") as f:
            if not is_aiedsl_stats(f.read(200)):
                return
            f.seek(0)
            if _says_stopped(f.read()):
                return
        # created as a plain write creates (0666 less the umask), as aiedsl.files.new_temp
        # does: mkstemp's 0600 made the file private (a reviewer); that module needs numpy
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        temp = os.path.join(os.path.dirname(real),
                            f".{os.path.basename(real)}.{secrets.token_hex(4)}.aiedsl-tmp")
        fd = os.open(temp, flags, 0o666)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(json.dumps(stats, indent=1) + "\n")
            os.replace(temp, real)
        except BaseException:
            os.unlink(temp)
            raise
    except (OSError, ValueError, KeyboardInterrupt):
        pass


def _says_stopped(text: str) -> bool:
    """Does a stats file's ``text`` say its run was interrupted?"""
    try:
        error = json.loads(text).get("error") or {}
    except (ValueError, AttributeError):
        return False
    return isinstance(error, dict) and error.get("rule") == "interrupted"
