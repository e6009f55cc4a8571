"""What the command-line modules share (the modules of :mod:`aiedsl.cli`): the
options several commands take, written once so their help reads the same everywhere, printing
a line, and loading a design file.

Only typer and the standard library load here: ``aiedsl --help`` imports this module.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any, List, Optional

import typer

from aiedsl.text import DEFINE_NAME, printable, short_numbers

CONTEXT = {"help_option_names": ["-h", "--help"]}
"""Click settings of every command group: ``-h`` is help too."""


def _one_value_each(value: Optional[List[str]]) -> Optional[List[str]]:
    """``-D`` takes NAME=VALUE pairs, and gives a name one value: ``-D W`` and
    ``-D N=8192 -D N=2048`` are refused as typer refuses any bad option value (exit 2, with the
    usage lines), before the design loads; the last of two values silently won. The same value
    twice is no conflict."""
    seen: dict[str, str] = {}
    for pair in value or []:
        name, sep, given = pair.partition("=")
        if not sep or not DEFINE_NAME.match(name):
            raise typer.BadParameter(f"-D {short_numbers(printable(pair))} is not NAME=VALUE: "
                                     "write e.g. -D M=1024, M a define() of the design")
        if seen.setdefault(name, given) != given:
            raise typer.BadParameter(f"{name} is given two values, -D {name}={seen[name]} and "
                                     f"-D {pair}: give it once")
    return value


DefineOpt = typer.Option(None, "-D", "--define", metavar="NAME=VALUE", callback=_one_value_each,
                         help="Override a define() of the design, e.g. -D M=1024.")


def _known_device(value: Optional[str]) -> Optional[str]:
    """``--device`` names a device aiedsl knows, or the command stops as typer stops for any
    bad option value (exit 2), blaming the option rather than the design's ``@design`` line."""
    if value is not None:
        # here, not above: ``--help`` loads no pydantic
        from aiedsl.targets import DEVICES, device_hint

        if value not in DEVICES:
            hint = device_hint(value)
            raise typer.BadParameter(f"unknown device {value!r}; " + (
                f"did you mean {hint}?" if hint else f"known: {', '.join(DEVICES)}"))
    return value


def _named(kind: str) -> Any:
    """A callback refusing an empty ``kind`` name (``--stats "$UNSET"``) as typer refuses any bad
    option value (exit 2), before any work: empty, it named no file and was dropped unsaid, or
    was taken for the working directory and refused only after a build and a simulation."""

    def check(value: Optional[str]) -> Optional[str]:
        if value is not None and not value:
            raise typer.BadParameter(f"the {kind} name is empty (name a {kind}, or leave the "
                                     "option out)")
        return value

    return check


named_file = _named("file")
"""The callback of an option naming an output file (``--trace``, ``--stats``, ``map -o``)."""
named_dir = _named("directory")
"""The callback of an option naming a directory (``build -o``, ``run -o``, ``--peano``)."""


DeviceOpt = typer.Option(None, "--device", metavar="DEVICE", callback=_known_device,
                         help="Override the design's device (npu1, npu2, ...).")
NameOpt = typer.Option(None, "--name", metavar="NAME",
                       help="Which design, when the file declares several.")
SeedOpt = typer.Option(0, "--seed", min=0, metavar="N", help="Seed of the random inputs.")
InputsOpt = typer.Option(None, "--inputs", metavar="FILE",
                         help="Run on these inputs instead of random ones: a .npz of an array "
                         "per input tensor, by name (np.savez(FILE, A=a, B=b)).")
DesignArg = typer.Argument(..., metavar="DESIGN", help="The design file (.py).")
"""A command's design file, taken as a str: a Path reads "" as ".", which load_design then
called a directory, where it can say the path is empty."""
StatsOpt = typer.Option(None, "--stats", metavar="FILE", callback=named_file,
                        help="Write the results and timing as JSON (aiedsl.cli.run_stats).")
