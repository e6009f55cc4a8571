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
from aiedsl.ir.design import Design
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
                       args=[buffer("c", Tensor[64, 32, i32], "out")], reference=_ref, cycles=256,
                       cost="-")
        mm = declare("matmul_i16_i32", source="mm.cc",
                     entry="matmul_blocked<int16_t, int32_t, 4, 4, 4, 64, 64, 32>",
                     args=[buffer("a", Tensor[64, 64, i16]), buffer("b", Tensor[64, 32, i16]),
                           buffer("c", Tensor[64, 32, i32], "inout")],
                     reference=_ref, cycles=256, cost="-")
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
    # aiedsl spells lock names the newer way, with the part index (``_0``) mlir-aie now appends,
    # and starts a shim's producer lock at 0 as mlir-aie now does (the 2024 lowering started it
    # at 1; the 2026 lowerings in mlir-aie-lowered/ start it at 0: a shim end has no buffers)
    assert {(lk.tile, lk.id): (lk.name.removesuffix("_0"), lk.init)
            for lk in d.physical.locks} == {
        key: (name, 0 if key[0] == (0, 0) else init) for key, (name, init) in locks.items()}


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
    # the ports mlir-aie's router picks (it prefers higher-numbered free ports here)
    assert conn == {((0, 1), ("DMA", 0), ("North", 1)), ((0, 2), ("South", 1), ("DMA", 0))}


# -- shared memory ---------------------------------------------------------------------------------

NEIGHBOURS = '''
    from aiedsl import Tensor, design, fifo, herd, i32, kernels, runtime
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


def test_gemm_core_buffers_go_round_robin_over_banks(gemm_npu1: Design) -> None:
    """mlir-aie's bank-aware allocation: largest first, each into the next bank after the last
    one used where it fits whole; the stack holds the bottom of bank 0. (aiedsl used to keep the
    operands of one kernel call apart; mlir-aie does not: a_0's second buffer shares bank 2.)"""
    assert gemm_npu1.physical is not None
    layout = [(b.name, b.address, b.bank) for b in gemm_npu1.physical.buffers
              if b.tile == (0, 2)]
    assert layout == [
        ("core[0,0] stack", 0, 0),
        ("c_0_0_buff_0", 0x4000, 1),       # 16 KB: bank 0 is 1 KB short, so bank 1
        ("b_0_0_cons_buff_0", 0x8000, 2),  # then on from the bank after: 2, 3, 0, ...
        ("b_0_0_cons_buff_1", 0xC000, 3),
        ("a_0_0_cons_buff_0", 0x400, 0),
        ("a_0_0_cons_buff_1", 0xA000, 2),  # bank 1 is full: on to bank 2
    ]


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
        from aiedsl import Tensor, design, fifo, herd, i32, kernels, runtime

        @design(device="npu1_1col")
        def d(X: Tensor[5120, i32], Y: Tensor[256, i32]):
            a = fifo(Tensor[5120, i32], name="a")
            b = fifo(Tensor[256, i32], name="b")

            @herd()
            def core():
                with a.consume(), b.produce() as o:
                    kernels.zero(Tensor[256, i32])(o)

            with runtime() as rt:
                rt.fill(a, X)
                rt.drain(b, Y)
        ''')
    d = checked(path)
    assert d.physical is not None
    assert [(b.name, b.address, b.bank) for b in d.physical.buffers if b.tile == (0, 2)] == [
        ("core[0,0] stack", 0, 0), ("a_cons_buff_0", 1024, 0), ("a_cons_buff_1", 21504, 1),
        ("b_buff_0", 41984, 2), ("b_buff_1", 43008, 2)]


# -- allocation rules the lowering fixtures do not exercise ----------------------------------------
# (mlir-aie-lowered/ pins forwards, broadcasts, equal-part joins and the bank round-robin; these
# pin the rest of AIEObjectFifoStatefulTransform's rules, as read in its source)

def _chains(d: Design, tile: tuple[int, int]) -> dict:
    """(direction, channel, fifo) -> [(bd id, buffer, offset, length, next, acquire, release)]."""
    assert d.physical is not None
    return {(c.direction, c.channel, c.fifo): [
        (b.id, b.buffer, b.offset, b.length, b.next, b.acquire, b.release) for b in c.chain]
        for c in d.physical.channels if c.tile == tile}


