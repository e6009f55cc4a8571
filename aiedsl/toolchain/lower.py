"""``aiedsl build`` with mlir-aie's own lowering, when ``aie-opt`` and ``aie-translate`` are here.

The passes aiecc runs before any kernel is compiled
(:func:`~aiedsl.toolchain.commands.pass_pipeline`) turn ``aie.mlir`` into

* ``physical.mlir``: buffers with addresses and banks, locks, DMA channels with their BD chains,
  switchbox and shim-mux connections (the resource allocation and the router);
* ``npu.mlir``: the runtime sequence as NPU instructions;
* ``insts.bin``: those instructions as little-endian 32-bit words (``aie-translate
  --aie-npu-to-binary``), what the NPU runs; Peano is not needed for any of it.

The tools run in a private temporary directory, so the build directory is still replaced whole:
``physical.mlir``, ``npu.mlir`` and ``lowering.json`` (what was run, the tool versions, and the
size and sha256 of ``insts.bin``) are written with the build's other files, and ``report.txt``
and ``map.svg`` are then drawn from ``physical.mlir`` (read with
:func:`~aiedsl.toolchain.physical.parse_physical`) instead of aiedsl's own plan, and say so.
``insts.bin`` and the tools' logs are tool outputs, recorded in the build directory's marker.
The same ``aie.mlir`` with the same tools is not lowered again.

A failing tool is shown at the design line its output points to (the ``loc(...)`` aiedsl emits);
the build's files are still written, with its logs, and aiedsl's plan draws the map.

Example
-------
>>> lowering = lower_design(gen.design, gen.files, Path("build/passthrough"), opt, translate)
...                                                                  # doctest: +SKIP
>>> lowering.ok, sorted(lowering.files)                              # doctest: +SKIP
(True, ['lowering.json', 'npu.mlir', 'physical.mlir'])
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from aiedsl.checks.resources import TileUsage
from aiedsl.codegen.report import render_report
from aiedsl.codegen.tilemap import LOWERED, tile_map
from aiedsl.errors import ToolchainError, counted
from aiedsl.files import replace_file
from aiedsl.builddir.build import tool_outputs
from aiedsl.builddir.marker import read_marker
from aiedsl.ir.design import Design
from aiedsl.ir.physical import Connect, DmaChannel, Physical, Route
from aiedsl.shell import argv_strings, shell_line
from aiedsl.targets import TargetModel, get_target
from aiedsl.toolchain.commands import INSTS, lower_argvs, pass_pipeline, pipeline_passes
from aiedsl.toolchain.tool_run import Step, run_step
from aiedsl.toolchain.discover import Tool, absolute_env
from aiedsl.toolchain.physical import parse_physical, unread
from aiedsl.version import __version__

STAMP = "lowering.json"
TEXT_OUTPUTS = ("physical.mlir", "npu.mlir")
NO_LOWER = " (the MLIR and C++ are written; build with --no-lower, or lower=False, to skip " \
           "mlir-aie's lowering: the map and report then show aiedsl's plan)"

Coord = tuple[int, int]


@dataclass
class Lowering:
    """What mlir-aie's lowering of one ``aie.mlir`` gave (or why it gave nothing)."""

    files: dict[str, str] = field(default_factory=dict)
    """Text files written with the build: ``physical.mlir``, ``npu.mlir``, ``lowering.json``,
    and ``report.txt``/``map.svg`` drawn from the lowering."""
    insts: bytes | None = None
    """``insts.bin`` to place (None: nothing new, e.g. a cached lowering whose file is kept)."""
    logs: dict[str, str] = field(default_factory=dict)
    """``logs/<step>.log`` -> text, placed with the tool outputs."""
    physical: Physical | None = None
    """``physical.mlir`` as aiedsl's physical IR (what the map and report show)."""
    cached: bool = False
    tools: dict[str, str] = field(default_factory=dict)
    """Tool -> version."""
    note: str = ""
    """Why the map and report still show aiedsl's plan, when they do; or, when they are drawn
    from the lowering, what they leave out because aiedsl could not read it in
    ``physical.mlir`` (empty when they show all of it)."""
    differs: list[str] = field(default_factory=list)
    """Where mlir-aie's lowering differs from aiedsl's plan (:func:`plan_differences`), which
    the checks judged: each said in the report and by the build."""
    error: ToolchainError | None = None

    @property
    def ok(self) -> bool:
        """Whether the lowering succeeded."""
        return self.error is None


def failed_reading(lowering: Lowering) -> bool:
    """Whether ``lowering`` failed at its first step, aie-opt reading ``aie.mlir`` (the one log
    written: each step writes its log as it runs, and none runs after a failure)."""
    return lowering.error is not None and len(lowering.logs) == 1


