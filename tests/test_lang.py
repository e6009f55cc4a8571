"""The front end: what each construct records in the IR and emits as MLIR."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

import pytest

from aiedsl.emit import generate
from aiedsl.checks import check_design
from aiedsl.codegen.mlir import render_mlir
from aiedsl.errors import DesignError
from aiedsl.ir.core_ops import Acquire, Loop, Release
from aiedsl.ir.types import Dim
from aiedsl.loader import load_design
from aiedsl.targets import get_target
from mlir_facts import parse_facts

DesignFile = Callable[..., Path]

def test_split_and_join_emit_links_with_offsets(design_file: DesignFile) -> None:
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, join, loop, memtile, runtime
        from aiedsl.kernels import add

        @design(device="npu1_2col")
        def sj(x: Tensor[4096, i32], y: Tensor[4096, i32], z: Tensor[4096, i32]):
            px = fifo(Tensor[2048, i32], name="xs")
            xs = px.split(2, names=["x0", "x1"], via=memtile(1))
            py = fifo(Tensor[2048, i32], name="ys")
            ys = py.split([Tensor[1024, i32]] * 2, offsets=[0, 1024])
            zs = [fifo(Tensor[1024, i32], name=f"z{i}") for i in range(2)]
            zj = join(zs, name="zj")
            k = add(Tensor[1024, i32])

            @herd(cols=2, rows=1)
            def core(i, _):
                for _ in loop(2):
                    with xs[i].consume() as a, ys[i].consume() as b, zs[i].produce() as c:
                        k(a, b, c)

            with runtime() as rt:
                rt.fill(px, x)
                rt.fill(py, y)
                rt.drain(zj, z)
        ''')
    placed, _ = check_design(load_design(path).ir)
    mlir = render_mlir(placed, get_target(placed.device))
    assert "aie.objectfifo.link [@xs] -> [@x0, @x1] ([] [0, 1024])" in mlir
    assert "aie.objectfifo.link [@ys] -> [@ys_0, @ys_1] ([] [0, 1024])" in mlir
    assert "aie.objectfifo.link [@z0, @z1] -> [@zj] ([0, 1024] [])" in mlir
    memtiles = {link.srcs[0]: link.tile for link in placed.links}
    # ys and the join go to the least-used memtile among their cores' columns (ties: lowest)
    assert memtiles == {"xs": (1, 1), "ys": (0, 1), "z0": (0, 1)}


SPLIT_PER_PART = '''
    import numpy as np

    from aiedsl import Tensor, design, fifo, herd, i32, join, runtime
    from aiedsl.kernels import passthrough

    @design(device="npu1_1col")
    def d(a: Tensor[2048, i32], c: Tensor[2048, i32]):
        f = fifo(Tensor[2048, i32], name="f")
        parts = f.split(2, dims_to_stream=DIMS)
        outs = [fifo(Tensor[1024, i32], name=f"o{i}") for i in range(2)]
        o = join(outs, name="o")
        k = passthrough(Tensor[1024, i32])

        @herd(rows=2)
        def core(x, y):
            with parts[y].consume() as s, outs[y].produce() as t:
                k(s, t)

        with runtime() as rt:
            rt.fill(f, a)
            rt.drain(o, c)

    @d.reference
    def reference(a):
        p = a.reshape(2, 32, 32)
        return np.concatenate([p[0].reshape(-1), p[1].T.reshape(-1)])
    '''


def test_a_split_takes_a_layout_per_part(design_file: DesignFile) -> None:
    """IRON's split(..., dims_to_stream=[dims0, dims1]): the second part is sent transposed."""
    from aiedsl.sim import simulate

    path = design_file(SPLIT_PER_PART.replace("DIMS", "[None, [(32, 1), (32, 32)]]"))
    handle = load_design(path)
    assert [handle.ir.fifo(n).producer.dims for n in ("f_0", "f_1")] == [
        (), (Dim(size=32, stride=1), Dim(size=32, stride=32))]
    result = simulate(handle)
    assert result.passed, [c.line() for c in result.checks]


def test_a_split_with_too_few_layouts_is_refused(design_file: DesignFile) -> None:
    path = design_file(SPLIT_PER_PART.replace("DIMS", "[[(32, 1), (32, 32)]]"))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:9: error [dma dims]: split of 'f' into 2 parts has 1 per-part dims_to_stream "
        "layout\n"
        "  limit: one layout (or None) per part: 2\n"
        "  found: 1\n"
        "  fix: give 2 layouts, or one layout [(size, stride), ...] for all")


@pytest.mark.parametrize("dims, n, one", [
    ("[[32, 1], [32, 32]]", 2, "[(32, 1), (32, 32)]"),
    ("[[32, 1], [32, 32], [4, 1]]", 3, "[(32, 1), (32, 32), (4, 1)]"),
])
def test_a_split_layout_written_with_lists_says_how_it_was_read(
        design_file: DesignFile, dims: str, n: int, one: str) -> None:
    """One layout written with lists looks like per-part layouts (lists of pairs): the message
    says how it was read and how to write either form, not that 32 is not a pair."""
    path = design_file(SPLIT_PER_PART.replace("DIMS", dims))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        f"d.py:9: error [dma dims]: split of 'f' into 2 parts: its dims_to_stream is a list of "
        f"lists, so it was read as {n} per-part layouts, but their entries are numbers, not "
        "(size, stride) pairs\n"
        "  limit: one layout for every part, a list of (size, stride) tuples; or one layout (or "
        "None) per part, a list of 2 such lists\n"
        f"  found: {dims}\n"
        f"  fix: for one layout for every part write dims_to_stream={one} (tuples, not lists); "
        "for one per part, e.g. dims_to_stream=[[(size, stride), ...], None]")


