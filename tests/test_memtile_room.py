"""Memtile data memory and BDs in placement: the placer puts a link where its buffers and BDs
fit, the pins that stand in the way are named, a memtile over its memory is told how the design
sets the buffers it holds, and a depth given to a memtile end without buffers is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.place.memtiles import fit
from aiedsl.sim import simulate

DesignFile = Callable[..., Path]


def check_error(path: Path, defines: dict[str, str] | None = None,
                device: str | None = None) -> str:
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(path, defines, device=device).ir)
    return str(excinfo.value)


def links(path: Path, defines: dict[str, str] | None = None) -> list[tuple[str, str, object]]:
    """Each link's kind, first input and tile, as check_design places them."""
    placed, _ = check_design(load_design(path, defines).ir)
    return [(link.kind, link.srcs[0], link.tile) for link in placed.links]


# The tester's reproducer A: two host -> memtile -> host forwards of 192 KB elements, depth 2:
# 384 KB each, one per 512 KB memtile.
TWO_FORWARDS = '''
    import numpy as np
    from aiedsl import Tensor, define, design, fifo, i32, memtile, runtime

    T = 49152
    IT = 2

    @design(device="npu1")
    def d(x: Tensor[IT * T, i32], y: Tensor[IT * T, i32], ox: Tensor[IT * T, i32],
          oy: Tensor[IT * T, i32]):
        a = fifo(Tensor[T, i32], name="a", depth=2)
        fa = a.forward(name="fa"PIN_A)
        b = fifo(Tensor[T, i32], name="b", depth=2)
        fb = b.forward(name="fb"PIN_B)
        with runtime() as rt:
            rt.fill(a, x)
            rt.fill(b, y)
            rt.drain(fa, ox)
            rt.drain(fb, oy)

    @d.reference
    def reference(x, y):
        return x.copy(), y.copy()
    '''


def two_forwards(pin_a: str = "", pin_b: str = "") -> str:
    return TWO_FORWARDS.replace("PIN_A", pin_a).replace("PIN_B", pin_b)


def test_a_link_goes_to_a_memtile_with_memory_for_it(design_file: DesignFile) -> None:
    """Both forwards went to (0, 1), 768 KB of 512 KB, and check refused the design, though a
    second memtile was free: the placer now puts the second where it fits, and the simulated
    run copies both tensors, as numpy does."""
    path = design_file(two_forwards())
    assert links(path) == [("forward", "a", (0, 1)), ("forward", "b", (1, 1))]
    result = simulate(load_design(path))
    assert result.passed, [c.line() for c in result.checks]
    assert np.array_equal(result.outputs["ox"], result.inputs["x"])
    assert np.array_equal(result.outputs["oy"], result.inputs["y"])


def test_pins_that_overfill_a_memtile_spill_to_its_neighbour(design_file: DesignFile) -> None:
    """Both forwards pinned to one memtile: aiedsl refused them (768 KB of 512 KB), but
    mlir-aie 1e400306 puts a memtile buffer that does not fit on the left, else the right,
    memtile (createObjectFifoElements): b's two buffers go to (1, 1), its DMAs stay on (0, 1)
    on channels 0-3, and the run copies both tensors."""
    path = design_file(two_forwards(", via=memtile(0)", ", via=memtile(0)"))
    placed, _ = check_design(load_design(path).ir)
    assert placed.physical is not None
    homes = {(b.name, b.tile, b.address) for b in placed.physical.buffers if b.tile[1] == 1}
    assert homes == {("a_cons_buff_0", (0, 1), 0), ("a_cons_buff_1", (0, 1), 196608),
                     ("b_cons_buff_0", (1, 1), 0), ("b_cons_buff_1", (1, 1), 196608)}
    assert sorted((c.fifo, c.direction, c.channel) for c in placed.physical.channels
                  if c.tile == (0, 1)) == [("a", "S2MM", 1), ("b", "S2MM", 0),
                                           ("fa", "MM2S", 1), ("fb", "MM2S", 0)]
    result = simulate(load_design(path))
    assert result.passed, [c.line() for c in result.checks]
    assert np.array_equal(result.outputs["oy"], result.inputs["y"])