def lowering_key(mlir: str, steps: list[Step], tools: Mapping[str, str]) -> str:
    """sha256 of what the lowering reads: aiedsl's version, ``aie.mlir``, the command lines and
    the tool versions (the tools' paths are not part of it)."""
    h = hashlib.sha256(f"aiedsl {__version__}\n".encode())
    h.update(mlir.encode())
    for s in steps:
        h.update(shell_line([Path(s.argv[0]).name, *s.argv[1:]]).encode())
    h.update(json.dumps(dict(tools), sort_keys=True).encode())
    return h.hexdigest()


def plan_lowering(aie_opt: Tool, aie_translate: Tool, packet: bool = False) -> list[Step]:
    """The tool runs, with the paths found (``packet``: the fifos lowered to packet flows)."""
    assert aie_opt.path is not None and aie_translate.path is not None
    logs = {"aie-opt physical": "aie-opt-physical", "aie-opt npu": "aie-opt-npu",
            "aie-translate": "aie-translate"}
    labels = {"aie-opt physical": "aie-opt physical.mlir", "aie-opt npu": "aie-opt npu.mlir",
              "aie-translate": "aie-translate insts.bin"}
    return [Step(labels[name], argv_strings(argv), f"logs/{logs[name]}.log")
            for name, argv in lower_argvs(str(aie_opt.path), str(aie_translate.path), packet)]


def lower_design(d: Design, files: dict[str, str], out: Path, aie_opt: Tool,
                 aie_translate: Tool, usage: dict[Coord, TileUsage] | None = None,
                 env: Mapping[str, str] | None = None, hang: str = "") -> Lowering:
    """Lower ``files["aie.mlir"]`` (design ``d``, to be written to ``out``): from ``out``'s
    previous lowering when nothing changed, else with the tools in a temporary directory.

    A failure is returned (``error``), not raised: the caller writes the build and its logs
    first. With ``usage``, ``report.txt`` and ``map.svg`` are drawn from the lowering
    (``report.txt`` saying ``hang``, the hang check's line, as the plan's does).
    """
    tools = {aie_opt.name: aie_opt.version, aie_translate.name: aie_translate.version}
    steps = plan_lowering(aie_opt, aie_translate, d.flows == "packet")
    key = lowering_key(files["aie.mlir"], steps, tools)
    lowering = _cached(out, key, tools) or _run(d, files["aie.mlir"], out, steps, key, tools,
                                                 absolute_env(env))
    if lowering.ok and usage is not None:
        _draw(d, usage, lowering, hang)
    return lowering


def _cached(out: Path, key: str, tools: dict[str, str]) -> Lowering | None:
    """``out``'s previous lowering, when it lowered exactly this (and its insts.bin is the one
    it made)."""
    try:
        stamp = json.loads((out / STAMP).read_text())
        texts = {name: (out / name).read_text() for name in TEXT_OUTPUTS}
        insts = (out / INSTS).read_bytes()
    except (OSError, ValueError):
        return None
    if not isinstance(stamp, dict) or stamp.get("key") != key or \
            stamp.get("insts.bin", {}).get("sha256") != hashlib.sha256(insts).hexdigest():
        return None
    return Lowering(files={**texts, STAMP: (out / STAMP).read_text()}, cached=True, tools=tools)


def _run(d: Design, mlir: str, out: Path, steps: list[Step], key: str, tools: dict[str, str],
         env: dict[str, str]) -> Lowering:
    with tempfile.TemporaryDirectory(prefix="aiedsl-lower-") as scratch:
        work = Path(scratch)
        (work / "logs").mkdir()
        (work / "aie.mlir").write_text(mlir)
        error = None
        try:
            for step in steps:
                run_step(step, work, env, d, shown=out, fix=NO_LOWER)
        except ToolchainError as e:
            error = e
        logs = {s.log: (work / s.log).read_text() for s in steps if (work / s.log).is_file()}
        if error is not None:
            return Lowering(logs=logs, tools=tools, error=error)
        missing = [name for name in (*TEXT_OUTPUTS, INSTS) if not (work / name).is_file()]
        if missing:
            return Lowering(logs=logs, tools=tools, error=ToolchainError(
                "aie-opt", f"mlir-aie's lowering finished but did not write "
                f"{', '.join(missing)}", exit_code=5, found=f"see {out / 'logs'}",
                fix="check the mlir-aie version (aiedsl runs the passes of mlir-aie "
                    "1e400306, 2026-03, and later)" + NO_LOWER))
        texts = {name: (work / name).read_text() for name in TEXT_OUTPUTS}
        insts = (work / INSTS).read_bytes()
    stamp = {
        "aiedsl": __version__, "key": key, "tools": tools,
        "passes": {"physical.mlir": pipeline_passes(pass_pipeline("physical")),
                   "npu.mlir": pipeline_passes(pass_pipeline("npu"))},
        "commands": [shell_line([Path(s.argv[0]).name, *s.argv[1:]]) for s in steps],
        "insts.bin": {"bytes": len(insts), "words": len(insts) // 4,
                      "sha256": hashlib.sha256(insts).hexdigest()},
    }
    return Lowering(files={**texts, STAMP: json.dumps(stamp, indent=2) + "\n"}, insts=insts,
                    logs=logs, tools=tools)


