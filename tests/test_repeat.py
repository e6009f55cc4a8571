"""Repeated fifos (``repeat=``, mlir-aie's objectfifo ``repeat_count``): MLIR-AIR's L2 reuse,
where a memtile sends one L2 buffer to a core several times without reading DRAM again.

What is emitted (the attribute), the lowering plan as mlir-aie 1e400306 makes it (BDs, locks:
the chains of its ``test/objectFifo-stateful-transform/repeat_count/`` tests), the simulator
(each receiver gets every element ``repeat`` times in a row, and the sender's channel moves each
copy), the balance rule, and the refusals, word for word.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from aiedsl.checks import check_design
from aiedsl.codegen.mlir import render_mlir
from aiedsl.emit import generate
from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.ir.sequence import shim_bd_ids
from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.targets import get_target
from mlir_facts import parse_facts

DesignFile = Callable[..., Path]

# a memtile reuses each L2 tile REUSE times for one core (MLIR-AIR's put in a loop over one L2
# buffer); the core copies what it gets, so the output is every tile REUSE times in a row
L2_REUSE = '''
    import numpy as np
    from aiedsl import Tensor, define, design, fifo, herd, i32, loop, runtime
    from aiedsl.kernels import passthrough

    N = 1024
    REUSE = define("REUSE", 2)
    TILES = define("TILES", 2)
    DEPTH = define("DEPTH", 2)
    TAKES = define("TAKES", 2)

    @design(device="npu1_1col")
    def d(a: Tensor[TILES * N, i32], b: Tensor[TAKES * TILES * N, i32]):
        l2 = fifo(Tensor[N, i32], name="l2", depth=DEPTH)
        l1 = l2.forward(name="l1", repeat=REUSE)
        out = fifo(Tensor[N, i32], name="out")
        cp = passthrough(Tensor[N, i32])

        @herd()
        def core():
            for _ in loop(TILES * TAKES):
                with l1.consume() as s, out.produce() as t:
                    cp(s, t)

        with runtime() as rt:
            rt.fill(l2, a)
            rt.drain(out, b, wait=True)

    @d.reference
    def reference(a):
        return np.repeat(a.reshape(TILES, N), REUSE, axis=0).reshape(-1)
'''


def _check(path: Path, defines: dict[str, object] | None = None) -> Design:
    placed, _ = check_design(load_design(path, defines).ir)
    return placed


def _error(path: Path, defines: dict[str, object] | None = None) -> str:
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(path, defines).ir)
    return str(excinfo.value)


def _load_error(path: Path, defines: dict[str, object] | None = None) -> str:
    with pytest.raises(DesignError) as excinfo:
        load_design(path, defines)
    return str(excinfo.value)


# -- what is emitted ---------------------------------------------------------------------------

def test_the_forward_carries_repeat_count(design_file: DesignFile) -> None:
    placed = _check(design_file(L2_REUSE), {"REUSE": 3, "TAKES": 3})
    text = render_mlir(placed, get_target(placed.device))
    assert ('    aie.objectfifo @l1(%tile_0_1, {%tile_0_2}, 2 : i32) {repeat_count = 3 : i32} '
            ': !aie.objectfifo<memref<1024xi32>> loc("d.py":14:0)\n') in text
    # the fifo the runtime fills carries none
    assert ('    aie.objectfifo @l2(%tile_0_0, {%tile_0_1}, 2 : i32) : '
            '!aie.objectfifo<memref<1024xi32>> loc("d.py":13:0)\n') in text
    facts = {f.producer: f for f in parse_facts(text).fifos}
    assert facts[(0, 1)].attrs == (("repeat_count", "3"),)


def test_a_fifo_sent_once_is_emitted_and_recorded_as_before(design_file: DesignFile) -> None:
    """repeat=1 is no attribute and no field of design.json (the designs' outputs keep their
    bytes); a repeated fifo's design.json records it and reads back."""
    once = generate(load_design(design_file(L2_REUSE), {"REUSE": 1, "TAKES": 1}))
    assert "repeat_count" not in once.files["aie.mlir"]
    assert '"repeat"' not in once.files["design.json"]
    twice = generate(load_design(design_file(L2_REUSE)))
    fifos = {f["name"]: f for f in json.loads(twice.files["design.json"])["fifos"]}
    assert fifos["l1"]["repeat"] == 2 and "repeat" not in fifos["l2"]
    again = Design.model_validate_json(twice.files["design.json"])
    assert [f.repeat for f in again.fifos] == [1, 2, 1]


