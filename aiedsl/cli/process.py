"""The ``aiedsl`` program as a process: its entry points (:func:`run`, :func:`main`), the
standard streams it was started without, SIGTERM and SIGHUP handled as Ctrl-C, and exit codes.

Every :class:`~aiedsl.errors.DesignError` is printed as is, without a traceback, and exits 2
(``AIEDSL_TRACEBACK=1`` prints the traceback before it, the exit code unchanged); an output
path the system refuses is one too (:func:`aiedsl.files.os_error`). A
:class:`~aiedsl.errors.ToolchainError` exits 4
(a tool is missing) or 5 (a tool failed). A usage error prints one ``error:`` line and the
command's usage, and exits 2. Ctrl-C exits 130, SIGTERM and SIGHUP 128 + their number.
"""

from __future__ import annotations

import atexit
import os
import re
import sys
from typing import Any, List, Optional

import typer

from aiedsl.cli.commands import app
from aiedsl.cli.common import STDOUT_CLOSED, Stopped, reader_may_leave, stdout_failed, tell
from aiedsl.text import printable, short_numbers, whole_ints


def _click_class(name: str) -> type:
    """A click exception class by name. typer re-exports some of click's exceptions and, from
    0.26, vendors click itself; its BadParameter's ancestors are the same classes either way."""
    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == name)


_VALIDATOR_WORDS = ((re.compile(r"Value error, "), ""),
                    (re.compile(r"Input should be greater than or equal to (\S+)"),
                     r"it must be \1 or more"),
                    (re.compile(r"Input should be less than or equal to (\S+)"),
                     r"it must be \1 or less"))
"""What typer (0.29: it validates options with pydantic) says of a refused value, in aiedsl's
words: ``'gpu' is not one of 'auto', 'npu', 'sim'``, ``it must be 0 or more``."""


def plain_usage(text: str) -> str:
    """A usage error's text without the validator's words (a CLI tester's find).

    >>> plain_usage("Invalid value for '--seed': Input should be greater than or equal to 0")
    "Invalid value for '--seed': it must be 0 or more"
    """
    for pattern, words in _VALIDATOR_WORDS:
        text = pattern.sub(words, text)
    return text


def _usage_error(e: Any) -> int:
    """Print a click usage error as one ``error:`` line, then the usage; return its exit code."""
    ctx = getattr(e, "ctx", None)
    lines = [f"error: {plain_usage(e.format_message())}"]
    if ctx is not None:
        lines += [ctx.get_usage(), f"Try '{ctx.command_path} -h' for help."]
    tell("\n".join(lines) + "\n")
    return int(e.exit_code)


_INTERRUPTED = 130
"""The exit code of a command stopped by Ctrl-C (128 + SIGINT, as shells report it)."""
_STOPPING = ("SIGTERM", "SIGHUP")
"""Signals that stop a command as Ctrl-C does (a tool killed, the build directory left
rebuildable), exiting 128 + the signal's number."""


class _Stop:
    """SIGTERM and SIGHUP raised as KeyboardInterrupt while a command runs, so every cleanup
    Ctrl-C runs (a tool's process group killed, the marker updated, the lock released) runs for
    them too; without it the default action killed aiedsl and left its tool writing."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self.pid = os.getpid()
        self.previous: dict[int, Any] = {}

    def __enter__(self) -> "_Stop":
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():  # else signal() refuses
            for name in _STOPPING:
                if hasattr(signal, name):
                    number = getattr(signal, name)
                    self.previous[number] = signal.signal(number, self._raise)
        return self

    def __exit__(self, *exc: object) -> None:
        import signal

        for number, handler in self.previous.items():
            signal.signal(number, handler)

    def _raise(self, number: int, frame: Any) -> None:
        import signal

        if os.getpid() != self.pid:  # a forked child inherited this: die as the signal says
            signal.signal(number, signal.SIG_DFL)
            os.kill(os.getpid(), number)
            return
        if self.signal is None:  # a second one would break off the cleanup the first started
            self.signal = number
            raise Stopped(number)

    def exit_code(self) -> int:
        return _INTERRUPTED if self.signal is None else 128 + self.signal


_NO_COMPLETION = "_AIEDSL_COMPLETION_IS_OFF"
"""The environment variable click reads for shell completion, named so that nothing sets it."""

INTERNAL_ERROR = 70
"""The exit code of aiedsl's own failure (sysexits.h's EX_SOFTWARE): an exception no design
mistake explains. 1 says a result differs from the reference, 2 a mistake of the user's."""