@pytest.mark.parametrize("old, new, message, limit, found, fix", [
    ("f.split(2, dims_to_stream=DIMS)", "f.split([])", "fifo 'f' split into no parts",
     "a number of equal parts, or a list of part types: one or more", "[]",
     "write e.g. f.split(2), or list the parts' types: f.split([Tensor[1024, i32]] * 2)"),
    ("join(outs, name=\"o\")", "join([], name=\"o\")", "join of no parts",
     "a list of one or more fifos", "[]", "give a list of the fifos it gathers, e.g. "
     "join([c0, c1])"),
    ("join(outs, name=\"o\")", "join(outs[0], name=\"o\")", "join of the fifo 'o0'",
     "a list of one or more fifos", "the fifo 'o0'", "give a list of the fifos it gathers, "
     "e.g. join([c0, c1])")])
def test_a_split_or_join_of_no_parts_is_refused_where_it_is_written(
        design_file: DesignFile, old: str, new: str, message: str, limit: str, found: str,
        fix: str) -> None:
    """f.split([]) made a link of no parts, refused later with an empty 'found:'; join of a
    fifo said 'join of []' (a tester)."""
    path = design_file(SPLIT_PER_PART.replace(old, new).replace("DIMS", "None"))
    with pytest.raises(DesignError) as e:
        load_design(path)
    line, rule = (9, "split") if "split" in old else (11, "join")
    assert str(e.value) == (f"d.py:{line}: error [{rule}]: {message}\n  limit: {limit}\n"
                            f"  found: {found}\n  fix: {fix}")


JOIN_METHOD = '''
    import numpy as np

    from aiedsl import Tensor, design, fifo, herd, i32, runtime
    from aiedsl.kernels import passthrough

    @design(device="npu1_1col")
    def d(a: Tensor[64, 32, i32], c: Tensor[64, 32, i32]):
        f = fifo(Tensor[64, 32, i32], name="f")
        parts = f.split([Tensor[16, 32, i32]] * 4)
        o = fifo(Tensor[64, 32, i32], name="o")
        outs = o.join(PARTS)
        k = passthrough(Tensor[16, 32, i32])

        @herd(rows=4)
        def core(x, y):
            with parts[y].consume() as s, outs[y].produce() as t:
                k(s, t)

        with runtime() as rt:
            rt.fill(f, a)
            rt.drain(o, c)

    @d.reference
    def reference(a):
        return a
    '''


def test_a_fifo_joins_from_parts_it_makes_as_iron_joins_on_its_producer(
        design_file: DesignFile) -> None:
    """IRON's of.prod().join(...): the parts (named after the fifo, typed as given) are what
    the cores produce, and the memtile gathers them at back-to-back offsets."""
    from aiedsl.sim import simulate

    path = design_file(JOIN_METHOD.replace("PARTS", "[Tensor[16, 32, i32]] * 4"))
    handle = load_design(path)
    placed, _ = check_design(handle.ir)
    mlir = render_mlir(placed, get_target(placed.device))
    assert ("aie.objectfifo.link [@o_0, @o_1, @o_2, @o_3] -> [@o] ([0, 512, 1024, 1536] [])"
            in mlir)
    assert "aie.objectfifo @o_3(%tile_0_5, {%tile_0_1}, 2 : i32) : " \
        "!aie.objectfifo<memref<16x32xi32>>" in mlir
    assert simulate(handle).passed


@pytest.mark.parametrize("parts, error", [
    ("3", "d.py:11: error [join]: fifo 'o' (64x32xi32) does not join from 3 equal parts\n"
     "  found: 2048 elements / 3\n"
     "  fix: give the part types explicitly, or a count that divides the element"),
    ("4, names=['p']", "d.py:11: error [join]: join of 4 parts into 'o' has names=['p']\n"
     "  limit: 4 names\n  found: ['p']\n  fix: give one name per part, or leave names out"),
    ("2, dims_to_stream=[[(16, 1)]]",
     "d.py:11: error [dma dims]: join of 2 parts into 'o' has 1 per-part dims_to_stream "
     "layout\n  limit: one layout (or None) per part: 2\n  found: 1\n"
     "  fix: give 2 layouts, or one layout [(size, stride), ...] for all"),
])
def test_a_join_from_parts_is_refused_where_it_is_written(design_file: DesignFile, parts: str,
                                                          error: str) -> None:
    path = design_file(JOIN_METHOD.replace("PARTS", parts))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == error


@pytest.mark.parametrize("edit, error", [
    ("        outs = o.join(PARTS)\n", "        outs = o.join(PARTS)\n        o.join(2)\n"),
    ("        outs = o.join(PARTS)\n", "        outs = o.join(PARTS)\n        parts[0].join(2)\n"),
])
def test_a_join_into_a_fifo_made_already_is_refused_at_the_join(
        design_file: DesignFile, edit: str, error: str) -> None:
    """(a reviewer) A second join into one fifo, or a join into a split's part, was read by the
    link chains' check as a link that takes the fifo: "the join that makes it and the join
    that takes it", a fix draining it through the host."""
    path = design_file(JOIN_METHOD.replace(edit, error).replace("PARTS",
                                                                "[Tensor[16, 32, i32]] * 4"))
    with pytest.raises(DesignError) as e:
        load_design(path)
    said = str(e.value).splitlines()[0]
    if "o.join(2)" in error:
        assert said == ("d.py:12: error [join]: fifo 'o' takes part in the join at line 11 "
                        "already, and a join would make it")
    else:
        assert said == ("d.py:12: error [join]: fifo 'f_0' takes part in the split at line 9 "
                        "already, and a join would make it")


