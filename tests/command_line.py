"""The ``aiedsl`` command line run inside the test's own process: :func:`run_command`.

A ``python -m aiedsl.cli`` subprocess spends most of a second importing aiedsl, numpy, pydantic
and typer before its command starts; the suite ran 548 of them, a third of its CPU time.
:func:`run_command` runs the same program (:func:`aiedsl.cli.process.main`, what the console
script runs after setting up its process) on the same arguments, in the given working directory
and environment, its standard output and error captured, and hands back what
``subprocess.run(..., capture_output=True, text=True)`` would. Tests of what only a process of
its own shows (signals, closed standard streams, the exit path's flushing and exit functions,
the encoding Python reads from the environment as it starts, output a kernel's C++ writes to file
descriptors 1 and 2) still start one: :func:`run_process`.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
import warnings
from collections.abc import Mapping
from pathlib import Path

from aiedsl.cli.process import main


def run_command(*args: str | os.PathLike[str], cwd: str | os.PathLike[str] | None = None,
                env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``aiedsl ARGS`` run in this process, as ``subprocess.run([sys.executable, "-m",
    "aiedsl.cli", *args], cwd=cwd, env=env, capture_output=True, text=True)`` runs it: ``env``,
    when given, is the whole environment (as for a subprocess), and the exit code is the one the
    process would exit with. The program runs in a thread of its own (see below), so this
    process runs two: a native kernel's child is forked by aiedsl's fork server
    (:mod:`aiedsl.kernels.worker_server`), as in any process running several threads.

    >>> r = run_command("check", "designs/passthrough.py")  # doctest: +SKIP
    >>> r.returncode, r.stdout.splitlines()[-1]  # doctest: +SKIP
    (0, 'passthrough: all checks pass on npu1_1col')
    """
    argv = [os.fspath(a) for a in args]
    saved_env = dict(os.environ)
    saved = (os.getcwd(), sys.argv, sys.stdout, sys.stderr, sys.stdin)
    out, err = io.StringIO(), io.StringIO()
    codes: list[int] = []
    failed: list[BaseException] = []

    def program() -> None:
        with warnings.catch_warnings():
            fresh_warnings(err)
            run()

    def run() -> None:
        try:
            main(argv)
            codes.append(0)
        except SystemExit as e:
            codes.append(e.code if isinstance(e.code, int) else (0 if e.code is None else 1))
            if not isinstance(e.code, (int, type(None))):
                err.write(f"{e.code}\n")
        except BaseException as e:  # noqa: BLE001 (handed to the test's thread)
            failed.append(e)

    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        sys.argv = [str(Path(main.__code__.co_filename).parent / "__main__.py"), *argv]
        sys.stdout, sys.stderr, sys.stdin = out, err, io.StringIO()
        # A thread of its own, its one frame outside aiedsl filed under Python's own modules,
        # so the program's stack holds no frame aiedsl takes for the user's, as in a process
        # of its own: an error made where no design line called it (a tool's) would name the
        # test's line as the design's
        for f in (program, run):
            f.__code__ = f.__code__.replace(co_filename=threading.__file__)
        thread = threading.Thread(target=program, name="aiedsl command")
        thread.start()
        thread.join()
    finally:
        os.chdir(saved[0])
        sys.argv, sys.stdout, sys.stderr, sys.stdin = saved[1:]
        os.environ.clear()
        os.environ.update(saved_env)
    if failed:
        raise failed[0]
    code = codes[0]
    return subprocess.CompletedProcess([sys.executable, "-m", "aiedsl.cli", *argv], code,
                                       out.getvalue(), err.getvalue())


def fresh_warnings(stream: io.StringIO) -> None:
    """Python's warnings as a process just started has them, written to ``stream``: pytest
    records warnings instead of printing them, so a warning the command line would print to
    its standard error went nowhere, and a test that no warning is printed passed unasked.
    (Call inside ``warnings.catch_warnings()``, which puts pytest's back after.)"""
    warnings.resetwarnings()
    for action, category, module in (("default", DeprecationWarning, "__main__"),
                                     ("ignore", DeprecationWarning, ""),
                                     ("ignore", PendingDeprecationWarning, ""),
                                     ("ignore", ImportWarning, ""),
                                     ("ignore", ResourceWarning, "")):
        warnings.filterwarnings(action, category=category, module=module,  # type: ignore[arg-type]
                                append=True)

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: object = None, line: str | None = None) -> None:
        stream.write(warnings.formatwarning(message, category, filename, lineno, line))

    warnings.showwarning = show


def run_process(*args: str | os.PathLike[str], cwd: str | os.PathLike[str] | None = None,
                env: Mapping[str, str] | None = None, timeout: float | None = None
                ) -> subprocess.CompletedProcess[str]:
    """``aiedsl ARGS`` as a process of its own (``python -m aiedsl.cli``), for what only a
    process shows, or a command that may hang (``timeout`` seconds, then
    ``subprocess.TimeoutExpired``)."""
    return subprocess.run([sys.executable, "-m", "aiedsl.cli", *[os.fspath(a) for a in args]],
                          cwd=cwd, env=None if env is None else dict(env), timeout=timeout,
                          capture_output=True, text=True)