# Metavars name what a value is (the names the help texts and the README use); typer's own
# would show its type ("<int range>", "<path>").


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised as Ctrl-C is, so that every cleanup Ctrl-C runs runs for them
    too: ``signal`` is its number (the command exits 128 + it)."""

    def __init__(self, signal: int) -> None:
        super().__init__()
        self.signal = signal


def say(text: str = "") -> None:
    """Print a line to stdout as it is: no markup, no wrapping (piped output stays greppable).

    A reader that has gone (``aiedsl sim d.py | head -1``) does not stop the command: what it
    says goes nowhere from then on, and the exit code stays the result's (click's own handling
    of the broken pipe exited 1, a FAIL's code, for a PASS). Standard output that cannot be
    written otherwise (``> /dev/full``: the disk is full) stops it with :func:`stdout_failed`'s
    error, said once: what is still buffered goes nowhere.
    """
    try:
        sys.stdout.write(text + "\n")
    except BrokenPipeError:
        reader_gone()
    except OSError as e:
        reader_gone()
        raise stdout_failed(e) from e


def stdout_failed(e: OSError) -> Exception:
    """The error of standard output that could not be written (a DesignError: one line, exit
    2, as for any output the system refuses)."""
    from aiedsl.errors import DesignError

    return DesignError("standard output",
                       f"cannot write standard output: {e.strerror or e}",
                       fix="send standard output where it can be written "
                       "(> FILE, or > /dev/null to discard it)")


STDOUT_CLOSED = ("standard output is closed (>&-), so aiedsl could say nothing of what it does; "
                 "to discard what it prints, send it to /dev/null (> /dev/null)")
"""Why a command started with standard output closed stops before any work."""


def tell(text: str) -> None:
    """Write ``text`` to standard error; a reader that has gone (``2>&1 | head``) changes
    nothing, least of all the exit code the message comes with."""
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, AttributeError):  # AttributeError: no standard error at all (None)
        pass


def reader_gone() -> None:
    """Point standard output at the null device: its reader closed the pipe (or it cannot be
    written), and what is still to be written must go somewhere without failing again."""
    import os

    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, sys.stdout.fileno())
    os.close(null)


class _ReaderMayLeave(io.TextIOWrapper):
    """Standard output whose reader may close the pipe early (``aiedsl sim d.py | head -1``):
    a write or flush that meets the closed pipe points standard output at the null device
    (:func:`reader_gone`) and goes on, as :func:`say` does, whoever wrote: a ``print()`` in a
    design's or a kernel's reference met the pipe first as often as aiedsl did, and its
    ``BrokenPipeError`` was blamed on the user's line (exit 2 for a run that passed). Any other
    error (``> /dev/full``) is raised as it is, for the command line to say (click probes the
    stream with writes whose errors it ignores, so nothing else may change here)."""

    replaced: Any = None
    """The stream it replaced (:func:`reader_may_leave`), kept alive: collected, it would close
    the buffer both write into."""

    def write(self, s: str) -> int:
        """Write ``s``; to the null device once the reader has gone."""
        try:
            return super().write(s)
        except BrokenPipeError:
            reader_gone()
            return len(s)  # it would go to the null device now: nowhere, as the rest

    def flush(self) -> None:
        """Flush; once the reader has gone, what is buffered goes to the null device."""
        try:
            super().flush()
        except BrokenPipeError:
            reader_gone()
            super().flush()


def reader_may_leave(stream: Any) -> Any:
    """``stream`` (the program's standard output, as Python opened it) as one whose closed
    pipe costs nothing (:class:`_ReaderMayLeave`), over the same buffer and with the same
    settings but for characters its encoding lacks, written escaped (``\\u8bbe``); anything
    else (a test's capture, a replaced stream) as it is."""
    if type(stream) is not io.TextIOWrapper:
        return stream
    stream.flush()
    # a character the encoding lacks (a path's, under Windows' code page when the output is
    # redirected) is written escaped, as standard error writes it: strict, a build that
    # succeeded ended in exit 70 (a Windows tester)
    errors = "backslashreplace" if stream.errors == "strict" else stream.errors
    wrapped = _ReaderMayLeave(stream.buffer, encoding=stream.encoding, errors=errors,
                              line_buffering=stream.line_buffering,
                              write_through=stream.write_through)
    wrapped.replaced = stream
    return wrapped


def no_color() -> bool:
    """``NO_COLOR`` is set and not empty (https://no-color.org): what aiedsl draws on a terminal
    (the resource table, progress bars) carries no ANSI styles at all. rich alone drops only
    the colours and keeps bold and italic."""
    import os

    return bool(os.environ.get("NO_COLOR"))


def load(design: str | Path, define: Optional[List[str]], device: Optional[str],
         name: Optional[str]) -> Any:
    """Load ``design`` with the command line's ``-D`` defines, ``--device`` and ``--name``."""
    from aiedsl.loader import load_from_command_line

    return load_from_command_line(design, define or [], device, name)