SPLIT_AND_JOIN = '''
    from aiedsl import Tensor, design, fifo, herd, i32, join, kernels, runtime

    @design(device="npu1_1col")
    def d(X: Tensor[48, i32], Y: Tensor[48, i32]):
        x = fifo(Tensor[48, i32], name="x")
        p = x.split([Tensor[16, i32], Tensor[20, i32], Tensor[12, i32]], names=["p0", "p1", "p2"])
        q = [fifo(Tensor[16, i32], name=f"q{i}") for i in range(3)]
        y = join(q, name="y")

        @herd(rows=3)
        def core(x, y):
            with p[y].consume(), q[y].produce() as o:
                kernels.zero(Tensor[16, i32])(o)

        with runtime() as rt:
            rt.fill(x, X)
            rt.drain(y, Y)
    '''


def test_split_and_join_chain_parts_at_their_offsets(design_file: DesignFile) -> None:
    """A split's input owns the memtile buffers (``x_cons_buff_*``) and one lock pair per part;
    its S2MM chains every part of every buffer (buffer-major), each output's MM2S its own part
    of every buffer; the lengths run from one offset to the next (the last to the element's
    end), as in mlir-aie's link_test_distribute_offsets. A join is the mirror image, owned by
    its output. BD ids: even channels from 0, odd from 24, channel by channel in creation order."""
    d = checked(design_file(SPLIT_AND_JOIN))
    chains = _chains(d, (0, 1))

    def ring(ids: list[int], parts: list[tuple[str, int, int, int]], owner: str, s2mm: bool
             ) -> list[tuple]:
        out = []
        for k, (buf, off, n, part) in enumerate(parts):
            prod, cons = f"{owner}_prod_lock_{part}", f"{owner}_cons_lock_{part}"
            take, give = (prod, cons) if s2mm else (cons, prod)
            out.append((ids[k], buf, off, n, ids[(k + 1) % len(ids)], (take, 1), (give, 1)))
        return out

    xb = ["x_cons_buff_0", "x_cons_buff_1"]
    yb = ["y_buff_0", "y_buff_1"]
    split = [(0, 16), (16, 20), (36, 12)]
    joined = [(0, 16), (16, 16), (32, 16)]
    assert chains == {
        ("S2MM", 0, "x"): ring([0, 1, 2, 3, 4, 5], [(b, o, n, k) for b in xb
                                                    for k, (o, n) in enumerate(split)],
                               "x_cons", True),
        ("MM2S", 0, "p0"): ring([6, 7], [(b, 0, 16, 0) for b in xb], "x_cons", False),
        ("MM2S", 1, "p1"): ring([24, 25], [(b, 16, 20, 1) for b in xb], "x_cons", False),
        ("MM2S", 2, "p2"): ring([8, 9], [(b, 36, 12, 2) for b in xb], "x_cons", False),
        ("S2MM", 1, "q0"): ring([26, 27], [(b, 0, 16, 0) for b in yb], "y", True),
        ("S2MM", 2, "q1"): ring([10, 11], [(b, 16, 16, 1) for b in yb], "y", True),
        ("S2MM", 3, "q2"): ring([28, 29], [(b, 32, 16, 2) for b in yb], "y", True),
        ("MM2S", 3, "y"): ring(list(range(30, 36)), [(b, o, n, k) for b in yb
                                                     for k, (o, n) in enumerate(joined)],
                               "y", False),
    }
    assert d.physical is not None
    assert [(lk.id, lk.name, lk.init) for lk in d.physical.locks if lk.tile == (0, 1)] == [
        (2 * k + j, f"{owner}_{role}_lock_{k - off}", 2 if role == "prod" else 0)
        for owner, off in (("x_cons", 0), ("y", 3)) for k in range(off, off + 3)
        for j, role in enumerate(("prod", "cons"))]


FORWARDS = '''
    from aiedsl import Tensor, design, fifo, herd, i32, kernels, loop, runtime

    @design(device="npu1_1col")
    def d(X: Tensor[1024, i32], Y: Tensor[4096, i32]):
        x = fifo(Tensor[256, i32], name="x")
        y = x.forward(Tensor[1024, i32], name="y")       # regroups 4 elements into 1
        z = fifo(Tensor[1024, i32], name="z", depth=3)
        w = z.forward(Tensor[256, i32], name="w")        # and 1 into 4

        @herd()
        def core():
            with y.consume():
                for _ in loop(4):
                    with z.produce() as o:
                        kernels.zero(Tensor[1024, i32])(o)

        with runtime() as rt:
            rt.fill(x, X)
            rt.drain(w, Y)
    '''