def test_pins_that_leave_the_free_link_no_memtile(design_file: DesignFile) -> None:
    """Two 100 KB forwards pinned one per memtile of npu1_2col leave a 200 KB one no memtile
    that holds all its buffers (mlir-aie then spills one to the neighbour); both on one memtile
    leave it the other."""
    source = '''
        from aiedsl import Tensor, design, fifo, i32, memtile, runtime

        S, L = 25600, 51200

        @design(device="npu1_2col")
        def d(x: Tensor[S, i32], y: Tensor[S, i32], z: Tensor[L, i32],
              o: Tensor[2 * S + L, i32]):
            a = fifo(Tensor[S, i32], name="a")
            fa = a.forward(name="fa", via=memtile(0))
            b = fifo(Tensor[S, i32], name="b")
            fb = b.forward(name="fb", via=memtile(%d))
            c = fifo(Tensor[L, i32], name="c")
            fc = c.forward(name="fc")
            with runtime() as rt:
                rt.fill(a, x)
                rt.fill(b, y)
                rt.fill(c, z)
                rt.drain(fa, o, (0, [S], [1]))
                rt.drain(fb, o, (S, [S], [1]))
                rt.drain(fc, o, (2 * S, [L], [1]), wait=True)
        '''
    # refused before aiedsl modelled mlir-aie's spill to a neighbouring memtile: now the
    # 200 KB link's buffer that does not fit its pinned memtile goes to the other
    placed, _ = check_design(load_design(design_file(source % 1)).ir)
    assert placed.physical is not None
    assert len({b.tile for b in placed.physical.buffers if b.tile[1] == 1}) == 2
    assert links(design_file(source % 0, "repinned.py")) == [
        ("forward", "a", (0, 1)), ("forward", "b", (0, 1)), ("forward", "c", (1, 1))]


# The tester's reproducer B: three forwards for one core; with depth 7 at the memtile each
# chains 7 BDs per channel, so three on one memtile take channels 0, 1, 2 of each direction:
# 28 BDs on even channels, of 24.
THREE_FORWARDS = '''
    from aiedsl import Tensor, define, design, fifo, herd, i32, loop, memtile, runtime
    from aiedsl.kernels import add

    N = 4096
    T = 256
    D = define("D", 7)

    @design(device="DEVICE")
    def d(a: Tensor[N, i32], b: Tensor[N, i32], out: Tensor[N, i32]):
        fa = fifo(Tensor[T, i32], name="fa", depth=D)
        la = fa.forward(name="la", depth=2PIN)
        fb = fifo(Tensor[T, i32], name="fb", depth=D)
        lb = fb.forward(name="lb", depth=2PIN)
        fo = fifo(Tensor[T, i32], name="fo", depth=2, consumer_depth={"memtile": D})
        lo = fo.forward(name="lo", depth=DPIN)
        k = add(Tensor[T, i32])

        @herd()
        def core():
            for _ in loop(N // T):
                with la.consume() as x, lb.consume() as y, fo.produce() as z:
                    k(x, y, z)

        with runtime() as rt:
            rt.fill(fa, a)
            rt.fill(fb, b)
            rt.drain(lo, out, wait=True)

    @d.reference
    def reference(a, b):
        return a + b
    '''


def three_forwards(device: str = "npu1", pin: str = "") -> str:
    return THREE_FORWARDS.replace("DEVICE", device).replace("PIN", pin)


def test_a_link_goes_to_a_memtile_with_bds_for_it(design_file: DesignFile) -> None:
    """The third forward goes to the second memtile, where its channels are 0 again (before,
    all three went to (0, 1) and check refused it); the run adds as numpy does. Depth 6 (24
    BDs on even channels) still fits the first memtile, which the placer keeps."""
    path = design_file(three_forwards())
    assert links(path) == [("forward", "fa", (0, 1)), ("forward", "fb", (0, 1)),
                           ("forward", "fo", (1, 1))]
    result = simulate(load_design(path))
    assert result.passed, [c.line() for c in result.checks]
    ins = result.inputs
    assert np.array_equal(result.outputs["out"], ins["a"] + ins["b"])
    assert {tile for *_, tile in links(path, {"D": "6"})} == {(0, 1)}


