"""Core-local buffers: ``local(...)`` (IRON's ``Buffer(type, initial_value=...)`` handed to a
Worker). A running sum and a running maximum across loop iterations simulated against numpy,
weights kept in a local, the emitted ``aie.buffer`` with its initial value, allocation and the
memory count, design.json, and the mistakes, word for word."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import ml_dtypes
import numpy as np
import pytest

from aiedsl.checks import check_design
from aiedsl.codegen.mlir import initial_literal, render_mlir
from aiedsl.errors import DesignError
from aiedsl.ir.design import Design
from aiedsl.ir.program import rounding
from aiedsl.ir.types import TensorType
from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.targets import get_target

DesignFile = Callable[..., Path]

RUNNING_SUM = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, local, loop, runtime
from aiedsl.kernels import add, passthrough

@design(device="npu1_1col")
def rsum(inp: Tensor[128, i32], out: Tensor[16, i32]):
    a = fifo(Tensor[16, i32])
    b = fifo(Tensor[16, i32])
    acc = local(Tensor[16, i32], initial=100)
    addk = add(Tensor[16, i32])
    copy = passthrough(Tensor[16, i32])

    @herd()
    def core():
        for _ in loop(8):
            with a.consume() as t:
                addk(acc, t, acc)
        with b.produce() as o:
            copy(acc, o)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)

@rsum.reference
def reference(inp):
    return inp.reshape(8, 16).sum(axis=0) + 100
'''
"""A running sum over eight tiles in a local that starts at 100 (line 9: the local, 17: the
add, 19: the copy out)."""

MAX2_CC = '''#include <aie_api/aie.hpp>
void max2(const bfloat16 *a, const bfloat16 *b, bfloat16 *c) { c[0] = a[0] > b[0] ? a[0] : b[0]; }
void spread(const bfloat16 *a, bfloat16 *c) { for (int i = 0; i < 32; i++) c[i] = a[0]; }
'''

RUNNING_MAX = '''
import numpy as np
from aiedsl import Tensor, bf16, channel, design, herd, local, loop, runtime
from aiedsl.kernels import buffer, declare, reduce_max

def max2_ref(a, b, c):
    c[...] = np.maximum(a, b)

def spread_ref(a, c):
    c[...] = a[0]

@design(device="npu1")
def rmax(inp: Tensor[512, bf16], out: Tensor[64, bf16]):
    a = channel(Tensor[1, 64, bf16], shape=[2])
    o = channel(Tensor[32, bf16], shape=[2])
    best = local(Tensor[1, bf16], initial=-np.inf)
    tmp = local(Tensor[1, bf16])
    row_max = reduce_max(1, 64, bf16)
    max2 = declare("max2_bf16_1", source="max2.cc", entry="max2",
                   args=[buffer("a", Tensor[1, bf16]), buffer("b", Tensor[1, bf16]),
                         buffer("c", Tensor[1, bf16], "out")],
                   reference=max2_ref, cycles=20, cost="a scalar max", exact=True)
    spread = declare("spread_bf16_32", source="max2.cc", entry="spread",
                     args=[buffer("a", Tensor[1, bf16]), buffer("c", Tensor[32, bf16], "out")],
                     reference=spread_ref, cycles=40, cost="32 scalar stores", exact=True)

    @herd(cols=2)
    def core(x, y):
        for _ in loop(4):
            with a[x].consume() as t:
                row_max(t, tmp)
                max2(best, tmp, best)
        with o[x].produce() as e:
            spread(best, e)

    with runtime() as rt:
        for x in range(2):
            rt.fill(a[x], inp, (x * 256, [256], [1]))
            rt.drain(o[x], out, (x * 32, [32], [1]))

@rmax.reference
def reference(inp):
    return np.repeat(inp.reshape(2, 256).max(axis=1), 32)
'''
"""IRON's vector_reduce_max: each of two cores keeps its running maximum in ``best`` (starting
at -inf) and its tile's maximum in ``tmp`` (line 15: best, 16: tmp, 31: the max)."""


def running_max(design_file: DesignFile) -> Path:
    design_file(MAX2_CC, "max2.cc")
    return design_file(RUNNING_MAX)


def placed_of(path: Path) -> Design:
    placed, _ = check_design(load_design(path).ir)
    return placed


def mlir_lines(placed: Design) -> list[str]:
    return [ln.strip() for ln in render_mlir(placed, get_target(placed.device)).splitlines()]


def load_error(path: Path) -> str:
    with pytest.raises(DesignError) as e:
        load_design(path)
    return str(e.value)


def check_error(path: Path) -> str:
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    return str(e.value)


def variant(design_file: DesignFile, old: str, new: str, src: str = RUNNING_SUM) -> Path:
    assert old in src
    return design_file(src.replace(old, new))


# -- simulated against numpy ------------------------------------------------------------------

def test_running_sum_reads_its_initial_value_first_and_keeps_it_across_iterations(
        design_file: DesignFile) -> None:
    """The first add reads the initial 100, each later one what the one before wrote."""
    path = design_file(RUNNING_SUM)
    inp = np.arange(128, dtype=np.int32)
    result = simulate(load_design(path), {"inp": inp})
    assert result.passed, [c.line() for c in result.checks]
    want = inp.reshape(8, 16).sum(axis=0) + 100
    assert (result.outputs["out"] == want).all()
    # the core's copy ends the run holding the sum (on the NPU, the next run starts from it)
    assert (result.machine.locals[("acc", "core[0,0]")] == want).all()


def test_each_run_of_the_simulator_starts_from_the_load(design_file: DesignFile) -> None:
    """A simulation is one invocation after the design's load: a second one starts from the
    initial value again (the NPU's second run would start from the first's sum)."""
    d = load_design(design_file(RUNNING_SUM))
    inp = np.ones(128, dtype=np.int32)
    first, second = simulate(d, {"inp": inp}), simulate(d, {"inp": inp})
    assert (first.outputs["out"] == 108).all() and (second.outputs["out"] == 108).all()


def test_running_sum_with_the_kernels_c_plus_plus(design_file: DesignFile) -> None:
    """The same with add.cc and passthrough.cc built for the host: the local is handed to the
    C++ as a buffer, both as an input and as the output of one call."""
    path = design_file(RUNNING_SUM)
    result = simulate(load_design(path), kernels="native")
    assert result.passed, [c.line() for c in result.checks]


def test_running_max_keeps_one_copy_per_core(design_file: DesignFile) -> None:
    """Two cores, each with its own best (from -inf) and tmp: each ends with its half's
    maximum, and the halves differ."""
    path = running_max(design_file)
    inp = np.random.default_rng(2).standard_normal(512).astype(ml_dtypes.bfloat16)
    inp[300] = 9.0  # the second half's maximum, far above the first's
    result = simulate(load_design(path), {"inp": inp})
    assert result.passed, [c.line() for c in result.checks]
    out = result.outputs["out"].astype(np.float32)
    assert (out[32:] == 9.0).all() and (out[:32] == inp[:256].astype(np.float32).max()).all()
    m = result.machine
    assert float(m.locals[("best", "core[1,0]")][0]) == 9.0
    assert float(m.locals[("best", "core[0,0]")][0]) < 9.0


def test_running_max_with_the_kernels_c_plus_plus(design_file: DesignFile) -> None:
    result = simulate(load_design(running_max(design_file)), kernels="native")
    assert result.passed, [c.line() for c in result.checks]


WEIGHTS = '''
import ml_dtypes
import numpy as np
from aiedsl import Tensor, bf16, design, f32, fifo, herd, local, loop, runtime
from aiedsl.kernels import block_dims, matmul, unblock_dims, zero
from aiedsl.kernels.layout import block

W = np.random.default_rng(5).standard_normal((32, 32)).astype(ml_dtypes.bfloat16)

@design(device="npu1_1col")
def wmm(A: Tensor[128, 32, bf16], C: Tensor[128, 32, f32]):
    mm = matmul(32, 32, 32)
    r, s, t = mm.ir.params["r"], mm.ir.params["s"], mm.ir.params["t"]
    w = local(Tensor[32, 32, bf16], initial=block(W, s, t).reshape(32, 32))  # in mmul blocks
    a_l3 = fifo(Tensor[1024, bf16])
    a = a_l3.forward(Tensor[32, 32, bf16], dims_to_stream=block_dims(32, 32, r, s))
    c = fifo(Tensor[32, 32, f32])
    c_l3 = c.forward(Tensor[1024, f32], dims_to_stream=unblock_dims(32, 32, r, t))
    zero_c = zero(Tensor[32, 32, f32])

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as ta, c.produce() as tc:
                zero_c(tc)
                mm(ta, w, tc)

    with runtime() as rt:
        rt.fill(a_l3, A)
        rt.drain(c_l3, C)

@wmm.reference
def reference(A):
    return A.astype(np.float32) @ W.astype(np.float32)
'''