def test_the_report_says_each_element_is_sent_n_times(design_file: DesignFile) -> None:
    report = generate(load_design(design_file(L2_REUSE), {"REUSE": 3, "TAKES": 3})
                      ).files["report.txt"]
    assert ("  l1: 1024xi32 depth 2, memtile (0, 1) -> core[0,0] (0, 2), each element sent 3 "
            "times (repeat_count)\n") in report
    assert "  (0,1) S2MM 0 l2 (BDs 0-1), MM2S 0 l1 (BDs 2-7); 2 locks\n" in report


# -- the lowering plan: mlir-aie 1e400306's -------------------------------------------------------

Bd = tuple[str, int, int, "tuple[str, int] | None", "tuple[str, int] | None"]


def _chains(d: Design, tile: tuple[int, int]) -> dict[str, list[Bd]]:
    """Each channel of ``tile`` with its BDs: (buffer, offset, length, acquire, release)."""
    assert d.physical is not None
    return {f"{c.direction} {c.channel} {c.fifo}": [
        (b.buffer, b.offset, b.length, b.acquire, b.release) for b in c.chain]
        for c in d.physical.channels if c.tile == tile and c.chain}


def test_a_repeated_forward_lowers_as_mlir_aie_does(design_file: DesignFile) -> None:
    """link_repeat_count_test's memtile: the sending channel chains each buffer's BD repeat
    times (each taking and giving 1), the receiving channel takes and gives repeat per BD, and
    the producer lock starts at buffers x repeat."""
    d = _check(design_file(L2_REUSE), {"REUSE": 3, "TAKES": 3})
    buf0, buf1 = "l2_cons_buff_0", "l2_cons_buff_1"
    prod, cons = "l2_cons_prod_lock_0", "l2_cons_cons_lock_0"
    assert _chains(d, (0, 1)) == {
        "S2MM 0 l2": [(b, 0, 1024, (prod, 3), (cons, 3)) for b in (buf0, buf1)],
        "MM2S 0 l1": [(b, 0, 1024, (cons, 1), (prod, 1)) for b in (buf0, buf1) for _ in range(3)],
    }
    assert d.physical is not None
    assert [(lk.name, lk.init) for lk in d.physical.locks if lk.tile == (0, 1)] == [
        (prod, 6), (cons, 0)]
    # the core's end is a plain fifo end: its own buffers, locks from its depth
    assert [(lk.name, lk.init) for lk in d.physical.locks if lk.fifo == "l1"] == [
        ("l1_cons_prod_lock_0", 2), ("l1_cons_cons_lock_0", 0)]


SPLIT = '''
    import numpy as np
    from aiedsl import Tensor, define, design, fifo, herd, i32, join, loop, runtime
    from aiedsl.kernels import passthrough

    N = 512
    REUSE = define("REUSE", 3)

    @design(device="npu1_1col")
    def d(a: Tensor[4 * N, i32], b: Tensor[REUSE * 4 * N, i32]):
        l2 = fifo(Tensor[2 * N, i32], name="l2")
        p0, p1 = l2.split(2, names=["p0", "p1"], repeat=REUSE)
        o0 = fifo(Tensor[N, i32], name="o0")
        o1 = fifo(Tensor[N, i32], name="o1")
        out = join([o0, o1], name="out")
        cp = passthrough(Tensor[N, i32])

        @herd(rows=2)
        def core(x, y):
            src, dst = (p0, o0) if y == 0 else (p1, o1)
            for _ in loop(2 * REUSE):
                with src.consume() as s, dst.produce() as t:
                    cp(s, t)

        with runtime() as rt:
            rt.fill(l2, a)
            rt.drain(out, b, wait=True)

    @d.reference
    def reference(a):
        return np.repeat(a.reshape(2, 2 * N), REUSE, axis=0).reshape(-1)
'''


