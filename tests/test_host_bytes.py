"""Host tensors typed differently from the fifos they feed: the DMA moves bytes (issue 14, item 6).

mlir-aie's ``test/npu-xrt/two_col`` declares its host buffers ``memref<2048xi32>`` and its fifos
``memref<512xui8>`` split into four ``memref<128xui8>``: ``dma_memcpy_nd`` counts sizes in the
host memref's elements (2048 i32 = 8192 bytes = sixteen 512-byte fifo elements) and the DMA
copies bytes. aiedsl balances such a design in bytes, emits the same runtime sequence, and
simulates it byte-true: a fifo element holds the host's bytes reinterpreted, never converted.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import aiedsl
from aiedsl.checks import check_design, draft
from aiedsl.emit import generate
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.sim import Deadlock, simulate
from aiedsl.sim.shim import ShimTransfer, hardware_view, shim_program
from aiedsl.targets import get_target

DesignFile = Callable[..., Path]

TWO_COL = '''
import numpy as np

from aiedsl import Tensor, define, design, fifo, herd, i8, i32, join, loop, runtime, u8
from aiedsl.kernels import passthrough, relu

LOOPS = define("LOOPS", 16, doc="fifo elements per core")


@design(device="npu1_1col")
def two_col(inp: Tensor[2048, i32], out: Tensor[OUT, i32]):
    in0 = fifo(Tensor[512, DT], name="in0")
    ins = in0.split(4, names=["in1", "in2", "in3", "in4"])
    outs = [fifo(Tensor[128, DT], name=f"out{i + 1}") for i in range(4)]
    out0 = join(outs, name="out0")
    k = KERNEL(Tensor[128, DT])

    @herd(rows=4)
    def core(x, y):
        for _ in loop(LOOPS):
            with ins[y].consume() as src, outs[y].produce() as dst:
                k(src, dst)

    with runtime() as rt:
        rt.fill(in0, FILL)
        rt.drain(out0, out, wait=True)


@two_col.reference
def reference(inp):
    return REF
'''
"""mlir-aie's two_col shape (one column: npu1_1col has four cores in a column): a 2048 x i32
host tensor through a 512-byte fifo the memtile splits over four cores, 128 bytes each."""


def two_col(dt: str = "u8", kernel: str = "passthrough", ref: str = "inp.copy()",
            out: int = 2048, fill: str = "inp") -> str:
    """The two_col text with its element type, kernel, reference, output size and fill."""
    return (TWO_COL.replace("DT", dt).replace("KERNEL", kernel).replace("REF", ref)
            .replace("OUT", str(out)).replace("FILL", fill))


def int32s(n: int, seed: int = 1) -> np.ndarray:
    """Full-range int32 values: every byte varies, a third of them negative as int8."""
    return np.random.default_rng(seed).integers(-2**31, 2**31, size=n, dtype=np.int64).astype(
        np.int32)


def test_two_col_balances_in_bytes_and_passes_bytes_through(design_file: DesignFile) -> None:
    handle = load_design(design_file(two_col()))
    x = int32s(2048) | np.int32(0x00FF00FF)  # casts to u8 would give 255: bytes must survive
    result = aiedsl.build(handle, write=False).run(x, target="sim")
    assert result.passed
    got = result.outputs["out"]
    assert got.dtype == np.int32 and np.array_equal(got.view(np.uint8), x.view(np.uint8))


def test_two_col_transforms_bytes_not_values(design_file: DesignFile) -> None:
    """relu on the i8 bytes of i32 words: only a byte-true DMA gives the numpy byte answer."""
    handle = load_design(design_file(two_col(
        "i8", "relu", "np.maximum(inp.view(np.int8), 0).view(np.int32)")))
    x = int32s(2048)
    result = aiedsl.build(handle, write=False).run(x, target="sim")
    want = np.maximum(x.view(np.int8), 0).view(np.int32)
    as_values = np.maximum(x.astype(np.int8), 0).astype(np.int32)  # what a cast would give
    assert not np.array_equal(want, as_values)
    assert result.passed and np.array_equal(result.outputs["out"], want)


def test_two_col_loop_of_4_is_refused_before_simulation(design_file: DesignFile) -> None:
    """Counting host elements (2048 / 512 = 4) would accept a loop of 4; the NPU would hang."""
    with pytest.raises(DesignError) as e:
        check_design(load_design(design_file(two_col()), {"LOOPS": "4"}).ir)
    assert str(e.value) == (
        "d.py:20: error [balance]: fifo 'in1': the memtile forwards 16 element(s) per run, but "
        "core[0,0] takes 4\n"
        "  limit: every consumer takes exactly 16\n"
        "  found: 4\n"
        "  d.py:12: produced here\n"
        "  d.py:24: rt.fill of 'in0' from 'inp'\n"
        "  fix: make loop counts and fill/drain sizes agree (each element 128xu8); a mismatch "
        "hangs on the NPU")


def test_two_col_emits_what_mlir_aie_writes(design_file: DesignFile) -> None:
    """Sizes in the host memref's elements (2048 x i32), fifos of ui8: as two_col's aie.mlir."""
    text = generate(load_design(design_file(two_col()))).files["aie.mlir"]
    lines = [line.strip() for line in text.splitlines()]
    assert any(line.startswith("aie.objectfifo @in0(") and line.split(" loc(")[0].endswith(
        "!aie.objectfifo<memref<512xui8>>") for line in lines)
    assert any(line.startswith("aie.runtime_sequence(%inp : memref<2048xi32>, %out : "
                               "memref<2048xi32>)") for line in lines)
    memcpy = [line.split(" loc(")[0] for line in lines if "dma_memcpy_nd" in line]
    assert memcpy == [
        ("aiex.npu.dma_memcpy_nd(%inp[0, 0, 0, 0][1, 1, 1, 2048][0, 0, 0, 1]) "
         "{metadata = @in0, id = 0 : i64} : memref<2048xi32>"),
        ("aiex.npu.dma_memcpy_nd(%out[0, 0, 0, 0][1, 1, 1, 2048][0, 0, 0, 1]) "
         "{metadata = @out0, id = 1 : i64, issue_token = true} : memref<2048xi32>")]


def test_the_shim_program_counts_host_elements_and_moves_their_bytes(
        design_file: DesignFile) -> None:
    placed, _ = check_design(load_design(design_file(two_col())).ir)
    fill, drain = [t for t in shim_program(placed, get_target(placed.device)) if isinstance(t, ShimTransfer)]
    assert (fill.dtype, fill.length, fill.itemsize) == ("i32", 2048, 4)
    view = hardware_view(fill)
    assert (view["offset_bytes"], view["bytes"]) == (0, 8192)
    assert hardware_view(drain)["bytes"] == 8192


def test_a_strided_fill_takes_whole_host_elements_in_pattern_order(
        design_file: DesignFile) -> None:
    """Even-indexed i32 words first, then odd ones: each 512-byte fifo element is 128 of them,
    their bytes unchanged."""
    handle = load_design(design_file(two_col(
        fill="inp, (0, [2, 2, 512], [1, 1024, 2])",
        ref="np.concatenate([inp[0::2], inp[1::2]])")))
    x = int32s(2048, seed=2)
    result = aiedsl.build(handle, write=False).run(x, target="sim")
    assert result.passed
    assert np.array_equal(result.outputs["out"], np.concatenate([x[0::2], x[1::2]]))


def test_a_host_tensor_of_smaller_elements_fills_wider_fifo_elements(
        design_file: DesignFile) -> None:
    """8192 x i8 on the host into 128 x i32 fifo elements: relu sees the i32 words the bytes
    make, and the drain writes them back as bytes."""
    text = (two_col("i32", "relu", "np.maximum(inp.view(np.int32), 0).view(np.int8)")
            .replace("inp: Tensor[2048, i32], out: Tensor[2048, i32]",
                     "inp: Tensor[8192, i8], out: Tensor[8192, i8]")
            .replace("Tensor[512, i32]", "Tensor[128 * 4, i32]")
            .replace('define("LOOPS", 16,', 'define("LOOPS", 4,'))
    handle = load_design(design_file(text))
    x = int32s(2048, seed=3).view(np.int8)
    result = aiedsl.build(handle, write=False).run(x, target="sim")
    assert result.passed
    assert np.array_equal(result.outputs["out"], np.maximum(x.view(np.int32), 0).view(np.int8))


def test_a_fill_of_part_of_a_fifo_element_is_refused_in_bytes(design_file: DesignFile) -> None:
    """1000 i32 = 4000 bytes: 7.8 of the 512-byte elements."""
    with pytest.raises(DesignError) as e:
        check_design(load_design(design_file(two_col(fill="inp, (0, [1000], [1])"))).ir)
    assert str(e.value) == (
        "d.py:24: error [fill/drain size]: rt.fill of 'in0' moves 4000 bytes (1000 x i32), not "
        "a whole number of its 512-byte buffers (512xu8)\n"
        "  limit: whole fifo elements per transfer: aiedsl checks and simulates each rt.fill and "
        "rt.drain as whole elements (on the NPU the stream would run on into the element the next "
        "transfer finishes, which aiedsl does not model)\n"
        "  found: 4000 B / 512 B = 7.8125\n"
        "  fix: move whole fifo elements per transfer (the DMA moves bytes: count them in the "
        "fifo's element type)")


def test_a_hang_explains_its_fills_in_fifo_elements(design_file: DesignFile) -> None:
    """Placed without the balance check, a run that takes 32 elements from a 16-element fill
    deadlocks; the explanation counts the fill in fifo elements (8192 bytes / 512), not host
    elements (2048 / 512 = 4)."""
    handle = load_design(design_file(two_col(out=4096)), {"LOOPS": "32"})
    placed, _, _ = draft(handle.ir)
    with pytest.raises(Deadlock) as e:
        simulate(handle, placed=placed, check=False)
    assert str(e.value).splitlines()[-2] == (
        "  <- the shim DMA (0,0) filling 'in0' has no transfer left: the runtime fills only 16 "
        "element(s) of 'in0' in all (d.py:24)")