def test_weights_in_a_local_feed_the_matmul(design_file: DesignFile) -> None:
    """A constant B kept in a local (its initial value, in the mmul's blocks) with A from a
    fifo: the matmul's operands are made from both, its C kept across the call."""
    result = simulate(load_design(design_file(WEIGHTS)))
    assert result.passed, [c.line() for c in result.checks]


ACCUMULATOR = '''
import numpy as np
from aiedsl import Tensor, bf16, design, f32, fifo, herd, local, loop, runtime
from aiedsl.kernels import block_dims, matmul, passthrough, unblock_dims

@design(device="npu1_1col")
def accmm(A: Tensor[32, 128, bf16], B: Tensor[128, 32, bf16], C: Tensor[32, 32, f32]):
    mm = matmul(32, 32, 32)
    r, s, t = mm.ir.params["r"], mm.ir.params["s"], mm.ir.params["t"]
    acc = local(Tensor[32, 32, f32], initial=0.0)
    a_l3 = fifo(Tensor[32, 32, bf16])
    a = a_l3.forward(dims_to_stream=block_dims(32, 32, r, s))
    b_l3 = fifo(Tensor[32, 32, bf16])
    b = b_l3.forward(dims_to_stream=block_dims(32, 32, s, t))
    c = fifo(Tensor[32, 32, f32])
    c_l3 = c.forward(Tensor[1024, f32], dims_to_stream=unblock_dims(32, 32, r, t))
    copy = passthrough(Tensor[32, 32, f32])

    @herd()
    def core():
        for _ in loop(4):
            with a.consume() as ta, b.consume() as tb:
                mm(ta, tb, acc)
        with c.produce() as tc:
            copy(acc, tc)

    with runtime() as rt:
        rt.fill(a_l3, A, (0, (1, 4, 32, 32), (0, 32, 128, 1)))
        rt.fill(b_l3, B)
        rt.drain(c_l3, C)

@accmm.reference
def reference(A, B):
    return A.astype(np.float32) @ B.astype(np.float32)
'''


def test_a_matmul_accumulates_into_a_local_across_the_k_loop(design_file: DesignFile) -> None:
    """C kept in a local (zero from the load) through a K loop of four calls, then copied out:
    the matmul adds into the local's own buffer call after call."""
    result = simulate(load_design(design_file(ACCUMULATOR)))
    assert result.passed, [c.line() for c in result.checks]
    assert "absolute" in result.checks[0].tolerance  # a sum's allowance


def test_a_bf16_running_sum_in_a_local_is_compared_as_a_chain_of_roundings(
        design_file: DesignFile) -> None:
    """The output is copied out of a local each add rounded into: the comparison allows it the
    roundings of its partial sums, as it does a sum kept in a fifo element."""
    src = RUNNING_SUM.replace("16", "32").replace("128", "256").replace("i32", "bf16").replace(
        "initial=100", "initial=1.5").replace("+ 100", "+ 1.5").replace(
        "reshape(8, 32).sum(axis=0)", "astype(np.float32).reshape(8, 32).sum(axis=0)")
    d = load_design(design_file(src))
    assert rounding(d.ir, "out") == "chain"
    result = simulate(d)
    assert result.passed, [c.line() for c in result.checks]


# -- the MLIR --------------------------------------------------------------------------------

def test_the_buffer_and_the_calls_in_the_mlir(design_file: DesignFile) -> None:
    """``aie.buffer`` in the core's tile with its initial value (AIEOps.td's BufferOp:
    ``: memref<...> = dense<...>``, as mlir-aie's tests spell it), and the calls handed it."""
    lines = mlir_lines(placed_of(design_file(RUNNING_SUM)))
    assert ('%local_acc = aie.buffer(%tile_0_2) {sym_name = "acc"} : memref<16xi32> = '
            'dense<100> loc("d.py":9:0)') in lines
    assert ('func.call @add_i32_16(%local_acc, %view3_0, %local_acc) : (memref<16xi32>, '
            'memref<16xi32>, memref<16xi32>) -> () loc("d.py":17:0)') in lines
    assert ('func.call @passthrough_i32_16(%local_acc, %view4_0) : (memref<16xi32>, '
            'memref<16xi32>) -> () loc("d.py":19:0)') in lines
    # right after the tiles, before the fifos (as rtp buffers)
    at = lines.index('%local_acc = aie.buffer(%tile_0_2) {sym_name = "acc"} : memref<16xi32> '
                     '= dense<100> loc("d.py":9:0)')
    assert lines[at - 1] == "%tile_0_2 = aie.tile(0, 2)"
    assert lines[at + 2].startswith("aie.objectfifo @a(")


def test_each_core_s_copy_is_named_after_its_tile(design_file: DesignFile) -> None:
    lines = mlir_lines(placed_of(running_max(design_file)))
    buffers = [ln for ln in lines if "aie.buffer" in ln]
    assert buffers == [
        '%local_best_0_2 = aie.buffer(%tile_0_2) {sym_name = "best_0_2"} : memref<1xbf16> = '
        'dense<0xFF80> loc("d.py":15:0)',
        '%local_best_1_2 = aie.buffer(%tile_1_2) {sym_name = "best_1_2"} : memref<1xbf16> = '
        'dense<0xFF80> loc("d.py":15:0)',
        '%local_tmp_0_2 = aie.buffer(%tile_0_2) {sym_name = "tmp_0_2"} : memref<1xbf16> '
        'loc("d.py":16:0)',
        '%local_tmp_1_2 = aie.buffer(%tile_1_2) {sym_name = "tmp_1_2"} : memref<1xbf16> '
        'loc("d.py":16:0)']
    assert ('func.call @max2_bf16_1(%local_best_1_2, %local_tmp_1_2, %local_best_1_2) : '
            '(memref<1xbf16>, memref<1xbf16>, memref<1xbf16>) -> () loc("d.py":31:0)') in lines


def hexed(values: np.ndarray) -> str:
    return values.astype(values.dtype.newbyteorder("<")).tobytes().hex()


@pytest.mark.parametrize("t, values, literal", [
    (TensorType(shape=(2, 2), dtype="i32"), np.array([[0, 1], [2, 3]], np.int32),
     "dense<[[0, 1], [2, 3]]>"),
    (TensorType(shape=(4,), dtype="u8"), np.array([0, 1, 253, 255], np.uint8),
     "dense<[0, 1, 253, 255]>"),
    (TensorType(shape=(3,), dtype="i8"), np.array([-128, 0, 127], np.int8),
     "dense<[-128, 0, 127]>"),
    (TensorType(shape=(4,), dtype="f32"), np.array([0.1, -2.0, np.inf, 1e-30], np.float32),
     "dense<[0.10000000149011612, -2.0, 0x7F800000, 1.0000000031710769e-30]>"),
    (TensorType(shape=(3,), dtype="bf16"),
     np.array([0.1, -np.inf, np.nan], ml_dtypes.bfloat16),
     "dense<[0.10009765625, 0xFF80, 0x7FC0]>"),
    (TensorType(shape=(2, 3), dtype="bf16"), np.full((2, 3), 7, ml_dtypes.bfloat16),
     "dense<7.0>"),
])
def test_initial_values_are_spelled_as_mlir_parses_them(t: TensorType, values: np.ndarray,
                                                         literal: str) -> None:
    """Nested by the shape; floats with a dot, the shortest decimal of their value (which the
    parser rounds back to the same bits); infinities and NaNs as their bits in hex, the only
    spelling MLIR's dense parser takes for them; one value for all: a splat."""
    assert initial_literal(t, hexed(values)) == literal


# -- allocation and memory -----------------------------------------------------------------------