def test_a_repeated_split_lowers_as_mlir_aie_does(design_file: DesignFile) -> None:
    """link_distribute_repeat_count_test: each part's lock pair starts at buffers x repeat, the
    input's BDs take and give repeat per part, each output chains its part repeat times per
    buffer; every part is emitted with the repeat (the link takes the first output's)."""
    d = _check(design_file(SPLIT))
    text = render_mlir(d, get_target(d.device))
    for part, tile in (("p0", 2), ("p1", 3)):
        assert (f"aie.objectfifo @{part}(%tile_0_1, {{%tile_0_{tile}}}, 2 : i32) "
                "{repeat_count = 3 : i32} : !aie.objectfifo<memref<512xi32>>") in text
    b0, b1 = "l2_cons_buff_0", "l2_cons_buff_1"
    lk = [(f"l2_cons_prod_lock_{k}", f"l2_cons_cons_lock_{k}") for k in (0, 1)]
    chains = _chains(d, (0, 1))
    assert chains["S2MM 0 l2"] == [(b, off, 512, (lk[k][0], 3), (lk[k][1], 3))
                                   for b in (b0, b1) for k, off in ((0, 0), (1, 512))]
    assert chains["MM2S 0 p0"] == [(b, 0, 512, (lk[0][1], 1), (lk[0][0], 1))
                                   for b in (b0, b1) for _ in range(3)]
    assert chains["MM2S 1 p1"] == [(b, 512, 512, (lk[1][1], 1), (lk[1][0], 1))
                                   for b in (b0, b1) for _ in range(3)]
    assert d.physical is not None
    assert [(x.name, x.init) for x in d.physical.locks if x.fifo == "l2" and x.tile == (0, 1)
            ] == [(lk[0][0], 6), (lk[0][1], 0), (lk[1][0], 6), (lk[1][1], 0)]


# -- the simulator -----------------------------------------------------------------------------

def test_a_memtile_reuses_each_l2_tile_for_a_core(design_file: DesignFile) -> None:
    """Each receiver gets every element repeat times in a row: the output equals numpy's."""
    for defines in ({}, {"REUSE": 3, "TAKES": 3, "TILES": 4}, {"DEPTH": 1, "TILES": 3}):
        d = load_design(design_file(L2_REUSE), defines)
        a = np.arange(d.ir.tensor("a").type.numel, dtype=np.int32)
        result = simulate(d, {"a": a})
        assert result.passed, defines
        reuse = int(defines.get("REUSE", 2))
        assert np.array_equal(result.outputs["b"], np.repeat(a.reshape(-1, 1024), reuse, axis=0)
                              .reshape(-1))


def test_the_sending_channel_moves_every_copy(design_file: DesignFile) -> None:
    """Timing counts the n transfers: the memtile's channel moves 4096 bytes per copy at 4 bytes
    a cycle, 2 tiles x repeat copies."""
    moved = []
    for reuse in (1, 2, 3):
        t = simulate(load_design(design_file(L2_REUSE), {"REUSE": reuse, "TAKES": reuse})
                     ).timing
        moved.append(round(t.channel_moving["memtile (0, 1) forward -> l1"] * t.device_cycles))
    assert moved == [2 * 1024, 2 * 2 * 1024, 3 * 2 * 1024]


def test_a_repeated_split_broadcasts_nothing_but_repeats_each_part(design_file: DesignFile
                                                                    ) -> None:
    assert simulate(load_design(design_file(SPLIT))).passed


