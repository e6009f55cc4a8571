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
    # the one-line repr says it, beside the output's PASS
    assert repr(result).startswith(
        "SimResult(d on npu1_1col: h bfloat16[32, 64] PASS, FAIL of kernel narrow_1 against "
        "its reference; ")
    from aiedsl.cli.run_stats import run_stats
    from aiedsl.run_result import RunResult

    run = RunResult("sim", "test", result.inputs, result.outputs, result.checks, result.timing)
    stats = run_stats(run, "d", "npu1_1col", seed=0, kernels="native")
    assert [o["name"] for o in stats["outputs"]] == ["h"]
    assert [c["name"] for c in stats["calls"]] == ["narrow_1.out at core[0,1]'s call 1 (d.py:38)"]
    assert stats["passed"] is False


def test_print_of_a_run_result_says_what_the_command_line_says() -> None:
    """(the same tester) ``RunResult(sim: y bfloat16[32, 1024] FAIL; 161.9 us)`` said FAIL and
    not why; print() shows the lines, the repr stays one line."""
    import aiedsl

    root = Path(__file__).resolve().parents[1]
    r = aiedsl.build(str(root / "designs" / "passthrough.py"), write=False).run(target="sim")
    assert str(r) == "\n".join(r.lines())
    assert str(r).splitlines()[0] == "PASS out: exact (integers must match exactly)"
    assert repr(r).startswith("RunResult(sim: out int32[") and "\n" not in repr(r)


ALIAS = """import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, runtime
from aiedsl.kernels import buffer, declare

def two_ref(a, o1, o2):
    o1[...] = a * 2
    o2[...] = a * 3

two = declare("two", source="k.cc",
              args=[buffer("a", Tensor[16, i32]), buffer("o1", Tensor[16, i32], "out"),
                    buffer("o2", Tensor[16, i32], "out")],
              reference=two_ref, cycles=40, cost="-")

@design(device="npu1_1col")
def d(x: Tensor[16, i32], o: Tensor[16, i32]):
    fx = fifo(Tensor[16, i32], name="fx")
    fo = fifo(Tensor[16, i32], name="fo")

    @herd()
    def core():
        with fx.consume() as s, fo.produce() as t:
            two(s, t, t)

    with runtime() as rt:
        rt.fill(fx, x)
        rt.drain(fo, o)

@d.reference
def reference(x):
    return x * 3
"""

ALIAS_CC = """#include <stdint.h>
extern "C" void two(const int32_t *a, int32_t *o1, int32_t *o2) {
  for (int i = 0; i < 16; i++) { o1[i] = a[i] * 2; o2[i] = a[i] * 3; }
}
"""

STATIC = """import numpy as np
from aiedsl import Tensor, design, fifo, herd, i32, loop, runtime
from aiedsl.kernels import buffer, declare

def copy_ref(src, dst):
    dst[...] = src

count = declare("count_calls", source="cnt.cc",
                args=[buffer("in", Tensor[16, i32]), buffer("out", Tensor[16, i32], "out")],
                reference=copy_ref, cycles=40, cost="-")

@design(device="npu1_1col")
def d(x: Tensor[4, 16, i32], o: Tensor[4, 16, i32]):
    fx = fifo(Tensor[16, i32], name="fx")
    fo = fifo(Tensor[16, i32], name="fo")

    @herd(name="a")
    def a():
        for _ in loop(2):
            with fx.consume() as s, fo.produce() as t:
                count(s, t)
            with fx.consume() as s, fo.produce() as t:
                count(s, t)

    with runtime() as rt:
        rt.fill(fx, x)
        rt.drain(fo, o)

@d.reference
def reference(x):
    n = np.arange(4, dtype=np.int32)[:, None]
    return x + n
"""

STATIC_CC = """#include <stdint.h>
extern "C" void count_calls(const int32_t *in, int32_t *out) {
  static int32_t n = 0;
  for (int i = 0; i < 16; i++) out[i] = in[i] + n;
  n++;
}
"""


@pytest.mark.parametrize("source, cc", [(ALIAS, ALIAS_CC), (STATIC, STATIC_CC)],
                         ids=["one buffer as two outputs", "a static across call sites"])
def test_correct_calls_are_not_taken_for_wrong_ones(tmp_path: Path, source: str,
                                                    cc: str) -> None:
    """(a reviewer) ``two(s, t, t)`` got two copies of t for its reference, where the core has
    one memory; a counter kept in a static failed at a second call site's first call, which
    found it at 1. The reference gets one copy of a buffer passed twice, and only the core's
    first call of a kernel is compared."""
    (tmp_path / "d.py").write_text(source)
    (tmp_path / ("k.cc" if cc is ALIAS_CC else "cnt.cc")).write_text(cc)
    result = simulate(load_design(tmp_path / "d.py"), kernels="native")
    assert [c.line().splitlines()[0] for c in result.checks] == [
        "PASS o: exact (integers must match exactly)"]


