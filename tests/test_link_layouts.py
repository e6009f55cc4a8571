"""Per-consumer layouts and the layout rules of splits and joins, both ways: per-consumer
``dims_from_stream`` (mlir-aie's ``{%tile fromStream [...], ...}``) builds and simulates against
numpy; what mlir-aie's link verifier and lowering refuse, or would run with racing locks, is a
DesignError, word for word."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from aiedsl.checks import check_design
from aiedsl.codegen.mlir import render_mlir
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.targets import get_target

DesignFile = Callable[..., Path]

PER_CONSUMER = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough

@design(device="npu1_2col")
def d(inp: Tensor[1024, i32], out0: Tensor[1024, i32], out1: Tensor[1024, i32]):
    a = fifo(Tensor[256, i32], name="a", dims_from_stream=DIMS)
    b0 = fifo(Tensor[256, i32], name="b0")
    b1 = fifo(Tensor[256, i32], name="b1")
    k = passthrough(Tensor[256, i32])

    @herd(cols=2)
    def core(x, y):
        for _ in loop(4):
            with a.consume() as s, [b0, b1][x].produce() as t:
                k(s, t)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b0, out0)
        rt.drain(b1, out1)

@d.reference
def reference(inp):
    # core[1,0] writes each 16x16 tile left half (16 rows of 8) first, then the right half
    idx = np.array([h * 8 + r * 16 + c for h in range(2) for r in range(16) for c in range(8)])
    tiles = inp.reshape(4, 256)
    moved = np.empty_like(tiles)
    moved[:, idx] = tiles
    return inp.copy(), moved.reshape(-1)
'''
"""One fifo broadcast to two cores; ``DIMS`` is replaced (line 8 holds the fifo)."""

HALVES = "[(2, 8), (16, 16), (8, 1)]"


def test_per_consumer_dims_from_stream_emit_and_simulate(design_file: DesignFile) -> None:
    path = design_file(PER_CONSUMER.replace("DIMS", '{"core[1,0]": ' + HALVES + "}"))
    handle = load_design(path)
    placed, _ = check_design(handle.ir)
    mlir = render_mlir(placed, get_target(placed.device))
    assert ("aie.objectfifo @a(%tile_0_0, {%tile_0_2, %tile_1_2 dimensionsFromStream "
            "[<size = 2, stride = 8>, <size = 16, stride = 16>, <size = 8, stride = 1>]}, "
            "2 : i32)") in mlir
    result = simulate(handle)
    assert result.passed, [c.line() for c in result.checks]
    assert not np.array_equal(result.outputs["out0"], result.outputs["out1"])


def test_one_layout_for_every_consumer_still_applies_to_all(design_file: DesignFile) -> None:
    path = design_file(PER_CONSUMER.replace("DIMS", HALVES))
    placed, _ = check_design(load_design(path).ir)
    assert [c.dims for c in placed.fifo("a").consumers][0] == \
        [c.dims for c in placed.fifo("a").consumers][1] != ()


def _error(path: Path) -> str:
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    return str(e.value)


def test_per_consumer_dims_name_a_consumer(design_file: DesignFile) -> None:
    path = design_file(PER_CONSUMER.replace("DIMS", '{"core[3,0]": ' + HALVES + "}"))
    assert _error(path) == (
        "d.py:7: error [dma dims]: dims_from_stream of fifo 'a' names core[3,0], which do not "
        "consume it\n"
        "  found: core[3,0]\n"
        "  fix: key it by the consuming core's name (e.g. 'core[0,1]') or 'memtile'/'shim'; "
        "consumers: core[0,0], core[1,0]")


def test_per_consumer_dims_are_keyed_by_name(design_file: DesignFile) -> None:
    path = design_file(PER_CONSUMER.replace("DIMS", "{1: " + HALVES + "}"))
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value).splitlines()[0] == (
        "d.py:7: error [dma dims]: fifo 'a' has dims_from_stream={1: [(2, 8), (16, 16), (8, 1)]}")


def test_each_consumer_layout_is_checked_on_its_own(design_file: DesignFile) -> None:
    # a core BD has 3 dimensions; core[1,0]'s has 4
    path = design_file(PER_CONSUMER.replace(
        "DIMS", '{"core[1,0]": [(1, 256), (2, 8), (16, 16), (8, 1)]}'))
    assert _error(path).splitlines()[:2] == [
        "d.py:7: error [dma pattern]: dims_from_stream of 'a' on core[1,0] breaks a DMA rule",
        "  limit: at most 3 dimensions on a core DMA"]


JOIN = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, join, loop, runtime
from aiedsl.kernels import passthrough

@design(device="npu1_2col")
def d(inp: Tensor[512, i32], out: Tensor[512, i32]):
    a = [fifo(Tensor[256, i32], name=f"a{i}") for i in range(2)]
    c = [fifo(Tensor[256, i32], name=f"c{i}") for i in range(2)]
    cj = join(c, name="cj", dims_to_stream=DIMS)
    k = passthrough(Tensor[256, i32])

    @herd(cols=2)
    def core(x, y):
        with a[x].consume() as s, c[x].produce() as t:
            k(s, t)

    with runtime() as rt:
        rt.fill(a[0], inp, (0, [256], [1]))
        rt.fill(a[1], inp, (256, [256], [1]))
        rt.drain(cj, out)

@d.reference
def reference(inp):
    # each 16x16 part sent left half (16 rows of 8) first, then the right half
    return inp.reshape(2, 16, 2, 8).transpose(0, 2, 1, 3).reshape(-1)
'''
"""A two-part join whose output layout ``DIMS`` is replaced (line 9 holds the join)."""


def test_a_join_layout_is_applied_to_each_part(design_file: DesignFile) -> None:
    path = design_file(JOIN.replace("DIMS", "[(2, 8), (16, 16), (8, 1)]"))
    handle = load_design(path)
    check_design(handle.ir)
    result = simulate(handle)
    assert result.passed, [c.line() for c in result.checks]


def test_a_join_layout_past_one_part_is_refused(design_file: DesignFile) -> None:
    path = design_file(JOIN.replace("DIMS", "[(2, 256), (256, 1)]"))
    assert _error(path) == (
        "d.py:9: error [dma pattern]: dims_to_stream of join output 'cj' breaks a DMA rule\n"
        "  limit: the layout stays inside each 256-element part: the memtile sends each part "
        "with it, from the part's offset (mlir-aie's ObjectFifoLinkOp::verify: out of bounds "
        "access in join input)\n"
        "  found: index 511 ([(2, 256), (256, 1)])\n"
        "  d.py:9: the join\n"
        "  fix: write the layout of one part; it is applied to every part in turn")


SPLIT = '''
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough

@design(device="npu1_2col")
def d(inp: Tensor[512, i32], out: Tensor[512, i32]):
    whole = fifo(Tensor[256, i32], name="whole")
    parts = whole.split(2, names=["p0", "p1"], dims_to_stream=[(8, 32), (16, 1)])
    c = [fifo(Tensor[128, i32], name=f"c{i}") for i in range(2)]
    k = passthrough(Tensor[128, i32])

    @herd(cols=2)
    def core(x, y):
        for _ in loop(2):
            with parts[x].consume() as s, c[x].produce() as t:
                k(s, t)

    with runtime() as rt:
        rt.fill(whole, inp)
        rt.drain(c[0], out, (0, [2, 128], [256, 1]))
        rt.drain(c[1], out, (128, [2, 128], [256, 1]))
'''
"""Each part reads 8 runs of 16, 32 apart: p0's reach into p1's half of the tile."""


def test_a_split_part_reading_another_part_is_refused(design_file: DesignFile) -> None:
    assert _error(design_file(SPLIT)) == (
        "d.py:7: error [dma pattern]: dims_to_stream of split part 'p0' breaks a DMA rule\n"
        "  limit: a part's layout reads only its own 128 elements [0, 128) of the parent: "
        "mlir-aie guards each part with its own lock pair, so elements up to 239 may not be "
        "written yet, or be the next element's, while it is sent (the result would depend on "
        "timing)\n"
        "  found: index 239 from offset 0 ([(8, 32), (16, 1)])\n"
        "  d.py:7: the split\n"
        "  fix: arrange the parent in the runtime pattern so each part is one contiguous run, or "
        "give every core the whole tile (broadcast) and let its kernel read its slice")


SPLIT_INPUT = """import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough

@design(device="npu1_2col")
def d(inp: Tensor[512, i32], out: Tensor[512, i32]):
    # each 128-element part written column by column: 16 rows of 8 become 8 rows of 16
    whole = fifo(Tensor[256, i32], name="whole", dims_from_stream=[(2, 4), (16, 8), (4, 1)])
    parts = whole.split(2, names=["p0", "p1"])
    c = [fifo(Tensor[128, i32], name=f"c{i}") for i in range(2)]
    k = passthrough(Tensor[128, i32])

    @herd(cols=2)
    def core(x, y):
        for _ in loop(2):
            with parts[x].consume() as s, c[x].produce() as t:
                k(s, t)

    with runtime() as rt:
        rt.fill(whole, inp)
        rt.drain(c[0], out, (0, [2, 128], [256, 1]))
        rt.drain(c[1], out, (128, [2, 128], [256, 1]))

@d.reference
def reference(inp):
    # stream element j of a part lands at address idx[j] of the part
    idx = np.array([h * 4 + r * 8 + c for h in range(2) for r in range(16) for c in range(4)])
    out = np.empty_like(inp)
    for e in range(2):
        for part in range(2):
            base = e * 256 + part * 128
            blk = np.empty(128, inp.dtype)
            blk[idx] = inp[base:base + 128]
            out[base:base + 128] = blk
    return out