# -- the map and the report, drawn from physical.mlir ---------------------------------------------

NOTE = ("streams, ports and allocation drawn from mlir-aie's lowering (physical.mlir, by "
        "{tools}); the resource table counts aiedsl's plan")


def _draw(d: Design, usage: dict[Coord, TileUsage], lowering: Lowering, hang: str) -> None:
    """Put ``report.txt`` and ``map.svg`` drawn from ``physical.mlir`` into ``lowering.files``
    (or say in ``note`` why they stay aiedsl's plan)."""
    try:
        text = lowering.files["physical.mlir"]
        real = parse_physical(text)
        target = get_target(d.device)
        physical = renderable(real, d, target)
        placed = d.model_copy(update={"physical": physical})
        tools = "; ".join(f"{name.split()[0]}: {v}" for name, v in lowering.tools.items())
        note = NOTE.format(tools=tools)
        gaps = unread(text) + _undrawn(d, physical)
        if gaps:
            note += f"; {LEFT_OUT}: " + "; ".join(gaps)
        if d.physical is not None:
            lowering.differs = plan_differences(d.physical, physical)
        if lowering.differs:
            note += (f"; it differs from aiedsl's plan, which the checks judged, in "
                     f"{counted(len(lowering.differs), 'place')}: "
                     + "; ".join(lowering.differs[:3])
                     + ("; ..." if len(lowering.differs) > 3 else ""))
        report = render_report(placed, target, usage, note=note, hang=hang)
        svg = tile_map(placed, target, usage, note=None)
    except Exception as e:  # a physical.mlir this aiedsl cannot read: keep the plan, say why
        lowering.note = f"physical.mlir could not be drawn ({type(e).__name__}: {e})"
        return
    lowering.files["report.txt"] = report
    lowering.files["map.svg"] = _annotate(svg, note)
    lowering.physical = physical
    if gaps:
        lowering.note = ("they leave out what aiedsl could not read in physical.mlir: "
                         + "; ".join(gaps))


LEFT_OUT = "left out as aiedsl could not read it in physical.mlir"
"""How the report and the map say what of the lowering they do not show."""


def _undrawn(d: Design, physical: Physical) -> list[str]:
    """The fifos of ``d`` with a stream (not in shared memory) that the drawing of the lowering
    has no route for: their stream through the switches could not be traced."""
    drawn = {r.fifo for r in physical.routes}
    return [f"the stream of '{f.name}' (no route from its sending DMA channel to its "
            "receivers through the switches)"
            for f in d.fifos if f.name not in physical.shared and f.name not in drawn]


def plan_differences(plan: Physical, real: Physical) -> list[str]:
    """Where ``real`` (mlir-aie's lowering, :func:`renderable`) allocates otherwise than
    ``plan`` (aiedsl's): a buffer's address or size, a tile's locks, a DMA channel's BD ids.
    aiedsl's plan is what its checks judged; the lowering is what runs. Empty when they agree,
    as for every shipped design (tests/test_lowering.py)."""
    out: list[str] = []
    mine = {(b.tile, b.name): b for b in plan.buffers}
    for b in real.buffers:
        p = mine.get((b.tile, b.name))
        if p is None:
            out.append(f"buffer {b.name} on {b.tile} is not in the plan")
        elif (p.address, p.nbytes) != (b.address, b.nbytes):
            out.append(f"buffer {b.name} on {b.tile}: {b.nbytes} B @ {b.address:#07x}, "
                       f"planned {p.nbytes} B @ {p.address:#07x}")
    locks: dict[Coord, list[int]] = {}
    for which, phys in enumerate((plan, real)):
        for lk in phys.locks:
            locks.setdefault(lk.tile, [0, 0])[which] += 1
    out += [f"{n} locks on {tile}, planned {planned}"
            for tile, (planned, n) in sorted(locks.items()) if planned != n]
    chans = {(c.tile, c.direction, c.channel): c.bds for c in plan.channels}
    for c in real.channels:
        planned = chans.get((c.tile, c.direction, c.channel))
        if planned is not None and planned and tuple(planned) != tuple(c.bds):
            out.append(f"{c.direction} {c.channel} on {c.tile} takes BDs "
                       f"{', '.join(map(str, c.bds))}, planned {', '.join(map(str, planned))}")
    return out


