"""``report.txt``: each used tile's resources against the target's limits, fifos and kernels."""

from __future__ import annotations

from aiedsl.checks.resources import TileUsage
from aiedsl.codegen.env import render
from aiedsl.ir import Design
from aiedsl.targets import get_target

COLUMNS = ("tile", "kind", "memory", "dma in", "dma out", "locks", "bds", "runs")


def report_rows(d: Design, table: dict[tuple[int, int], TileUsage]) -> list[tuple[str, ...]]:
    """One row of strings per used tile (shared by report.txt and the CLI's table)."""
    target = get_target(d.device)
    rows = []
    for tile, u in table.items():
        lim = target.limits(u.kind)  # type: ignore[arg-type]
        mem = TileUsage.total(u.memory)
        rows.append((
            f"({tile[0]},{tile[1]})", u.kind,
            f"{mem / 1024:.1f} / {lim.memory // 1024} KB" if lim.memory else "-",
            f"{len(u.dma_in)} / {lim.dma_in}", f"{len(u.dma_out)} / {lim.dma_out}",
            f"{TileUsage.total(u.locks)} / {lim.locks}",
            f"{TileUsage.total(u.bds)} / {lim.bds}", u.runs))
    return rows


def render_report(d: Design, table: dict[tuple[int, int], TileUsage]) -> str:
    """The text of ``report.txt``."""
    rows = [COLUMNS, *report_rows(d, table)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    fifos = []
    for f in d.fifos:
        cons = ", ".join(c.label() for c in f.consumers)
        depths = f"depth {f.producer.depth}" + (
            f"/{f.consumers[0].depth}" if f.consumers[0].depth != f.producer.depth else "")
        fifos.append(f"{f.name}: {f.elem} {depths}, {f.producer.label()} -> {cons}")
    kernels = [f"{k.symbol}: {k.cycles} cycles per call ({k.cost})" for k in d.kernels]
    return render("report.txt.j2", design=d.name, device=d.device, defines=d.defines,
                  header=lines[0], rows=lines[1:], fifos=fifos, kernels=kernels)
