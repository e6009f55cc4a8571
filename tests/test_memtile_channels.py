"""Memtile DMA channels: a link keeps all its channels on one memtile, so a design whose links
cannot be packed into the device's memtiles is refused with the real limit, and the placer
finds a packing whenever one exists."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.place.memtiles import fit

DesignFile = Callable[..., Path]


def check_error(path: Path, defines: dict[str, str] | None = None,
                device: str | None = None) -> str:
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(path, defines, device=device).ir)
    return str(excinfo.value)


# The tester's two herds on the whole npu1 (MLIR-AIR's herd_to_herd through a segment's L2):
# each column's links take 6 memtile S2MM and 7 MM2S channels, 28 MM2S in all against 24.
TWO_HERDS = '''
    from aiedsl import Tensor, bf16, channel, define, design, fifo, herd, loop, memtile, runtime
    from aiedsl.kernels import mul, relu

    COLS, ROWS = 4, 2
    TH, TW = 32, 64
    ITERS = 8
    VIA = define("VIA", "l2")
    M, N = ROWS * TH * ITERS, COLS * TW

    @design(device="npu1")
    def d(A: Tensor[M, N, bf16], B: Tensor[TH, N, bf16], C: Tensor[M, N, bf16]):
        a = channel(Tensor[TH, TW, bf16], shape=[COLS, ROWS], via=memtile, split=1, name="a")
        b = channel(Tensor[TH, TW, bf16], shape=[COLS], via=memtile, broadcast=ROWS, name="b")
        c = channel(Tensor[TH, TW, bf16], shape=[COLS, ROWS], via=memtile, name="c")
        if VIA == "l2":
            up = [[fifo(Tensor[TH, TW, bf16], name=f"h_{x}_{y}") for y in range(ROWS)]
                  for x in range(COLS)]
            down = [[up[x][y].forward(name=f"h_l2_{x}_{y}") for y in range(ROWS)]
                    for x in range(COLS)]
        else:
            ch = channel(Tensor[TH, TW, bf16], shape=[COLS, ROWS], name="h")
            up = down = [[ch[x, y] for y in range(ROWS)] for x in range(COLS)]
        vmul = mul(Tensor[TH, TW, bf16])
        vrelu = relu(Tensor[TH, TW, bf16])

        @herd(cols=COLS, rows=ROWS, name="mulherd")
        def mulherd(x, y):
            with b[x].consume() as tb:
                for _ in loop(ITERS):
                    with a[x, y].consume() as ta, up[x][y].produce() as tp:
                        vmul(ta, tb, tp)

        @herd(cols=COLS, rows=ROWS, name="reluherd")
        def reluherd(x, y):
            for _ in loop(ITERS):
                with down[x][y].consume() as tp, c[x, y].produce() as tc:
                    vrelu(tp, tc)

        with runtime() as rt:
            for x in range(COLS):
                rt.fill(b[x], B, (x * TW, [TH, TW], [N, 1]))
                rt.fill(a[x, :], A, (x * TW, [M, TW], [N, 1]))
            for x in range(COLS):
                for y in range(ROWS):
                    rt.drain(c[x, y], C, (y * TH * N + x * TW, [ITERS, TH, TW],
                                          [ROWS * TH * N, N, 1]))
    '''


def test_more_channels_than_the_device_has(design_file: DesignFile) -> None:
    """No placement exists: the error says what all links need against what all memtiles have
    (it named one memtile's S2MM, after the placer had spilled a link into it, and said to pin a
    link elsewhere, which cannot help). Both fixes it offers pass."""
    path = design_file(TWO_HERDS)
    assert check_error(path) == (
        "d.py:14: error [memtile DMA output (MM2S) channels]: the design's memtile links need 28 "
        "DMA output (MM2S) channels, and the 4 memtiles of npu1 have 24\n"
        "  limit: 24 (6 per memtile, 4 memtiles): no placement of the links can fit them\n"
        "  found: 28\n"
        "  d.py:18: 8 forwards: 8\n"
        "  d.py:12: 4 splits: 8\n"
        "  d.py:13: 4 forwards: 4\n"
        "  d.py:14: 8 forwards: 8\n"
        "  fix: pass fewer fifos through memtiles: a fifo between two cores, or between the host "
        "and a core, needs no memtile (leave out its forward, or the channel's via=memtile); or "
        "give channel 'b' split=0, channel 'c' join=0 (one memtile link then feeds, or drains, "
        "the channel's fifos along that axis, where each of them now takes a forward of its "
        "own); or split over fewer parts (each part of a split leaves its memtile on a DMA "
        "channel of its own: a herd of fewer rows or columns, each core doing more), or a "
        "device with more memtiles (--device npu2_5col)")
    check_design(load_design(path, {"VIA": "l1"}).ir)
    check_design(load_design(path, device="npu2_5col").ir)
    # the channels grouped as the fix says, the host filling and draining each group once
    grouped = TWO_HERDS.replace('broadcast=ROWS, name="b")', 'broadcast=ROWS, split=0, name="b")')
    grouped = grouped.replace('via=memtile, name="c")', 'via=memtile, join=0, name="c")')
    grouped = grouped.replace("                rt.fill(b[x], B, (x * TW, [TH, TW], [N, 1]))\n", "")
    grouped = grouped.replace(
        "        with runtime() as rt:\n",
        "        with runtime() as rt:\n"
        "            rt.fill(b[:], B, (0, [COLS, TH, TW], [TW, N, 1]))\n")
    drains = grouped[grouped.index("            for x in range(COLS):\n                for y"):]
    grouped = grouped.replace(drains, """            for y in range(ROWS):
                rt.drain(c[:, y], C, (y * TH * N, [ITERS, COLS, TH, TW],
                                      [ROWS * TH * N, TW, N, 1]))
    """)
    check_design(load_design(design_file(grouped, "grouped.py")).ir)


PINNED = '''
    from aiedsl import Tensor, design, fifo, herd, i32, memtile, runtime

    @design(device="npu1_2col")
    def d(A: Tensor[1024, i32], B: Tensor[768, i32]):
        a = fifo(Tensor[1024, i32], name="a")
        b = fifo(Tensor[768, i32], name="b")
        parts = (a.split(4, names=[f"a{i}" for i in range(4)], via=memtile(0))
                 + b.split(3, names=[f"b{i}" for i in range(3)], via=%s))

        @herd(cols=2, rows=4)
        def core(x, y):
            if x * 4 + y < 7:
                with parts[x * 4 + y].consume():
                    pass

        with runtime() as rt:
            rt.fill(a, A)
            rt.fill(b, B)
    '''


def test_pins_leave_no_room(design_file: DesignFile) -> None:
    """Two splits pinned to one memtile need 7 MM2S channels: the fix names the pin that
    works, and both ways of following it check."""
    path = design_file(PINNED % "memtile(0)")
    assert check_error(path) == (
        "d.py:8: error [memtile DMA output (MM2S) channels]: the links pinned to memtile (0, 1) "
        "need 7 DMA output (MM2S) channels, and a memtile has 6\n"
        "  limit: 6 per memtile\n"
        "  found: 7\n"
        "  d.py:7: split of 'a' pinned here: 4 channels\n"
        "  d.py:8: split of 'b' pinned here: 3 channels\n"
        "  fix: leave the column out of the pins (via=memtile): aiedsl then places every link, "
        "or pin as it would: split of 'b' via=memtile(1) (line 8)")
    check_design(load_design(design_file(PINNED % "memtile(1)", "repinned.py")).ir)
    check_design(load_design(design_file(PINNED.replace(", via=memtile(0)", "") % "memtile",
                                         "free.py")).ir)


def test_links_that_do_not_pack(design_file: DesignFile) -> None:
    """Three 4-part splits need 12 MM2S, as many as two memtiles have, but a memtile takes only
    one of them: fewer parts per link (four 3-part splits) pack."""
    source = '''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        N = %d

        @design(device="npu1_2col")
        def d(A: Tensor[N * 256, i32], B: Tensor[N * 256, i32], C: Tensor[N * 256, i32],
              D: Tensor[N * 256, i32]):
            ins = [fifo(Tensor[N * 256, i32], name=n) for n in "abcd"[:12 // N]]
            parts = [p for f in ins for p in f.split(N, names=[f"{f.name}{k}" for k in range(N)])]

            @herd(cols=2, rows=4)
            def core(x, y):
                with parts[x * 4 + y].consume():
                    pass
                if x * 4 + y < 4:
                    with parts[8 + x * 4 + y].consume():
                        pass

            with runtime() as rt:
                for f, t in zip(ins, (A, B, C, D)):
                    rt.fill(f, t)
        '''
    assert check_error(design_file(source % 4)) == (
        "d.py:9: error [memtile DMA output (MM2S) channels]: the design's memtile links need 12 "
        "DMA output (MM2S) channels, which the 2 memtiles of npu1_2col have in all, but not as "
        "the links group them: a link takes all its channels on one memtile\n"
        "  limit: 6 per memtile, 2 memtiles\n"
        "  found: 4, 4, 4\n"
        "  d.py:9: 3 splits: 12\n"
        "  fix: split or join over fewer parts per link (the split at line 9 takes 4), so the "
        "links pack into the memtiles")
    check_design(load_design(design_file(source % 3, "three.py")).ir)


def test_placer_finds_the_packing_its_greedy_choice_misses(design_file: DesignFile) -> None:
    """Two forwards, one per column, then a 6-part split: the greedy choice (each forward in
    its own column) leaves no memtile for the split, which needs one to itself. The placer
    searches on and puts both forwards on one memtile (this was a channel error that said to
    pin a link elsewhere)."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1_2col")
        def d(A: Tensor[256, i32], B: Tensor[256, i32], C: Tensor[1536, i32]):
            f0 = fifo(Tensor[256, i32], name="f0").forward(name="g0")
            f1 = fifo(Tensor[256, i32], name="f1").forward(name="g1")
            six = fifo(Tensor[1536, i32], name="six")
            parts = six.split(6, names=[f"s{i}" for i in range(6)])

            @herd(cols=2, rows=4)
            def core(x, y):
                if y == 0:
                    with [f0, f1][x].consume():
                        pass
                if x * 4 + y < 6:
                    with parts[x * 4 + y].consume():
                        pass

            with runtime() as rt:
                rt.fill(f0, A)
                rt.fill(f1, B)
                rt.fill(six, C)
        ''')
    placed, _ = check_design(load_design(path).ir)
    assert [(link.kind, link.tile) for link in placed.links] == [
        ("forward", (0, 1)), ("forward", (0, 1)), ("split", (1, 1))]


def test_fit_tries_the_preferred_columns_first_and_is_complete() -> None:
    """The first packing found follows ``prefer`` when it fits; an impossible one is settled."""
    assert fit([(1, 1), (1, 1)], [None, None], 2, (6, 6), lambda i, loads: [1, 0]).columns == [1, 1]
    assert fit([(1, 4)] * 3, [None] * 3, 2, (6, 6)).columns is None
    assert fit([(1, 4)] * 3, [None] * 3, 2, (6, 6)).settled
    assert fit([(1, 4), (1, 2)], [0, None], 2, (6, 6)).columns == [0, 0]
    assert fit([(7, 1)], [None], 4, (6, 6)).columns is None


def test_host_depth_sets_the_memtile_side_of_a_channel_the_cores_fill(
        design_file: Callable[..., Path]) -> None:
    """channel(host_depth=5) drained by the host kept 2 buffers at the memtile, silently: the
    cores' fifo owns them there (a reviewer). Its memtile end now takes host_depth."""
    from aiedsl.checks import check_design
    from aiedsl.codegen.mlir import render_mlir
    from aiedsl.sim import simulate
    from aiedsl.targets import get_target

    path = design_file('''
        from aiedsl import Tensor, channel, design, herd, i32, loop, memtile, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def hd(inp: Tensor[4096, i32], out: Tensor[4096, i32]):
            a = channel(Tensor[1024, i32], shape=[1], via=memtile)
            c = channel(Tensor[1024, i32], shape=[1], via=memtile, host_depth=5)
            k = passthrough(Tensor[1024, i32])

            @herd()
            def core():
                for _ in loop(4):
                    with a[0].consume() as s, c[0].produce() as d:
                        k(s, d)

            with runtime() as rt:
                rt.fill(a[0], inp)
                rt.drain(c[0], out)

        @hd.reference
        def ref(inp):
            return inp.copy()
        ''')
    handle = load_design(path)
    placed, usage = check_design(handle.ir)
    mlir = render_mlir(placed, get_target(placed.device))
    assert "aie.objectfifo @c_0(%tile_0_2, {%tile_0_1}, [2, 5])" in mlir
    assert sum(u.amount for u in usage[(0, 1)].memory) == (2 + 5) * 4096
    assert simulate(handle).passed


def test_a_channel_pinned_past_a_memtiles_channels_is_not_told_to_pin_per_link(
        design_file: DesignFile) -> None:
    """A channel's one via=memtile(0) pins its four splits to one memtile, 8 MM2S channels of
    its 6. The fix also said "or pin as it would: split of 'a_l3_3' via=memtile(1)", a pin per
    link that a channel cannot take (a tester's finding): for a channel's links it says only
    what it can."""
    path = design_file('''
        from aiedsl import Tensor, channel, design, herd, i32, loop, memtile, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu2")
        def d(A: Tensor[65536, i32], C: Tensor[65536, i32]):
            a = channel(Tensor[32, 64, i32], shape=[4, 2], via=memtile(0), split=1, name="a")
            c = channel(Tensor[32, 64, i32], shape=[4, 2], via=memtile, join=1, name="c")
            cp = passthrough(Tensor[32, 64, i32])

            @herd(cols=4, rows=2)
            def core(x, y):
                for _ in loop(4):
                    with a[x, y].consume() as s, c[x, y].produce() as t:
                        cp(s, t)

            with runtime() as rt:
                for x in range(4):
                    rt.fill(a[x, :], A, (x * 16384, [16384], [1]))
                    rt.drain(c[x, :], C, (x * 16384, [16384], [1]))
        ''')
    text = check_error(path)
    assert text.splitlines()[0] == (
        "d.py:6: error [memtile DMA output (MM2S) channels]: the links pinned to memtile (0, 1) "
        "need 8 DMA output (MM2S) channels, and a memtile has 6")
    assert text.splitlines()[-1] == (
        "  fix: leave the column out of the pins (via=memtile): aiedsl then places every link")
    check_design(load_design(design_file(path.read_text().replace("memtile(0)", "memtile"),
                                         "unpinned.py")).ir)


def test_split_is_not_offered_where_the_outputs_would_still_not_fit(
        design_file: DesignFile) -> None:
    """Two channels of four fifos into the cores on one memtile: 12 inputs of 6. split=0 on
    both was offered and, applied, met the outputs' limit (8 parts + a join's 1 of 6: a split
    saves inputs only): a reviewer's case. It is offered only where both sides then fit."""
    path = design_file('''
        from aiedsl import Tensor, channel, design, herd, i32, runtime, memtile
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def mt(A: Tensor[1024, i32], B: Tensor[1024, i32], C: Tensor[1024, i32]):
            a = channel(Tensor[256, i32], shape=[4], via=memtile, name="a")
            b = channel(Tensor[256, i32], shape=[4], via=memtile, name="b")
            c = channel(Tensor[256, i32], shape=[4], via=memtile, name="c", join=0)
            copy = passthrough(Tensor[256, i32])

            @herd(cols=1, rows=4)
            def core(x, y):
                with a[y].consume() as s, c[y].produce() as d:
                    copy(s, d)
                with b[y].consume() as s:
                    pass

            with runtime() as rt:
                for i in range(4):
                    rt.fill(a[i], A, (i * 256, [256], [1]))
                    rt.fill(b[i], B, (i * 256, [256], [1]))
                rt.drain(c[:], C, wait=True)
        ''')
    text = check_error(path)
    assert "memtile DMA input (S2MM) channels" in text.splitlines()[0]
    assert text.splitlines()[-1] == (
        "  fix: pass fewer fifos through memtiles: a fifo between two cores, or between the host "
        "and a core, needs no memtile (leave out its forward, or the channel's via=memtile), or "
        "a device with more memtiles (--device npu1_2col); on npu1_2col the design would then "
        "meet [shim DMA output (MM2S) channels]: the design's host ends need 8 shim DMA output "
        "(MM2S) channels, and the 2 shim tiles of npu1_2col have 4, while --device npu1 passes "
        "every check")
