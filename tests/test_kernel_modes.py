"""The rounding and saturation modes a kernel sets are its core's: ``sim --kernels native``
keeps them per core (one process runs every core's kernels, each core in its own copy of each
library, and a core's modes must reach all its copies), and ``aiedsl kernel test`` starts each
kernel at the reset modes."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from aiedsl.kernels.cases import design_cases
from aiedsl.kernels.host import native
from aiedsl.kernels.host_check import check_kernel
from aiedsl.kernels.text import kernel_text
from aiedsl.loader import load_design
from aiedsl.sim import simulate

DesignFile = Callable[..., Path]

TWO_CORES = '''
    import numpy as np
    from aiedsl import Tensor, design, fifo, herd, loop, runtime, u8
    from aiedsl.kernels import buffer, declare

    def copy_ref(src, dst):
        dst[...] = src

    def add_ref(a, b, dst):
        dst[...] = ((a.astype(np.int32) + b) >> SHIFT & 255).astype(np.uint8)

    SHIFT = {shift}
    setter = declare("setter_64", source="modes.cc", entry="setter",
                     args=[buffer("src", Tensor[64, u8]), buffer("dst", Tensor[64, u8], "out")],
                     reference=copy_ref, cycles=40, cost="-")
    adder = declare("adder_64", source="modes.cc", entry="adder",
                    args=[buffer("a", Tensor[64, u8]), buffer("b", Tensor[64, u8]),
                          buffer("dst", Tensor[64, u8], "out")],
                    reference=add_ref, cycles=40, cost="-")

    @design(device="npu1_1col")
    def d(x: Tensor[4, 64, u8], y: Tensor[4, 64, u8], o: Tensor[4, 64, u8]):
        fx = fifo(Tensor[64, u8], name="fx")
        fy = fifo(Tensor[64, u8], name="fy")
        mid = fifo(Tensor[64, u8], name="mid")
        fo = fifo(Tensor[64, u8], name="fo")

        @herd(name="a")
        def a():
            for _ in loop(4):
                with fx.consume() as s, mid.produce() as t:
                    setter(s, t)

        @herd(name="b")
        def b():
            for _ in loop(4):
                with mid.consume() as p, fy.consume() as q, fo.produce() as t:
                    adder(p, q, t)

        with runtime() as rt:
            rt.fill(fx, x)
            rt.fill(fy, y)
            rt.drain(fo, o)

    @d.reference
    def reference(x, y):
        return ((x.astype(np.int32) + y) >> SHIFT & 255).astype(np.uint8)
    '''

MODES_CC = '''
#include <aie_api/aie.hpp>
#include <stdint.h>
// core A's kernel: sets a mode and leaves it set (its core runs nothing else)
void setter(const uint8_t *__restrict src, uint8_t *__restrict dst) {
  SET_MODE;
  for (unsigned i = 0; i < 64; i += 32) aie::store_v(dst + i, aie::load_v<32>(src + i));
}
// core B's kernel: (a + b) >> SHIFT by the reset modes (floor, no saturation: it wraps)
void adder(const uint8_t *__restrict a, const uint8_t *__restrict b, uint8_t *__restrict dst) {
  aie::vector<int16_t, 16> wt = aie::zeros<int16_t, 16>(); wt[0] = 1; wt[1] = 1;
  for (unsigned i = 0; i < 64; i += 32)
    aie::store_v(dst + i, aie::accumulate<32>(wt, 0, aie::load_v<32>(a + i),
                                              aie::load_v<32>(b + i))
                              .template to_vector<uint8_t>(SHIFT));
}
'''

MODES = {  # what core A sets, and the shift at which it would change core B's results
    "saturation": ("aie::set_saturation(aie::saturation_mode::saturate)", 0),
    "rounding": ("aie::set_rounding(aie::rounding_mode::ceil)", 1),
}


def _two_cores(design_file: DesignFile, mode: str) -> Path:
    setter, shift = MODES[mode]
    path = design_file(TWO_CORES.replace("{shift}", str(shift)))
    (path.parent / "modes.cc").write_text(MODES_CC.replace("SET_MODE", setter)
                                          .replace("SHIFT", str(shift)))
    return path


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_mode_one_core_sets_does_not_reach_another(design_file: DesignFile,
                                                     mode: str) -> None:
    """Riallto tester (leak/): core A's kernel set saturation and left it; core B's, from the
    same .cc, relied on the reset mode to wrap. On the NPU each core has its own control
    registers; the native simulation shared one mode among all and failed (76% wrong)."""
    handle = load_design(_two_cores(design_file, mode))
    result = simulate(handle, kernels="native")
    assert [c.line() for c in result.checks] == ["PASS o: exact (integers must match exactly)"]
    assert result.passed


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_core_keeps_the_mode_its_kernel_left(design_file: DesignFile, mode: str) -> None:
    """The modes are the core's: its next call starts with what its last one left."""
    from aiedsl.kernels.host import RESET_MODES

    handle = load_design(_two_cores(design_file, mode))
    k = {k.symbol: k for k in handle.ir.kernels}["setter_64"]
    fn = native(k, kernel_text(handle.ir, k))
    src, dst = np.arange(64, dtype=np.uint8), np.zeros(64, np.uint8)
    modes = list(RESET_MODES)
    fn(src, dst, modes=modes)
    assert modes == ([0, 1] if mode == "saturation" else [1, 0])  # as the AIE API numbers them
    assert np.array_equal(dst, src)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_kernel_test_starts_each_kernel_at_the_reset_modes(design_file: DesignFile,
                                                          mode: str) -> None:
    """The library is loaded once per process: a kernel run in this process before (the
    setter) left its modes in it, and the kernel test's runs inherited them."""
    handle = load_design(_two_cores(design_file, mode))
    cases = {c.kernel.symbol: c for c in design_cases(handle)}
    setter = cases["setter_64"]
    native(setter.kernel, setter.cpp)(np.zeros(64, np.uint8), np.zeros(64, np.uint8))
    result = check_kernel(cases["adder_64"])
    assert result.lines == ["PASS adder_64.dst: exact (integers must match exactly)"]


