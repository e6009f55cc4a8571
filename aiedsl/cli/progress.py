"""What the CLI draws while long work runs: a build's compile steps, a simulation's kernel
calls. Drawn on standard error, only when it is a terminal, and wiped when the work ends.
Piped or redirected output is never touched; on a terminal, lines printed meanwhile (a
reference may print) appear above the bar."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, Callable

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from aiedsl.cli.common import no_color
from aiedsl.ir.program import calls_per_run

DELAY = 0.5
"""Seconds a simulation runs before its progress line appears (most take less)."""
POLL = 0.1
"""Seconds between two looks at the running machine."""
LONG_RUN = 10_000_000
"""Kernel calls per run from which a simulation is said, before it starts, to be long (a
note, piped output too: a CI log then says why the job does not end). The simulator makes a
few thousand a second (about 1,100 of gemm_bf16's 64x64x64 matmuls, 9,000 of passthrough's
copies: a reviewer), so this many takes from half an hour to hours;
``aiedsl.sim.hang_run.WHOLE_CALLS`` stops a whole-run hang check there too."""


def stderr_console() -> Console:
    """A console on standard error that is a terminal exactly when standard error is one:
    ``FORCE_COLOR`` and the like must not draw bars into a CI log or a captured stream.
    ``NO_COLOR`` draws them without styles."""
    return Console(stderr=True, force_terminal=sys.stderr.isatty(),
                   color_system=None if no_color() else "auto")


def _bar(console: Console) -> Progress:
    # Lines printed to stdout meanwhile go above the bar only when stdout is the same kind of
    # thing, a terminal: rich prints them through the bar's console (stderr), which must never
    # happen to piped output.
    shared = console.is_terminal and sys.stdout.isatty()
    return Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                    console=console, transient=True, redirect_stdout=shared,
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


FREED = {"compute": "kernels", "dram": "DRAM", "dma": "DMAs", "runtime": "runtime"}
"""The progress line's short names of the kinds of resource a run made free measures
(:mod:`aiedsl.sim.freed`)."""


def describe(stage: str, calls: int, total: int) -> str:
    """The progress line's words for a simulation at ``stage`` (see :data:`aiedsl.sim.Watch`).

    >>> describe("run", 1536, 262144)
    'simulating: 1,536 of 262,144 kernel calls'
    >>> describe("free dram", 1536, 262144)
    'timing again, DRAM made free: 1,536 of 262,144 kernel calls'
    """
    if stage == "check":
        return "comparing with the numpy reference"
    what = "simulating"
    if stage.startswith("free "):  # a run again, to measure what limits the first
        what = f"timing again, {FREED[stage[5:]]} made free"
    if total:
        return f"{what}: {calls:,} of {total:,} kernel calls"
    return what


def long_run(calls: int) -> str:
    """The note said before simulating a run of :data:`LONG_RUN` kernel calls or more.

    >>> long_run(2**63 - 1)[:60]
    'note: one run makes 9,223,372,036,854,775,807 kernel calls; '
    """
    return (f"note: one run makes {calls:,} kernel calls; the simulator makes a few thousand "
            "a second, so this simulation may not end for hours, or at all (Ctrl-C stops it; "
            "aiedsl check checks the start of the run for hangs)")


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
        self.started = 0.0
        """When the watcher first heard of a run (``time.monotonic``); 0 before."""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __call__(self, stage: str, machine: Any) -> None:
        if machine is not self.machine:
            self.total = calls_per_run(machine.design)
            if not self.started and self.total >= LONG_RUN:
                self.console.print(long_run(self.total), markup=False, highlight=False,
                                   soft_wrap=True)
            self.started = self.started or time.monotonic()
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
        # Nothing is drawn until a simulation has run for DELAY: not while a build compiles
        # first, and never for a run on the NPU, which tells the watcher nothing.
        while not self.started or time.monotonic() - self.started < DELAY:
            if self._stop.wait(POLL / 2):
                return
        with _bar(self.console) as bar:
            task = bar.add_task("simulating", total=None)
            bar.tasks[0].start_time = self.started  # elapsed counts from the run's start
            while True:
                self._show(bar, task)
                if self._stop.wait(POLL):
                    break

    def _show(self, bar: Progress, task: TaskID) -> None:
        m, stage, total = self.machine, self.stage, self.total
        running = stage != "check" and total > 0  # a run's calls: the first's, or one again
        bar.update(task, description=describe(stage, m.kernel_calls, total),
                   completed=m.kernel_calls if running else 0,
                   total=total if running else None)
