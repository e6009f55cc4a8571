"""Placement, allocation and routing: checked against mlir-aie's own lowering where it has one,
and against the rules (capacities, banks, BD parity, trees) everywhere else."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.ir import Design
from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.targets import get_target
from aiedsl.targets.model import direction_of
from shared_reference import reference_file

DesignFile = Callable[..., Path]
DESIGNS = Path(__file__).resolve().parents[1] / "designs"


def checked(path: Path, defines: dict[str, str] | None = None, device: str | None = None
            ) -> Design:
    """Load and check a design; the placed, allocated and routed IR."""
    return check_design(load_design(path, defines, device).ir)[0]


# -- mlir-aie's single-core GEMM, allocated as aiecc allocated it ---------------------------------

SINGLE_CORE_GEMM = '''
    from aiedsl import Tensor, design, fifo, herd, i16, i32, loop, runtime, tiles
    from aiedsl.kernels import block_dims, buffer, declare, unblock_dims

    def _ref(*args):
        pass

    @design(device="npu1_1col")
    def gemm(A: Tensor[64, 256, i16], B: Tensor[256, 32, i16], C: Tensor[64, 32, i32]):
        zero = declare("zero_i32", source="zero.cc", entry="zero<int32_t, 2048>",
                       args=[buffer("c", Tensor[64, 32, i32], "out")], reference=_ref, cycles=1,
                       cost="-")
        mm = declare("matmul_i16_i32", source="mm.cc",
                     entry="matmul_blocked<int16_t, int32_t, 4, 4, 4, 64, 64, 32>",
                     args=[buffer("a", Tensor[64, 64, i16]), buffer("b", Tensor[64, 32, i16]),
                           buffer("c", Tensor[64, 32, i32], "inout")],
                     reference=_ref, cycles=1, cost="-")
        inA = fifo(Tensor[64, 64, i16], name="inA")
        memA = inA.forward(name="memA", dims_to_stream=block_dims(64, 64, 4, 4))
        inB = fifo(Tensor[64, 32, i16], name="inB")
        memB = inB.forward(name="memB", dims_to_stream=block_dims(64, 32, 4, 4))
        memC = fifo(Tensor[64, 32, i32], name="memC")
        outC = memC.forward(name="outC", dims_to_stream=unblock_dims(64, 32, 4, 4))

        @herd()
        def core():
            with memC.produce() as c:
                zero(c)
                for _ in loop(4):
                    with memA.consume() as a, memB.consume() as b:
                        mm(a, b, c)

        with runtime() as rt:
            rt.fill(inA, A, tiles(A, (64, 64)))
            rt.fill(inB, B)
            rt.drain(outC, C)
    '''


def _reference_physical() -> tuple[dict, dict, dict]:
    """(tile, dir, channel) -> BD ids; (tile, lock id) -> (name, init); fifo -> shim channel."""
    text = reference_file("mlir-aie",
                          "aiecc-lowered__single_core_gemm.input_physical.mlir").read_text()
    bds: dict[tuple, list[int]] = {}
    tile = None
    current = None
    for line in text.splitlines():
        if m := re.search(r"aie\.(?:memtile_dma|mem)\(%tile_(\d+)_(\d+)\)", line):
            tile = (int(m[1]), int(m[2]))
        if m := re.search(r"aie\.dma_start\((S2MM|MM2S), (\d+)", line):
            current = (tile, m[1], int(m[2]))
            bds[current] = []
        if (m := re.search(r"bd_id = (\d+)", line)) and current is not None:
            bds[current].append(int(m[1]))
    locks = {((int(m[1]), int(m[2])), int(m[3])): (m[5], int(m[4])) for m in re.finditer(
        r"aie\.lock\(%tile_(\d+)_(\d+), (\d+)\) \{init = (\d+) : i32, sym_name = \"(\w+)\"", text)}
    shim = {m[1]: (m[2], int(m[3])) for m in re.finditer(
        r"aie\.shim_dma_allocation @(\w+)\((S2MM|MM2S), (\d+), 0\)", text)}
    return bds, locks, shim


def test_single_core_gemm_channels_bds_and_locks_match_aiecc(design_file: DesignFile) -> None:
    """Every DMA channel, BD chain and lock aiecc gave IRON's single-core GEMM, aiedsl gives too."""
    d = checked(design_file(SINGLE_CORE_GEMM))
    assert d.physical is not None
    bds, locks, shim = _reference_physical()
    ours = {(c.tile, c.direction, c.channel): list(c.bds) for c in d.physical.channels
            if c.tile[1] != 0}
    assert ours == bds
    assert {c.fifo: (c.direction, c.channel) for c in d.physical.channels
            if c.tile == (0, 0)} == shim
    # aiedsl spells lock names the newer way, with the part index (``_0``) mlir-aie now appends
    assert {(lk.tile, lk.id): (lk.name.removesuffix("_0"), lk.init)
            for lk in d.physical.locks} == locks