REGROUP = '''
    import numpy as np
    from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
    from aiedsl.kernels import passthrough

    @design(device="npu1_1col")
    def d(a: Tensor[4096, i32], b: Tensor[8192, i32]):
        l2 = fifo(Tensor[2048, i32], name="l2")
        l1 = l2.forward(Tensor[1024, i32], name="l1", repeat=2)
        out = fifo(Tensor[1024, i32], name="out")
        cp = passthrough(Tensor[1024, i32])

        @herd()
        def core():
            for _ in loop(8):
                with l1.consume() as s, out.produce() as t:
                    cp(s, t)

        with runtime() as rt:
            rt.fill(l2, a)
            rt.drain(out, b, wait=True)
'''


def test_a_regrouping_forward_repeats_the_memtile_buffer(design_file: DesignFile) -> None:
    """The memtile's buffers hold the larger element (the forward's input here), and mlir-aie
    repeats each BD, which moves a whole buffer: the core gets halves h0 h1 h0 h1, not h0 h0."""
    d = load_design(design_file(REGROUP))
    a = np.arange(4096, dtype=np.int32)
    got = simulate(d, {"a": a}, check=False).outputs["b"]
    assert np.array_equal(got, np.tile(a.reshape(2, 1, 2048), (1, 2, 1)).reshape(-1))


def test_fills_are_retired_by_what_the_copies_prove(design_file: DesignFile) -> None:
    """Drains waited for prove what the core took of the repeated fifo; the memtile received
    only that over the repeat. Two drains of one copy each prove one L2 element, not two: the
    fill of two elements still holds its shim BD, so the next fill takes another id."""
    batches = '''
            rt.fill(l2, a, (0, [1, 1, 1, 2048], [0, 0, 0, 1]))
            rt.drain(out, b, (0, [1, 1, 1, 2048], [0, 0, 0, 1]), wait=True)
            rt.sync()
            rt.fill(l2, a, (2048, [1, 1, 1, 2048], [0, 0, 0, 1]))
            rt.drain(out, b, (2048, [1, 1, 1, 6144], [0, 0, 0, 1]), wait=True)'''
    src = L2_REUSE.replace('''
            rt.fill(l2, a)
            rt.drain(out, b, wait=True)''', batches)
    path = design_file(src)
    ids = shim_bd_ids(_check(path, {"TILES": 4}))
    assert [ids[i] for i in sorted(ids)] == [0, 1, 1, 2]
    assert simulate(load_design(path, {"TILES": 4})).passed


# -- balance -----------------------------------------------------------------------------------

def test_a_consumer_taking_the_unrepeated_count_is_refused(design_file: DesignFile) -> None:
    assert _error(design_file(L2_REUSE), {"TAKES": 1}) == (
        "d.py:21: error [balance]: fifo 'l1': the memtile forwards 2 element(s) per run and "
        "sends each 2 times (repeat=2): 4 in all, but core[0,0] takes 2\n"
        "  limit: every consumer takes exactly 4\n"
        "  found: 2\n"
        "  d.py:14: produced here\n"
        "  d.py:25: rt.fill of 'l2' from 'a'\n"
        "  fix: make loop counts and fill/drain sizes agree (each element 1024xi32); a mismatch "
        "hangs on the NPU. With repeat=2 every element arrives 2 times in a row: take 2 times "
        "as many (a `for _ in loop(2):` around the consume), or leave repeat out"
    )


def test_a_core_taking_each_element_again_is_told_to_repeat(design_file: DesignFile) -> None:
    """MLIR-AIR's L2 reuse without repeat=: the core takes each tile twice and the memtile sends
    it once. The fix named only loop counts and fill sizes (a tester's finding); it now names
    the repeat that makes the memtile send it twice, and with it the design runs."""
    path = design_file(L2_REUSE)
    assert _error(path, {"REUSE": 1}) == (
        "d.py:21: error [balance]: fifo 'l1': the memtile forwards 2 element(s) per run, but "
        "core[0,0] takes 4\n"
        "  limit: every consumer takes exactly 2\n"
        "  found: 4\n"
        "  d.py:14: produced here\n"
        "  d.py:25: rt.fill of 'l2' from 'a'\n"
        "  fix: make loop counts and fill/drain sizes agree (each element 1024xi32); a mismatch "
        "hangs on the NPU. If the core takes each element 2 times in a row (data reused from "
        "the memtile), give the forward that makes 'l1' repeat=2: the memtile then sends each "
        "one 2 times"
    )
    assert simulate(load_design(path, {"REUSE": 2})).passed


