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