def internal_error_text(e: BaseException) -> str:
    """The one error the command line prints for aiedsl's own failure ``e``.

    >>> internal_error_text(KeyError("x")).splitlines()[0]
    "error [internal]: aiedsl failed: KeyError: 'x'"
    """
    from aiedsl.source_loc import user_line

    said = str(e).strip().splitlines()
    what = f"{type(e).__name__}: {said[0]}" if said else type(e).__name__
    at = user_line(e.__traceback__)
    if at is not None and not at.file.startswith("<"):  # a design's line led there: what
        # to change to go round it meanwhile (a command's code has a file; "-c" code is no design)
        what += f" (in a call from {at.file}:{at.line})"
    return (f"error [internal]: aiedsl failed: {what}\n"
            "  fix: this is a failure of aiedsl itself (or of its environment: a locale that "
            "cannot print a path, a full disk), not a mistake in the design; "
            "AIEDSL_TRACEBACK=1 shows where it happened, for a report")


def _traceback(e: BaseException) -> str:
    """``AIEDSL_TRACEBACK=1``'s text for DesignError ``e``: Python's traceback (its causes
    first), whose last line names the error's class only, as the message follows it as is."""
    import traceback

    te = traceback.TracebackException.from_exception(e)
    text = "".join(te.format())
    only = "".join(te.format_exception_only())
    if text.endswith(only):
        text = text[:-len(only)]
    return text + f"{type(e).__module__}.{type(e).__qualname__}:\n"


def _aborted(argv: Optional[List[str]] = None, stop: "_Stop | None" = None) -> None:
    """Say the command was stopped; given the ``stop`` that stopped it, also say so in the
    ``--stats`` file of a ``sim`` or ``run`` stopped before its command's work wrote it
    (:mod:`aiedsl.cli.stopped_stats`: while the command line loaded its parts)."""
    tell("aborted\n")  # after SIGHUP the terminal may be gone: tell says nothing then
    if stop is not None:
        from aiedsl.cli.stopped_stats import write_stopped_stats

        write_stopped_stats(sys.argv[1:] if argv is None else argv, stop.signal)


def _missing_streams() -> bool:
    """Give the process the standard streams it was started without (``>&-``, ``2>&-``): the
    null device in their file descriptors, before anything opens a file that would take one
    (a tool aiedsl runs would write into it); True when standard output was one of them."""
    if all(stream is not None for stream in (sys.stdin, sys.stdout, sys.stderr)):
        return False
    while True:  # the lowest free descriptor each time: 0, 1 and 2 first
        fd = os.open(os.devnull, os.O_RDWR)
        if fd > 2:
            os.close(fd)
            break
    closed = sys.stdout is None
    if sys.stdout is None:
        sys.stdout = open(1, "w", closefd=False)
    if sys.stderr is None:
        sys.stderr = open(2, "w", closefd=False)
    return closed


def _from_echo(e: OSError) -> bool:
    """Did ``e`` come from click's ``echo`` (typer's ``--help``, written to standard output)?
    The standard output's own write or flush (:func:`~aiedsl.cli.common.reader_may_leave`)
    may be the last frame: the one that called it is looked at."""
    ours = {getattr(type(sys.stdout), name).__code__ for name in ("write", "flush")
            if hasattr(getattr(type(sys.stdout), name), "__code__")}
    frames = []
    tb = e.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code)
        tb = tb.tb_next
    while frames and frames[-1] in ours:
        frames.pop()
    return bool(frames) and frames[-1].co_name == "echo"


def _stdout_failing() -> bool:
    """Does standard output refuse what is waiting in its buffer (``> /dev/full``)?"""
    try:
        sys.stdout.flush()
    except OSError:
        return True
    return False


def _interrupted(e: BaseException) -> bool:
    """Is ``e`` Ctrl-C (or a stopping signal) that a library wrapped in an error of its own?
    pydantic's serializer turns a KeyboardInterrupt raised inside a field serializer into a
    PydanticSerializationError whose text alone keeps it ("...: KeyboardInterrupt:")."""
    seen: set[int] = set()
    at: BaseException | None = e
    while at is not None and id(at) not in seen:
        seen.add(id(at))
        if isinstance(at, KeyboardInterrupt) or (
                type(at).__name__ == "PydanticSerializationError"
                and "KeyboardInterrupt" in str(at)):
            return True
        at = at.__cause__ or at.__context__
    return False


