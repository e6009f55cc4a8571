"""The map and report of a packet design drawn from mlir-aie's lowering (``physical.mlir``).

mlir-aie's packet router (``AIEPathfinderPass::runOnPacketFlow``, AIECreatePathFindFlows.cpp)
writes no ``aie.connect`` for a packet flow: each switchbox gets ``aie.amsel``s, the
``aie.masterset``s that name them, and per slave port an ``aie.packet_rules`` of
``aie.rule(mask, value, %amsel)``s; only a shim DMA's crossing of the shim mux stays an
``aie.connect``. aiedsl's reader followed ``aie.connect``s only, so a packet design's map and
report, headed "drawn from mlir-aie's lowering", showed no stream at all.

``physical.mlir`` here is the reference lowering of ``designs/vector_scalar_mul.py`` (a packet
design needs no memtile link there) with its flows as ``--packet-sw-objFifos`` makes them,
written by hand in mlir-aie's printed form: the ops' syntax is that of the CHECK lines of
mlir-aie's test/create-packet-flows (``%0 = aie.amsel<5> (3)``, ``%1 = aie.masterset(South : 0,
%0) {keep_pkt_header = true}``, ``aie.packet_rules(TileControl : 0) { aie.rule(31, 15, %0) }``,
the shim mux's ``aie.connect<DMA : 0, North : 3>``) and of the reference lowering's own control
overlay; what each switchbox holds, and in which order, is what runOnPacketFlow makes of the
routes: amsels by (msel, arbiter), the lowest free one per flow (arbiter 5, msel 3 for the
control overlay's), master sets sorted by port, packet rules in the reverse of the order the
flows reach the switch, a shim DMA's rules and master set moved to South 3/7 and South 2 behind
the mux. Its routes are the ones aiedsl's router plans for the design.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

import aiedsl
from aiedsl.checks import check_design
from aiedsl.cli.reports import report_build
from aiedsl.ir import Design
from aiedsl.loader import load_design
from aiedsl.targets import get_target
from aiedsl.toolchain.lower import renderable
from aiedsl.toolchain.physical import parse_physical, unread
from shared_reference import reference_file
from test_lower import _install

ROOT = Path(__file__).resolve().parents[1]
DESIGN = (ROOT / "designs" / "vector_scalar_mul.py").read_text().replace(
    '@design(device="npu1_1col")', '@design(device="npu1_1col", flows="packet")')

SHIM = """\
    %shim_mux_0_0 = aie.shim_mux(%shim_noc_tile_0_0) {
      aie.connect<DMA : 0, North : 3>
      aie.connect<DMA : 1, North : 7>
      aie.connect<North : 2, DMA : 0>
    }
    %switchbox_0_0 = aie.switchbox(%shim_noc_tile_0_0) {
      %0 = aie.amsel<0> (0)
      %1 = aie.amsel<1> (0)
      %2 = aie.amsel<2> (0)
      %3 = aie.amsel<5> (3)
      %4 = aie.masterset(South : 2, %2)
      %5 = aie.masterset(South : 0, %3) {keep_pkt_header = true}
      %6 = aie.masterset(North : 0, %1)
      %7 = aie.masterset(North : 1, %0)
      aie.packet_rules(TileControl : 0) {
        aie.rule(31, 15, %3)
      }
      aie.packet_rules(North : 1) {
        aie.rule(31, 2, %2)
      }
      aie.packet_rules(South : 7) {
        aie.rule(31, 1, %1)
      }
      aie.packet_rules(South : 3) {
        aie.rule(31, 0, %0)
      }
    }
"""
CORE = """\
    %switchbox_0_2 = aie.switchbox(%tile_0_2) {
      %0 = aie.amsel<0> (0)
      %1 = aie.amsel<1> (0)
      %2 = aie.amsel<2> (0)
      %3 = aie.masterset(DMA : 0, %0)
      %4 = aie.masterset(DMA : 1, %1)
      %5 = aie.masterset(South : 1, %2)
      aie.packet_rules(DMA : 0) {
        aie.rule(31, 2, %2)
      }
      aie.packet_rules(South : 0) {
        aie.rule(31, 1, %1)
      }
      aie.packet_rules(South : 1) {
        aie.rule(31, 0, %0)
      }
    }
