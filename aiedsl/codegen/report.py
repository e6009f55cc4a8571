"""``report.txt``: each used tile's resources against its limits, fifos, streams and their routes,
stream-switch ports, the allocation of channels, BDs, locks and addresses, kernels, and the
design's notes (:mod:`aiedsl.notes`)."""

from __future__ import annotations

from collections.abc import Sequence

from aiedsl.checks.resources import TileUsage
from aiedsl.codegen.mlir import initial_literal
from aiedsl.ir.cores import Local
from aiedsl.ir.design import Design
from aiedsl.ir.fifos import Fifo
from aiedsl.ir.runtime import Transfer
from aiedsl.ir.sequence import shim_bd_ids
from aiedsl.notes import design_notes, note_lines
from aiedsl.place.alloc import local_buffer_name
from aiedsl.place.objectfifo import Lowering, lower
from aiedsl.render import render
from aiedsl.targets import TargetModel
from aiedsl.targets.model import direction_of

COLUMNS = ("tile", "kind", "memory", "dma in", "dma out", "locks", "bds", "runs")


def report_rows(d: Design, target: TargetModel, table: dict[tuple[int, int], TileUsage]
                ) -> list[tuple[str, ...]]:
    """One row of strings per used tile of ``target`` (shared by report.txt and the CLI's
    table)."""
    rows: list[tuple[str, ...]] = []
    for tile, u in table.items():
        lim = target.limits(u.kind)  # type: ignore[arg-type]
        mem = TileUsage.total(u.memory)
        rows.append((
            f"({tile[0]},{tile[1]})", u.kind,
            TileUsage.memory_text(mem, lim.memory) if lim.memory else "-",
            f"{len(u.dma_in)} / {lim.dma_in}", f"{len(u.dma_out)} / {lim.dma_out}",
            f"{TileUsage.total(u.locks)} / {lim.locks}",
            f"{TileUsage.total(u.bds)} / {lim.bds}", u.runs))
    return rows


PLAN_NOTE = ("streams, ports and allocation are aiedsl's plan (its own rendering of mlir-aie's "
             "objectfifo lowering and router); a build with mlir-aie's aie-opt at hand draws "
             "them from mlir-aie's lowering instead")
"""The line under a report's or a map's title when it shows aiedsl's plan, not what mlir-aie
made of the design (:data:`aiedsl.toolchain.lower.NOTE` then)."""


def render_report(d: Design, target: TargetModel, table: dict[tuple[int, int], TileUsage],
                  note: str = PLAN_NOTE, hang: str = "") -> str:
    """The text of ``report.txt`` of placed design ``d`` on ``target``; ``note``, under its
    title, says whose streams and allocation it shows; ``hang``, how far the build's hang
    check ran (:meth:`~aiedsl.sim.hang_run.HangRun.line`)."""
    lines = _aligned([COLUMNS, *report_rows(d, target, table)])
    low = lower(d, target) if d.placed else None
    fifos = []
    for f in d.fifos:
        cons = ", ".join(c.label() for c in f.consumers)
        depths = f"depth {f.producer.depth}" + (
            f"/{f.consumers[0].depth}" if f.depth_per_end else "")
        repeat = f", each element sent {f.repeat} times (repeat_count)" if f.repeat > 1 else ""
        resized = _resized(f, low) if low is not None else ""
        fifos.append(f"{f.name}: {f.elem} {depths}{resized}, {f.producer.label()} -> "
                     f"{cons}{repeat}")
    on = target.timing.measured_on
    elsewhere = target.family != on  # the library's cycle models were made on npu1
    kernels = [f"{k.symbol}: {k.charged()} ({k.cost})"
               + (f"; {on}'s model, assumed on {target.family}" if elsewhere and k.cycles_source
                  == "declared" and k.reference.startswith("aiedsl.kernels.")
                  and k.arch != target.arch else "")  # one made for this core is its own
               for k in d.kernels]
    tile_of = {c.name: c.tile for c in d.cores}
    locals_ = [local_line(b, tile_of) for b in d.locals]
    cascades = [f"{c.src} {tile_of[c.src]} -> {c.dst} {tile_of[c.dst]}" for c in d.cascades]
    notes = note_lines(design_notes(d))
    return render("report.txt.j2", design=d.name, device=d.device, note=note, hang=hang,
                  defines=d.defines,
                  header=lines[0], rows=lines[1:], fifos=fifos, kernels=kernels,
                  cascades=cascades, cascade_bits=target.cascade_bits, locals=locals_,
                  notes=notes, program_memory=_program_memory_line(d, target),
                  streams=stream_lines(d), ports=_aligned(port_rows(d, target)),
                  alloc=alloc_lines(d, target))


def _program_memory_line(d: Design, target: TargetModel) -> str:
    """What the table cannot say of the cores' program memory: nothing knows how much a core's
    program takes before Peano has compiled its kernels and aiecc linked it ("" without
    cores)."""
    if not d.cores:
        return ""
    return (f"program memory ({target.program_memory // 1024} KB a core) is not known until "
            "the kernels are compiled: `aiedsl build --compile` reads it off each core's ELF "
            "into manifest.json")


