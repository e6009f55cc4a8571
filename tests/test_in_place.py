"""Host tensors the runtime both fills and drains: updated in place, as IRON's and MLIR-AIR's
host-initialised buffers are. What no drain writes keeps the host's value; two drains of
different fifos still may not race for an element."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.loader import load_design
from aiedsl.sim import simulate
from aiedsl.toolchain.manifest import buffer_abi

DesignFile = Callable[..., Path]

HALF = """
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import passthrough

@design(device="npu1_1col")
def half(x: Tensor[4096, i32]):
    a = fifo(Tensor[1024, i32], name="a")
    b = fifo(Tensor[1024, i32], name="b")
    copy = passthrough(Tensor[1024, i32])

    @herd()
    def core():
        for _ in loop(2):
            with a.consume() as src, b.produce() as dst:
                copy(src, dst)

    with runtime() as rt:
        rt.fill(a, x, (0, [2048], [1]))
        rt.drain(b, x, (2048, [2048], [1]))

@half.reference
def reference(x):
    {body}
"""


def test_half_drained_in_place_keeps_the_host_values(design_file: DesignFile) -> None:
    """The first half is copied over the second; the first keeps what the host put there.
    Before, the output-coverage rule refused the tensor (2048 of 4096 elements never drained)."""
    path = design_file(HALF.format(body="y = x.copy(); y[2048:] = x[:2048]; return y"))
    handle = load_design(path)
    x = np.arange(4096, dtype=np.int32) * 7 - 5
    result = simulate(handle, {"x": x})
    assert result.passed
    np.testing.assert_array_equal(result.outputs["x"], np.concatenate([x[:2048], x[:2048]]))
    assert [b["direction"] for b in buffer_abi(handle.ir)] == ["inout"]


def test_in_place_reference_is_still_judged(design_file: DesignFile) -> None:
    """A reference that expects the untouched half to change fails the comparison: the kept
    host values are compared like any other element."""
    path = design_file(HALF.format(body="y = x.copy(); y[2048:] = x[:2048]; y[0] += 1; return y"))
    result = simulate(load_design(path), {"x": np.arange(4096, dtype=np.int32)})
    assert not result.passed


def test_in_place_drains_of_two_fifos_still_race(design_file: DesignFile) -> None:
    """Both halves of an in/out tensor drained by two fifos that overlap from element 512:
    partial coverage is allowed, the race is not."""
    path = design_file("""
        import numpy as np
        from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
        from aiedsl.kernels import passthrough

        @design(device="npu1_1col")
        def race(x: Tensor[4096, i32]):
            a = fifo(Tensor[1024, i32], name="a")
            b = fifo(Tensor[1024, i32], name="b")
            c = fifo(Tensor[1024, i32], name="c")
            copy = passthrough(Tensor[1024, i32])

            @herd()
            def core():
                with a.consume() as src, b.produce() as dst:
                    copy(src, dst)
                with a.consume() as src, c.produce() as dst:
                    copy(src, dst)

            with runtime() as rt:
                rt.fill(a, x, (0, [2048], [1]))
                rt.drain(b, x, (0, [1024], [1]))
                rt.drain(c, x, (512, [1024], [1]))
    """)
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    assert e.value.rule == "output race"


SHIM_DMA_2D = """
import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels.library import vector_scalar

@design(device="npu1_1col")
def shim_dma_2d(a: Tensor[16, 32, i32], b: Tensor[16, 32, i32]):
    in_l2 = fifo(Tensor[8, 16, i32], name="ChanInL2", depth=1)
    in_l1 = in_l2.forward(name="ChanInL1")
    out_l1 = fifo(Tensor[8, 16, i32], name="ChanOutL1")
    out_l2 = out_l1.forward(name="ChanOutL2", depth=1)
    add1 = vector_scalar("add", Tensor[8, 16, i32])
    {keep}
    @herd(name="copyherd")
    def core():
        with in_l1.consume() as t_in, {consume}out_l1.produce() as t_out:
            add1(t_in, t_out, 1)

    with runtime() as rt:
        rt.fill(in_l2, a, (0, [8, 16], [32, 1])){fill}
        rt.drain(out_l2, b, (0, [8, 16], [32, 1]))

@shim_dma_2d.reference
def reference({args}):
    out = {start}
    out[:8, :16] = a[:8, :16] + 1
    return out
"""


def test_a_partly_drained_output_is_told_it_may_be_filled_too(design_file: DesignFile) -> None:
    """AIR's shim_dma_2d writes one 8x16 tile of a 16x32 output the host zeroed. The coverage
    error's fix named draining everything or shrinking the output, not the in-place tensor
    aiedsl accepts; it names that too, and followed (a fill of the tile of 'b' into a fifo the
    core consumes, the reference handed 'b'), the design checks and simulates to a PASS."""
    path = design_file(SHIM_DMA_2D.format(keep="", consume="", fill="", args="a",
                                          start="np.zeros_like(a)"))
    with pytest.raises(DesignError) as e:
        check_design(load_design(path).ir)
    line = path.read_text().splitlines().index("        rt.drain(out_l2, b, (0, [8, 16], "
                                               "[32, 1]))") + 1
    assert e.value.render() == (
        f"d.py:{line}: error [output coverage]: the drains of 'b' never write 384 of its 512 "
        "elements; the first is element 16 (row 0, column 16)\n"
        "  limit: every element of an output is drained, unless the runtime also fills the "
        "tensor (then it is updated in place, and an element no drain writes keeps the host's "
        "value)\n"
        "  found: 128 elements written\n"
        "  fix: drain every element: make the tiles cover the whole tensor (for a tiled design "
        "its sizes must be multiples of what one pass of the herd computes), or shrink the "
        "output to the part the design writes; or, for the host's values to stay where no "
        "drain writes, fill from 'b' too (rt.fill(f, b, ...) into a fifo f a core consumes): "
        "'b' is then updated in place, the host copies its values to the device before the "
        "run, that fill reads what it moves of it from DRAM through f's DMA channels, and the "
        "reference is handed 'b' and returns all of it")
    path = design_file(SHIM_DMA_2D.format(
        keep='keep = fifo(Tensor[8, 16, i32], name="keep")\n', consume="keep.consume() as _, ",
        fill="\n        rt.fill(keep, b, (0, [8, 16], [32, 1]))", args="a, b",
        start="b.copy()"))
    handle = load_design(path)
    check_design(handle.ir)
    a = np.arange(512, dtype=np.int32).reshape(16, 32)
    result = simulate(handle, {"a": a, "b": np.zeros((16, 32), dtype=np.int32)})
    assert [c.line() for c in result.checks] == ["PASS b: exact (integers must match exactly)"]
    want = np.zeros((16, 32), dtype=np.int32)
    want[:8, :16] = a[:8, :16] + 1
    np.testing.assert_array_equal(result.outputs["b"], want)
    assert [b["direction"] for b in buffer_abi(handle.ir)] == ["in", "inout"]