def test_print_of_a_simulate_result_says_the_same() -> None:
    from aiedsl.loader import load_design as load

    root = Path(__file__).resolve().parents[1]
    r = simulate(load(root / "designs" / "passthrough.py"))
    assert str(r) == "\n".join(r.lines())
    assert str(r).splitlines()[0] == "PASS out: exact (integers must match exactly)"


CENTER = """import numpy as np
from aiedsl import Tensor, define, design, f32, fifo, herd, runtime
from aiedsl.kernels import buffer, declare

n = 256
CH = define("CH", 0)
def center_ref(x, out): out[...] = x - x.mean()
def half_ref(x, out): out[...] = x * np.float32(0.5)

@design(device="npu1_1col")
def d(x: Tensor[n, f32], y: Tensor[n, f32]):
    fx = fifo(Tensor[n, f32], name="fx")
    fc = fifo(Tensor[n, f32], name="fc")
    fy = fifo(Tensor[n, f32], name="fy")
    center = declare(f"center_{n}", source="k.cc", entry=f"center<{n}>",
                     args=[buffer("x", Tensor[n, f32]), buffer("out", Tensor[n, f32], "out")],
                     reference=center_ref, cycles=100, cost="-", chained=bool(CH))
    half = declare(f"half_{n}", source="k.cc", entry=f"half<{n}>",
                   args=[buffer("x", Tensor[n, f32]), buffer("out", Tensor[n, f32], "out")],
                   reference=half_ref, cycles=100, cost="-")

    @herd(rows=2)
    def core(c, r):
        if r == 0:
            with fx.consume() as a, fc.produce() as b:
                center(a, b)
        else:
            with fc.consume() as a, fy.produce() as b:
                half(a, b)

    with runtime() as rt:
        rt.fill(fx, x)
        rt.drain(fy, y)

@d.reference
def reference(x):
    x = x.astype(np.float64)
    return ((x - x.mean()) * 0.5).astype(np.float32)
"""

CENTER_CC = """#include <aie_api/aie.hpp>
// out = x - mean(x), f32, row of N
template <unsigned N>
void center(const float *__restrict x, float *__restrict out) {
  aie::accum<accfloat, 16> acc = aie::zeros<accfloat, 16>();
  for (unsigned i = 0; i < N; i += 16) acc = aie::add(acc, aie::load_v<16>(x + i));
  float mean = aie::reduce_add(acc.template to_vector<float>()) / N;
  for (unsigned i = 0; i < N; i += 16)
    aie::store_v(out + i, aie::sub(aie::load_v<16>(x + i), mean));
}
template <unsigned N>
void half(const float *__restrict x, float *__restrict out) {
  for (unsigned i = 0; i < N; i += 16)
    aie::store_v(out + i, aie::mul(aie::load_v<16>(x + i), 0.5f).template to_vector<float>());
}
"""


def test_a_sum_in_another_order_is_not_a_wrong_call(tmp_path: Path) -> None:
    """(a false-alarm hunter) x - mean(x) of inputs near 1000: the C++ sums in another order
    than numpy, its mean an f32 step off, and near the mean that is beyond f32's 1e-4
    relative in 30% of the elements. Every difference within f32 roundings of the inputs'
    sum is no wrong call."""
    import numpy as np

    (tmp_path / "d.py").write_text(CENTER)
    (tmp_path / "k.cc").write_text(CENTER_CC)
    x = (1000 + 3 * np.random.default_rng(1).standard_normal(256)).astype(np.float32)
    result = simulate(load_design(tmp_path / "d.py"), {"x": x}, kernels="native")
    assert [c.passed for c in result.checks] == [True]


def test_what_summing_in_another_order_excuses_and_what_it_does_not(
        design_file: DesignFile) -> None:
    """(a reviewer) A bound of n f32 steps of the largest input, at every element, hid a flush
    of small values behind one outlier activation and an i32 off-by-one near 2^24: it is two
    steps per level of a pairwise sum now, never for integers or a non-finite element the
    reference has not."""
    import numpy as np

    from aiedsl.sim.call_check import within_reordering

    path = design_file(GEMM_THEN_NARROW)
    (path.parent / "narrow.cc").write_text(NARROW_CC)
    k = next(k for k in load_design(path).ir.kernels if k.symbol.startswith("narrow"))
    a = np.full(32 * 64, 1000.0, dtype=np.float32)  # 2048 inputs: 22 levels' steps of 1000
    want = np.zeros(32 * 64, dtype=np.float32)
    step = 2 * 11 * 2.0 ** -23 * 1000
    assert within_reordering(want + np.float32(step * 0.9), want, [a, want], k)
    assert not within_reordering(want + np.float32(step * 1.1), want, [a, want], k)
    a[0] = 400.0  # an outlier among small values: the bound is of the largest input
    small = np.zeros(32 * 64, dtype=np.float32)
    assert not within_reordering(small, small + np.float32(0.09), [a, small], k)
    inf = want.copy()
    inf[3] = np.inf
    assert not within_reordering(-inf, inf, [a, inf], k)
    assert within_reordering(inf, inf, [a, inf], k)
    ints = np.arange(2048, dtype=np.int32) + 2 ** 24
    assert not within_reordering(ints + 1, ints, [ints, ints], k)