def test_single_core_gemm_routes_one_wire_per_hop(design_file: DesignFile) -> None:
    d = checked(design_file(SINGLE_CORE_GEMM))
    assert d.physical is not None
    wires = {r.fifo: [(a, b) for a, b, _ in r.wires] for r in d.physical.routes}
    assert wires == {
        "inA": [((0, 0), (0, 1))], "memA": [((0, 1), (0, 2))],
        "inB": [((0, 0), (0, 1))], "memB": [((0, 1), (0, 2))],
        "memC": [((0, 2), (0, 1))], "outC": [((0, 1), (0, 0))],
    }
    conn = {(c.tile, c.src, c.dst) for r in d.physical.routes if r.fifo == "memA"
            for c in r.connects}
    assert conn == {((0, 1), ("DMA", 0), ("North", 0)), ((0, 2), ("South", 0), ("DMA", 0))}


# -- shared memory ---------------------------------------------------------------------------------

NEIGHBOURS = '''
    from aiedsl import Tensor, design, fifo, herd, i32, runtime
    from aiedsl.kernels import passthrough

    @design(device="npu1")
    def d(X: Tensor[1024, i32], Y: Tensor[1024, i32]):
        a = fifo(Tensor[1024, i32], name="a")
        s = fifo(Tensor[1024, i32], name="s"{dims})
        b = fifo(Tensor[1024, i32], name="b")
        copy = passthrough(Tensor[1024, i32])

        @herd(cols={cols}, rows={rows}, anchor={anchor})
        def core(x, y):
            if (x, y) == {first}:
                with a.consume() as i, s.produce() as o:
                    copy(i, o)
            else:
                with s.consume() as i, b.produce() as o:
                    copy(i, o)

        with runtime() as rt:
            rt.fill(a, X)
            rt.drain(b, Y)

    @d.reference
    def reference(X):
        return X
    '''


@pytest.mark.parametrize("cols, rows, anchor, first, holder", [
    (1, 2, (0, 2), (0, 0), (0, 2)),   # north neighbour: both reach, the producer's memory
    (1, 2, (0, 2), (0, 1), (0, 3)),   # south neighbour (not a memtile): the producer's memory
    (2, 1, (0, 2), (0, 0), (0, 2)),   # producer west of consumer: only the consumer reaches
    (2, 1, (0, 2), (1, 0), (0, 2)),   # producer east of consumer: only the producer reaches
])
def test_neighbour_fifo_in_shared_memory(design_file: DesignFile, cols: int, rows: int,
                                         anchor: tuple[int, int], first: tuple[int, int],
                                         holder: tuple[int, int]) -> None:
    """A fifo between neighbours takes no DMA and no route; its buffers sit where mlir-aie puts
    them, and the design still computes the right numbers."""
    path = design_file(NEIGHBOURS.format(dims="", cols=cols, rows=rows, anchor=anchor,
                                         first=first))
    d = checked(path)
    assert d.physical is not None
    assert d.physical.shared == {"s": holder}
    assert "s" not in {c.fifo for c in d.physical.channels}
    assert "s" not in {r.fifo for r in d.physical.routes}
    assert sorted((b.tile, b.name) for b in d.physical.buffers if b.fifo == "s") == [
        (holder, "s_buff_0"), (holder, "s_buff_1")]
    assert [(lk.name, lk.init) for lk in d.physical.locks if lk.fifo == "s"] == [
        ("s_prod_lock_0", 2), ("s_cons_lock_0", 0)]
    result = simulate(load_design(path))
    assert result.passed


def test_neighbour_fifo_with_a_layout_takes_dmas(design_file: DesignFile) -> None:
    """dimensionsToStream needs the DMA's address generator, so mlir-aie keeps the DMA."""
    path = design_file(NEIGHBOURS.format(
        dims=", dims_to_stream=[(32, 32), (32, 1)]", cols=1, rows=2, anchor=(0, 2),
        first=(0, 0)))
    d = checked(path)
    assert d.physical is not None and d.physical.shared == {}
    route = next(r for r in d.physical.routes if r.fifo == "s")
    assert [(a, b) for a, b, _ in route.wires] == [((0, 2), (0, 3))]