def test_a_drain_of_a_repeated_fifo_takes_every_copy(design_file: DesignFile) -> None:
    """A memtile sending to the host repeats too (mlir-aie allows repeat_count on a fifo into
    a shim); the drain must take every copy."""
    src = '''
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def d(a: Tensor[2048, i32], b: Tensor[2048, i32]):
            l1 = fifo(Tensor[1024, i32], name="l1")
            out = fifo(Tensor[1024, i32], name="out")
            host = out.forward(name="host", repeat=3)
            cp = passthrough(Tensor[1024, i32])

            @herd()
            def core():
                for _ in loop(2):
                    with l1.consume() as s, out.produce() as t:
                        cp(s, t)

            with runtime() as rt:
                rt.fill(l1, a)
                rt.drain(host, b, wait=True)
    '''
    assert _error(design_file(src)) == (
        "d.py:19: error [balance]: fifo 'host': the memtile forwards 2 element(s) per run and "
        "sends each 3 times (repeat=3): 6 in all, but the runtime (rt.drain) takes 2\n"
        "  limit: every consumer takes exactly 6\n"
        "  found: 2\n"
        "  d.py:8: produced here\n"
        "  fix: make loop counts and fill/drain sizes agree (each element 1024xi32); a mismatch "
        "hangs on the NPU. With repeat=3 every element arrives 3 times in a row: drain 3 times "
        "as many, or leave repeat out"
    )


# -- what mlir-aie refuses, or cannot lower ----------------------------------------------------

ONE_CORE = '''
    from aiedsl import Tensor, channel, coretile, design, fifo, herd, i32, join, loop, memtile
    from aiedsl import runtime
    from aiedsl.kernels import passthrough

    @design(device="npu1_1col")
    def d(a: Tensor[2048, i32], b: Tensor[2048, i32]):
        {decl}
        cp = passthrough(Tensor[1024, i32])

        @herd()
        def core():
            for _ in loop(2):
                with l1.consume() as s, o.produce() as t:
                    cp(s, t)

        with runtime() as rt:
            rt.fill({filled}, a)
            rt.drain(out, b, wait=True)
'''


def _one_core(design_file: DesignFile, decl: str, filled: str = "l1") -> Path:
    return design_file(ONE_CORE.format(decl=decl.replace("\n", "\n        "), filled=filled))


def test_a_fifo_the_runtime_fills_cannot_repeat(design_file: DesignFile) -> None:
    path = _one_core(design_file, 'l1 = fifo(Tensor[1024, i32], name="l1", repeat=2)\n'
                     'o = out = fifo(Tensor[1024, i32], name="out")')
    assert _error(path) == (
        "d.py:7: error [repeat]: fifo 'l1' has repeat=2, but the runtime fills it: its producer "
        "is the shim\n"
        "  limit: repeat on a fifo a memtile sends (a forward's or a split's output, a channel's "
        "with via=memtile), or a core tile's forward (mlir-aie's ObjectFifoCreateOp::verify: "
        "\"`repeat_count` unavailable for shim tiles\")\n"
        "  found: producer: shim\n"
        "  d.py:18: the runtime fills it here\n"
        "  fix: fill another fifo and forward it through a memtile with the repeat (l1 = "
        "l1_l3.forward(repeat=2), rt.fill(l1_l3, ...)): the memtile reads each element from "
        "DRAM once and sends it 2 times"
    )


def test_a_filled_fifo_forwarded_on_is_told_to_repeat_the_forward(design_file: DesignFile
                                                                     ) -> None:
    path = _one_core(design_file, 'l2 = fifo(Tensor[1024, i32], name="l2", repeat=2)\n'
                     'l1 = l2.forward(name="l1")\n'
                     'o = out = fifo(Tensor[1024, i32], name="out")', filled="l2")
    assert _error(path).splitlines()[-1] == (
        "  fix: put the repeat on the forward that sends it on from the memtile (line 8): "
        "l2.forward(..., repeat=2): the memtile reads each element from DRAM once and sends it "
        "2 times")


