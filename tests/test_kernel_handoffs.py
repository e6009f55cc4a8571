"""A blocked tile read by the next kernel in the blocks it was written in (checks/
kernel_handoffs.py): in a core's program, and from core to core."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.loader import load_design

DesignFile = Callable[..., Path]


CORE_TO_CORE = '''
import numpy as np
from aiedsl import Tensor, bf16, channel, design, f32, fifo, herd, memtile, runtime
from aiedsl.kernels import block_dims, buffer, declare, matmul, unblock_dims, zero

def copy(x, y):
    y[...] = x

@design(device="npu1_1col")
def d(A: Tensor[32, 32, bf16], B: Tensor[32, 32, bf16], C: Tensor[32, 32, f32]):
    mm = matmul(32, 32, 32)
    cp = declare("copy_f32_32x32", source="passthrough.cc", entry="passthrough<float, 1024>",
                 reference=copy, args=[buffer("x", Tensor[32, 32, f32], blocks=BLOCKS),
                                       buffer("y", Tensor[32, 32, f32], "out", blocks=(4, 4))],
                 cycles=128, cost="test")
    a = channel(Tensor[32, 32, bf16], shape=[1], via=memtile,
                dims_to_stream=block_dims(32, 32, 4, 8), name="a")
    b = channel(Tensor[32, 32, bf16], shape=[1], via=memtile,
                dims_to_stream=block_dims(32, 32, 8, 4), name="b")
    h = fifo(Tensor[32, 32, f32], name="h")
    c = channel(Tensor[32, 32, f32], shape=[1], via=memtile,
                dims_to_stream=unblock_dims(32, 32, 4, 4), name="c")
    z = zero(Tensor[32, 32, f32])

    @herd(anchor=(0, 2))
    def first():
        with a[0].consume() as ta, b[0].consume() as tb, h.produce() as th:
            z(th)
            mm(ta, tb, th)

    @herd(anchor=(0, 3))
    def second():
        with h.consume() as th, c[0].produce() as tc:
            cp(th, tc)

    with runtime() as rt:
        rt.fill(a[0], A)
        rt.fill(b[0], B)
        rt.drain(c[0], C)

@d.reference
def reference(A, B):
    return A.astype(np.float32) @ B.astype(np.float32)
'''


def test_a_tile_from_core_to_core_is_read_in_the_blocks_it_was_written_in(
        design_file: DesignFile) -> None:
    with pytest.raises(DesignError) as e:
        check_design(load_design(design_file(CORE_TO_CORE.replace("BLOCKS", "(4, 8)"))).ir)
    assert str(e.value).splitlines()[0] == (
        "d.py:33: error [kernel layout]: kernel 'copy_f32_32x32' reads 'x' (an element of fifo "
        "'h') in 4x8 blocks, but kernel 'matmul_bf16_f32_32x32x32_4x8x4' wrote it ('c') in 4x4 "
        "blocks")
    check_design(load_design(design_file(CORE_TO_CORE.replace("BLOCKS", "(4, 4)"))).ir)


IN_CORE = CORE_TO_CORE.replace(
    "fifo, herd, memtile", "herd, local, memtile").replace(
    '    h = fifo(Tensor[32, 32, f32], name="h")\n',
    '    acc = local(Tensor[32, 32, f32], name="acc")\n').replace(
    """        with a[0].consume() as ta, b[0].consume() as tb, h.produce() as th:
            z(th)
            mm(ta, tb, th)

    @herd(anchor=(0, 3))
    def second():
        with h.consume() as th, c[0].produce() as tc:
            cp(th, tc)
""", """        with a[0].consume() as ta, b[0].consume() as tb:
            z(acc)
            mm(ta, tb, acc)
        with c[0].produce() as tc:
            cp(acc, tc)
