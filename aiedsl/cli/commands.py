"""The ``aiedsl`` commands (build, doctor, check, map, inspect, sim, run; the ``kernel`` group
is :mod:`aiedsl.cli.kernel`'s): thin wrappers that parse arguments, call the library, print.

What a command raises is turned into a message and an exit code by :mod:`aiedsl.cli.process`;
what they print about their work is :mod:`aiedsl.cli.reports`'.

Only typer and the standard library load at start-up: each command imports what it needs, so
``aiedsl --help`` answers at once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import time
from enum import Enum
from pathlib import Path
from typing import Any, Iterator, List, Optional

import typer

from aiedsl.cli.common import (
    CONTEXT, DefineOpt, DesignArg, DeviceOpt, InputsOpt, NameOpt, SeedOpt, StatsOpt, load,
    named_dir, Stopped, named_file, say,
)
from aiedsl.cli.kernel import kernel_app
from aiedsl.cli.reports import print_table, print_usage, report_build, report_compile, report_run
from aiedsl.text import printable, short_numbers
from aiedsl.version import __version__

# rich_markup_mode=None: help is plain text, so "[default: ...]" in a help text stays as written.
app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False,
                  context_settings=CONTEXT,
                  help="Build, check and run AIE2 NPU designs written in aiedsl.",
                  epilog="Exit codes: 0 success, 1 a result differs from the reference, 2 a "
                  "design or usage error, 3 a deadlock or a hang the checks find, 4 a target "
                  "or tool is missing, 5 a tool failed, 70 a failure of aiedsl itself, 75 "
                  "another build is writing the output directory (try again), 130 Ctrl-C, "
                  "143 SIGTERM, 129 SIGHUP.")


class Kernels(str, Enum):
    """What runs a kernel call in the simulator."""

    reference = "reference"
    native = "native"


class MlirSpelling(str, Enum):
    """Which mlir-aie's op spellings aie.mlir is written in (aiedsl.codegen.syntax)."""

    auto = "auto"
    march = "2026-03"
    november = "2026-11"


MlirSyntaxOpt = typer.Option(
    MlirSpelling.auto, "--mlir-syntax",
    help="The mlir-aie spelling of aie.mlir: 2026-03 (upstream 1e400306), 2026-11 (an "
    "mlir-aie whose objectfifo.acquire returns memrefs and whose rtp_write and use_lock take "
    "SSA values), or auto: 2026-03 unless the aie-opt found refuses it and lowers 2026-11.")


WholeRunOpt = typer.Option(
    False, "--whole-run",
    help="Run the hang check to the end of the design's run, however long it is (by default a "
    "long run is checked up to a bound, and check says how far: a hang later in it is then "
    "found only by aiedsl sim).")


class Target(str, Enum):
    """Where ``aiedsl run`` runs."""

    auto = "auto"
    npu = "npu"
    sim = "sim"


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
    design: str = DesignArg,
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
    mlir_syntax: MlirSpelling = MlirSyntaxOpt,
    whole_run: bool = WholeRunOpt,
) -> None:
    """Check DESIGN and write aie.mlir, kernels/*.cc, design.json, report.txt, map.svg, build.sh.

    When mlir-aie's aie-opt and aie-translate are found, also lower the design with mlir-aie's
    own passes into physical.mlir, npu.mlir and insts.bin, and draw report.txt and map.svg from
    that lowering. With --compile, then run Peano and aiecc (skipped when nothing changed). Exit
    codes: 2 design error, 3 the run hangs (nothing is written), 4 a tool is missing (the MLIR
    and C++ are written), 5 a tool failed, 75 another build is writing the output directory,
    and those of every command (aiedsl --help).
    """
    from aiedsl.api import building

    if peano is not None and not compile_:  # before any work, as for any bad option value
        raise typer.BadParameter("only --compile runs Peano: add --compile, or leave --peano out",
                                 param_hint="'--peano'")
    start = time.perf_counter()
    handle = load(design, define, device, name)
    # the build directory held to the end of the compile: no other build swaps in between
    with building(handle, output=output, lower=not no_lower,
                  mlir_syntax=mlir_syntax.value, whole_run=whole_run) as art:
        report_build(art, start)
        if compile_:
            from aiedsl.toolchain.discover import find_tools

            report_compile(art, _compile(art, find_tools(peano=peano)))


