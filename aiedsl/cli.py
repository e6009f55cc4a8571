"""The ``aiedsl`` command line: thin wrappers that parse arguments, call the library, print.

Every :class:`~aiedsl.errors.DesignError` is printed as is, without a traceback, and exits 2
(``AIEDSL_TRACEBACK=1`` prints the traceback before it, the exit code unchanged); an output
path the system refuses is one too (:func:`aiedsl.files.os_error`). A
:class:`~aiedsl.errors.ToolchainError` exits 4
(a tool is missing) or 5 (a tool failed). A usage error prints one ``error:`` line and the
command's usage, and exits 2.

Only typer and the standard library load at start-up: each command imports what it needs, so
``aiedsl --help`` answers at once.
"""

from __future__ import annotations

import math
import os
import sys
import time
from enum import Enum
from pathlib import Path
from typing import Any, List, Optional, Sequence

import typer

from aiedsl.cli_common import (
    CONTEXT, STDOUT_CLOSED, DefineOpt, DesignArg, DeviceOpt, NameOpt, SeedOpt, StatsOpt, load,
    named_dir, named_file, no_color, say, stdout_failed, tell,
)
from aiedsl.kernel_cli import kernel_app
from aiedsl.version import __version__

# rich_markup_mode=None: help is plain text, so "[default: ...]" in a help text stays as written.
app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False,
                  context_settings=CONTEXT,
                  help="Build, check and run AIE2 NPU designs written in aiedsl.")


class Kernels(str, Enum):
    """What runs a kernel call in the simulator."""

    reference = "reference"
    native = "native"


class Target(str, Enum):
    """Where ``aiedsl run`` runs."""

    auto = "auto"
    npu = "npu"
    sim = "sim"


# -- printing -------------------------------------------------------------------------------------