"""
MEMTILE = """\
    %mem_tile_0_1 = aie.tile(0, 1)
    %switchbox_0_1 = aie.switchbox(%mem_tile_0_1) {
      %0 = aie.amsel<0> (0)
      %1 = aie.amsel<1> (0)
      %2 = aie.amsel<2> (0)
      %3 = aie.masterset(South : 1, %2)
      %4 = aie.masterset(North : 0, %1)
      %5 = aie.masterset(North : 1, %0)
      aie.packet_rules(North : 1) {
        aie.rule(31, 2, %2)
      }
      aie.packet_rules(South : 0) {
        aie.rule(31, 1, %1)
      }
      aie.packet_rules(South : 1) {
        aie.rule(31, 0, %0)
      }
    }
"""
FLOWS = """\
    aie.packet_flow(0) {
      aie.packet_source<%shim_noc_tile_0_0, DMA : 0>
      aie.packet_dest<%tile_0_2, DMA : 0>
    }
    aie.packet_flow(1) {
      aie.packet_source<%shim_noc_tile_0_0, DMA : 1>
      aie.packet_dest<%tile_0_2, DMA : 1>
    }
    aie.packet_flow(2) {
      aie.packet_source<%tile_0_2, DMA : 0>
      aie.packet_dest<%shim_noc_tile_0_0, DMA : 0>
    }