def test_the_buffer_is_allocated_with_the_core_s_others(design_file: DesignFile) -> None:
    """aie-assign-buffer-addresses places it with the fifo buffers (after them in IR order,
    largest first, round-robin over the banks); design.json records address and bank; the
    memory check counts it."""
    path = design_file(RUNNING_SUM.replace("Tensor[16, i32], initial=100",
                                           "Tensor[16, i32], initial=100, name=\"acc\""))
    placed, table = check_design(load_design(path).ir)
    assert placed.physical is not None
    bufs = [(b.name, b.nbytes, b.address, b.bank) for b in placed.physical.buffers
            if b.tile == (0, 2)]
    assert bufs == [("core[0,0] stack", 1024, 0, 0), ("b_buff_0", 64, 0x400, 0),
                    ("b_buff_1", 64, 0x4000, 1), ("a_cons_buff_0", 64, 0x8000, 2),
                    ("a_cons_buff_1", 64, 0xC000, 3), ("acc", 64, 0x440, 0)]
    mem = table[(0, 2)].memory
    assert [(u.label, u.amount) for u in mem][-1] == ("local acc 64 B", 64)
    assert sum(u.amount for u in mem) == 1024 + 4 * 64 + 64
    d = Design.model_validate_json(placed.model_dump_json())
    assert d == placed
    assert d.local("acc").init == np.full(16, 100, np.int32).tobytes().hex()
    assert d.local("acc").cores == ("core[0,0]",)


def test_a_larger_local_is_placed_first(design_file: DesignFile) -> None:
    """Largest first: a 16 KB local takes bank 1 whole (the stack is in bank 0)."""
    path = variant(design_file, "acc = local(Tensor[16, i32], initial=100)",
                   "acc = local(Tensor[16, i32], initial=100)\n"
                   "    big = local(Tensor[4096, i32], initial=0)\n"
                   "    zero_big = zero(Tensor[4096, i32])")
    path.write_text(path.read_text().replace(
        "from aiedsl.kernels import add, passthrough",
        "from aiedsl.kernels import add, passthrough, zero").replace(
        "        for _ in loop(8):", "        zero_big(big)\n        for _ in loop(8):"))
    placed = placed_of(path)
    assert placed.physical is not None
    bufs = [(b.name, b.address, b.bank) for b in placed.physical.buffers if b.tile == (0, 2)]
    # big fits no bank with the stack: bank 1; then round-robin on from bank 2, bank 1 full
    assert bufs == [("core[0,0] stack", 0, 0), ("big", 0x4000, 1), ("b_buff_0", 0x8000, 2),
                    ("b_buff_1", 0xC000, 3), ("a_cons_buff_0", 0x400, 0),
                    ("a_cons_buff_1", 0x8040, 2), ("acc", 0xC040, 3)]


def test_an_over_full_core_names_the_local(design_file: DesignFile) -> None:
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, local, runtime
        from aiedsl.kernels import add, zero

        @design(device="npu1_1col")
        def big(inp: Tensor[256, i32], out: Tensor[256, i32]):
            a = fifo(Tensor[256, i32])
            b = fifo(Tensor[256, i32])
            table = local(Tensor[15360, i32])
            addk = add(Tensor[256, i32])
            clear = zero(Tensor[15360, i32])

            @herd()
            def core():
                clear(table)
                with a.consume() as t, b.produce() as o:
                    addk(t, t, o)

            with runtime() as rt:
                rt.fill(a, inp)
                rt.drain(b, out)
        ''')
    assert check_error(path) == (
        "d.py:8: error [core data memory]: core tile (0, 2) (core[0,0]: add_i32_256, "
        "zero_i32_15360) needs more data memory than it has\n"
        "  limit: 65,536 bytes\n"
        "  found: 66,560 bytes\n"
        "  d.py:12: stack: 1024\n"
        "  d.py:6: a 2 x 1024 B: 2048\n"
        "  d.py:7: b 2 x 1024 B: 2048\n"
        "  d.py:8: local table 61440 B: 61440\n"
        "  fix: free 1,024 bytes: lower a fifo's depth (depth=1 single-buffers it), use smaller "
        "tiles, declare smaller locals, or give the core a smaller stack")


def test_the_report_lists_each_copy(design_file: DesignFile) -> None:
    from aiedsl.emit import generate

    report = generate(load_design(running_max(design_file))).files["report.txt"]
    assert ("  best: 1xbf16, initial dense<0xFF80>; core[0,0] (0,2) as best_0_2, core[1,0] "
            "(1,2) as best_1_2") in report.splitlines()
    assert ("  tmp: 1xbf16, no initial value; core[0,0] (0,2) as tmp_0_2, core[1,0] (1,2) as "
            "tmp_1_2") in report.splitlines()


# -- the API ---------------------------------------------------------------------------------

def test_initial_forms(design_file: DesignFile) -> None:
    """A number for every element, an array of the type's shape and element type, or an array
    alone (IRON's Buffer(initial_value=arr)); a float into bf16 rounds as MLIR's parser does."""
    path = design_file(RUNNING_SUM.replace(
        "acc = local(Tensor[16, i32], initial=100)",
        "acc = local(initial=np.arange(16, dtype=np.int32) + 100)").replace(
        "sum(axis=0) + 100", "sum(axis=0) + np.arange(16) + 100"))
    d = load_design(path)
    assert d.ir.local("acc").type == TensorType(shape=(16,), dtype="i32")
    assert simulate(d).passed
    src = RUNNING_MAX.replace("initial=-np.inf", "initial=np.float32(0.1)")
    design_file(MAX2_CC, "max2.cc")
    d = load_design(design_file(src)).ir
    assert d.local("best").init == np.array([0.1], ml_dtypes.bfloat16).tobytes().hex()


# -- mistakes, word for word ---------------------------------------------------------------------

def test_an_initial_array_of_another_type_is_refused(design_file: DesignFile) -> None:
    path = variant(design_file, "initial=100)", "initial=np.arange(16))")
    assert load_error(path) == (
        "d.py:9: error [local]: the initial value of local 'acc' (16xi32) is an array of int64\n"
        "  limit: an array of i32 (np.int32): nothing is converted for you (a float array for an "
        "integer buffer would be truncated, int64 wrapped)\n"
        "  found: int64\n"
        "  fix: build it as one: np.array(..., dtype=np.int32), or .astype(np.int32) once you "
        "know no value changes")


def test_an_initial_array_of_another_shape_is_refused(design_file: DesignFile) -> None:
    path = variant(design_file, "initial=100)", "initial=np.zeros((4, 4), np.int32))")
    assert load_error(path) == (
        "d.py:9: error [local]: the initial value of local 'acc' (16xi32) has shape [4, 4]\n"
        "  limit: the local's shape [16]\n"
        "  found: [4, 4]\n"
        "  fix: reshape it: .reshape(16), or one number for every element")


def test_an_initial_value_out_of_range_is_refused(design_file: DesignFile) -> None:
    path = variant(design_file, "initial=100)", "initial=2**31)")
    assert load_error(path) == (
        "d.py:9: error [local]: the initial value of local 'acc' (16xi32) is 2147483648\n"
        "  limit: i32 values from -2147483648 to 2147483647\n"
        "  found: 2147483648\n"
        "  fix: give a value the element type holds, or declare a wider type")


def test_an_initial_int_past_a_float_is_refused_in_short(design_file: DesignFile) -> None:
    """10**400 for an f32 local was a bare OverflowError; for an i32 one the message printed
    its 401 digits."""
    path = variant(design_file, "initial=100)", "initial=10**400)",
                   RUNNING_SUM.replace("Tensor[16, i32], initial", "Tensor[16, f32], initial")
                   .replace("i32, local", "i32, f32, local"))
    assert load_error(path) == (
        "d.py:9: error [local]: the initial value of local 'acc' (16xf32) is "
        "100000...000000 (401 digits)\n"
        "  limit: a finite f32 (its largest is 3.4028235e+38)\n"
        "  found: 100000...000000 (401 digits)\n"
        "  fix: give a smaller value, or -np.inf / np.inf for an infinity")
    path = variant(design_file, "initial=100)", "initial=10**400)")
    assert load_error(path).splitlines()[0] == (
        "d.py:9: error [local]: the initial value of local 'acc' (16xi32) is "
        "100000...000000 (401 digits)")


@pytest.mark.parametrize("old, new, how", [
    ("addk(acc, t, acc)", "addk(acc + 1, t, acc)", "is used in arithmetic"),
    ("addk(acc, t, acc)", "addk(-acc, t, acc)", "is used in arithmetic"),
    ("addk(acc, t, acc)", "addk(2 ** acc, t, acc)", "is used in arithmetic"),
    ("addk(acc, t, acc)", "addk(abs(acc), t, acc)", "is used in arithmetic"),
    ("addk(acc, t, acc)", "addk(np.maximum(acc, 0), t, acc)", "is used as a numpy array"),
    ("addk(acc, t, acc)", "addk(acc.sum(), t, acc)", "is asked for .sum"),
])
def test_computing_with_a_local_in_python_is_refused(design_file: DesignFile, old: str,
                                                     new: str, how: str) -> None:
    """As with a fifo's buffer (it was a Python TypeError): the core function is traced."""
    assert load_error(variant(design_file, old, new)) == (
        f"d.py:17: error [local]: local 'acc' {how}\n"
        "  limit: a core function is traced once, not run: a local holds no value then, so "
        "Python and numpy cannot compute with it\n"
        "  fix: compute in a kernel: pass the local to one")


@pytest.mark.parametrize("new, how", [
    ("addk(acc, t, acc) if len(acc) else None", "is asked for its length"),
    ("addk(acc, t, acc) if acc.shape else None", "is asked for .shape")])
def test_asking_a_local_for_its_size_points_at_its_type(design_file: DesignFile, new: str,
                                                        how: str) -> None:
    """len(acc) and acc.shape were Python's TypeError and AttributeError on 'LocalRef' (a
    tester): refused as arithmetic is, pointing at the type the local has."""
    assert load_error(variant(design_file, "addk(acc, t, acc)", new)) == (
        f"d.py:17: error [local]: local 'acc' {how}\n"
        "  limit: a core function is traced once, not run: a local holds no value then, so "
        "Python and numpy cannot compute with it\n"
        "  fix: read its type, known when the core function is traced: .type is "
        "Tensor[16, i32] (.type.shape, .type.dtype, .type.numel)")


def test_a_local_passed_as_a_scalar_is_refused(design_file: DesignFile) -> None:
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, local, loop, runtime
        from aiedsl.kernels import vector_scalar

        @design(device="npu1_1col")
        def scaled(inp: Tensor[128, i32], out: Tensor[128, i32]):
            a = fifo(Tensor[16, i32])
            b = fifo(Tensor[16, i32])
            factor = local(Tensor[1, i32], initial=3)
            mul = vector_scalar("mul", Tensor[16, i32])

            @herd()
            def core():
                for _ in loop(8):
                    with a.consume() as t, b.produce() as o:
                        mul(t, o, factor)

            with runtime() as rt:
                rt.fill(a, inp)
                rt.drain(b, out)
        ''')
    assert check_error(path) == (
        "d.py:15: error [kernel signature]: argument 2 ('s') of 'vs_mul_i32_16' is a scalar "
        "i32, but core[0,0] passes local 'factor', a buffer\n"
        "  limit: vs_mul_i32_16(a: 16xi32, c: 16xi32, s: i32)\n"
        "  found: local 'factor' (1xi32)\n"
        "  fix: pass a Python int or float (a core cannot read a local's value: a kernel taking "
        "it as a buffer can), or an rtp slot")


