"""The ``aiedsl`` command line: thin wrappers that parse arguments, call the library, print.

Every :class:`~aiedsl.errors.DesignError` is printed as is, without a traceback, and exits 2
(``AIEDSL_TRACEBACK=1`` shows the traceback); a :class:`~aiedsl.errors.ToolchainError` exits 4
(a tool is missing) or 5 (a tool failed).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.table import Table

from aiedsl.errors import DesignError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Build, check and run AIE2 NPU designs written in aiedsl.")
_WIDTH = int(os.environ.get("COLUMNS", "120"))  # when piped; a terminal gives its own width
out = Console(highlight=False, width=None if sys.stdout.isatty() else _WIDTH)
err = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else _WIDTH)

DefineOpt = typer.Option(None, "-D", "--define", metavar="NAME=VALUE",
                         help="Override a define() of the design, e.g. -D M=1024.")
DeviceOpt = typer.Option(None, "--device", help="Override the design's device (npu1, npu2, ...).")
NameOpt = typer.Option(None, "--name", help="Which design, when the file declares several.")


def _load(design: Path, define: Optional[List[str]], device: Optional[str],
          name: Optional[str]):  # type: ignore[no-untyped-def]
    from aiedsl.loader import load_design, parse_defines

    return load_design(design, parse_defines(define or []), device, name)


@app.command()
def build(
    design: Path = typer.Argument(..., help="The design file (.py)."),
    define: Optional[List[str]] = DefineOpt,
    device: Optional[str] = DeviceOpt,
    name: Optional[str] = NameOpt,
    output: Optional[Path] = typer.Option(None, "-o", "--output",
                                          help="Output directory [default: build/<design>]."),
    compile_: bool = typer.Option(False, "--compile", help="Also compile the kernels with "
                                  "Peano and the design with aiecc into aie.xclbin and insts.bin."),
    peano: Optional[Path] = typer.Option(None, "--peano", help="Peano (llvm-aie) install "
                                         "directory [default: $PEANO_INSTALL_DIR]."),
) -> None:
    """Check DESIGN and write aie.mlir, kernels/*.cc, design.json, report.txt, map.svg, build.sh.

    With --compile, then run Peano and aiecc (skipped when nothing changed). Exit codes: 2 design
    error, 4 a tool is missing (the MLIR and C++ are written), 5 a tool failed.
    """
    from aiedsl.api import build as build_design

    start = time.perf_counter()
    handle = _load(design, define, device, name)
    art = build_design(handle, output=output)
    _print_usage(art.design, art.usage)
    out.print(f"wrote {art.path}/: " + ", ".join(sorted(art.files)) +
              f" ({time.perf_counter() - start:.2f} s)")
    if compile_:
        from aiedsl.toolchain.discover import find_tools

        compiled = _compile(art, find_tools(peano=peano))
        if compiled.cached:
            out.print(f"aie.xclbin and insts.bin are up to date (nothing changed since they were "
                      f"built; cache key {compiled.manifest['cache_key'][:12]}) "
                      f"({compiled.seconds:.2f} s)")
        else:
            out.print(f"compiled {art.path}/aie.xclbin, insts.bin, manifest.json "
                      f"({compiled.seconds:.1f} s; tool output in {art.path}/logs/)")


def _compile(art, tools):  # type: ignore[no-untyped-def]
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    if tools.missing(compile_only=True):
        return art.compile(tools)  # raises, naming what is missing: no progress bar first
    with Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                  console=err, transient=True) as bar:
        task = bar.add_task("compiling", total=None)

        def step(i: int, n: int, label: str) -> None:
            bar.update(task, description=f"[{i + 1}/{n}] {label}", completed=i, total=n)

        return art.compile(tools, step)


@app.command()
def doctor(
    peano: Optional[Path] = typer.Option(None, "--peano", help="Peano (llvm-aie) install "
                                         "directory [default: $PEANO_INSTALL_DIR]."),
) -> None:
    """Show which tools aiedsl found (Peano, aiecc, AIE API headers, pyxrt and an NPU).

    Exit code 0 when everything is there, 4 when something is missing.
    """
    from aiedsl.toolchain.discover import find_tools
    from aiedsl.toolchain.xrt import find_npu

    tools = find_tools(peano=peano)
    table = Table(title="aiedsl doctor", title_justify="left")
    for c in ("tool", "status", "where / how found", "version"):
        table.add_column(c)
    for t in tools.all():
        table.add_row(t.name, "found" if t.path else "MISSING",
                      f"{t.path} ({t.how})" if t.path else t.how, t.version or "-")
    device, why = find_npu() if tools.pyxrt.path else (None, "needs pyxrt")
    table.add_row("NPU", "found" if device is not None else "MISSING", why, "-")
    out.print(table)
    missing = tools.missing()
    for t in missing:
        out.print(f"{t.name} is missing. To get it: {t.install}")
    if missing or device is None:
        out.print("Without them aiedsl still checks, builds (MLIR and C++) and simulates "
                  "designs: aiedsl run uses the simulator.")
        raise typer.Exit(4)
    out.print("everything aiedsl needs to compile and run on the NPU is here")


kernel_app = typer.Typer(no_args_is_help=True, help="Test micro-kernels on the host and "
                         "estimate their cost.")
app.add_typer(kernel_app, name="kernel")


@kernel_app.command("test")
def kernel_test(
    path: Optional[Path] = typer.Argument(None, help="A kernel C++ file (tests the library "
                                          "kernels made from it) or a design file (tests the "
                                          "kernels it declares)."),
    all_: bool = typer.Option(False, "--all", help="Test every library kernel at several sizes."),
    define: Optional[List[str]] = DefineOpt,
    device: Optional[str] = DeviceOpt,
    seed: int = typer.Option(0, "--seed", help="Seed of the random inputs."),
) -> None:
    """Compile kernels with the host's g++ against aiedsl's AIE API header and compare each
    with its numpy reference. Exit 1 when one differs."""
    from aiedsl.codegen.cpp import render_kernel
    from aiedsl.kernels.host import check_kernel
    from aiedsl.kernels.library import samples

    if all_ == (path is not None):
        raise typer.BadParameter("give a kernel or design file, or --all")
    if path is not None and path.suffix == ".py":
        handle = _load(path, define, device, None)
        from aiedsl.checks import check_design

        placed, _ = check_design(handle.ir)
        cases = [(k, render_kernel(placed, k), handle.kernels[k.symbol].run_reference)
                 for k in placed.kernels]
    else:
        lib = samples()
        if path is not None:
            lib = [k for k in lib if k.ir.source == path.name]
            if not lib:
                raise typer.BadParameter(
                    f"no library kernel is made from {path.name}: declare your kernel with "
                    f"declare(..., source=\"{path.name}\") in a design and run "
                    "`aiedsl kernel test DESIGN.py`")
        cases = [(k.ir, render_kernel(None, k.ir), k.run_reference) for k in lib]
    failed = 0
    start = time.perf_counter()
    for k, cpp, ref in cases:
        result = check_kernel(k, cpp, ref, seed)
        failed += not result.passed
        for line in result.lines:
            out.print(line)
    out.print(f"{len(cases) - failed} of {len(cases)} kernels match their references "
              f"({time.perf_counter() - start:.1f} s)")
    if failed:
        raise typer.Exit(1)


@kernel_app.command("cost")
def kernel_cost(
    name: str = typer.Argument(..., help="matmul, zero, passthrough, scale, add, mul, relu, "
                               "reduce_sum or reduce_max."),
    shape: str = typer.Option(..., "--shape", help="MxKxN for matmul, ROWSxCOLS for "
                              "reductions, N otherwise."),
    dtype: str = typer.Option("bf16", "--dtype", help="Element (matmul: input) type."),
    device: str = typer.Option("npu1", "--device", help="Device whose core is estimated."),
) -> None:
    """Print a kernel's estimated cycles per call and the fraction of the core's peak."""
    from aiedsl.kernels.cost import estimate

    for line in estimate(name, shape, dtype, device):
        out.print(line)


@app.command()
def check(
    design: Path = typer.Argument(..., help="The design file (.py)."),
    define: Optional[List[str]] = DefineOpt,
    device: Optional[str] = DeviceOpt,
    name: Optional[str] = NameOpt,
) -> None:
    """Run every check on DESIGN and write nothing."""
    from aiedsl.checks import check_design

    handle = _load(design, define, device, name)
    placed, usage = check_design(handle.ir)
    _print_usage(placed, usage)
    out.print(f"{handle.name}: all checks pass on {placed.device}")


@app.command("map")
def map_(
    design: Path = typer.Argument(..., help="The design file (.py)."),
    define: Optional[List[str]] = DefineOpt,
    device: Optional[str] = DeviceOpt,
    name: Optional[str] = NameOpt,
    output: Optional[Path] = typer.Option(None, "-o", "--output",
                                          help="The SVG file [default: build/<design>/map.svg]."),
) -> None:
    """Place, allocate and route DESIGN and draw map.svg only.

    A design over a limit still gets its map, with what is over drawn in red; the command then
    prints the error and exits 2.
    """
    from aiedsl.checks import check_design, draft
    from aiedsl.codegen.tilemap import tile_map
    from aiedsl.errors import DesignError

    handle = _load(design, define, device, name)
    path = output or Path("build") / handle.name / "map.svg"
    try:
        placed, usage = check_design(handle.ir)
        congested = None
        error = None
    except DesignError as e:
        placed, usage, congested = draft(handle.ir)  # placement errors still raise here
        error = e
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(tile_map(placed, usage, congested))
    tmp.replace(path)
    out.print(f"wrote {path}" + (" (what is over its limit is red)" if error else ""))
    if error is not None:
        raise error


@app.command()
def sim(
    design: Path = typer.Argument(..., help="The design file (.py)."),
    define: Optional[List[str]] = DefineOpt,
    device: Optional[str] = DeviceOpt,
    name: Optional[str] = NameOpt,
    seed: int = typer.Option(0, "--seed", help="Seed of the random inputs."),
    trace: Optional[Path] = typer.Option(None, "--trace",
                                         help="Write a Chrome trace-event JSON (Perfetto)."),
    clock: Optional[float] = typer.Option(None, "--clock", help="Core clock in GHz "
                                          "[default: the device's]."),
    kernels: str = typer.Option("reference", "--kernels", help="reference (numpy) or native "
                                "(each kernel's C++ built for the host)."),
) -> None:
    """Run DESIGN on the simulator, compare with its numpy reference, and time it.

    Exit codes: 0 PASS, 1 FAIL, 2 design error, 3 deadlock.
    """
    if kernels not in ("reference", "native"):
        raise typer.BadParameter("--kernels is reference or native")
    handle = _load(design, define, device, name)
    _simulate(handle, seed, trace, clock, kernels=kernels)


@app.command()
def run(
    design: Path = typer.Argument(..., help="The design file (.py)."),
    define: Optional[List[str]] = DefineOpt,
    device: Optional[str] = DeviceOpt,
    name: Optional[str] = NameOpt,
    target: str = typer.Option("auto", "--target", help="auto (the NPU when there is one, "
                               "else the simulator), npu or sim."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random inputs."),
    iters: int = typer.Option(1, "--iters", help="NPU: timed runs."),
    warmup: int = typer.Option(0, "--warmup", help="NPU: untimed runs first."),
    trace: Optional[Path] = typer.Option(None, "--trace", help="Simulator trace file."),
    output: Optional[Path] = typer.Option(None, "-o", "--output",
                                          help="Build directory [default: build/<design>]."),
) -> None:
    """Build DESIGN, then run it on the NPU when one is present and on the simulator otherwise.

    Exit codes: 0 PASS, 1 FAIL, 2 design error, 3 deadlock, 4 target or tool missing, 5 a tool
    failed.
    """
    from aiedsl.api import build as build_design

    if target not in ("auto", "npu", "sim"):
        raise typer.BadParameter("--target is auto, npu or sim")
    handle = _load(design, define, device, name)
    art = build_design(handle, output=output)
    out.print(f"built {art.path}/")
    start = time.perf_counter()
    result = art.run(target=target, iters=iters, warmup=warmup, seed=seed,
                     trace=str(trace) if trace else None, say=out.print)
    where = "simulated" if result.target == "sim" else "ran on the NPU"
    out.print(f"{handle.name} on {handle.ir.device}: {where} in "
              f"{time.perf_counter() - start:.2f} s (seed {seed})")
    _report(result.checks, result.lines, trace if result.target == "sim" else None)
    if not result.passed:
        raise typer.Exit(1)


def _report(checks, lines, trace) -> None:  # type: ignore[no-untyped-def]
    for c in checks:
        out.print(c.line())
    for line in lines:
        out.print("  " + line)
    if trace:
        out.print(f"trace: {trace} (open in https://ui.perfetto.dev)")


def _simulate(handle, seed: int, trace: Optional[Path], clock: Optional[float],  # type: ignore[no-untyped-def]
              placed=None, kernels: str = "reference") -> None:
    from aiedsl.sim import simulate

    start = time.perf_counter()
    result = simulate(handle, seed=seed, trace=str(trace) if trace else None,
                      clock_hz=clock * 1e9 if clock else None, placed=placed, kernels=kernels)
    out.print(f"{handle.name} on {handle.ir.device}: simulated in "
              f"{time.perf_counter() - start:.2f} s (seed {seed}"
              + (", kernels built from their C++ for the host)" if kernels == "native" else ")"))
    _report(result.checks, result.timing.lines(), trace)
    if not result.passed:
        raise typer.Exit(1)


def _print_usage(design, usage) -> None:  # type: ignore[no-untyped-def]
    from aiedsl.codegen.report import COLUMNS, report_rows

    table = Table(title=f"{design.name} on {design.device}", title_justify="left")
    for c in COLUMNS:
        table.add_column(c)
    for row in report_rows(design, usage):
        table.add_row(*row)
    out.print(table)
    if design.physical is not None:
        routes = design.physical.routes
        shared = len(design.physical.shared)
        out.print(f"routed {len(routes)} streams over {sum(len(r.wires) for r in routes)} wires"
                  + (f"; {shared} fifo(s) in shared memory, no DMA" if shared else ""))


def main() -> None:
    """Console entry point: run the app and turn DesignErrors into exit code 2."""
    try:
        code = app(standalone_mode=False)  # click returns an Exit's code instead of raising it
    except DesignError as e:
        if os.environ.get("AIEDSL_TRACEBACK") == "1":
            raise
        sys.stderr.write(str(e) + "\n")  # as is: never re-wrapped, so messages stay greppable
        sys.exit(getattr(e, "exit_code", 2))
    except Exception as e:  # click's usage errors carry their own exit code
        import click

        if isinstance(e, click.exceptions.ClickException):
            e.show()
            sys.exit(e.exit_code)
        if isinstance(e, click.exceptions.Exit):
            sys.exit(e.exit_code)
        if isinstance(e, click.exceptions.Abort):
            sys.exit(1)
        raise
    if isinstance(code, int) and code:
        sys.exit(code)


if __name__ == "__main__":
    main()