def test_pins_that_leave_a_memtile_short_of_bds(design_file: DesignFile) -> None:
    """All three pinned to one memtile: the two on even channels take 28 BDs there."""
    path = design_file(three_forwards(pin=", via=memtile(0)"))
    assert check_error(path) == (
        "d.py:15: error [memtile buffer descriptors of even channels]: the links pinned to "
        "memtile (0, 1) need 28 BDs on even channels, and a memtile has 24 (BDs 0-23)\n"
        "  limit: 24 (BDs 0-23) per memtile\n"
        "  found: 28 BDs\n"
        "  d.py:11: forward 'la' of 'fa' pinned here: 14 BDs\n"
        "  d.py:15: forward 'lo' of 'fo' pinned here: 14 BDs\n"
        "  fix: leave the column out of the pins (via=memtile): aiedsl then places every link, "
        "or pin as it would: forward 'lo' of 'fo' via=memtile(1) (line 15)")


def test_bds_no_memtile_can_spare_say_to_lower_depths(design_file: DesignFile) -> None:
    """On one memtile the three forwards cannot move: the fix no longer says to move a link to
    another memtile. Five core-to-core forwards of depth 7 on npu1_2col: two fit a memtile
    (channels 0 and 1), five do not fit two; four do."""
    assert check_error(design_file(three_forwards("npu1_1col"))) == (
        "d.py:15: error [memtile buffer descriptors of even channels]: memtile (0, 1) needs "
        "more buffer descriptors of even channels than it has\n"
        "  limit: 24 (BDs 0-23)\n"
        "  found: 28\n"
        "  d.py:11: fa: 7\n"
        "  d.py:11: la: 7\n"
        "  d.py:15: fo: 7\n"
        "  d.py:15: lo: 7\n"
        "  fix: lower fifo depths, or use a device with more memtiles than npu1_1col; here, "
        "for example: lower the depth of 'fa' (depth=5) or give its memtile end consumer_depth="
        "{\"memtile\": 5} (d.py:10; 7 buffers now, each taking 2 of the 24 BDs, beside the 14 "
        "of 'fo' and 'lo')")
    path = design_file('''
        from aiedsl import Tensor, define, design, fifo, herd, i32, loop, runtime
        from aiedsl.kernels import passthrough, zero

        N = define("N", 5)

        @design(device="npu1_2col")
        def d(A: Tensor[64, i32]):
            xs = [fifo(Tensor[64, i32], name=f"x{k}", depth=7) for k in range(N)]
            ys = [x.forward(name=f"y{k}") for k, x in enumerate(xs)]
            z = zero(Tensor[64, i32])

            @herd(cols=2, rows=4)
            def core(c, r):
                k = c * 4 + r
                if k < N:
                    for _ in loop(4):
                        with xs[k].produce() as t:
                            z(t)
                        with ys[k].consume():
                            pass
        ''', "five.py")
    assert check_error(path) == (
        "five.py:9: error [memtile buffer descriptors of even channels]: memtile (0, 1) needs "
        "more buffer descriptors of even channels than it has\n"
        "  limit: 24 (BDs 0-23)\n"
        "  found: 28\n"
        "  five.py:9: x0: 7\n"
        "  five.py:9: x2: 7\n"
        "  five.py:9: y0: 7\n"
        "  five.py:9: y2: 7\n"
        "  fix: lower fifo depths: aiedsl finds no placement of the links that gives every "
        "memtile of npu1_2col room for its links' channels, memory and BDs; here, for example: "
        "lower the depth of 'x0' (depth=5) or give its memtile end consumer_depth={\"memtile\": "
        "5} (five.py:8; 7 buffers now, each taking 2 of the 24 BDs, beside the 14 of 'x2' and "
        "'y2')")
    assert [tile for *_, tile in links(path, {"N": "4"})] == [(0, 1), (0, 1), (1, 1), (1, 1)]


def test_fit_checks_each_complete_packing_and_remembers_only_what_sums_settle() -> None:
    """A packing ``exact`` refuses is searched past; a branch it cut short is not remembered as
    impossible (the same loads in another arrangement may pass)."""
    def refused_together(columns: list[int]) -> bool:
        return columns[0] != columns[1]

    assert fit([(1, 1)] * 2, [None] * 2, 2, (6, 6), exact=refused_together).columns == [0, 1]
    assert fit([(1, 1)] * 3, [None] * 3, 2, (6, 6),
               exact=lambda c: c[0] != c[1] and c[2] == c[0]).columns == [0, 1, 0]
    assert fit([(1, 1)] * 3, [None] * 3, 1, (6, 6), exact=refused_together).columns is None