"""


def packet_lowering() -> str:
    """The reference lowering of vector_scalar_mul on npu1 with packet-switched flows."""
    text = reference_file("mlir-aie-lowered", "vector_scalar_mul_npu1", "physical.mlir") \
        .read_text()

    def edit(old: str, new: str) -> None:
        nonlocal text
        assert text.count(old) == 1, old
        text = text.replace(old, new)

    # the circuit routes out: the switchboxes and shim mux, after the control overlay's flow
    start = text.index("    %switchbox_0_0 = aie.switchbox")
    text = text[:start] + text[text.index("    aie.wire("):]
    # the packet router puts a switchbox it makes right after its tile, the shim mux before it
    shim = re.search(r"    %shim_noc_tile_0_0 = aie\.tile\(0, 0\).*\n", text)
    core = re.search(r"    %tile_0_2 = aie\.tile\(0, 2\).*\n", text)
    assert shim and core
    edit(core.group(0), core.group(0) + CORE)
    edit(shim.group(0), shim.group(0) + SHIM)
    # a tile only a route crosses is made at the end, where the router's builder stands
    edit("    aie.wire(%shim_mux_0_0", MEMTILE + "    aie.wire(%shim_mux_0_0")
    # the objectfifo lowering's packet flows and packet headers (packet-sw-objFifos)
    edit("    func.func private", FLOWS + "    func.func private")
    edit("@infactor_shim_alloc(%shim_noc_tile_0_0, MM2S, 0)",
         "@infactor_shim_alloc(%shim_noc_tile_0_0, MM2S, 0, <pkt_type = 0, pkt_id = 0>)")
    edit("@in_shim_alloc(%shim_noc_tile_0_0, MM2S, 1)",
         "@in_shim_alloc(%shim_noc_tile_0_0, MM2S, 1, <pkt_type = 0, pkt_id = 1>)")
    for buf in ("out_buff_0", "out_buff_1"):
        edit(f"      aie.dma_bd(%{buf} :",
             f"      aie.dma_bd_packet(0, 2)\n      aie.dma_bd(%{buf} :")
    return text


def planned() -> Design:
    handle = load_design(ROOT / "designs" / "vector_scalar_mul.py")
    placed, _ = check_design(handle.ir.model_copy(update={"flows": "packet"}))
    return placed


def test_packet_switchboxes_are_read_as_connections_with_their_rules() -> None:
    real = parse_physical(packet_lowering())
    read = [(c.tile, c.switch, c.src, c.dst, c.rule) for r in real.routes for c in r.connects]
    assert read == [
        ((0, 0), "shim_mux", ("DMA", 0), ("North", 3), None),
        ((0, 0), "shim_mux", ("DMA", 1), ("North", 7), None),
        ((0, 0), "shim_mux", ("North", 2), ("DMA", 0), None),
        ((0, 0), "switchbox", ("TileControl", 0), ("South", 0), (31, 15)),
        ((0, 0), "switchbox", ("North", 1), ("South", 2), (31, 2)),
        ((0, 0), "switchbox", ("South", 7), ("North", 0), (31, 1)),
        ((0, 0), "switchbox", ("South", 3), ("North", 1), (31, 0)),
        ((0, 1), "switchbox", ("North", 1), ("South", 1), (31, 2)),
        ((0, 1), "switchbox", ("South", 0), ("North", 0), (31, 1)),
        ((0, 1), "switchbox", ("South", 1), ("North", 1), (31, 0)),
        ((0, 2), "switchbox", ("DMA", 0), ("South", 1), (31, 2)),
        ((0, 2), "switchbox", ("South", 0), ("DMA", 1), (31, 1)),
        ((0, 2), "switchbox", ("South", 1), ("DMA", 0), (31, 0)),
    ]
    assert unread(packet_lowering()) == []


def test_an_amsel_the_switch_does_not_define_is_said() -> None:
    text = packet_lowering().replace("%5 = aie.masterset(South : 1, %2)",
                                     "%5 = aie.masterset(South : 1, %9)")
    assert unread(text) == ["switchbox (0, 2): masterset(South : 1) names %9, which is no "
                            "aie.amsel of the switch"]


def test_a_packet_lowering_draws_every_stream_as_aiedsl_plans_it(in_root: Path) -> None:
    placed = planned()
    drawn = renderable(parse_physical(packet_lowering()), placed, get_target(placed.device))
    assert placed.physical is not None

    def shown(routes: tuple) -> dict:  # type: ignore[type-arg]
        return {r.fifo: (r.packet_id, r.src, r.dsts, r.wires,
                         sorted((c.tile, c.switch, c.src, c.dst, c.rule) for c in r.connects))
                for r in routes}

    assert [(r.fifo, r.packet_id) for r in drawn.routes] == [
        ("infactor", 0), ("in", 1), ("out", 2)]
    assert shown(drawn.routes) == shown(placed.physical.routes)


def test_a_rule_sends_a_packet_by_the_first_entry_its_id_matches() -> None:
    """AIEOps.td's aie.rule: an id is ANDed with the mask and compared with the value, and the
    first matching rule of the port routes the packet. Two rules on the memtile's South 1, the
    first masked to match ids 0-3: id 0 takes it, not the second."""
    text = packet_lowering().replace(
        "      aie.packet_rules(South : 1) {\n        aie.rule(31, 0, %0)\n      }\n    }\n"
        "    aie.wire",
        "      aie.packet_rules(South : 1) {\n        aie.rule(28, 0, %0)\n"
        "        aie.rule(31, 0, %1)\n      }\n    }\n    aie.wire")
    placed = planned()
    drawn = renderable(parse_physical(text), placed, get_target(placed.device))
    infactor = next(r for r in drawn.routes if r.fifo == "infactor")
    assert [(c.tile, c.src, c.dst, c.rule) for c in infactor.connects
            if c.tile == (0, 1)] == [((0, 1), ("South", 1), ("North", 1), (28, 0))]


@pytest.fixture
def packet_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Fake aie-opt and aie-translate that hand back the packet lowering."""
    fixture = tmp_path / "fixture"
    fixture.mkdir()
    ref = reference_file("mlir-aie-lowered", "vector_scalar_mul_npu1", "physical.mlir").parent
    (fixture / "physical.mlir").write_text(packet_lowering())
    (fixture / "npu.mlir").write_text((ref / "npu.mlir").read_text())
    (fixture / "insts.bin").write_bytes((ref / "insts.bin").read_bytes())
    (tmp_path / "seen").mkdir()
    _install(tmp_path / "mlir-aie", fixture, tmp_path / "calls.log", tmp_path / "seen", {})
    monkeypatch.setenv("MLIR_AIE_INSTALL_DIR", str(tmp_path / "mlir-aie"))
    monkeypatch.delenv("PEANO_INSTALL_DIR", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "vsm.py").write_text(DESIGN)
    return {"root": tmp_path, "fixture": fixture}