def test_a_channel_without_a_memtile_cannot_repeat(design_file: DesignFile) -> None:
    path = _one_core(design_file, 'c = channel(Tensor[1024, i32], shape=[1], repeat=2)\n'
                     'l1 = c[0]\n'
                     'o = out = fifo(Tensor[1024, i32], name="out")', filled="c[0]")
    assert _error(path) == (
        "d.py:7: error [repeat]: fifo 'c_0' has repeat=2, but the runtime fills it: its producer "
        "is the shim\n"
        "  limit: repeat on a fifo a memtile sends (a forward's or a split's output, a channel's "
        "with via=memtile), or a core tile's forward (mlir-aie's ObjectFifoCreateOp::verify: "
        "\"`repeat_count` unavailable for shim tiles\")\n"
        "  found: producer: shim\n"
        "  d.py:19: the runtime fills it here\n"
        "  fix: give channel 'c' via=memtile: the memtile reads each element from DRAM once and "
        "sends it 2 times"
    )


def test_a_fifo_a_core_produces_is_not_repeated(design_file: DesignFile) -> None:
    path = _one_core(design_file, 'l1 = fifo(Tensor[1024, i32], name="l1")\n'
                     'o = out = fifo(Tensor[1024, i32], name="out", repeat=2)')
    assert _error(path) == (
        "d.py:8: error [repeat]: fifo 'out' has repeat=2, but core[0,0] produces it\n"
        "  limit: repeat on a fifo a memtile sends (a forward's or a split's output, a channel's "
        "with via=memtile), or a core tile's forward: mlir-aie repeats a core's element by "
        "multiplying the core's lock acquires and releases by the repeat, and records repeat "
        "buffers held per element acquired where a release frees one, so a second acquire of "
        "the fifo (or a copy the lowering's loop unrolling makes) takes no lock\n"
        "  found: producer: core[0,0]\n"
        "  d.py:14: core[0,0] produces it here\n"
        "  fix: forward it through a memtile and repeat there: out_l2 = out.forward(repeat=2), "
        "consumed instead of 'out'"
    )


def test_a_join_of_parts_cannot_repeat(design_file: DesignFile) -> None:
    path = _one_core(design_file, 'l1 = fifo(Tensor[1024, i32], name="l1")\n'
                     'o = fifo(Tensor[512, i32], name="o")\n'
                     'o2 = fifo(Tensor[512, i32], name="o2")\n'
                     'out = join([o, o2], name="out", repeat=2)')
    text = path.read_text()  # the core fills both parts, half of its input each
    path.write_text(text.replace("cp = passthrough(Tensor[1024, i32])",
                                 "cp = passthrough(Tensor[512, i32])").replace(
        "with l1.consume() as s, o.produce() as t:\n                cp(s, t)",
        "with l1.consume(), o.produce() as t, o2.produce() as u:\n"
        "                cp(t, u)"))
    assert _error(path) == (
        "d.py:10: error [repeat]: the join into 'out' has repeat=2\n"
        "  limit: repeat on a forward or a split: mlir-aie lowers a repeated join's output to "
        "repeat x parts BDs and takes each one's offset from the link's 2 part offsets by that "
        "count (createMemTileDMA), past their end\n"
        "  found: repeat=2 on a join of 2 parts\n"
        "  fix: leave repeat out of the join (a joined fifo takes part in no second link): "
        "repeat where a memtile forwards or splits"
    )