"""
"""A split whose memtile writes each 128-element part of the input with dims_from_stream
(line 8 holds the fifo, 9 the split)."""


def test_a_split_input_layout_is_written_part_by_part(design_file: DesignFile) -> None:
    handle = load_design(design_file(SPLIT_INPUT))
    placed, _ = check_design(handle.ir)
    assert ("aie.objectfifo @whole(%tile_0_0, {%tile_0_1 dimensionsFromStream [<size = 2, "
            "stride = 4>, <size = 16, stride = 8>, <size = 4, stride = 1>]}, 2 : i32)"
            ) in render_mlir(placed, get_target(placed.device))
    result = simulate(handle)
    assert result.passed, [c.line() for c in result.checks]


def test_a_split_input_layout_past_one_part_is_refused(design_file: DesignFile) -> None:
    path = design_file(SPLIT_INPUT.replace("dims_from_stream=[(2, 4), (16, 8), (4, 1)]",
                                           "dims_from_stream=[(2, 128), (16, 8), (4, 1)]"))
    assert _error(path) == (
        "d.py:8: error [dma pattern]: dims_from_stream of split input 'whole' breaks a DMA rule\n"
        "  limit: the layout stays inside each 128-element part: the memtile writes each part "
        "with it, from the part's offset (mlir-aie's ObjectFifoLinkOp::verify: out of bounds "
        "access in distribute output)\n"
        "  found: index 251 ([(2, 128), (16, 8), (4, 1)])\n"
        "  d.py:9: the split\n"
        "  fix: write the layout of one part; it is applied to every part in turn")


SPLIT_GEMM = '''import numpy as np
from aiedsl import Tensor, bf16, design, f32, fifo, herd, runtime
from aiedsl.kernels import block_dims, matmul, unblock_dims, zero

@design(device="npu1_2col")
def d(A: Tensor[64, 32, bf16], B: Tensor[32, 32, bf16], C: Tensor[64, 32, f32]):
    whole = fifo(Tensor[2048, bf16], name="whole")  # A's two 32-row halves, one per core
    a = whole.split([Tensor[32, 32, bf16], Tensor[32, 32, bf16]], names=["a0", "a1"],
                    dims_to_stream=DIMS)
    bm = fifo(Tensor[32, 32, bf16], name="bm")
    b = bm.forward(dims_to_stream=block_dims(32, 32, 8, 4))
    c = [fifo(Tensor[32, 32, f32], name=f"c{i}") for i in range(2)]
    out = [ci.forward(dims_to_stream=unblock_dims(32, 32, 4, 4)) for ci in c]
    mm, z = matmul(32, 32, 32), zero(Tensor[32, 32, f32])

    @herd(cols=2)
    def core(x, y):
        with a[x].consume() as ta, b.consume() as tb, c[x].produce() as tc:
            z(tc)
            mm(ta, tb, tc)

    with runtime() as rt:
        rt.fill(whole, A)
        rt.fill(bm, B)
        rt.drain(out[0], C, (0, [32, 32], [32, 1]))
        rt.drain(out[1], C, (1024, [32, 32], [32, 1]))

@d.reference
def reference(A, B):
    return A.astype(np.float32) @ B.astype(np.float32)
'''
"""A split of A's two halves to two cores' blocked matmuls; ``DIMS`` is each part's layout."""


def test_a_split_part_in_the_kernels_blocks_passes(design_file: DesignFile) -> None:
    result = simulate(load_design(design_file(
        SPLIT_GEMM.replace("DIMS", "block_dims(32, 32, 4, 8)"))))
    assert result.passed, [c.line() for c in result.checks]


def test_a_split_part_in_other_blocks_is_a_layout_error(design_file: DesignFile) -> None:
    msg = _error(design_file(SPLIT_GEMM.replace("DIMS", "block_dims(32, 32, 8, 4)")))
    assert msg.splitlines()[:2] == [
        "d.py:8: error [kernel layout]: kernel 'matmul_bf16_f32_32x32x32_4x8x4' reads 'a' "
        "(32x32xbf16) in 4x8 blocks, but fifo 'a0' delivers it as 8x4 blocks",
        "  limit: 4x8 blocks of the 32x32 tile, blocks row-major"]
    assert msg.splitlines()[-1] == (
        "  fix: give the parts dims_to_stream=block_dims(32, 32, 4, 8) (each read from its "
        "offset)")


