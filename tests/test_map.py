"""map.svg, read as XML: one group per tile, one path per route, the labels, and red where a
design is over a limit; and the text tables report.txt carries beside it."""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Callable

import pytest

from aiedsl.emit import generate
from aiedsl.loader import load_design
from tests.command_line import run_command

DesignFile = Callable[..., Path]
DESIGNS = Path(__file__).resolve().parents[1] / "designs"
SVG = "{http://www.w3.org/2000/svg}"


def _svg(text: str) -> ET.Element:
    return ET.fromstring(text.encode())


def _tiles(root: ET.Element) -> dict[str, ET.Element]:
    return {g.get("id"): g for g in root.iter(f"{SVG}g")
            if "tile" in (g.get("class") or "").split()}


def _routes(root: ET.Element) -> list[ET.Element]:
    return [p for p in root.iter(f"{SVG}path") if "route" in (p.get("class") or "").split()]


def _texts(g: ET.Element) -> list[str]:
    return [t.text or "" for t in g.iter(f"{SVG}text")]


@pytest.fixture(scope="module")
def npu1_build():  # type: ignore[no-untyped-def]
    return generate(load_design(DESIGNS / "gemm_bf16.py"))


@pytest.fixture(scope="module")
def npu2_build():  # type: ignore[no-untyped-def]
    return generate(load_design(DESIGNS / "gemm_bf16.py", {"COLS": "8"}, "npu2"))


@pytest.mark.parametrize("which, tiles, routes", [("npu1_build", 24, 36),
                                                  ("npu2_build", 48, 64)])
def test_one_group_per_tile_and_one_path_per_route(which: str, tiles: int, routes: int,
                                                   request: pytest.FixtureRequest) -> None:
    gen = request.getfixturevalue(which)
    root = _svg(gen.files["map.svg"])
    assert len(_tiles(root)) == tiles
    assert len(_routes(root)) == routes == len(gen.design.physical.routes)
    assert [p.get("data-fifo") for p in _routes(root)] == [
        r.fifo for r in gen.design.physical.routes]


def test_tiles_are_labelled_with_what_runs_and_their_use(npu1_build) -> None:  # type: ignore[no-untyped-def]
    tiles = _tiles(_svg(npu1_build.files["map.svg"]))
    assert _texts(tiles["tile-0-2"]) == [
        "core (0,2)", "core[0,0]:", "matmul_bf16_f32_64x64x64_4x8x4", "zero_f32_4096",
        "DMA in 2/2  out 1/2", "locks 6/16  BDs 5/16", "memory 49.0 / 64 KB"]
    assert _texts(tiles["tile-1-1"]) == [
        "memtile (1,1)", "DMA in 6/6  out 3/6", "locks 12/64  BDs 24/48",
        "memory 160.0 / 512 KB"]
    assert _texts(tiles["tile-0-0"])[:2] == ["shim (0,0)", "DMA in 1/2  out 2/2"]
    # one bar segment per buffer, each titled with its address and bank
    bars = [r for r in tiles["tile-0-2"].iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]
    assert [r.find(f"{SVG}title").text for r in bars][:2] == [  # type: ignore[union-attr]
        "core[0,0] stack: 1024 B at 0x0 (bank 0)", "c_0_0_buff_0: 16384 B at 0x4000 (bank 1)"]
    assert not [e for e in _svg(npu1_build.files["map.svg"]).iter()
                if "over" in (e.get("class") or "").split()]


def test_a_broadcast_is_drawn_as_a_tree(npu1_build) -> None:  # type: ignore[no-untyped-def]
    """a_0: the sending DMA, four wires, and a branch into each of the four receiving DMAs."""
    a0 = next(p for p in _routes(_svg(npu1_build.files["map.svg"]))
              if p.get("data-fifo") == "a_0")
    assert a0.get("d", "").count("M") == 1 + 4 + 4
    assert a0.find(f"{SVG}title").text == (  # type: ignore[union-attr]
        "a_0: memtile (0, 1) -> 4 tiles (broadcast), 4 wires")
    assert a0.get("data-packet-id") is None  # a circuit stream