# -- how a design sets a memtile's buffers -----------------------------------------------------

MEMORY = '''
    from aiedsl import Tensor, channel, define, design, fifo, herd, i32, loop, memtile, runtime

    T = 49152
    D = define("D", 3)
    CASE = define("CASE", "input")

    @design(device="npu1_1col")
    def d(inp: Tensor[4 * T, i32], out: Tensor[4 * T, i32]):
        if CASE == "input":
            a = fifo(Tensor[T, i32], name="a", depth=D)
            b = a.forward(name="b", depth=D)
        elif CASE == "memtile end":
            a = fifo(Tensor[T, i32], name="a", consumer_depth={"memtile": D})
            b = a.forward(name="b")
        else:
            a = fifo(Tensor[T // 2, i32], name="a")
            b = a.forward(Tensor[T, i32], name="b", depth=D)
        with runtime() as rt:
            rt.fill(a, inp)
            rt.drain(b, out, wait=True)

    @d.reference
    def reference(inp):
        return inp.copy()
    '''


@pytest.mark.parametrize("case, fix", [
    ("input", "lower the depth of 'a' (depth=2) or give its memtile end consumer_depth="
              "{\"memtile\": 2}"),
    ("memtile end", "give the memtile end of 'a' consumer_depth={\"memtile\": 2}"),
    ("output", "give the forward that makes 'b' depth=2"),
])
def test_the_memory_fix_names_the_end_that_owns_the_buffers(
        design_file: DesignFile, case: str, fix: str) -> None:
    """The tester's reproducer: a forward of equal elements keeps its buffers at its input's
    memtile end, so the fix said f.forward(depth=1), which changes nothing. It now names how the
    design sets the owner's buffers, and following it runs as numpy copies."""
    path = design_file(MEMORY)
    line = 13 if case == "memtile end" else 10 if case == "input" else 16
    owner = "b" if case == "output" else "a"
    assert check_error(path, {"CASE": case}) == (
        f"d.py:{line + 1}: error [memtile data memory]: memtile (0, 1) needs more data memory "
        "than it has\n"
        "  limit: 524,288 bytes\n"
        "  found: 589,824 bytes\n"
        f"  d.py:{line + 1}: {owner} 3 x 196608 B: 589824\n"
        f"  fix: free 65,536 bytes: {fix}, use smaller tiles, or split the data over more "
        "memtiles")
    result = simulate(load_design(path, {"CASE": case, "D": "2"}))
    assert result.passed, [c.line() for c in result.checks]
    assert np.array_equal(result.outputs["out"], result.inputs["inp"])


def test_the_memory_fix_names_a_channels_depths(design_file: DesignFile) -> None:
    """A channel's fill holds host_depth buffers on the memtile; its drain the cores' depth."""
    source = '''
        from aiedsl import Tensor, channel, define, design, fifo, herd, i32, loop, memtile, runtime
        from aiedsl.kernels import passthrough

        T = 4096
        WAY = define("WAY", "fill")

        @design(device="npu1_1col")
        def d(inp: Tensor[8 * T, i32], out: Tensor[8 * T, i32]):
            if WAY == "fill":
                a = channel(Tensor[T, i32], via=memtile, host_depth=40, name="a")
                src, c = a[0], fifo(Tensor[T, i32], name="c")
                host_in, host_out = a[0], c
            else:
                src = fifo(Tensor[T, i32], name="a")
                c = channel(Tensor[T, i32], via=memtile, depth=40, name="c")
                host_in, host_out, c = src, c[0], c[0]
            copy = passthrough(Tensor[T, i32])

            @herd()
            def core():
                for _ in loop(8):
                    with src.consume() as s, c.produce() as t:
                        copy(s, t)

            with runtime() as rt:
                rt.fill(host_in, inp)
                rt.drain(host_out, out, wait=True)
        '''
    path = design_file(source)
    assert check_error(path).endswith(
        "  d.py:10: a_l3_0 40 x 16384 B: 655360\n"
        "  fix: free 131,072 bytes: give channel 'a' host_depth=32, use smaller tiles, or split "
        "the data over more memtiles")
    assert check_error(path, {"WAY": "drain"}).endswith(
        "  d.py:15: c_0 40 x 16384 B: 655360\n"
        "  fix: free 131,072 bytes: give channel 'c' host_depth=32, use smaller tiles, or split "
        "the data over more memtiles")


