"""The NPU instruction stream (``insts.bin``) read back, and the simulator held to it.

For each of the seven builds in the reference material's ``mlir-aie-lowered/`` (what the real
mlir-aie made of aiedsl's MLIR): the decoder reads ``insts.bin`` into the same operations, field
for field, that ``npu.mlir`` prints; the shim DMA tasks and syncs it derives are the transfers
and waits the simulator performs for the same design (:func:`aiedsl.sim.shim.shim_program`, the
list the simulator's runtime process runs), down to every byte each transfer moves, in order.
Then ``aiedsl inspect``'s listing and its errors, and the decoder on streams written here.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from aiedsl.codegen.mlir import render_mlir
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.sim.patterns import pattern_steps
from aiedsl.sim.shim import ShimTransfer, ShimWait, diff_program, hardware_view, shim_program
from aiedsl.targets import get_target
from aiedsl.toolchain.insts import (
    ShimBd, ShimTask, as_dict, canonical_dims, decode, listing, read_insts, register_name,
    to_elements,
)
from shared_reference import reference_file
from test_lowering import FIXTURES, planned
from tests.command_line import run_command

ROOT = Path(__file__).resolve().parents[1]


def fixture(name: str, file: str) -> Path:
    return reference_file("mlir-aie-lowered", name, file)


# -- npu.mlir, read the plain way, to hold the decoder to --------------------------------------

_OP = re.compile(r"aiex\.npu\.(\w+)(?:\((%\w+)\))? \{([^}]*)\}")
_GET = re.compile(r"(%\w+) = memref\.get_global @(\w+)")
_GLOBAL = re.compile(r"memref\.global \"private\" constant @(\w+) : memref<\d+xi32> = "
                     r"dense<\[([^\]]*)\]>")
_ATTR = re.compile(r"(\w+) = (-?\d+)")


def npu_ops(text: str) -> list[tuple[str, dict[str, int], tuple[int, ...]]]:
    """(op, attributes, blockwrite data) of every ``aiex.npu`` op in ``npu.mlir``, in order."""
    data = {name: tuple(int(v) & 0xFFFFFFFF for v in values.split(","))
            for name, values in _GLOBAL.findall(text)}
    seq = text[text.index("aie.runtime_sequence"):]
    gets = dict(_GET.findall(seq))
    ops = []
    for op, operand, attrs in _OP.findall(seq):
        ops.append((op, {k: int(v) for k, v in _ATTR.findall(attrs)},
                    data[gets[operand]] if operand else ()))
    return ops


_RENAME = {"addr": "address", "arg_idx": "arg", "column_num": "columns", "row_num": "rows"}


# -- the decoder on every fixture ---------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_the_decoder_reads_what_npu_mlir_prints(name: str) -> None:
    program = read_insts(fixture(name, "insts.bin"))
    ops = npu_ops(fixture(name, "npu.mlir").read_text())
    assert [i.op for i in program.instructions] == [op for op, _, _ in ops]
    for ins, (op, attrs, data) in zip(program.instructions, ops):
        want = {_RENAME.get(k, k): v for k, v in attrs.items()}
        got = {k: ins.fields[k] for k in want}
        assert got == want, f"operation {ins.index} ({op})"
        assert ins.data == data
    device = FIXTURES[name][2] or "npu1"
    h = program.header
    assert (h.major, h.minor) == (0, 1)
    assert h.generation == (4 if device.startswith("npu2") else 3)
    assert h.size == fixture(name, "insts.bin").stat().st_size
    assert h.count == len(ops) and h.rows == 6 and h.memtile_rows == 1


COUNTS = {  # operations, shim tasks, syncs
    "passthrough_npu1": (8, 2, 1), "passthrough_npu2_1col": (8, 2, 1),
    "vector_scalar_mul_npu1": (11, 3, 1), "vector_scalar_mul_npu2": (11, 3, 1),
    "gemm_bf16_npu1_512": (68, 20, 4), "gemm_bf16_npu1_1024x512x768": (116, 36, 4),
    "gemm_bf16_npu2_8x4_512": (112, 32, 8),
}


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_the_fixtures_hold_these_many_operations_tasks_and_syncs(name: str) -> None:
    program = read_insts(fixture(name, "insts.bin"))
    assert (len(program.instructions), len(program.tasks), len(program.syncs)) == COUNTS[name]
    assert program.notes == ()


def test_passthrough_word_for_word() -> None:
    """Every word of passthrough_npu1's stream, against npu.mlir's ops and attributes."""
    raw = fixture("passthrough_npu1", "insts.bin").read_bytes()
    words = struct.unpack(f"<{len(raw) // 4}I", raw)
    assert words[:4] == (0x06030100, 0x00000101, 8, 300)  # v0.1, NPU1, 6 rows; 1 col, 1 memtile
    p = decode(raw)
    bw, patch, push, bw2, patch2, ctrl, push2, sync = p.instructions
    # aiex.npu.blockwrite(%0) {address = 118784}, data [4096, 0, 0, 0, -2^31, 2^25, 0, 2^25]
    assert bw.words == (1, 0, 118784, 48, 4096, 0, 0, 0, 0x80000000, 0x02000000, 0, 0x02000000)
    bd = ShimBd(bw.data)
    assert (bd.buffer_length, bd.linear, bd.burst_length, bd.axcache, bd.valid) == \
        (4096, True, 2, 2, 1)
    # aiex.npu.address_patch {addr = 118788, arg_idx = 0, arg_plus = 0}
    assert patch.words == (0x81, 48, 0, 0, 0, 0, 118788, 0, 0, 0, 0, 0)
    # aiex.npu.write32 {address = 119316, value = 0}: MM2S 0's queue, BD 0
    assert push.words == (0, 0, 119316, 0, 0, 24)
    assert register_name(119316, get_target("npu1")) == "shim(0,0) DMA_MM2S_0_Task_Queue"
    assert patch2.fields == {"address": 118820, "arg": 1, "arg_plus": 0, "action": 0}
    # aiex.npu.maskwrite32 {address = 119296, mask = 7936, value = 3840}: controller id 15
    assert ctrl.words == (3, 0, 119296, 0, 3840, 7936, 28)
    # aiex.npu.write32 {address = 119300, value = 2147483649}: S2MM 0, BD 1, token
    assert push2.words == (0, 0, 119300, 0, 0x80000001, 24)
    # aiex.npu.sync {channel = 0, column = 0, column_num = 1, direction = 0, row = 0, row_num = 1}
    assert sync.words == (0x80, 16, 0, 0x00010100)
    assert bw2.fields["address"] == 118816
    t_in, t_out = p.tasks
    assert (t_in.direction, t_in.channel, t_in.bd_id, t_in.arg, t_in.token) == \
        ("MM2S", 0, 0, 0, False)
    assert (t_out.direction, t_out.channel, t_out.bd_id, t_out.arg, t_out.token,
            t_out.controller_id) == ("S2MM", 0, 1, 1, True, 15)
    assert t_in.length_bytes == t_out.length_bytes == 4096 * 4
    assert t_in.pattern(4) == (0, ((4096, 1),))


def test_gemm_bd_fields() -> None:
    """gemm_bf16_npu1_512's C drain, A fill and B fill: the n-d registers, against the
    dma_memcpy_nd aiedsl emitted (input.mlir) and mlir-aie's encoding of it."""
    p = read_insts(fixture("gemm_bf16_npu1_512", "insts.bin"))
    c, a, b = p.tasks[:3]
    # %C[0, 0, 0, 0][2, 2, 256, 64][131072, 256, 512, 1] f32, issue_token
    assert (c.bd.d0_wrap, c.bd.d0_step, c.bd.d1_wrap, c.bd.d1_step, c.bd.d2_step) == \
        (64, 0, 256, 511, 255)
    assert (c.bd.iteration_wrap, c.bd.iteration_step, c.repeat, c.bd.buffer_length) == \
        (1, 131071, 1, 32768)
    assert c.pattern(4) == (0, ((2, 131072), (2, 256), (256, 512), (64, 1)))
    # %A[0, 0, 0, 0][2, 8, 64, 64][0, 64, 512, 1] bf16: repeat twice (stride 0)
    assert (a.bd.d0_wrap, a.bd.d1_wrap, a.bd.d1_step, a.bd.d2_step, a.bd.iteration_wrap,
            a.repeat) == (32, 64, 255, 31, 0, 1)
    assert a.pattern(2) == (0, ((2, 0), (8, 64), (64, 512), (64, 1)))
    # %B[0, 0, 0, 0][1, 2, 512, 64][0, 256, 512, 1] bf16
    assert b.pattern(2) == (0, ((2, 256), (512, 512), (64, 1)))
    assert (c.channel, a.channel, b.channel) == (0, 0, 1)
    assert p.tasks[3].arg_plus == 262144  # %A[0, 0, 0, 131072] in bf16
    assert [s.column for s in p.syncs] == [0, 1, 2, 3]