def test_a_split_input_written_in_blocks_is_followed_by_the_layout_check(
        design_file: DesignFile) -> None:
    # the memtile writes each half of A in 4x8 blocks (dims_from_stream), the parts go as they
    # are: the cores get their blocks; written in 8x4 blocks they would not
    good = SPLIT_GEMM.replace('name="whole")', 'name="whole", dims_from_stream=W)').replace(
        "dims_to_stream=DIMS", "dims_to_stream=None")
    result = simulate(load_design(design_file(good.replace("=W)", "=unblock_dims(32, 32, 4, 8))"))))
    assert result.passed, [c.line() for c in result.checks]
    msg = _error(design_file(good.replace("=W)", "=unblock_dims(32, 32, 8, 4))")))
    assert msg.splitlines()[0] == (
        "d.py:8: error [kernel layout]: kernel 'matmul_bf16_f32_32x32x32_4x8x4' reads 'a' "
        "(32x32xbf16) in 4x8 blocks, but fifo 'a0' delivers it as 8x4 blocks")
    assert msg.splitlines()[2] == (
        "  found: dims_from_stream [(4, 256), (8, 4), (8, 32), (4, 1)] writing its input, no "
        "dims_to_stream at the memtile")
    assert msg.splitlines()[-1] == (
        "  fix: give the parts dims_to_stream=block_dims(32, 32, 4, 8) (each read from its "
        "offset) and let the memtile write its input in order (no dims_from_stream)")


JOIN_PARTS = '''import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, join, runtime
from aiedsl.kernels import buffer, declare

SIZES = PARTS
def copy_ref(src, dst): dst[...] = src

@design(device="npu1_1col")
def d(inp: Tensor[sum(SIZES), i32], out: Tensor[sum(SIZES), i32]):
    whole = fifo(Tensor[sum(SIZES), i32], name="whole")
    a = whole.split([Tensor[n, i32] for n in SIZES])
    c = [fifo(Tensor[n, i32], name=f"c{i}") for i, n in enumerate(SIZES)]
    cj = join(c, name="cj", dims_to_stream=DIMS)
    ks = [declare(f"copy_{n}", source="copy.cc", entry=f"copy_n<{n}>",
                  args=[buffer("src", Tensor[n, i32]), buffer("dst", Tensor[n, i32], "out")],
                  reference=copy_ref, cycles=n, cost="scalar copy") for n in SIZES]

    @herd(rows=len(SIZES))
    def core(x, y):
        with a[y].consume() as s, c[y].produce() as t:
            ks[y](s, t)

    with runtime() as rt:
        rt.fill(whole, inp)
        rt.drain(cj, out)

@d.reference
def reference(inp):
    return REF
'''
"""A join of parts ``PARTS`` whose output layout ``DIMS`` is replaced (line 13 holds the
join); ``REF`` is what mlir-aie's lowering sends: one BD per part, of the part's length, the
layout applied to it from the part's offset. Each core copies its part (:data:`COPY`, beside it
as copy.cc: any length, as IRON's copy of reduce_max's 1-element results)."""

COPY = ("#include <stdint.h>\ntemplate <int N> void copy_n(const int32_t *src, int32_t *dst) "
        "{ for (int i = 0; i < N; i++) dst[i] = src[i]; }\n")


def _join_parts(design_file: DesignFile, parts: str, dims: str, ref: str) -> Path:
    path = design_file(JOIN_PARTS.replace("PARTS", parts).replace("DIMS", dims).replace(
        "REF", ref))
    (path.parent / "copy.cc").write_text(COPY)
    return path