def test_a_local_of_another_type_than_the_kernel_s_is_refused(design_file: DesignFile) -> None:
    path = variant(design_file, "acc = local(Tensor[16, i32], initial=100)",
                   "acc = local(Tensor[8, 2, i32], initial=100)")
    assert check_error(path) == (
        "d.py:17: error [kernel signature]: argument 0 ('a') of 'add_i32_16' expects 16xi32, "
        "but core[0,0] passes local 'acc' (8x2xi32): the same 16 elements in another shape, and "
        "func.call takes only the declared memref type\n"
        "  limit: add_i32_16(a: 16xi32, b: 16xi32, c: 16xi32)\n"
        "  found: 8x2xi32\n"
        "  d.py:9: local 'acc' is declared\n"
        "  fix: declare the local as Tensor[16, i32] (the same bytes), or pass it to a kernel of "
        "its type")


def test_reading_a_local_nothing_wrote_is_refused(design_file: DesignFile) -> None:
    path = variant(design_file, "acc = local(Tensor[16, i32], initial=100)",
                   "acc = local(Tensor[16, i32])")
    assert check_error(path) == (
        "d.py:17: error [local]: core[0,0] reads local 'acc' (argument 0, 'a', of 'add_i32_16', "
        "in) before any kernel writes it, and it has no initial value\n"
        "  limit: a local holds its initial value from when the design is loaded, then what "
        "kernels write into it; with neither, whatever the memory held before (another design's "
        "or an earlier run's data)\n"
        "  found: no initial= and no earlier write in this core\n"
        "  d.py:9: local 'acc' is declared\n"
        "  fix: write it first where the accumulation starts: call a kernel that takes it "
        "\"out\" (such as zero(Tensor[16, i32]) from aiedsl.kernels) just before the loop at "
        "line 15 that reads it (or first in its body, if each iteration starts anew); initial= "
        "would set it only once, when the design is loaded, so only the first run after the "
        "load would start from it")


def test_a_local_read_before_any_loop_may_take_an_initial_value(
        design_file: DesignFile) -> None:
    """Read outside any loop, a local needs a value once per run: initial= is as good a fix as
    a write first."""
    path = variant(design_file, "acc = local(Tensor[16, i32], initial=100)",
                   "acc = local(Tensor[16, i32])")
    path.write_text(path.read_text().replace(
        "        for _ in loop(8):\n            with a.consume() as t:\n                addk(acc, "
        "t, acc)\n", "        with a.consume() as t:\n            addk(acc, t, acc)\n"))
    assert check_error(path).splitlines()[-1] == (
        "  fix: give it initial=... in local(...) (e.g. initial=0), or write it first with a "
        "kernel that takes it \"out\" (such as zero(Tensor[16, i32]) from aiedsl.kernels)")


def test_an_accumulator_read_in_an_inner_loop_is_written_in_the_outer_one(
        design_file: DesignFile) -> None:
    """An accumulator a nested loop reads is reset where each accumulation starts, in the loop
    around it: initial= (once per load) is not offered, and the fix applied passes."""
    nested = RUNNING_SUM.replace("acc = local(Tensor[16, i32], initial=100)",
                                 "acc = local(Tensor[16, i32])").replace(
        "        for _ in loop(8):\n            with a.consume() as t:\n                addk(acc, "
        "t, acc)\n        with b.produce() as o:\n            copy(acc, o)\n",
        "        for _ in loop(2):\n            for _ in loop(4):\n                with "
        "a.consume() as t:\n                    addk(acc, t, acc)\n            with "
        "b.produce() as o:\n                copy(acc, o)\n").replace(
        "out: Tensor[16, i32]", "out: Tensor[32, i32]").replace(
        "return inp.reshape(8, 16).sum(axis=0) + 100",
        "return inp.reshape(2, 4, 16).sum(axis=1).reshape(-1)")
    path = design_file(nested)
    assert check_error(path).splitlines()[-1] == (
        "  fix: write it first where each accumulation starts: call a kernel that takes it "
        "\"out\" (such as zero(Tensor[16, i32]) from aiedsl.kernels) in the loop at line 15, "
        "just before the loop at line 16 that reads it; initial= would set it only once, when "
        "the design is loaded, not for each iteration of the loop at line 15")
    fixed = nested.replace("from aiedsl.kernels import add, passthrough",
                           "from aiedsl.kernels import add, passthrough, zero").replace(
        "    copy = passthrough(Tensor[16, i32])\n",
        "    copy = passthrough(Tensor[16, i32])\n    z = zero(Tensor[16, i32])\n").replace(
        "        for _ in loop(2):\n", "        for _ in loop(2):\n            z(acc)\n")
    assert simulate(load_design(design_file(fixed))).passed


def test_a_local_written_first_needs_no_initial_value(design_file: DesignFile) -> None:
    """tmp of the running max has none: reduce_max writes it before max2 reads it."""
    assert simulate(load_design(running_max(design_file))).passed