def test_a_packet_build_draws_its_streams_from_the_lowering(
        packet_tools: dict[str, Path]) -> None:
    """The tester's finding: with aie-opt installed, a packet design's report listed no stream
    and its map drew none, under a heading that said they were drawn from the lowering."""
    art = aiedsl.build(packet_tools["root"] / "vsm.py", output="out")
    assert art.lowering is not None and art.lowering.physical is not None
    assert art.lowering.note == ""
    out = packet_tools["root"] / "out"
    report = (out / "report.txt").read_text()
    assert "drawn from mlir-aie's lowering" in report.splitlines()[1]
    assert ("streams (DMA channel -> DMA channels; wires = switch-to-switch hops)\n"
            "  infactor: (0,0) MM2S 0 -> (0,2) S2MM 0; 2 wires; packet id 0\n"
            "  in: (0,0) MM2S 1 -> (0,2) S2MM 1; 2 wires; packet id 1\n"
            "  out: (0,2) MM2S 0 -> (0,0) S2MM 0; 2 wires; packet id 2\n") in report
    svg = (out / "map.svg").read_text()
    assert re.findall(r'class="route[^"]*" data-fifo="(\w+)" data-packet-id="(\d+)"', svg) == [
        ("infactor", "0"), ("in", "1"), ("out", "2")]
    assert "<title>out: core[0,0] (0, 2) -&gt; shim (0, 0), 2 wires, packet id 2</title>" in svg


def test_what_cannot_be_read_is_said_not_left_out_silently(
        packet_tools: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """An op of a switchbox aiedsl does not know (here one standing for a packet rule of a
    later mlir-aie) leaves a stream it cannot trace: the build, the report and the map say
    what they leave out."""
    physical = packet_tools["fixture"] / "physical.mlir"
    physical.write_text(physical.read_text().replace(MEMTILE, MEMTILE.replace(
        "      aie.packet_rules(North : 1) {\n        aie.rule(31, 2, %2)\n      }\n",
        "      aie.packet_route(North : 1, 2, %2)\n")))
    art = aiedsl.build(packet_tools["root"] / "vsm.py", output="out")
    assert art.lowering is not None and art.lowering.physical is not None
    gaps = ("switchbox (0, 1): aie.packet_route not read; the stream of 'out' (no route from "
            "its sending DMA channel to its receivers through the switches)")
    assert art.lowering.note == (
        "they leave out what aiedsl could not read in physical.mlir: " + gaps)
    out = packet_tools["root"] / "out"
    note = (out / "report.txt").read_text().splitlines()[1]
    assert note.endswith("; left out as aiedsl could not read it in physical.mlir: " + gaps)
    assert "left out as aiedsl could not read it in physical.mlir: " + gaps in \
        (out / "map.svg").read_text().replace("&#x27;", "'")
    assert re.findall(r'data-fifo="(\w+)"', (out / "map.svg").read_text()) == [
        "infactor", "in"]
    report_build(art, time.perf_counter())
    assert capsys.readouterr().out.splitlines()[-1] == (
        "lowered with mlir-aie (aie-opt: aie-opt 0.9 (test double); aie-translate: "
        "aie-translate 0.9 (test double)): physical.mlir, npu.mlir, insts.bin; report.txt and "
        "map.svg are drawn from it, but they leave out what aiedsl could not read in "
        "physical.mlir: " + gaps)