def _annotate(svg: str, note: str) -> str:
    """The map with ``note`` as a line of its own under the subtitle (the tiles start lower)."""
    m = re.search(r'<text x="40" y="48"[^>]*>.*?</text>\n', svg)
    if m is None:
        return svg
    line = (f'  <text x="40" y="64" font-size="11" fill="#455a64" {LOWERED}>'
            f'{html.escape(note, quote=False)}</text>\n')
    return svg[:m.end()] + line + svg[m.end():]


_STEP = {"North": (0, 1, "South"), "South": (0, -1, "North"), "East": (1, 0, "West"),
         "West": (-1, 0, "East")}


def renderable(real: Physical, d: Design, target: TargetModel) -> Physical:
    """``real`` (as :func:`parse_physical` reads it: one route per switch) in the shape the map
    and the report draw: one route per stream, traced from its sending DMA channel through the
    switch connections to the receiving ones, named after the design's fifo, and each channel
    named after the stream it carries. A packet stream (one an ``aie.packet_flow`` sends from the
    channel) is traced by its id through the packet rules, and its route carries the id.
    Shared-memory fifos are aiedsl's (mlir-aie gives them no DMA either)."""
    switch: dict[tuple[Coord, str], list[Connect]] = {}
    for r in real.routes:
        for c in r.connects:
            switch.setdefault((c.tile, c.switch), []).append(c)
    ids = {(f.src[0], f.src[1], f.src[2]): f.id for f in real.packet_flows}
    routes, names = [], {}
    for ch in real.channels:
        if ch.direction != "MM2S":
            continue
        route = _trace(ch, switch, target.shim_row, real.channels, d,
                       ids.get((ch.tile, "DMA", ch.channel)))
        if route is not None:
            routes.append(route)
            names[(ch.tile, "MM2S", ch.channel)] = route.fifo
            for t, chan in _ends(route):
                names[(t, "S2MM", chan)] = route.fifo
    order = {f.name: i for i, f in enumerate(d.fifos)}
    routes.sort(key=lambda r: order[r.fifo])
    channels = tuple(c.model_copy(update={"fifo": names.get((c.tile, c.direction, c.channel),
                                                            c.fifo)}) for c in real.channels)
    shared = d.physical.shared if d.physical is not None else {}
    # a core's stack is no aie.buffer (aiecc reserves it at the bottom of its memory, where
    # mlir-aie's allocation starts above it): the plan's, so the memory drawn adds up
    stacks = tuple(b for b in (d.physical.buffers if d.physical is not None else ())
                   if b.name.endswith(" stack"))
    return real.model_copy(update={"routes": tuple(routes), "channels": channels,
                                   "shared": dict(shared), "buffers": (*stacks, *real.buffers)})


def _trace(ch: DmaChannel, switch: dict[tuple[Coord, str], list[Connect]], shim_row: int,
           channels: tuple[DmaChannel, ...], d: Design, packet_id: int | None) -> Route | None:
    """The stream leaving DMA channel ``ch`` (its packets carrying ``packet_id``, or None for a
    circuit stream): every wire and connection to the DMA channels it reaches."""
    start = [(ch.tile, ("DMA", ch.channel))]
    used: list[Connect] = []
    if ch.tile[1] == shim_row:  # the shim DMA enters its switch through the shim mux
        start = []
        for c in switch.get((ch.tile, "shim_mux"), []):
            if c.src == ("DMA", ch.channel) and c.dst[0] == "North":
                used.append(c)
                start.append((ch.tile, ("South", c.dst[1])))
    wires: list[tuple[Coord, Coord, int]] = []
    dsts: list[tuple[Coord, int]] = []
    todo, seen = list(start), set()
    while todo:
        tile, port = todo.pop(0)
        if (tile, port) in seen:
            continue
        seen.add((tile, port))
        for c in _taken(switch.get((tile, "switchbox"), []), port, packet_id):
            used.append(c)
            bundle, idx = c.dst
            if bundle == "DMA":
                dsts.append((tile, idx))
            elif bundle == "South" and tile[1] == shim_row:
                for m in switch.get((tile, "shim_mux"), []):
                    if m.src == ("North", idx) and m.dst[0] == "DMA":
                        used.append(m)
                        dsts.append((tile, m.dst[1]))
            elif bundle in _STEP:
                dc, dr, arrive = _STEP[bundle]
                nxt = (tile[0] + dc, tile[1] + dr)
                wires.append((tile, nxt, idx))
                todo.append((nxt, (arrive, idx)))
    if not dsts:
        return None
    name = _fifo_name(ch, dsts, channels, d)
    if name is None:
        return None
    return Route(fifo=name, src=ch.tile, dsts=tuple(t for t, _ in dsts), wires=tuple(wires),
                 connects=tuple(used), packet_id=packet_id)