# -- the simulator against the instructions -----------------------------------------------------

@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_the_simulator_moves_what_the_npu_runs(name: str, in_root: Path) -> None:
    """The shim transfers and waits the simulator performs are the tasks and syncs of the real
    insts.bin: same order, column, direction, channel, argument, offset, length, n-d pattern and
    tokens; and every transfer moves the same bytes in the same order."""
    program = read_insts(fixture(name, "insts.bin"))
    placed = planned(name)
    sim = shim_program(placed, get_target(placed.device))
    differences = diff_program(sim, program)
    if differences:  # say whether the fixture still is what aiedsl emits
        emitted = [ln for ln in render_mlir(placed, get_target(placed.device)).splitlines() if not ln.startswith("//")]
        given = [ln for ln in fixture(name, "input.mlir").read_text().splitlines()
                 if not ln.startswith("//")]
        stale = "" if emitted == given else " (aiedsl no longer emits the fixture's input.mlir)"
        pytest.fail(f"{len(differences)} differences{stale}:\n" + "\n".join(differences))
    transfers = [s for s in sim if isinstance(s, ShimTransfer)]
    for t, task in zip(transfers, program.tasks):
        fifo = placed.fifo(t.fifo)
        per = fifo.elem.nbytes // t.itemsize  # the simulator's own stepping, as it runs it
        idx = np.concatenate(list(pattern_steps(t.pattern, per)))
        ours = (idx.astype(np.int64)[:, None] * t.itemsize + np.arange(t.itemsize)).ravel()
        words = task.word_addresses() * 4 + task.offset_bytes
        theirs = (words[:, None] + np.arange(4)).ravel()
        assert np.array_equal(ours, theirs), f"{t.op} of {t.tensor} (transfer {t.order})"
    waits = [s for s in sim if isinstance(s, ShimWait)]
    assert [(w.column, w.direction, w.channel) for w in waits] == \
        [(s.column, s.direction, s.channel) for s in program.syncs]