def test_report_lists_streams_ports_and_allocation(npu1_build) -> None:  # type: ignore[no-untyped-def]
    report = npu1_build.files["report.txt"]
    assert ("  a_0: (0,1) MM2S 0 -> (0,2) S2MM 0, (1,2) S2MM 0, (2,2) S2MM 0, (3,2) S2MM 0; "
            "4 wires\n") in report
    assert "  c_l3_0: (0,1) MM2S 2 -> (0,0) S2MM 0; 1 wire\n" in report
    assert "  (0,2)  4 / 6  4 / 4  1 / 4  -\n" in report  # core (0,2) sends south on all 4 wires
    assert ("  (0,2) S2MM 0 a_0 (BDs 0-1), S2MM 1 b_0 (BDs 2-3), MM2S 0 c_0_0 (BD 4); "
            "6 locks\n") in report
    assert "      c_0_0_buff_0 16384 B @ 0x04000 bank 1\n" in report
    # a shim channel's BDs are the runtime's (as the instruction stream has them), not none
    assert ("  (0,0) MM2S 0 a_l3_0 (runtime BDs 1, 3), MM2S 1 b_l3_0 (runtime BDs 2, 4), "
            "S2MM 0 c_l3_0 (runtime BD 0); 6 locks\n") in report


def test_a_report_and_a_map_say_they_show_aiedsls_plan(npu1_build) -> None:  # type: ignore[no-untyped-def]
    """A report auditor: with nothing lowered, nothing said the streams and addresses were
    aiedsl's own plan (a lowered build says they are mlir-aie's)."""
    plan = ("streams, ports and allocation are aiedsl's plan (its own rendering of mlir-aie's "
            "objectfifo lowering and router); a build with mlir-aie's aie-opt at hand draws "
            "them from mlir-aie's lowering instead")
    assert npu1_build.files["report.txt"].splitlines()[1] == plan
    assert plan in _texts(_svg(npu1_build.files["map.svg"]))


def test_a_memtile_over_its_even_channels_bds_shows_those(
        design_file: Callable[..., Path]) -> None:
    """The map drew 'BDs 30/48' in red for a memtile whose even channels took 26 of their 24."""
    text = (DESIGNS / "passthrough.py").read_text().replace(
        'name="in_l3")', 'name="in_l3", depth=13)')
    from aiedsl.checks import draft

    d = load_design(design_file(text))
    placed, table, congested = draft(d.ir)
    from aiedsl.codegen.tilemap import tile_map
    from aiedsl.targets import get_target

    svg = _svg(tile_map(placed, get_target(placed.device), table, congested))
    over = [e.text for e in svg.iter() if "over" in (e.get("class") or "").split()]
    assert over == ["locks 4/64  BDs 26/24 even, 4/24 odd"]


def test_build_output_is_byte_identical(npu2_build) -> None:  # type: ignore[no-untyped-def]
    again = generate(load_design(DESIGNS / "gemm_bf16.py", {"COLS": "8"}, "npu2"))
    assert again.files["map.svg"] == npu2_build.files["map.svg"]
    assert again.files["design.json"] == npu2_build.files["design.json"]


UNROUTABLE = '''
    from aiedsl import Tensor, channel, design, herd, i32, kernels, memtile, runtime

    @design(device="npu1_1col")
    def d(X: Tensor[3, 1024, i32], Y: Tensor[3, 1024, i32]):
        lo = channel(Tensor[1024, i32], shape=[3], via=memtile, join=0, name="lo")
        hi = channel(Tensor[1024, i32], shape=[3], via=memtile, join=0, name="hi")

        @herd(rows=3, anchor=(0, 3))
        def core(x, y):
            with lo[y].produce() as l, hi[y].produce() as h:
                kernels.zero(Tensor[1024, i32])(l), kernels.zero(Tensor[1024, i32])(h)

        with runtime() as rt:
            rt.drain(lo[:], X)
            rt.drain(hi[:], Y)
    '''