def test_a_regrouping_forward_keeps_the_larger_elements(design_file: DesignFile) -> None:
    """Of a forward's two ends the one with the larger element creates the memtile buffers
    (the input on a tie), and both channels move whole buffers of it."""
    d = checked(design_file(FORWARDS))
    assert d.physical is not None
    assert [(b.name, b.nbytes) for b in d.physical.buffers if b.tile == (0, 1)] == [
        ("z_cons_buff_0", 4096), ("z_cons_buff_1", 4096), ("z_cons_buff_2", 4096),
        ("y_buff_0", 4096), ("y_buff_1", 4096)]
    chains = _chains(d, (0, 1))
    assert {k: [(b[1], b[3]) for b in v] for k, v in chains.items()} == {
        ("S2MM", 0, "x"): [("y_buff_0", 1024), ("y_buff_1", 1024)],
        ("MM2S", 0, "y"): [("y_buff_0", 1024), ("y_buff_1", 1024)],
        ("S2MM", 1, "z"): [(f"z_cons_buff_{i}", 1024) for i in range(3)],
        ("MM2S", 1, "w"): [(f"z_cons_buff_{i}", 1024) for i in range(3)],
    }
    assert chains[("S2MM", 0, "x")][0][5:] == (("y_prod_lock_0", 1), ("y_cons_lock_0", 1))
    assert [(lk.id, lk.name, lk.init) for lk in d.physical.locks if lk.tile == (0, 1)] == [
        (0, "y_prod_lock_0", 2), (1, "y_cons_lock_0", 0),
        (2, "z_cons_prod_lock_0", 3), (3, "z_cons_cons_lock_0", 0)]


DEPTHS = '''
    from aiedsl import Tensor, design, fifo, herd, i32, kernels, loop, runtime

    @design(device="npu1_1col")
    def d(A: Tensor[1024, i32], B: Tensor[1024, i32], C: Tensor[1024, i32],
          D: Tensor[1024, i32]):
        a = fifo(Tensor[64, i32], name="a", depth=3)
        b = fifo(Tensor[64, i32], name="b", depth=2)
        c = fifo(Tensor[64, i32], name="c", depth=3, consumer_depth=2)
        e = fifo(Tensor[64, i32], name="e", depth=1)

        @herd()
        def core():
            for _ in loop(8):
                b.acquire("consume", 2)
                b.release("consume", 2)
            for _ in loop(16):
                with a.consume(), c.produce() as o, e.produce() as o2:
                    kernels.zero(Tensor[64, i32])(o), kernels.zero(Tensor[64, i32])(o2)

        with runtime() as rt:
            rt.fill(a, A)
            rt.fill(b, B)
            rt.drain(c, C)
            rt.drain(e, D)
    '''


def test_core_buffers_follow_the_largest_acquire_or_the_depth_list(design_file: DesignFile
                                                                    ) -> None:
    """One depth for the whole fifo: a core end gets one more buffer than it acquires at once
    (``a``: depth 3 but acquires 1, so 2; ``b``: acquires 2, so 3), or 1 for a depth-1 fifo
    (``e``). Depths that differ go out as mlir-aie's per-end list, and each end gets exactly
    its own (``c``: [3, 2], the core's 3). Locks: per tile in creation order; BDs in channel
    order; the producer lock starts at the buffers held."""
    path = design_file(DEPTHS)
    d, table = check_design(load_design(path).ir)
    assert d.physical is not None
    assert [(u.label, u.amount) for u in table[(0, 2)].memory] == [
        ("stack", 1024), ("a 2 x 256 B (depth=3: across a DMA a core's end gets one more than "
                          "the most it acquires at once)", 512),
        ("b 3 x 256 B (depth=2: across a DMA a core's end gets one more than the most it "
         "acquires at once)", 768), ("c 3 x 256 B", 768), ("e 1 x 256 B", 256)]
    assert {k: [b[0] for b in v] for k, v in _chains(d, (0, 2)).items()} == {
        ("S2MM", 0, "a"): [0, 1], ("S2MM", 1, "b"): [2, 3, 4], ("MM2S", 0, "c"): [5, 6, 7],
        ("MM2S", 1, "e"): [8]}
    assert [(lk.id, lk.name, lk.init) for lk in d.physical.locks if lk.tile == (0, 2)] == [
        (0, "a_cons_prod_lock_0", 2), (1, "a_cons_cons_lock_0", 0),
        (2, "b_cons_prod_lock_0", 3), (3, "b_cons_cons_lock_0", 0),
        (4, "c_prod_lock_0", 3), (5, "c_cons_lock_0", 0),
        (6, "e_prod_lock_0", 1), (7, "e_cons_lock_0", 0)]
    # the shim ends: two locks each, both at 0, ids in creation order
    assert [(lk.id, lk.name, lk.init) for lk in d.physical.locks if lk.tile == (0, 0)] == [
        (i, f"{f}_{role}_lock_0", 0) for i, (f, role) in enumerate(
            (f, role) for f in ("a", "b", "c_cons", "e_cons") for role in ("prod", "cons"))]