def _taken(connects: list[Connect], port: tuple[str, int], packet_id: int | None
           ) -> list[Connect]:
    """The connections of a switch that a stream arriving on slave ``port`` takes: each circuit
    connection from the port, and for a packet stream those of the port's first packet rule
    its id matches (a packet goes to the arbiter of the first matching entry, AIEOps.td's
    ``aie.rule``); a circuit stream's words are no packets, and no rule takes them."""
    rule = None
    if packet_id is not None:
        rule = next((c.rule for c in connects if c.src == port and c.rule is not None
                     and packet_id & c.rule[0] == c.rule[1]), None)
    return [c for c in connects
            if c.src == port and (c.rule is None or (rule is not None and c.rule == rule))]


def _ends(route: Route) -> list[tuple[Coord, int]]:
    """The (tile, S2MM channel) pairs a traced route ends at (a connection into a DMA port, in
    a tile's switch or a shim's mux)."""
    return [(c.tile, c.dst[1]) for c in route.connects if c.dst[0] == "DMA"]


def _fifo_name(ch: DmaChannel, dsts: list[tuple[Coord, int]], channels: tuple[DmaChannel, ...],
               d: Design) -> str | None:
    """The design's fifo a stream carries: the one from ``ch``'s tile to exactly the tiles it
    reaches (told apart, when several are, by the channels' own names in physical.mlir)."""
    ends = {t for t, _ in dsts}
    named = {ch.fifo} | {c.fifo for c in channels for t, i in dsts
                         if c.tile == t and c.direction == "S2MM" and c.channel == i}
    fifos = [f for f in d.fifos if f.producer.tile == ch.tile
             and {c.tile for c in f.consumers} == ends]
    for f in fifos:
        if f.name in named:
            return f.name
    if fifos:
        return fifos[0].name
    for f in d.fifos:
        if f.name in named:
            return f.name
    return None


# -- placing the lowering's files in the build directory ---------------------------------------


def settle(out: Path, lowering: Lowering | None) -> None:
    """After the build's files are written to ``out``: place this lowering's ``insts.bin`` and
    logs (tool outputs, listed in the marker); when the build was not lowered (no tools,
    ``--no-lower``, or a tool failed), remove a previous build's lowering, which no longer
    matches ``aie.mlir``: its ``physical.mlir``, ``npu.mlir``, ``lowering.json``, and its
    ``insts.bin`` unless something else (aiecc) rewrote that since."""
    lowered = lowering is not None and lowering.ok
    place = lowering is not None and (bool(lowering.logs) or lowering.insts is not None)
    stale = not lowered and (out / STAMP).exists()
    if not (place or stale):
        return
    with tool_outputs(out):
        if lowering is not None:
            for rel, text in lowering.logs.items():
                _replace(out / rel, text.encode())
            if lowering.ok and lowering.insts is not None:
                _replace(out / INSTS, lowering.insts)
        if stale:
            _remove_stale(out)


def _remove_stale(out: Path) -> None:
    """Remove the previous lowering's files from ``out``: those its marker lists as aiedsl's
    alone (a reviewer: a folder's own file of one of those names is never aiedsl's to
    delete), ``insts.bin`` only while it is the one the lowering made."""
    marker = read_marker(out)
    ours = set(marker["files"]) if marker is not None else set()
    try:
        stamp = json.loads((out / STAMP).read_text())
    except (OSError, ValueError):
        return
    if STAMP not in ours:
        return
    for name in TEXT_OUTPUTS:
        if name in ours:
            (out / name).unlink(missing_ok=True)
    try:
        made = stamp.get("insts.bin", {}).get("sha256") if isinstance(stamp, dict) else None
        if made and hashlib.sha256((out / INSTS).read_bytes()).hexdigest() == made:
            (out / INSTS).unlink()
    except OSError:
        pass
    (out / STAMP).unlink(missing_ok=True)


def _replace(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all (a temporary file beside it, then one rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(path, data, path.parent)