def test_a_local_declared_in_a_core_function_is_refused(design_file: DesignFile) -> None:
    path = variant(design_file, "            with a.consume() as t:\n",
                   "            x = local(Tensor[16, i32], initial=0)\n"
                   "            with a.consume() as t:\n")
    assert load_error(path) == (
        "d.py:16: error [local]: local() is called inside a core function\n"
        "  limit: a local is declared in the design function (as IRON declares a Buffer at the "
        "top level): its initial value is written once, when the design is loaded, not each "
        "time the core function's code is reached\n"
        "  fix: move the local(...) line into the @design function, before the @herd; each core "
        "that passes it to a kernel gets its own copy")


def test_iron_s_spelling_of_the_initial_value_gets_aiedsl_s(design_file: DesignFile) -> None:
    path = variant(design_file, "initial=100)", "initial_value=100)")
    assert load_error(path) == (
        "d.py:9: error [local]: local() takes no argument initial_value=\n"
        "  limit: local(type, name=..., initial=...)\n"
        "  found: initial_value=\n"
        "  fix: write initial=... for the initial value (IRON's Buffer spells it initial_value=; "
        "aiedsl's local, like its barrier, says initial=)")


def test_a_local_no_kernel_gets_is_refused(design_file: DesignFile) -> None:
    path = variant(design_file, "    addk = add(", "    spare = local(Tensor[4, i32])\n"
                   "    addk = add(")
    assert load_error(path) == (
        "d.py:10: error [local unused]: local 'spare' is never passed to a kernel\n"
        "  limit: a local is a buffer in the memory of each core that passes it to a kernel\n"
        "  fix: pass it to a kernel call in a core function, or remove it")


def test_the_runtime_cannot_move_a_local(design_file: DesignFile) -> None:
    path = variant(design_file, "rt.drain(b, out)", "rt.drain(acc, out)")
    assert load_error(path) == (
        "d.py:23: error [runtime]: rt.drain of local 'acc': a local lives in the memory of the "
        "cores that use it, and no DMA or runtime write reaches it\n"
        "  d.py:9: local 'acc' is declared\n"
        "  fix: to bring its value to the host, copy it into a fifo element in the core function "
        "(a copy kernel) and drain that fifo; for a value the host sets, use an rtp (rtp(...), "
        "rt.rtp_write) or a fifo the runtime fills")


def test_indexing_a_local_is_refused(design_file: DesignFile) -> None:
    """Sixteen i32 are a whole vector of library passthrough's: the fix names it, with the
    local's type."""
    path = variant(design_file, "copy(acc, o)", "copy(acc[0], o)")
    assert load_error(path) == (
        "d.py:19: error [local]: local 'acc' is indexed (acc[0])\n"
        "  limit: a core function only calls kernels: the core program does no arithmetic of its "
        "own, so a local is passed whole to a kernel\n"
        "  found: acc[0]\n"
        "  fix: pass acc to a kernel that reads or writes the element (IRON's elem_out[0] = "
        "buf[0] is a copy kernel: passthrough(Tensor[16, i32]) from aiedsl.kernels, or your "
        "own)")


ONE_VALUE = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, local, runtime
from aiedsl.kernels import buffer, declare


def copy_ref(src, dst):
    dst[...] = src


copy1 = declare("copy_i32_1", source="copy.cc", entry="copy_scalar<int32_t, 1>",
                args=[buffer("src", Tensor[1, i32]), buffer("dst", Tensor[1, i32], "out")],
                reference=copy_ref, exact=True, cycles=20, cost="a scalar copy + call")


@design(device="npu1_1col")
def m1(c: Tensor[1, i32]):
    best = local(Tensor[1, i32], initial=7, name="best")
    out = fifo(Tensor[1, i32], name="out")

    @herd()
    def core():
        with out.produce() as e:
            copy1(best, e)

    with runtime() as rt:
        rt.drain(out, c)

@m1.reference
def reference():
    return np.array([7], np.int32)
'''
"""A tester's IRON port: one i32 a core keeps, copied out with a scalar kernel of its own, as
README's "Core-local buffers" declares it (line 23: the copy)."""

COPY_CC = '''#include <stdint.h>

template <typename T, unsigned N> void copy_scalar(const T *in, T *out) {
  for (unsigned i = 0; i < N; ++i)
    out[i] = in[i];
}
'''


def test_indexing_a_local_no_library_copy_takes_points_at_ones_own(
        design_file: DesignFile) -> None:
    """IRON's elem_out[0] = buf[0] on one i32: the fix said passthrough, which refuses one
    i32 (16-element vectors). It names a scalar copy of one's own and where the README shows
    it; the README's kernel, followed, checks and simulates exactly."""
    path = design_file(ONE_VALUE.replace("copy1(best, e)", "e[0] = best[0]"))
    assert load_error(path) == (
        "d.py:23: error [local]: local 'best' is indexed (best[0])\n"
        "  limit: a core function only calls kernels: the core program does no arithmetic of its "
        "own, so a local is passed whole to a kernel\n"
        "  found: best[0]\n"
        "  fix: pass best to a kernel that reads or writes the element (IRON's elem_out[0] = "
        "buf[0] is a copy kernel: a scalar copy of your own, declared with declare(...) as "
        "README's \"Core-local buffers\" shows (library passthrough copies whole vectors of 16 "
        "i32, and Tensor[1, i32] holds 1))")
    (path.parent / "copy.cc").write_text(COPY_CC)
    handle = load_design(design_file(ONE_VALUE))
    check_design(handle.ir)
    result = simulate(handle)
    assert result.passed, [c.line() for c in result.checks]


def test_the_readme_shows_the_scalar_copy_the_fix_points_at() -> None:
    """The fix above sends the reader to README's "Core-local buffers": the declaration and
    the C++ that the test follows are the ones written there."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme[readme.index("**Core-local buffers.**"):readme.index("## Coming from")]
    for line in ('copy1 = declare("copy_i32_1", source="copy.cc", '
                 'entry="copy_scalar<int32_t, 1>",',
                 "template <typename T, unsigned N> void copy_scalar(const T *in, T *out) {"):
        assert line in section


@pytest.mark.parametrize("old, new, first", [
    ("initial=100)", 'initial=100, name="my acc")',
     "d.py:9: error [name]: local name 'my acc' is not a plain name"),
    ("initial=100)", 'initial=100, name="a")',
     "d.py:9: error [name]: local 'a' has the name of a fifo"),
    ("initial=100)", 'initial=100, name="add_i32_16")',
     "d.py:9: error [name]: local 'add_i32_16' has the name of a kernel"),
    ("    addk = add(", '    thr = rtp(Tensor[16, i32], name="acc")\n    addk = add(',
     "d.py:10: error [rtp]: rtp 'acc' has the name of a local declared before"),
    ("initial=100)", 'initial=100, name="a_cons_buff_0")',
     "d.py:9: error [name]: local 'a_cons_buff_0' has the name mlir-aie's objectfifo lowering "
     "gives to buffer 0 of fifo 'a' on tile (0, 2)"),
    # the device's unnamed runtime sequence, and the function the core lowering makes of the
    # core at (0, 2), beside the buffers' globals: aiecc would refuse either
    ("initial=100)", 'initial=100, name="sequence")',
     "d.py:9: error [name]: local 'sequence' has the name of the runtime sequence "
     "(aie.runtime_sequence's symbol when unnamed)"),
    ("initial=100)", 'initial=100, name="core_0_2")',
     "d.py:9: error [name]: local 'core_0_2' has the name of the function mlir-aie's core "
     "lowering makes of core[0,0] at (0, 2) (AIECoreToStandard)"),
])
def test_local_names_are_checked(design_file: DesignFile, old: str, new: str,
                                 first: str) -> None:
    src = RUNNING_SUM.replace("import design,", "import design,")
    path = variant(design_file, old, new, src.replace("local, loop, runtime",
                                                      "local, loop, rtp, runtime"))
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    assert str(e.value).splitlines()[0] == first


def test_a_copy_s_symbol_may_not_be_another_s_name(design_file: DesignFile) -> None:
    """Two cores: acc's copies are acc_0_2 and acc_1_2; a fifo of that name clashes."""
    path = design_file('''
        from aiedsl import Tensor, design, fifo, herd, i32, local, runtime
        from aiedsl.kernels import add

        @design(device="npu1_2col")
        def two(inp: Tensor[32, i32], out: Tensor[32, i32]):
            ins = [fifo(Tensor[16, i32], name=f"acc_{c}_2") for c in range(2)]
            outs = [fifo(Tensor[16, i32], name=f"out{c}") for c in range(2)]
            acc = local(Tensor[16, i32], initial=0)
            addk = add(Tensor[16, i32])

            @herd(cols=2)
            def core(x, y):
                with ins[x].consume() as t, outs[x].produce() as o:
                    addk(acc, t, o)

            with runtime() as rt:
                for c in range(2):
                    rt.fill(ins[c], inp, (16 * c, [16], [1]))
                    rt.drain(outs[c], out, (16 * c, [16], [1]))
        ''')
    assert check_error(path).splitlines()[:2] == [
        "d.py:8: error [name]: local 'acc''s copy in core[0,0] 'acc_0_2' has the name of the "
        "fifo 'acc_0_2'",
        "  limit: every symbol of a device is unique (the copy of a local in the core of tile "
        "(c, r) is <local>_<c>_<r> when several cores use it)"]


class _StatefulNpu:
    """An NPU session whose runs carry a local's state, as the core's memory does: run n adds
    n - 1 rounds of the input to the initial 100 (its manifest declares no operations)."""

    manifest: dict = {}

    def __init__(self, inp: np.ndarray) -> None:
        self.runs = 0
        self.inp = inp

    def write_inputs(self, ins: dict[str, np.ndarray]) -> None:
        pass

    def launch(self) -> float:
        self.runs += 1
        return 1e-4

    def read_outputs(self) -> dict[str, np.ndarray]:
        total = self.inp.reshape(8, 16).sum(axis=0)
        return {"out": (100 + self.runs * total).astype(np.int32)}


@pytest.mark.parametrize("iters, warmup, untimed", [(3, 0, 1), (2, 2, 2)])
def test_an_npu_run_of_a_design_with_locals_checks_its_first_run(
        design_file: DesignFile, iters: int, warmup: int, untimed: int) -> None:
    """A local starts at its initial value only when the design is loaded: `run --iters 3`
    checked the last run, which started from what the runs before it left, and FAILed a
    correct design (the simulator runs one invocation from the load)."""
    import aiedsl
    from aiedsl.npu_run import run_on_npu

    art = aiedsl.build(design_file(RUNNING_SUM), output="out")
    inp = np.arange(128, dtype=np.int32)
    session = _StatefulNpu(inp)
    result = run_on_npu(session, art.design, art.handle, {"inp": inp}, "a stub", True, iters,
                        warmup)
    assert result.passed, [c.line() for c in result.checks]
    assert session.runs == untimed + iters
    assert isinstance(result.timing, aiedsl.api.Measured) and result.timing.warmup == untimed


COPY_OUT = '''
import numpy as np
from aiedsl import Tensor, design, f32, fifo, herd, i8, i32, local, runtime
from aiedsl.kernels import passthrough

