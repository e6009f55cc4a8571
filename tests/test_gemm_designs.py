"""The GEMM designs' knobs: output type, core tile and the K run staged in the memtile.

designs/gemm_bf16.py (f32 or bf16 C) and designs/gemm_i8.py (i8 or i32 C) at small sizes against
numpy, with the library's C++ on the host too; the narrow-C kernels' numerics; the staged K run
(regrouping memtile forwards) through the checks; and Taka et al.'s four settings passing every
design rule on npu1 and npu2 (their timing is bench material: see the README).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Callable

import ml_dtypes
import numpy as np
import pytest

import aiedsl.lang.gemm as gemm
from aiedsl.checks import check_design
from aiedsl.errors import DesignError
from aiedsl.kernels import library
from aiedsl.kernels.cases import design_cases
from aiedsl.kernels.host import native
from aiedsl.kernels.host_check import check_kernel
from aiedsl.kernels.layout import block
from aiedsl.kernels.text import kernel_text
from aiedsl.loader import load_design
from aiedsl.sim import simulate

ROOT = Path(__file__).resolve().parents[1]
BF16 = ROOT / "designs" / "gemm_bf16.py"
I8 = ROOT / "designs" / "gemm_i8.py"

TAKA = {  # Taka et al.'s tiles at the sizes nearest 4096^3 that they divide
    "npu1 bf16": (BF16, None, dict(M=4224, K=4032, N=4224, m=96, k=56, n=96, OUT="bf16",
                                   K_MT=448)),
    "npu2 bf16": (BF16, "npu2", dict(COLS=8, M=4032, K=4032, N=4608, m=112, k=48, n=96,
                                     OUT="bf16", K_MT=336)),
    "npu1 int8": (I8, None, dict(M=4032, K=4032, N=4032, m=112, k=112, n=112, K_MT=672,
                                 SHIFT=9)),
    "npu2 int8": (I8, "npu2", dict(COLS=8, M=4032, K=4032, N=4608, m=144, k=72, n=144,
                                   K_MT=576, SHIFT=9)),
}


def load(path: Path, device: str | None = None, **defines: object):  # type: ignore[no-untyped-def]
    return load_design(path, {k: str(v) for k, v in defines.items()}, device)


def passed(path: Path, device: str | None = None, *, kernels: str = "reference",
           **defines: object) -> None:
    result = simulate(load(path, device, **defines), kernels=kernels)
    assert result.passed, [c.line() for c in result.checks]


# -- the designs at small sizes, against numpy ----------------------------------------------------

@pytest.mark.parametrize("defines", [
    dict(OUT="bf16"),
    dict(K_MT=256),
    dict(OUT="bf16", K_MT=128, M=256, N=256),
    # Taka et al.'s npu1 tile (96x56x96, bf16 C) on a 2x2 herd, two K runs of two steps
    dict(m=96, k=56, n=96, OUT="bf16", K_MT=112, M=192, K=224, N=192, ROWS=2, COLS=2),
])
def test_bf16_gemm_variants_pass_on_npu1(defines: dict, in_root: Path) -> None:
    passed(BF16, **defines)


@pytest.mark.parametrize("defines", [
    dict(COLS=8, OUT="bf16", K_MT=128, M=256, K=256, N=512),
    # Taka et al.'s npu2 tile (112x48x96) on a 2x2 herd
    dict(m=112, k=48, n=96, OUT="bf16", K_MT=96, M=224, K=192, N=192, ROWS=2, COLS=2),
])
def test_bf16_gemm_variants_pass_on_npu2(defines: dict, in_root: Path) -> None:
    passed(BF16, "npu2", **defines)


@pytest.mark.parametrize("device, defines", [
    (None, dict()),                                  # i8 C, shift 4
    (None, dict(OUT="i32", M=256, N=256)),
    (None, dict(K_MT=256, SHIFT=6, M=256, N=256)),
    (None, dict(m=112, k=112, n=112, K_MT=224, M=224, K=448, N=224, ROWS=2, COLS=2, SHIFT=7)),
    ("npu2", dict(COLS=8, K_MT=128, M=256, K=256, N=512)),
    ("npu2", dict(m=144, k=72, n=144, K_MT=144, M=288, K=288, N=288, ROWS=2, COLS=2)),
])
def test_int8_gemm_variants_pass(device: str | None, defines: dict, in_root: Path) -> None:
    passed(I8, device, **defines)


def test_the_variants_pass_with_their_real_kernels(in_root: Path) -> None:
    """``sim --kernels native``: the C++ built for the host inside the dataflow."""
    passed(BF16, kernels="native", OUT="bf16", K_MT=128, M=128, K=256, N=256, ROWS=2, COLS=2)
    passed(I8, "npu2", kernels="native", K_MT=128, M=128, K=256, N=128, ROWS=2, COLS=2)


def test_a_bf16_c_is_rounded_at_every_k_step(in_root: Path) -> None:
    """The reference follows the kernel: C rounds to bf16 once per K step, not once at the end;
    the f32 product rounded once is within bf16's tolerance of it."""
    result = simulate(load(BF16, OUT="bf16", M=256, K=512, N=256))
    got = result.outputs["C"]
    assert got.dtype == ml_dtypes.bfloat16
    A, B = (result.inputs[x].astype(np.float32) for x in "AB")
    once = (A @ B).astype(ml_dtypes.bfloat16)
    assert not np.array_equal(got, once)  # eight roundings differ from one somewhere
    assert np.abs(got.astype(np.float32) - once.astype(np.float32)).max() < 0.05 * np.abs(
        A @ B).max()