def given_defines(argv: List[str]) -> List[tuple[str, str]]:
    """The ``-D NAME=VALUE`` pairs of a command line, in order (``-D N=8``, ``-DN=8``,
    ``--define N=8``, ``--define=N=8``)."""
    out: List[tuple[str, str]] = []
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg in ("-D", "--define"):
            text = argv[i + 1] if i + 1 < len(argv) else ""
        elif arg.startswith("--define="):
            text = arg[len("--define="):]
        elif arg.startswith("-D") and len(arg) > 2:
            text = arg[2:]
        else:
            continue
        name, eq, value = text.partition("=")
        # as the loader reads them: `-D "N =4096"` is no pair (the loader refuses it), and a
        # value's spaces are its own
        if eq and name and name.strip() == name:
            out.append((name, value))
    return out


def given_device(argv: List[str]) -> str | None:
    """The ``--device`` a command line gives (the last, as typer takes it), None without one."""
    device = None
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--device" and i + 1 < len(argv):
            device = argv[i + 1]
        elif arg.startswith("--device="):
            device = arg[len("--device="):]
    return device


def with_defines(text: str, e: Exception, argv: List[str]) -> str:
    """``text`` (error ``e`` as printed) with a line naming each ``-D`` whose value the error
    quotes (``moves 3000 elements`` after ``-D N=3000``): the value the message blames came from
    the command line, not from the design file its line points into; else, under a design's
    error with numbers, one line saying the ``-D`` values and ``--device`` given. Put before the
    fix."""
    from aiedsl.errors import DesignError

    if not isinstance(e, DesignError):
        return text
    said = " ".join(str(part) for part in (e.message, e.limit, e.found) if part)
    # a one-character value (COLS=8) turns up in too many messages to be told apart, unless it
    # is the whole value found (-D M=0: "found: 0"); one the message names with its define (a
    # map's `TILE=2048`, `-D N=8192.7 is not a valid int`) needs no line
    notes = [short_numbers(f"  -D {name}={value}: {name}'s value, given on the command line")
             for name, value in dict.fromkeys(given_defines(argv))  # (one given twice: once)
             if (len(value) > 1 or str(e.found or "").strip() == value)
             and f"{name}={value}" not in text
             and re.search(rf"(?<![\w.]){re.escape(value)}(?![\w.])", said)]
    # a number a design's error quotes may follow from a define without being its value (-D
    # H=50: "moves 32000 elements"), and a --device replaces the design's own: what the command
    # line gave is said, once, unless the message names it (testers). Not for an error that
    # names a define itself, nor for the user's own Python (a SyntaxError), nor for a tool's
    # (no design line)
    names_one = e.rule == "define" or re.search(r"(?<![\w-])-D ?\w", text) is not None
    defines = dict.fromkeys(given_defines(argv))
    # a one-character value the message quotes (-D ROWS=5: "8 columns x 5 rows") is one of
    # the numbers it may follow from (a tester: no line said where the 5 came from), and so is
    # any number when the design line it points at uses a define given (-D H=2: "loop(0)" at
    # loop(H - 2), another tester; a herd of a plain H = 5 said nothing of -D N=10240, a third)
    quoted = any(re.search(rf"(?<![\w.]){re.escape(v)}(?![\w.])", said) for _, v in defines)
    uses = _line_uses(e, [name for name, _ in defines]) and re.search(r"\d", said) is not None
    given = [f"-D {name}={value}" for name, value in defines
             if not notes and not names_one and (re.search(r"\d\d", said) or quoted or uses)
             and f"{name}={value}" not in text]
    device = given_device(argv)
    if device is not None and f"--device {device}" not in text:
        given.append(f"--device {device}")
    if given and e.loc is not None and e.rule != "python error":
        notes.append(short_numbers(printable(f"  with {' '.join(given)}, given on the command "
                                             "line")))
    if not notes:
        return text
    lines = text.split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith("  fix: ")), len(lines))
    return "\n".join(lines[:at] + notes + lines[at:])