def test_diagonal_cores_do_not_share(design_file: DesignFile) -> None:
    path = design_file(NEIGHBOURS.replace("if (x, y) == {first}:", "if (x, y) == (0, 0):")
                       .replace("else:", "elif (x, y) == (1, 1):")
                       .format(dims="", cols=2, rows=2, anchor=(0, 2), first=None))
    d = checked(path)
    assert d.physical is not None and d.physical.shared == {}


def test_locks_nine_shared_fifos(design_file: DesignFile) -> None:
    """Shared fifos take no DMA channel, so nine of them reach the 16-lock limit of a core tile."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1_1col")
        def d(X: Tensor[64, i32], Y: Tensor[64, i32]):
            a = fifo(Tensor[64, i32], name="a")
            b = fifo(Tensor[64, i32], name="b")
            s = [fifo(Tensor[64, i32], depth=1, name=f"s{i}") for i in range(9)]

            @herd(rows=2)
            def core(x, y):
                if y == 0:
                    with a.consume():
                        for f in s:
                            with f.produce():
                                pass
                else:
                    with b.produce():
                        for f in s:
                            with f.consume():
                                pass

            with runtime() as rt:
                rt.fill(a, X)
                rt.drain(b, Y)
        ''')
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(path).ir)
    assert str(excinfo.value) == (
        "d.py:7: error [core locks]: core tile (0, 2) (core[0,0]) needs more locks than it has\n"
        "  limit: 16\n"
        "  found: 20\n"
        "  d.py:12: a: 2\n"
        + "".join("  d.py:7: s%d (shared): 2\n" % i for i in range(9)) +
        "  fix: use fewer fifos on this tile or move one elsewhere"
    )


# -- allocation ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gemm_npu1() -> Design:
    return checked(DESIGNS / "gemm_bf16.py")


@pytest.fixture(scope="module")
def gemm_npu2() -> Design:
    return checked(DESIGNS / "gemm_bf16.py", {"COLS": "8"}, "npu2")


def test_gemm_kernel_operands_in_different_banks(gemm_npu1: Design) -> None:
    """A, B and C of every matmul call sit in three different banks of the core's memory."""
    assert gemm_npu1.physical is not None
    for c in gemm_npu1.cores:
        banks: dict[str, set[int]] = {}
        for b in gemm_npu1.physical.buffers:
            if b.tile == c.tile and b.fifo:
                banks.setdefault(b.fifo[0], set()).add(b.bank)
        assert set(banks) == {"a", "b", "c"}
        assert not (banks["a"] & banks["b"]) and not (banks["c"] & (banks["a"] | banks["b"]))


@pytest.mark.parametrize("which", ["gemm_npu1", "gemm_npu2"])
def test_buffers_do_not_overlap_and_fit(which: str, request: pytest.FixtureRequest) -> None:
    d: Design = request.getfixturevalue(which)
    assert d.physical is not None
    target = get_target(d.device)
    by_tile: dict = {}
    for b in d.physical.buffers:
        by_tile.setdefault(b.tile, []).append(b)
    for tile, bufs in by_tile.items():
        lim = target.limits(target.kind_of(tile))  # type: ignore[arg-type]
        bank = lim.memory // lim.banks
        bufs.sort(key=lambda b: b.address)
        for x, y in zip(bufs, bufs[1:]):
            assert x.address + x.nbytes <= y.address, (tile, x.name, y.name)
        assert bufs[-1].address + bufs[-1].nbytes <= lim.memory
        for b in bufs:
            assert b.bank == b.address // bank
            assert (b.address + b.nbytes - 1) // bank == b.bank  # whole buffers in one bank
        if target.kind_of(tile) == "core":
            assert bufs[0].name.endswith("stack") and bufs[0].address == 0


@pytest.mark.parametrize("which", ["gemm_npu1", "gemm_npu2"])
def test_memtile_bds_follow_channel_parity_and_locks_are_unique(
        which: str, request: pytest.FixtureRequest) -> None:
    d: Design = request.getfixturevalue(which)
    assert d.physical is not None
    seen: Counter = Counter()
    for c in d.physical.channels:
        if c.tile[1] == 1:
            assert all((bd < 24) == (c.channel % 2 == 0) for bd in c.bds), c
        for bd in c.bds:
            seen[(c.tile, bd)] += 1
    assert max(seen.values()) == 1
    ids: dict = {}
    for lk in d.physical.locks:
        ids.setdefault(lk.tile, []).append(lk.id)
    assert all(sorted(v) == list(range(len(v))) for v in ids.values())