@pytest.mark.parametrize("name", ["passthrough_npu1", "vector_scalar_mul_npu2",
                                  "gemm_bf16_npu1_512"])
def test_the_simulator_runs_that_list(name: str, in_root: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The simulator's runtime takes its work from shim_program: a whole run enqueues exactly
    that list's transfers (fifo, tensor, pattern, token), in order, and finishes."""
    from aiedsl.sim.engine import Engine

    seen: list[tuple[str, object, bool]] = []
    enqueue = Engine.enqueue

    def spy(self: Engine, q: Any, item: Any) -> None:
        seen.append((q.name, item[1], item[2] is not None))
        enqueue(self, q, item)

    monkeypatch.setattr(Engine, "enqueue", spy)
    placed = planned(name)
    design, defines, device = FIXTURES[name]
    handle = load_design(ROOT / "designs" / f"{design}.py", defines, device)
    result = simulate(handle, placed=placed, compute=False, check=False)
    assert result.machine.runtime is not None and result.machine.runtime.finished
    want = [(t.fifo, t.pattern, t.wait) for t in shim_program(placed, get_target(placed.device))
            if isinstance(t, ShimTransfer)]
    # the summary may simulate the run again with a resource made free (aiedsl.sim.freed):
    # each of those runs enqueues the same list
    runs = [seen[i:i + len(want)] for i in range(0, len(seen), len(want))]
    assert runs and all(r == want for r in runs)


def test_hardware_view_of_a_transfer(in_root: Path) -> None:
    placed = planned("vector_scalar_mul_npu1")
    t = next(s for s in shim_program(placed, get_target(placed.device))
             if isinstance(s, ShimTransfer))
    assert hardware_view(t) == {"column": 0, "direction": "MM2S", "channel": 1, "arg": 0,
                                "offset_bytes": 0, "bytes": 8192, "byte_dims": ((8192, 1),),
                                "token": False}


# -- aiedsl inspect -----------------------------------------------------------------------------

def aiedsl(*args: str) -> subprocess.CompletedProcess:
    return run_command(*args, cwd=ROOT, env={**os.environ, "COLUMNS": "80"})


INSPECT_HEAD = """\
insts.bin: 300 bytes, 8 operations, version 0.1, NPU1 (Phoenix, Hawk Point), 1 column(s) x 6 rows (1 memtile row(s))

operations:
  0 @16    blockwrite 0x0001d000 shim(0,0) BD0[0]: 8 words [0x00001000 0x00000000 0x00000000 0x00000000 0x80000000 0x02000000 0x00000000 0x02000000]
           BD: length 4096 words, linear, burst 256 B, AxCache 2, valid
  1 @64    address_patch 0x0001d004 shim(0,0) BD0[1] = address of arg 0 + 0 bytes
  2 @112   write32 0x0001d214 shim(0,0) DMA_MM2S_0_Task_Queue = 0x00000000
"""

INSPECT_TAIL = """\
  5 @232   maskwrite32 0x0001d200 shim(0,0) DMA_S2MM_0_Ctrl = 0x00000f00 mask 0x00001f00
  6 @260   write32 0x0001d204 shim(0,0) DMA_S2MM_0_Task_Queue = 0x80000001
  7 @284   sync column 0 row 0 S2MM channel 0 (1 column(s) x 1 row(s))

shim DMA tasks and syncs, in order (2 task(s), 1 sync(s)):
    0 column 0 MM2S channel 0 BD 0: arg 0 + 0 B, 16384 B per run x 1 run(s), words (size x stride) 4096x1
    1 column 0 S2MM channel 0 BD 1: arg 1 + 0 B, 16384 B per run x 1 run(s), words (size x stride) 4096x1, token
    2 sync column 0 S2MM channel 0
"""


def test_inspect_lists_passthrough() -> None:
    r = aiedsl("inspect", str(fixture("passthrough_npu1", "insts.bin")))
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.startswith(INSPECT_HEAD)
    assert r.stdout.endswith(INSPECT_TAIL)


def test_inspect_lists_gemm_tasks() -> None:
    r = aiedsl("inspect", str(fixture("gemm_bf16_npu1_512", "insts.bin")))
    assert r.returncode == 0
    assert ("    1 column 0 MM2S channel 0 BD 1: arg 0 + 0 B, 65536 B per run x 2 run(s), words "
            "(size x stride) 2x0 8x32 64x256 32x1\n") in r.stdout
    assert "   23 sync column 3 S2MM channel 0\n" in r.stdout


def _stream(*ops: tuple[int, ...], count: int | None = None, gen: int = 3) -> bytes:
    body = [w for op in ops for w in op]
    header = [0x06000100 | gen << 16, 0x0101, len(ops) if count is None else count,
              4 * (4 + len(body))]
    return struct.pack(f"<{len(header) + len(body)}I", *header, *body)


SYNC = (0x80, 16, 0x00000000, 0x00010100)


@pytest.mark.parametrize("content, message", [
    (None, "is not a file"),
    (b"", "is truncated: 0 bytes, shorter than the 16-byte header"),
    (b"\x00\x01\x03", "is 3 bytes, not a whole number of 32-bit words"),
    ("cut", "is truncated: the header gives 300 bytes, the file has 100"),
    (_stream((0x05, 0, 0)),
     "unknown opcode 0x05 (noop: its layout is not known to aiedsl) at byte 16 (operation 0)"),
    (_stream((0x42,)), "unknown opcode 0x42 at byte 16 (operation 0)"),
    (_stream(SYNC, count=2), "holds 1 operations, its header says 2"),
    # a fake aiecc's junk passed for a stream on its header alone (a tester)
    (_stream(SYNC, count=0xFFFFFFFF), "insts.bin's header says it holds 4,294,967,295 "
     "operations, more than the 16 bytes after the header can hold (4 bytes each at least)"),
    (_stream((0x80, 20, 0, 0)), "sync at byte 16 gives its size as 20 bytes, not 16"),
    # an unnamed custom op cut short was "truncated: None at byte 16" (a tester)
    (_stream((0xF3,)), "is truncated: custom op 0xf3 at byte 16 needs 8 bytes, 4 are left"),
    # a design file said "truncated: the header gives 540698727 bytes" (a tester)
    (b'"""Passthrough: host -> memtile"""\nimport numpy as np\n' * 4,
     "insts.bin is a text file, not an NPU instruction stream"),
])
def test_inspect_errors(tmp_path: Path, content: object, message: str) -> None:
    path = tmp_path / "insts.bin"
    if content is None:
        path.mkdir()
    elif content == "cut":
        path.write_bytes(fixture("passthrough_npu1", "insts.bin").read_bytes()[:100])
    else:
        assert isinstance(content, bytes)
        path.write_bytes(content)
    r = aiedsl("inspect", str(path))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("error [instruction stream]: ") and message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_inspect_of_a_missing_file() -> None:
    r = aiedsl("inspect", "no/such/insts.bin")
    assert r.returncode == 2 and "no/such/insts.bin does not exist" in r.stderr
    assert "Traceback" not in r.stderr


def test_inspect_of_an_empty_path_says_it_is_empty() -> None:
    """`aiedsl inspect ""` said ". is not a file" (a tester)."""
    r = aiedsl("inspect", "")
    assert r.returncode == 2 and r.stderr.startswith(
        "error: Invalid value for INSTS: the path is empty: give the path of an insts.bin\n")


def test_inspect_usage_error() -> None:
    r = aiedsl("inspect")
    assert r.returncode == 2 and r.stderr.startswith("error: ") and "Usage: aiedsl inspect" in \
        r.stderr


# -- the decoder on streams written here ----------------------------------------------------------

def _bd(words: list[int]) -> tuple[int, ...]:
    return (0x01, 0, 0x1D000, 48, *words)


def test_iteration_and_repeat_runs() -> None:
    """An iteration stride walks the runs; wrapping after 2 runs repeats them."""
    bd = [8, 0, 0, (4 << 20) | 1, 0x80000000 | (1 << 20), 0x02000000, (1 << 20) | 99,
          1 << 25]  # d0: 4 words 2 apart, d1 1; 2 D2 steps 1 word apart; iteration 2 x 100
    push = (0, 0, 0x1D214, 0, 3 << 16, 24)  # MM2S 0, BD 0, 4 runs
    p = decode(_stream(_bd(bd), push))
    (t,) = p.tasks
    assert t.arg is None and t.runs == 4 and not t.token
    assert t.bd.word_dims() == ((2, 1), (1, 1), (4, 2))
    assert t.word_dims() == ((2, 0), (2, 100), (2, 1), (1, 1), (4, 2))
    assert t.run_starts() == [0, 100, 0, 100]
    assert list(t.word_addresses()[:8]) == [0, 2, 4, 6, 1, 3, 5, 7]
    assert t.total_bytes == 4 * 8 * 4
    assert t.pattern(4) == (0, ((2, 0), (2, 100), (2, 1), (4, 2)))
    with pytest.raises(ValueError, match="not whole 8-byte elements"):
        t.pattern(8)


def test_partial_d2_and_irregular_runs_are_listed_not_guessed() -> None:
    bd = ShimBd((5, 0, 0, 2 << 20, 1 << 20, 1, 0, 1 << 25))  # 5 words in d2 steps of 2
    with pytest.raises(ValueError, match="not whole D2 steps"):
        bd.word_dims()
    assert list(bd.word_addresses()) == [0, 1, 2, 3, 4]
    started = (0, 0, 0x1D214, 0, 2 << 16, 24)
    bd2 = [4, 0, 0, 0, 0, 0, (2 << 26) | (2 << 20) | 9, 1 << 25]  # current 2 of 3, step 10
    (t,) = decode(_stream(_bd(bd2), started)).tasks
    assert t.run_starts() == [20, 0, 10]
    with pytest.raises(ValueError, match="no single stride"):
        t.word_dims()
    assert "irregular" in t.describe()


def test_chained_bds_locks_and_packets() -> None:
    first = [16, 0, (1 << 30) | (3 << 19) | (2 << 16), 0, 0, 0, 0,
             (1 << 27) | (1 << 26) | (1 << 25) | (0x7F << 18) | (2 << 13) | (1 << 12)
             | (1 << 5) | 3]
    second = [4, 0x1000, 0, 0, 0, 0, 0, 1 << 25]
    push = (0, 0, (2 << 25) | 0x1D20C, 0, 0x80000000, 24)  # column 2, S2MM 1, BD 0, token
    p = decode(_stream(_bd(first), (0x01, 0, 0x1D020, 48, *second), push))
    (t,) = p.tasks
    assert (t.column, t.direction, t.channel, t.bd_id, t.token) == (2, "S2MM", 1, 0, True)
    # the BDs were written to column 0: column 2's are unwritten, and said so
    assert p.notes and "never wrote" in p.notes[0]
    p = decode(_stream((0x01, 0, (2 << 25) | 0x1D000, 48, *first),
                       (0x01, 0, (2 << 25) | 0x1D020, 48, *second), push))
    (t,) = p.tasks
    assert [b for b, *_ in t.chain] == [1] and t.chain[0][1].base_address == 0x1000
    bd = t.bd
    assert (bd.enable_packet, bd.packet_id, bd.packet_type) == (1, 3, 2)
    assert (bd.next_bd, bd.use_next_bd, bd.lock_rel_value, bd.lock_rel_id) == (1, 1, -1, 2)
    assert (bd.lock_acq_enable, bd.lock_acq_value, bd.lock_acq_id) == (1, 1, 3)
    assert t.total_bytes == 20 * 4
    assert "chains to BD 1" in t.describe()


def test_other_operations_decode() -> None:
    ops = ((0x06 | 2 << 8,), (0x08 | 5 << 16, 64, 0x1000, 1), (0x0A | 1 << 8, 256, 0, 0),
           (0x0C | 3 << 8 | 1 << 16, 7, 0x1D004), (0x83, 12, 42),
           (0x04, 0, 0x1D228, 0, 0, 0x400000, 28), SYNC)
    p = decode(_stream(*ops, gen=4))
    assert p.header.device == "NPU2 (Strix, Krackan)"
    assert [i.op for i in p.instructions] == ["preempt", "load_pdi", "create_scratchpad",
                                              "update_reg", "record_timer", "maskpoll32", "sync"]
    assert p.instructions[0].fields == {"level": 2}
    assert p.instructions[1].fields == {"id": 5, "size": 64, "address": 0x1_0000_1000}
    assert p.instructions[4].data == (42,)
    assert "record_timer" in p.instructions[4].describe()
    assert p.instructions[5].fields["mask"] == 0x400000
    assert "\n".join(listing(p)).count("\n") > 8


def test_a_stream_is_read_with_the_registers_of_the_device_its_header_names() -> None:
    """The address generator's step, the shim's BDs and row, a core's memory and lock
    registers are the target model's: the header's generation chooses it; a generation aiedsl
    does not know is read as the default device's, and a note says so."""
    assert decode(_stream(SYNC, gen=3)).target.name == "npu1"
    assert decode(_stream(SYNC, gen=4)).target.name == "npu2"
    assert decode(_stream(SYNC, gen=3), target=get_target("npu2_1col")).target.name == "npu2_1col"
    p = decode(_stream(SYNC, gen=7))
    assert p.target.name == "npu1"
    assert p.notes == ("the header's device generation 7 is none aiedsl knows: its registers are "
                       "read as npu1's",)


def test_canonical_dims_and_elements() -> None:
    assert canonical_dims([(1, 0), (2, 8), (4, 2), (2, 1)]) == ((16, 1),)
    assert canonical_dims([(2, 16), (4, 2), (2, 1)]) == ((2, 16), (8, 1))
    assert canonical_dims([(3, 0), (1, 5)]) == ((3, 0),)
    assert to_elements(8, ((4, 16), (8, 1)), 2) == (4, ((4, 8), (4, 1)))
    with pytest.raises(ValueError):
        to_elements(2, ((8, 1),), 4)


def test_as_plain_json_data() -> None:
    program = read_insts(fixture("vector_scalar_mul_npu1", "insts.bin"))
    data = json.loads(json.dumps(as_dict(program)))
    assert data["header"]["device"] == "NPU1 (Phoenix, Hawk Point)"
    assert [e["kind"] for e in data["events"]] == ["task", "task", "task", "sync"]
    assert data["events"][1] | {"bd_fields": None} == {
        "kind": "task", "order": 1, "column": 0, "direction": "MM2S", "channel": 0, "bd": 1,
        "arg": 1, "offset_bytes": 0, "length_bytes": 4, "runs": 1, "token": False,
        "words": [[1, 1]], "bd_fields": None}


def test_read_insts_is_a_design_error(tmp_path: Path) -> None:
    with pytest.raises(DesignError, match="does not exist"):
        read_insts(tmp_path / "nothing.bin")
    assert isinstance(ShimTask, type)


# -- what the simulator runs is what the NPU runs, beyond the fixtures ----------------------------

def test_an_offset_with_a_stepping_innermost_dimension_lands_where_the_npu_starts(
        tmp_path: Path) -> None:
    """mlir-aie starts a transfer at the sum of offset x stride over the dimensions, so a linear
    offset goes on a dimension of stride 1 (here the one that walks the rows)."""
    from aiedsl.ir.types import Pattern

    p = Pattern(offset=64, sizes=(1, 1, 32, 32), strides=(0, 0, 1, 64))  # a transpose of i32
    offsets, strides = p.per_dimension_offsets()
    assert (offsets, strides) == ((0, 0, 64, 0), (0, 0, 1, 64))
    assert sum(o * s for o, s in zip(offsets, strides)) == 64
    p = Pattern(offset=64, sizes=(1, 1, 1, 32), strides=(0, 0, 0, 64))  # one column
    assert p.per_dimension_offsets() == ((0, 0, 64, 0), (0, 0, 1, 64))
    p = Pattern(offset=5, sizes=(1, 1, 1, 4096), strides=(0, 0, 0, 1))
    assert p.per_dimension_offsets() == ((0, 0, 0, 5), (0, 0, 0, 1))


def test_inspect_of_the_wrong_file_says_what_was_expected_and_found(tmp_path: Path) -> None:
    longer = tmp_path / "longer.bin"
    longer.write_bytes(struct.pack("<5I", 0x06030100, 0x0101, 0, 16, 0))  # header: 16 bytes
    r = aiedsl("inspect", str(longer))
    assert r.returncode == 2
    assert r.stderr == (
        f"error [instruction stream]: {longer} is longer than its header says: the header "
        "gives 16 bytes, the file has 20\n"
        "  limit: 16 bytes, the stream size its header gives (word 3)\n"
        "  found: 20 bytes in the file\n"
        "  fix: give an insts.bin written by aie-translate --aie-npu-to-binary (aiedsl build "
        "writes one when mlir-aie is here)\n")
    elf = tmp_path / "a.out"
    elf.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(57))
    r = aiedsl("inspect", str(elf))
    assert r.returncode == 2
    assert r.stderr.splitlines()[:2] == [
        f"error [instruction stream]: {elf} is an ELF file (a program or a core's object code), "
        "not an NPU instruction stream",
        "  found: the ELF signature (7f 45 4c 46) at byte 0"]
    elf.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(994))  # 1001 bytes: no whole words
    r = aiedsl("inspect", str(elf))
    assert r.returncode == 2
    assert r.stderr.splitlines()[0] == (
        f"error [instruction stream]: {elf} is an ELF file (a program or a core's object code), "
        "not an NPU instruction stream")