def _compile(art: Any, tools: Any) -> Any:
    from aiedsl.cli.progress import compile_steps, stderr_console

    if tools.missing(compile_only=True):
        return art.compile(tools)  # raises, naming what is missing: no progress bar first
    bar, step = compile_steps(stderr_console())
    with bar:
        return art.compile(tools, step)


def _watched_run(art: Any, arrays: list[Any], **options: Any) -> Any:
    """``art.run(*arrays, **options)`` (no arrays: seeded ones), a simulation's progress drawn
    on a terminal's standard error."""
    from aiedsl.cli.progress import SimProgress, stderr_console

    with SimProgress(stderr_console()) as watch:
        return art.run(*arrays, watch=watch, **options)


@app.command()
def doctor(
    peano: Optional[str] = typer.Option(None, "--peano", metavar="DIR", callback=named_dir,
                                        help="Peano (llvm-aie) install directory "
                                        "[default: $PEANO_INSTALL_DIR]."),
) -> None:
    """Show which tools aiedsl found (Peano, aiecc, AIE API headers, aie-opt, aie-translate,
    pyxrt, an NPU, and the host C++ compiler that builds kernels for kernel test/profile).

    Exit code 0 when everything is there, 4 when something is missing.
    """
    from aiedsl.kernels.host_cxx import (INSTALL, NEEDED_BY, compiler_version,
                                         find_host_compiler)
    from aiedsl.toolchain.discover import find_tools
    from aiedsl.toolchain.xrt import find_npu

    tools = find_tools(peano=peano)
    rows = [(t.name, t.status, f"{t.path} ({t.how})" if t.path else t.how, t.version or "-")
            for t in tools.all()]
    device, why = find_npu() if tools.pyxrt.path else (None, "needs pyxrt")
    if device is not None:
        from aiedsl.toolchain.generation import read_npu_name
        from aiedsl.toolchain.xrt import import_pyxrt

        why = f"{why}, {read_npu_name(import_pyxrt(), device).describe()}"
    rows.append(("NPU", "found" if device is not None else "MISSING", why, "-"))
    # not the NPU's: what builds kernels' C++ for this machine (kernel test and profile)
    cxx = find_host_compiler()
    rows.append(("host C++ compiler", "found" if cxx.path else "MISSING",
                 f"{cxx.path} ({cxx.how})" if cxx.path else cxx.how,
                 compiler_version(cxx.path) if cxx.path else "-"))
    print_table("aiedsl doctor", ("tool", "status", "where / how found", "version"), rows)
    missing = tools.missing()
    for t in missing:
        say(_what_to_do(t))
    # the spelling is read from aiecc's help: said only of an aiecc that answered
    spelling = tools.aiecc_spelling if tools.aiecc.usable else None
    if tools.lowering:
        say("aie-opt and aie-translate found: aiedsl build lowers each design with mlir-aie "
            "(physical.mlir, npu.mlir, insts.bin) and draws map.svg and report.txt from it"
            + (f"; aiecc takes {' '.join(spelling.words())}" if spelling else ""))
    elif spelling:
        say(f"aiecc takes {' '.join(spelling.words())}")
    if missing or device is None:
        say("Without them aiedsl still checks, builds (MLIR and C++) and simulates "
            "designs: aiedsl run uses the simulator.")
    if cxx.path is None:
        say(f"Missing host C++ compiler ({cxx.how}): {NEEDED_BY} build kernels' C++ for this "
            f"machine with it; check, build and sim (reference kernels) do not. To get it: "
            f"{INSTALL}")
    if missing or device is None or cxx.path is None:
        raise typer.Exit(4)
    say("everything aiedsl needs to compile and run on the NPU is here")


def _what_to_do(t: Any) -> str:
    """Doctor's line for a tool ``t`` (a :class:`~aiedsl.toolchain.discover.Tool`) that is
    missing or unusable: what is wrong, and how to get one that works."""
    if t.path is None:
        return f"Missing {t.name}. To get {'them' if t.plural else 'it'}: {t.install}"
    return f"Unusable {t.name}: {t.path} {t.problem} ({t.detail}). To get one that works: " \
           f"{t.install}"