def _cli(*args: str) -> subprocess.CompletedProcess:
    return run_command(*args)


def test_map_command_writes_only_the_map(design_file: DesignFile) -> None:
    path = design_file(UNROUTABLE.replace("rows=3, anchor=(0, 3)", "rows=1")
                       .replace("shape=[3]", "shape=[1]").replace("3, 1024", "1, 1024"))
    r = _cli("map", str(path))
    assert r.returncode == 0, r.stderr
    # and the marker that makes build/d a build directory aiedsl may build into later
    assert sorted(p.name for p in (path.parent / "build" / "d").iterdir()) == [
        ".aiedsl-build.json", "map.svg"]
    assert r.stdout.split() == ["wrote", "build/d/map.svg"]


def test_map_of_an_unroutable_design_shows_the_congestion_in_red(design_file: DesignFile) -> None:
    """The map is still drawn, the six competing streams red; the command prints the error."""
    path = design_file(UNROUTABLE)
    r = _cli("map", str(path), "-o", "m.svg")
    assert r.returncode == 2
    assert r.stderr.startswith("d.py:5: error [stream routing]: no legal routing on npu1_1col")
    assert "what is over its limit is red" in r.stdout
    root = _svg((path.parent / "m.svg").read_text())
    over = [p.get("data-fifo") for p in _routes(root) if "over" in p.get("class", "")]
    assert over == ["lo_0", "lo_1", "lo_2", "hi_0", "hi_1", "hi_2"]
    assert "2 wire bundles over capacity (red)" in ET.tostring(root).decode()


def test_map_of_a_design_failing_another_check_does_not_point_at_red(
        design_file: DesignFile) -> None:
    """A map drawn for a design whose check fails for no resource (a drain twice what the core
    makes) said "what is over its limit is red", with nothing red (a tester)."""
    path = design_file(UNROUTABLE.replace("rows=3, anchor=(0, 3)", "rows=1")
                       .replace("shape=[3]", "shape=[1]").replace("3, 1024", "1, 1024")
                       .replace("rt.drain(hi[:], Y)", "rt.drain(hi[:], Y)\n"
                                "            rt.drain(hi[:], Y)"))
    r = _cli("map", str(path), "-o", "m.svg")
    assert r.returncode == 2
    assert "error [balance]" in r.stderr.splitlines()[0]
    assert r.stdout.strip() == ("wrote m.svg (nothing on it is over a limit: the design fails "
                                "another check, below)")


def test_map_of_a_design_whose_run_hangs_says_so_and_exits_as_check_does(
        tmp_path: Path) -> None:
    """map ran no hang check: a design whose run hangs (check and build: exit 3) got its map,
    exit 0, and nothing said (a tester)."""
    hang = Path(__file__).resolve().parent / "hang_corpus" / "broadcast_under_buffered.py"
    r = run_command("map", str(hang), "-o", "m.svg", cwd=tmp_path)
    check = run_command("check", str(hang), cwd=tmp_path)
    assert (r.returncode, check.returncode) == (3, 3)
    assert r.stderr == check.stderr
    assert "the design's run hangs, simulated without data" in r.stderr
    assert r.stdout.strip() == ("wrote m.svg (nothing on it is over a limit: the design fails "
                                "another check, below)")
    assert (tmp_path / "m.svg").is_file()