@pytest.mark.parametrize("parts, dims, ref", [
    # a 4x4 transpose of each part, its outermost size 1 with the whole element's stride (the
    # tester's): it walks one step of 16 in a part, but two of 32 over the whole buffer
    ("(16, 16)", "[(1, 32), (4, 1), (4, 4)]", "inp.reshape(2, 4, 4).transpose(0, 2, 1)"),
    # IRON's vector_reduce_max_memtile (i32): four 1-element parts, outC's dims [(1, 2), (1, 1)]
    ("(1, 1, 1, 1)", "[(1, 2), (1, 1)]", "inp"),
    # parts of different lengths: the second part's BD walks two steps of 16, the first one
    # (in all four dimensions: a shorter layout's outermost size is a wrap the BD keeps)
    ("(16, 32)", "[(1, 16), (1, 1), (4, 1), (4, 4)]",
     "inp.reshape(3, 4, 4).transpose(0, 2, 1)"),
])
def test_a_join_layout_steps_over_each_part_not_the_whole(
        design_file: DesignFile, parts: str, dims: str, ref: str) -> None:
    handle = load_design(_join_parts(design_file, parts, dims, ref + ".reshape(-1)"))
    placed, _ = check_design(handle.ir)
    # the layout is emitted as written, once, for mlir-aie to apply to every part's BD
    shown = ", ".join(f"<size = {s}, stride = {st}>" for s, st in eval(dims))
    assert (f"aie.objectfifo @cj(%tile_0_1 dimensionsToStream [{shown}], {{%tile_0_0}}, 2 : "
            "i32)") in render_mlir(placed, get_target(placed.device))
    result = simulate(handle)
    assert result.passed, [c.line() for c in result.checks]


def test_a_join_layout_walking_past_a_part_is_refused(design_file: DesignFile) -> None:
    # as written it stays inside a part (index 3: mlir-aie's link verifier accepts it), but its
    # outermost dimension steps 4 times by 8 over a 16-element part: up to address 27
    path = _join_parts(design_file, "(16, 16)", "[(1, 8), (1, 1), (1, 1), (4, 1)]", "inp")
    assert _error(path) == (
        "d.py:13: error [dma pattern]: dims_to_stream of 'cj' on memtile breaks a DMA rule\n"
        "  limit: every address inside the 16-element part each BD moves: the memtile moves "
        "each part with its own BD, from the part's offset, the outermost dimension stepping "
        "until the part's 16 elements have moved (mlir-aie's createMemTileDMA); past it lie "
        "other parts, under their own locks\n"
        "  found: address 27 from offset 0 ([(1, 8), (1, 1), (1, 1), (4, 1)])\n"
        "  fix: write the layout of one part; it is applied to every part in turn")


def test_a_join_layout_must_tile_each_part(design_file: DesignFile) -> None:
    # 4 elements per outer step tile the 12-element buffer, not a 6-element part
    path = _join_parts(design_file, "(6, 6)", "[(1, 4), (4, 1)]", "inp")
    assert _error(path).splitlines()[1:3] == [
        "  limit: the inner dimensions tile each part's 6 elements (the memtile moves each part "
        "with its own BD of the part's length, the layout applied to it: mlir-aie's "
        "createMemTileDMA)",
        "  found: 4 elements per outer step ([(1, 4), (4, 1)])"]


SPLIT_PARTS = '''import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels import passthrough

@design(device="npu1_1col")
def d(inp: Tensor[32, i32], out: Tensor[32, i32]):
    whole = fifo(Tensor[32, i32], name="whole", dims_from_stream=FROM)
    parts = whole.split(2, names=["p0", "p1"], dims_to_stream=TO)
    c = [fifo(Tensor[16, i32], name=f"c{i}") for i in range(2)]
    k = passthrough(Tensor[16, i32])

    @herd(rows=2)
    def core(x, y):
        with parts[y].consume() as s, c[y].produce() as t:
            k(s, t)

    with runtime() as rt:
        rt.fill(whole, inp)
        rt.drain(c[0], out, (0, [16], [1]))
        rt.drain(c[1], out, (16, [16], [1]))

@d.reference
def reference(inp):
    return REF
'''
"""A split of 32 elements into two 16-element parts: ``FROM`` is the memtile's layout writing
its input (line 7), ``TO`` the parts' (line 8); ``REF`` is what mlir-aie's lowering delivers."""

TRANSPOSE = "[(1, 32), (4, 1), (4, 4)]"
"""A 4x4 transpose of one part, its outermost stride the whole element's."""


@pytest.mark.parametrize("frm, to", [(TRANSPOSE, "None"), ("None", TRANSPOSE)])
def test_split_layouts_step_over_each_part_not_the_whole(design_file: DesignFile, frm: str,
                                                         to: str) -> None:
    # the memtile writes (sends) each part with its own 16-element BD: one outer step, a
    # stride of 32 within mlir-aie's limit of the 32-element buffer
    handle = load_design(design_file(SPLIT_PARTS.replace("FROM", frm).replace("TO", to).replace(
        "REF", "inp.reshape(2, 4, 4).transpose(0, 2, 1).reshape(-1)")))
    check_design(handle.ir)
    result = simulate(handle)
    assert result.passed, [c.line() for c in result.checks]


