"""``sim --kernels native`` holds each call site's first call on each core to the kernel's own
reference on the same inputs (aiedsl.sim.call_check). Behind a GEMM, a bf16 output's tolerance
covers the GEMM's rounding of its partial sums, and an element-wise kernel that zeroed every
small value passed the design's comparison (a transformer engineer)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from aiedsl.loader import load_design
from aiedsl.sim import simulate

DesignFile = Callable[..., Path]

GEMM_THEN_NARROW = '''
    import ml_dtypes
    import numpy as np
    from aiedsl import Tensor, bf16, channel, define, design, f32, fifo, herd, memtile, runtime
    from aiedsl.kernels import block_dims, buffer, declare, matmul, unblock_dims, zero

    m, K, N = 32, 64, 64
    FLUSH = define("FLUSH", 0)

    def narrow_ref(a, out):
        out[...] = a.astype(ml_dtypes.bfloat16)

    @design(device="npu1_1col")
    def d(x: Tensor[m, K, bf16], w: Tensor[K, N, bf16], h: Tensor[m, N, bf16]):
        mm = matmul(m, K, N, bf16, f32)
        r, s, t = (mm.ir.params[p] for p in "rst")
        zero_c = zero(Tensor[m, N, f32])
        xa = channel(Tensor[m, K, bf16], shape=[1], via=memtile,
                     dims_to_stream=block_dims(m, K, r, s))
        wa = channel(Tensor[K, N, bf16], shape=[1], via=memtile,
                     dims_to_stream=block_dims(K, N, s, t))
        g = fifo(Tensor[m, N, f32], name="g")
        ho = channel(Tensor[m, N, bf16], shape=[1], via=memtile,
                     dims_to_stream=unblock_dims(m, N, r, t))
        narrow = declare(f"narrow_{FLUSH}", source="narrow.cc", entry=f"narrow<{m * N}>",
                         defines={"FLUSH": FLUSH},
                         args=[buffer("a", Tensor[m, N, f32]),
                               buffer("out", Tensor[m, N, bf16], "out")],
                         reference=narrow_ref, cycles=200, cost="-")

        @herd(rows=2)
        def core(x_, y):
            if y == 0:
                with xa[0].consume() as xt, wa[0].consume() as wt, g.produce() as acc:
                    zero_c(acc)
                    mm(xt, wt, acc)
            else:
                with g.consume() as a, ho[0].produce() as o:
                    narrow(a, o)

        with runtime() as rt:
            rt.fill(xa[0], x)
            rt.fill(wa[0], w)
            rt.drain(ho[0], h)

    @d.reference
    def reference(x, w):
        return (x.astype(np.float32) @ w.astype(np.float32)).astype(ml_dtypes.bfloat16)
    '''

NARROW_CC = '''
#include <aie_api/aie.hpp>
template <unsigned N>
void narrow(const float *__restrict a, bfloat16 *__restrict out) {
  constexpr unsigned W = 16;
  const aie::rounding_mode old = aie::get_rounding();
  aie::set_rounding(aie::rounding_mode::conv_even);
  for (unsigned i = 0; i < N; i += W) {
    aie::vector<float, W> y = aie::load_v<W>(a + i);
    if (FLUSH)  // the bug: every |y| < 0.1 written as 0
      y = aie::select(y, aie::zeros<float, W>(), aie::lt(aie::abs(y), aie::broadcast<float, W>(0.1f)));
    aie::accum<accfloat, W> acc;
    acc.from_vector(y);
    aie::store_v(out + i, acc.template to_vector<bfloat16>());
  }
  aie::set_rounding(old);
}
'''


@pytest.mark.parametrize("flush", [0, 1])
def test_a_kernel_behind_a_gemm_is_held_to_its_own_reference(design_file: DesignFile,
                                                              flush: int) -> None:
    path = design_file(GEMM_THEN_NARROW)
    (path.parent / "narrow.cc").write_text(NARROW_CC)
    result = simulate(load_design(path, {"FLUSH": str(flush)}), kernels="native")
    # the design's comparison allows h the GEMM's rounding: the flushed elements pass it
    assert result.checks[0].passed and result.checks[0].name == "h"
    if not flush:
        assert len(result.checks) == 1 and result.passed
        return
    (call,) = result.checks[1:]
    assert not result.passed
    assert call.line().splitlines()[0] == (
        "FAIL narrow_1.out at core[0,1]'s call 1 (d.py:38): worst element [26, 23] got 0 want "
        "-0.0957031 (|error| 0.0957; tolerance 0.0078125 relative (one rounding per element))")
    assert call.hints == [
        "the C++ and the kernel's numpy reference differ on this call's own inputs, beyond the "
        "tolerance of that kernel alone (the design's outputs may pass still: theirs covers "
        "every rounding on the way there)"]
    assert call.worst_index is not None and 0 < abs(call.want) < 0.1 and call.got == 0


def test_print_of_a_run_result_says_what_the_command_line_says() -> None:
    """(the same tester) ``RunResult(sim: y bfloat16[32, 1024] FAIL; 161.9 us)`` said FAIL and
    not why; print() shows the lines, the repr stays one line."""
    import aiedsl

    root = Path(__file__).resolve().parents[1]
    r = aiedsl.build(str(root / "designs" / "passthrough.py"), write=False).run(target="sim")
    assert str(r) == "\n".join(r.lines())
    assert str(r).splitlines()[0] == "PASS out: exact (integers must match exactly)"
    assert repr(r).startswith("RunResult(sim: out int32[") and "\n" not in repr(r)