def test_templated_kernel_renders_its_parameters(design_file: DesignFile) -> None:
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i16, runtime
        from aiedsl.kernels import mul

        @design(device="npu1_1col")
        def m(a: Tensor[64, i16], b: Tensor[64, i16], c: Tensor[64, i16]):
            fa, fb, fc = (fifo(Tensor[64, i16], name=n) for n in "abc")
            k = mul(Tensor[64, i16])

            @herd()
            def core():
                with fa.consume() as x, fb.consume() as y, fc.produce() as z:
                    k(x, y, z)

            with runtime() as rt:
                rt.fill(fa, a)
                rt.fill(fb, b)
                rt.drain(fc, c)
        ''')
    cc = generate(load_design(path)).files["kernels/mul_i16_64.cc"]
    assert "c[i] = a[i] * b[i] for 64" in cc
    assert "aie::store_v(c + i, aie::mul(va, vb).template to_vector<int16_t>(0));" in cc
    assert "void mul_i16_64(int16_t *a, int16_t *b, int16_t *c) {\n" \
           "  eltwise_mul_i16<64>(a, b, c);\n}" in cc


TAKES_TWO = '''
    from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
    from aiedsl.kernels import add

    @design(device="npu1_1col")
    def win(a: Tensor[1024, i32], c: Tensor[512, i32]):
        fa = fifo(Tensor[64, i32], name="fa", depth=2, DEPTHS)
        fc = fifo(Tensor[64, i32], name="fc")
        k = add(Tensor[64, i32])

        @herd()
        def core():
            for _ in loop(8):
                pair = fa.acquire("consume", 2)
                with fc.produce() as out:
                    k(pair[0], pair[1], out)
                fa.release("consume", 2)

        with runtime() as rt:
            rt.fill(fa, a)
            rt.drain(fc, c)
    '''
"""A core taking fifo fa's elements two at a time; DEPTHS its consumer's depth."""


def test_acquire_several_elements_and_per_endpoint_depths(design_file: DesignFile) -> None:
    path = design_file(TAKES_TWO.replace("DEPTHS", 'consumer_depth={"core[0,0]": 3}'))
    d = load_design(path).ir
    body = d.cores[0].body[0]
    assert isinstance(body, Loop) and body.count == 8
    acq, rel = body.body[0], body.body[-1]
    assert isinstance(acq, Acquire) and acq.count == 2
    assert isinstance(rel, Release) and rel.count == 2
    placed, usage = check_design(d)
    mlir = render_mlir(placed, get_target(placed.device))
    assert "aie.objectfifo @fa(%tile_0_0, {%tile_0_2}, [2, 3])" in mlir
    assert "aie.objectfifo.acquire @fa(Consume, 2)" in mlir
    assert "aie.objectfifo.subview.access %view3[1]" in mlir
    # a core acquiring 2 at once gets 3 buffers (depth 3 here): 3 x 256 B of fa, 2 x 256 of fc
    core = usage[(0, 2)]
    assert [u.amount for u in core.memory] == [1024, 768, 512]


@pytest.mark.parametrize("given", ["consumer_depth=2", 'consumer_depth={"core[0,0]": 2}'])
def test_a_consumer_depth_equal_to_the_depth_is_still_the_ends_own(design_file: DesignFile,
                                                                   given: str) -> None:
    """(a tester) depth=2, consumer_depth=2, taken two at a time: the objectfifo was emitted
    with one depth, which mlir-aie's findObjectFifoSize turns into 3 buffers at the core (its
    acquire + 1), so the core's memory ran over. Given, a consumer's depth is a list entry of
    its own, as depth=3, consumer_depth=2 was: the core holds the 2 it was given."""
    path = design_file(TAKES_TWO.replace("DEPTHS", given))
    placed, usage = check_design(load_design(path).ir)
    mlir = render_mlir(placed, get_target(placed.device))
    assert "aie.objectfifo @fa(%tile_0_0, {%tile_0_2}, [2, 2])" in mlir
    assert [u.amount for u in usage[(0, 2)].memory] == [1024, 512, 512]


def test_herds_are_placed_and_core_index_maps_to_tiles(design_file: DesignFile) -> None:
    path = design_file('''
        from aiedsl import Tensor, channel, design, herd, i32, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1")
        def two(a: Tensor[4096, i32], b: Tensor[4096, i32]):
            x = channel(Tensor[1024, i32], shape=[2, 2], name="x")
            y = channel(Tensor[1024, i32], shape=[2, 2], name="y")
            k = passthrough(Tensor[1024, i32])

            @herd(cols=1, rows=2, anchor=(3, 4))
            def pinned(_, j):
                with x[1, j].consume() as s, y[1, j].produce() as d:
                    k(s, d)

            @herd(cols=1, rows=2)
            def auto(_, j):
                with x[0, j].consume() as s, y[0, j].produce() as d:
                    k(s, d)

            with runtime() as rt:
                for i in range(2):
                    for j in range(2):
                        rt.fill(x[i, j], a, (1024 * (2 * i + j), [1024], [1]))
                        rt.drain(y[i, j], b, (1024 * (2 * i + j), [1024], [1]))
        ''')
    placed, _ = check_design(load_design(path).ir)
    tiles = {c.name: c.tile for c in placed.cores}
    assert tiles == {"pinned[0,0]": (3, 4), "pinned[0,1]": (3, 5),
                     "auto[0,0]": (0, 2), "auto[0,1]": (0, 3)}
    assert placed.fifo("x_1_1").consumers[0].tile == (3, 5)


CORE_SIDE_TRANSPOSE = '''
    from aiedsl import Tensor, channel, design, herd, i32, runtime
    from aiedsl.kernels import passthrough

    M, K = 64, 32

    @design(device="npu1_1col")
    def transpose(a: Tensor[M, K, i32], b: Tensor[K, M, i32]):
        chan_in = channel(Tensor[K * M, i32]{IN})
        chan_out = channel(Tensor[K * M, i32], dims_to_stream=[(1, 1), (K, 1), (M, K)])
        copy = passthrough(Tensor[K * M, i32])

        @herd(cols=1, rows=1)
        def body(tx, ty):
            with chan_in[0].consume() as tin, chan_out[0].produce() as tout:
                copy(tin, tout)

        with runtime() as rt:
            rt.fill(chan_in[0], a)
            rt.drain(chan_out[0], b)

    @transpose.reference
    def reference(a):
        return a.T.copy()
    '''


def test_a_channel_without_a_memtile_lays_out_on_the_producing_core(
        design_file: DesignFile) -> None:
    """An AIR port (the herd's ChannelPut with sizes and strides): channel(dims_to_stream=)
    without via= was dropped, the output came back untransposed and check said nothing. The
    core's DMA now applies it, as fifo(dims_to_stream=) does."""
    from aiedsl.sim import simulate

    path = design_file(CORE_SIDE_TRANSPOSE.replace("{IN}", ""))
    handle = load_design(path)
    placed, _ = check_design(handle.ir)
    assert placed.fifo("chan_out_0").producer.dims == (
        Dim(size=1, stride=1), Dim(size=32, stride=1), Dim(size=64, stride=32))
    assert "dimensionsToStream [<size = 1, stride = 1>, <size = 32, stride = 1>, <size = 64, " \
        "stride = 32>]" in render_mlir(placed, get_target(placed.device))
    assert simulate(handle, seed=0).passed


@pytest.mark.parametrize("option, message", [
    (", dims_to_stream=[(K, 1), (M, K)]",
     "transpose.py:8: error [dma pattern]: dims_to_stream of 'chan_in_0' on shim breaks a DMA "
     "rule\n  limit: no layout transform on a shim endpoint (mlir-aie refuses "
     "dimensionsToStream on a shim producer, and ignores a shim consumer's layout)\n"
     "  found: [(32, 1), (64, 32)]\n  transpose.py:18: the runtime fills it here\n"
     "  fix: apply the layout in the runtime pattern instead, or on the memtile"),
    (", host_depth=3",
     "transpose.py:8: error [channel]: channel 'chan_in' has host_depth=3 without a memtile\n"
     "  limit: host_depth= sets the buffers of the memtile side; a channel without via= has "
     "none\n  found: host_depth=3\n"
     "  fix: add via=memtile, or leave host_depth out (depth= sets the core side's buffers)"),
])
def test_what_a_channel_without_a_memtile_cannot_do_is_refused(
        design_file: DesignFile, option: str, message: str) -> None:
    """Without via= a channel's host-filled side is the shim (no layout transform) and it has
    no memtile buffers: both options were silently ignored."""
    path = design_file(CORE_SIDE_TRANSPOSE.replace("{IN}", option), "transpose.py")
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    assert str(e.value) == message


def test_channel_broadcast_from_the_shim_reaches_every_core(design_file: DesignFile) -> None:
    path = design_file('''
        from aiedsl import Tensor, channel, design, herd, i32, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1")
        def bc(a: Tensor[1024, i32], b: Tensor[4096, i32]):
            x = channel(Tensor[1024, i32], shape=[1], broadcast=4, name="x")
            y = channel(Tensor[1024, i32], shape=[4], name="y")
            k = passthrough(Tensor[1024, i32])

            @herd(cols=1, rows=4)
            def core(_, r):
                with x[0].consume() as s, y[r].produce() as d:
                    k(s, d)

            with runtime() as rt:
                rt.fill(x[0], a)
                for r in range(4):
                    rt.drain(y[r], b, (1024 * r, [1024], [1]))
        ''')
    placed, _ = check_design(load_design(path).ir)
    facts = parse_facts(render_mlir(placed, get_target(placed.device)))
    bcast = [f for f in facts.fifos if len(f.consumers) == 4]
    assert len(bcast) == 1 and bcast[0].producer == (0, 0)
    assert bcast[0].consumers == ((0, 2), (0, 3), (0, 4), (0, 5))
    # four drains into the same column's two S2MM channels spill to neighbouring shim tiles
    drains = sorted(f.consumers[0] for f in facts.fifos if f.elem_type == "1024xi32"
                    and f.producer != (0, 0))
    assert drains == [(0, 0), (0, 0), (1, 0), (1, 0)]


def test_numpy_element_types_spell_the_same_tensors() -> None:
    # IRON designs spell element types as numpy does; Tensor[...] and scalar() take them too
    import ml_dtypes
    import numpy as np

    from aiedsl import Tensor, bf16, f32, i8, i16, i32, u8, u16, u32
    from aiedsl.kernels import scalar

    pairs = [(np.int8, i8), (np.uint8, u8), (np.int16, i16), (np.uint16, u16), (np.int32, i32),
             (np.uint32, u32), (np.float32, f32), (ml_dtypes.bfloat16, bf16)]
    for numpy_type, ours in pairs:
        assert Tensor[64, 32, numpy_type] == Tensor[64, 32, ours]
        assert Tensor[64, 32, np.dtype(numpy_type)] == Tensor[64, 32, ours]
        assert scalar("n", numpy_type) == scalar("n", ours)
    assert Tensor[(64, 32), np.int32] == Tensor[64, 32, i32]
    assert Tensor[(1024,), np.int32] == Tensor[1024, i32]


def test_an_element_type_aie2_lacks_is_named_as_numpy_names_it() -> None:
    import numpy as np
    import pytest

    from aiedsl import Tensor
    from aiedsl.errors import DesignError

    with pytest.raises(DesignError) as e:
        Tensor[8, np.float64]
    assert str(e.value).split(": ", 1)[1] == (
        "error [tensor type]: unknown element type float64\n"
        "  limit: one of i8, u8, i16, u16, i32, u32, bf16, f32 (numpy's too: int16, np.int16)\n"
        "  found: float64\n"
        "  fix: use an aiedsl dtype: from aiedsl import i32, bf16, ...")


def test_the_index_of_a_loop_computed_with_is_refused_word_for_word(in_root: Path) -> None:
    import pytest

    from aiedsl.errors import DesignError

    path = "tests/bad_inputs/loop_index_passed_to_kernel.py"
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        f"{path}:26: error [loop]: the index of the loop(4) at line 24 is used in arithmetic\n"
        "  limit: a loop() body is traced once and runs as one scf.for body: its index has no "
        "Python value (it would be 0 in every iteration)\n"
        "  found: the index of loop(4), line 24\n"
        "  fix: pass the index itself to a kernel, as an integer scalar (kern(buf, i)), and "
        "compute with it in the C++; for other values that change per iteration, unroll with "
        "Python's range() or send them through a fifo or an rtp")


def test_the_index_of_a_long_loop_is_not_told_to_unroll() -> None:
    """loop(512)'s index passed to a kernel was told to unroll with range(): 512 copies, which
    check passed and the core's program memory would not hold (an AIR porter)."""
    from types import SimpleNamespace

    import pytest

    from aiedsl.errors import DesignError
    from aiedsl.ir.loc import Loc
    from aiedsl.lang.loops import LoopIndex

    i = LoopIndex(SimpleNamespace(count=512, loc=Loc(file="d.py", line=3)))  # type: ignore[arg-type]
    with pytest.raises(DesignError) as e:
        int(i)
    assert str(e.value).splitlines()[-1] == (
        "  fix: pass the index itself to a kernel, as an integer scalar (kern(buf, i)), and "
        "compute with it in the C++; for other values that change per iteration, send them "
        "through a fifo or an rtp (Python's range() would make 512 copies of the body, and a "
        "few hundred overflow the core's 16 KB of program memory, which only the build finds)")


def test_the_index_of_a_loop_refuses_every_use_as_a_value() -> None:
    import operator
    from types import SimpleNamespace

    import pytest

    from aiedsl.errors import DesignError
    from aiedsl.ir.loc import Loc
    from aiedsl.lang.loops import LoopIndex

    i = LoopIndex(SimpleNamespace(count=4, loc=Loc(file="d.py", line=3)))  # type: ignore[arg-type]
    uses = {"used as an integer": [int, operator.index, lambda v: [0, 1][v]],
            "used as a number": [float], "tested as a truth value": [bool],
            "compared with a value": [lambda v: v == 0, lambda v: v < 2],
            "formatted into text": [lambda v: f"k_{v}", lambda v: format(v, "d"), str,
                                    lambda v: "k_%s" % v],
            "used in arithmetic": [lambda v: v + 1, lambda v: 2 * v, lambda v: v // 2,
                                   lambda v: 256 * v + 8]}
    for how, ops in uses.items():
        for op in ops:
            with pytest.raises(DesignError) as e:
                op(i)
            assert f"the index of the loop(4) at line 3 is {how}" in str(e.value)
    assert repr(i) == "<the index of loop(4)>" and hash(i) == hash(i)


BUFFER_USE = '''
        import numpy as np
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1_1col")
        def d(inp: Tensor[64, i32], out: Tensor[64, i32]):
            a = fifo(Tensor[64, i32], name="a")
            b = fifo(Tensor[64, i32], name="b")

            @herd()
            def core():
                with a.consume() as x, b.produce() as y:
                    {use}

            with runtime() as rt:
                rt.fill(a, inp)
                rt.drain(b, out)
        '''
"""A core function that does {use} with buffer x of fifo 'a' (line 12)."""


@pytest.mark.parametrize("use, how", [
    ("y[...] = np.asarray(x) + 1", "is used as a numpy array"),
    ("k = np.max(x)", "is used as a numpy array"),  # asked two frames inside numpy: its line
    ("k = np.mean(x)", "is used as a numpy array"),
    ("k = x + 1", "is used in arithmetic"),
    ("k = 1 if x > 0 else 2", "is used in a comparison"),
    ("k = 1 if x == 0 else 2", "is used in a comparison"),  # it took the else branch, silently
    ("k = 1 if 0 != x else 2", "is used in a comparison"),
    ("k = x[0:8]", "is sliced"),
    ("k = x.sum()", "is asked for .sum"),  # Python's AttributeError on 'Buffer' (a tester)
    ("k = x.tolist()", "is asked for .tolist")])
def test_computing_on_a_buffer_in_a_core_says_why_it_cannot(design_file: Callable[..., Path],
                                                            use: str, how: str) -> None:
    """A newcomer's numpy on buffers in a core gave Python's own TypeErrors ('unsupported
    operand type(s) for +: Buffer and int') with 'fix the code at this line'."""
    from aiedsl.errors import DesignError
    from aiedsl.loader import load_design

    path = design_file(BUFFER_USE.format(use=use))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        f"d.py:12: error [core]: a buffer of 'a' {how} in a core function\n"
        "  limit: a core function is traced once, not run: its buffers hold no values then, so "
        "Python and numpy cannot compute with them\n"
        "  fix: compute in a kernel: pass the buffer to one (aiedsl.kernels has element-wise "
        "ones such as vector_scalar; a kernel's numpy reference says what it computes)")


@pytest.mark.parametrize("elem, why", [
    ("Tensor[1, i32]", "whole vectors of 16 i32, and Tensor[1, i32] holds 1"),
    ("Tensor[64, i8]", "bf16, i16 or i32, not i8")])
def test_computing_on_a_buffer_no_library_kernel_takes_points_at_ones_own(
        design_file: Callable[..., Path], elem: str, why: str) -> None:
    """IRON's elem_out[0] = elem_in[0] + 1 on one i32: the fix named vector_scalar, which
    refuses one i32 (16-element vectors) and i8 (no such variant). It names a kernel of one's
    own where the library's would refuse the element."""
    from aiedsl.errors import DesignError
    from aiedsl.loader import load_design

    path = design_file(BUFFER_USE.format(use="y[0] = x[0] + 1").replace(
        "Tensor[64, i32], name=", f"{elem}, name=").replace(", i32, runtime", ", i8, i32, runtime"))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:12: error [core]: a buffer of 'a' is used in arithmetic in a core function\n"
        "  limit: a core function is traced once, not run: its buffers hold no values then, so "
        "Python and numpy cannot compute with them\n"
        "  fix: compute in a kernel: pass the buffer to one (one of your own, declared with "
        "declare(...) as README's \"Writing and testing a kernel\" shows: the library's "
        f"element-wise ones, such as vector_scalar, take {why}; a kernel's numpy reference "
        "says what it computes)")


@pytest.mark.parametrize("use, how", [
    ("k = len(x)", "is asked for its length"), ("k = x.shape[0]", "is asked for .shape"),
    ("k = x.dtype", "is asked for .dtype")])
def test_asking_a_buffer_for_its_size_points_at_its_type(design_file: Callable[..., Path],
                                                         use: str, how: str) -> None:
    """len(src) and src.shape were Python's TypeError and AttributeError on 'Buffer' (a
    tester): refused as arithmetic is, pointing at the type the buffer has. Its own
    attributes (.type, .fifo, .count, .index) stay."""
    from aiedsl.errors import DesignError
    from aiedsl.loader import load_design

    path = design_file(BUFFER_USE.format(use=use))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        f"d.py:12: error [core]: a buffer of 'a' {how} in a core function\n"
        "  limit: a core function is traced once, not run: its buffers hold no values then, so "
        "Python and numpy cannot compute with them\n"
        "  fix: read its type, known when the core function is traced: .type is "
        "Tensor[64, i32] (.type.shape, .type.dtype, .type.numel)")
    load_design(design_file(BUFFER_USE.format(
        use="assert (x.type.shape, x.fifo.name, x.count, x.index) == ((64,), 'a', 1, 0)")))


def test_an_unnamed_fifo_or_channel_takes_its_variables_name(design_file: Callable[..., Path]
                                                             ) -> None:
    """A newcomer's errors named 'chan_1' and 'chan1_0' where the design said cin and a: a
    construct given no name= is named as the line assigns it (in a loop: cin, cin1, ...)."""
    from aiedsl.errors import DesignError

    path = design_file('''
        from aiedsl import Tensor, channel, design, fifo, herd, i32, memtile, runtime

        @design(device="npu1_1col")
        def d(inp: Tensor[64, i32], out: Tensor[64, i32]):
            cin = channel(Tensor[64, i32], shape=[1], via=memtile)
            a = fifo(Tensor[64, i32])
            kept = [fifo(Tensor[64, i32]) for _ in range(1)]

            @herd()
            def core():
                with cin[0].consume(), a.produce():
                    pass

            with runtime() as rt:
                rt.fill(cin[0], inp)
                rt.drain(a, out)
        ''')
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    assert str(e.value).startswith("d.py:7: error [fifo unused]: fifo 'kept' is never used")
    text = "".join(line for line in path.read_text().splitlines(keepends=True)
                   if "kept" not in line)
    path.write_text(text)
    names = {f.name for f in load_design(path).ir.fifos}
    assert names == {"a", "cin_0", "cin_l3_0"}
    path.write_text(text.replace("a = fifo(Tensor[64, i32])",
                                 "a = fifo(\n        Tensor[64, i32],\n        depth=2)"))
    assert "a" in {f.name for f in load_design(path).ir.fifos}  # the call's first line


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Python 3.10's code objects keep no "
                    "columns: every statement of a line is read as its first (a, a1, a2, ...)")
def test_statements_sharing_a_line_name_their_own_fifos(design_file: Callable[..., Path]
                                                        ) -> None:
    """A tester's four fifos on one line were named a, a1, a2, a3: each is named by the
    statement that makes it, found by the call's column; a ';' in a string changes nothing."""
    path = design_file('''
        from aiedsl import Tensor, channel, design, fifo, herd, i32, local, memtile, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def d(i: Tensor[192, i32], o: Tensor[192, i32]):
            a = fifo(Tensor[64, i32]); p = fifo(Tensor[64, i32]); q: object = fifo(Tensor[64, i32]); b = fifo(Tensor[64, i32])
            x = 1; cin = channel(Tensor[64, i32], shape=[1], via=memtile); c = fifo(Tensor[64, i32], name="c;") if x > 1 else fifo(Tensor[64, i32])
            t = local(Tensor[16, i32]); u = local(Tensor[16, i32])
            copy = passthrough(Tensor[16, i32])

            @herd()
            def core():
                with a.consume(), q.consume(), cin[0].consume(), p.produce(), b.produce(), c.produce():
                    copy(t, u)

            with runtime() as rt:
                rt.fill(a, i, (0, [64], [1]))
                rt.fill(q, i, (64, [64], [1]))
                rt.fill(cin[0], i, (128, [64], [1]))
                rt.drain(p, o, (0, [64], [1]))
                rt.drain(b, o, (64, [64], [1]))
                rt.drain(c, o, (128, [64], [1]))
        ''')
    ir = load_design(path).ir
    assert [f.name for f in ir.fifos] == ["a", "p", "q", "b", "cin_0", "cin_l3_0", "c"]
    assert [b.name for b in ir.locals] == ["t", "u"]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Python 3.10's code objects keep no "
                    "columns: which value of the tuple runs is not to be told (of, of1, ...)")
def test_fifos_made_by_unpacking_a_tuple_take_their_targets_names(
        design_file: Callable[..., Path]) -> None:
    """fa, fb = fifo(...), fifo(...) named them of and of1 in every message and the MLIR (a
    library contributor's find); each takes the name in its place. Another form (a starred
    target, a list) keeps the default names."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def d(i: Tensor[64, i32], o: Tensor[64, i32]):
            fa, fb = fifo(Tensor[64, i32]), fifo(Tensor[64, i32])
            copy = passthrough(Tensor[64, i32])

            @herd()
            def core():
                with fa.consume() as x, fb.produce() as y:
                    copy(x, y)

            with runtime() as rt:
                rt.fill(fa, i)
                rt.drain(fb, o)
        ''')
    assert [f.name for f in load_design(path).ir.fifos] == ["fa", "fb"]
    pair = "fa, fb = fifo(Tensor[64, i32]), fifo(Tensor[64, i32])"
    path.write_text(path.read_text().replace(
        pair, "fa, fb = [fifo(Tensor[64, i32]) for _ in range(2)]"))
    assert [f.name for f in load_design(path).ir.fifos] == ["of", "of1"]


