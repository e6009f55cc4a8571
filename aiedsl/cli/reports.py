"""What the ``aiedsl`` commands print about their work: tables (a rich table on a terminal,
plain aligned columns when piped), the resource table of a placed design, and what a build, a
compile and a run did.

As in every module of the command line, only typer and the standard library load at start-up:
rich and the report modules load when a table is printed.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Optional, Sequence

import typer

from aiedsl.cli.common import no_color, say
from aiedsl.text import printable


FOLDED = 20
"""The narrowest the last column of a boxed table is folded to; a terminal that leaves it less
gets the plain columns."""


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """A rich table on a terminal wide enough for it; piped, or on a narrower terminal, plain
    aligned columns that are never wrapped (a boxed table folded into 80 columns broke
    "160.0 / 512 KB" and every kernel name over several lines). Either goes out through
    :func:`say`, which handles a standard output that cannot be written."""
    widths = [max(len(str(r[i])) for r in [columns, *rows]) for i in range(len(columns))]
    # rich's borders and a space each side of every cell; only the last column (what a core
    # runs, a tool's path) may fold, and not below FOLDED characters
    boxed = sum(widths[:-1]) + min(widths[-1], FOLDED) + 3 * len(widths) + 1
    if sys.stdout.isatty():
        from rich.console import Console

        console = Console(highlight=False, markup=False,
                          color_system=None if no_color() else "auto")
        if boxed <= console.width:
            with console.capture() as drawn:
                console.print(rich_table(title, columns, rows))
            say(drawn.get().rstrip("\n"))
            return
    say(title)
    for r in [columns, *rows]:
        say("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())


def rich_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> Any:
    """The rich Table of :func:`print_table`. On a narrow terminal cells wrap, and a word
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


def report_build(art: Any, start: float) -> None:
    """Print what ``aiedsl build`` wrote (and lowered) into ``art.path``."""
    print_usage(art.design, art.usage)
    if art.hang is not None:
        say(art.hang.line())
    say(f"wrote {printable(art.path)}/: " + ", ".join(sorted(art.files)) +
        f" ({time.perf_counter() - start:.2f} s)")
    if art.replaced:
        say(f"note: {printable(art.path)}/ held the build of {printable(art.replaced)}, "
            f"another design file of the design name '{art.design.name}', which this build "
            "replaced: give each its own directory (-o) to keep both")
    if art.lowering is not None:
        low = art.lowering
        drawn = ("; report.txt and map.svg are drawn from it"
                 + (f", but {low.note}" if low.note else "") if low.physical is not None
                 else f"; report.txt and map.svg show aiedsl's plan: {low.note}")
        used = "; ".join(f"{k.split()[0]}: {v}" for k, v in low.tools.items())
        say(f"lowered with mlir-aie ({used})"
            + (", unchanged since the last build" if low.cached else "")
            + f": physical.mlir, npu.mlir, insts.bin{drawn}")
        if art.respelled:
            say(f"aie.mlir is spelled for mlir-aie {art.mlir_syntax} (--mlir-syntax auto): "
                f"{art.respelled}; the lowering of {art.mlir_syntax}'s spelling succeeded")
        if low.differs:
            say(f"note: mlir-aie's lowering differs from aiedsl's plan, which the checks judged, "
                f"in {len(low.differs)} place(s) (report.txt names them): " + low.differs[0])


def report_compile(art: Any, compiled: Any) -> None:
    """Print what ``aiedsl build --compile`` made (or found up to date) in ``art.path``."""
    if compiled.cached:
        say(f"aie.xclbin and insts.bin are up to date (nothing changed since they were "
            f"built; cache key {compiled.manifest['cache_key'][:12]}) "
            f"({compiled.seconds:.2f} s)")
    else:
        say(f"compiled {printable(art.path)}/aie.xclbin, insts.bin, manifest.json "
            f"({compiled.seconds:.1f} s; tool output in {art.path}/logs/)")
    pm = compiled.manifest.get("program_memory", {})
    if pm.get("used"):  # the fullest core first: the one nearest the limit
        fullest = sorted(pm["used"].items(), key=lambda kv: -kv[1])
        shown = [f"{name} {end / 1024:.1f}" for name, end in fullest[:4]]
        more = ", ..." if len(fullest) > 4 else ""
        say(f"program memory: {', '.join(shown)}{more} of "
            f"{pm['bytes_per_core'] / 1024:.0f} KB")
    if pm.get("unread"):  # nothing said of them would read as nothing to worry about
        say(f"program memory: not known for {', '.join(pm['unread'][:4])}"
            f"{', ...' if len(pm['unread']) > 4 else ''} (aiecc left no core ELF aiedsl "
            f"could read in {printable(art.path)}/aie.mlir.prj/)")


def report_run(result: Any, trace: Optional[str], stats: Optional[str], handle: Any,
               seed: int, native: str | None = None, inputs: str | None = None) -> None:
    """Print a run's comparison and timing (rendered from its fields), write its ``--stats``
    file; exit 1 on FAIL. ``native``: for a simulation whose kernels ran as their numpy
    references, the command that runs their C++ instead, said once under the comparison.
    ``inputs``: the file the inputs came from (``--inputs``), when not drawn from ``seed``."""
    lines = result.lines()
    if native is not None and result.target == "sim" and handle.ir.kernels:
        # a PASS of the references says nothing of the C++ (a kernel adding 2, not 1, passes)
        lines.insert(len(result.checks), f"  kernels: ran as their numpy references; {native} "
                     "or aiedsl kernel test runs their C++")
    elif result.target == "sim" and handle.ir.kernels and not result.passed and not any(
            "aiedsl kernel test" in h for c in result.checks for h in c.hints):
        # a FAIL of the C++: a read before or past a buffer is not seen in a run (a tester)
        lines.insert(len(result.checks), "  kernels: ran as their C++; without --kernels "
                     "native they run as their numpy references, and aiedsl kernel test runs "
                     "each alone against its reference, between guard bytes that show a read "
                     "before or past its buffers, which this run does not see")
    for line in lines:
        say(line)
    if trace:
        say(f"trace: {printable(trace)} (open in https://ui.perfetto.dev)")
    if stats:
        from aiedsl.cli.run_stats import run_stats, write_stats

        kernels = None if result.target != "sim" else \
            "reference" if native is not None else "native"
        write_stats(run_stats(result, handle.name, handle.ir.device, seed=seed,
                              kernels=kernels, inputs=inputs), stats)
        say(f"stats: {printable(stats)}")
    if not result.passed:
        raise typer.Exit(1)


def print_usage(design: Any, usage: Any) -> None:
    """Print placed ``design``'s resource table (``usage``, from the checks) and, once it is
    routed, how many streams it has and the wires they take."""
    from aiedsl.codegen.report import COLUMNS, report_rows
    from aiedsl.targets import get_target

    print_table(f"{design.name} on {design.device}", COLUMNS,
                report_rows(design, get_target(design.device), usage))
    if design.physical is not None:
        routes = design.physical.routes
        shared = len(design.physical.shared)
        say(f"routed {len(routes)} streams over {sum(len(r.wires) for r in routes)} wires"
            + (f"; {shared} fifo(s) in shared memory, no DMA" if shared else ""))