def test_a_split_input_layout_walking_past_a_part_is_refused(design_file: DesignFile) -> None:
    path = design_file(SPLIT_PARTS.replace("FROM", "[(1, 16), (1, 1), (1, 1), (8, 1)]").replace(
        "TO", "None").replace("REF", "inp"))
    assert _error(path) == (
        "d.py:7: error [dma pattern]: dims_from_stream of 'whole' on memtile breaks a DMA rule\n"
        "  limit: every address inside the 16-element part each BD moves: the memtile moves "
        "each part with its own BD, from the part's offset, the outermost dimension stepping "
        "until the part's 16 elements have moved (mlir-aie's createMemTileDMA); past it lie "
        "other parts, under their own locks\n"
        "  found: address 23 from offset 0 ([(1, 16), (1, 1), (1, 1), (8, 1)])\n"
        "  d.py:8: the memtile consumes it here\n"
        "  fix: write the layout of one part; it is applied to every part in turn")


def test_a_split_part_layout_is_judged_by_the_addresses_its_bd_walks(
        design_file: DesignFile) -> None:
    # written with 8 outer steps (up to index 31: inside the 32-element buffer, as
    # DMABDOp::verify wants), the part's 16-element BD walks 4 of them: its own part, in order
    handle = load_design(design_file(SPLIT_PARTS.replace("FROM", "None").replace(
        "TO", "[(8, 4), (4, 1)]").replace("REF", "inp")))
    check_design(handle.ir)
    result = simulate(handle)
    assert result.passed, [c.line() for c in result.checks]
    # one outer step further, it reads p1's half: the lock rule, by the addresses walked
    path = design_file(SPLIT_PARTS.replace("FROM", "None").replace(
        "TO", "[(1, 16), (1, 1), (1, 1), (8, 1)]").replace("REF", "inp"))
    assert _error(path).splitlines()[2] == (
        "  found: index 23 from offset 0 ([(1, 16), (1, 1), (1, 1), (8, 1)])")


SPLIT_GEMM_1D = SPLIT_GEMM.replace(
    "def d(A: Tensor[64, 32, bf16],", "def d(A: Tensor[64 * 64, bf16],").replace(
    "# A's two 32-row halves, one per core", "# A's left half: 64 rows of 32, 64 apart").replace(
    "rt.fill(whole, A)", "rt.fill(whole, A, (0, [64, 32], [64, 1]))").replace(
    "return A.astype(np.float32) @", "return A.reshape(64, 64)[:, :32].astype(np.float32) @")
"""SPLIT_GEMM with A a 1-D host tensor, as IRON's whole_array declares it (``A_ty = (M*K,)``):
the fill reads the left half of a 64x64 matrix, so each part is 32 rows of 32, 64 apart in the
host."""


def test_a_split_part_from_a_1d_host_tensor_in_the_kernels_blocks_passes(
        design_file: DesignFile) -> None:
    result = simulate(load_design(design_file(
        SPLIT_GEMM_1D.replace("DIMS", "block_dims(32, 32, 4, 8)"))))
    assert result.passed, [c.line() for c in result.checks]


@pytest.mark.parametrize("dims, found", [
    ("block_dims(32, 32, 8, 4)", "8x4 blocks"),
    # IRON's whole_array with one part's layout left row-major (the tester's wa_part2)
    ("[block_dims(32, 32, 4, 8), [(32, 32), (32, 1)]]", "row-major"),
])
def test_a_split_part_from_a_1d_host_tensor_in_other_blocks_is_a_layout_error(
        design_file: DesignFile, dims: str, found: str) -> None:
    # the rows the fill reads 64 apart are the tile's rows, as a (64, 64) tensor would say
    msg = _error(design_file(SPLIT_GEMM_1D.replace("DIMS", dims)))
    part = "a1" if found == "row-major" else "a0"
    assert msg.splitlines()[0] == (
        "d.py:8: error [kernel layout]: kernel 'matmul_bf16_f32_32x32x32_4x8x4' reads 'a' "
        f"(32x32xbf16) in 4x8 blocks, but fifo '{part}' delivers it as {found}")
    assert msg.splitlines()[-1] == (
        "  fix: give the parts dims_to_stream=block_dims(32, 32, 4, 8) (each read from its "
        "offset)")


def test_a_split_part_that_is_one_run_of_a_1d_host_tensor_is_not_judged(
        design_file: DesignFile) -> None:
    # each 32x32 tile of A is one contiguous run of the host, already in the kernel's 4x8
    # blocks: nothing says how the host program ordered a run, so nothing is claimed about it
    # (were it taken as row-major, this correct design would be refused)
    src = SPLIT_GEMM.replace("def d(A: Tensor[64, 32, bf16],", "def d(A: Tensor[2048, bf16],"
                             ).replace("return A.astype(np.float32) @", (
                                 "return A.reshape(2, 8, 4, 4, 8).transpose(0, 1, 3, 2, 4)"
                                 ".reshape(64, 32).astype(np.float32) @"))
    handle = load_design(design_file(src.replace("DIMS", "None")))
    check_design(handle.ir)
    result = simulate(handle)
    assert result.passed, [c.line() for c in result.checks]