@pytest.mark.parametrize("line, message", [
    ("x = channel(Tensor[128, i32], shape=[1, 1], broadcast_shape=[1, 2])",
     "d.py:5: error [python error]: TypeError: channel() got an unexpected keyword argument "
     "'broadcast_shape' (while loading d.py)\n"
     "  fix: MLIR-AIR's broadcast_shape=[1, n] is broadcast=n on an aiedsl channel (each "
     "consuming core uses the one index c[i])"),
    ("x = channel(Tensor[128, i32], shape=[1, 1], broadcast=2)",
     "d.py:9: error [channel index]: x[0, 1] is outside channel 'x' of shape [1, 1]\n"
     "  fix: index each dimension from 0 to its size - 1 (0..0, 0..0); every core a broadcast "
     "fifo reaches consumes the one index (broadcast=2: its consumers share it, not each its "
     "own)"),
])
def test_an_air_users_first_spelling_is_answered_in_aiedsls(
        design_file: DesignFile, line: str, message: str) -> None:
    """An MLIR-AIR porter: broadcast_shape= got a bare TypeError, and indexing a broadcast
    channel by each consumer's own index (as ChannelGet's indices do) a fix that did not say
    the consumers share one."""
    path = design_file(f'''
        from aiedsl import Tensor, channel, design, herd, i32, runtime

        @design(device="npu1_1col")
        def bidx(a: Tensor[128, i32]):
            {line}

            @herd(cols=1, rows=2)
            def core(tx, ty):
                with x[tx, ty].consume() as t:
                    pass

            with runtime() as rt:
                rt.fill(x[0, 0], a)
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == message


@pytest.mark.parametrize("keyword, fix", [
    ("via_DMA=True", "IRON's via_DMA= has no counterpart: as mlir-aie lowers a fifo, one between "
     "neighbouring cores (one consumer, not linked) is in shared memory, and a layout on either "
     "end (dims_to_stream=, dims_from_stream=) moves it by DMA"),
    ("init_values=[0]", "IRON's init_values= has no counterpart: a fifo's buffers start empty; a "
     "core's own buffer with initial values is local(T, initial=v)"),
])
def test_an_iron_users_fifo_keyword_is_answered(design_file: DesignFile, keyword: str,
                                                fix: str) -> None:
    """(an IRON user's tester) ObjectFifo's via_DMA= got the bare TypeError's list of fifo()'s
    keywords."""
    path = design_file(f'''
        from aiedsl import Tensor, design, fifo, i32

        @design(device="npu1_1col")
        def d(a: Tensor[128, i32]):
            x = fifo(Tensor[128, i32], {keyword})
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert e.value.fix == fix


def test_per_dimension_offsets_are_answered_with_the_linear_one(design_file: DesignFile) -> None:
    """MLIR-AIR's offsets=[o0, o1] written as a pattern's offset: the fix gives the linear
    offset that means the same (8 * 48 + 16 * 1 = 400)."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1_1col")
        def offs(a: Tensor[16, 48, i32]):
            x = fifo(Tensor[8, 16, i32])

            @herd()
            def core():
                with x.consume() as t:
                    pass

            with runtime() as rt:
                rt.fill(x, a, ([8, 16], [8, 16], [48, 1]))
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:13: error [dma pattern]: pattern ([8, 16], [8, 16], [48, 1]) is not (offset, "
        "sizes, strides) with 1-4 dims\n"
        "  limit: ints: an offset, then as many sizes as strides\n"
        "  fix: write (offset, [sizes...], [strides...]) outermost first, in elements, or use "
        "tiles(...); the offset is one linear element offset: the sum of each dimension's offset "
        "times its stride (here 400)")


def test_a_pattern_of_five_dimensions_says_the_four_a_bd_walks(design_file: DesignFile) -> None:
    """(an IRON user's tester) Five sizes and five strides were refused as not (offset, sizes,
    strides) at all, its limit the form's ("ints: an offset, then as many sizes as strides")."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, runtime

        @design(device="npu1_1col")
        def five(a: Tensor[2, 8, 64, i32]):
            x = fifo(Tensor[1024, i32])

            @herd()
            def core():
                with x.consume() as t:
                    pass

            with runtime() as rt:
                rt.fill(x, a, (0, [1, 2, 8, 2, 32], [0, 512, 64, 32, 1]))
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:13: error [dma pattern]: pattern (0, [1, 2, 8, 2, 32], [0, 512, 64, 32, 1]) has 5 "
        "dimensions\n"
        "  limit: 1 to 4 dimensions (a shim BD's: npu_dma_memcpy_nd takes four sizes and four "
        "strides)\n"
        "  found: 5 dimensions\n"
        "  fix: leave out a dimension of size 1, merge a dimension into the next inner one "
        "where its stride is that one's size times stride (sizes [b, a], strides [a * s, s] are "
        "sizes [a * b], strides [s]), or split the transfer in several")


