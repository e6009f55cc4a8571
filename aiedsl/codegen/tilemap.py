"""``map.svg``: the device's tiles, what runs on each, and every stream along its routed path.

The picture is laid out here as plain numbers and drawn by ``templates/map.svg.j2``. Tiles sit
in a grid (shim row at the bottom, as the hardware numbers rows); each tile's stream switch is a
point in the gap at its north-east corner, so wires run in the gaps between tiles and never over
a tile's text. Wires of one bundle get lanes side by side: northward and eastward wires on one
side of the gap's centre line, southward and westward on the other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from aiedsl.checks.resources import TileUsage
from aiedsl.codegen.report import PLAN_NOTE
from aiedsl.ir.design import Design
from aiedsl.ir.physical import Route
from aiedsl.place.route import Congestion, Wire
from aiedsl.render import render
from aiedsl.targets import TargetModel
from aiedsl.targets.model import direction_of
from aiedsl.version import __version__

Coord = tuple[int, int]
Origin = Callable[[Coord], tuple[float, float]]
"""Where a tile's box is drawn (its top-left corner)."""

TILE_W, TILE_H, GAP, MARGIN, LANE = 200, 128, 56, 40, 4.0
LEGEND_W = 330
PALETTE = ("#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#17becf", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#393b79")
"""Channel colours; no red, which marks what is over a limit."""
KIND_FILL = {"shim": "#eceff1", "memtile": "#e3f2fd", "core": "#fff8e1"}
LOWERED = 'class="lowering"'
"""Marks the note of a map drawn from mlir-aie's lowering (:mod:`aiedsl.toolchain.lower`),
which its build's report.txt follows: ``aiedsl map`` keeps such a map of its own design."""
OVER_MARKS = (' class="over"', ' class="over-text"', 'class="membar over"', 'class="route over"')
"""How map.svg.j2 marks (in red) what is over a limit."""


def shows_over(svg: str) -> bool:
    """Whether map ``svg`` marks anything over its limit (in red)."""
    return any(mark in svg for mark in OVER_MARKS)


@dataclass
class Bar:
    """One buffer in a tile's memory bar."""

    x: float
    w: float
    color: str
    title: str


@dataclass
class TileView:
    """What the template draws for one tile."""

    col: int
    row: int
    x: float
    y: float
    kind: str
    used: bool
    title: str
    runs: list[str]
    """What runs there: the core, then up to two kernels, a line each."""
    lines: list[tuple[str, bool]]
    """Resource lines and whether each is over its limit."""
    mem_text: str
    mem_over: bool
    bars: list[Bar] = field(default_factory=list)
    bank_ticks: list[float] = field(default_factory=list)


@dataclass
class RouteView:
    """One stream: its path data and its legend entry."""

    fifo: str
    color: str
    d: str
    label: str
    label_x: float
    label_y: float
    over: bool
    packet_id: int | None = None
    """Its packet id when the stream is packet-switched (``data-packet-id`` on its path)."""


def tile_map(d: Design, target: TargetModel, table: dict[Coord, TileUsage],
             congested: list[Congestion] | None = None, note: str | None = PLAN_NOTE) -> str:
    """The SVG text of ``d``'s map (``d`` placed; its routes drawn when it has them), ``note``
    under its subtitle (None: none, for a map the lowering annotates)."""
    rows = sorted({target.shim_row, *target.memtile_rows, *target.core_rows})
    top = MARGIN + 30
    height = top + len(rows) * (TILE_H + GAP) + MARGIN
    grid_w = MARGIN + target.cols * (TILE_W + GAP)
    width = grid_w + LEGEND_W

    def origin(tile: Coord) -> tuple[float, float]:
        r = rows.index(tile[1])
        return (MARGIN + tile[0] * (TILE_W + GAP),
                top + GAP + (len(rows) - 1 - r) * (TILE_H + GAP))

    colors = _colors(d)
    tiles = [_tile_view(t, table.get(t), target, origin(t), d, colors) for t in target.tiles()]
    over_wires = {c.wire for c in congested or []}
    routes = []
    from_tile: dict[Coord, int] = {}
    for r in (d.physical.routes if d.physical else ()):
        k = from_tile[r.src] = from_tile.get(r.src, -1) + 1  # stagger names leaving one tile
        routes.append(_route_view(r, origin, colors[r.fifo], over_wires, d, k))
    tile_of = {c.name: c.tile for c in d.cores if c.tile is not None}
    cascades = [_cascade_view(origin(tile_of[c.src]), origin(tile_of[c.dst]), c.src, c.dst)
                for c in d.cascades if c.src in tile_of and c.dst in tile_of]
    n_wires = sum(len(r.wires) for r in d.physical.routes) if d.physical else 0
    shared = sorted(d.physical.shared) if d.physical else []
    height = max(height, top + 60 + 14 * (len(routes) + len(shared) + len(cascades)))
    return render("map.svg.j2", version=__version__, width=width, height=height,
                  title=f"{d.name} on {d.device}",
                  subtitle=f"{len(d.cores)} cores, {len(routes)} streams over {n_wires} wires"
                  + (f", {len(shared)} in shared memory" if shared else "")
                  + (f"; {len(congested)} wire bundles over capacity (red)" if congested else ""),
                  tiles=tiles, routes=routes, cascades=cascades, tile_w=TILE_W, tile_h=TILE_H,
                  kind_fill=KIND_FILL, legend_x=grid_w + 10, shared=shared, note=note)


def _cascade_view(src: tuple[float, float], dst: tuple[float, float], a: str, b: str
                  ) -> dict[str, object]:
    """A cascade link drawn across the gap between two neighbouring tiles, near their corner."""
    if src[1] == dst[1]:  # along a row
        y = src[1] + TILE_H * 0.9
        x1, x2 = (src[0] + TILE_W, dst[0]) if dst[0] > src[0] else (src[0], dst[0] + TILE_W)
        y1 = y2 = y
    else:  # along a column
        x1 = x2 = src[0] + TILE_W * 0.9
        y1, y2 = (src[1] + TILE_H, dst[1]) if dst[1] > src[1] else (src[1], dst[1] + TILE_H)
    return {"x1": x1, "y1": y1, "x2": x2, "y2": y2, "label": f"cascade {a} -> {b}"}


def is_aiedsl_map(head: str) -> bool:
    """Was this SVG (its first characters) drawn by aiedsl? Its generator comment says so."""
    return any(line.startswith("<!-- ") and ": generated by aiedsl " in line
               for line in head.splitlines()[:3])


def _colors(d: Design) -> dict[str, str]:
    """One colour per channel (or lone fifo), in declaration order."""
    groups: dict[str, str] = {}
    out = {}
    for f in d.fifos:
        key = f.channel or f.name.split("_l3_")[0]
        if key not in groups:
            groups[key] = PALETTE[len(groups) % len(PALETTE)]
        out[f.name] = groups[key]
    return out


def _tile_view(tile: Coord, u: TileUsage | None, target: TargetModel, xy: tuple[float, float],
               d: Design, colors: dict[str, str]) -> TileView:
    kind = target.kind_of(tile)
    assert kind is not None
    lim = target.limits(kind)
    v = TileView(tile[0], tile[1], xy[0], xy[1], kind, u is not None,
                 f"{kind} ({tile[0]},{tile[1]})", [], [], "", False)
    if u is None:
        return v
    who, _, what = u.runs.partition(": ")
    v.runs = [who + (":" if what else "")] + what.split(", ")[:2] if u.runs else []
    ins, outs = len(u.dma_in), len(u.dma_out)
    v.lines.append((f"DMA in {ins}/{lim.dma_in}  out {outs}/{lim.dma_out}",
                    ins > lim.dma_in or outs > lim.dma_out))
    locks, bds = TileUsage.total(u.locks), TileUsage.total(u.bds)
    half = lim.bds_per_channel_parity
    parity = [TileUsage.total(p) for p in u.bds_by_parity]
    if half is not None and any(n > half for n in parity):
        # the limit broken is a half's (even channels use BDs 0-23, odd ones 24-47): show those
        bd_text = f"BDs {parity[0]}/{half} even, {parity[1]}/{half} odd"
    else:
        bd_text = f"BDs {bds}/{lim.bds}"
    v.lines.append((f"locks {locks}/{lim.locks}  {bd_text}",
                    locks > lim.locks or bds > lim.bds or bd_text.endswith(" odd")))
    if lim.memory:
        mem = TileUsage.total(u.memory)
        v.mem_text = TileUsage.memory_text(mem, lim.memory)
        v.mem_over = mem > lim.memory
        scale = (TILE_W - 20) / max(lim.memory, mem)
        v.bank_ticks = [b * lim.memory / lim.banks * scale for b in range(1, lim.banks)]
        for b in (d.physical.buffers if d.physical else ()):
            if b.tile == tile:
                v.bars.append(Bar(b.address * scale, max(b.nbytes * scale, 1.0),
                                  colors.get(b.fifo or "", "#9e9e9e"),
                                  f"{b.name}: {b.nbytes} B at {b.address:#x} (bank {b.bank})"))
    return v


def _switch(origin: Origin, tile: Coord) -> tuple[float, float]:
    """Where a tile's stream switch is drawn: the gap at its north-east corner."""
    x, y = origin(tile)
    return x + TILE_W + GAP / 2, y - GAP / 2


def _offset(direction: str, idx: int) -> tuple[float, float]:
    """A wire's lane: northward/eastward on one side of the gap's centre, the others opposite."""
    lane = (idx + 1) * LANE
    return {"north": (-lane, 0.0), "south": (lane, 0.0), "east": (0.0, -lane),
            "west": (0.0, lane)}[direction]


def _route_view(r: Route, origin: Origin, color: str, over_wires: set[Wire],
                d: Design, k: int) -> RouteView:
    def pt(p: tuple[float, float]) -> str:
        return f"{p[0]:.1f},{p[1]:.1f}"

    parts = []
    ends: dict[Coord, tuple[float, float]] = {}  # where the stream reaches each tile's switch
    sx, sy = _switch(origin, r.src)
    ox, oy = origin(r.src)
    ends[r.src] = (sx, sy)
    parts.append(f"M{pt((ox + TILE_W - 8, oy + 8))}L{pt((sx, sy))}")  # the sending DMA
    over = False
    for a, b, idx in r.wires:
        direction = direction_of(a, b)
        dx, dy = _offset(direction, idx)
        (ax, ay), (bx, by) = _switch(origin, a), _switch(origin, b)
        start, end = (ax + dx, ay + dy), (bx + dx, by + dy)
        parts.append(f"M{pt(ends[a])}L{pt(start)}L{pt(end)}")
        ends[b] = end
        over = over or (a, direction) in over_wires
    for t in r.dsts:
        x, y = origin(t)
        parts.append(f"M{pt(ends.get(t, _switch(origin, t)))}L{pt((x + TILE_W - 8, y + 8))}")
    f = d.fifo(r.fifo)
    n = len(r.dsts)
    label = f"{r.fifo}: {f.producer.label()} -> " + (
        f.consumers[0].label() if n == 1 else f"{n} tiles (broadcast)") + \
        f", {len(r.wires)} wire" + ("" if len(r.wires) == 1 else "s") + \
        ("" if r.packet_id is None else f", packet id {r.packet_id}")
    return RouteView(r.fifo, color, "".join(parts), label, sx + 4, sy - 4 - 9 * k, over,
                     r.packet_id)
