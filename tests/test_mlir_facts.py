"""Tests for tests/mlir_facts.py: concrete facts of the mlir-aie reference designs, name/era
invariance, and strictness on what it cannot parse."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest
from mlir_facts import (
    DmaFact,
    Facts,
    FifoFact,
    KernelFact,
    LinkFact,
    describe_diff,
    dma_multiset,
    parse_facts,
)
from shared_reference import reference_file

MEMTILE_DIMS = ((16, 256), (16, 4), (4, 64), (4, 1))
C_OUT_DIMS = ((16, 256), (4, 4), (16, 16), (4, 1))


def ref_facts(name: str) -> Facts:
    """Facts of one reference file; skips when the reference tree is not on this machine."""
    return parse_facts(reference_file("mlir-aie", name).read_text())


def test_gemm_topology() -> None:
    f = ref_facts("iron-generated-2025__GEMM.mlir")
    assert f.device == "npu1"  # written npu1_4col
    assert len(f.tiles) == 24
    # 4 A_L3L2 + 4 A_L2L1 + 4 B_L3L2 + 4 B_L2L1 + 16 C_L1L2 + 4 C_L2L3
    assert len(f.fifos) == 36
    assert len(f.links) == 12
    memtile_out = [x for x in f.fifos if x.producer[1] == 1 and x.elem_type == "64x64xi16"]
    assert len(memtile_out) == 8
    assert all(x.dims_to_stream == MEMTILE_DIMS for x in memtile_out)
    assert all(len(x.consumers) == 4 and x.dims_from_stream == ((),) * 4 for x in memtile_out)
    # A_L2L1_0 broadcasts along row 2
    assert FifoFact((0, 1), ((0, 2), (1, 2), (2, 2), (3, 2)), 2, "64x64xi16",
                    MEMTILE_DIMS) in f.fifos
    c_out = FifoFact((0, 1), ((0, 0),), 2, "16384xi16", C_OUT_DIMS)
    join = next(link for link in f.links if link.dsts == (c_out,))
    assert join.src_offsets == (0, 4096, 8192, 12288)
    assert join.dst_offsets == ()
    assert [s.producer for s in join.srcs] == [(0, 2), (0, 3), (0, 4), (0, 5)]
    # IRON's forward links are written ([] [0]); normalized to no offsets
    forwards = [link for link in f.links if len(link.srcs) == len(link.dsts) == 1]
    assert len(forwards) == 8
    assert all(link.src_offsets == link.dst_offsets == () for link in forwards)


def test_gemm_kernels_and_runtime() -> None:
    f = ref_facts("iron-generated-2025__GEMM.mlir")
    # link_with sits on the 16 cores; names are not compared
    assert f.kernels == (
        KernelFact(("64x64xi16",) * 3, (), "mm_64x64x64.o", name="anything"),
        KernelFact(("64x64xi16",), (), "mm_64x64x64.o"),
    )
    assert f.runtime_args == ("262144xi16",) * 3
    assert len(f.dmas) == 20
    a_in = FifoFact((0, 0), ((0, 1),), 2, "4096xi16")
    first_a = next(d for d in f.dmas if d.fifo == a_in and d.arg == 0)
    assert first_a == DmaFact(a_in, 0, 0, (2, 8, 64, 64), (0, 64, 512, 1), 1, False)
    first_c = f.dmas[0]
    assert (first_c.arg, first_c.offset, first_c.sizes, first_c.strides) == (
        2, 0, (2, 2, 256, 64), (131072, 256, 512, 1))
    assert first_c.repeat_count == 1 and first_c.waited
    # the B pattern's outer dim is <size = 1, stride = 0>; the second A load starts at row 256
    assert f.dmas[2].sizes == (1, 2, 512, 64) and f.dmas[2].strides == (0, 256, 512, 1)
    assert f.dmas[3].offset == 131072
    assert sum(d.waited for d in f.dmas) == 4  # the four C drains
    assert sum(dma_multiset(f).values()) == 20


def test_add_one_objfifo() -> None:
    f = ref_facts("npu-xrt__add_one_objFifo.mlir")
    assert f.device == "NPUDEVICE"
    assert f.tiles == frozenset({(0, 0), (0, 1), (0, 2)})
    in0 = FifoFact((0, 0), ((0, 1),), 2, "16xi32")
    in1 = FifoFact((0, 1), ((0, 2),), 2, "8xi32")
    out1 = FifoFact((0, 2), ((0, 1),), 2, "8xi32")
    out0 = FifoFact((0, 1), ((0, 0),), 2, "16xi32")
    assert set(f.fifos) == {in0, in1, out1, out0}
    assert set(f.links) == {LinkFact((in0,), (in1,)), LinkFact((out1,), (out0,))}
    assert f.kernels == ()
    assert f.runtime_args == ("64xi32", "32xi32", "64xi32")
    # out0 has no issue_token but is S2MM, where mlir-aie always issues one; the input's
    # issue_token = true is never waited on
    assert f.dmas == (
        DmaFact(out0, 2, 0, (1, 1, 1, 64), (0, 0, 0, 1), 0, True),
        DmaFact(in0, 0, 0, (1, 1, 1, 64), (0, 0, 0, 1), 0, False),
    )


def test_add_one_func_link_with() -> None:
    f = ref_facts("npu-xrt__add_one_func_link_with_peano.mlir")
    assert f.kernels == (KernelFact(("8xi32", "8xi32", "i32"), (), "add_one_kernel.o"),)
    assert f.links == ()
    assert [(d.arg, d.waited) for d in f.dmas] == [(2, True), (0, False)]


def test_vsop_mul() -> None:
    f = ref_facts("iron-generated-2025__VSOp_Mul_.mlir")
    assert f.device == "npu1_1col"
    assert f.kernels == (
        KernelFact(("1024xi16", "1024xi16", "1xi32", "i32"), (), "scale.o"),)
    assert f.runtime_args == ("4096xi16", "1xi32", "4096xi16")
    factor = FifoFact((0, 0), ((0, 2),), 2, "1xi32")
    # <size = 1, stride = 1> innermost: size-1 dims get stride 0
    assert DmaFact(factor, 1, 0, (1, 1, 1, 1), (0, 0, 0, 0)) in f.dmas
    assert [d.waited for d in f.dmas] == [False, False, True]


def test_vvop_add_keeps_identical_fifos() -> None:
    f = ref_facts("iron-generated-2025__VVOp_Add_.mlir")
    # in1 and in2 have identical facts; a set would count them once
    assert len(f.fifos) == 3
    assert Counter(f.fifos)[FifoFact((0, 0), ((0, 2),), 2, "16xi32")] == 2
    assert f.kernels == ()
    assert [(d.arg, d.sizes, d.waited) for d in f.dmas] == [
        (0, (1, 1, 1, 256), False), (1, (1, 1, 1, 256), False), (2, (1, 1, 1, 256), True)]


def test_copy_extkern() -> None:
    f = ref_facts("iron-generated-2025__Copy_ExtKern_.mlir")
    assert f.kernels == (KernelFact(("1024xui8", "1024xui8", "i32"), (), "passThrough.cc.o"),)
    assert f.runtime_args == ("4096xui8",) * 3
    assert len(f.dmas) == 2 and f.dmas[1].waited and f.dmas[1].arg == 1


def test_per_endpoint_depth_and_distribute_offsets() -> None:
    b = ref_facts("objectfifo-lowering__link_test_broadcast.mlir")
    # {%tile02, %tile01} with [2, 2, 7]: depths follow the consumers when they are sorted
    assert FifoFact((0, 0), ((0, 1), (0, 2)), (2, 7, 2), "3000xi32") in b.fifos
    d = ref_facts("objectfifo-lowering__link_test_distribute_offsets.mlir")
    (link,) = d.links
    assert link.dst_offsets == (0, 16, 36)
    assert [x.elem_type for x in link.dsts] == ["4x4xi32", "20xi32", "12xi32"]


VVADD_2026 = """
module {
  aie.device(npu1_1col) {
    %shim = aie.tile(0, 0)
    %core = aie.tile(0, 2)
    aie.objectfifo @a(%shim, {%core}, 2 : i32) : !aie.objectfifo<memref<16xi32>>
    aie.objectfifo @b(%shim, {%core}, 2 : i32) : !aie.objectfifo<memref<16xi32>>
    aie.objectfifo @c(%core, {%shim}, 2 : i32) : !aie.objectfifo<memref<16xi32>>
    aie.core(%core) {
      aie.end
    }
    aie.runtime_sequence(%x : memref<256xi32>, %y : memref<256xi32>, %z : memref<256xi32>) {
      aiex.npu.dma_memcpy_nd(%x[0, 0, 0, 0][1, 1, 1, 256][0, 0, 0, 1]) {metadata = @a, id = 0 : i64}
      aiex.npu.dma_memcpy_nd(%y[0, 0, 0, 0][1, 1, 1, 256][0, 0, 0, 1]) {metadata = @b}
      aiex.npu.dma_memcpy_nd(%z[0, 0, 0, 0][1, 1, 1, 256][0, 0, 0, 1]) {
          metadata = @c, id = 2 : i64, issue_token = true} : memref<256xi32>
      aiex.npu.dma_wait {symbol = @c}
    }
  }
}
"""


def test_2026_and_2025_spellings_agree() -> None:
    iron = ref_facts("iron-generated-2025__VVOp_Add_.mlir")
    new = parse_facts(VVADD_2026)
    assert new == iron, describe_diff(new, iron)


RENAMED_LINK_WITH = """
module {
  aie.device(NPUDEVICE) {   // comments and locations are ignored
    %s = aie.tile(0, 0) loc("x.py":3:4)
    %c = aie.tile(0, 2)
    func.func private @renamed(memref<8xi32>, memref<8xi32>, i32)
        attributes {link_with = "add_one_kernel.o"}
    aie.objectfifo @q_out(%c, {%s}, 2 : i32) : !aie.objectfifo<memref<8xi32>>
    aie.objectfifo @q_in(%s,
        {%c}, 2) : !aie.objectfifo<memref<8xi32>>
    %0 = aie.core(%c) {
      aie.end
    }
    aie.runtime_sequence @seq(%a: memref<64xi32>, %unused: memref<32xi32>, %b: memref<64xi32>) {
      %k64 = arith.constant 64 : i64
      %k1 = arith.constant 1 : i64
      aiex.npu.dma_memcpy_nd(%b[0, 0, 0, 0][%k1, %k1, %k1, %k64][0, 0, 0, %k1])
          {id = 7 : i64, metadata = @q_out} : memref<64xi32>
      aiex.npu.dma_memcpy_nd(%a[0,0,0,0][1,1,1,64][0,0,0,1]) {
          metadata = @q_in,
          id = 3 : i64, issue_token = true}
      aiex.npu.dma_wait { symbol = @q_out }
    }
  }
}
"""


def test_names_ssa_and_formatting_do_not_matter() -> None:
    original = ref_facts("npu-xrt__add_one_func_link_with_peano.mlir")
    renamed = parse_facts(RENAMED_LINK_WITH)
    assert renamed == original, describe_diff(renamed, original)
    assert describe_diff(renamed, original) == "no differences"
    assert renamed.kernels[0].name == "renamed"


def test_describe_diff_reports_order_and_content() -> None:
    f = ref_facts("iron-generated-2025__GEMM.mlir")
    shuffled = dataclasses.replace(f, dmas=tuple(reversed(f.dmas)))
    assert shuffled != f and dma_multiset(shuffled) == dma_multiset(f)
    assert "position(s) differ" in describe_diff(shuffled, f)
    changed = parse_facts(RENAMED_LINK_WITH.replace("[1,1,1,64]", "[1,1,2,32]"))
    text = describe_diff(changed, parse_facts(RENAMED_LINK_WITH))
    assert "dmas (waited ignored) only in a" in text and "(1, 1, 2, 32)" in text


@pytest.mark.parametrize("old, new", [
    # missing comma between consumers and depth
    ("{%c}, 2) :", "{%c} 2) :"),
    ("aie.objectfifo.link", None),
    # unknown tile
    ("@q_out(%c,", "@q_out(%nope,"),
    # unresolved SSA value in an access pattern
    ("[%k1, %k1, %k1, %k64]", "[%k1, %k1, %k1, %k65]"),
    # a wait on an MM2S fifo whose DMA issued no token
    ("{ symbol = @q_out }", "{ symbol = @q_in }\n      aiex.npu.dma_wait { symbol = @q_in }"),
    # hand-written data movement cannot be represented
    ("%0 = aie.core", "aie.flow(%s, DMA : 0, %c, DMA : 0)\n    %0 = aie.core"),
    # unknown runtime op
    ("%k64 = arith", "aiex.npu.write32 {address = 0 : ui32, value = 1 : ui32}\n      %k64 = arith"),
])
def test_strictness(old: str, new: str | None) -> None:
    if new is None:
        text = RENAMED_LINK_WITH.replace(
            "%0 = aie.core", "aie.objectfifo.link [@q_in] -> @q_out ([] [])\n    %0 = aie.core")
    else:
        assert old in RENAMED_LINK_WITH
        text = RENAMED_LINK_WITH.replace(old, new)
    with pytest.raises(ValueError):
        parse_facts(text)


def test_malformed_objectfifo_line_is_reported() -> None:
    bad = RENAMED_LINK_WITH.replace("{%s}, 2 : i32)", "{%s}, 2 : i32")
    with pytest.raises(ValueError, match="aie.objectfifo @q_out"):
        parse_facts(bad)


def test_dma_bd_length_must_match_pattern() -> None:
    path = reference_file("mlir-aie", "iron-generated-2025__VVOp_Add_.mlir")
    text = path.read_text().replace("memref<256xi32>, 0, 256,", "memref<256xi32>, 0, 128,", 1)
    with pytest.raises(ValueError, match="length"):
        parse_facts(text)