def test_buffer_bigger_than_a_bank_falls_back_to_sequential(design_file: DesignFile) -> None:
    """A 20 KB element fits no 16 KB bank: the tile is laid out one buffer after another."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1_1col")
        def d(X: Tensor[5120, i32], Y: Tensor[256, i32]):
            a = fifo(Tensor[5120, i32], name="a")
            b = fifo(Tensor[256, i32], name="b")

            @herd()
            def core():
                with a.consume(), b.produce():
                    pass

            with runtime() as rt:
                rt.fill(a, X)
                rt.drain(b, Y)
        ''')
    d = checked(path)
    assert d.physical is not None
    assert [(b.name, b.address, b.bank) for b in d.physical.buffers if b.tile == (0, 2)] == [
        ("core[0,0] stack", 0, 0), ("a_cons_buff_0", 1024, 0), ("a_cons_buff_1", 21504, 1),
        ("b_buff_0", 41984, 2), ("b_buff_1", 43008, 2)]


# -- routing ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("which", ["gemm_npu1", "gemm_npu2"])
def test_routes_are_trees_within_capacity(which: str, request: pytest.FixtureRequest) -> None:
    """Each route is a tree from its source reaching every receiver; no wire is used twice and
    no bundle beyond the target's port count."""
    d: Design = request.getfixturevalue(which)
    assert d.physical is not None
    target = get_target(d.device)
    used: Counter = Counter()
    ports: set = set()
    for r in d.physical.routes:
        reached = {r.src}
        for a, b, idx in r.wires:
            assert a in reached and b not in reached, (r.fifo, a, b)
            reached.add(b)
            direction = direction_of(a, b)
            assert idx < target.link_capacity(a, direction)
            assert (a, direction, idx) not in ports
            ports.add((a, direction, idx))
            used[(a, direction)] += 1
        assert set(r.dsts) <= reached
    assert all(n <= target.link_capacity(*w) for w, n in used.items())


def test_broadcast_is_one_tree(gemm_npu1: Design) -> None:
    """a_0 reaches the four cores of row 2 with four wires: up, then east along the row."""
    assert gemm_npu1.physical is not None
    a0 = next(r for r in gemm_npu1.physical.routes if r.fifo == "a_0")
    assert [(a, b) for a, b, _ in a0.wires] == [
        ((0, 1), (0, 2)), ((0, 2), (1, 2)), ((1, 2), (2, 2)), ((2, 2), (3, 2))]
    assert sorted(c.dst for c in a0.connects if c.tile == (0, 2)) == [("DMA", 0), ("East", 0)]


def test_npu2_gemm_8x4_routes(gemm_npu2: Design) -> None:
    assert gemm_npu2.physical is not None
    assert len(gemm_npu2.cores) == 32 and len(gemm_npu2.physical.routes) == 64
    assert sum(len(r.wires) for r in gemm_npu2.physical.routes) == 170


def test_routing_is_deterministic() -> None:
    one = checked(DESIGNS / "gemm_bf16.py", {"COLS": "8"}, "npu2")
    two = checked(DESIGNS / "gemm_bf16.py", {"COLS": "8"}, "npu2")
    assert one.model_dump_json() == two.model_dump_json()


UNROUTABLE = '''
    from aiedsl import Tensor, channel, design, herd, i32, memtile, runtime

    @design(device="{device}")
    def d(X: Tensor[3, 1024, i32], Y: Tensor[3, 1024, i32]):
        lo = channel(Tensor[1024, i32], shape=[3], via=memtile(0), join=0, name="lo")
        hi = channel(Tensor[1024, i32], shape=[3], via=memtile(0), join=0, name="hi")

        @herd(rows=3, anchor=(0, 3))
        def core(x, y):
            with lo[y].produce(), hi[y].produce():
                pass

        with runtime() as rt:
            rt.drain(lo[:], X)
            rt.drain(hi[:], Y)
    '''