def _resized(f: Fifo, low: Lowering) -> str:
    """For a fifo whose core ends have another number of buffers than its depth (mlir-aie gives
    a core's end one more than the most elements its core acquires at once, whatever the
    depth, unless depths are given per end): which ends, how many buffers and why, as
    `` (2 buffers at core[0,0], one more than the 1 element it acquires at once, as mlir-aie
    sizes a core's end)``; "" for every other fifo."""
    groups: dict[int, list[str]] = {}
    ends = [("produce", 0, f.producer), *(("consume", i, c) for i, c in enumerate(f.consumers))]
    for port, i, e in ends:
        key = (f.name, port, i)
        if e.kind != "core" or key not in low.by_end or low.by_end[key].size == e.depth:
            continue
        groups.setdefault(low.by_end[key].size, []).append(e.core or "")
    parts = []
    for size, cores in groups.items():
        held = size - 1  # the size of an end is one more than its largest acquire
        who = "it acquires" if len(cores) == 1 else "each acquires"
        parts.append(f"{size} buffer{'s' if size != 1 else ''} at {' and '.join(cores)}, one "
                     f"more than the {held} element{'s' if held != 1 else ''} {who} at once")
    return f" ({'; '.join(parts)}, as mlir-aie sizes a core's end)" if parts else ""


def local_line(b: Local, tile_of: dict[str, tuple[int, int] | None]) -> str:
    """How the report lists a core-local buffer: its type, its initial value (the MLIR literal,
    cut short) and each core's copy."""
    if b.init is None:
        init = "no initial value"
    else:
        text = initial_literal(b.type, b.init)
        init = "initial " + (text if len(text) <= 60 else text[:56] + "...>")
    copies = []
    for core in b.cores:
        tile = tile_of[core]
        assert tile is not None, "the report is of a placed design"
        copies.append(f"{core} ({tile[0]},{tile[1]}) as {local_buffer_name(b, tile)}")
    return f"{b.name}: {b.type}, {init}; " + ", ".join(copies)


def stream_lines(d: Design) -> list[str]:
    """One line per routed stream (with its DMA channels) and per shared-memory fifo."""
    if d.physical is None:
        return []
    chan = {(c.fifo, c.tile, c.direction): c.channel for c in d.physical.channels}
    out = []
    for r in d.physical.routes:
        dsts = ", ".join(f"({t[0]},{t[1]}) S2MM {chan[(r.fifo, t, 'S2MM')]}" for t in r.dsts)
        pid = f"; packet id {r.packet_id}" if r.packet_id is not None else ""
        out.append(f"{r.fifo}: ({r.src[0]},{r.src[1]}) MM2S {chan[(r.fifo, r.src, 'MM2S')]}"
                   f" -> {dsts}; {_wires(len(r.wires))}{pid}")
    for name, tile in sorted(d.physical.shared.items()):
        f = d.fifo(name)
        out.append(f"{name}: {f.producer.label()} -> {f.consumers[0].label()} in shared memory "
                   f"of ({tile[0]},{tile[1]}), no DMA")
    return out


def _wires(n: int) -> str:
    return f"{n} wire" + ("" if n == 1 else "s")


def port_rows(d: Design, target: TargetModel) -> list[tuple[str, ...]]:
    """Stream-switch master ports each tile drives toward its neighbours (used / limit)."""
    if d.physical is None or not d.physical.routes:
        return []
    used: dict[tuple[tuple[int, int], str], int] = {}
    for r in d.physical.routes:
        for a, b, _ in r.wires:
            key = (a, direction_of(a, b))
            used[key] = used.get(key, 0) + 1
    dirs = ("north", "south", "east", "west")
    rows: list[tuple[str, ...]] = [("tile", *dirs)]
    for tile in target.tiles():
        if not any((tile, x) in used for x in dirs):
            continue
        rows.append((f"({tile[0]},{tile[1]})", *(
            f"{used.get((tile, x), 0)} / {target.link_capacity(tile, x)}"  # type: ignore[arg-type]
            if target.link_capacity(tile, x) else "-" for x in dirs)))  # type: ignore[arg-type]
    return rows


def alloc_lines(d: Design, target: TargetModel) -> list[str]:
    """Per tile: DMA channels with their BDs, locks, and buffers with address and bank."""
    if d.physical is None:
        return []
    p = d.physical
    # a shim channel's BDs are the runtime sequence's: those its fifo's transfers take
    task_bds: dict[str, set[int]] = {}
    for i, bd in shim_bd_ids(d).items():
        op = d.runtime[i]
        assert isinstance(op, Transfer)
        task_bds.setdefault(op.fifo, set()).add(bd)
    out = []
    for tile in target.tiles():
        chans = [f"{c.direction} {c.channel} {c.fifo}" + (
            f" ({_bd_list(c.bds)})" if c.bds else
            f" (runtime {_bd_list(sorted(task_bds[c.fifo]))})" if c.fifo in task_bds else "")
            for c in p.channels if c.tile == tile]
        bufs = [f"{b.name} {b.nbytes} B @ {b.address:#07x} bank {b.bank}"
                for b in sorted(p.buffers, key=lambda b: b.address) if b.tile == tile]
        locks = [lk for lk in p.locks if lk.tile == tile]
        if not (chans or bufs or locks):
            continue
        out.append(f"({tile[0]},{tile[1]}) {', '.join(chans)}; {len(locks)} locks")
        out += [f"    {b}" for b in bufs]
    return out


def _bd_list(ids: Sequence[int]) -> str:
    """``BD 4``, ``BDs 0-3`` (in chain order, when it counts up by one), else ``BDs 30, 25``."""
    if len(ids) == 1:
        return f"BD {ids[0]}"
    if list(ids) == list(range(ids[0], ids[0] + len(ids))):
        return f"BDs {ids[0]}-{ids[-1]}"
    return "BDs " + ", ".join(map(str, ids))


def _aligned(rows: list[tuple[str, ...]]) -> list[str]:
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