def test_memory_one_buffer_cannot_free_says_so(design_file: DesignFile) -> None:
    """Two depth-2 forwards of 384 KB on one memtile: single-buffering the larger frees 192 KB
    of the 256 KB too many."""
    assert check_error(design_file(two_forwards()), device="npu1_1col") == (
        "d.py:13: error [memtile data memory]: memtile (0, 1) needs more data memory than it has\n"
        "  limit: 524,288 bytes\n"
        "  found: 786,432 bytes\n"
        "  d.py:11: a 2 x 196608 B: 393216\n"
        "  d.py:13: b 2 x 196608 B: 393216\n"
        "  fix: free 262,144 bytes: lower the depth of 'b' (depth=1) or give its memtile end "
        "consumer_depth={\"memtile\": 1} (that frees 196,608 of them), give the memtile's other "
        "fifos fewer buffers, use smaller tiles, or split the data over more memtiles")


# -- a memtile depth where the memtile has no buffers of that end --------------------------------

JOIN = '''
    from aiedsl import Tensor, design, fifo, herd, i32, join, loop, runtime
    from aiedsl.kernels import passthrough

    T = 256

    @design(device="npu1_1col")
    def d(inp: Tensor[4 * T, i32], out: Tensor[4 * T, i32]):
        big = fifo(Tensor[2 * T, i32], name="big")
        parts = big.split(2)
        outs = [fifo(Tensor[T, i32], name=f"o{k}"CDEP) for k in range(2)]
        res = join(outs, name="res"JDEP)
        copy = passthrough(Tensor[T, i32])

        @herd(cols=1, rows=2)
        def core(x, y):
            for _ in loop(2):
                with parts[y].consume() as s, outs[y].produce() as t:
                    copy(s, t)

        with runtime() as rt:
            rt.fill(big, inp)
            rt.drain(res, out, wait=True)

    @d.reference
    def reference(inp):
        return inp.copy()
    '''


def test_a_memtile_depth_for_a_joins_part_is_refused(design_file: DesignFile) -> None:
    """The tester's reproducer: consumer_depth={"memtile": 4} on a join's parts was silently
    ignored (the memtile moves them through the joined fifo's buffers). The fix runs."""
    path = design_file(JOIN.replace("CDEP", ', consumer_depth={"memtile": 4}')
                       .replace("JDEP", ""))
    assert check_error(path) == (
        "d.py:10: error [fifo depth]: fifo 'o0' gives its memtile end 4 buffers, but a join's "
        "part has none there: the memtile moves 'o0' through the buffers of the join into "
        "'res'\n"
        "  limit: a memtile link's buffers are one end's: a join's output, a split's input, a "
        "forward's larger side (its input on a tie) (mlir-aie's createObjectFifoElements; "
        "createMemTileDMA moves the other ends through them)\n"
        "  found: consumer depth 4 at the memtile; 'res' has 2 there\n"
        "  d.py:11: the join\n"
        "  fix: give the join into 'res' depth=4 and drop the consumer_depth of the memtile "
        "end of 'o0'")
    fixed = design_file(JOIN.replace("CDEP", "").replace("JDEP", ", depth=4"), "fixed.py")
    placed, table = check_design(load_design(fixed).ir)
    assert [u.label for u in table[(0, 1)].memory] == ["big 2 x 2048 B", "res 4 x 2048 B"]
    result = simulate(load_design(fixed))
    assert result.passed and np.array_equal(result.outputs["out"], result.inputs["inp"])