def test_unroutable_six_streams_down_one_column(design_file: DesignFile) -> None:
    """Six streams from three cores of column 0 into its memtile; a core sends only 4 wires south
    and one column has no way around."""
    path = design_file(UNROUTABLE.format(device="npu1_1col"))
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(path).ir)
    assert str(excinfo.value) == (
        "d.py:5: error [stream routing]: no legal routing on npu1_1col: 6 streams need the wires "
        "from core tile (0, 2) south to memtile (0, 1) (1 more bundle of wires is over too)\n"
        "  limit: 4 wires (master ports South 0-3 of (0, 2), slave ports North 0-3 of (0, 1))\n"
        "  found: 6 streams\n"
        "  d.py:5: lo_0: core[0,0] (0, 3) -> memtile (0, 1)\n"
        "  d.py:5: lo_1: core[0,1] (0, 4) -> memtile (0, 1)\n"
        "  d.py:5: lo_2: core[0,2] (0, 5) -> memtile (0, 1)\n"
        "  d.py:6: hi_0: core[0,0] (0, 3) -> memtile (0, 1)\n"
        "  d.py:6: hi_1: core[0,1] (0, 4) -> memtile (0, 1)\n"
        "  d.py:6: hi_2: core[0,2] (0, 5) -> memtile (0, 1)\n"
        "  fix: spread the streams over more columns: anchor herds apart, pin links to other "
        "memtiles (via=memtile(col)) or host ends to other shims (shim=shim(col)), or merge "
        "fifos that travel together"
    )


def test_congestion_is_negotiated_around(design_file: DesignFile) -> None:
    """With a second column the same six streams fit: two detour through column 1 and the shim
    row (memtiles have no east-west wires), entering the memtile from below."""
    d = checked(design_file(UNROUTABLE.format(device="npu1_2col")))
    assert d.physical is not None
    detours = [r.fifo for r in d.physical.routes if any(a[0] == 1 for a, _, _ in r.wires)]
    assert len(detours) >= 2
    into_memtile = Counter((a, b) for r in d.physical.routes for a, b, _ in r.wires
                           if b == (0, 1))
    assert into_memtile[((0, 2), (0, 1))] <= 4 and into_memtile[((0, 0), (0, 1))] >= 2


def test_design_json_carries_the_routes(gemm_npu1: Design) -> None:
    data = gemm_npu1.model_dump(mode="json")
    assert data["physical"]["routes"][0]["fifo"] == "a_0"
    assert data["physical"]["routes"][0]["connects"][0] == {
        "tile": [0, 1], "src": ["DMA", 0], "dst": ["North", 0], "switch": "switchbox"}
    assert Design.model_validate(data) == gemm_npu1


def test_simulator_runs_the_routed_npu2_gemm() -> None:
    """The 8x4 GEMM on npu2 computes A @ B (a small size keeps the test quick)."""
    handle = load_design(DESIGNS / "gemm_bf16.py", {"COLS": "8", "M": "256", "K": "128",
                                                    "N": "512"}, "npu2")
    result = simulate(handle)
    assert result.passed, [c.line() for c in result.checks]
    assert np.isfinite(result.timing.seconds)


def test_links_and_host_ends_spill_to_the_next_column(design_file: DesignFile) -> None:
    """Seven links feeding column 0 overflow its memtile's 6 channels; the seventh goes to the
    memtile of column 1 and its stream crosses back west in a core row."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1")
        def d(X: Tensor[7, 256, i32], Y: Tensor[4, 256, i32]):
            ins = [fifo(Tensor[256, i32], name=f"f{i}") for i in range(7)]
            mids = [f.forward(name=f"m{i}") for i, f in enumerate(ins)]
            outs = [fifo(Tensor[256, i32], name=f"o{i}") for i in range(4)]

            @herd(rows=4)
            def core(x, y):
                with outs[y].produce():
                    for m in mids[2 * y:2 * y + 2]:
                        with m.consume():
                            pass

            with runtime() as rt:
                for i, f in enumerate(ins):
                    rt.fill(f, X, (i * 256, [256], [1]))
                for y, o in enumerate(outs):
                    rt.drain(o, Y, (y * 256, [256], [1]))
        ''')
    d = checked(path)
    assert d.physical is not None
    send = {c.fifo: c.tile for c in d.physical.channels if c.direction == "MM2S"}
    assert [send[f"m{i}"] for i in range(7)] == [(0, 1)] * 6 + [(1, 1)]
    m6 = next(r for r in d.physical.routes if r.fifo == "m6")
    hops = [(a, b) for a, b, _ in m6.wires]
    assert hops[0] == ((1, 1), (1, 2)) and hops[-1][1] == (0, 5) and len(hops) == 5
    assert [a[1] >= 2 for a, b in hops if a[0] != b[0]] == [True]  # one westward hop, core row
    # the shim of column 0 has two MM2S channels: f0 and f1 there, the rest spill outward
    assert [send[f"f{i}"][0] for i in range(7)] == [0, 0, 1, 1, 2, 2, 3]