def test_a_users_own_function_with_an_air_keyword_keeps_the_plain_fix(
        design_file: DesignFile) -> None:
    """A reviewer: rows_of(64, sizes=16) on the user's own helper got MLIR-AIR's herd advice."""
    path = design_file('''
        def rows_of(n, step):  # no parameter near 'sizes': Python 3.13 would suggest it
            return list(range(0, n, step))

        STARTS = rows_of(64, sizes=16)
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:4: error [python error]: TypeError: rows_of() got an unexpected keyword argument "
        "'sizes' (while loading d.py)\n"
        "  fix: fix the code at this line")


@pytest.mark.parametrize("via", ["", ", via=memtile", ", via=memtile, split=0"])
def test_a_channels_host_ends_take_its_shim_pin(design_file: DesignFile, via: str) -> None:
    """channel(shim=shim(col)) pins every host end, as fifo(shim=) pins one (the shim check's
    fix named shim= for a channel, which did not take it: an AIR porter)."""
    fill = "rt.fill(a[:], A)" if "split" in via else \
        "for i in range(2):\n                    rt.fill(a[i], A, (512 * i, [512], [1]))"
    path = design_file(f'''
        from aiedsl import Tensor, channel, design, herd, i32, memtile, runtime, shim

        @design(device="npu1")
        def d(A: Tensor[1024, i32]):
            a = channel(Tensor[512, i32], shape=[2], shim=shim(2){via})

            @herd(cols=1, rows=2)
            def core(x, y):
                with a[y].consume():
                    pass

            with runtime() as rt:
                {fill}
        ''')
    placed, _ = check_design(load_design(path).ir)
    assert placed.physical is not None
    hosts = {c.tile for c in placed.physical.channels if c.tile[1] == 0}
    assert hosts == {(2, 0)}


def test_a_channels_shim_pin_must_be_a_shim(design_file: DesignFile) -> None:
    path = design_file('''
        from aiedsl import Tensor, channel, design, i32, memtile

        @design(device="npu1")
        def d(A: Tensor[1024, i32]):
            a = channel(Tensor[512, i32], shape=[2], shim=memtile(1))
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:5: error [placement]: channel 'a' has shim=memtile(1)\n"
        "  limit: shim(col): the shim tile of a column\n"
        "  found: memtile(1)\n"
        "  fix: write shim=shim(0) (from aiedsl import shim)")