@pytest.mark.parametrize("into, out", [(512, 1024), (1024, 512)])
def test_a_repeated_core_tile_forward_that_changes_its_element_is_refused(
        design_file: DesignFile, into: int, out: int) -> None:
    """A repeat once passed here when the output element was the smaller: mlir-aie's
    createAIETileDMA gives each end its own element's length, so a core tile's forward must
    keep its element whatever the repeat (tests/test_core_tile_link.py has the whole text)."""
    path = _one_core(design_file, f'l3 = fifo(Tensor[{into}, i32], name="l3")\n'
                     f'l1 = l3.forward(Tensor[{out}, i32], via=coretile, name="l1", repeat=2)\n'
                     'o = out = fifo(Tensor[1024, i32], name="out")', filled="l3")
    assert _error(path).splitlines()[0] == (
        "d.py:8: error [core tile forward]: forward 'l3' -> 'l1' through a core tile changes the "
        f"element size: {into}xi32 in, {out}xi32 out")


def test_a_core_tile_forward_of_equal_elements_repeats(design_file: DesignFile) -> None:
    path = _one_core(design_file, 'l3 = fifo(Tensor[1024, i32], name="l3")\n'
                     'l1 = l3.forward(via=coretile, name="l1", repeat=2)\n'
                     'o = out = fifo(Tensor[1024, i32], name="out")', filled="l3")
    text = path.read_text().replace("loop(2)", "loop(4)").replace("Tensor[2048, i32]):",
                                                                  "Tensor[4096, i32]):")
    path.write_text(text.replace("b: Tensor[2048, i32]", "b: Tensor[4096, i32]"))
    d = load_design(path)
    a = np.arange(2048, dtype=np.int32)
    result = simulate(d, {"a": a}, check=False)
    assert np.array_equal(result.outputs["b"], np.repeat(a.reshape(2, 1024), 2, axis=0)
                          .reshape(-1))


def test_the_producer_lock_counts_to_63(design_file: DesignFile) -> None:
    assert _error(design_file(L2_REUSE), {"DEPTH": 3, "REUSE": 22, "TAKES": 22}) == (
        "d.py:14: error [repeat]: 'l1' has repeat=22 over 3 buffer(s) of the memtile: its "
        "producer lock would start at 3 x 22 = 66\n"
        "  limit: 63: a lock counts to 63 (AIE2 lock values are 6 bits: mlir-aie's "
        "getMaxLockValue; its lowering does not check the initial value, and the device would "
        "keep its low bits and hang)\n"
        "  found: 66\n"
        "  fix: lower repeat to at most 21, or the link's depth"
    )


def test_bds_of_a_repeated_fifo_count_and_the_fix_says_so(design_file: DesignFile) -> None:
    """1e400306 chains each BD repeat times: 2 buffers x 13 on the memtile's even channels,
    with the input's 2, pass its 24."""
    assert _error(design_file(L2_REUSE), {"REUSE": 13, "TAKES": 13}) == (
        "d.py:14: error [memtile buffer descriptors of even channels]: memtile (0, 1) needs "
        "more buffer descriptors of even channels than it has\n"
        "  limit: 24 (BDs 0-23)\n"
        "  found: 28\n"
        "  d.py:14: l2: 2\n"
        "  d.py:14: l1: 26\n"
        "  fix: one link takes them all ('l2' and 'l1'), so another memtile would not help: "
        "lower the depth the link has here; 'l1' (repeat=13) takes 2 buffer(s) x 13 BDs "
        "(mlir-aie 1e400306, whose lowering aiedsl plans by, chains each buffer's BD that many "
        "times): repeat=11 or less fits beside the other BDs here; with one buffer at the "
        "memtile, repeat=22 or less (mlir-aie since PR 3115 sends one buffer with one BD, "
        "repeated by its channel)"
    )
    # the repeat it names fits, and one more does not
    _check(design_file(L2_REUSE), {"REUSE": 11, "TAKES": 11})
    with pytest.raises(DesignError):
        _check(design_file(L2_REUSE), {"REUSE": 12, "TAKES": 12})
    # the depth the link has here, 1: 13 BDs and the input's 1
    _check(design_file(L2_REUSE), {"REUSE": 13, "TAKES": 13, "DEPTH": 1})