""")


def test_a_tile_read_in_other_blocks_than_a_kernel_wrote_it_is_refused(
        design_file: DesignFile) -> None:
    """(an int8 MLP tester) A requantize written for npu1's 4x8 blocks read npu2's matmul's
    8x8 ones from a core-local accumulator: check passed, and sim failed 55% of the outputs
    with no hint. Here an f32 C a matmul writes in 4x4 blocks, copied by a kernel that reads
    it in 4x8; a zero between (no blocks) says nothing."""
    with pytest.raises(DesignError) as e:
        check_design(load_design(design_file(IN_CORE.replace("BLOCKS", "(4, 8)"))).ir)
    assert str(e.value) == (
        "d.py:30: error [kernel layout]: kernel 'copy_f32_32x32' reads 'x' (core-local 'acc') "
        "in 4x8 blocks, but kernel 'matmul_bf16_f32_32x32x32_4x8x4' wrote it ('c') in 4x4 "
        "blocks\n"
        "  limit: a tile is read in the order it was written in\n"
        "  found: 4x4 written, 4x8 read\n"
        "  d.py:28: the call of 'matmul_bf16_f32_32x32x32_4x8x4' that wrote it\n"
        "  fix: declare 'x' of 'copy_f32_32x32' with blocks=(4, 4) (and read it so), or write "
        "it in 4x8 blocks; a kernel written for one device's mmul shape takes the other's from "
        "the library kernel (mm.ir.params)")
    check_design(load_design(design_file(IN_CORE.replace("BLOCKS", "(4, 4)"))).ir)


REBLOCK = '''    rb = declare("reblock_f32_32x32", source="zero.cc", entry="zero<float, 1024>",
                 reference=lambda x: None, args=[buffer("x", Tensor[32, 32, f32], "inout")],
                 cycles=128, cost="test")
    a = channel('''


@pytest.mark.parametrize("design", ["core to core", "in a core"])
def test_a_call_declaring_no_blocks_between_leaves_the_order_unjudged(
        design_file: DesignFile, design: str) -> None:
    """(a reviewer) An in-place call with no blocks between the writer and the reader (it may
    re-block the tile) left the order unknown in a core, but not from core to core."""
    text = (CORE_TO_CORE if design == "core to core" else IN_CORE).replace("BLOCKS", "(4, 8)")
    text = text.replace("    a = channel(", REBLOCK, 1)
    text = text.replace("            mm(ta, tb, th)\n", "            mm(ta, tb, th)\n"
                        "            rb(th)\n").replace(
        "            mm(ta, tb, acc)\n", "            mm(ta, tb, acc)\n            rb(acc)\n")
    check_design(load_design(design_file(text)).ir)


def test_blocks_of_one_order_are_one_layout(design_file: DesignFile) -> None:
    """(a reviewer) 4x4 and 8x4 blocks of a 32x4 tile are both row-major: the tuples were
    compared, and a legal design refused."""
    text = IN_CORE.replace("BLOCKS", "(4, 8)")
    for old, new in (("Tensor[32, 32, bf16]", "Tensor[32, 4, bf16]"),
                     ("Tensor[32, 32, f32]", "Tensor[32, 4, f32]")):
        text = text.replace(old, new)
    # a 32x4 f32 tile: the copy reads it in 8x4 blocks, the zero and a writer in 4x4
    text = text.replace('buffer("x", Tensor[32, 4, f32], blocks=(4, 8))',
                        'buffer("x", Tensor[32, 4, f32], blocks=(8, 4))')
    text = text.replace("mm(ta, tb, acc)", "cp(acc, acc)").replace(
        "    mm = matmul(32, 32, 32)\n", "")
    path = design_file(text)
    d = load_design(path).ir
    from aiedsl.checks.kernel_handoffs import check_kernel_handoffs
    check_kernel_handoffs(d)  # written in 4x4 blocks (y), read in 8x4 (x): one order


FROM_HOST = '''
import numpy as np
from aiedsl import Tensor, channel, design, fifo, herd, i16, i32, memtile, runtime
from aiedsl.kernels import block_dims, matmul, unblock_dims, zero

@design(device="npu1_1col")
def g(A: Tensor[16, 16, i16], B: Tensor[16, 16, i16], C: Tensor[16, 16, i32]):
    mm = matmul(16, 16, 16, i16, i32)
    r, s, t = (mm.ir.params[p] for p in "rst")
    fa = A_FIFO
    fb = channel(Tensor[16, 16, i16], shape=[1], via=memtile,
                 dims_to_stream=block_dims(16, 16, s, t), name="fb")
    fc = C_FIFO
    z = zero(Tensor[16, 16, i32])

    @herd()
    def core():
        with fa[0].consume() as ta, fb[0].consume() as tb, fc[0].produce() as tc:
            z(tc)
            mm(ta, tb, tc)

    with runtime() as rt:
        rt.fill(fa[0], A)
        rt.fill(fb[0], B)
        rt.drain(fc[0], C)

@g.reference
def reference(A, B):
    return (A.astype(np.int64) @ B.astype(np.int64)).astype(np.int32)
'''
PACKED_A = ('channel(Tensor[16, 16, i16], shape=[1], via=memtile, '
            'dims_to_stream=block_dims(16, 16, r, s), name="fa")')
UNPACKED_C = ('channel(Tensor[16, 16, i32], shape=[1], via=memtile, '
              'dims_to_stream=unblock_dims(16, 16, r, t), name="fc")')


@pytest.mark.parametrize("a, c, note", [
    ('[fifo(Tensor[16, 16, i16], name="fa")]', UNPACKED_C,
     "d.py:19: note: kernel 'matmul_i16_i32_16x16x16_4x4x4' reads 'a' in 4x4 blocks, and the "
     "runtime fills fifo 'fa' straight from the host (no memtile between): the host must hold "
     "each 16x16 tile in those blocks already; one held row-major gives wrong numbers: send it "
     "through a memtile that packs it, channel(..., via=memtile, dims_to_stream=block_dims(16, "
     "16, 4, 4))"),
    (PACKED_A, '[fifo(Tensor[16, 16, i32], name="fc")]',
     "d.py:19: note: kernel 'matmul_i16_i32_16x16x16_4x4x4' writes 'c' in 4x4 blocks, and the "
     "runtime drains fifo 'fc' straight to the host (no memtile between): the host gets each "
     "16x16 tile in those blocks; to get it row-major, send it through a memtile that unpacks "
     "it, channel(..., via=memtile, dims_to_stream=unblock_dims(16, 16, 4, 4))"),
])
def test_a_blocked_tile_to_or_from_the_host_with_no_memtile_is_noted(
        design_file: DesignFile, a: str, c: str, note: str) -> None:
    """(a first-week student) A GEMM whose fifos the runtime fills and drains straight, the
    natural first one, passed check and failed every element in sim with no hint. A host may
    hold its tiles in the blocks already (the library's conv2d tests hand over pre-blocked
    weights), so it is a note: said by check and under the FAIL. With the fixes it gives, the
    design passes, noted no more."""
    from aiedsl.notes import design_notes
    from aiedsl.sim import simulate

    handle = load_design(design_file(FROM_HOST.replace("A_FIFO", a).replace("C_FIFO", c)))
    check_design(handle.ir)
    assert [n.line() for n in design_notes(handle.ir)] == [note]
    result = simulate(handle)
    assert not result.passed and result.checks[0].hints[-1] == note.replace(": note: ", ": ")
    fixed = load_design(design_file(FROM_HOST.replace("A_FIFO", PACKED_A).replace(
        "C_FIFO", UNPACKED_C)))
    assert design_notes(fixed.ir) == [] and simulate(fixed).passed