def test_a_shim_pin_on_a_fifo_without_a_host_end_is_refused(design_file: DesignFile) -> None:
    """channel(shim=shim(2)) between two cores was accepted and the pin dropped (a
    reviewer)."""
    path = design_file('''
        from aiedsl import Tensor, channel, design, herd, i32, runtime, shim

        @design(device="npu1")
        def d(A: Tensor[256, i32]):
            c = channel(Tensor[256, i32], shape=[1], shim=shim(2))

            @herd(rows=2)
            def core(x, y):
                if y == 0:
                    with c[0].produce():
                        pass
                else:
                    with c[0].consume():
                        pass
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:5: error [placement]: channel 'c' pins its host end to shim(2), but the runtime "
        "neither fills nor drains 'c_0'\n"
        "  found: shim=shim(2)\n"
        "  fix: leave shim= out (a fifo between cores or tiles has no host end), or fill or "
        "drain it in the runtime sequence")


def test_an_unnamed_join_takes_its_variables_name(design_file: Callable[..., Path]) -> None:
    """A tester's c_l2 = join(c_l1) was emitted as @c_l1_0_join: a join given no name= is
    named as fifo() names a fifo, after the variable its line assigns it to, numbered when
    joins share one (a loop, a list comprehension); '<first part>_join' only when its line
    assigns it to no plain name. A split's parts stay '<parent>_0', '<parent>_1', ..."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, i32, join, runtime

        @design(device="npu1")
        def d(i: Tensor[14, 64, i32], o: Tensor[14, 64, i32]):
            c_l1 = [fifo(Tensor[64, i32], name=f"c{n}") for n in range(12)]
            c_l2 = join(c_l1[0:2])
            pairs = [join(c_l1[n:n + 2]) for n in (2, 4)]
            js = []
            for n in (6, 8):
                j = join(c_l1[n:n + 2])
                js.append(j)
            inline = []
            inline.append(join(c_l1[10:12]))
            src = fifo(Tensor[128, i32])
            halves = src.split(2)

            with runtime() as rt:
                for k, f in enumerate(c_l1):
                    rt.fill(f, i, (64 * k, [64], [1]))
                rt.fill(src, i, (768, [128], [1]))
                for k, f in enumerate([c_l2, *pairs, *js, inline[0]]):
                    rt.drain(f, o, (128 * k, [128], [1]))
                for k, f in enumerate(halves):
                    rt.drain(f, o, (768 + 64 * k, [64], [1]))
        ''')
    names = [f.name for f in load_design(path).ir.fifos]
    assert names[12:] == ["c_l2", "pairs", "pairs1", "j", "j1", "c10_join", "src",
                          "src_0", "src_1"]