def test_bds_of_a_repeated_channel_are_said_at_it_with_its_knob(design_file: DesignFile
                                                                 ) -> None:
    """A tester's case: a broadcast channel reused 12 times from L2 beside a split and a join.
    The error was said at the join's line and named no knob that helps (depth= does not: a
    channel's memtile buffers are its host_depth=); it is said at the repeated channel, and the
    host_depth=1 it names fits."""
    src = '''
        import numpy as np
        from aiedsl import Tensor, channel, define, design, herd, i32, loop, memtile, runtime
        from aiedsl.kernels import add

        T = 12
        HOST = define("HOST", 2)

        @design(device="npu2")
        def d(A: Tensor[2 * 32 * T, 64, i32], B: Tensor[32, 64, i32],
              C: Tensor[2 * 32 * T, 64, i32]):
            a = channel(Tensor[32, 64, i32], shape=[1, 2], via=memtile, split=1)
            b = channel(Tensor[32, 64, i32], shape=[1], via=memtile, broadcast=2, repeat=T,
                        host_depth=HOST)
            c = channel(Tensor[32, 64, i32], shape=[1, 2], via=memtile, join=1)
            vadd = add(Tensor[32, 64, i32])

            @herd(cols=1, rows=2)
            def core(x, y):
                for _ in loop(T):
                    with a[x, y].consume() as ta, b[x].consume() as tb, c[x, y].produce() as tc:
                        vadd(ta, tb, tc)

            with runtime() as rt:
                rt.fill(b[0], B)
                rt.fill(a[0, :], A)
                rt.drain(c[0, :], C)

        @d.reference
        def reference(A, B):
            return A + np.tile(B, (2 * T, 1))
    '''
    path = design_file(src)
    text = _error(path)
    assert text.splitlines()[0] == (
        "d.py:12: error [memtile buffer descriptors of even channels]: memtile (0, 1) needs "
        "more buffer descriptors of even channels than it has")
    assert "  d.py:12: b_0: 24" in text.splitlines()
    assert text.endswith(
        "'b_0' (repeat=12) takes 2 buffer(s) x 12 BDs (mlir-aie 1e400306, whose lowering "
        "aiedsl plans by, chains each buffer's BD that many times): repeat=8 or less fits "
        "beside the other BDs here; with one buffer at the memtile (channel 'b' host_depth=1), "
        "repeat=16 or less (mlir-aie since PR 3115 sends one buffer with one BD, repeated by its "
        "channel)")
    assert simulate(load_design(path, {"HOST": 1})).passed


@pytest.mark.parametrize("value", ["0", "64", "True", "2.0"])
def test_repeat_is_a_count_from_1_to_63(design_file: DesignFile, value: str) -> None:
    path = design_file(L2_REUSE.replace('repeat=REUSE', f'repeat={value}'))
    assert _load_error(path) == (
        f"d.py:14: error [repeat]: forward 'l1' has repeat={value}\n"
        "  limit: an integer from 1 to 63 (the memtile's producer lock starts at its buffers x "
        "repeat and counts to 63)\n"
        f"  found: {value}\n"
        + ("  fix: reuse each element fewer times from the memtile (its producer lock counts "
           "its buffers x repeat to 63, and `aiedsl check` says how many of the memtile's BDs "
           "fit); for more, let the core keep it: acquire it once outside the loop that reuses "
           "it (L1 reuse), or fill it again from the host" if value == "64" else
           "  fix: give the number of times the memtile sends each element, e.g. repeat=2 (1: "
           "once)")
    )


def test_a_lowering_that_repeats_in_the_channel_start_is_read() -> None:
    """Since mlir-aie PR 3115 a repeated fifo of one buffer lowers to one BD and a channel start
    with ``repeat_count = n - 1``; a physical.mlir of that lowering still gives every channel."""
    from shared_reference import reference_file

    from aiedsl.toolchain.physical import parse_physical

    text = reference_file("mlir-aie-lowered", "passthrough_npu1", "physical.mlir").read_text()
    before = parse_physical(text).channels
    start = "aie.dma_start(MM2S, 0, ^bb4, ^bb6)"  # the memtile's first output and the core's
    assert text.count(start) == 2
    after = parse_physical(text.replace(start, start[:-1] + ", repeat_count = 2)")).channels
    assert after == before