@design(device="npu1_1col")
def cp(inp: Tensor[64, DT], out: Tensor[64, DT]):
    a = fifo(Tensor[64, DT])
    b = fifo(Tensor[64, DT])
    acc = local(Tensor[64, DT], initial=INIT)
    copy = passthrough(Tensor[64, DT])

    @herd()
    def core():
        with a.consume() as t:
            pass
        with b.produce() as o:
            copy(acc, o)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)

@cp.reference(nonfinite=True)
def reference(inp):
    return np.full(64, INIT, dtype=np.asarray(inp).dtype)
'''


@pytest.mark.parametrize("dt, init", [("i8", "-128"), ("f32", "float('nan')"),
                                      ("i32", "-2**31")])
def test_data_equal_to_the_unwritten_filling_copied_out_is_no_unwritten_output(
        design_file: DesignFile, dt: str, init: str) -> None:
    """A reviewer's: a local whose initial value is what aiedsl fills unwritten memory with
    (NaN, the smallest integer), copied out by passthrough, was "the reference of kernel
    'passthrough_...' left its 'out' buffer unwritten". An input holding that value may be
    copied; a reference that writes nothing is still said (test_kernels.py)."""
    path = design_file(COPY_OUT.replace("DT", dt).replace("INIT", init))
    result = simulate(load_design(path))
    assert result.passed


SHIFT_IN_PLACE = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, local, runtime
from aiedsl.kernels import buffer, declare

T = Tensor[16, i32]

def shift_ref(src, dst):  # element by element, as the C++: it reads src after writing dst
    for i in range(1, 16):
        dst[i] = src[i - 1]
    dst[0] = 0

def copy_ref(src, dst):
    dst[...] = src

@design(device="npu1_1col")
def alias(A: Tensor[16, i32], C: Tensor[16, i32]):
    shift = declare("shift_i32", source="shift.cc", args=[buffer("in", T), buffer("out", T, "out")],
                    reference=shift_ref, cycles=30, cost="scalar")
    copy = declare("copy16", source="shift.cc", args=[buffer("in", T), buffer("out", T, "out")],
                   reference=copy_ref, cycles=30, cost="scalar")
    st = local(T, initial=0)
    i = fifo(T); o = fifo(T)

    @herd()
    def core():
        with i.consume() as a, o.produce() as b:
            copy(a, st)
            shift(st, st)
            copy(st, b)

    with runtime() as rt:
        rt.fill(i, A); rt.drain(o, C)

@alias.reference
def reference(A):
    out = np.zeros_like(A); out[1:] = A[:-1]
    return out
'''

SHIFT_CC = '''#include <stdint.h>
extern "C" {
// out[i] = in[i - 1]: in place (in == out) it spreads in[0] over the whole buffer
void shift_i32(const int32_t *in, int32_t *out) {
  for (int i = 1; i < 16; i++) out[i] = in[i - 1];
  out[0] = 0;
}
void copy16(const int32_t *in, int32_t *out) {
  for (int i = 0; i < 16; i++) out[i] = in[i];
}
}
'''


def test_one_buffer_as_input_and_output_of_a_call(design_file: DesignFile) -> None:
    """The tester's shift(st, st) (IRON's reduce_max passes compute_max(tmp, nextC, nextC)):
    a reference gets the input as it was before the call, whatever it writes first (a loop
    reading what it wrote spread in[0] over the buffer); the C++ under --kernels native gets
    the one memory, as on the core, where this shift does spread it (native is what the core
    computes), and writing that "in" buffer is no fault: it is also the output."""
    path = design_file(SHIFT_IN_PLACE)
    (path.parent / "shift.cc").write_text(SHIFT_CC)
    handle = load_design(path)
    assert simulate(handle).passed
    native = simulate(handle, kernels="native")
    A = native.inputs["A"]
    assert not native.passed
    assert native.outputs["C"].tolist() == [0] + [int(A[0])] * 15


U8_REBIND = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, loop, runtime, u8
from aiedsl.kernels import buffer, declare


def clip_ref(src, dst):
    dst = np.minimum(src, 100)  # rebinds the name: writes nothing


@design(device="npu1_1col")
def d(inp: Tensor[1024, u8], out: Tensor[1024, u8]):
    a = fifo(Tensor[512, u8], name="a")
    b = fifo(Tensor[512, u8], name="b")
    clip = declare("clip_u8", source="clip.cc", entry="clip",
                   args=[buffer("src", Tensor[512, u8]), buffer("dst", Tensor[512, u8], "out")],
                   reference=clip_ref, cycles=512, cost="x", exact=True)

    @herd()
    def core():
        for _ in loop(2):
            with a.consume() as s, b.produce() as t:
                clip(s, t)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)


@d.reference
def reference(inp):
    return np.minimum(inp, 100)