# The tester's L2 transpose (MLIR-AIR's L2-side ChannelGet with sizes/strides): the memtile
# writes what arrives transposed (its S2MM BD's layout).
TRANSPOSE = '''
from aiedsl import Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels import passthrough

H, W = 16, 32

@design(device="npu1_1col")
def d(a: Tensor[H, W, i32], b: Tensor[W, H, i32]):
    l2 = fifo(Tensor[H, W, i32], name="l2"%s)
    l1 = l2.forward(Tensor[W, H, i32], name="l1"%s)
    out = fifo(Tensor[W, H, i32], name="out")
    cp = passthrough(Tensor[W, H, i32])

    @herd()
    def core():
        with l1.consume() as s, out.produce() as t:
            cp(s, t)

    with runtime() as rt:
        rt.fill(l2, a)
        rt.drain(out, b)

@d.reference
def reference(a):
    return a.T.copy()
'''


def test_a_memtile_layout_on_arrival_is_written_as_it_arrives(design_file: DesignFile) -> None:
    """dims_from_stream at the memtile's end of a forward: mlir-aie puts it on the memtile's
    S2MM BD (createMemTileDMA), and the simulator writes what arrives in that order. It was
    refused ("aiedsl applies a memtile's layout as it sends") with two places the layout
    works: the same layout at the core, the inverse as the forward's dims_to_stream. All three
    simulate exactly, to the same output."""
    arrival = load_design(design_file(TRANSPOSE % (", dims_from_stream=[(H, 1), (W, H)]", "")))
    placed, _ = check_design(arrival.ir)
    assert ("aie.objectfifo @l2(%tile_0_0, {%tile_0_1 dimensionsFromStream [<size = 16, "
            "stride = 1>, <size = 32, stride = 16>]}, 2 : i32) : !aie.objectfifo<memref<16x32xi32>>"
            ) in render_mlir(placed, get_target(placed.device))
    a = np.arange(16 * 32, dtype=np.int32).reshape(16, 32)
    outputs = []
    for i, (arrive, send) in enumerate(((", dims_from_stream=[(16, 1), (32, 16)]", ""),
                                        ("", ", dims_from_stream=[(16, 1), (32, 16)]"),
                                        ("", ", dims_to_stream=[(32, 1), (16, 32)]"))):
        result = simulate(load_design(design_file(TRANSPOSE % (arrive, send), f"t{i}.py")),
                          {"a": a})
        assert result.passed, [c.line() for c in result.checks]
        outputs.append(result.outputs["b"])
    assert all(np.array_equal(o, a.T) for o in outputs)


REGROUP = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough

@design(device="npu1_1col")
def rg(inp: Tensor[2048, i32], out: Tensor[2048, i32]):
    a = fifo(Tensor[8, 16, i32], name="a")
    o = fifo(Tensor[8, 16, i32], name="o"%s)
    o2 = o.forward(Tensor[16, 32, i32], depth=1, name="o2"%s)
    k = passthrough(Tensor[8, 16, i32])

    @herd()
    def core():
        for _ in loop(16):
            with a.consume() as s, o.produce() as t:
                k(s, t)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(o2, out)

@rg.reference
def reference(inp):
    # four 8x16 tiles in a row make one 16x32 image, tile t at block row t // 2, column t mod 2
    return inp.reshape(4, 2, 2, 8, 16).transpose(0, 1, 3, 2, 4).reshape(-1)