def _line_uses(e: Exception, names: List[str]) -> bool:
    """Whether the design line error ``e`` points at names one of the defines ``names``."""
    import linecache

    loc = getattr(e, "loc", None)
    if loc is None or not names:
        return False
    try:
        text = linecache.getline(loc.path, loc.line)
    except (OSError, ValueError, TypeError):
        return False
    return any(re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", text) for n in names)


def main(argv: Optional[List[str]] = None) -> None:
    """Console entry point: run the app; usage errors exit 2, DesignErrors their own code."""
    if _missing_streams():  # nowhere to say what it does: nothing is done
        tell(f"error [standard output]: {STDOUT_CLOSED}\n")
        sys.exit(2)
    # (checks after the load may quote a huge int too)
    with _Stop() as stop, whole_ints():
        try:
            # completion is off: click would still obey _AIEDSL_COMPLETE, left in an
            # environment, with "Shell ... not supported", exit 1, and run nothing
            code = app(args=argv, prog_name="aiedsl", standalone_mode=False,
                       complete_var=_NO_COMPLETION)
        except typer.Abort as e:
            stopped = isinstance(e.__context__, KeyboardInterrupt)
            _aborted(argv, stop if stopped else None)
            sys.exit(stop.exit_code() if stopped else 1)
        except KeyboardInterrupt:
            _aborted(argv, stop)
            sys.exit(stop.exit_code())
        except OSError as e:
            if not _from_echo(e) and not _stdout_failing():
                raise
            # what typer itself prints (--help) to standard output that cannot be written
            tell(f"{stdout_failed(e)}\n")
            sys.stdout = open(os.devnull, "w")  # nothing more to lose there, nor to say twice
            sys.exit(2)
        except Exception as e:
            if _interrupted(e):
                _aborted(argv, stop)
                sys.exit(stop.exit_code())
            if isinstance(e, _click_class("ClickException")):
                sys.exit(_usage_error(e))
            from aiedsl.errors import DesignError, exit_code_of

            if not isinstance(e, DesignError):
                # aiedsl's own failure (a design's exceptions arrive as DesignErrors): its own
                # exit code, not 1, which says a result differs from the reference
                if os.environ.get("AIEDSL_TRACEBACK") == "1":
                    tell(_traceback(e))
                tell(internal_error_text(e) + "\n")
                sys.exit(INTERNAL_ERROR)
            from aiedsl.user_errors import command_line_text

            traced = os.environ.get("AIEDSL_TRACEBACK") == "1"
            if traced:
                tell(_traceback(e))  # only added: the message and the exit code stay
            # as is (never re-wrapped, so messages stay greppable), a user's own exception
            # saying that AIEDSL_TRACEBACK=1 shows its traceback (or that it is above)
            tell(with_defines(command_line_text(e, traced), e,
                              sys.argv[1:] if argv is None else argv) + "\n")
            sys.exit(exit_code_of(e))
        if code == _INTERRUPTED:
            # typer (0.2x) turns Ctrl-C in a command into Exit(130), which standalone_mode=False
            # returns as a code instead of raising: no aiedsl command exits 130 by itself.
            _aborted(argv, stop)
            code = stop.exit_code()
        if isinstance(code, int) and code:
            sys.exit(code)


def run() -> None:
    """The ``aiedsl`` program: :func:`main`, then leave the process at once.

    Once the output is flushed and the exit functions have run, the interpreter's teardown
    (freeing every numpy and pydantic object one by one) would add a tenth of a second to every
    command; ``os._exit`` skips it. Library callers use :func:`main`, which only raises
    ``SystemExit``.
    """
    # the process is the program's: a print() of the user's code meeting a closed pipe is
    # the reader's leaving, not the user's error (main() alone, a library's call, keeps the
    # stream it is given)
    sys.stdout = reader_may_leave(sys.stdout)
    try:
        main()
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, (int, type(None))):
            tell(f"{e.code}\n")
    # what asked to be cleaned up at exit still is (a folder of this process's own host
    # kernel libraries, where the cache could not be written), before the last flush: what a
    # handler says is written too. Only the teardown is skipped
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # the reader left before the last lines: the result still counts
        pass
    except OSError as e:  # the last lines could not be written (a full disk): said, not lost
        tell(f"{stdout_failed(e)}\n")
        code = code or 2
    try:
        sys.stderr.flush()
    except OSError:
        pass
    os._exit(code)