'''


def test_an_input_that_merely_holds_the_filling_does_not_excuse_an_unwritten_output(
        design_file: DesignFile) -> None:
    """u8 inputs drawn over 0..255 hold 255, the u8 filling: a reference that rebinds its
    output passed as a plain FAIL of the design's output instead of being named. Only an input
    holding nothing but the filling (a local at its initial value) excuses it."""
    path = design_file(U8_REBIND)
    (path.parent / "clip.cc").write_text(
        "#include <stdint.h>\n"
        "void clip(uint8_t *s, uint8_t *d) { for (int i = 0; i < 512; i++) "
        "d[i] = s[i] < 100 ? s[i] : 100; }\n")
    with pytest.raises(DesignError) as e:
        simulate(load_design(path))
    assert str(e.value).splitlines()[0] == (
        "d.py:6: error [kernel reference]: the reference of kernel 'clip_u8' left its \"out\" "
        "buffer 'dst' unwritten")


TWO_SUMS = RUNNING_SUM.replace('''        for _ in loop(8):
            with a.consume() as t:
                addk(acc, t, acc)
        with b.produce() as o:
            copy(acc, o)''', '''        for _ in loop(2):
            for _ in loop(4):
                with a.consume() as t:
                    addk(acc, t, acc)
            with b.produce() as o:
                copy(acc, o)''').replace("out: Tensor[16, i32]", "out: Tensor[32, i32]").replace(
    "return inp.reshape(8, 16).sum(axis=0) + 100",
    "return (inp.reshape(2, 4, 16).sum(axis=1) + 100).reshape(32)")


ZEROED_ONCE = TWO_SUMS.replace("    copy = passthrough(Tensor[16, i32])\n", """    copy = passthrough(Tensor[16, i32])
    z = zero(Tensor[16, i32])
""").replace("""        for _ in loop(2):
            for _ in loop(4):""", """        z(acc)
        for _ in loop(2):
            for _ in loop(4):""").replace("from aiedsl.kernels import add, passthrough",
                                          "from aiedsl.kernels import add, passthrough, zero").replace(
    "+ 100).reshape(32)", ").reshape(32)")


@pytest.mark.parametrize("source, line", [(TWO_SUMS, 18), (ZEROED_ONCE, 20)],
                         ids=["never reset", "zeroed once before the loop"])
def test_a_local_summed_into_and_never_reset_is_named_under_a_fail(
        design_file: DesignFile, source: str, line: int) -> None:
    """Two sums in one local, never reset (or zeroed once, before the loop that reads each
    sum out; a reviewer's case): the second piles onto the first, and the FAIL said nothing
    of the local (left from stop 32)."""
    result = simulate(load_design(design_file(source)))
    assert not result.passed
    assert result.checks[0].hints == [
        f"d.py:{line}: add_i32_16 sums into core-local 'acc' in the loop at line {line - 3} of "
        "core[0,0], which reads it out each iteration, and nothing in that loop writes it "
        "afresh: a local keeps its value from call to call (its initial value is written once, "
        "at load), so each iteration's sums pile onto the last's; zero it where each sum starts "
        "(a call taking it \"out\", e.g. aiedsl.kernels.zero)"]


ONE_SUMS = '''
from aiedsl import Tensor, design, fifo, herd, i32, local, loop, runtime
from aiedsl.kernels import buffer, declare

def add_ref(acc, t, out):
    out[...] = acc + t

def copy_ref(src, dst):
    dst[...] = src

T = Tensor[1, i32]
add1 = declare("add_i32_1", source="one.cc", entry="add_scalar<int32_t, 1>",
               args=[buffer("acc", T), buffer("t", T), buffer("sum", T, "out")],
               reference=add_ref, cycles=20, cost="a scalar add + call")
copy1 = declare("copy_i32_1", source="one.cc", entry="copy_scalar<int32_t, 1>",
                args=[buffer("src", T), buffer("dst", T, "out")],
                reference=copy_ref, exact=True, cycles=20, cost="a scalar copy + call")

@design(device="npu1_1col")
def s1(inp: Tensor[8, i32], out: Tensor[2, i32]):
    a = fifo(T)
    b = fifo(T)
    acc = local(T, initial=100)

    @herd()
    def core():
        for _ in loop(2):
            for _ in loop(4):
                with a.consume() as t:
                    add1(acc, t, acc)
            with b.produce() as o:
                copy1(acc, o)

    with runtime() as rt:
        rt.fill(a, inp)
        rt.drain(b, out)

@s1.reference
def reference(inp):
    return inp.reshape(2, 4).sum(axis=1) + 100
'''

ONE_CC = COPY_CC + '''
template <typename T, unsigned N> void add_scalar(const T *a, const T *b, T *c) {
  for (unsigned i = 0; i < N; ++i)
    c[i] = a[i] + b[i];
}
'''


def test_a_local_summed_into_that_zero_cannot_take_is_told_to_zero_it_itself(
        design_file: DesignFile) -> None:
    """The hint said "e.g. aiedsl.kernels.zero" whatever the local's size; for one i32, which
    zero refuses (16-element vectors), it says to zero it with a kernel of one's own."""
    path = design_file(ONE_SUMS)
    (path.parent / "one.cc").write_text(ONE_CC)
    result = simulate(load_design(path))
    assert not result.passed
    assert result.checks[0].hints == [
        "d.py:29: add_i32_1 sums into core-local 'acc' in the loop at line 26 of core[0,0], "
        "which reads it out each iteration, and nothing in that loop writes it afresh: a local "
        "keeps its value from call to call (its initial value is written once, at load), so "
        "each iteration's sums pile onto the last's; zero it where each sum starts (a call "
        "taking it \"out\": one of your own, as library zero writes whole vectors of 16 i32 and "
        "the local holds 1)"]


def test_a_local_reset_in_the_loop_or_summed_over_the_run_is_not_named(
        design_file: DesignFile) -> None:
    """Zeroed at the start of each outer iteration, the two sums pass; the one sum of
    RUNNING_SUM, read after its loop, passes too. A FAIL of such a design would get no hint."""
    fixed = ZEROED_ONCE.replace("""        z(acc)
        for _ in loop(2):
            for _ in loop(4):""", """        for _ in loop(2):
            z(acc)
            for _ in loop(4):""")
    assert simulate(load_design(design_file(fixed))).passed
    assert simulate(load_design(design_file(RUNNING_SUM, "one.py"))).passed
    from aiedsl.compare import OutputCheck
    from aiedsl.output_checks import note_carried_locals

    for source in (fixed, RUNNING_SUM):
        d = load_design(design_file(source, "again.py")).ir
        check = OutputCheck("out", False, None, 0.0, 0.0, 0.0, "exact")  # as if it had failed
        note_carried_locals([check], d)
        assert check.hints == []


ADD_TO_MIN = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i16, runtime
from aiedsl.kernels import add

@design(device="npu1_1col")
def d(a: Tensor[32, i16], b: Tensor[32, i16], c: Tensor[32, i16]):
    fa = fifo(Tensor[32, i16], name="fa")
    fb = fifo(Tensor[32, i16], name="fb")
    fc = fifo(Tensor[32, i16], name="fc")
    k = add(Tensor[32, i16])

    @herd()
    def core():
        with fa.consume() as x, fb.consume() as y, fc.produce() as z:
            k(x, y, z)

    with runtime() as rt:
        rt.fill(fa, a)
        rt.fill(fb, b)
        rt.drain(fc, c)

@d.reference
def reference(a, b):
    return a + b
'''


def test_a_result_that_is_the_unwritten_filling_is_no_unwritten_output(
        design_file: DesignFile) -> None:
    """A numerics tester's: -16384 + -16384 is -32768, the filling of unwritten i16 memory, and
    the library's add was said to have left its output unwritten. The probe's run, with the
    output filled otherwise, writes -32768 again: written."""
    a = np.full(32, -16384, np.int16)
    result = simulate(load_design(design_file(ADD_TO_MIN)), {"a": a, "b": a})
    assert result.passed
    assert (result.outputs["c"] == -32768).all()


def test_an_array_given_as_the_type_is_told_to_be_the_initial_value(
        design_file: DesignFile) -> None:
    """local(np.zeros(256, np.int32)) meant the array as the initial value, which gives the type
    (a tester): the fix said to write a Tensor type."""
    path = design_file('''
        import numpy as np
        from aiedsl import design, i32, local, Tensor

        @design(device="npu1_1col")
        def d(inp: Tensor[256, i32]):
            z = local(np.zeros(256, np.int32), name="z")
        ''')
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (
        "d.py:6: error [local]: local 'z' has type an ndarray of shape (256,) int32, not a "
        "Tensor[...] type\n"
        "  found: an ndarray of shape (256,) int32\n"
        "  fix: pass the array as its initial value, which gives the type: "
        "local(initial=arr, name=\"z\")")


