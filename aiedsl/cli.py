"""The ``aiedsl`` command line: thin wrappers that parse arguments, call the library, print.

Every :class:`~aiedsl.errors.DesignError` is printed as is, without a traceback, and exits 2
(``AIEDSL_TRACEBACK=1`` shows the traceback).
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
out = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
err = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 120)

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
) -> None:
    """Check DESIGN and write aie.mlir, kernels/*.cc, design.json, report.txt, map.svg, build.sh."""
    from aiedsl.build import generate, write

    start = time.perf_counter()
    handle = _load(design, define, device, name)
    gen = generate(handle)
    path = write(gen, output or Path("build") / handle.name)
    _print_usage(gen.design, gen.usage)
    out.print(f"wrote {path}/: " + ", ".join(sorted(gen.files)) +
              f" ({time.perf_counter() - start:.2f} s)")


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
) -> None:
    """Run DESIGN on the simulator, compare with its numpy reference, and time it.

    Exit codes: 0 PASS, 1 FAIL, 2 design error, 3 deadlock.
    """
    handle = _load(design, define, device, name)
    _simulate(handle, seed, trace, clock)


@app.command()
def run(
    design: Path = typer.Argument(..., help="The design file (.py)."),
    define: Optional[List[str]] = DefineOpt,
    device: Optional[str] = DeviceOpt,
    name: Optional[str] = NameOpt,
    target: str = typer.Option("auto", "--target", help="auto, npu or sim."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random inputs."),
    trace: Optional[Path] = typer.Option(None, "--trace", help="Simulator trace file."),
    output: Optional[Path] = typer.Option(None, "-o", "--output",
                                          help="Build directory [default: build/<design>]."),
) -> None:
    """Build DESIGN, then run it on the NPU when one is present and on the simulator otherwise."""
    from aiedsl.build import generate, write
    from aiedsl.toolchain.xrt import find_npu

    if target not in ("auto", "npu", "sim"):
        raise typer.BadParameter("--target is auto, npu or sim")
    handle = _load(design, define, device, name)
    gen = generate(handle)
    path = write(gen, output or Path("build") / handle.name)
    out.print(f"built {path}/")
    npu, why = (None, "--target sim") if target == "sim" else find_npu()
    if npu is None:
        if target == "npu":
            err.print(f"no NPU: {why}")
            raise typer.Exit(4)
        out.print(f"no NPU ({why}): running on the simulator")
        _simulate(handle, seed, trace, None, placed=gen.design)
        return
    err.print("an NPU is present, but running on it needs the compiled xclbin "
              "(aiedsl build --compile), which this version cannot produce yet; use --target sim")
    raise typer.Exit(4)


def _simulate(handle, seed: int, trace: Optional[Path], clock: Optional[float],  # type: ignore[no-untyped-def]
              placed=None) -> None:
    from aiedsl.sim import simulate

    start = time.perf_counter()
    result = simulate(handle, seed=seed, trace=str(trace) if trace else None,
                      clock_hz=clock * 1e9 if clock else None, placed=placed)
    out.print(f"{handle.name} on {handle.ir.device}: simulated in "
              f"{time.perf_counter() - start:.2f} s (seed {seed})")
    for c in result.checks:
        out.print(c.line())
    for line in result.timing.lines():
        out.print("  " + line)
    if trace:
        out.print(f"trace: {trace} (open in https://ui.perfetto.dev)")
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
        app(standalone_mode=False)
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


if __name__ == "__main__":
    main()