'''


def test_a_regrouping_forwards_layout_on_arrival_is_written_over_the_whole_output(
        design_file: DesignFile) -> None:
    """AIR's hierarchical example tiles its L2 image as it arrives (four core tiles per
    image): the memtile's BD moves the whole output element (createMemTileDMA gives the
    smaller end the larger one's buffers and length), the layout over all of it. It simulates
    exactly, as its inverse sent does."""
    for i, (arrival, sent) in enumerate((
            (", dims_from_stream=[(2, 256), (2, 16), (8, 32), (16, 1)]", ""),
            ("", ", dims_to_stream=[(2, 256), (8, 16), (2, 128), (16, 1)]"))):
        result = simulate(load_design(design_file(REGROUP % (arrival, sent), f"r{i}.py")))
        assert result.passed, [c.line() for c in result.checks]


# IRON's ml/conv2d_14x14 (conv2dk14.py): the L3->L2 fifo's memtile consumer writes the
# activations with dims_from_stream_per_cons, and the forward to the core sends them with a
# 4-dimension dims_to_stream; folded into one layout it would need 5 (a memtile BD has 4).
K14 = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, loop, runtime, u8
from aiedsl.kernels import passthrough

W = 896; K = 14; C = 4
act = K * K * C * 16
buf = K * W * C

@design(device="npu1_1col")
def k14(I: Tensor[buf, u8], O: Tensor[buf, u8]):
    l3 = fifo(Tensor[buf, u8], name="l3"%s)
    a = l3.forward(Tensor[act, u8], name="a",
                   dims_to_stream=[(2, K * K * C * 8), (K * K // 2, 2 * C), (8, K * K * C),
                                   (2 * C, 1)])
    out = fifo(Tensor[act, u8], name="out")
    cp = passthrough(Tensor[act, u8])

    @herd()
    def core():
        for _ in loop(buf // act):
            with a.consume() as s, out.produce() as t:
                cp(s, t)

    with runtime() as rt:
        rt.fill(l3, I%s)
        rt.drain(out, O)

@k14.reference
def reference(I):
    mem = I.reshape(K, 64, K * C).transpose(1, 0, 2).reshape(-1)  # as the memtile holds it
    blocks = mem.reshape(buf // act, 2, 8, K * K // 2, 2 * C).transpose(0, 1, 3, 2, 4)
    return blocks.reshape(-1)
'''
ARRIVAL = ", dims_from_stream=[(K, K * C), (64, K * K * C), (K * C, 1)]"
FILLED = ", (0, [1, 64, K, K * C], [0, K * C, W * C, 1])"


def test_conv2d_14x14s_memtile_layout_on_arrival_matches_the_runtime_pattern(
        design_file: DesignFile) -> None:
    """The tester's k14.py was refused; its k14b.py, the same reordering in the fill's pattern,
    is the oracle: both simulate exactly to the same output, and the MLIR carries the memtile
    consumer's layout as conv2dk14.py's does."""
    arrival = load_design(design_file(K14 % (ARRIVAL, ""), "k14.py"))
    placed, _ = check_design(arrival.ir)
    assert ("aie.objectfifo @l3(%tile_0_0, {%tile_0_1 dimensionsFromStream [<size = 14, "
            "stride = 56>, <size = 64, stride = 784>, <size = 56, stride = 1>]}, 2 : i32) : "
            "!aie.objectfifo<memref<50176xui8>>") in render_mlir(placed, get_target(placed.device))
    x = np.random.default_rng(3).integers(0, 256, 50176).astype(np.uint8)
    got = simulate(arrival, {"I": x})
    oracle = simulate(load_design(design_file(K14 % ("", FILLED), "k14b.py")), {"I": x})
    assert got.passed and oracle.passed, [c.line() for c in got.checks + oracle.checks]
    assert np.array_equal(got.outputs["O"], oracle.outputs["O"])
    assert not np.array_equal(got.outputs["O"], x)


def test_a_memtile_layout_on_arrival_keeps_the_bd_rules(design_file: DesignFile) -> None:
    """The same rules as any memtile BD: at most 4 dimensions (the fix offers the fill's
    pattern, which k14b.py uses), every address inside the element."""
    five = ", dims_from_stream=[(2, 7), (K, K * C), (64, K * K * C), (7, 8), (8, 1)]"
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(design_file(K14 % (five, ""), "k14.py")).ir)
    assert str(excinfo.value) == (
        "k14.py:11: error [dma pattern]: dims_from_stream of 'l3' on memtile breaks a DMA rule\n"
        "  limit: at most 4 dimensions on a memtile DMA\n"
        "  found: 5 ([(2, 7), (14, 56), (64, 784), (7, 8), (8, 1)])\n"
        "  k14.py:12: the memtile consumes it here\n"
        "  fix: merge contiguous dimensions, or let the runtime's fill bring the element in this "
        "order: its n-d pattern reads the host tensor in the inverse order (rt.fill(fifo, tensor, "
        "(offset, sizes, strides)))")
    wide = ", dims_from_stream=[(K, K * C), (64, K * K * C), (K * C + 4, 1)]"
    with pytest.raises(DesignError) as excinfo:
        check_design(load_design(design_file(K14 % (wide, ""), "k14.py")).ir)
    assert str(excinfo.value).splitlines()[1:3] == [
        "  limit: the inner dimensions tile the 50176-element buffer",
        "  found: 3840 elements per outer step ([(14, 56), (64, 784), (60, 1)])"]