CDEP = '''
    from aiedsl import Tensor, define, design, fifo, herd, i32, loop, runtime
    from aiedsl.kernels import passthrough

    N = 8192
    OT = define("OT", 2048)
    MD = define("MD", 6)
    OD = define("OD", 2)

    @design(device="npu1_1col")
    def d(inp: Tensor[N, i32], out: Tensor[N, i32]):
        to_mem = fifo(Tensor[1024, i32], name="in_l3", depth=2, consumer_depth={"memtile": MD})
        to_core = to_mem.forward(Tensor[OT, i32], name="in_l1", depth=OD)
        from_core = fifo(Tensor[OT, i32], name="out_l1")
        from_mem = from_core.forward(name="out_l3")
        copy = passthrough(Tensor[OT, i32])

        @herd()
        def core():
            for _ in loop(N // OT):
                with to_core.consume() as src, from_core.produce() as dst:
                    copy(src, dst)

        with runtime() as rt:
            rt.fill(to_mem, inp)
            rt.drain(from_mem, out, wait=True)

    @d.reference
    def reference(inp):
        return inp.copy()
    '''


def test_a_memtile_depth_for_a_forwards_smaller_input_is_refused(design_file: DesignFile
                                                                 ) -> None:
    """Forwarding 1024-element elements into 2048-element ones keeps the buffers at the output:
    the input's memtile depth counted nowhere. Following the fix gives the memtile 6 buffers
    (the core's end keeps 2); with equal elements the input's memtile depth is the one that
    counts, and passes."""
    path = design_file(CDEP)
    assert check_error(path) == (
        "d.py:11: error [fifo depth]: fifo 'in_l3' gives its memtile end 6 buffers, but the "
        "input of a forward to larger elements has none there: the memtile moves 'in_l3' (1024 "
        "elements) through the buffers of 'in_l1' (2048 elements)\n"
        "  limit: a memtile link's buffers are one end's: a join's output, a split's input, a "
        "forward's larger side (its input on a tie) (mlir-aie's createObjectFifoElements; "
        "createMemTileDMA moves the other ends through them)\n"
        "  found: consumer depth 6 at the memtile; 'in_l1' has 2 there\n"
        "  d.py:12: the forward\n"
        "  fix: give the forward into 'in_l1' depth=6 and drop the consumer_depth of the "
        "memtile end of 'in_l3'")
    fixed = {"MD": "2", "OD": "6"}
    _, table = check_design(load_design(path, fixed).ir)
    assert [u.label for u in table[(0, 1)].memory][0] == "in_l1 6 x 8192 B"
    assert [u.label for u in table[(0, 2)].memory][1] == (
        "in_l1 2 x 8192 B (depth=6: across a DMA a core's end gets one more than the most it "
        "acquires at once)")
    result = simulate(load_design(path, fixed))
    assert result.passed and np.array_equal(result.outputs["out"], result.inputs["inp"])
    _, table = check_design(load_design(path, {"OT": "1024"}).ir)
    assert [u.label for u in table[(0, 1)].memory][0] == "in_l3 6 x 4096 B"


def test_an_out_of_range_pin_names_a_split_once(design_file: DesignFile) -> None:
    """It listed the parts as if each were split: "split of 'big', 'big_0', 'big_1'"."""
    path = design_file(JOIN.replace("big.split(2)", "big.split(2, via=memtile(5))")
                       .replace("CDEP", "").replace("JDEP", "")
                       .replace("import Tensor,", "import Tensor, memtile,"))
    assert check_error(path) == (
        "d.py:9: error [placement]: split of 'big' is pinned to tile (5, 1), which is not a "
        "memtile of npu1_1col\n"
        "  limit: memtiles in column 0, row 1\n"
        "  found: tile (5, 1)\n"
        "  fix: pin column 0")


SPLIT_JOIN = """
        import numpy as np
        from aiedsl import Tensor, design, fifo, herd, i32, join, loop, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def sj(A: Tensor[8192, i32], B: Tensor[8192, i32]):
            a_l2 = fifo(Tensor[2048, i32], depth=7)
            a_l1 = a_l2.split(4, depth=1)
            b_l1 = [fifo(Tensor[512, i32], name=f"b{i}", depth=1) for i in range(4)]
            b_l2 = join(b_l1, depth=JOIN_DEPTH)
            copy = passthrough(Tensor[512, i32])

            @herd(rows=4)
            def core(x, y):
                for _ in loop(4):
                    with a_l1[y].consume() as s, b_l1[y].produce() as d:
                        copy(s, d)

            with runtime() as rt:
                rt.fill(a_l2, A)
                rt.drain(b_l2, B)
        """