BYPASSED = '''
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough

@design(device="npu1_1col")
def d(inp: Tensor[64, i32], out: Tensor[64, i32]):
    a = fifo(Tensor[32, i32], name="a")
    LINK
    b = fifo(Tensor[16, i32], name="b")
    copy = passthrough(Tensor[16, i32])

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as x, b.produce() as y:
                copy(x, y)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)
'''


@pytest.mark.parametrize("link, kind, output, written", [
    ("a1 = a.forward(Tensor[16, i32])", "forward", "a_fwd", "a1"),
    ("parts = a.split(2)", "split", "a_0", "parts[0]"),
])
def test_a_core_reading_a_links_input_is_told_at_its_acquire(
        design_file: Callable[..., Path], link: str, kind: str, output: str,
        written: str) -> None:
    """A core consuming `a` where `a1 = a.forward(...)` was meant was told "fifo 'a_fwd' has no
    consumer" at the forward's line (an IRON user's port): said at the acquire, naming the
    variable to consume."""
    from aiedsl.errors import DesignError
    from aiedsl.loader import load_design

    path = design_file(BYPASSED.replace("LINK", link))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        f"d.py:14: error [fifo consumer]: core[0,0] consumes 'a', the input of the memtile "
        f"{kind} whose output '{output}' nothing consumes\n"
        f"  limit: a fifo a memtile {kind} reads goes to the memtile; cores read the {kind}'s "
        "output\n"
        "  found: core[0,0] consumes a\n"
        f"  d.py:7: the {kind}\n"
        f"  fix: consume {written} in the core (`with {written}.consume() as e:`), or remove the "
        f"{kind} if the core is to read 'a' straight from the host")


def test_a_second_reference_in_one_file_is_an_error(design_file: DesignFile) -> None:
    """(a tester) A second @d.reference replaced the first without a word: after an edit, the
    stale copy may be the one that runs."""
    from aiedsl.errors import DesignError

    root = Path(__file__).resolve().parents[1]
    source = (root / "designs" / "passthrough.py").read_text() + (
        "\n\n@passthrough.reference\ndef reference2(inp: np.ndarray) -> np.ndarray:\n"
        "    return inp + 1\n")
    path = design_file(source)
    with pytest.raises(DesignError) as excinfo:
        load_design(path)
    lines = str(excinfo.value).splitlines()
    assert lines[0] == ("d.py:40: error [reference]: design 'passthrough' has a reference "
                        "already: reference at line 35")
    assert lines[1:] == ["  limit: one reference per design", "  found: a second, reference2",
                         "  d.py:35: the first reference",
                         "  fix: keep one of them (a reference returns every output, as a "
                         "tuple for several)"]
