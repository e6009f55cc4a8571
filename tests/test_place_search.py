"""The placer places what fits: herds that first-fit would block are placed by a search, memtile
links avoid memtiles whose streams no router could route, and the messages for what truly does
not fit say why (the tester's reproducers, made small)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.place import place
from aiedsl.place.cuts import worst
from aiedsl.place.placer import streams
from aiedsl.sim import simulate
from aiedsl.targets import get_target

DesignFile = Callable[..., Path]


def check_error(path: Path, defines: dict[str, str] | None = None) -> str:
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(path, defines).ir)
    return str(excinfo.value)


def anchors(path: Path, defines: dict[str, str] | None = None) -> dict[str, tuple[int, int]]:
    d = load_design(path, defines).ir
    placed = place(d, get_target(d.device))
    return {h.name: h.anchor for h in placed.herds if h.anchor is not None}


# Two one-core herds and a COLSxROWS herd whose cores each send a part of a per-column join
# through a memtile (the tester's herds3.py, its herds' order and anchors set by defines).
HERDS = '''
    import numpy as np
    from aiedsl import Tensor, channel, define, design, fifo, herd, i32, memtile, runtime
    from aiedsl.kernels import passthrough

    T = 1024
    COLS, ROWS = define("COLS", 4), define("ROWS", 3)
    BIG_FIRST = define("BIG_FIRST", False)
    PIN = define("PIN", "")

    @design(device="npu1")
    def d(inp: Tensor[T, i32], out: Tensor[(COLS * ROWS + 2) * T, i32]):
        a = fifo(Tensor[T, i32], name="a")
        p, q = fifo(Tensor[T, i32], name="p"), fifo(Tensor[T, i32], name="q")
        pa, qa = fifo(Tensor[T, i32], name="pa"), fifo(Tensor[T, i32], name="qa")
        c = channel(Tensor[T, i32], shape=[COLS, ROWS], via=memtile, join=1, name="c")
        copy = passthrough(Tensor[T, i32])
        at = eval(PIN) if PIN else None

        def big(x, y):
            with a.consume() as s, c[x, y].produce() as t:
                copy(s, t)

        if BIG_FIRST:
            herd(cols=COLS, rows=ROWS)(big)

        @herd(anchor=at)
        def small1():
            with p.consume() as s, pa.produce() as t:
                copy(s, t)

        @herd()
        def small2():
            with q.consume() as s, qa.produce() as t:
                copy(s, t)

        if not BIG_FIRST:
            herd(cols=COLS, rows=ROWS)(big)

        with runtime() as rt:
            rt.fill(a, inp)
            rt.fill(p, inp)
            rt.fill(q, inp)
            for x in range(COLS):
                rt.drain(c[x, :], out, (x * ROWS * T, [ROWS * T], [1]))
            rt.drain(pa, out, (COLS * ROWS * T, [T], [1]))
            rt.drain(qa, out, ((COLS * ROWS + 1) * T, [T], [1]))

    @d.reference
    def reference(inp):
        return np.concatenate([inp] * (COLS * ROWS + 2))
    '''


def test_herds_first_fit_blocks_are_placed_by_the_search(design_file: DesignFile) -> None:
    """First-fit puts the one-core herds on (0, 2) and (0, 3), where every 4x3 rectangle needs
    a tile; the search places the 4x3 herd first and the small ones above it, and the design
    checks and computes."""
    path = design_file(HERDS)
    assert anchors(path) == {"small1": (0, 5), "small2": (1, 5), "big": (0, 2)}
    check_design(load_design(path).ir)
    result = simulate(load_design(path))
    assert result.passed, [c.line() for c in result.checks]


def test_herds_first_fit_placement_is_kept(design_file: DesignFile) -> None:
    """Where first-fit places every herd, its placement stands, declaration order and all."""
    path = design_file(HERDS)
    assert anchors(path, {"ROWS": "2"}) == {"small1": (0, 2), "small2": (0, 3), "big": (0, 4)}
    assert anchors(path, {"BIG_FIRST": "True"}) == {
        "big": (0, 2), "small1": (0, 5), "small2": (1, 5)}


def test_herds_need_more_tiles_than_the_device_has(design_file: DesignFile) -> None:
    path = design_file(HERDS)
    assert check_error(path, {"ROWS": "4"}) == (
        "d.py:37: error [herd placement]: the herds need 18 core tiles together, and npu1 has "
        "16\n"
        "  limit: 4 columns x 4 core rows, 16 core tiles\n"
        "  found: 18 tiles: 'small1' (1x1), 'small2' (1x1), 'big' (4x4)\n"
        "  d.py:26: herd 'small1'\n"
        "  d.py:31: herd 'small2'\n"
        "  fix: use a larger device (--device npu2_5col) or smaller herds")
    check_design(load_design(path, {"ROWS": "4"}, device="npu2_5col").ir)


def test_an_anchored_herd_in_the_way_is_named_with_the_anchor_that_works(
        design_file: DesignFile) -> None:
    """small1 anchored at (1, 3) leaves no 4x3 rectangle; anchored at (0, 2) it leaves one."""
    path = design_file(HERDS)
    assert check_error(path, {"PIN": "(1, 3)"}) == (
        "d.py:37: error [herd placement]: herd 'big' (4x3) does not fit on npu1 beside the "
        "anchored herds\n"
        "  limit: 4 columns x 4 core rows, 16 core tiles; the anchored herds leave no free 4x3 "
        "rectangle\n"
        "  found: 14 tiles: 'small1' (1x1), 'small2' (1x1), 'big' (4x3)\n"
        "  d.py:26: herd 'small1' anchored at (1, 3)\n"
        "  fix: move the anchors: herd 'small1' anchor=(0, 2) (line 26); aiedsl then places the "
        "others")
    assert anchors(path, {"PIN": "(0, 2)"}) == {"small1": (0, 2), "small2": (1, 2), "big": (0, 3)}
    check_design(load_design(path, {"PIN": "(0, 2)"}).ir)


def test_herds_that_do_not_pack(design_file: DesignFile) -> None:
    """13 of npu1's 16 core tiles, but a 3x3 herd leaves only a strip one column wide."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="{device}")
        def e(A: Tensor[256, i32], B: Tensor[256, i32]):
            a = fifo(Tensor[256, i32], name="a")
            b = fifo(Tensor[256, i32], name="b")

            @herd(cols=2, rows=2)
            def first(x, y):
                if (x, y) == (0, 0):
                    with a.produce():
                        pass

            @herd(cols=3, rows=3)
            def second(x, y):
                if (x, y) == (0, 0):
                    with b.produce():
                        pass

            with runtime() as rt:
                rt.drain(a, A)
                rt.drain(b, B)
        '''.replace("{device}", "npu1"))
    assert check_error(path) == (
        "d.py:14: error [herd placement]: the herds do not fit on npu1 together: no placement "
        "gives each its own rectangle of core tiles\n"
        "  limit: 4 columns x 4 core rows, 16 core tiles\n"
        "  found: 13 tiles: 'first' (2x2), 'second' (3x3)\n"
        "  d.py:8: herd 'first'\n"
        "  fix: use a larger device (--device npu2_5col) or smaller herds")
    d = load_design(path, device="npu2_5col").ir
    assert {h.name: h.anchor for h in place(d, get_target("npu2_5col")).herds} == {
        "first": (0, 2), "second": (2, 2)}


# A 6x4 herd on npu2 whose every row sends one 6-part join to the host through a memtile
# (the tester's join6.py); PIN lists each join's memtile, or leaves them to the placer.
JOINS = '''
    import numpy as np
    from aiedsl import Tensor, define, design, fifo, herd, i32, join, memtile, runtime
    from aiedsl.kernels import passthrough

    T, C, R = 1024, 6, 4
    PIN = define("PIN", "")

    @design(device="npu2")
    def j(inp: Tensor[T, i32], out: Tensor[C * R * T, i32]):
        a = fifo(Tensor[T, i32], name="a")
        parts = [[fifo(Tensor[T, i32], name=f"p{x}_{y}") for x in range(C)] for y in range(R)]
        cols = [int(c) for c in PIN.split(",")] if PIN else [None] * R
        rows = [join(parts[y], name=f"row{y}",
                     via=memtile if cols[y] is None else memtile(cols[y])) for y in range(R)]
        copy = passthrough(Tensor[T, i32])

        @herd(cols=C, rows=R)
        def core(x, y):
            with a.consume() as s, parts[y][x].produce() as t:
                copy(s, t)

        with runtime() as rt:
            rt.fill(a, inp)
            for y in range(R):
                rt.drain(rows[y], out, (y * C * T, [C * T], [1]))

    @j.reference
    def reference(inp):
        return np.concatenate([inp] * (C * R))
    '''


def test_unpinned_joins_avoid_memtiles_too_few_wires_reach(design_file: DesignFile) -> None:
    """Memtiles 0-3, the placer's first choice, take 24 streams into the shim and memtile rows
    of columns 0-3, which 20 wires enter; it takes 0, 1, 3 and 4, which pass every cut."""
    d = load_design(design_file(JOINS)).ir
    placed = place(d, get_target("npu2"))
    assert [link.tile for link in placed.links] == [(0, 1), (1, 1), (3, 1), (4, 1)]
    assert worst(streams(placed), get_target("npu2")) is None
    first = place(d.model_copy(update={"links": tuple(
        link.model_copy(update={"tile": (i, 1)}) for i, link in enumerate(d.links))}),
        get_target("npu2"))
    cut = worst(streams(first), get_target("npu2"))
    assert cut is not None and (cut.cols, cut.rows, cut.wires, cut.need) == ((0, 3), (0, 1), 20, 24)


def test_pinned_joins_no_router_can_route_say_the_cut_and_the_pins_that_work(
        design_file: DesignFile) -> None:
    path = design_file(JOINS)
    lines = check_error(path, {"PIN": "0,1,2,3"}).splitlines()
    assert lines[:3] == [
        "d.py:11: error [stream routing]: no legal routing on npu2: 24 streams must enter the "
        "tiles of columns 0-3, rows 0-1 (shim tiles and memtiles), and 20 wires lead in",
        "  limit: 20 wires into tiles (0, 0) to (3, 1): 16 from row 2 above, 4 from column 4 "
        "to the east (a wire carries one stream)",
        "  found: 24 streams"]
    assert lines[3:-1] == [f"  d.py:11: p{x}_{y}: core[{x},{y}] ({x}, {y + 2}) -> memtile "
                           f"({y}, 1)" for y in range(4) for x in range(6)]
    assert lines[-1] == (
        "  fix: pin the links to other memtiles, with which the design passes every check: "
        "join into 'row2' via=memtile(3) (line 13), join into 'row3' via=memtile(4) (line 13)")
    check_design(load_design(path, {"PIN": "0,1,3,4"}).ir)


def test_forwards_pinned_past_a_memtiles_channels_are_named(design_file: DesignFile) -> None:
    """Eight forwards pinned to memtile 0 need 8 of its 6 S2MM channels: each is named, and
    the fix names the two to move."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, memtile, runtime
        from aiedsl.kernels import passthrough

        T, R, N = 1024, 4, 4

        @design(device="npu1")
        def outs(inp: Tensor[N * T, i32], out: Tensor[R * 2 * N * T, i32]):
            a = fifo(Tensor[T, i32], name="a")
            o1 = [fifo(Tensor[T, i32], name=f"o{y}_0") for y in range(R)]
            o2 = [fifo(Tensor[T, i32], name=f"o{y}_1") for y in range(R)]
            h1 = [f.forward(name=f"h{y}_0", via=memtile(0)) for y, f in enumerate(o1)]
            h2 = [f.forward(name=f"h{y}_1", via=memtile({PIN})) for y, f in enumerate(o2)]
            copy = passthrough(Tensor[T, i32])

            @herd(cols=1, rows=R, anchor=(0, 2))
            def core(x, y):
                for _ in loop(N):
                    with a.consume() as s, o1[y].produce() as t, o2[y].produce() as u:
                        copy(s, t)
                        copy(s, u)

            with runtime() as rt:
                rt.fill(a, inp)
                for y in range(R):
                    rt.drain(h1[y], out, ((2 * y) * N * T, [N * T], [1]))
                    rt.drain(h2[y], out, ((2 * y + 1) * N * T, [N * T], [1]))
        '''.replace("{PIN}", "0 if y < 2 else {PIN}"))
    bad = design_file(path.read_text().replace("{PIN}", "0"), "bad.py")
    assert check_error(bad) == (
        "bad.py:12: error [memtile DMA input (S2MM) channels]: the links pinned to memtile "
        "(0, 1) need 8 DMA input (S2MM) channels, and a memtile has 6\n"
        "  limit: 6 per memtile\n"
        "  found: 8\n"
        + "".join(f"  bad.py:{11 + k}: forward 'h{y}_{k}' of 'o{y}_{k}' pinned here: 1 channel\n"
                  for k in range(2) for y in range(4))
        + "  fix: leave the column out of the pins (via=memtile): aiedsl then places every "
        "link, or pin as it would: forward 'h2_1' of 'o2_1' via=memtile(1) (line 12), forward "
        "'h3_1' of 'o3_1' via=memtile(1) (line 12)")
    check_design(load_design(design_file(path.read_text().replace("{PIN}", "1"), "good.py")).ir)


def test_a_broadcast_crosses_a_cut_once() -> None:
    """Six streams from core (0, 3) into memtile (0, 1) on npu1_1col need six of the four
    wires into rows 0-1; one stream to six tiles there needs one."""
    target = get_target("npu1_1col")
    six = [((0, 3), ((0, 1),))] * 6
    cut = worst(six, target)
    assert cut is not None and (cut.cols, cut.rows, cut.entering, cut.wires, cut.need) == (
        (0, 0), (0, 1), True, 4, 6)
    assert worst([((0, 3), ((0, 1), (0, 0)))], target) is None
