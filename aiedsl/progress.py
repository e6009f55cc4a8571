"""What the CLI draws while long work runs: a build's compile steps, a simulation's kernel
calls. Drawn on standard error, only on a terminal, and wiped when the work ends, so what a
command prints (and what a script reads from it) is the same with or without it."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from aiedsl.ir.program import calls_per_run

DELAY = 0.5
"""Seconds a simulation runs before its progress line appears (most take less)."""
POLL = 0.1
"""Seconds between two looks at the running machine."""


def _bar(console: Console) -> Progress:
    # No redirection: rich would send what the program prints to stdout meanwhile (a user's
    # reference may print) to the bar's console, stderr; and the simulation's bar is started
    # from a thread of its own, which must not swap sys.stdout under the main one.
    return Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                    console=console, transient=True, redirect_stdout=False,
                    redirect_stderr=False)


def compile_steps(console: Console) -> tuple[Progress, Callable[[int, int, str], None]]:
    """A bar for a build's compile and the ``step(i, n, label)`` that moves it (as
    :func:`aiedsl.toolchain.compile.compile_build` reports its steps); use the bar as a
    context manager around the compile."""
    bar = _bar(console)
    task = bar.add_task("compiling", total=None)

    def step(i: int, n: int, label: str) -> None:
        bar.update(task, description=f"[{i + 1}/{n}] {label}", completed=i, total=n)

    return bar, step


def describe(stage: str, calls: int, total: int) -> str:
    """The progress line's words for a simulation at ``stage`` (see :data:`aiedsl.sim.Watch`).

    >>> describe("run", 1536, 262144)
    'simulating: 1,536 of 262,144 kernel calls'
    """
    if stage == "check":
        return "comparing with the numpy reference"
    if total:
        return f"simulating: {calls:,} of {total:,} kernel calls"
    return "simulating"


class SimProgress:
    """A :data:`aiedsl.sim.Watch` that draws a simulation's progress: the kernel calls made of
    those one invocation makes, then the comparison. Use it as a context manager around the
    run; it draws only when ``console`` is a terminal and the run outlasts :data:`DELAY`.

    A thread of its own looks at the machine every :data:`POLL` seconds, so the simulator's
    loop pays nothing for it (it only reads the machine's call counter).

    >>> with SimProgress(Console(stderr=True)) as watch:            # doctest: +SKIP
    ...     simulate(handle, watch=watch)
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self.stage = ""
        self.machine: Any = None
        self.total = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __call__(self, stage: str, machine: Any) -> None:
        if machine is not self.machine:
            self.total = calls_per_run(machine.design)
        self.machine, self.stage = machine, stage

    def __enter__(self) -> SimProgress:
        if self.console.is_terminal:
            self._thread = threading.Thread(target=self._draw, name="aiedsl-progress",
                                            daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _draw(self) -> None:
        start = time.monotonic()
        if self._stop.wait(DELAY):
            return
        with _bar(self.console) as bar:
            task = bar.add_task("simulating", total=None)
            bar.tasks[0].start_time = start  # elapsed counts from the run's start, not the bar's
            while True:
                self._show(bar, task)
                if self._stop.wait(POLL):
                    break

    def _show(self, bar: Progress, task: TaskID) -> None:
        m, stage, total = self.machine, self.stage, self.total
        calls = m.kernel_calls if m is not None else 0
        running = stage == "run" and total > 0
        bar.update(task, description=describe(stage, calls, total),
                   completed=calls if running else 0, total=total if running else None)
