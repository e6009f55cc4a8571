"""Runtime parameters: ``rtp(...)`` buffers the runtime writes (``rt.rtp_write``) and cores read
before kernel calls; the threshold design, the emitted MLIR, allocation, the instruction-stream
model, the simulator and the rejections, word for word."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from aiedsl.checks import check_design
from aiedsl.codegen.mlir import render_mlir
from aiedsl.errors import DesignError
from aiedsl.ir.runtime import RtpWrite
from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.sim import SimFault
from aiedsl.sim.shim import ShimRtpWrite, diff_program, shim_program
from aiedsl.targets import get_target
from aiedsl.toolchain.insts import TileWrite, decode

DesignFile = Callable[..., Path]

BASE = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, loop, rtp, runtime, u8
from aiedsl.kernels import threshold
@design(device="npu1_1col")
def d(inp: Tensor[1024, u8], out: Tensor[1024, u8]):
    a = fifo(Tensor[512, u8], name="a")
    b = fifo(Tensor[512, u8], name="b")
    thr = rtp(Tensor[16, i32], name="thr")
    k = threshold(512)

    @herd()
    def core():
        for _ in loop(2):
            with a.consume() as s, b.produce() as t:
                k(s, t, thr[0], 512)

    with runtime() as rt:
        rt.rtp_write(thr, 0, 7)
        rt.fill(a, inp)
        rt.drain(b, out)

@d.reference
def reference(inp):
    return np.minimum(inp, 7)
'''
"""A one-core threshold whose lines are pinned by the messages below (line 15: the read,
18: the write, 19: the fill, 20: the drain)."""


def _variant(**replace: str) -> str:
    src = BASE
    for old, new in replace.items():
        old = {"read": "k(s, t, thr[0], 512)", "write": "rt.rtp_write(thr, 0, 7)",
               "decl": 'thr = rtp(Tensor[16, i32], name="thr")'}[old]
        assert old in src
        src = src.replace(old, new)
    return src


def load_error(path: Path) -> str:
    with pytest.raises(DesignError) as e:
        load_design(path)
    return str(e.value)


def check_error(path: Path) -> str:
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    return str(e.value)


# -- the shipped design -----------------------------------------------------------------------

def test_threshold_rtp_runs_twice_with_two_thresholds(in_root: Path) -> None:
    """One invocation: threshold 50 on the first pass, 200 on the second, against numpy."""
    # every pixel value, so both thresholds cut something (random inputs are small numbers)
    inp = (np.arange(8192) % 256).astype(np.uint8)
    result = simulate(load_design("designs/threshold_rtp.py"), {"inp": inp})
    assert result.passed, [c.line() for c in result.checks]
    out = result.outputs["out"]
    n = inp.size
    assert (out[:n] == np.minimum(inp, 50)).all()
    assert (out[n:] == np.minimum(inp, 200)).all()
    assert (out[:n] != out[n:]).any()  # the second write really took effect
    # the firmware issues the rtp writes as well as the transfers: the bottleneck names both
    b = result.timing.bottleneck
    assert (b.kind, b.rtp_writes) == ("runtime", 4)
    assert b.sentence().startswith("runtime: issuing the shim DMA tasks and rtp writes one by one")


def test_threshold_rtp_other_thresholds(in_root: Path) -> None:
    d = load_design("designs/threshold_rtp.py", {"THR_A": "255", "THR_B": "3"})
    inp = (np.arange(8192) * 7 % 256).astype(np.uint8)
    result = simulate(d, {"inp": inp})
    assert result.passed
    assert (result.outputs["out"][:8192] == inp).all()
    assert result.outputs["out"][8192:].max() == 3


def test_threshold_rtp_mlir(in_root: Path) -> None:
    """The buffer in the core's tile, the load before the call and the writes in the runtime
    sequence, spelled as mlir-aie's test/Conversion/DmaToNpu/rtp_write.mlir and
    test/npu-xrt/two_col write them."""
    placed, _ = check_design(load_design("designs/threshold_rtp.py").ir)
    lines = [ln.strip() for ln in render_mlir(placed, get_target(placed.device)).splitlines()]
    where = 'loc("designs/threshold_rtp.py":'
    for c in (0, 1):
        assert (f'%rtp_thr{c} = aie.buffer(%tile_{c}_2) {{sym_name = "thr{c}"}} : '
                f'memref<16xi32> {where}32:0)') in lines
    i = lines.index(f"%rtp5 = memref.load %rtp_thr0[%idx6] : memref<16xi32> {where}39:0)")
    assert lines[i - 1] == "%idx6 = arith.constant 0 : index"
    assert lines[i + 1].startswith("func.call @threshold_u8_512(%view3_0, %view4_0, %rtp5, %arg7)")
    writes = [ln for ln in lines if ln.startswith("aiex.npu.rtp_write")]
    assert writes == [f"aiex.npu.rtp_write(@thr{c}, 0, {v}) {where}44:0)"
                      for v in (50, 200) for c in (0, 1)]
    # the second pair comes after both waits of the first pass
    seq = [ln.split("(")[0].split(" {")[0] for ln in lines
           if ln.startswith(("aiex.npu.rtp_write", "aiex.npu.dma_wait"))]
    assert seq == ["aiex.npu.rtp_write"] * 2 + ["aiex.npu.dma_wait"] * 2 + \
        ["aiex.npu.rtp_write"] * 2 + ["aiex.npu.dma_wait"] * 2


def test_rtp_buffer_is_allocated_with_the_fifo_buffers(in_root: Path) -> None:
    """aie-assign-buffer-addresses places it with the core's buffers (after the fifo buffers in
    IR order, largest first), and the memory check counts it."""
    placed, table = check_design(load_design("designs/threshold_rtp.py").ir)
    assert placed.physical is not None
    bufs = [(b.name, b.address, b.bank) for b in placed.physical.buffers if b.tile == (0, 2)]
    # stack 1024 B at 0; the four 512 B fifo buffers round-robin from bank 1; the rtp last
    assert bufs[-1] == ("thr0", 0x600, 0)
    mem = table[(0, 2)].memory
    assert [u.label for u in mem][-1] == "rtp thr0 64 B"
    assert sum(u.amount for u in mem) == 1024 + 4 * 512 + 64


def test_rtp_write_is_a_write32_at_the_buffer_address(in_root: Path) -> None:
    """The simulator's runtime writes where mlir-aie's RtpToWrite32Pattern does (buffer address
    + 4 * index, in the core's tile), and diff_program holds it against a decoded stream."""
    placed, _ = check_design(load_design("designs/threshold_rtp.py").ir)
    steps = [s for s in shim_program(placed, get_target(placed.device)) if isinstance(s, ShimRtpWrite)]
    assert [(s.rtp, s.column, s.row, s.address, s.value) for s in steps] == [
        ("thr0", 0, 2, 0x600, 50), ("thr1", 1, 2, 0x600, 50),
        ("thr0", 0, 2, 0x600, 200), ("thr1", 1, 2, 0x600, 200)]
    # write32 words: op, 0, address (col << 25 | row << 20 | offset), 0, value, size 24
    ops = [(0x00, 0, s.column << 25 | s.row << 20 | s.address, 0, s.value, 24) for s in steps]
    body = [w for op in ops for w in op]
    stream = struct.pack(f"<{4 + len(body)}I", 0x06030100, 0x0102, len(ops),
                         4 * (4 + len(body)), *body)
    program = decode(stream)
    assert [(e.column, e.row, e.address, e.value) for e in program.events
            if isinstance(e, TileWrite)] == [(s.column, s.row, s.address, s.value) for s in steps]
    only_writes = tuple(steps)
    assert diff_program(only_writes, program) == []
    wrong = tuple(s if i else ShimRtpWrite(**{**s.__dict__, "value": 51})
                  for i, s in enumerate(steps))
    assert diff_program(wrong, program) == [
        "0: rtp_write of 'thr0'[0] (designs/threshold_rtp.py:44) writes 0x33 at 1536 of tile "
        "(0, 2) in the simulator, 0x32 at 1536 of tile (0, 2) in the instructions"]


def test_rtp_write_costs_a_register_write(in_root: Path) -> None:
    """Four rtp writes take four register writes of the runtime's time (a third of a shim
    task's firmware time each), the only difference a design without them would show."""
    h = load_design("designs/threshold_rtp.py")
    result = simulate(h)
    tm = get_target("npu1_2col").timing
    assert tm.register_write_s == pytest.approx(tm.shim_task_s / 3)
    assert result.machine.runtime is not None
    assert result.machine.runtime.busy == pytest.approx(
        8 * tm.shim_task_s * 1e9 + 4 * tm.register_write_s * 1e9)


# -- the simulator ----------------------------------------------------------------------------

def test_sim_reads_the_value_written_before_the_call(design_file: DesignFile) -> None:
    path = design_file(_variant(write="rt.rtp_write(thr, 0, 100)\n        rt.rtp_write(thr, 1, "
                                      "9)"))
    inp = (np.arange(1024) % 256).astype(np.uint8)
    result = simulate(load_design(path), {"inp": inp}, check=False)
    assert (result.outputs["out"] == np.minimum(inp, 100)).all()


def test_sim_fault_when_a_core_reads_an_unwritten_slot(design_file: DesignFile) -> None:
    """The checks refuse this design; the simulator, given it anyway, says which read found no
    value."""
    h = load_design(design_file(BASE))
    placed, _ = check_design(h.ir)
    unwritten = placed.model_copy(update={"runtime": tuple(
        op for op in placed.runtime if not isinstance(op, RtpWrite))})
    with pytest.raises(SimFault) as e:
        simulate(h, placed=unwritten)
    assert str(e.value) == (
        "d.py:15: error [rtp]: core[0,0] reads rtp 'thr'[0] at cycle 6558, before the runtime "
        "writes it\n"
        "  limit: a slot is read after an rtp_write of it (the memory holds no value before)\n"
        "  found: no write by then\n"
        "  d.py:15: the call that reads it (core[0,0])\n"
        "  fix: rt.rtp_write('thr', 0, ...) before the fills that feed this core")


# -- rejections -------------------------------------------------------------------------------

def test_write_index_out_of_range(design_file: DesignFile) -> None:
    assert load_error(design_file(_variant(write="rt.rtp_write(thr, 16, 7)"))) == (
        "d.py:18: error [runtime]: rt.rtp_write of 'thr' at index 16\n"
        "  limit: an int from 0 to 15 (it holds 16 i32)\n"
        "  found: 16\n"
        "  fix: write a slot from 0 to 15, or declare it larger")


def test_write_value_out_of_range(design_file: DesignFile) -> None:
    assert load_error(design_file(_variant(write="rt.rtp_write(thr, 0, 2**31)"))) == (
        "d.py:18: error [runtime]: rt.rtp_write of 'thr'[0] with value 2147483648\n"
        "  limit: i32 values from -2147483648 to 2147483647: an int (numpy integers too)\n"
        "  found: 2147483648\n"
        "  fix: write an int the slot's type can hold")


def test_write_of_a_float_is_refused(design_file: DesignFile) -> None:
    assert load_error(design_file(_variant(write="rt.rtp_write(thr, 0, 7.5)"))) == (
        "d.py:18: error [runtime]: rt.rtp_write of 'thr'[0] with value 7.5\n"
        "  limit: i32 values from -2147483648 to 2147483647: an int (numpy integers too)\n"
        "  found: 7.5\n"
        "  fix: write an int the slot's type can hold (int(7.5) drops the fraction)")


def test_write_of_numpy_integers(design_file: DesignFile) -> None:
    """np.int32(100) was refused with a limit it lies inside; a numpy index too."""
    path = design_file(_variant(write="rt.rtp_write(thr, np.int64(0), np.int32(50))"))
    writes = [op for op in load_design(path).ir.runtime if isinstance(op, RtpWrite)]
    assert [(w.index, w.value, type(w.value)) for w in writes] == [(0, 50, int)]


def test_write_of_an_unknown_name(design_file: DesignFile) -> None:
    assert load_error(design_file(_variant(write='rt.rtp_write("thx", 0, 7)'))) == (
        "d.py:18: error [runtime]: rt.rtp_write of 'thx', which is not an rtp of this design\n"
        "  limit: the design's rtps: 'thr'\n"
        "  found: 'thx'\n"
        "  fix: declare it with rtp(Tensor[16, i32], name=...) in the design function and pass "
        "what rtp() returned (or its name)")


def test_write_by_name_is_accepted(design_file: DesignFile) -> None:
    d = load_design(design_file(_variant(write='rt.rtp_write("thr", 0, 7)'))).ir
    assert d.runtime[0] == RtpWrite(rtp="thr", index=0, value=7, loc=d.runtime[0].loc)


def test_read_index_out_of_range(design_file: DesignFile) -> None:
    assert load_error(design_file(_variant(read="k(s, t, thr[16], 512)"))) == (
        "d.py:15: error [rtp]: rtp 'thr' is read at index 16\n"
        "  limit: an int from 0 to 15 (it holds 16 i32)\n"
        "  found: 16\n"
        "  fix: read a slot from 0 to 15, or declare it larger")


def test_read_in_a_core_it_is_not_placed_in(design_file: DesignFile) -> None:
    src = _variant().replace('@design(device="npu1_1col")', '@design(device="npu1_2col")')
    src = src.replace("@herd()\n    def core():", "@herd(cols=2)\n    def core(x, y):")
    src = src.replace("a.consume()", "(a if x == 0 else a2).consume()")
    src = src.replace("b.produce()", "(b if x == 0 else b2).produce()")
    src = src.replace('    thr = rtp(', '    a2 = fifo(Tensor[512, u8], name="a2")\n'
                      '    b2 = fifo(Tensor[512, u8], name="b2")\n    thr = rtp(')
    assert load_error(design_file(src)) == (
        "d.py:17: error [rtp]: rtp 'thr' is read by core[1,0], but it lives in core[0,0]\n"
        "  limit: an rtp is a buffer in the memory of the one core that reads it (the first "
        "core whose function reads it)\n"
        "  found: core[1,0]\n"
        "  d.py:17: core[0,0] reads it\n"
        "  fix: declare one rtp per core, e.g. thr = [rtp(Tensor[16, i32], name=f\"thr{i}\") "
        "for i in range(cols)], and read thr[x][0]")


def test_the_per_core_fix_follows_the_herds_layout() -> None:
    """A herd laid out in rows was told to index its rtps by x, always 0 there: every core
    would read the first (a tester)."""
    from aiedsl.lang.rtp import _per_core_fix

    assert _per_core_fix("core[0,0]", "core[0,1]", (1, 4)).endswith(
        "for i in range(rows)], and read thr[y][0]")
    assert _per_core_fix("core[0,0]", "core[1,0]", (4, 1)).endswith(
        "for i in range(cols)], and read thr[x][0]")
    assert _per_core_fix("core[0,0]", "core[1,1]", (2, 2)).endswith(
        "for i in range(cols) for j in range(rows)}, and read thr[x, y][0]")
    assert _per_core_fix("a[0,0]", "b[0,0]", None).endswith("and read thr[x, y][0]")


GRAY_2X2 = '''
from aiedsl import Tensor, channel, design, herd, i32, local, loop, memtile, rtp, runtime, u8
from aiedsl.kernels import rgba2gray, threshold
import numpy as np

W, H, THR, COLS, ROWS = 64, 16, 128, 2, 2

@design(device="npu1_2col")
def gray4(img: Tensor[H, W * 4, u8], out: Tensor[H, W, u8]):
    cin = channel(Tensor[W * 4, u8], shape=[COLS, ROWS], via=memtile, split=1)
    cout = channel(Tensor[W, u8], shape=[COLS, ROWS], via=memtile, join=1)
    tmp = local(Tensor[W, u8])
    thr = rtp(Tensor[16, i32], name="thr")
    to_gray, trunc = rgba2gray(W), threshold(W)

    @herd(cols=COLS, rows=ROWS)
    def core(x, y):
        for _ in loop(H // (COLS * ROWS)):
            with cin[x, y].consume() as src, cout[x, y].produce() as dst:
                to_gray(src, tmp)
                trunc(tmp, dst, thr[0], W)

    with runtime() as rt:
        for x in range(COLS):
            for y in range(ROWS):
                rt.rtp_write(thr, 0, THR)
        half = H // COLS
        for x in range(COLS):
            rt.fill(cin[x, :], img, (x * half * W * 4, [half * W * 4], [1]))
            rt.drain(cout[x, :], out, (x * half * W, [half * W], [1]))

@gray4.reference
def reference(img):
    px = img.reshape(-1, 4).astype(np.float64)
    g = np.round((77 * px[:, 0] + 150 * px[:, 1] + 29 * px[:, 2]) / 256)  # ties to even
    return np.minimum(g, THR).astype(np.uint8).reshape(H, W)
'''


def test_the_per_core_fix_of_a_two_by_two_herd_works(design_file: DesignFile) -> None:
    """A 2x2 herd's cores [0,0] and [1,0] were told to index by x alone (and, that followed,
    [0,0] and [0,1] by y alone): both fixes fail on the other pair (a tester). The fix, as
    written, builds and passes."""
    message = load_error(design_file(GRAY_2X2))
    assert message.splitlines()[-1] == (
        "  fix: declare one rtp per core, e.g. thr = {(i, j): rtp(Tensor[16, i32], "
        "name=f\"thr{i}_{j}\") for i in range(cols) for j in range(rows)}, and read "
        "thr[x, y][0]")
    fixed = GRAY_2X2.replace(
        'thr = rtp(Tensor[16, i32], name="thr")',
        'thr = {(i, j): rtp(Tensor[16, i32], name=f"thr{i}_{j}") for i in range(COLS) '
        'for j in range(ROWS)}').replace("thr[0], W)", "thr[x, y][0], W)").replace(
        "rt.rtp_write(thr, 0, THR)", "rt.rtp_write(thr[x, y], 0, THR)")
    handle = load_design(design_file(fixed))
    check_design(handle.ir)
    assert simulate(handle).passed


def test_read_outside_a_core(design_file: DesignFile) -> None:
    src = _variant(decl='thr = rtp(Tensor[16, i32], name="thr")\n    v = thr[0]')
    assert load_error(design_file(src)) == (
        "d.py:9: error [rtp]: rtp 'thr' is read outside a core function\n"
        "  fix: read it (thr[0]) inside the @herd function and pass it to a kernel call; the "
        "runtime writes it with rt.rtp_write")


def test_rtp_of_bytes_is_refused(design_file: DesignFile) -> None:
    src = _variant(decl='thr = rtp(Tensor[16, u8], name="thr")')
    assert load_error(design_file(src)) == (
        "d.py:8: error [rtp]: rtp 'thr' holds u8\n"
        "  limit: i32 slots: mlir-aie's rtp_write writes a 32-bit word at 4 * index bytes\n"
        "  found: u8\n"
        "  fix: declare it as Tensor[16, i32] and let the kernel narrow the value")


def test_a_float_rtp_is_told_how_a_float_travels(design_file: DesignFile) -> None:
    """"Let the kernel narrow the value" is no recipe for a float scale (a kernel author's
    tester): its bits go in the i32 slot."""
    src = _variant(decl='thr = rtp(Tensor[16, "float32"], name="thr")')
    assert load_error(design_file(src)).splitlines()[-1] == (
        "  fix: declare it as Tensor[16, i32] and let the kernel narrow the value; a float goes "
        "as its bits: rt.rtp_write(buf, i, int(np.float32(x).view(np.int32))), read in the "
        "kernel as std::bit_cast<float>(slot) (or send it as a fixed-point integer)")


def test_rtp_name_is_validated(design_file: DesignFile) -> None:
    src = _variant(decl='thr = rtp(Tensor[16, i32], name="t hr")')
    assert load_error(design_file(src)).startswith(
        "d.py:8: error [name]: rtp name 't hr' is not a plain name")


def test_rtp_named_like_a_fifo_is_refused(design_file: DesignFile) -> None:
    src = _variant(decl='thr = rtp(Tensor[16, i32], name="a")')
    assert load_error(design_file(src)) == (
        "d.py:8: error [name]: rtp 'a' has the name of a fifo\n"
        "  limit: fifos, kernels and rtps share one MLIR symbol table\n"
        "  found: a\n"
        "  fix: rename the rtp")


LOWERED_NAME_FIX = ("_cons, _buff_<i>, _prod_lock_<i>, _cons_lock_<i> or _shim_alloc are the "
                    "lowering's")


def test_rtp_named_like_a_lowered_buffer_is_refused(design_file: DesignFile) -> None:
    """mlir-aie's objectfifo lowering names the core's buffers of fifo 'a' a_cons_buff_0/1: an
    rtp of that name would be a second definition of the symbol, found only in aiecc."""
    src = _variant(decl='thr = rtp(Tensor[16, i32], name="a_cons_buff_1")',
                   read="k(s, t, a_cons_buff_1[0], 512)",
                   write="rt.rtp_write(a_cons_buff_1, 0, 7)").replace("thr = ", "a_cons_buff_1 = ")
    assert check_error(design_file(src)) == (
        "d.py:8: error [name]: rtp 'a_cons_buff_1' has the name mlir-aie's objectfifo lowering "
        "gives to buffer 1 of fifo 'a' on tile (0, 2)\n"
        "  limit: every symbol of a device is unique, and mlir-aie's objectfifo lowering adds "
        "<fifo>_cons / <fifo>_<i>_cons, <end>_buff_<i>, <end>_prod_lock_<i>, "
        "<end>_cons_lock_<i> and <fifo>_shim_alloc\n"
        "  found: a_cons_buff_1\n"
        f"  fix: rename the rtp: names ending in {LOWERED_NAME_FIX}")


@pytest.mark.parametrize("name", ["a_cons_buff_2", "a_cons_lock", "b_0_cons", "a_shim_alloc_0"])
def test_rtp_named_near_a_lowered_name_is_accepted(design_file: DesignFile, name: str) -> None:
    """Only the names the lowering makes are taken: fifo 'a' has two buffers in the core (no
    a_cons_buff_2), its locks carry an index, and b has one consumer (b_cons, not b_0_cons)."""
    src = _variant(decl=f'{name} = rtp(Tensor[16, i32], name="{name}")',
                   read=f"k(s, t, {name}[0], 512)", write=f"rt.rtp_write({name}, 0, 7)")
    check_design(load_design(design_file(src)).ir)


def test_unread_rtp_is_refused(design_file: DesignFile) -> None:
    src = _variant(read="k(s, t, 3, 512)")
    assert load_error(design_file(src)) == (
        "d.py:8: error [rtp unused]: rtp 'thr' is never read by a core\n"
        "  limit: an rtp lives in the memory of the core that reads it\n"
        "  fix: read it in a core function (thr[0]) and pass it to a kernel call, or remove it")


def test_unwritten_slot_is_refused(design_file: DesignFile) -> None:
    assert check_error(design_file(_variant(write="rt.rtp_write(thr, 1, 7)"))) == (
        "d.py:15: error [rtp unwritten]: core[0,0] reads rtp 'thr'[0], which the runtime never "
        "writes\n"
        "  limit: every slot a core reads is written by rt.rtp_write (the buffer has no initial "
        "value)\n"
        "  found: no rt.rtp_write of it\n"
        "  d.py:8: rtp 'thr' is declared\n"
        "  fix: rt.rtp_write('thr', 0, value) at the start of the runtime sequence")


def test_write_after_the_first_transfer_is_refused(design_file: DesignFile) -> None:
    src = _variant(write="rt.fill(a, inp)\n        rt.rtp_write(thr, 0, 7)").replace(
        "rt.rtp_write(thr, 0, 7)\n        rt.fill(a, inp)\n        rt.drain",
        "rt.rtp_write(thr, 0, 7)\n        rt.drain")
    assert check_error(design_file(src)) == (
        "d.py:19: error [rtp order]: rt.rtp_write of 'thr'[0] comes after the runtime's first "
        "transfer\n"
        "  limit: a slot a core reads is written before the sequence's first transfer (the core "
        "may run as soon as data arrives, and the slot holds no value before its first write)\n"
        "  found: rt.fill of 'a' first\n"
        "  d.py:18: the first transfer\n"
        "  d.py:15: core[0,0] reads the slot\n"
        "  fix: move the rtp_write before the first rt.fill")


RACE = BASE.replace('''        rt.rtp_write(thr, 0, 7)
        rt.fill(a, inp)
        rt.drain(b, out)''', '''        rt.rtp_write(thr, 0, 7)
        rt.fill(a, inp, (0, [512], [1]))
        rt.drain(b, out, (0, [512], [1]))
        {between}rt.rtp_write(thr, 0, 9)
        rt.fill(a, inp, (512, [512], [1]))
        rt.drain(b, out, (512, [512], [1]))''')


def test_rewrite_while_transfers_are_in_flight_is_refused(design_file: DesignFile) -> None:
    assert check_error(design_file(RACE.format(between=""))) == (
        "d.py:21: error [rtp race]: rt.rtp_write of 'thr'[0] races core[0,0]'s calls that read "
        "it: they may see the new value or the old one\n"
        "  limit: a slot is rewritten only when every call the data issued before it may start "
        "has finished, as the drains waited for before it show (the write is one register write: "
        "nothing else orders it with the core)\n"
        "  found: the fills before it let core[0,0] start 1 call that reads the slot; the drains "
        "waited for show 0 finished, so call 1 may read either value\n"
        "  d.py:19: the last rt.fill of 'a' before it\n"
        "  d.py:18: the previous write\n"
        "  fix: before the rtp_write, rt.sync() on the drains of every call filled so far, and "
        "issue the fills of the calls that should see the new value after it")


AHEAD = BASE.replace('''        rt.fill(a, inp)
        rt.drain(b, out)''', '''        rt.fill(a, inp)
        rt.drain(b, out, (0, [512], [1]))
        rt.sync()
        rt.rtp_write(thr, 0, 9)
        rt.drain(b, out, (512, [512], [1]))''')
"""Both halves filled before the sync: the sync waits for the first half's drain only, and the
core may already run the second call (its input is in and an output buffer is free) before the
new value lands, or after: the NPU gives either."""


def test_rewrite_after_a_sync_races_calls_whose_data_was_filled_before_it(
        design_file: DesignFile) -> None:
    # a wait retires its own drain, not every transfer issued before it
    assert check_error(design_file(AHEAD)) == (
        "d.py:22: error [rtp race]: rt.rtp_write of 'thr'[0] races core[0,0]'s calls that read "
        "it: they may see the new value or the old one\n"
        "  limit: a slot is rewritten only when every call the data issued before it may start "
        "has finished, as the drains waited for before it show (the write is one register write: "
        "nothing else orders it with the core)\n"
        "  found: the fills before it let core[0,0] start 2 calls that read the slot; the drains "
        "waited for show 1 finished, so call 2 may read either value\n"
        "  d.py:19: the last rt.fill of 'a' before it\n"
        "  d.py:18: the previous write\n"
        "  fix: before the rtp_write, rt.sync() on the drains of every call filled so far, and "
        "issue the fills of the calls that should see the new value after it")


THROUGH = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, join, loop, rtp, runtime, u8
from aiedsl.kernels import passthrough, threshold
@design(device="npu1_1col")
def d(inp: Tensor[4096, u8], out: Tensor[4096, u8]):
    big = fifo(Tensor[1024, u8], name="big")
    a = big.split(2, names=["a0", "a1"])
    m = [fifo(Tensor[512, u8], name=f"m{i}") for i in range(2)]
    b = [fifo(Tensor[512, u8], name=f"b{i}") for i in range(2)]
    res = join(b, name="res")
    thr = [rtp(Tensor[16, i32], name=f"thr{i}") for i in range(2)]
    k, cp = threshold(512), passthrough(Tensor[512, u8])

    @herd(rows=4)
    def core(x, y):
        if y % 2 == 0:  # copies its part on to the core above, which thresholds it
            for _ in loop(4):
                with a[y // 2].consume() as s, m[y // 2].produce() as t:
                    cp(s, t)
        else:
            for _ in loop(4):
                with m[y // 2].consume() as s, b[y // 2].produce() as t:
                    k(s, t, thr[y // 2][0], 512)

    with runtime() as rt:
        for i in range(2):
            rt.rtp_write(thr[i], 0, 7)
        rt.fill(big, inp, (0, [2048], [1]))
        rt.drain(res, out, (0, [2048], [1]))
        rt.sync()
        for i in range(2):
            rt.rtp_write(thr[i], 0, 9)
        rt.fill(big, inp, (2048, [2048], [1]))
        rt.drain(res, out, (2048, [2048], [1]))

@d.reference
def reference(inp):
    return np.concatenate([np.minimum(inp[:2048], 7), np.minimum(inp[2048:], 9)])
'''
"""Two thresholding cores fed through a memtile split and a copying core each, their results
joined in the memtile: the bounds follow the data through links and cores."""


def test_rewrite_after_sync_through_links_and_cores_is_accepted_and_right(
        design_file: DesignFile) -> None:
    path = design_file(THROUGH)
    check_design(load_design(path).ir)
    inp = (np.arange(4096) * 7 % 256).astype(np.uint8)
    assert simulate(load_design(path), {"inp": inp}).passed


def test_a_downstream_core_that_acquires_before_it_releases_shows_the_calls_finished(
        design_file: DesignFile) -> None:
    """The thresholding cores feed the copying cores, which take their input before they
    release anything: a waited drain of the copy shows every threshold call done, though the
    copying core has not yet released the element it holds. check counted its releases and
    refused a correct design (a tester's Riallto pipeline) with a false rtp race."""
    src = THROUGH.replace("a[y // 2].consume() as s, m[y // 2].produce() as t:\n"
                          "                    cp(s, t)", "a[y // 2].consume() as s, m[y // 2]"
                          ".produce() as t:\n                    k(s, t, thr[y // 2][0], 512)")
    src = src.replace("m[y // 2].consume() as s, b[y // 2].produce() as t:\n"
                      "                    k(s, t, thr[y // 2][0], 512)",
                      "m[y // 2].consume() as s, b[y // 2].produce() as t:\n"
                      "                    cp(s, t)")
    assert src.count("cp(s, t)") == 1 and src.count("k(s, t, thr") == 1
    path = design_file(src)
    check_design(load_design(path).ir)
    inp = (np.arange(4096) * 7 % 256).astype(np.uint8)
    assert simulate(load_design(path), {"inp": inp}).passed


def test_rewrite_with_the_next_fill_ahead_through_links_is_refused(
        design_file: DesignFile) -> None:
    # the second half's fill issued before the write: both thresholding cores may start on it
    src = THROUGH.replace('''        rt.sync()
        for i in range(2):
            rt.rtp_write(thr[i], 0, 9)
        rt.fill(big, inp, (2048, [2048], [1]))''', '''        rt.fill(big, inp, (2048, [2048], [1]))
        rt.sync()
        for i in range(2):
            rt.rtp_write(thr[i], 0, 9)''')
    assert check_error(design_file(src)).splitlines()[0::2] == [
        "d.py:33: error [rtp race]: rt.rtp_write of 'thr0'[0] races core[0,1]'s calls that "
        "read it: they may see the new value or the old one",
        "  found: the fills before it let core[0,1] start 4 calls that read the slot; the "
        "drains waited for show 2 finished, so calls 3 and 4 may read either value",
        "  d.py:27: the previous write"]


def test_rewrite_after_sync_is_accepted_and_each_half_sees_its_value(
        design_file: DesignFile) -> None:
    inp = (np.arange(1024) % 256).astype(np.uint8)
    result = simulate(load_design(design_file(RACE.format(between="rt.sync()\n        "))),
                      {"inp": inp}, check=False)
    out = result.outputs["out"]
    assert (out[:512] == np.minimum(inp[:512], 7)).all()
    assert (out[512:] == np.minimum(inp[512:], 9)).all()


def test_rtp_passed_as_a_buffer_is_refused(design_file: DesignFile) -> None:
    src = _variant(read="k(s, thr[0], 3, 512)")
    assert check_error(design_file(src)) == (
        "d.py:15: error [kernel signature]: argument 1 ('dst') of 'threshold_u8_512' is a "
        "buffer, but core[0,0] passes rtp slot 'thr'[0]\n"
        "  limit: threshold_u8_512(src: 512xu8, dst: 512xu8, thr: i32, n: i32)\n"
        "  found: rtp slot 'thr'[0]\n"
        "  fix: pass an acquired fifo element or a local")


# -- the IR and the rest of the tool chain ----------------------------------------------------

def test_design_json_round_trips_and_output_is_byte_identical(in_root: Path) -> None:
    from aiedsl.ir.design import Design

    a = load_design("designs/threshold_rtp.py").ir
    b = load_design("designs/threshold_rtp.py").ir
    assert Design.model_validate_json(a.model_dump_json()) == a
    assert [r.core for r in a.rtps] == ["core[0,0]", "core[1,0]"]
    pa, _ = check_design(a)
    pb, _ = check_design(b)
    assert render_mlir(pa, get_target(pa.device)) == render_mlir(pb, get_target(pb.device))


def test_kernel_test_of_the_design_uses_the_first_written_value(in_root: Path) -> None:
    from aiedsl.kernels.cases import design_cases

    (case,) = design_cases(load_design("designs/threshold_rtp.py"))
    assert case.scalars == {"thr": 50, "n": 512}


# -- runtime barriers (IRON's WorkerRuntimeBarrier) ---------------------------------------------

GATED = '''
import numpy as np
from aiedsl import Tensor, barrier, design, fifo, herd, i32, loop, rtp, runtime, u8
from aiedsl.kernels import threshold

@design(device="npu1_1col")
def d(inp: Tensor[1024, u8], out: Tensor[1024, u8]):
    a = fifo(Tensor[512, u8], name="a")
    b = fifo(Tensor[512, u8], name="b")
    thr = rtp(Tensor[16, i32], name="thr")
    go = barrier(name="go")
    k = threshold(512)

    @herd()
    def core():
        {core}

    with runtime() as rt:
        {rt}
'''
"""A core gated by a barrier: line 10 declares it, 15 is the core function's first line (a
loop over the image's two halves, whose body starts at 16), 21 the first of the runtime
sequence."""

WAIT_THEN_WORK = ("for _ in loop(2):\n"
                  "            go.wait_for_value(1)\n"
                  "            with a.consume() as s, b.produce() as t:\n"
                  "                k(s, t, thr[0], 512)")
"""A wait for 1 before each half (mlir-aie's color_threshold waits so on every line)."""
ONE_THEN_TWO = ("for v in (1, 2):\n"
                "            go.wait_for_value(v)\n"
                "            with a.consume() as s, b.produce() as t:\n"
                "                k(s, t, thr[0], 512)")
"""A wait for 1 before the first half, for 2 before the second (a Python loop: two copies)."""
WORK_THEN_ONE_THEN_TWO = ("for v in (1, 2):\n"
                          "            with a.consume() as s, b.produce() as t:\n"
                          "                go.wait_for_value(v)\n"
                          "                k(s, t, thr[0], 512)")
"""As :data:`ONE_THEN_TWO`, each wait once the half's data is in (line 17)."""
SET_ONE_THEN_TWO = ("rt.rtp_write(thr, 0, 7)\n"
                    "        rt.set_barrier(go, 1)\n"
                    "        rt.fill(a, inp, (0, [512], [1]))\n"
                    "        rt.drain(b, out, (0, [512], [1]))\n"
                    "        rt.sync()\n"
                    "        rt.rtp_write(thr, 0, 9)\n"
                    "        rt.set_barrier(go, 2)\n"
                    "        rt.fill(a, inp, (512, [512], [1]))\n"
                    "        rt.drain(b, out, (512, [512], [1]))")
"""Threshold 7 for the first half, 9 for the second, each written before the set that lets its
half through (lines 22 and 27)."""
FILLED_AHEAD = ("rt.rtp_write(thr, 0, 7)\n"
                "        rt.set_barrier(go, 1)\n"
                "        rt.fill(a, inp)\n"
                "        rt.drain(b, out, (0, [512], [1]))\n"
                "        rt.sync()\n"
                "        rt.rtp_write(thr, 0, 9)\n"
                "        rt.set_barrier(go, {second})\n"
                "        rt.drain(b, out, (512, [512], [1]))")
"""Both halves filled at once (line 23): only the barrier can hold the second call until the
second threshold is written (line 26) and the barrier set again (line 27)."""
SET_ONCE = ("rt.rtp_write(thr, 0, 7)\n"
            "        rt.set_barrier(go, 1)\n"
            "        rt.fill(a, inp)\n"
            "        rt.drain(b, out)")
"""One threshold, one set (line 22), then the whole image: mlir-aie's color_threshold."""


def _gated(design_file: DesignFile, core: str, rt: str) -> Path:
    return design_file(GATED.format(core=core, rt=rt))


def _halves(out: np.ndarray, inp: np.ndarray) -> tuple[bool, bool]:
    return ((out[:512] == np.minimum(inp[:512], 7)).all(),
            (out[512:] == np.minimum(inp[512:], 9)).all())


IMAGE = (np.arange(1024) % 256).astype(np.uint8)


def test_barrier_gates_each_pass_with_its_own_value(design_file: DesignFile) -> None:
    """Both halves filled at once: the core waits for 1 before the first, for 2 before the
    second, and the runtime sets 2 only after writing the second threshold, so each half sees
    its own. Each wait is IRON's wait_for_value: use_lock Acquire (AIE2's acquire-equal, which
    leaves the value), never released; each set one aiex.set_lock."""
    h = load_design(_gated(design_file, ONE_THEN_TWO, FILLED_AHEAD.format(second=2)))
    placed, table = check_design(h.ir)
    result = simulate(h, {"inp": IMAGE}, check=False)
    assert _halves(result.outputs["out"], IMAGE) == (True, True)
    lines = [ln.strip() for ln in render_mlir(placed, get_target(placed.device)).splitlines()]
    assert ('%lock_go_0_2 = aie.lock(%tile_0_2) {init = 0 : i32, sym_name = "go_0_2"} '
            'loc("d.py":10:0)') in lines
    assert [ln for ln in lines if ln.startswith("aie.use_lock(%lock_go_0_2")] == [
        'aie.use_lock(%lock_go_0_2, Acquire, 1) loc("d.py":16:0)',
        'aie.use_lock(%lock_go_0_2, Acquire, 2) loc("d.py":16:0)']
    assert [ln for ln in lines if ln.startswith("aiex.set_lock")] == [
        'aiex.set_lock(%lock_go_0_2, 1) loc("d.py":22:0)',
        'aiex.set_lock(%lock_go_0_2, 2) loc("d.py":27:0)']
    # aie-assign-lock-ids numbers the design's lock before the objectfifo lowering: id 0
    assert placed.physical is not None
    locks = [(lk.name, lk.id) for lk in placed.physical.locks if lk.tile == (0, 2)]
    assert locks[0] == ("go_0_2", 0) and [i for _, i in locks] == [0, 1, 2, 3, 4]
    assert sum(u.amount for u in table[(0, 2)].locks) == 5
    sets = [s for s in shim_program(placed, get_target(placed.device)) if not isinstance(s, ShimRtpWrite)
            and hasattr(s, "barrier")]
    assert [(s.column, s.row, s.address, s.value) for s in sets] == [
        (0, 2, 0x1F000, 1), (0, 2, 0x1F000, 2)]


def test_the_data_orders_a_second_pass_filled_after_the_rewrite(design_file: DesignFile) -> None:
    """Each half filled after its threshold is written: the data holds the second call, and the
    core's second wait (for 2) passes once the runtime sets 2."""
    h = load_design(_gated(design_file, ONE_THEN_TWO, SET_ONE_THEN_TWO))
    check_design(h.ir)
    result = simulate(h, {"inp": IMAGE}, check=False)
    assert _halves(result.outputs["out"], IMAGE) == (True, True)


def test_a_loop_of_waits_after_one_set_passes(design_file: DesignFile) -> None:
    """IRON's meaning: a wait leaves the value in the lock, so after one rt.set_barrier(go, 1)
    every wait for 1 passes, one per line as mlir-aie's color_threshold waits. aiedsl took each
    wait to take the value and refused this as a hang ('waits on barrier 'go' 2 time(s) per
    run, but the runtime lets it through at most 1 time(s)')."""
    h = load_design(_gated(design_file, WAIT_THEN_WORK, SET_ONCE))
    check_design(h.ir)
    result = simulate(h, {"inp": IMAGE}, check=False)
    assert (result.outputs["out"] == np.minimum(IMAGE, 7)).all()


def test_a_loop_of_waits_for_one_value_does_not_order_a_rewrite(design_file: DesignFile) -> None:
    """Setting 1 again does not hold the second pass: the lock still holds 1 from the first set,
    so the core's second wait for 1 may pass before the new threshold lands."""
    path = _gated(design_file, WAIT_THEN_WORK, FILLED_AHEAD.format(second=1))
    assert check_error(path) == (
        "d.py:26: error [rtp race]: rt.rtp_write of 'thr'[0] races core[0,0]'s calls that read "
        "it: they may see the new value or the old one\n"
        "  limit: a slot is rewritten only when every call the data issued before it may start "
        "has finished, as the drains waited for before it show (the write is one register "
        "write: nothing else orders it with the core)\n"
        "  found: the fills and barrier sets before it let core[0,0] start 2 calls that read the "
        "slot; the drains waited for show 1 finished, so call 2 may read either value\n"
        "  d.py:23: the last rt.fill of 'a' before it\n"
        "  d.py:21: the previous write\n"
        "  d.py:27: rt.set_barrier to 1, which the lock already holds\n"
        "  fix: before the rtp_write, rt.sync() on the drains of every call filled so far, and "
        "issue the fills of the calls that should see the new value after it; setting barrier "
        "'go' to 1 again (line 27) holds nothing, as a wait leaves the value in the lock: to "
        "hold the calls that should see the new value, have them wait for a value the barrier "
        "has not held (wait_for_value(2)) and set it to that after the rtp_write")


def test_a_wait_for_a_value_the_barrier_never_holds_is_a_static_hang(
        design_file: DesignFile) -> None:
    """A wait passes only while the lock holds its value, and only the initial value and the
    sets give it one: a wait for any other value never passes, whatever the timing."""
    waits_for_two = WAIT_THEN_WORK.replace("go.wait_for_value(1)", "go.wait_for_value(2)")
    limit = ("  limit: a wait passes while the barrier holds its value (aie.use_lock Acquire: it "
             "blocks until the core's lock equals the value, and leaves it); the lock holds "
             "only its initial value and the values rt.set_barrier gives it\n")
    assert check_error(_gated(design_file, waits_for_two, SET_ONCE)) == (
        "d.py:16: error [hang: barrier]: core[0,0] waits for barrier 'go' to hold 2, which it "
        "never holds\n" + limit +
        "  found: it holds 0 (initial), 1 (line 22)\n"
        "  d.py:22: rt.set_barrier to 1\n"
        "  fix: rt.set_barrier('go', 2) in the runtime sequence where the core may go on, or "
        "wait for a value the runtime sets (1)")
    unset = SET_ONCE.replace("        rt.set_barrier(go, 1)\n", "")
    assert check_error(_gated(design_file, waits_for_two, unset)) == (
        "d.py:16: error [hang: barrier]: core[0,0] waits for barrier 'go' to hold 2, which it "
        "never holds\n" + limit +
        "  found: it holds 0 (initial)\n"
        "  fix: rt.set_barrier('go', 2) in the runtime sequence where the core may go on")
    # a barrier that starts at 2 holds it: the wait passes with no set at all
    starts_at_two = GATED.format(core=waits_for_two, rt=unset).replace(
        'barrier(name="go")', 'barrier(name="go", initial=2)')
    check_design(load_design(design_file(starts_at_two)).ir)


def test_the_simulator_holds_a_core_until_the_set(design_file: DesignFile) -> None:
    """The core has its data (the fill waited for) long before the runtime sets the barrier:
    its first call starts only once the set is done."""
    rt = ("rt.rtp_write(thr, 0, 7)\n"
          "        rt.fill(a, inp, wait=True)\n"
          "        rt.sync()\n"
          "        rt.set_barrier(go, 1)\n"
          "        rt.drain(b, out)")
    h = load_design(_gated(design_file, WAIT_THEN_WORK, rt))
    check_design(h.ir)
    result = simulate(h, {"inp": IMAGE}, check=False, trace="t.json")
    assert (result.outputs["out"] == np.minimum(IMAGE, 7)).all()
    m = result.machine
    assert m.runtime is not None
    (set_done,) = [end for _, end, label in m.runtime.spans if label == "set barrier go = 1"]
    (dma,) = [p for p in m.engine.procs if p.name == "dma core[0,0] <- a"]
    arrived = dma.spans[0][1]  # the first half is in the core's buffer
    calls = [start for start, _, _ in m.cores["core[0,0]"].spans]
    assert len(calls) == 2 and arrived < set_done <= calls[0]


BARRIER_LIMIT = (
    "  limit: a wait passes only while the barrier holds its value (aie.use_lock Acquire, "
    "AIE2's acquire-equal: it blocks until the core's lock equals the value, and leaves it "
    "there) and a set replaces the value (aiex.set_lock), so the runtime replaces a value only "
    "once the drains it waited for show every core that waits for it past that wait\n")
"""The rule of every refused set, as :mod:`aiedsl.checks.barriers` states it."""
TIMING = ("whether the core gets to the wait in that time is timing: how long it takes to get "
          "there (its kernel calls, the data it waits for) against the runtime's steps up to "
          "the set; when the core is slower, the set comes first\n")
"""Why a set that may overtake a wait is a race, as the found line of the refusal says."""
SETS_FIRST = ("rt.rtp_write(thr, 0, 7)\n"
              "        rt.set_barrier(go, 1)\n"
              "        rt.set_barrier(go, 2)\n"
              "        rt.fill(a, inp)\n"
              "        rt.drain(b, out)")
"""Both sets (lines 22, 23) before the fill (24) that brings the core to its first wait."""
SPLIT_FIX = ("rt.rtp_write(thr, 0, 7)\n"
             "        rt.set_barrier(go, 1)\n"
             "        rt.fill(a, inp)\n"
             "        rt.drain(b, out, (0, [512], [1]))\n"
             "        rt.wait(b)\n"
             "        rt.set_barrier(go, 2)\n"
             "        rt.drain(b, out, (512, [512], [1]))")
"""The fix the refusals of :data:`SETS_FIRST` and :data:`DRAIN_THEN_SET` give: the set after
the fill, and before it a wait for the drain of the first element of 'b', which the core sends
only once past its wait for 1."""


def _unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let ``simulate`` skip the static checks (it still places the design)."""
    import aiedsl.sim
    from aiedsl.place import place

    monkeypatch.setattr(aiedsl.sim, "check_design",
                        lambda ir: (place(ir, get_target(ir.device)), {}))


def test_a_set_before_the_data_that_takes_the_core_to_its_wait_always_hangs(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runtime sets 1, then 2, before it fills the data the core waits for before its wait
    for 1: by the time the core gets there the lock holds 2, and a wait passes only while the
    lock holds its value. The core cannot get there before the set, whatever the timing, so the
    check refuses it as a hang; the simulator's deadlock report (the check skipped) agrees. The
    fix the check gives passes both."""
    from aiedsl.sim.explain import Deadlock

    path = _gated(design_file, WORK_THEN_ONE_THEN_TWO, SETS_FIRST)
    assert check_error(path) == (
        "d.py:23: error [hang: barrier]: rt.set_barrier of 'go' to 2 replaces the 1 that "
        "core[0,0] waits for at line 17 before the core can get there: the core waits forever "
        "(a silent hang on the NPU)\n" + BARRIER_LIMIT +
        "  found: no drain waited for before it shows core[0,0] past its wait for 1, and the "
        "fills issued before the set let it get no further than its acquire of 'a' (line 16), "
        "so the set always comes first\n"
        "  d.py:17: core[0,0]'s wait for 1\n"
        "  d.py:22: the barrier holds 1 from here\n"
        "  d.py:25: the drain of 'b' the runtime then waits for at the end of its sequence\n"
        "  fix: move the set after the fill of 'a' (line 24): the data that can show core[0,0] "
        "past its wait comes from it; there, drain 'b' so that one drain ends at its element 1 "
        "(its first element, 512 values), rt.wait() on 'b' before the set (line 23), and drain "
        "the rest after it: element 1 of 'b' comes only once core[0,0] is past its wait for 1")
    _unchecked(monkeypatch)
    with pytest.raises(Deadlock) as e:
        simulate(load_design(path), check=False)
    assert str(e.value) == (
        "d.py:20: error [deadlock]: nothing can move and the runtime sequence is not done (1 core(s) "
        "blocked)\n"
        "  the runtime waits at the end of its sequence for its drain of 'b' (line 25) to "
        "complete (d.py:20)\n"
        "  <- the shim DMA (0,0) draining 'b' waits for data (d.py:8)\n"
        "  <- the DMA of core[0,0] (0,2) sending 'b' waits for core[0,0] to release an element "
        "to send (d.py:8)\n"
        "  <- core[0,0] (0,2) waits for barrier 'go' to hold 1; it holds 2 (it started at 0; "
        "the runtime set it to 1 (line 22), then 2 (line 23)) (d.py:17)\n"
        "  <- back to the runtime: a wait-for cycle\n"
        "  fix: set barrier 'go' to another value only once the core is past its wait for 1 "
        "(e.g. after an rt.sync() on a drain the core reaches past that wait): a wait passes "
        "only while the barrier holds its value, and a set replaces the value")
    fixed = _gated(design_file, WORK_THEN_ONE_THEN_TWO, SPLIT_FIX)
    check_design(load_design(fixed).ir)
    assert (simulate(load_design(fixed), {"inp": IMAGE}, check=False).outputs["out"]
            == np.minimum(IMAGE, 7)).all()


SLOW_COPY = """
#include <stdint.h>
#include <aie_api/aie.hpp>
template <unsigned N> void slow_copy(const int32_t *__restrict src, int32_t *__restrict dst) {
  for (unsigned i = 0; i < N; i += 16) aie::store_v(dst + i, aie::load_v<16>(src + i));
}
"""
"""A copy kernel whose cost the design declares (CYC cycles a call)."""
BARRIER_RACE = """
\"\"\"A barrier set twice with no wait between: the core must pass its wait for 1 before the
runtime sets 2. Whether it does depends on how long its first kernel call takes: a race.\"\"\"
import numpy as np
from aiedsl import Tensor, barrier, define, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import buffer, declare

CYC = define("CYC", 1000)
def cp_ref(src, dst): dst[...] = src

@design(device="npu1_1col")
def barrier_race(inp: Tensor[1024, i32], out: Tensor[1024, i32]):
    a = fifo(Tensor[256, i32], name="a")
    b = fifo(Tensor[256, i32], name="b")
    go = barrier(name="go")
    cp = declare("slow_copy_256", source="slow.cc", entry="slow_copy<256>",
                 args=[buffer("src", Tensor[256, i32]), buffer("dst", Tensor[256, i32], "out")],
                 reference=cp_ref, cycles=CYC, cost="copy", exact=True)

    @herd()
    def core():
        with a.consume() as x, b.produce() as y:
            cp(x, y)
        go.wait_for_value(1)
        with a.consume() as x, b.produce() as y:
            cp(x, y)
        go.wait_for_value(2)
        for _ in loop(2):
            with a.consume() as x, b.produce() as y:
                cp(x, y)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.set_barrier(go, 1)
        {drain}
        rt.set_barrier(go, 2){rest}

@barrier_race.reference
def reference(inp):
    return inp.copy()
"""
"""A tester's find: the core waits for 1 after its first copy and for 2 after its second; the
runtime sets 1 (line 33), drains 'b' (34) and sets 2 (35) with no wait between. The core's
wait for 1 is line 23, the runtime's implied final wait line 31."""


def test_a_set_that_may_overtake_a_slow_kernel_is_a_barrier_race(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing orders the core's wait for 1 before the set to 2: with a fast kernel the core
    gets there first, with a slow one the set does and the core waits forever. The simulator
    sees the hang only at some kernel costs (the outcome is kernel time against the firmware's
    task issue, the model's least certain figure); the check refuses the set whatever the
    cost, naming the drain that shows the core past its wait, and that fix passes both."""
    from aiedsl.sim.explain import Deadlock

    design_file(SLOW_COPY, "slow.cc")
    path = design_file(BARRIER_RACE.format(drain="rt.drain(b, out)", rest=""))
    assert check_error(path) == (
        "d.py:35: error [barrier race]: rt.set_barrier of 'go' to 2 may replace the 1 that "
        "core[0,0] waits for at line 23 before the core gets there: the core would then wait "
        "forever (a hang that depends on timing)\n" + BARRIER_LIMIT +
        "  found: no drain waited for before it shows core[0,0] past its wait for 1; the "
        "barrier holds 1 only from line 33 to this set, and " + TIMING +
        "  d.py:23: core[0,0]'s wait for 1\n"
        "  d.py:33: the barrier holds 1 from here\n"
        "  d.py:34: the drain of 'b' the runtime then waits for at the end of its sequence\n"
        "  fix: drain 'b' so that one drain ends at its element 2 (its first 2 elements, 512 "
        "values), rt.wait() on 'b' before the set (line 35), and drain the rest after it: "
        "element 2 of 'b' comes only once core[0,0] is past its wait for 1")
    inp = np.arange(1024, dtype=np.int32)
    _unchecked(monkeypatch)
    fast = simulate(load_design(path, {"CYC": "1000"}), {"inp": inp})
    assert fast.passed
    with pytest.raises(Deadlock) as e:
        simulate(load_design(path, {"CYC": "20000"}), {"inp": inp})
    assert ("core[0,0] (0,2) waits for barrier 'go' to hold 1; it holds 2 (it started at 0; the "
            "runtime set it to 1 (line 33), then 2 (line 35)) (d.py:23)") in str(e.value)
    fixed = design_file(BARRIER_RACE.format(
        drain="rt.drain(b, out, (0, [512], [1]))\n        rt.wait(b)",
        rest="\n        rt.drain(b, out, (512, [512], [1]))"))
    for cycles in ("1000", "20000"):  # checked here, so simulate need not check again
        handle = load_design(fixed, {"CYC": cycles})
        check_design(handle.ir)
        assert simulate(handle, {"inp": inp}).passed


HALVES_THEN_SET = ("rt.rtp_write(thr, 0, 7)\n"
                   "        rt.set_barrier(go, 1)\n"
                   "        rt.fill(a, inp)\n"
                   "        rt.drain(b, out, (0, [512], [1]))\n"
                   "        rt.sync()\n"
                   "        rt.set_barrier(go, 2)\n"
                   "        rt.drain(b, out, (512, [512], [1]))")
"""Both halves filled (line 23); the first half's drain waited for (25) before the set to 2
(26), which no wait of the core is for."""
WORK_THEN_WAIT = ("for _ in loop(2):\n"
                  "            with a.consume() as s, b.produce() as t:\n"
                  "                go.wait_for_value(1)\n"
                  "                k(s, t, thr[0], 512)")
"""A wait for 1 once each half's data is in (line 17)."""


def test_a_wait_in_a_loop_is_shown_passed_for_every_pass_the_runtime_needs(
        design_file: DesignFile) -> None:
    """The core waits for 1 once each half is in; the runtime waited for the first half's
    drain before it sets 2, which shows the first pass of the wait, not the second: the second
    half may arrive after the set, and its wait then finds 2."""
    assert check_error(_gated(design_file, WORK_THEN_WAIT, HALVES_THEN_SET)) == (
        "d.py:26: error [barrier race]: rt.set_barrier of 'go' to 2 may replace the 1 that "
        "core[0,0] waits for at line 17 before the core gets there: the core would then wait "
        "forever (a hang that depends on timing)\n" + BARRIER_LIMIT +
        "  found: the drains waited for before it show core[0,0] past 1 of the 2 passes of its "
        "wait for 1 that the runtime's wait at the end of its sequence needs; the barrier holds "
        "1 only from line 22 to this set, and " + TIMING +
        "  d.py:17: core[0,0]'s wait for 1\n"
        "  d.py:22: the barrier holds 1 from here\n"
        "  d.py:27: the drain of 'b' the runtime then waits for at the end of its sequence\n"
        "  fix: drain 'b' so that one drain ends at its element 2 (its first 2 elements, 1024 "
        "values), rt.wait() on 'b' before the set (line 26), and drain the rest after it: "
        "element 2 of 'b' comes only once core[0,0] is past its wait for 1")


def test_a_wait_right_after_what_the_runtime_waited_for_is_not_overtaken(
        design_file: DesignFile) -> None:
    """The same sequence, the core waiting for 1 before each half's acquire (a loop of waits,
    as color_threshold's): once it released the first half, nothing but its wait lies before
    the second, so it is at that wait before the drain completes, the runtime's sync returns and
    the set to 2 comes; it passes within cycles of the lock holding 1, and has. Refusing it
    would refuse every design whose core waits first thing, as IRON's do."""
    h = load_design(_gated(design_file, WAIT_THEN_WORK, HALVES_THEN_SET))
    check_design(h.ir)
    assert (simulate(h, {"inp": IMAGE}, check=False).outputs["out"]
            == np.minimum(IMAGE, 7)).all()
    # so is a core that waits first thing for a value set and replaced before any data
    sets = ("rt.rtp_write(thr, 0, 7)\n"
            "        rt.set_barrier(go, 1)\n"
            "        rt.set_barrier(go, 2)\n"
            "        rt.fill(a, inp)\n"
            "        rt.drain(b, out)")
    h = load_design(_gated(design_file, ONE_THEN_TWO, sets))
    check_design(h.ir)
    assert (simulate(h, {"inp": IMAGE}, check=False).outputs["out"]
            == np.minimum(IMAGE, 7)).all()


DRAIN_THEN_SET = ("rt.rtp_write(thr, 0, 7)\n"
                  "        rt.set_barrier(go, 1)\n"
                  "        rt.fill(a, inp)\n"
                  "        rt.drain(b, out, (0, [512], [1]))\n"
                  "        rt.set_barrier(go, 2)\n"
                  "        rt.drain(b, out, (512, [512], [1]))")
"""The first half's drain issued (line 24) but not waited for before the set to 2 (25)."""


def test_a_drain_issued_before_the_set_is_the_one_to_wait_for(design_file: DesignFile) -> None:
    assert check_error(_gated(design_file, WORK_THEN_ONE_THEN_TWO, DRAIN_THEN_SET)) == (
        "d.py:25: error [barrier race]: rt.set_barrier of 'go' to 2 may replace the 1 that "
        "core[0,0] waits for at line 17 before the core gets there: the core would then wait "
        "forever (a hang that depends on timing)\n" + BARRIER_LIMIT +
        "  found: no drain waited for before it shows core[0,0] past its wait for 1; the "
        "barrier holds 1 only from line 22 to this set, and " + TIMING +
        "  d.py:17: core[0,0]'s wait for 1\n"
        "  d.py:22: the barrier holds 1 from here\n"
        "  d.py:24: the drain of 'b' the runtime then waits for at the end of its sequence\n"
        "  fix: rt.wait() on 'b' before the set (line 25): the drain at line 24 ends at element "
        "1 of 'b'; element 1 of 'b' comes only once core[0,0] is past its wait for 1")
    check_design(load_design(_gated(design_file, WORK_THEN_ONE_THEN_TWO, SPLIT_FIX)).ir)


def test_a_wait_for_a_drain_that_needs_a_later_set_hangs(design_file: DesignFile) -> None:
    """The runtime waits for the first half's drain, which the core sends only past its wait
    for 1, and sets 1 only after: whatever the timing, the wait never returns."""
    rt = ("rt.rtp_write(thr, 0, 7)\n"
          "        rt.fill(a, inp)\n"
          "        rt.drain(b, out, (0, [512], [1]))\n"
          "        rt.sync()\n"
          "        rt.set_barrier(go, 1)\n"
          "        rt.set_barrier(go, 2)\n"
          "        rt.drain(b, out, (512, [512], [1]))")
    assert check_error(_gated(design_file, ONE_THEN_TWO, rt)) == (
        "d.py:24: error [hang: barrier]: the runtime waits at the rt.sync() of line 24 for its "
        "drain of 'b' (line 23), which needs core[0,0] past its wait for 1 (line 16), but sets "
        "barrier 'go' to 1 only after that wait: the runtime waits forever (a silent hang on "
        "the NPU)\n"
        "  limit: a wait passes only while the barrier holds its value (aie.use_lock Acquire, "
        "AIE2's acquire-equal: it blocks until the core's lock equals the value); the lock "
        "holds only the values set before, so a runtime wait whose drain needs a core past a "
        "wait for a value comes after the set that gives it\n"
        "  found: barrier 'go' holds 0 while the runtime waits (its initial value)\n"
        "  d.py:16: core[0,0]'s wait for 1\n"
        "  d.py:23: the drain of 'b' waited for\n"
        "  d.py:25: rt.set_barrier to 1, after the wait\n"
        "  fix: move rt.set_barrier('go', 1) (line 25) before the rt.sync() at line 24: the "
        "drain it waits for comes only once core[0,0] is past its wait for 1, so a set after it "
        "never comes")


def test_a_gated_core_still_races_a_rewrite_before_its_calls_finished(
        design_file: DesignFile) -> None:
    # the first set lets the first call start; nothing waited for shows it finished
    rt = SET_ONE_THEN_TWO.replace("        rt.sync()\n", "")
    assert check_error(_gated(design_file, ONE_THEN_TWO, rt)).splitlines()[0::2] == [
        "d.py:25: error [rtp race]: rt.rtp_write of 'thr'[0] races core[0,0]'s calls that read "
        "it: they may see the new value or the old one",
        "  found: the fills and barrier sets before it let core[0,0] start 1 call that reads the "
        "slot; the drains waited for show 0 finished, so call 1 may read either value",
        "  d.py:21: the previous write"]


def test_barrier_lock_named_like_a_fifo_is_refused(design_file: DesignFile) -> None:
    """Barrier 'go' waited on in core (0, 2) is the lock go_0_2: a fifo of that name is a second
    definition of the symbol."""
    src = GATED.format(core=ONE_THEN_TWO, rt=SET_ONE_THEN_TWO).replace('name="b"',
                                                                         'name="go_0_2"')
    assert check_error(design_file(src)) == (
        "d.py:10: error [name]: barrier 'go''s lock 'go_0_2' has the name of the fifo 'go_0_2'\n"
        "  limit: every symbol of a device is unique (a barrier's lock in the core of tile "
        "(c, r) is <barrier>_<c>_<r>)\n"
        "  found: go_0_2\n"
        "  fix: rename the barrier or the fifo")


def test_gated_core_reads_a_slot_written_after_the_set(design_file: DesignFile) -> None:
    rt = SET_ONE_THEN_TWO.replace("rt.rtp_write(thr, 0, 7)\n        rt.set_barrier(go, 1)",
                                  "rt.set_barrier(go, 1)\n        rt.rtp_write(thr, 0, 7)")
    assert check_error(_gated(design_file, ONE_THEN_TWO, rt)) == (
        "d.py:18: error [rtp order]: core[0,0] reads rtp 'thr'[0], which the runtime does not "
        "write before it first sets the barrier the core waits on\n"
        "  limit: a slot a barrier-gated core reads is written before the barrier's first set\n"
        "  found: its first write at line 22\n"
        "  d.py:21: the first set\n"
        "  fix: rt.rtp_write('thr', 0, value) before rt.set_barrier")


def test_barrier_rejections(design_file: DesignFile) -> None:
    src = GATED.format(core=WAIT_THEN_WORK, rt=SET_ONE_THEN_TWO)
    assert load_error(design_file(src.replace("rt.set_barrier(go, 1)\n        rt.fill(a, inp, "
                                              "(0", "rt.set_barrier(go, 64)\n        rt.fill("
                                              "a, inp, (0"))) == (
        "d.py:22: error [runtime]: rt.set_barrier of 'go' to 64\n"
        "  limit: an int from 0 to 63 (a lock's value)\n"
        "  found: 64\n"
        "  fix: set it to the value its cores wait for, e.g. 1")
    assert load_error(design_file(src.replace("go.wait_for_value(1)", "go.wait_for_value(0)"))) \
        == ("d.py:16: error [barrier]: barrier 'go' is waited on for value 0\n"
            "  limit: an int from 1 to 63 (a lock's value)\n"
            "  found: 0\n"
            "  fix: wait for a value rt.set_barrier gives it, e.g. 1")
    assert load_error(design_file(src.replace('rt.set_barrier(go, 1)\n        rt.fill(a, inp, '
                                              '(0', 'rt.set_barrier("og", 1)\n        rt.fill('
                                              'a, inp, (0'))).startswith(
        "d.py:22: error [runtime]: rt.set_barrier of 'og', which is not a barrier of this "
        "design\n  limit: the design's barriers: 'go'\n")
    unused = src.replace("go.wait_for_value(1)\n            ", "")
    assert load_error(design_file(unused)) == (
        "d.py:10: error [barrier unused]: barrier 'go' is never waited on by a core\n"
        "  limit: a barrier is a lock in each core that waits on it\n"
        "  fix: call wait_for_value on it in a core function, or remove it")


def test_a_barrier_set_after_the_sync_that_waits_for_its_core_says_to_move_it(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runtime waits at rt.sync() for a drain the core reaches only past its wait for 2,
    and sets 2 after that sync: the fix said 'set it after an rt.sync()', which is the
    mistake. The check finds it now (it passed them, and only the simulator saw the hang); the
    simulator, the check skipped, says the same."""
    from aiedsl.sim.explain import Deadlock

    rt = ("rt.rtp_write(thr, 0, 7)\n"
          "        rt.set_barrier(go, 1)\n"
          "        rt.fill(a, inp)\n"
          "        rt.drain(b, out)\n"
          "        rt.sync()\n"
          "        rt.set_barrier(go, 2)")
    path = _gated(design_file, ONE_THEN_TWO, rt)
    assert check_error(path) == (
        "d.py:25: error [hang: barrier]: the runtime waits at the rt.sync() of line 25 for its "
        "drain of 'b' (line 24), which needs core[0,0] past its wait for 2 (line 16), but sets "
        "barrier 'go' to 2 only after that wait: the runtime waits forever (a silent hang on "
        "the NPU)\n"
        "  limit: a wait passes only while the barrier holds its value (aie.use_lock Acquire, "
        "AIE2's acquire-equal: it blocks until the core's lock equals the value); the lock "
        "holds only the values set before, so a runtime wait whose drain needs a core past a "
        "wait for a value comes after the set that gives it\n"
        "  found: barrier 'go' holds 1 while the runtime waits (set at line 22)\n"
        "  d.py:16: core[0,0]'s wait for 2\n"
        "  d.py:24: the drain of 'b' waited for\n"
        "  d.py:26: rt.set_barrier to 2, after the wait\n"
        "  fix: move rt.set_barrier('go', 2) (line 26) before the rt.sync() at line 25: the "
        "drain it waits for comes only once core[0,0] is past its wait for 2, so a set after it "
        "never comes")
    _unchecked(monkeypatch)
    handle = load_design(path)
    with pytest.raises(Deadlock) as e:
        simulate(handle, check=False)
    assert str(e.value) == (
        "d.py:25: error [deadlock]: nothing can move and the runtime sequence is not done (1 core(s) "
        "blocked)\n"
        "  the runtime waits at rt.sync() for its drain of 'b' (line 24) to complete (d.py:25)\n"
        "  <- the shim DMA (0,0) draining 'b' waits for data (d.py:8)\n"
        "  <- the DMA of core[0,0] (0,2) sending 'b' waits for core[0,0] to release an element "
        "to send (d.py:8)\n"
        "  <- core[0,0] (0,2) waits for barrier 'go' to hold 2; it holds 1 (it started at 0; "
        "the runtime set it to 1 (line 22)) (d.py:16)\n"
        "  <- back to the runtime: a wait-for cycle\n"
        "  fix: move rt.set_barrier('go', 2) (line 26) before the rt.sync() at line 25: that "
        "sync waits for a drain the core can only reach past its wait, so the set after it "
        "never comes")


def test_a_whole_rtp_passed_for_a_scalar(design_file: DesignFile) -> None:
    """It said "argument 2 of 'threshold_u8_512' is RtpRef rtp('thr', 16xi32)", an internal
    name, with no limit."""
    assert load_error(design_file(_variant(read="k(s, t, thr, 512)"))) == (
        "d.py:15: error [kernel call]: argument 2 of 'threshold_u8_512' is the whole rtp 'thr' "
        "(16 x i32)\n"
        "  limit: a kernel call takes one slot of an rtp, as a scalar argument (thr[0]); a "
        "whole rtp is not a buffer argument\n"
        "  found: rtp 'thr'\n"
        "  fix: pass the slot the kernel reads, thr[0], for each scalar (nine coefficients are "
        "nine scalar arguments)")


SLOT_FOR_A_SCALAR = """
    import numpy as np
    from aiedsl import Tensor, design, f32, fifo, herd, i32, loop, rtp, runtime, u8
    from aiedsl.kernels import buffer, declare, scalar

    k = declare("thr_u8", source="thr.cc", reference=lambda *a: None, cycles=10,
                cost="a guess", args=[buffer("src", Tensor[64, u8]),
                                      buffer("dst", Tensor[64, u8], "out"),
                                      scalar("thresh", SCALAR)])

    @design(device="npu1_1col")
    def d(inp: Tensor[1024, u8], out: Tensor[1024, u8]):
        a = fifo(Tensor[64, u8], name="a")
        b = fifo(Tensor[64, u8], name="b")
        p = rtp(Tensor[16, i32], name="p")

        @herd()
        def core():
            for _ in loop(16):
                with a.consume() as x, b.produce() as y:
                    k(x, y, p[0])

        with runtime() as rt:
            rt.rtp_write(p, 0, 7)
            rt.fill(a, inp)
            rt.drain(b, out)
"""
"""A kernel whose scalar 'thresh' (of type SCALAR) is given an rtp slot (an i32)."""


def test_an_rtp_slot_for_a_narrower_scalar_suggests_narrows_to(design_file: DesignFile) -> None:
    """A slot is a 32-bit word: a kernel's u8 parameter declares i32 with narrows_to=u8 (the
    fix said "pass it to a i32 parameter")."""
    path = design_file(SLOT_FOR_A_SCALAR.replace("SCALAR", "u8"))
    assert check_error(path).splitlines()[-1] == (
        "  fix: declare it scalar('thresh', i32, narrows_to=u8): an rtp slot is a 32-bit word, "
        "which the kernel narrows")


def test_rtp_slots_for_several_narrower_scalars_are_one_error(design_file: DesignFile) -> None:
    """Each slot passed to a narrower scalar was a round of check of its own (a tester's four
    weights took four): one error names them all, with one fix."""
    path = design_file(SLOT_FOR_A_SCALAR.replace(
        'scalar("thresh", SCALAR)])', 'scalar("thresh", u8), scalar("lo", i16)])').replace(
        "k(x, y, p[0])", "k(x, y, p[0], p[1])").replace(
        "from aiedsl import Tensor, design, f32, fifo, herd, i32,",
        "from aiedsl import Tensor, design, f32, fifo, herd, i16, i32,").replace(
        "rt.rtp_write(p, 0, 7)", "rt.rtp_write(p, 0, 7)\n            rt.rtp_write(p, 1, 3)"))
    assert check_error(path) == (
        "d.py:20: error [kernel signature]: argument 2 ('thresh') of 'thr_u8' is u8, but "
        "core[0,0] passes rtp slot 'p'[0] (i32); and 1 more argument of another type than the "
        "rtp slot passed: 'lo'\n"
        "  limit: thr_u8(src: 64xu8, dst: 64xu8, thresh: u8, lo: i16)\n"
        "  found: i32\n"
        "  found: i32 in rtp slot 'p'[1] for argument 3 ('lo', i16)\n"
        "  fix: declare them scalar('thresh', i32, narrows_to=u8) and scalar('lo', i32, "
        "narrows_to=i16): an rtp slot is a 32-bit word, which the kernel narrows")
    fixed = path.read_text().replace('scalar("thresh", u8), scalar("lo", i16)',
                                     'scalar("thresh", i32, narrows_to=u8), '
                                     'scalar("lo", i32, narrows_to=i16)')
    path.write_text(fixed)
    assert "[kernel signature]" not in check_error(path)  # (the test has no thr.cc: its error)


def test_an_rtp_slot_for_a_float_scalar_is_not_told_narrows_to(design_file: DesignFile) -> None:
    """narrows_to= is for integer types: the fix said narrows_to=f32, which is refused."""
    path = design_file(SLOT_FOR_A_SCALAR.replace("SCALAR", "f32"))
    assert check_error(path).splitlines()[-1] == (
        "  fix: an rtp slot holds an i32: declare it scalar('thresh', i32) and convert it in the "
        "C++, or pass the float in the call")


@pytest.mark.parametrize("test", ["thr[0] == 5", "thr[0] != 5", "5 == thr[0]"])
def test_an_rtp_slot_compared_in_a_core_is_refused(design_file: DesignFile, test: str) -> None:
    """A tester's: `if thr[0] == 5:` took one branch at trace time, silently (only <, <=, >,
    >= and a plain `if thr[0]:` were refused)."""
    path = design_file(_variant(read=f"k(s, t, thr[0], 512) if {test} else k(s, t, 1, 512)"))
    assert load_error(path) == (
        "d.py:15: error [rtp]: rtp 'thr'[0] is used as a Python value\n"
        "  fix: the host writes it while the design runs: pass it to a kernel call, which reads "
        "it then")


# -- a core nothing holds until the write -----------------------------------------------------

GENERATOR = '''
import numpy as np
from aiedsl import Tensor, barrier, design, fifo, herd, i32, local, loop, rtp, runtime, u8
from aiedsl.kernels import threshold

@design(device="npu1_1col")
def rtpgen(out: Tensor[1024, u8]):
    b = fifo(Tensor[512, u8], name="b")
    thr = rtp(Tensor[16, i32], name="thr")
    src = local(Tensor[512, u8], initial=200, name="src")
    k = threshold(512)
    {barrier}
    @herd()
    def core():
        {wait}
        for _ in loop(2):
            with b.produce() as t:
                k(src, t, thr[0], 512)

    with runtime() as rt:
        rt.rtp_write(thr, 0, 7)
        {set}
        rt.drain(b, out)

@rtpgen.reference
def ref():
    return np.full(1024, 7, np.uint8)
'''
"""A hang tester's rtpgen.py: a core that produces from a local and consumes nothing, so it runs
from the load; its call (line 17) reads the threshold the runtime writes first thing (line 20).
Lines 12, 15 and 23 take the barrier that holds it."""

UNHELD = GENERATOR.format(barrier="", wait="pass", set="")
HELD = GENERATOR.format(barrier='go = barrier(name="go")', wait="go.wait_for_value(1)",
                        set="rt.set_barrier(go, 1)")

HELD_LIMIT = (
    "  limit: a slot a core reads is written before any call reading it can start: the slot "
    "holds no value before its first write, and a core's calls wait only for the data they "
    "acquire and the barrier values they wait for, not for the runtime sequence (mlir-aie's "
    "programming guide, section-2d/RuntimeTasks.md: workers may read runtime parameters before "
    "they are available, and a WorkerRuntimeBarrier holds them)\n")


def test_a_core_fed_by_no_fill_reads_the_slot_before_the_write(design_file: DesignFile) -> None:
    """The write is first and no fill comes before it, which the old rule (the write before the
    first transfer) asked for; but the core waits for no data from the runtime, so it runs from
    the load and its first calls read whatever the buffer held. Check refuses it and names the
    barrier; with the barrier, check and two simulated invocations pass."""
    assert check_error(design_file(UNHELD)) == (
        "d.py:17: error [rtp order]: core[0,0] may read rtp 'thr'[0] before the runtime writes "
        "it (line 20): the core consumes no fifo the runtime fills, so it runs from the load, "
        "before the runtime sequence starts\n" + HELD_LIMIT +
        "  found: before the write, core[0,0] may start up to 2 calls that read the slot (an "
        "upper bound: its output buffers are taken to be free)\n"
        "  d.py:20: the first rt.rtp_write of the slot\n"
        "  fix: hold the core on a runtime barrier (IRON's WorkerRuntimeBarrier): go = "
        "barrier(name=\"go\") in the design function, go.wait_for_value(1) in the core function "
        "before the call that reads the slot (line 17), and rt.set_barrier(go, 1) after the "
        "rt.rtp_write at line 20")
    h = load_design(design_file(HELD))
    check_design(h.ir)
    result = simulate(h, invocations=2)
    assert result.passed and (result.outputs["out"] == 7).all()


def test_a_barrier_whose_initial_value_the_wait_takes_holds_nothing(
        design_file: DesignFile) -> None:
    """The core waits for 1 and the barrier starts at 1: the load, not the set after the
    write, lets it through. The fix starts the barrier at 0."""
    path = design_file(HELD.replace('barrier(name="go")', 'barrier(name="go", initial=1)'))
    assert check_error(path) == (
        "d.py:17: error [rtp order]: core[0,0] may read rtp 'thr'[0] before the runtime writes "
        "it (line 20): the core's wait for 1 (line 14) passes on the initial value of barrier "
        "'go', which the load gives, and nothing else it waits for before the call comes from "
        "the runtime\n" + HELD_LIMIT +
        "  found: before the write, core[0,0] may start up to 2 calls that read the slot (an "
        "upper bound: its output buffers are taken to be free)\n"
        "  d.py:20: the first rt.rtp_write of the slot\n"
        "  fix: start barrier 'go' at a value the core does not wait for (initial=0): the "
        "rt.set_barrier to 1 at line 21, after the write, then lets the core past its wait, not "
        "the load")


def test_the_simulator_names_the_barrier_when_the_write_is_already_first(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch) -> None:
    """Given the design anyway, the simulator faults at the first read; its fix said to write
    the slot before the fills that feed the core, which it already was, and none does."""
    import aiedsl.sim
    from aiedsl.place import place

    monkeypatch.setattr(aiedsl.sim, "check_design",
                        lambda ir: (place(ir, get_target(ir.device)), {}))
    with pytest.raises(SimFault) as e:
        simulate(load_design(design_file(UNHELD)))
    assert str(e.value) == (
        "d.py:17: error [rtp]: core[0,0] reads rtp 'thr'[0] at cycle 4, before the runtime "
        "writes it\n"
        "  limit: a slot is read after an rtp_write of it (the memory holds no value before)\n"
        "  found: no write by then\n"
        "  d.py:17: the call that reads it (core[0,0])\n"
        "  fix: moving the rt.rtp_write (line 20) cannot help (the core consumes no fifo the "
        "runtime fills, so it runs from the load, before the runtime sequence starts); hold the "
        "core on a runtime barrier (IRON's WorkerRuntimeBarrier): go = barrier(name=\"go\") in "
        "the design function, go.wait_for_value(1) in the core function before the call that "
        "reads the slot (line 17), and rt.set_barrier(go, 1) after the rt.rtp_write at line 20")


def test_the_simulator_still_moves_a_write_that_comes_after_a_fill(
        design_file: DesignFile, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where a fill that feeds the core comes first, moving the write before it is the fix,
    and the fault says which fill."""
    import aiedsl.sim
    from aiedsl.place import place

    monkeypatch.setattr(aiedsl.sim, "check_design",
                        lambda ir: (place(ir, get_target(ir.device)), {}))
    swapped = "rt.fill(a, inp)\n        rt.rtp_write(thr, 0, 7)"
    path = design_file(BASE.replace("rt.rtp_write(thr, 0, 7)\n        rt.fill(a, inp)", swapped))
    with pytest.raises(SimFault) as e:
        simulate(load_design(path))
    assert str(e.value).splitlines()[-1] == (
        "  fix: rt.rtp_write('thr', 0, ...) before the fills that feed this core (the fill of "
        "'a' at line 18 comes before the write at line 19)")


def test_the_trace_shows_each_rtp_write_and_barrier_set_with_its_value(design_file) -> None:  # type: ignore[no-untyped-def]
    """A Riallto user could not tell from the trace which value went in (its runtime spans
    said 'rtp_write tv[0]'): the label carries it. The runtime's waits are drawn too."""
    rt = ("rt.rtp_write(thr, 0, 7)\n"
          "        rt.fill(a, inp, wait=True)\n"
          "        rt.sync()\n"
          "        rt.set_barrier(go, 1)\n"
          "        rt.drain(b, out)")
    h = load_design(_gated(design_file, WAIT_THEN_WORK, rt))
    result = simulate(h, {"inp": IMAGE}, check=False, trace="t.json")
    m = result.machine
    assert m.runtime is not None
    labels = [label for _, _, label in m.runtime.spans]
    assert "rtp_write thr[0] = 7" in labels and "set barrier go = 1" in labels
    # and the sync's wait, which the track left blank unless the run stopped in it
    waits = [(s, e) for s, e, label in m.runtime.spans if label.startswith("waits for the ")]
    assert len(waits) == 2 and all(e > s for s, e in waits)  # the waited fill, the sync


GENERATOR = '''
import numpy as np
from aiedsl import Tensor, barrier, design, fifo, herd, i32, local, loop, rtp, runtime
from aiedsl.kernels import vector_scalar

@design(device="npu1_1col")
def gen(out: Tensor[2048, i32]):
    o = fifo(Tensor[256, i32], name="o")
    base = local(Tensor[256, i32], initial=np.arange(256, dtype=np.int32), name="base")
    val = rtp(Tensor[16, i32], name="val")
    go = barrier(name="go")
    addk = vector_scalar("add", Tensor[256, i32])

    @herd()
    def core():
        go.wait_for_value(1)
        for _ in loop(4):
            with o.produce() as d:
                addk(base, d, val[0])
        for _ in loop(4):
            with o.produce() as d:
                addk(base, d, val[0])

    with runtime() as rt:
        rt.rtp_write(val, 0, 7)
        rt.set_barrier(go, 1)
        rt.drain(o, out, (0, [1024], [1]))
        rt.sync()
        rt.rtp_write(val, 0, 1000)
        rt.drain(o, out, (1024, [1024], [1]))
'''


def test_a_race_on_a_core_only_a_barrier_holds_offers_a_barrier_step(
        design_file: Callable[[str], Path]) -> None:
    """A generator core fed by no fill, held by one barrier wait: back-pressure lets it run
    ahead of the drain the runtime waited on, so the second rtp_write races it. The fix said to
    sync and move the fills, which the design already did and has none of (an MLIR-AIR user's
    tester); a second barrier step is what holds it."""
    with pytest.raises(DesignError) as e:
        check_design(load_design(design_file(GENERATOR)).ir)
    assert str(e.value).splitlines()[-1] == (
        "  fix: hold the calls that should see the new value on barrier 'go', which is all that "
        "holds core[0,0] (it consumes nothing the runtime fills): go.wait_for_value(2) in the "
        "core function before them, and rt.set_barrier(go, 2) after the rtp_write (line 28)")