def test_the_report_says_how_many_buffers_a_resized_core_end_has(design_file: DesignFile
                                                                  ) -> None:
    """IRON's row_wise_bias_add with depth=3: report.txt said 'in_fifo: 3072xf32 depth 3' and
    listed in_fifo_cons_buff_0 and _1 only. A core end whose buffers differ from the depth says
    how many and why; a per-end depth list (``c``) and a depth-1 fifo (``e``) are as written."""
    from aiedsl.codegen.report import render_report

    d, table = check_design(load_design(design_file(DEPTHS)).ir)
    report = render_report(d, get_target(d.device), table)
    fifos = report.split("\nfifos\n")[1].split("\n\n")[0].splitlines()
    assert fifos == [
        "  a: 64xi32 depth 3 (2 buffers at core[0,0], one more than the 1 element it acquires "
        "at once, as mlir-aie sizes a core's end), shim (0, 0) -> core[0,0] (0, 2)",
        "  b: 64xi32 depth 2 (3 buffers at core[0,0], one more than the 2 elements it acquires "
        "at once, as mlir-aie sizes a core's end), shim (0, 0) -> core[0,0] (0, 2)",
        "  c: 64xi32 depth 3/2, core[0,0] (0, 2) -> shim (0, 0)",
        "  e: 64xi32 depth 1, core[0,0] (0, 2) -> shim (0, 0)"]
    assert "a_cons_buff_1 256 B" in report and "a_cons_buff_2" not in report
    # a broadcast to two cores through a memtile: the memtile's end keeps the depth
    d, table = check_design(load_design(design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime

        @design(device="npu1_1col")
        def d(A: Tensor[1024, i32]):
            a = fifo(Tensor[64, i32], name="a", depth=4)
            b = a.forward(name="b")

            @herd(rows=2)
            def core(x, y):
                for _ in loop(16):
                    with b.consume():
                        pass

            with runtime() as rt:
                rt.fill(a, A)
        ''')).ir)
    fifos = render_report(d, get_target(d.device), table).split("\nfifos\n")[1]
    assert fifos.split("\n\n")[0].splitlines() == [
        "  a: 64xi32 depth 4, shim (0, 0) -> memtile (0, 1)",
        "  b: 64xi32 depth 4 (2 buffers at core[0,0] and core[0,1], one more than the 1 element "
        "each acquires at once, as mlir-aie sizes a core's end), memtile (0, 1) -> core[0,0] "
        "(0, 2), core[0,1] (0, 3)"]


def test_equal_buffers_are_ordered_as_std_sort_leaves_them() -> None:
    """mlir-aie sorts a tile's buffers largest first with std::sort, which is not stable past 16
    elements; aiedsl replays libstdc++'s introsort. The expected order is what g++'s std::sort
    made of these 19 sizes (as indices of the input)."""
    from aiedsl.place.addresses import cxx_sort
    sizes = [0, 2, 1, 1, 0, 2, 1, 0, 0, 1, 1, 1, 2, 0, 1, 2, 2, 1, 1]
    order = cxx_sort(list(range(len(sizes))), lambda a, b: sizes[a] > sizes[b])
    assert order == [1, 16, 15, 5, 12, 18, 17, 14, 11, 10, 9, 6, 3, 2, 8, 7, 13, 4, 0]
    assert order != sorted(range(len(sizes)), key=lambda i: -sizes[i])  # not the stable order
    small = [3, 1, 3, 2, 1, 3]  # up to 16 it is an insertion sort: stable
    assert cxx_sort(list(range(6)), lambda a, b: small[a] > small[b]) == [0, 2, 5, 3, 1, 4]


def test_allocation_is_deterministic(gemm_npu2: Design) -> None:
    again = checked(DESIGNS / "gemm_bf16.py", {"COLS": "8"}, "npu2")
    assert again.physical is not None and gemm_npu2.physical is not None
    assert again.physical.model_dump() == gemm_npu2.physical.model_dump()


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
    assert sorted(c.dst for c in a0.connects if c.tile == (0, 2)) == [("DMA", 0), ("East", 2)]


def test_npu2_gemm_8x4_routes(gemm_npu2: Design) -> None:
    assert gemm_npu2.physical is not None
    assert len(gemm_npu2.cores) == 32 and len(gemm_npu2.physical.routes) == 64
    assert sum(len(r.wires) for r in gemm_npu2.physical.routes) == 201  # mlir-aie's routes


def test_routing_is_deterministic() -> None:
    one = checked(DESIGNS / "gemm_bf16.py", {"COLS": "8"}, "npu2")
    two = checked(DESIGNS / "gemm_bf16.py", {"COLS": "8"}, "npu2")
    assert one.model_dump_json() == two.model_dump_json()


UNROUTABLE = '''
    from aiedsl import Tensor, channel, design, herd, i32, kernels, memtile, runtime

    @design(device="{device}")
    def d(X: Tensor[3, 1024, i32], Y: Tensor[3, 1024, i32]):
        lo = channel(Tensor[1024, i32], shape=[3], via=memtile(0), join=0, name="lo")
        hi = channel(Tensor[1024, i32], shape=[3], via=memtile(0), join=0, name="hi")

        @herd(rows=3, anchor=(0, 3))
        def core(x, y):
            with lo[y].produce() as l, hi[y].produce() as h:
                kernels.zero(Tensor[1024, i32])(l), kernels.zero(Tensor[1024, i32])(h)

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
        "d.py:5: error [stream routing]: no legal routing on npu1_1col: 6 streams must enter the "
        "tiles of column 0, rows 0-1 (shim tile and memtile), and 4 wires lead in\n"
        "  limit: 4 wires into tiles (0, 0) to (0, 1): 4 from row 2 above (a wire carries one "
        "stream)\n"
        "  found: 6 streams\n"
        "  d.py:5: lo_0: core[0,0] (0, 3) -> memtile (0, 1)\n"
        "  d.py:5: lo_1: core[0,1] (0, 4) -> memtile (0, 1)\n"
        "  d.py:5: lo_2: core[0,2] (0, 5) -> memtile (0, 1)\n"
        "  d.py:6: hi_0: core[0,0] (0, 3) -> memtile (0, 1)\n"
        "  d.py:6: hi_1: core[0,1] (0, 4) -> memtile (0, 1)\n"
        "  d.py:6: hi_2: core[0,2] (0, 5) -> memtile (0, 1)\n"
        "  fix: merge fifos that travel together, or use a device with more columns to spread "
        "the streams over (--device npu1_2col)"
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
        "tile": [0, 1], "src": ["DMA", 0], "dst": ["North", 1], "switch": "switchbox"}
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
        from aiedsl import Tensor, design, fifo, herd, i32, kernels, runtime

        @design(device="npu1")
        def d(X: Tensor[7, 256, i32], Y: Tensor[4, 256, i32]):
            ins = [fifo(Tensor[256, i32], name=f"f{i}") for i in range(7)]
            mids = [f.forward(name=f"m{i}") for i, f in enumerate(ins)]
            outs = [fifo(Tensor[256, i32], name=f"o{i}") for i in range(4)]

            @herd(rows=4)
            def core(x, y):
                with outs[y].produce() as o:
                    for m in mids[2 * y:2 * y + 2]:
                        with m.consume():
                            kernels.zero(Tensor[256, i32])(o)

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


# -- what placing hands check_design ----------------------------------------------------------

@pytest.mark.parametrize("device, defines", [("npu1", {}), ("npu2", {"COLS": "8"})])
def test_placing_hands_on_the_lowering_of_the_design_it_placed(
        device: str, defines: dict[str, str]) -> None:
    """place_lowered gives the design place gives, and the lowering it made is that design's
    (check_design uses it instead of lowering the design again)."""
    from aiedsl.place import place
    from aiedsl.place.objectfifo import lower
    from aiedsl.place.placer import place_lowered

    d = load_design(DESIGNS / "gemm_bf16.py", defines, device).ir
    placed, low = place_lowered(d, get_target(device))
    assert placed == place(d, get_target(device))
    again = lower(placed, get_target(placed.device))
    assert low is not None and low == again
    assert [s.tile for s in low.stores] == [s.tile for s in again.stores]