app.add_typer(kernel_app, name="kernel")  # kernel test, profile and cost: aiedsl/cli/kernel.py


@app.command()
def check(
    design: str = DesignArg,
    define: Optional[List[str]] = DefineOpt,
    device: Optional[str] = DeviceOpt,
    name: Optional[str] = NameOpt,
    whole_run: bool = WholeRunOpt,
) -> None:
    """Run every check on DESIGN and write nothing.

    The kernels the file declares that no core calls are checked too, as aiedsl kernel test
    runs them alone. The last check simulates the run without data, to find the hangs no
    other check can (a cycle of cores waiting on full fifos): the whole run, or the start of
    a long one (it says how far it got; --whole-run, or aiedsl sim, runs it whole). Then say
    what is legal but often a mistake, one note a line (a host tensor's bytes reinterpreted as
    another kind of number, a fifo element filled from a block of another shape). Exit codes:
    0 passed, 2 design error, 3 a hang, and those of every command (aiedsl --help).
    """
    from aiedsl.checks import check_design
    from aiedsl.checks.kernels import check_uncalled_sources
    from aiedsl.kernels.cases import uncalled_kernels
    from aiedsl.notes import check_notes
    from aiedsl.sim.hang_run import hang_run
    from aiedsl.targets import get_target

    handle = load(design, define, device, name)
    placed, usage = check_design(handle.ir)
    check_uncalled_sources([u.kernel for u in uncalled_kernels(handle)],
                           get_target(placed.device))
    hang = hang_run(handle.ir, placed, handle.kernels, whole=whole_run)
    print_usage(placed, usage)
    say(hang.line())
    for line in check_notes(placed):
        say(line)
    say(f"{handle.name}: all checks pass on {placed.device}{hang.covered()}")


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
    design: str = DesignArg,
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
    prints the error and exits 2. So does a design whose run hangs (the hang check of aiedsl
    check), which then exits 3 as check does. A build's map.svg is replaced only by a map of
    the design that build is of (the same defines and device): another configuration's is
    refused (exit 2), and a map the build drew from mlir-aie's lowering is kept.
    """
    from aiedsl.checks import check_design, draft
    from aiedsl.codegen.tilemap import is_aiedsl_map, shows_over, tile_map
    from aiedsl.emit import map_fits_build
    from aiedsl.errors import DesignError
    from aiedsl.builddir.outfile import write_file
    from aiedsl.sim.hang_run import hang_run
    from aiedsl.targets import get_target
    from aiedsl.shell import shell_line

    handle = load(design, define, device, name)
    path = output or str(Path("build") / handle.name / "map.svg")
    congested = None
    error: DesignError | None = None
    try:
        placed, usage = check_design(handle.ir)
    except DesignError as e:
        placed, usage, congested = draft(handle.ir)  # placement errors still raise here
        error = e
    else:
        try:  # a design whose run hangs exited 0 with a map that said nothing of it
            hang_run(handle.ir, placed, handle.kernels)
        except DesignError as e:
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
        say(f"kept {printable(path)}: its build drew it from mlir-aie's lowering, of this same "
            "design (for aiedsl's own plan, give -o FILE)")
    else:
        say(f"wrote {printable(path)}" + (
            "" if error is None else " (what is over its limit is red)" if shows_over(svg)
            else " (nothing on it is over a limit: the design fails another check, below)"))
    if error is not None:
        raise error


@app.command()
def inspect(
    insts: str = typer.Argument(..., metavar="INSTS", help="An insts.bin (aiedsl's build or "
                                "any IRON / mlir-aie build's)."),
) -> None:
    """List the NPU instruction stream INSTS: its header, every operation with its fields, and
    the shim DMA tasks (column, direction, channel, BD, buffer, pattern) and syncs it programs.

    Exit code 2 when INSTS is not a readable instruction stream.
    """
    from aiedsl.toolchain.insts import listing, read_insts

    if insts == "":  # Path("") is the working folder, which it does not mean
        raise typer.BadParameter("the path is empty: give the path of an insts.bin",
                                 param_hint="INSTS")
    for line in listing(read_insts(insts), Path(insts).name):
        say(line)


def _clock(text: str) -> float:
    """``--clock``: a number of GHz from 0.001 to 100 (the API's 1 MHz to 100 GHz). typer's own
    range check said "Input should be less than or equal to 100" of ``nan``."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0.001 <= value <= 100):
        shown = short_numbers(printable(text))  # 5000 digits given: not 5000 said
        raise typer.BadParameter(f"{shown} is not a core clock: give a number of GHz from 0.001 "
                                 "to 100 (1 MHz to 100 GHz), e.g. --clock 1.5")
    return value


@app.command()
def sim(
    design: str = DesignArg,
    define: Optional[List[str]] = DefineOpt,
    device: Optional[str] = DeviceOpt,
    name: Optional[str] = NameOpt,
    seed: int = SeedOpt,
    inputs: Optional[str] = InputsOpt,
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

    Exit codes: 0 PASS, 1 FAIL, 2 design error, 3 deadlock or hang, 4 no host compiler for
    --kernels native, and those of every command (aiedsl --help).
    """
    # the design's own name and device once it is loaded; the imports too (a stop there)
    with _stats_of_an_end(stats, name or Path(design).stem, device) as end:
        from aiedsl.api import build as build_design
        from aiedsl.cli.inputs_file import drawn_from, given_arrays  # (numpy: not at start-up)

        handle = load(design, define, device, name)
        end.update(design=handle.name, device=handle.ir.device)
        _check_stats(stats, handle.name, trace)
        arrays = given_arrays(handle, inputs, seed)
        art = build_design(handle, write=False)
        start = time.perf_counter()
        result = _watched_run(art, arrays, target="sim", seed=seed, trace=trace,
                              clock_hz=clock * 1e9 if clock else None, kernels=kernels.value)
    # (run's reason names its --target sim, an option aiedsl sim has not: --stats's "why")
    result = dataclasses.replace(result, why="aiedsl sim runs the simulator")
    say(f"{handle.name} on {handle.ir.device}: simulated in "
        f"{time.perf_counter() - start:.2f} s ({drawn_from(seed, inputs)}"
        + (", kernels built from their C++ for the host)" if kernels is Kernels.native else ")"))
    report_run(result, trace, stats, handle, seed,
               native=None if kernels is Kernels.native else "--kernels native", inputs=inputs)


@app.command("run")
def run_(
    design: str = DesignArg,
    define: Optional[List[str]] = DefineOpt,
    device: Optional[str] = DeviceOpt,
    name: Optional[str] = NameOpt,
    target: Target = typer.Option(Target.auto, "--target", help="auto (the NPU when there is "
                                  "one, else the simulator), npu or sim."),
    seed: int = SeedOpt,
    inputs: Optional[str] = InputsOpt,
    iters: int = typer.Option(1, "--iters", min=1, metavar="N", help="NPU: timed runs (the "
                              "simulator runs a second invocation when --iters and --warmup ask "
                              "for more than one run)."),
    warmup: int = typer.Option(0, "--warmup", min=0, metavar="N", help="NPU: untimed runs first."),
    trace: Optional[str] = typer.Option(None, "--trace", metavar="FILE", callback=named_file,
                                        help="Simulator trace file."),
    output: Optional[str] = typer.Option(None, "-o", "--output", metavar="DIR",
                                         callback=named_dir,
                                         help="Build directory [default: build/<design>]."),
    kernels: Kernels = typer.Option(Kernels.reference, "--kernels",
                                    help="On the simulator: reference (numpy) or native (each "
                                    "kernel's C++ built for the host)."),
    stats: Optional[str] = StatsOpt,
    mlir_syntax: MlirSpelling = MlirSyntaxOpt,
) -> None:
    """Build DESIGN, then run it on the NPU when one is present and on the simulator otherwise.

    Exit codes: 0 PASS, 1 FAIL, 2 design error, 3 deadlock or hang, 4 target or tool missing,
    5 a tool failed, 75 another build is writing the output directory, and those of every
    command (aiedsl --help).
    """
    # the design's own name and device once it is loaded; the imports too (a stop there)
    with _stats_of_an_end(stats, name or Path(design).stem, device) as end:
        from aiedsl.api import build as build_design
        from aiedsl.cli.inputs_file import drawn_from, given_arrays  # (numpy: not at start-up)
        from aiedsl.sim.options import check_runs_once

        handle = load(design, define, device, name)
        end.update(design=handle.name, device=handle.ir.device)
        if trace and target is not Target.npu:
            from aiedsl.sim.trace import check_trace

            check_trace(trace, handle.name)  # before building: a refused trace writes nothing
        _check_stats(stats, handle.name, trace)
        # before building, in the command line's words (run() says it in Python's)
        given = [f"--iters {iters}"] * (iters != 1) + [f"--warmup {warmup}"] * (warmup > 0)
        check_runs_once(handle.ir, iters + warmup, f"{iters + warmup} runs were asked "
                        f"({', '.join(given)}{', and the timed run' if iters == 1 else ''})",
                        "run it once (--iters 1, no --warmup)")
        arrays = given_arrays(handle, inputs, seed)
        art = build_design(handle, output=output, mlir_syntax=mlir_syntax.value)
        say(f"built {printable(art.path)}/")
        start = time.perf_counter()
        result = _watched_run(art, arrays, target=target.value, iters=iters, warmup=warmup,
                              seed=seed, trace=trace, say=say, kernels=kernels.value)
    where = "simulated" if result.target == "sim" else "ran on the NPU"
    native = kernels is Kernels.native and result.target == "sim"
    say(f"{handle.name} on {handle.ir.device}: {where} in "
        f"{time.perf_counter() - start:.2f} s ({drawn_from(seed, inputs)}"
        + (", kernels built from their C++ for the host)" if native else ")"))
    report_run(result, trace if result.target == "sim" else None, stats, handle, seed,
               native=None if native else "--kernels native", inputs=inputs)


@contextlib.contextmanager
def _stats_of_an_end(stats: Optional[str], design: str,
                     device: Optional[str]) -> Iterator[dict[str, Any]]:
    """Around the work of a ``sim`` or ``run`` given ``--stats``: an error that ends it (exit 2
    to 5), or an interrupt (Ctrl-C, SIGTERM: a CI job's timeout), writes the file saying so,
    in place of an earlier run's (a CI tester's dashboard read the last run's "passed": true
    after a hang). A file aiedsl may not write (not its own, or refused already) is left
    alone, and the error itself is said. It gives the ``design`` and ``device`` the file will
    name, for the work to update once it knows the design's own."""
    from aiedsl.errors import DesignError

    end: dict[str, Any] = {"design": design, "device": device}
    try:
        yield end
    except DesignError as e:
        if stats and e.rule != "output file":  # (a refused file is not written after all)
            from aiedsl.cli.run_stats import failure_stats, write_stats

            try:
                write_stats(failure_stats(e, end["design"], end["device"]), stats)
            except (DesignError, OSError):
                pass
        raise
    except KeyboardInterrupt as e:
        if stats:
            from aiedsl.cli.stopped_stats import interrupted_stats, replace_with_stopped

            said = interrupted_stats(end["design"], end["device"],
                                     e.signal if isinstance(e, Stopped) else None)
            try:
                from aiedsl.cli.run_stats import write_stats

                write_stats(said, stats)
            except KeyboardInterrupt:
                pass
            except Exception:  # (an import it stopped may have left numpy half made)
                replace_with_stopped(stats, said)
        raise


def _check_stats(stats: Optional[str], design: str, trace: Optional[str]) -> None:
    """Refuse a ``--stats`` path before the run, as ``--trace`` is, and one that is the
    trace's too (the second writer found the first's file not its own, after the run)."""
    if not stats:
        return
    from aiedsl.errors import DesignError
    from aiedsl.cli.run_stats import check_stats

    if trace and os.path.realpath(stats) == os.path.realpath(trace):
        raise DesignError("output file", f"--stats and --trace both name {stats}",
                          fix=f"give each its own file, e.g. --stats {design}.stats.json")
    check_stats(stats, design)