"""A split of a 7-buffer memtile fifo into four cores beside a join of JOIN_DEPTH buffers
back, on one memtile: together over its even channels' 24 BDs."""


def rewrite(path: Path, old: str, new: str) -> Path:
    """``path``'s design with ``old`` replaced by ``new`` (once), written back; ``path``."""
    path.write_text(path.read_text().replace(old, new, 1))
    return path


def test_one_link_over_a_bd_pool_by_itself_is_not_sent_to_a_larger_device(
        design_file: DesignFile) -> None:
    """(a tester) A split whose memtile end holds 7 buffers takes 42 of the even channels' 24
    BDs by itself; beside a join on the same memtile, the error said "use a device with more
    memtiles" (no device has more BDs a channel) at the join's line. It is said at the split,
    with the depth that fits beside the join's BDs (an IRON user's tester: the depth that fitted
    the pool alone, 4, failed again)."""
    from aiedsl.errors import DesignError

    path = design_file(SPLIT_JOIN.replace("JOIN_DEPTH", "1"))
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(path).ir)
    e = excinfo.value
    assert e.loc is not None and e.loc.line == 8  # the split, not the join (line 10)
    assert e.fix == (
        "one link needs more than the 24 by itself ('a_l2' and 'a_l2_0' and 'a_l2_2'), so no "
        "other memtile or device would help: lower the depth of 'a_l2' (depth=3) or give its "
        "memtile end consumer_depth={\"memtile\": 3} (d.py:7; 7 buffers now, each taking 6 of "
        "the 24 BDs, beside the 6 of 'b1' and 'b3' and 'b_l2')")
    with pytest.raises(DesignError) as excinfo:  # over only beside the join: said so too
        check_design(load_design(rewrite(path, "depth=7", "depth=4")).ir)
    assert excinfo.value.fix == (
        "lower fifo depths, or use a device with more memtiles than npu1_1col; here, for "
        "example: lower the depth of 'a_l2' (depth=3) or give its memtile end consumer_depth="
        "{\"memtile\": 3} (d.py:7; 4 buffers now, each taking 6 of the 24 BDs, beside the 6 of "
        "'b1' and 'b3' and 'b_l2')")
    check_design(load_design(rewrite(path, "depth=4", "depth=3")).ir)


def test_links_that_fill_the_bd_pool_between_them_are_told_to_shrink_both(
        design_file: DesignFile) -> None:
    """(a reviewer) A join taking all 24 BDs beside a split that needs 42: no depth of the split
    fits, and the fix said only "lower the depth the link has here"."""
    path = design_file(SPLIT_JOIN.replace("JOIN_DEPTH", "4"))
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(path).ir)
    assert excinfo.value.fix == (  # (the join's own depth, not its parts': a reviewer)
        "one link needs more than the 24 by itself ('a_l2' and 'a_l2_0' and 'a_l2_2'), so no "
        "other memtile or device would help: lower the depth of 'a_l2' (depth=2) or give its "
        "memtile end consumer_depth={\"memtile\": 2}, and give the join that makes 'b_l2' "
        "depth=2: 24 of the 24 BDs together (7 and 4 buffers now, taking 6 and 6 BDs each)")
    check_design(load_design(rewrite(rewrite(path, "depth=7", "depth=2"), "depth=4)",
                                     "depth=2)")).ir)