IN_PLACE_CC = r'''#include <stdint.h>
#include <aie_api/aie.hpp>
extern "C" {
void copy_i32_16(const int32_t *a, int32_t *out) {
  aie::store_v(out, aie::load_v<16>(a));
}
// shift right by one lane: reads what it wrote when a and out are one buffer
void shift_i32_16(const int32_t *__restrict a, int32_t *__restrict out) {
  for (int i = 1; i < 16; i++) out[i] = a[i - 1];
  out[0] = 0;
}
}
'''

IN_PLACE = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, runtime, local
from aiedsl.kernels import buffer, declare

def cref(a, out): out[...] = a
def sref(a, out): out[1:] = a[:-1]; out[0] = 0
copy = declare("copy_i32_16", source="k.cc", args=[buffer("a", Tensor[16, i32]),
               buffer("out", Tensor[16, i32], "out")], reference=cref, cycles=20, cost="x")
shift = declare("shift_i32_16", source="k.cc", args=[buffer("a", Tensor[16, i32]),
                buffer("out", Tensor[16, i32], "out")], reference=sref, cycles=20, cost="x")

@design(device="npu1_1col")
def d(inp: Tensor[16, i32], out: Tensor[16, i32]):
    fi = fifo(Tensor[16, i32]); fo = fifo(Tensor[16, i32])
    buf = local(Tensor[16, i32], initial=0)

    @herd()
    def core():
        with fi.consume() as s:
            copy(s, buf)
        shift(buf, buf)
        with fo.produce() as o:
            copy(buf, o)

    with runtime() as rt:
        rt.fill(fi, inp); rt.drain(fo, out)

@d.reference
def reference(inp):
    r = np.zeros(16, np.int32); r[1:] = inp[:-1]
    return r
'''


def test_a_native_fail_of_a_call_writing_in_place_names_the_call(design_file: DesignFile) -> None:
    """shift(buf, buf) FAILed with --kernels native (its C++ reads what it wrote) and nothing
    pointed at the call passing one buffer twice (a tester)."""
    design_file(IN_PLACE_CC, "k.cc")
    handle = load_design(design_file(IN_PLACE))
    assert simulate(handle).passed  # the reference reads its input first
    r = simulate(handle, kernels="native")
    assert not r.passed
    assert r.checks[0].hints == [
        "d.py:21: core[0,0]'s call of 'shift_i32_16' passes one buffer as 'a' and 'out', "
        "written in place: the C++ may read what it has already written there (its reference "
        "may read first), and Peano may take __restrict pointers not to overlap; pass another "
        "buffer to write"]


PAST_CC = '''#include <stdint.h>
extern "C" {
void total_i32_16(const int32_t *a, int32_t *out) {
  int32_t s = 0;
  for (int i = 0; i <= 16; i++) s += a[i];  // one element past the buffer
  for (int i = 0; i < 16; i++) out[i] = 0;
  out[0] = s;
}
}
'''

PAST = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels import buffer, declare

def tref(a, out): out[...] = 0; out[0] = a.sum()
total = declare("total_i32_16", source="k.cc", args=[buffer("a", Tensor[16, i32]),
                buffer("out", Tensor[16, i32], "out")], reference=tref, cycles=20, cost="x")

@design(device="npu1_1col")
def d(inp: Tensor[16, i32], out: Tensor[16, i32]):
    fi = fifo(Tensor[16, i32]); fo = fifo(Tensor[16, i32])

    @herd()
    def core():
        with fi.consume() as s, fo.produce() as o:
            total(s, o)

    with runtime() as rt:
        rt.fill(fi, inp); rt.drain(fo, out)

@d.reference
def reference(inp):
    r = np.zeros(16, np.int32); r[0] = inp.sum()
    return r
'''


def test_a_native_fail_that_looks_unwritten_says_reads_are_not_checked(
        design_file: DesignFile) -> None:
    """(a tester) A kernel reading one element past its buffer (i <= N) FAILed natively with a
    note blaming unwritten memory alone (a missing zero call): the guard bytes it read look
    the same. The note says a native run does not check reads, and what does."""
    design_file(PAST_CC, "k.cc")
    r = simulate(load_design(design_file(PAST)), kernels="native")
    assert not r.passed and r.checks[0].poisoned
    assert r.checks[0].hints[-1] == (
        "the native run does not check the C++'s reads: elements read from past a kernel's "
        "buffer look like unwritten memory too; aiedsl kernel test on the design checks every "
        "kernel's reads")


RESET_FIRST = RUNNING_SUM.replace("from aiedsl.kernels import add, passthrough",
                                  "from aiedsl.kernels import add, passthrough, zero").replace(
    "    copy = passthrough(Tensor[16, i32])\n",
    "    copy = passthrough(Tensor[16, i32])\n    z = zero(Tensor[16, i32])\n").replace(
    "        for _ in loop(8):\n            with a.consume() as t:",
    "        z(acc)\n        for _ in loop(8):\n            with a.consume() as t:").replace(
    "sum(axis=0) + 100", "sum(axis=0)")

READ_ONLY = RUNNING_SUM.replace("out: Tensor[16, i32]", "out: Tensor[128, i32]").replace(
    """        for _ in loop(8):
            with a.consume() as t:
                addk(acc, t, acc)
        with b.produce() as o:
            copy(acc, o)""", """        for _ in loop(8):
            with a.consume() as t, b.produce() as o:
                addk(acc, t, o)""").replace("inp.reshape(8, 16).sum(axis=0) + 100", "inp + 100")


def test_a_local_read_before_its_program_writes_it_is_noted_for_runs_after_the_first(
        design_file: DesignFile) -> None:
    """A running sum in a local with an initial value, never reset: the first run matches the
    reference, and every later run on the NPU starts from the last one's sum, which nothing
    showed (a newcomer's tester: check, sim and run --iters all said PASS). The note is said
    by check and under the PASS; a local reset first, or only read, gets none."""
    from aiedsl.notes import design_notes

    result = simulate(load_design(design_file(RUNNING_SUM)))
    assert result.passed
    note = (
        "d.py:17: kernel 'add_i32_16' reads core-local 'acc' (as \"in\") before anything in "
        "core[0,0]'s program writes it, and the program writes it: its initial value is "
        "written when the design is loaded, not at each run, so on the NPU every run after the "
        "first starts from what the run before left (the simulator compares only the first run "
        "with the reference); to start each run afresh, write it at the start of the core's "
        "program (a call taking it \"out\", e.g. aiedsl.kernels.zero)")
    assert result.checks[0].hints == [note]
    placed = result.machine.design
    assert [n.line() for n in design_notes(placed)] == [note.replace(": kernel", ": note: kernel")]
    for quiet in (RESET_FIRST, READ_ONLY):
        again = simulate(load_design(design_file(quiet)))
        assert again.passed and again.checks[0].hints == []
        assert design_notes(again.machine.design) == []


def test_a_local_two_kernels_take_in_two_shapes_is_not_sent_round_in_a_circle(
        design_file: DesignFile) -> None:
    """reduce_sum(16, 64) writes a Tensor[16] local that reduce_sum(1, 16) reads as 1x16: the
    fix said to declare the local 1x16, whose error then said to declare it 16 (a newcomer's
    tester). It names the other call and what does fit."""
    path = design_file('''
        import numpy as np
        from aiedsl import Tensor, design, fifo, herd, i32, local, runtime
        from aiedsl.kernels import reduce_sum

        @design(device="npu1_1col")
        def vsum(a: Tensor[1024, i32], s: Tensor[1, i32]):
            fa = fifo(Tensor[16, 64, i32])
            fs = fifo(Tensor[1, i32])
            part = local(Tensor[16, i32])
            r1 = reduce_sum(16, 64)
            r2 = reduce_sum(1, 16)

            @herd()
            def core():
                with fa.consume() as x:
                    r1(x, part)
                with fs.produce() as o:
                    r2(part, o)

            with runtime() as rt:
                rt.fill(fa, a)
                rt.drain(fs, s)
        ''')
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    assert str(e.value).splitlines()[4:] == [
        "  d.py:16: 'reduce_sum_i32_16x64' takes it as 16xi32",
        "  fix: no one shape of the local fits both calls: 'reduce_sum_i32_16x64' takes it as "
        "16xi32; declare a kernel of your own for one of them in the other's shape (its C++ "
        "takes a pointer, so the same C++ serves both: declare(..., args=[buffer(..., "
        "Tensor[1, 16, i32]), ...]))"]