def test_an_i8_c_is_the_sum_rescaled_and_saturated(in_root: Path) -> None:
    """The default SHIFT (12 at K=512) puts C mid-range for the simulator's full-range int8
    inputs: sums of standard deviation 5461 sqrt(512) = 123,574 become C's of about 30."""
    d = load(I8, M=256, N=256)
    assert d.ir.kernels[-1].params["shift"] == 12
    result = simulate(d)
    got = result.outputs["C"].astype(np.int64)
    A, B = (result.inputs[x] for x in "AB")
    assert A.min() == B.min() == -128 and A.max() == B.max() == 127
    exact = A.astype(np.int64) @ B.astype(np.int64)
    assert 0.98 < exact.std() / (5461.25 * np.sqrt(512)) < 1.02
    # the exact sum shifted right by 12, rounded to nearest even and saturated, once
    assert np.array_equal(got, library.srs(exact, 12, np.dtype(np.int8)))
    assert 25 < got.std() < 35 and (np.abs(got) < 127).mean() > 0.99


def _plus_then_minus(M: int, K: int, N: int) -> dict[str, np.ndarray]:
    """A is +1 in K's first half and -1 in its second, B all 100: A @ B is 0 everywhere, while
    its partial sums over K reach 100 K / 2."""
    A = np.ones((M, K), np.int8)
    A[:, K // 2:] = -1
    return {"A": A, "B": np.full((K, N), 100, np.int8)}


@pytest.mark.parametrize("kernels", ["reference", "native"])
def test_an_i8_c_is_rounded_and_saturated_once_where_l1_holds_the_sums(
        kernels: str, in_root: Path) -> None:
    """A tester: with A +1 then -1 along K and B all 100 (A @ B is 0), gemm_i8 gave C = -128
    and its sim said PASS: C was narrowed at every one of the K/k calls, the first half's
    partial sum clipped at 127 and the second half drove it down to -128, and the design's
    reference narrowed as often. By default the cores now sum in an int32 tile of their own
    and narrow it into C once (the C++ too)."""
    d = load(I8, M=256, K=256, N=256, SHIFT=4)
    assert {k.symbol for k in d.ir.kernels} == {
        "zero_i32_4096", "matmul_i8_i32_64x64x64_4x8x8", "matmul_narrow_i8_i8_64x64_4x8x8_shift4"}
    result = simulate(d, inputs=_plus_then_minus(256, 256, 256), kernels=kernels)
    assert result.passed, [c.line() for c in result.checks]
    assert not result.outputs["C"].any()
    assert result.checks[0].hints == []  # one rounding: nothing to note


def test_an_i8_c_summed_in_itself_is_narrowed_at_every_k_step_and_says_so(in_root: Path) -> None:
    """ACC=c (what Taka et al.'s tiles need: their int32 tile does not fit L1): C itself holds
    the partial sums, narrowed by each of the K/k calls; the reference does the same, so the
    run passes, and a note under the PASS (and in ``aiedsl check``) says what C holds."""
    d = load(I8, M=256, K=256, N=256, SHIFT=4, ACC="c")
    result = simulate(d, inputs=_plus_then_minus(256, 256, 256))
    assert result.passed
    assert (result.outputs["C"] == -128).all()  # 127 after two steps, then -128
    text = ("kernel 'matmul_i8_i8_64x64x64_4x8x8_shift4' sums into its i8 argument 'c' 4 times "
            "before the core releases it: the partial sums are kept in i8 between the calls, so "
            "they are rounded and saturated 4 times, not once (a partial sum clipped at 127 or "
            "-128 stays clipped whatever the later calls add, and the calls' rounding errors add "
            "up); for one rounding, sum in an int32 buffer (matmul to i32 into a core-local "
            "local(Tensor[..., i32]) when the core's memory holds it, then matmul_narrow into "
            "the output after the last call) or drain the int32 sums and narrow them on the "
            "host")
    line = next(i + 1 for i, t in enumerate(I8.read_text().splitlines())
                if "mm(ta, tb, tc)" in t)
    assert result.checks[0].hints == [f"designs/gemm_i8.py:{line}: {text}"]
    assert f"  note: designs/gemm_i8.py:{line}: {text}" in result.checks[0].line()
    from aiedsl.notes import design_notes

    assert [n.line() for n in design_notes(d.ir)] == [f"designs/gemm_i8.py:{line}: note: {text}"]


def test_taka_int8_tiles_sum_in_c_and_the_check_says_so(in_root: Path) -> None:
    """At Taka et al.'s npu1 tile (112x112x112) an int32 tile of sums (49 KB) does not fit L1
    beside double-buffered A and B and the i8 C: C holds the sums, narrowed K/k = 36 times, and
    ``aiedsl check`` says so; ACC=i32 asked for anyway is an L1 error."""
    from aiedsl.notes import design_notes

    _, _, defines = TAKA["npu1 int8"]
    notes = design_notes(load(I8, **defines).ir)
    assert len(notes) == 1 and notes[0].always
    assert notes[0].text.startswith(
        "kernel 'matmul_i8_i8_112x112x112_4x8x8_shift9' sums into its i8 argument 'c' 36 times "
        "before the core releases it")
    with pytest.raises(DesignError) as e:
        check_design(load(I8, **defines, ACC="i32").ir)
    assert "local acc_0_2 50176 B" in str(e.value)


@pytest.mark.parametrize("defines, message, found, limit, fix", [
    (dict(ACC="x"), "ACC=x is not a place to sum C", "defines={'ACC': 'x'}", "i32 or c",
     "give defines={'ACC': 'i32'} (an int32 tile, C narrowed once) or defines={'ACC': 'c'} "
     "(C, narrowed at every K step)"),  # from Python: in its words, though written in -D's
    (dict(OUT="i32", ACC="i32"), "ACC=i32 with OUT=i32", "defines={'ACC': 'i32'}",
     "ACC=i32 only with OUT=i8 or i16: an i32 C is already the int32 sum",
     "leave 'ACC' out of defines="),
])
def test_the_i8_gemm_refuses_an_acc_it_cannot_build(defines: dict, message: str, found: str,
                                                    limit: str, fix: str, in_root: Path) -> None:
    line = next(i + 1 for i, t in enumerate(I8.read_text().splitlines())
                if t.startswith('ACC = define("ACC"'))
    with pytest.raises(DesignError) as e:
        load(I8, **defines)
    assert str(e.value) == (f"designs/gemm_i8.py:{line}: error [define]: {message}\n"
                            f"  limit: {limit}\n  found: {found}\n  fix: {fix}")


def test_matmul_narrow_rounds_an_int32_tile_once(in_root: Path) -> None:
    rng = np.random.default_rng(1)
    acc = rng.integers(-2 ** 20, 2 ** 20, (32, 64)).astype(np.int32)
    acc[0, :4] = [24, 40, -24, 2 ** 31 - 1]  # ties to even at shift 4; a sum far past i8
    k = library.matmul_narrow(32, 64, "i8", "i8", shift=4)
    assert k.ir.symbol == "matmul_narrow_i8_i8_32x64_4x8x8_shift4"
    assert k.ir.entry == "matmul_narrow<int8_t, int8_t, 4, 8, 8, 32, 64, 4>"
    c = np.zeros((32, 64), np.int8)
    k.run_reference(block(acc, 4, 8), c)
    want = np.clip(np.round(acc.astype(np.float64) / 16), -128, 127).astype(np.int8)
    assert np.array_equal(c, block(want, 4, 8).reshape(32, 64))
    assert c.reshape(-1)[:4].tolist() == [2, 2, -2, 127]


WRONG_BF16 = """
import ml_dtypes
import numpy as np
from aiedsl import Tensor, bf16, channel, define, design, gemm_runtime, herd, loop, memtile, runtime
from aiedsl.kernels import block_dims, declare, matmul, unblock_dims, zero
from aiedsl.kernels.layout import block, unblock

M = N = 512
K = define("K", 64)
BUG = define("BUG", "trunc")
m = k = n = 64
r, s, t = 4, 8, 4

def wrong(a, b, c):
    A = unblock(a.reshape(-1), m, k, r, s).astype(np.float32)
    B = unblock(b.reshape(-1), k, n, s, t).astype(np.float32)
    C = unblock(c.reshape(-1), m, n, r, t).astype(np.float32)
    if BUG == "trunc":  # the reset rounding mode (floor) truncates toward zero
        bits = (C + A @ B).astype(np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
        out = bits.view(np.float32).astype(ml_dtypes.bfloat16)
    else:  # rounds to bf16 after every 8-wide block of k
        for j in range(0, k, s):
            C = (C + A[:, j:j + s] @ B[j:j + s]).astype(ml_dtypes.bfloat16).astype(np.float32)
        out = C.astype(ml_dtypes.bfloat16)
    c[...] = block(np.ascontiguousarray(out), r, t).reshape(c.shape)

@design(device="npu1")
def g(A: Tensor[M, K, bf16], B: Tensor[K, N, bf16], C: Tensor[M, N, bf16]):
    good = matmul(m, k, n, bf16, bf16)
    mm = declare("mm_wrong", source="mm.cc", entry=good.ir.entry, args=list(good.ir.args),
                 reference=wrong, cycles=good.ir.cycles, cost="as matmul", ops=good.ir.ops)
    a = channel(Tensor[m, k, bf16], shape=[4], via=memtile, broadcast=4,
                dims_to_stream=block_dims(m, k, r, s), name="a")
    b = channel(Tensor[k, n, bf16], shape=[4], via=memtile, broadcast=4,
                dims_to_stream=block_dims(k, n, s, t), name="b")
    c = channel(Tensor[m, n, bf16], shape=[4, 4], via=memtile, join=1, depth=1,
                dims_to_stream=unblock_dims(m, n, r, t), name="c")
    z = zero(Tensor[m, n, bf16])

    @herd(cols=4, rows=4)
    def core(x, y):
        for _ in loop(4):
            with c[x, y].produce() as acc:
                z(acc)
                for _ in loop(K // k):
                    with a[y].consume() as ta, b[x].consume() as tb:
                        mm(ta, tb, acc)

    with runtime() as rt:
        gemm_runtime(rt, a, b, c, A, B, C, tile=(m, k, n), herd=(4, 4))

@g.reference
def reference(A, B):  # what the right kernel computes: C rounded to bf16 after each K step
    A32, B32 = A.astype(np.float32), B.astype(np.float32)
    acc = np.zeros((M, N), dtype=A.dtype)
    for j in range(0, K, k):
        acc = (acc.astype(np.float32) + A32[:, j:j + k] @ B32[j:j + k]).astype(A.dtype)
    return acc
"""


@pytest.mark.parametrize("bug, K, roundings", [("bf16acc", 64, 1), ("trunc", 128, 2)])
def test_a_bf16_c_rounded_wrongly_fails(bug: str, K: int, roundings: int,
                                        design_file: Callable[..., Path]) -> None:
    """A tester: a bf16 C rounded after every 8-wide block (K=64) or truncated instead of
    rounded to nearest even (K=128) passed, against an allowance of 2^-7 of the largest |C|
    for every element (an 11% error on one passed). Each element is now held to the roundings
    it went through, each of its own partial sums (compare.bf16_sum_bound)."""
    handle = load_design(design_file(WRONG_BF16), {"BUG": bug, "K": str(K)})
    for seed in range(3):
        result = simulate(handle, seed=seed)
        check = result.checks[0]
        assert not check.passed, check.line()
        assert f"for {roundings} rounding{'s' if roundings > 1 else ''} of its partial sums" \
            in check.tolerance
    right = load_design(design_file(WRONG_BF16.replace("reference=wrong",
                                                       "reference=good.run_reference"), "r.py"),
                        {"K": str(K)})
    assert simulate(right).passed


@pytest.mark.parametrize("K", [64, 512, 4096])
@pytest.mark.parametrize("kernels", ["reference", "native"])
def test_a_bf16_c_passes_with_its_own_kernel(K: int, kernels: str, in_root: Path) -> None:
    """mm.cc built for the host (f32 sums in the mmul's order, not numpy's) and the reference,
    on three seeds each, pass the bound that fails the wrong kernels above: its roundings are
    rare flips where the two f32 orders straddle a bf16 rounding boundary."""
    from aiedsl.compare import bf16_sum_bound
    from aiedsl.ir.roundings import sum_roundings

    handle = load(BF16, OUT="bf16", M=256, N=256, K=K)
    assert sum_roundings(handle.ir, "C") == K // 64
    for seed in range(3):
        result = simulate(handle, seed=seed, kernels=kernels)
        assert result.passed, result.checks[0].line()
        want = handle.expected({n: result.inputs[n] for n in handle.inputs})["C"]
        want = want.astype(np.float32)
        coeff, magnitude = bf16_sum_bound(want, K // 64)
        assert coeff == 2 ** -7 * (1 + np.log2(K // 64) / 4)
        err = np.abs(result.outputs["C"].astype(np.float32) - want)
        assert (err / (coeff * np.maximum(np.abs(want), magnitude))).max() < 0.6


def test_the_default_gemm_is_unchanged(in_root: Path) -> None:
    """New knobs default to the old dataflow: channels, one core tile per memtile element, f32."""
    d = load(BF16).ir
    assert [k.symbol for k in d.kernels] == ["zero_f32_4096", "matmul_bf16_f32_64x64x64_4x8x4"]
    assert {f.name: (f.channel, f.elem.numel) for f in d.fifos if f.name.startswith("a_")} == {
        **{f"a_{i}": ("a", 64 * 64) for i in range(4)},
        **{f"a_l3_{i}": (None, 64 * 64) for i in range(4)}}


# -- the staged K run ------------------------------------------------------------------------------

def test_staged_dims_deliver_blocked_tiles() -> None:
    """The memtile's and the core's dims together turn an m x k_run row-major block into k_run/k
    tiles of m x k, each in r x s blocks."""
    from aiedsl.ir.types import Dim, dims_index

    m, k, k_run, r, s = 8, 16, 48, 4, 8
    mem = np.arange(m * k_run).reshape(m, k_run)
    to, frm = gemm.staged_dims_a(m, k, k_run, r, s)
    stream = mem.reshape(-1)[dims_index(tuple(Dim(size=a, stride=b) for a, b in to), m * k_run)]
    idx = dims_index(tuple(Dim(size=a, stride=b) for a, b in frm), m * k)
    for t in range(k_run // k):
        tile = np.empty(m * k, dtype=np.int64)
        tile[idx] = stream[t * m * k:(t + 1) * m * k]
        assert np.array_equal(tile, block(mem[:, t * k:(t + 1) * k], r, s))


def test_staging_keeps_dram_bytes_and_lengthens_dram_runs(in_root: Path) -> None:
    plain = load(BF16, M=256, N=256).ir
    staged = load(BF16, M=256, N=256, K_MT=256).ir
    fills = [[t for t in d.runtime if getattr(t, "op", "") == "fill" and t.fifo == "a_l3_0"]
             for d in (plain, staged)]
    assert [t.pattern.numel for t in fills[0]] == [t.pattern.numel for t in fills[1]]
    assert fills[0][0].pattern.sizes[-1] == 64 and fills[1][0].pattern.sizes[-1] == 256
    a = {d: next(f for f in x.fifos if f.name == "a_l3_0").elem.numel
         for d, x in (("plain", plain), ("staged", staged))}
    assert a == {"plain": 64 * 64, "staged": 64 * 256}
    t0 = simulate(load(BF16, M=256, N=256), check=False).timing
    t1 = simulate(load(BF16, M=256, N=256, K_MT=256), check=False).timing
    assert t0.dram_bytes == t1.dram_bytes


def test_a_wrong_staged_layout_is_a_layout_error(in_root: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the core's half of the transform A arrives in column-major blocks: the layout
    check follows the regrouping memtile buffer back to A's rows and says so."""
    real = gemm.staged_dims_a
    monkeypatch.setattr(gemm, "staged_dims_a", lambda *a: (real(*a)[0], []))
    with pytest.raises(DesignError) as excinfo:
        check_design(load(BF16, K_MT=256).ir)
    text = str(excinfo.value)
    assert "error [kernel layout]: kernel 'matmul_bf16_f32_64x64x64_4x8x4' reads 'a' " in text
    assert "but fifo 'a_0' delivers it as 64x8 blocks" in text
    assert "over its 16384-element buffer" in text


def test_staged_memtile_dims_are_checked_against_the_larger_buffer(
        in_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = gemm.staged_dims_a
    monkeypatch.setattr(gemm, "staged_dims_a",
                        lambda m, k, kr, r, s: ([(kr // s + 1, s)] + real(m, k, kr, r, s)[0][1:],
                                                real(m, k, kr, r, s)[1]))
    with pytest.raises(DesignError) as excinfo:
        check_design(load(BF16, K_MT=256).ir)
    assert "every address inside the 16384-element buffer, with every size as written" in str(
        excinfo.value)


def test_staging_errors_say_what_to_change(in_root: Path) -> None:
    with pytest.raises(DesignError) as excinfo:
        load(BF16, K_MT=96)
    assert ("K_MT=96, the K run each memtile element stages, is not a multiple of the core's "
            "k=64") in str(excinfo.value)  # word for word: test_lang_inputs
    with pytest.raises(DesignError) as excinfo:
        load(BF16, K_MT=192)
    assert "K=512 is not a multiple of the staged K run = 192" in str(excinfo.value)


RUNTIME_LINE = ("gemm_runtime(rt, a, b, c, A, B, C, tile=(m, k, n), herd=(COLS, ROWS))")
STAGED_LINE = ("staged_inputs(Tensor[m, k, bf16], Tensor[k, n, bf16], k_run=K_MT,\n"
               "                             herd=(COLS, ROWS), mmul=(r, s, t))")


@pytest.mark.parametrize("before, after, line, message, limit, found, fix", [
    ("tile=(m, k, n)", "tile=(m, k)", 58, "gemm_runtime's tile=(64, 64) gives 2 of the 3 sizes "
     "(m, k, n)", "a tuple of 3 positive ints, (m, k, n)", "(64, 64)",
     "write tile=(m, k, n), the core's tile"),
    ("herd=(COLS, ROWS))", "herd=(COLS,))", 58, "gemm_runtime's herd=(4,) gives 1 of the 2 "
     "sizes (cols, rows)", "a tuple of 2 positive ints, (cols, rows)", "(4,)",
     "write herd=(cols, rows), the herd's size"),
    ("rt, a, b", "rt, a[0], b", 58, "gemm_runtime's a is the fifo 'a_0'",
     "the channel of A's fifos, or the list staged_inputs returns: one fifo per herd row, 4 "
     "here", "the fifo 'a_0'", "pass the channel or list itself, as the cores index it: "
     "gemm_runtime(rt, a, b, c, A, B, C, ...)"),
    ("rt, a, b", "None, a, b", 58, "gemm_runtime is given None where the runtime sequence goes",
     "the rt of `with runtime() as rt:`, first", "None", "call it in the runtime sequence's "
     "block: `with runtime() as rt:` then gemm_runtime(rt, a, b, c, A, B, C, tile=..., "
     "herd=...)"),
    ("A: Tensor[M, K, bf16]", "A: Tensor[M * K, bf16]", 58, "gemm_runtime's A is host tensor "
     "'A' [262144], not a matrix M x K", "a 2-D host tensor, Tensor[M, K, bf16]",
     "host tensor 'A' [262144]", "declare it 2-D among the @design function's parameters: "
     "A: Tensor[M, K, bf16]"),
])
def test_gemm_runtime_refuses_arguments_it_cannot_take(
        design_file: Callable[..., Path], before: str, after: str, line: int, message: str,
        limit: str, found: str, fix: str) -> None:
    """tile=(m, k), herd=(COLS,), a 1-D A, a[0] where the list of fifos goes, None as the
    runtime: each was Python's ValueError, TypeError or AttributeError from unpacking them
    (a tester). Each is said at the call, in the house style."""
    text = BF16.read_text()
    assert text.count(RUNTIME_LINE) == 1 and text.count(before) == 1
    path = design_file(text.replace(before, after), "gemm.py")
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (f"gemm.py:{line}: error [gemm runtime]: {message}\n"
                            f"  limit: {limit}\n  found: {found}\n  fix: {fix}")


@pytest.mark.parametrize("before, after, message, limit, found, fix", [
    ("herd=(COLS, ROWS), mmul", "herd=(COLS,), mmul", "staged_inputs's herd=(4,) gives 1 of the "
     "2 sizes (cols, rows)", "a tuple of 2 positive ints, (cols, rows)", "(4,)",
     "write herd=(cols, rows), the herd's size"),
    ("mmul=(r, s, t)", "mmul=(r, s)", "staged_inputs's mmul=(4, 8) gives 2 of the 3 sizes "
     "(r, s, t)", "a tuple of 3 positive ints, (r, s, t)", "(4, 8)",
     "take mmul from the kernel (mm.ir.params r, s, t)"),
    ("staged_inputs(Tensor[m, k, bf16]", "staged_inputs(Tensor[m * k, bf16]",
     "staged_inputs's a_tile is Tensor[4096, bf16], not a matrix m x k",
     "a 2-D tile type, Tensor[m, k, bf16]", "Tensor[4096, bf16]",
     "pass a Tensor[m, k, bf16]"),
])
def test_staged_inputs_refuses_arguments_it_cannot_take(
        design_file: Callable[..., Path], before: str, after: str, message: str, limit: str,
        found: str, fix: str) -> None:
    """herd=(COLS,), mmul=(r, s) or a 1-D tile failed unpacking them (a tester)."""
    text = BF16.read_text()
    assert text.count(STAGED_LINE) == 1 and text.count(before) == 1
    path = design_file(text.replace(before, after), "gemm.py")
    with pytest.raises(DesignError) as e:
        load_design(path, {"K_MT": "128"})
    assert str(e.value) == (f"gemm.py:38: error [gemm inputs]: {message}\n"
                            f"  limit: {limit}\n  found: {found}\n  fix: {fix}")


FIX_BLOCKS = "give the tile's size and the kernel's blocks: the mmul's r, s, t (mm.ir.params)"


@pytest.mark.parametrize("before, after, line, message, limit, found", [
    ("block_dims(m, k, r, s)", "block_dims(m, k, 0, s)", 42,
     "block_dims(64, 64, 0, 8) has br=0", "positive ints: a rows x cols tile in br x bc blocks",
     "br=0"),
    ("block_dims(k, n, s, t)", "block_dims(k, n, s, -4)", 44,
     "block_dims(64, 64, 8, -4) has bc=-4",
     "positive ints: a rows x cols tile in br x bc blocks", "bc=-4"),
    ("block_dims(m, k, r, s)", "block_dims(m, k, 128, s)", 42,
     "block_dims(64, 64, 128, 8): blocks of 128 rows do not tile 64 rows",
     "br dividing rows: the tile is whole blocks", "rows % br = 64 % 128 = 64"),
    ("unblock_dims(m, n, r, t)", "unblock_dims(m, n, r, 24)", 46,
     "unblock_dims(64, 64, 4, 24): blocks of 24 cols do not tile 64 cols",
     "bc dividing cols: the tile is whole blocks", "cols % bc = 64 % 24 = 16"),
])
def test_block_dims_refuse_blocks_that_do_not_tile(
        design_file: Callable[..., Path], before: str, after: str, line: int, message: str,
        limit: str, found: str) -> None:
    """block_dims(m, k, 0, s) was a ZeroDivisionError; a negative or too large block gave dims
    refused later as a pattern the design never wrote (a tester)."""
    text = BF16.read_text()
    assert text.count(before) == 1
    path = design_file(text.replace(before, after), "gemm.py")
    with pytest.raises(DesignError) as e:
        load_design(path)
    assert str(e.value) == (f"gemm.py:{line}: error [block layout]: {message}\n"
                            f"  limit: {limit}\n  found: {found}\n  fix: {FIX_BLOCKS}")


# -- the kernels -----------------------------------------------------------------------------------

def test_narrow_kernels_name_their_output_and_shift() -> None:
    k = library.matmul(96, 56, 96, "bf16", "bf16")
    assert k.ir.symbol == "matmul_bf16_bf16_96x56x96_4x8x4"
    assert k.ir.entry == "matmul_blocked<bfloat16, bfloat16, 4, 8, 4, 96, 56, 96>"
    k = library.matmul(144, 72, 144, "i8", "i8", shift=9, device="npu2")
    assert k.ir.symbol == "matmul_i8_i8_144x72x144_8x8x8_shift9"
    assert k.ir.entry == "matmul_blocked<int8_t, int8_t, 8, 8, 8, 144, 72, 144, 9>"
    # the output type does not change the cost model (Taka et al.'s single-core calibration)
    assert k.ir.cycles == library.matmul(144, 72, 144, "i8", device="npu2").ir.cycles
    assert library.matmul(64, 64, 64).ir.entry == \
        "matmul_blocked<bfloat16, float, 4, 8, 4, 64, 64, 64>"


@pytest.mark.parametrize("args, message", [
    (("bf16", "i8"), "matmul bf16->i8 is not in the library"),
    (("i16", "i8"), "matmul i16->i8 is not in the library"),
    (("bf16", "i16"), "matmul bf16->i16 is not in the library"),
])
def test_matmul_output_types(args: tuple, message: str) -> None:
    with pytest.raises(DesignError) as excinfo:
        library.matmul(64, 64, 64, *args)
    assert message in str(excinfo.value)


@pytest.mark.parametrize("dout, shift", [("i32", 3), ("bf16", 1), ("i8", 24), ("i8", -1),
                                         ("i16", 16)])
def test_shift_is_for_a_narrow_integer_c_only(dout: str, shift: int) -> None:
    din = "bf16" if dout == "bf16" else "i8"
    with pytest.raises(DesignError) as excinfo:
        library.matmul(64, 64, 64, din, dout, shift=shift)
    assert f"has shift={shift}" in str(excinfo.value)
    assert "limit: 0..23 for an i8 C, 0..15 for an i16 C (C << shift must fit the 32-bit " \
        "accumulator); 0 otherwise" in str(excinfo.value)


@pytest.mark.parametrize("device", ["npu1", "npu2"])
@pytest.mark.parametrize("din, shift", [("i8", 0), ("i8", 7), ("i16", 0), ("i16", 12)])
def test_an_i16_c_is_mlir_aies_and_the_cpp_matches_its_reference(device: str, din: str,
                                                                  shift: int) -> None:
    """``aiedsl check designs/gemm_i8.py -D OUT=i16`` said "matmul i8->i16 is not in the
    library", while mlir-aie's AIE2 and AIE2P matmul offer i8_i16 and i16_i16 (the combos of
    aie_kernels/aie2/mm.cc and aie2p/mm.cc, with the shapes of the input type: 4x8x8 and 4x4x4
    on AIE2, 8x8x8 and 4x4x8 on AIE2P). Inputs over their whole range, C too: int16 products
    (up to 2^30) wrap the 32-bit accumulator's lanes within a call, in the C++ and the
    reference alike, and the shift, rounding and saturation are i8's, to int16."""
    from aiedsl.kernels.layout import unblock
    from aiedsl.targets import get_target

    target = get_target(device)
    r, s, t = target.mmul_shapes[din]
    assert (r, s, t) == {("npu1", "i8"): (4, 8, 8), ("npu1", "i16"): (4, 4, 4),
                         ("npu2", "i8"): (8, 8, 8), ("npu2", "i16"): (4, 4, 8)}[(device, din)]
    k = library.matmul(32, 64, 32, din, "i16", shift=shift, device=device)
    assert k.ir.symbol == f"matmul_{din}_i16_32x64x32_{r}x{s}x{t}_shift{shift}"
    assert k.ir.entry == (f"matmul_blocked<{'int8_t' if din == 'i8' else 'int16_t'}, int16_t, "
                          f"{r}, {s}, {t}, 32, 64, 32, {shift}>")
    # the input type's cost: its mmul at the core's MACs per cycle for it, whatever C is
    assert k.ir.cycles == library.matmul(32, 64, 32, din, device=device).ir.cycles
    info = np.iinfo(np.int8 if din == "i8" else np.int16)
    rng = np.random.default_rng(3)
    A = rng.integers(info.min, info.max + 1, (32, 64)).astype(info.dtype)
    B = rng.integers(info.min, info.max + 1, (64, 32)).astype(info.dtype)
    C = rng.integers(-2 ** 15, 2 ** 15, (32, 32)).astype(np.int16)
    a, b, c = block(A, r, s), block(B, s, t), block(C, r, t)
    ref = c.copy()
    k.run_reference(a, b, ref)
    cpp = c.copy()
    native(k.ir, kernel_text(None, k.ir), target.aie_arch)(a.copy(), b.copy(), cpp)
    assert np.array_equal(cpp, ref)
    lane = ((C.astype(np.int64) << shift) + A.astype(np.int64) @ B.astype(np.int64)).astype(
        np.int32)  # what a 32-bit accumulator lane holds
    want = library.srs(lane, shift, np.dtype(np.int16))
    assert np.array_equal(unblock(ref.reshape(-1), 32, 32, r, t), want)
    if din == "i16":  # these inputs do wrap the lanes
        exact = (C.astype(np.int64) << shift) + A.astype(np.int64) @ B.astype(np.int64)
        assert (exact != lane).any()


def test_the_int8_gemm_takes_an_i16_c(in_root: Path) -> None:
    """gemm_i8 -D OUT=i16: an int32 tile of sums narrowed once into the i16 C (with the C++ on
    the host too), or C narrowed at every K step (ACC=c); SHIFT defaults to put C at a
    quarter of int16's range for full-range inputs (4 at K=512)."""
    d = load(I8, OUT="i16", M=256, N=256)
    assert {k.symbol for k in d.ir.kernels} == {
        "zero_i32_4096", "matmul_i8_i32_64x64x64_4x8x8",
        "matmul_narrow_i8_i16_64x64_4x8x8_shift4"}
    result = simulate(d, kernels="native")
    assert result.passed, [c.line() for c in result.checks]
    A, B = (result.inputs[x].astype(np.int64) for x in "AB")
    got = result.outputs["C"]
    assert got.dtype == np.int16
    assert np.array_equal(got, library.srs(A @ B, 4, np.dtype(np.int16)))
    assert 6000 < got.std() < 10000
    per_call = load(I8, OUT="i16", M=256, N=256, ACC="c")
    assert any(k.symbol == "matmul_i8_i16_64x64x64_4x8x8_shift4" for k in per_call.ir.kernels)
    assert simulate(per_call, kernels="native").passed


def test_srs_rounds_ties_to_even_and_saturates() -> None:
    acc = np.array([5, 6, 7, 10, 14, -6, -10, -7, 4000, -4000, 2 ** 20], dtype=np.int64)
    assert library.srs(acc, 2, np.dtype(np.int8)).tolist() == [
        1, 2, 2, 2, 4, -2, -2, -2, 127, -128, 127]
    assert library.srs(acc, 0, np.dtype(np.int8)).tolist() == [
        5, 6, 7, 10, 14, -6, -10, -7, 127, -128, 127]


def test_the_i8_kernel_reference_keeps_c_scaled() -> None:
    """C in, C out, both scaled by 2^-shift: C' = sat(round((C * 2^shift + A B) / 2^shift))."""
    rng = np.random.default_rng(0)
    m = k = n = 16
    A = rng.integers(-100, 100, (m, k)).astype(np.int8)
    B = rng.integers(-100, 100, (k, n)).astype(np.int8)
    C = rng.integers(-50, 50, (m, n)).astype(np.int8)
    c = block(C, 4, 8).copy()
    library.matmul_ref(block(A, 4, 8), block(B, 8, 8), c, m=m, k=k, n=n, r=4, s=8, t=8,
                       shift=8)
    want = library.srs((C.astype(np.int64) << 8) + A.astype(np.int64) @ B.astype(np.int64),
                       8, np.dtype(np.int8))
    assert np.array_equal(c, block(want, 4, 8))


@pytest.mark.parametrize("path, device, defines", [
    (BF16, None, dict(OUT="bf16", m=96, k=56, n=96, M=384, K=112, N=384)),
    (BF16, "npu2", dict(COLS=8, OUT="bf16", m=112, k=48, n=96, M=448, K=96, N=768)),
    (I8, None, dict(m=112, k=112, n=112, M=448, K=112, N=448, SHIFT=9)),
    (I8, "npu2", dict(COLS=8, m=144, k=72, n=144, M=576, K=144, N=1152, SHIFT=9)),
])
def test_design_kernels_match_their_references_on_the_host(path: Path, device: str | None,
                                                           defines: dict, in_root: Path) -> None:
    """``aiedsl kernel test DESIGN -D ...`` at Taka et al.'s tiles."""
    for case in design_cases(load(path, device, **defines)):
        result = check_kernel(case)
        assert result.passed, result.lines


# -- Taka et al.'s settings: every design rule passes -----------------------------------------------

@pytest.mark.parametrize("name", sorted(TAKA))
def test_taka_settings_pass_every_check(name: str, in_root: Path) -> None:
    """L1 and memtile memory, BDs, locks, DMA patterns, the shim task queue, routing: all pass
    with Taka et al.'s tiles, bf16 or int8 C, single-buffered C and a staged K run."""
    path, device, defines = TAKA[name]
    placed, _ = check_design(load(path, device, **defines).ir)
    mm = next(k for k in placed.kernels if k.symbol.startswith("matmul"))
    dt = "bf16" if path == BF16 else "i8"
    assert mm.symbol.startswith(f"matmul_{dt}_{dt}_{defines['m']}x{defines['k']}x{defines['n']}")
    assert {f.name: f.elem.numel for f in placed.fifos if f.name in ("a_l3_0", "b_l3_0")} == {
        "a_l3_0": defines["m"] * defines["K_MT"], "b_l3_0": defines["K_MT"] * defines["n"]}


def _docstring_commands() -> list[tuple[str, str]]:
    """Every ``aiedsl <command> designs/...`` a shipped design's docstring shows (continued
    lines joined; a parenthesised aside dropped), as (file, command line)."""
    import ast

    out = []
    for path in sorted((Path(__file__).resolve().parents[1] / "designs").glob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        lines = doc.replace("\\\\\n", " ").replace("\\\n", " ").splitlines()
        for line in lines:
            line = line.strip().split("(", 1)[0]
            if line.startswith("aiedsl "):
                out.append((path.name, line))
    return out


@pytest.mark.parametrize(("name", "line"), _docstring_commands())
def test_a_designs_docstring_commands_pass_the_checks(name: str, line: str, in_root: Path) -> None:
    """``matmul_cascade``'s docstring showed -D K=384, which its cores' memory no longer holds."""
    import shlex

    from aiedsl.checks import check_design
    from aiedsl.loader import load_design

    words = shlex.split(line)
    assert words[2] == f"designs/{name}"
    defines, device = {}, None
    i = 3
    while i < len(words):
        if words[i] == "-D":
            key, _, value = words[i + 1].partition("=")
            defines[key] = value
        elif words[i] == "--device":
            device = words[i + 1]
        else:
            raise AssertionError(f"{name}: unexpected word {words[i]!r} in {line!r}")
        i += 2
    check_design(load_design(f"designs/{name}", defines, device).ir)


@pytest.mark.parametrize("design", ["gemm_bf16", "gemm_i8"])
def test_an_n_narrower_than_the_herd_says_what_does_not_divide(in_root: Path, design: str) -> None:
    """N=128 on four 64-column cores gave 'loop(0) needs a positive integer count' (a tester):
    the herd's passes over C were 0. They are at least 1, and gemm_runtime names the misfit."""
    with pytest.raises(DesignError) as e:
        load_design(f"designs/{design}.py", {"M": "128", "K": "128", "N": "128", "COLS": "4",
                                             "ROWS": "1"})
    assert e.value.rule == "gemm runtime"
    assert e.value.message.startswith("N=128 is not a multiple of n x cols = 64 x 4 = 256")


def test_mm_cc_says_what_the_cost_model_charges_for_a_step() -> None:
    """mm.cc said npu2's 4x8x8 bf16 step "loads 384 bytes, 6 cycles" (AIE2's 64 bytes a cycle)
    while the cost model charges 4 on npu2, whose loads are 128 bytes a cycle (a tester): the
    comment now gives the model's figures, and these are the model's."""
    from aiedsl.dtypes import bf16
    from aiedsl.kernels.matmul import matmul_step
    from aiedsl.targets import get_target

    text = " ".join(line.lstrip("/ ") for line in
                    (ROOT / "kernels_cpp" / "mm.cc").read_text().splitlines())
    assert ("So npu2's 4x8x8 bf16 step loads 384 bytes in 3 cycles and its 4 mmuls bound it: 4 "
            "cycles (at AIE2's load width those 384 bytes would take 6).") in text
    npu1, npu2 = get_target("npu1"), get_target("npu2")
    r, s, t = npu2.mmul_shapes["bf16"]
    assert (r, s, t) == (4, 8, 8) and 2 * (r * s + s * t) * 2 == 384
    assert (npu1.core_load_bytes_per_cycle, npu2.core_load_bytes_per_cycle) == (64, 128)
    assert npu2.macs_per_cycle["bf16_f32"] == r * s * t  # one mmul a cycle
    assert matmul_step(r, s, t, bf16, npu2.core_load_bytes_per_cycle,
                       npu2.macs_per_cycle["bf16_f32"]) == 4
    assert matmul_step(r, s, t, bf16, npu1.core_load_bytes_per_cycle) == 6
    k = library.matmul(64, 64, 64, "bf16", device="npu2")
    assert k.ir.cycles == (64 // 8) * (64 // 16) * (4 * (64 // 8) + 7) + 20 == 1268


def test_a_shift_with_an_i32_c_is_refused(in_root: Path) -> None:
    """``aiedsl check designs/gemm_i8.py -D OUT=i32 -D SHIFT=3`` passed while the design set the
    shift to 0 (a tester): a user asking for a scale got none, unsaid. It is refused at SHIFT's
    define; SHIFT=0, or none, still builds the exact i32 GEMM."""
    line = next(i + 1 for i, t in enumerate(I8.read_text().splitlines())
                if t.startswith('SHIFT = define("SHIFT"'))
    with pytest.raises(DesignError) as e:
        load(I8, OUT="i32", SHIFT=3)
    assert str(e.value) == (
        f"designs/gemm_i8.py:{line}: error [define]: SHIFT=3 with OUT=i32: an i32 C is not "
        "scaled\n"
        "  limit: 0 with OUT=i32, whose C holds the exact sums; SHIFT scales an i8 or i16 C\n"
        "  found: defines={'SHIFT': '3'}\n"  # from Python; the command line's reads -D
        "  fix: leave 'SHIFT' out of defines= with OUT=i32, or give defines={'OUT': 'i8'} (or "
        "i16) for C = sat(round(A @ B / 2^3))")
    cli = subprocess.run([sys.executable, "-m", "aiedsl", "check", str(I8), "-D", "OUT=i32",
                          "-D", "SHIFT=3"], capture_output=True, text=True)
    assert cli.returncode == 2 and "  found: -D SHIFT=3\n" in cli.stderr, cli.stderr
    assert "  fix: leave -D SHIFT out with OUT=i32, or give -D OUT=i8 (or i16)" in cli.stderr
    for defines in (dict(OUT="i32"), dict(OUT="i32", SHIFT=0)):
        d = load(I8, **defines, M=256, N=256)
        assert [k.symbol for k in d.ir.kernels if k.symbol.startswith("matmul")] == [
            "matmul_i8_i32_64x64x64_4x8x8"]
        assert simulate(d).passed