ADD_UNDER_SATURATE = '''
    import numpy as np
    from aiedsl import Tensor, design, fifo, herd, i8, runtime
    from aiedsl.kernels import buffer, declare

    def wrapping(a, b, out):
        out[...] = (a.astype(np.int16) + b).astype(np.int8)

    def saturating(a, b, out):
        out[...] = np.clip(a.astype(np.int16) + b, -128, 127).astype(np.int8)

    add = declare("add_sat", source="add.cc",
                  args=[buffer("a", Tensor[64, i8]), buffer("b", Tensor[64, i8]),
                        buffer("out", Tensor[64, i8], "out")],
                  reference={ref}, cycles=40, cost="-")

    @design(device="npu1_1col")
    def d(x: Tensor[64, i8], y: Tensor[64, i8], o: Tensor[64, i8]):
        fx = fifo(Tensor[64, i8], name="fx")
        fy = fifo(Tensor[64, i8], name="fy")
        fo = fifo(Tensor[64, i8], name="fo")

        @herd(name="a")
        def a():
            with fx.consume() as s, fy.consume() as t, fo.produce() as u:
                add(s, t, u)

        with runtime() as rt:
            rt.fill(fx, x)
            rt.fill(fy, y)
            rt.drain(fo, o)

    @d.reference
    def reference(x, y):
        out = np.empty(64, np.int8)
        {ref}(x, y, out)
        return out
    '''

ADD_CC = '''
#include <aie_api/aie.hpp>
#include <stdint.h>
extern "C" void add_sat(const int8_t *a, const int8_t *b, int8_t *out) {
  aie::set_saturation(aie::saturation_mode::saturate);
  aie::store_v(out, aie::add(aie::load_v<64>(a), aie::load_v<64>(b)));
  aie::set_saturation(aie::saturation_mode::none);  // the core's mode, as it found it
}
'''


@pytest.mark.parametrize("ref, lines", [
    ("wrapping", ["PASS add_sat.out: exact (integers must match exactly)"]),
    ("saturating", ["FAIL add_sat.out: worst element [45] got -121 want 127 (|error| 248; "
                    "integers must match exactly)\n"
                    "  wrong: 16 of 64 elements (25%), all within [0:62]\n"
                    "  inputs at [45]: 'a' 43, 'b' 92 (--seed 0)"]),  # 43 + 92 wraps
])
def test_an_integer_vector_add_wraps_under_saturate(design_file: DesignFile, ref: str,
                                                    lines: list[str]) -> None:
    """Tester: a kernel that sets saturate and stores aie::add of int8 vectors passed a
    saturating reference and failed a wrapping one. The core's vector add (VADD) reads no
    saturation mode: 127 + 1 is -128 whatever the mode (the header's head cites the sources)."""
    path = design_file(ADD_UNDER_SATURATE.replace("{ref}", ref))
    (path.parent / "add.cc").write_text(ADD_CC)
    (case,) = design_cases(load_design(path))
    assert check_kernel(case).lines == lines