def _print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """A rich table on a terminal; piped, plain aligned columns that are never wrapped. Either
    goes out through :func:`say`, which handles a standard output that cannot be written."""
    if not sys.stdout.isatty():
        widths = [max(len(str(r[i])) for r in [columns, *rows]) for i in range(len(columns))]
        say(title)
        for r in [columns, *rows]:
            say("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
        return
    from rich.console import Console

    console = Console(highlight=False, markup=False, color_system=None if no_color() else "auto")
    with console.capture() as drawn:
        console.print(_rich_table(title, columns, rows))
    say(drawn.get().rstrip("\n"))


def _rich_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> Any:
    """The rich Table of :func:`_print_table`. On a narrow terminal cells wrap, and a word
    wider than its column (a kernel name, a path) is folded onto the next line, never cut to
    an ellipsis: the names are what the table is read for."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, title_justify="left")
    for c in columns:
        table.add_column(c, overflow="fold", no_wrap=False)
    for row in rows:
        table.add_row(*(Text(str(cell)) for cell in row))  # plain text: no markup read
    return table


# -- commands -------------------------------------------------------------------------------------


@app.callback(invoke_without_command=True)
def _root(ctx: typer.Context,
          version: bool = typer.Option(False, "--version", is_eager=True,
                                       help="Print aiedsl's version and exit.")) -> None:
    if version:
        say(f"aiedsl {__version__}")
        raise typer.Exit()
    if ctx.invoked_subcommand is None:
        say(ctx.get_help())
        raise typer.Exit()


@app.command()
def build(
    design: Path = DesignArg,
    define: Optional[List[str]] = DefineOpt,
    device: Optional[str] = DeviceOpt,
    name: Optional[str] = NameOpt,
    # str, not Path: Path reads "" as ".", and the empty value could not be refused
    output: Optional[str] = typer.Option(None, "-o", "--output", metavar="DIR",
                                         callback=named_dir,
                                         help="Output directory [default: build/<design>]."),
    compile_: bool = typer.Option(False, "--compile", help="Also compile the kernels with "
                                  "Peano and the design with aiecc into aie.xclbin and insts.bin."),
    # str, not Path: Path reads "" as "."
    peano: Optional[str] = typer.Option(None, "--peano", metavar="DIR", callback=named_dir,
                                        help="Peano (llvm-aie) install directory, for --compile "
                                        "[default: $PEANO_INSTALL_DIR]."),
    no_lower: bool = typer.Option(False, "--no-lower", help="Do not lower with mlir-aie's "
                                  "aie-opt and aie-translate even when they are found."),
) -> None:
    """Check DESIGN and write aie.mlir, kernels/*.cc, design.json, report.txt, map.svg, build.sh.

    When mlir-aie's aie-opt and aie-translate are found, also lower the design with mlir-aie's
    own passes into physical.mlir, npu.mlir and insts.bin, and draw report.txt and map.svg from
    that lowering. With --compile, then run Peano and aiecc (skipped when nothing changed). Exit
    codes: 2 design error, 4 a tool is missing (the MLIR and C++ are written), 5 a tool failed.
    """
    from aiedsl.api import building

    if peano is not None and not compile_:  # before any work, as for any bad option value
        raise typer.BadParameter("only --compile runs Peano: add --compile, or leave --peano out",
                                 param_hint="'--peano'")
    start = time.perf_counter()
    handle = load(design, define, device, name)
    # the build directory held to the end of the compile: no other build swaps in between
    with building(handle, output=output, lower=not no_lower) as art:
        _report_build(art, start)
        if compile_:
            from aiedsl.toolchain.discover import find_tools

            _report_compile(art, _compile(art, find_tools(peano=peano)))


def _report_build(art: Any, start: float) -> None:
    """Print what ``aiedsl build`` wrote (and lowered) into ``art.path``."""
    _print_usage(art.design, art.usage)
    say(f"wrote {art.path}/: " + ", ".join(sorted(art.files)) +
        f" ({time.perf_counter() - start:.2f} s)")
    if art.lowering is not None:
        low = art.lowering
        drawn = ("; report.txt and map.svg are drawn from it" if low.physical is not None
                 else f"; report.txt and map.svg show aiedsl's plan: {low.note}")
        used = "; ".join(f"{k.split()[0]}: {v}" for k, v in low.tools.items())
        say(f"lowered with mlir-aie ({used})"
            + (", unchanged since the last build" if low.cached else "")
            + f": physical.mlir, npu.mlir, insts.bin{drawn}")


def _report_compile(art: Any, compiled: Any) -> None:
    """Print what ``aiedsl build --compile`` made (or found up to date) in ``art.path``."""
    if compiled.cached:
        say(f"aie.xclbin and insts.bin are up to date (nothing changed since they were "
            f"built; cache key {compiled.manifest['cache_key'][:12]}) "
            f"({compiled.seconds:.2f} s)")
    else:
        say(f"compiled {art.path}/aie.xclbin, insts.bin, manifest.json "
            f"({compiled.seconds:.1f} s; tool output in {art.path}/logs/)")
    pm = compiled.manifest.get("program_memory", {})
    if pm.get("used"):  # the fullest core first: the one nearest the limit
        fullest = sorted(pm["used"].items(), key=lambda kv: -kv[1])
        shown = [f"{name} {end / 1024:.1f}" for name, end in fullest[:4]]
        more = ", ..." if len(fullest) > 4 else ""
        say(f"program memory: {', '.join(shown)}{more} of "
            f"{pm['bytes_per_core'] / 1024:.0f} KB")


def _compile(art: Any, tools: Any) -> Any:
    from aiedsl.progress import compile_steps, stderr_console

    if tools.missing(compile_only=True):
        return art.compile(tools)  # raises, naming what is missing: no progress bar first
    bar, step = compile_steps(stderr_console())
    with bar:
        return art.compile(tools, step)


def _watched_run(art: Any, **options: Any) -> Any:
    """``art.run(**options)``, a simulation's progress drawn on a terminal's standard error."""
    from aiedsl.progress import SimProgress, stderr_console

    with SimProgress(stderr_console()) as watch:
        return art.run(watch=watch, **options)


@app.command()
def doctor(
    peano: Optional[str] = typer.Option(None, "--peano", metavar="DIR", callback=named_dir,
                                        help="Peano (llvm-aie) install directory "
                                        "[default: $PEANO_INSTALL_DIR]."),
) -> None:
    """Show which tools aiedsl found (Peano, aiecc, AIE API headers, aie-opt, aie-translate,
    pyxrt and an NPU).

    Exit code 0 when everything is there, 4 when something is missing.
    """
    from aiedsl.toolchain.discover import find_tools
    from aiedsl.toolchain.xrt import find_npu

    tools = find_tools(peano=peano)
    rows = [(t.name, "found" if t.path else "MISSING",
             f"{t.path} ({t.how})" if t.path else t.how, t.version or "-") for t in tools.all()]
    device, why = find_npu() if tools.pyxrt.path else (None, "needs pyxrt")
    rows.append(("NPU", "found" if device is not None else "MISSING", why, "-"))
    _print_table("aiedsl doctor", ("tool", "status", "where / how found", "version"), rows)
    missing = tools.missing()
    for t in missing:
        say(f"Missing {t.name}. To get it: {t.install}")
    if tools.lowering:
        spelling = tools.aiecc_spelling if tools.aiecc.path else None
        say("aie-opt and aie-translate found: aiedsl build lowers each design with mlir-aie "
            "(physical.mlir, npu.mlir, insts.bin) and draws map.svg and report.txt from it"
            + (f"; aiecc takes {' '.join(spelling.words())}" if spelling else ""))
    elif tools.aiecc.path:
        say(f"aiecc takes {' '.join(tools.aiecc_spelling.words())}")
    if missing or device is None:
        say("Without them aiedsl still checks, builds (MLIR and C++) and simulates "
            "designs: aiedsl run uses the simulator.")
        raise typer.Exit(4)
    say("everything aiedsl needs to compile and run on the NPU is here")


app.add_typer(kernel_app, name="kernel")  # kernel test, profile and cost: aiedsl/kernel_cli.py


@app.command()
def check(
    design: Path = DesignArg,
    define: Optional[List[str]] = DefineOpt,
    device: Optional[str] = DeviceOpt,
    name: Optional[str] = NameOpt,
) -> None:
    """Run every check on DESIGN and write nothing."""
    from aiedsl.checks import check_design

    handle = load(design, define, device, name)
    placed, usage = check_design(handle.ir)
    _print_usage(placed, usage)
    say(f"{handle.name}: all checks pass on {placed.device}")


def _svg_file(value: Optional[str]) -> Optional[str]:
    """``map -o``: a file name (:data:`named_file`) whose suffix, if it has one, is ``.svg``:
    ``-o x.png`` wrote SVG into a file every viewer opens as PNG. A folder is refused later,
    by the write (:func:`aiedsl.builddir.outfile.check_file`)."""
    named_file(value)
    if value and not value.endswith(("/", os.sep)) and not os.path.isdir(value):
        shown = Path(value)
        if shown.suffix and shown.suffix.lower() != ".svg":
            raise typer.BadParameter(
                f"aiedsl map draws SVG, not {shown.suffix}: name a .svg file, e.g. -o "
                f"{shown.with_suffix('.svg')}")
    return value


@app.command("map")
def map_(
    design: Path = DesignArg,
    define: Optional[List[str]] = DefineOpt,
    device: Optional[str] = DeviceOpt,
    name: Optional[str] = NameOpt,
    # str, not Path: Path drops a trailing "/", which says the user meant a folder
    output: Optional[str] = typer.Option(None, "-o", "--output", metavar="FILE",
                                         callback=_svg_file,
                                         help="The SVG file [default: build/<design>/map.svg]."),
) -> None:
    """Place, allocate and route DESIGN and draw map.svg only.

    A design over a limit still gets its map, with what is over drawn in red; the command then
    prints the error and exits 2. A build's map.svg is replaced only by a map of the design
    that build is of (the same defines and device): another configuration's is refused (exit
    2), and a map the build drew from mlir-aie's lowering is kept.
    """
    from aiedsl.checks import check_design, draft
    from aiedsl.codegen.tilemap import is_aiedsl_map, tile_map
    from aiedsl.emit import map_fits_build
    from aiedsl.errors import DesignError
    from aiedsl.builddir.outfile import write_file
    from aiedsl.targets import get_target
    from aiedsl.toolchain.commands import shell_line

    handle = load(design, define, device, name)
    path = output or str(Path("build") / handle.name / "map.svg")
    try:
        placed, usage = check_design(handle.ir)
        congested = None
        error = None
    except DesignError as e:
        placed, usage, congested = draft(handle.ir)  # placement errors still raise here
        error = e
    # Never over a file aiedsl did not write; in a build directory, listed in its marker, and
    # never a build's own map.svg with a map of another configuration.
    svg = tile_map(placed, get_target(placed.device), usage, congested)
    folder = str(Path(path).parent)
    rebuild = shell_line(["aiedsl", "build", str(design), *(w for d in define or [] for w in
                                                           ("-D", d)),
                          *(["--device", device] if device else []),
                          *(["--name", name] if name else []),
                          *(["-o", folder] if folder != str(Path("build") / handle.name)
                            else [])])
    written = write_file(path, svg, design=handle.name, ours=is_aiedsl_map, option="-o",
                         example=f"{handle.name}.svg",
                         fits=lambda home, rel: map_fits_build(home, rel, placed,
                                                               rebuild=rebuild,
                                                               example=f"{handle.name}.svg"))
    if not written:
        say(f"kept {path}: its build drew it from mlir-aie's lowering, of this same design "
            "(for aiedsl's own plan, give -o FILE)")
    else:
        say(f"wrote {path}" + (" (what is over its limit is red)" if error else ""))
    if error is not None:
        raise error


@app.command()
def inspect(
    insts: Path = typer.Argument(..., metavar="INSTS", help="An insts.bin (aiedsl's build or "
                                 "any IRON / mlir-aie build's)."),
) -> None:
    """List the NPU instruction stream INSTS: its header, every operation with its fields, and
    the shim DMA tasks (column, direction, channel, BD, buffer, pattern) and syncs it programs.

    Exit code 2 when INSTS is not a readable instruction stream.
    """
    from aiedsl.toolchain.insts import listing, read_insts

    for line in listing(read_insts(insts), insts.name):
        say(line)


def _clock(text: str) -> float:
    """``--clock``: a number of GHz from 0.001 to 100 (the API's 1 MHz to 100 GHz). typer's own
    range check said "Input should be less than or equal to 100" of ``nan``."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0.001 <= value <= 100):
        raise typer.BadParameter(f"{text} is not a core clock: give a number of GHz from 0.001 "
                                 "to 100 (1 MHz to 100 GHz), e.g. --clock 1.5")
    return value


@app.command()
def sim(
    design: Path = DesignArg,
    define: Optional[List[str]] = DefineOpt,
    device: Optional[str] = DeviceOpt,
    name: Optional[str] = NameOpt,
    seed: int = SeedOpt,
    trace: Optional[str] = typer.Option(None, "--trace", metavar="FILE", callback=named_file,
                                        help="Write a Chrome trace-event JSON (Perfetto)."),
    clock: Optional[float] = typer.Option(None, "--clock", metavar="GHZ", parser=_clock,
                                          help="Core clock in GHz, 0.001 to 100 [default: the "
                                          "device's]."),
    kernels: Kernels = typer.Option(Kernels.reference, "--kernels",
                                    help="reference (numpy) or native (each kernel's C++ built "
                                    "for the host)."),
    stats: Optional[str] = StatsOpt,
) -> None:
    """Run DESIGN on the simulator, compare with its numpy reference, and time it.

    Exit codes: 0 PASS, 1 FAIL, 2 design error, 3 deadlock.
    """
    from aiedsl.api import build as build_design

    handle = load(design, define, device, name)
    _check_stats(stats, handle.name, trace)
    art = build_design(handle, write=False)
    start = time.perf_counter()
    result = _watched_run(art, target="sim", seed=seed, trace=trace,
                          clock_hz=clock * 1e9 if clock else None, kernels=kernels.value)
    say(f"{handle.name} on {handle.ir.device}: simulated in "
        f"{time.perf_counter() - start:.2f} s (seed {seed}"
        + (", kernels built from their C++ for the host)" if kernels is Kernels.native else ")"))
    _report(result, trace, stats, handle, seed)


@app.command("run")
def run_(
    design: Path = DesignArg,
    define: Optional[List[str]] = DefineOpt,
    device: Optional[str] = DeviceOpt,
    name: Optional[str] = NameOpt,
    target: Target = typer.Option(Target.auto, "--target", help="auto (the NPU when there is "
                                  "one, else the simulator), npu or sim."),
    seed: int = SeedOpt,
    iters: int = typer.Option(1, "--iters", min=1, metavar="N", help="NPU: timed runs."),
    warmup: int = typer.Option(0, "--warmup", min=0, metavar="N", help="NPU: untimed runs first."),
    trace: Optional[str] = typer.Option(None, "--trace", metavar="FILE", callback=named_file,
                                        help="Simulator trace file."),
    output: Optional[str] = typer.Option(None, "-o", "--output", metavar="DIR",
                                         callback=named_dir,
                                         help="Build directory [default: build/<design>]."),
    stats: Optional[str] = StatsOpt,
) -> None:
    """Build DESIGN, then run it on the NPU when one is present and on the simulator otherwise.

    Exit codes: 0 PASS, 1 FAIL, 2 design error, 3 deadlock, 4 target or tool missing, 5 a tool
    failed.
    """
    from aiedsl.api import build as build_design

    handle = load(design, define, device, name)
    if trace and target is not Target.npu:
        from aiedsl.sim.trace import check_trace

        check_trace(trace, handle.name)  # before building: a refused trace writes nothing
    _check_stats(stats, handle.name, trace)
    art = build_design(handle, output=output)
    say(f"built {art.path}/")
    start = time.perf_counter()
    result = _watched_run(art, target=target.value, iters=iters, warmup=warmup, seed=seed,
                          trace=trace, say=say)
    where = "simulated" if result.target == "sim" else "ran on the NPU"
    say(f"{handle.name} on {handle.ir.device}: {where} in "
        f"{time.perf_counter() - start:.2f} s (seed {seed})")
    _report(result, trace if result.target == "sim" else None, stats, handle, seed)


def _check_stats(stats: Optional[str], design: str, trace: Optional[str]) -> None:
    """Refuse a ``--stats`` path before the run, as ``--trace`` is, and one that is the
    trace's too (the second writer found the first's file not its own, after the run)."""
    if not stats:
        return
    from aiedsl.errors import DesignError
    from aiedsl.run_stats import check_stats

    if trace and os.path.realpath(stats) == os.path.realpath(trace):
        raise DesignError("output file", f"--stats and --trace both name {stats}",
                          fix=f"give each its own file, e.g. --stats {design}.stats.json")
    check_stats(stats, design)


def _report(result: Any, trace: Optional[str], stats: Optional[str], handle: Any,
            seed: int) -> None:
    """Print a run's comparison and timing (rendered from its fields), write its ``--stats``
    file; exit 1 on FAIL."""
    for line in result.lines():
        say(line)
    if trace:
        say(f"trace: {trace} (open in https://ui.perfetto.dev)")
    if stats:
        from aiedsl.run_stats import run_stats, write_stats

        write_stats(run_stats(result, handle.name, handle.ir.device, seed=seed), stats)
        say(f"stats: {stats}")
    if not result.passed:
        raise typer.Exit(1)


def _print_usage(design: Any, usage: Any) -> None:
    from aiedsl.codegen.report import COLUMNS, report_rows
    from aiedsl.targets import get_target

    _print_table(f"{design.name} on {design.device}", COLUMNS,
                 report_rows(design, get_target(design.device), usage))
    if design.physical is not None:
        routes = design.physical.routes
        shared = len(design.physical.shared)
        say(f"routed {len(routes)} streams over {sum(len(r.wires) for r in routes)} wires"
            + (f"; {shared} fifo(s) in shared memory, no DMA" if shared else ""))


# -- entry point ----------------------------------------------------------------------------------


def _click_class(name: str) -> type:
    """A click exception class by name. typer re-exports some of click's exceptions and, from
    0.26, vendors click itself; its BadParameter's ancestors are the same classes either way."""
    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == name)


def _usage_error(e: Any) -> int:
    """Print a click usage error as one ``error:`` line, then the usage; return its exit code."""
    ctx = getattr(e, "ctx", None)
    lines = [f"error: {e.format_message()}"]
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
            raise KeyboardInterrupt

    def exit_code(self) -> int:
        return _INTERRUPTED if self.signal is None else 128 + self.signal


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


def _aborted() -> None:
    tell("aborted\n")  # after SIGHUP the terminal may be gone: tell says nothing then


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


def main(argv: Optional[List[str]] = None) -> None:
    """Console entry point: run the app; usage errors exit 2, DesignErrors their own code."""
    if _missing_streams():  # nowhere to say what it does: nothing is done
        tell(f"error [standard output]: {STDOUT_CLOSED}\n")
        sys.exit(2)
    with _Stop() as stop:
        try:
            code = app(args=argv, prog_name="aiedsl", standalone_mode=False)
        except typer.Abort as e:
            _aborted()
            sys.exit(stop.exit_code() if isinstance(e.__context__, KeyboardInterrupt) else 1)
        except KeyboardInterrupt:
            _aborted()
            sys.exit(stop.exit_code())
        except Exception as e:
            if isinstance(e, _click_class("ClickException")):
                sys.exit(_usage_error(e))
            from aiedsl.errors import DesignError

            if not isinstance(e, DesignError):
                raise
            if os.environ.get("AIEDSL_TRACEBACK") == "1":
                tell(_traceback(e))  # only added: the message and the exit code stay
            tell(str(e) + "\n")  # as is: never re-wrapped, so messages stay greppable
            sys.exit(getattr(e, "exit_code", 2))
        if code == _INTERRUPTED:
            # typer (0.2x) turns Ctrl-C in a command into Exit(130), which standalone_mode=False
            # returns as a code instead of raising: no aiedsl command exits 130 by itself.
            _aborted()
            code = stop.exit_code()
        if isinstance(code, int) and code:
            sys.exit(code)


def run() -> None:
    """The ``aiedsl`` program: :func:`main`, then leave the process at once.

    Once the output is flushed nothing is left to clean up, and the interpreter's teardown
    (freeing every numpy and pydantic object one by one) would add a tenth of a second to every
    command; ``os._exit`` skips it. Library callers use :func:`main`, which only raises
    ``SystemExit``.
    """
    try:
        main()
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, (int, type(None))):
            tell(f"{e.code}\n")
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


if __name__ == "__main__":
    run()