def test_map_of_a_design_over_its_dma_channels(design_file: DesignFile) -> None:
    """Three inputs on one core: the map shows that tile's DMA line in red."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1")
        def d(A: Tensor[1024, i32], B: Tensor[1024, i32], C: Tensor[1024, i32],
              D: Tensor[1024, i32]):
            a = fifo(Tensor[1024, i32], name="a")
            b = fifo(Tensor[1024, i32], name="b")
            c = fifo(Tensor[1024, i32], name="c")
            out = fifo(Tensor[1024, i32], name="out")

            @herd()
            def core():
                with a.consume(), b.consume(), c.consume(), out.produce():
                    pass

            with runtime() as rt:
                rt.fill(a, A)
                rt.fill(b, B)
                rt.fill(c, C)
                rt.drain(out, D)
        ''')
    r = _cli("map", str(path))
    assert r.returncode == 2 and "core DMA input (S2MM) channels" in r.stderr
    tile = _tiles(_svg((path.parent / "build" / "d" / "map.svg").read_text()))["tile-0-2"]
    red = [t.text for t in tile.iter(f"{SVG}text") if t.get("class") == "over"]
    assert red == ["DMA in 3/2  out 1/2"]


def test_an_npu2_report_says_the_library_kernels_cycles_are_npu1s(npu2_build) -> None:  # type: ignore[no-untyped-def]
    lines = npu2_build.files["report.txt"].splitlines()
    zero = next(x for x in lines if x.startswith("  zero_"))
    assert zero.endswith("; npu1's model, assumed on npu2")
    # the matmul made for npu2's core says which of its constants is npu1's
    matmul = next(x for x in lines if x.startswith("  matmul_"))
    assert "calibrated to Taka et al. single-core measurements (npu1's, assumed on npu2)" in matmul


def test_a_kernel_made_for_the_core_it_runs_on_is_not_called_npu1s(
        design_file: Callable[..., Path]) -> None:
    """A reviewer: exp_bf16's aie2p variant (the hardware's exp2) on npu2 was labelled npu1's
    model, assumed on npu2."""
    from aiedsl.emit import generate as build

    path = design_file("""
        from aiedsl import Tensor, bf16, design, fifo, herd, runtime
        from aiedsl.kernels import exp_bf16

        @design(device="npu2_1col")
        def act(A: Tensor[1024, bf16], B: Tensor[1024, bf16]):
            a = fifo(Tensor[1024, bf16])
            b = fifo(Tensor[1024, bf16])
            k = exp_bf16(1024)

            @herd()
            def core():
                with a.consume() as x, b.produce() as y:
                    k(x, y)

            with runtime() as rt:
                rt.fill(a, A)
                rt.drain(b, B)
        """)
    report = build(load_design(path)).files["report.txt"]
    line = next(x for x in report.splitlines() if x.startswith("  exp_bf16_1024"))
    assert "assumed on npu2" not in line


PACKET = '''
    from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
    from aiedsl.kernels import passthrough as copy_kernel

    @design(device="npu1_1col", flows="packet")
    def d(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
        to_core = fifo(Tensor[1024, i32], name="in")
        from_core = fifo(Tensor[1024, i32], name="out")
        copy = copy_kernel(Tensor[1024, i32])

        @herd()
        def core():
            for _ in loop(4):
                with to_core.consume() as src, from_core.produce() as dst:
                    copy(src, dst)

        with runtime() as rt:
            rt.fill(to_core, inp)
            rt.drain(from_core, out, wait=True)
    '''


def test_a_packet_streams_title_and_legend_give_its_packet_id(design_file: DesignFile) -> None:
    """A packet-flow tester: the report said "packet id 0" and the map's stream titles said
    only "in_l3: shim (0, 0) -> memtile (0, 1), 1 wire". The title, the legend and the path's
    data-packet-id now give it; a circuit stream's say nothing of packets (above)."""
    root = _svg(generate(load_design(design_file(PACKET))).files["map.svg"])
    routes = _routes(root)
    assert [(p.get("data-fifo"), p.get("data-packet-id")) for p in routes] == [
        ("in", "0"), ("out", "1")]
    titles = ["in: shim (0, 0) -> core[0,0] (0, 2), 2 wires, packet id 0",
              "out: core[0,0] (0, 2) -> shim (0, 0), 2 wires, packet id 1"]
    assert [p.find(f"{SVG}title").text for p in routes] == titles  # type: ignore[union-attr]
    legend = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "legend")
    assert _texts(legend)[1:3] == titles