def test_a_link_over_its_bds_counts_the_buffers_spilled_to_a_neighbour(
        design_file: DesignFile) -> None:
    """(an npu2 tester) 40 buffers of 16 KB, some of them in a neighbour's memory, take 80 BDs of
    (0, 1)'s even channels, 2 each: the fix counted only the buffers in (0, 1)'s own memory
    (at depth=63 it then said 3 BDs each and depth=8; depth=12 fits, and passes)."""
    text = '''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1")
        def big(inp: Tensor[32768, i32], out: Tensor[32768, i32]):
            to_mem = fifo(Tensor[4096, i32], name="in_l3", depth=DEPTH)
            to_core = to_mem.forward(name="in_l1", depth=1)
            from_core = fifo(Tensor[4096, i32], name="out_l1", depth=1)
            from_mem = from_core.forward(name="out_l3")
            copy = passthrough(Tensor[4096, i32])

            @herd()
            def core():
                for _ in loop(8):
                    with to_core.consume() as src, from_core.produce() as dst:
                        copy(src, dst)

            with runtime() as rt:
                rt.fill(to_mem, inp)
                rt.drain(from_mem, out)
        '''
    with pytest.raises(DesignError) as e:
        check_design(load_design(design_file(text.replace("DEPTH", "40"))).ir)
    assert str(e.value).splitlines()[-1] == (
        "  fix: one link takes them all ('in_l3' and 'in_l1'), so another memtile would not "
        "help: lower the depth of 'in_l3' (depth=12) or give its memtile end consumer_depth="
        "{\"memtile\": 12} (d.py:6; 40 buffers now, each taking 2 of the 24 BDs)")
    check_design(load_design(design_file(text.replace("DEPTH", "12"))).ir)


# A reviewer's find: the placer counted a memtile's even and odd channels by creation order,
# while mlir-aie's lowering numbers the ends of a link whose buffer spilled to a neighbour
# first. Here in0 -> in1 spills (375 KB of 512) and takes channel 0, the depth-12 xs -> x2
# channel 1: even 8 BDs, odd 24 (fits). Counted by creation order, even held 28, and the
# pinned design was refused, naming x2.
SPILLED_FIRST = '''
    import numpy as np
    from aiedsl import Tensor, define, design, fifo, herd, i32, loop, memtile, runtime
    from aiedsl.kernels import add

    L2, T, XD = 96000, 960, define("XD", 12)

    @design(device="npu1_2col")
    def parity(x: Tensor[T, i32], inp: Tensor[L2, i32], out: Tensor[L2, i32]):
        xs = fifo(Tensor[T, i32], name="xs", depth=XD)
        x2 = xs.forward(name="x2", depth=XD, consumer_depth=2, via=memtile(0))
        a = fifo(Tensor[L2, i32], name="in0", depth=2)
        b = a.forward(Tensor[T, i32], name="in1", via=memtile(0))
        c = fifo(Tensor[T, i32], name="out1")
        d = c.forward(name="out0", via=memtile(0))
        add_k = add(Tensor[T, i32])

        @herd()
        def core():
            with x2.consume() as xv:
                for _ in loop(L2 // T):
                    with b.consume() as s, c.produce() as t:
                        add_k(s, xv, t)

        with runtime() as rt:
            rt.fill(xs, x)
            rt.fill(a, inp)
            rt.drain(d, out, wait=True)

    @parity.reference
    def reference(x, inp):
        return inp + np.tile(x, L2 // T)
'''


def test_bds_per_parity_count_a_spilled_links_ends_first(design_file: DesignFile) -> None:
    from aiedsl.checks.tile_usage import TileUsage
    from aiedsl.place.memtiles import demands, parity_shares
    from aiedsl.place.objectfifo import lower
    from aiedsl.targets import get_target

    path = design_file(SPILLED_FIRST)
    placed, table = check_design(load_design(path).ir)
    usage = table[(0, 1)]
    assert [TileUsage.total(usage.bds_by_parity[k]) for k in (0, 1)] == [8, 24]
    need = demands(placed, lower(placed, get_target(placed.device)))
    columns = [link.tile[0] for link in placed.links if link.tile is not None]
    shares = parity_shares(columns, need, get_target(placed.device))
    assert [sum(s[k] for s in shares) for k in (0, 1)] == [8, 24]
    x = np.arange(960, dtype=np.int32)
    assert simulate(load_design(path), {"x": x, "inp": np.arange(96000, dtype=np.int32)}).passed
    # one more buffer each in xs and x2 overflows the odd channels, their own
    assert check_error(path, {"XD": "13"}).splitlines()[:3] == [
        "d.py:10: error [memtile buffer descriptors of odd channels]: memtile (0, 1) needs "
        "more buffer descriptors of odd channels than it has",
        "  limit: 24 (BDs 24-47)",
        "  found: 26"]
