"""Where aiedsl's host AIE API header follows the AIE API's algorithms rather than exact math:
inv / invsqrt (AIE2's Newton step, AIE2P's per-lane instruction), upshift narrowed by the
saturation mode, reduce_add in the API's order, exp2 / tanh (bf16 results, AIE2P only),
to_fixed of bf16 lanes, what `aiedsl kernel profile` counts for inv / invsqrt; each against a
numpy model of the API's steps (aie_api_models.py). And what a host build that fails says of a
function the header lacks in another template of the file, of a form of an AIE API function it
lacks and of mlir-aie's <vec_math.h>."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from aie_api_models import (BF16, F, fold_sum, inv_bf16, inv_f32, invsqrt_bf16, invsqrt_f32,
                            rows_sum_bf16)
from aiedsl.kernels.host import HOST_INCLUDE

ROOT = Path(__file__).resolve().parents[1]
HEADER = HOST_INCLUDE / "aie_api" / "aie.hpp"


def _compile(tmp_path: Path, program: str, arch: int | None = None,
             defines: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """g++ on ``program`` against the host header, for ``__AIE_ARCH__`` ``arch`` (None: no
    device), as ``tmp_path/t``."""
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ on PATH: the host AIE API header cannot be compiled")
    src = tmp_path / "t.cc"
    src.write_text(program)
    flags = ["-std=c++20", "-O2", *defines, *([f"-D__AIE_ARCH__={arch}"] if arch else [])]
    return subprocess.run([cxx, *flags, f"-I{HOST_INCLUDE}", str(src), "-o",
                           str(tmp_path / "t")], capture_output=True, text=True,
                          env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})


def _run(tmp_path: Path, program: str, arch: int | None = None, stdin: str = "",
         defines: tuple[str, ...] = ()) -> dict[str, list[int]]:
    """``program`` built and run: each line ``name: x y ...`` of hexadecimal words it prints."""
    r = _compile(tmp_path, program, arch, defines)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(tmp_path / "t")], input=stdin, capture_output=True, text=True,
                         check=True).stdout
    return {name: [int(w, 16) for w in rest.split()]
            for name, rest in (line.split(":", 1) for line in out.splitlines())}


def _same(got: list[int], want: np.ndarray) -> np.ndarray:
    """Lane by lane: the same bits, or both NaN."""
    bits = np.asarray(got, dtype=np.uint32 if want.dtype == F else np.uint16)
    g = bits.view(F) if want.dtype == F else bits.view(BF16).astype(F)
    w = want.astype(F)
    return (bits == want.view(bits.dtype)) | (np.isnan(g) & np.isnan(w))


# -- inv and invsqrt --------------------------------------------------------------------------

ELEMENTARY = r'''
#include <aie_api/aie.hpp>
#include <cstdio>
#include <cstring>
#include <vector>

int main() {
  unsigned n = 0;
  if (std::scanf("%u", &n) != 1) return 1;
  std::vector<uint32_t> xs(n);
  for (auto &x : xs) std::scanf("%x", &x);
  const aie::rounding_mode modes[] = {aie::rounding_mode::floor, aie::rounding_mode::conv_even};
  for (int m = 0; m < 2; ++m) {
    aie::set_rounding(modes[m]);
    for (int isqrt = 0; isqrt < 2; ++isqrt) {
      const char *fn = isqrt ? "invsqrt" : "inv";
      std::printf("%s_f32_%d:", fn, m);
      for (unsigned b = 0; b < n; b += 16) {
        aie::vector<float, 16> v;
        std::memcpy(v.v.data(), &xs[b], 64);
        const auto r = isqrt ? aie::invsqrt(v) : aie::inv(v);
        for (unsigned i = 0; i < 16; ++i) {
          uint32_t u;
          std::memcpy(&u, &r.v[i], 4);
          std::printf(" %x", u);
        }
      }
      std::printf("\n%s_f32_scalar_%d:", fn, m);
      for (unsigned i = 0; i < n; ++i) {
        float x, r;
        std::memcpy(&x, &xs[i], 4);
        r = isqrt ? aie::invsqrt(x) : aie::inv(x);
        uint32_t u;
        std::memcpy(&u, &r, 4);
        std::printf(" %x", u);
      }
      std::printf("\n%s_bf16_%d:", fn, m);  // every bf16 value, 32 lanes at a time
      for (unsigned b = 0; b < 65536; b += 32) {
        aie::vector<bfloat16, 32> v;
        for (unsigned i = 0; i < 32; ++i) v.v[i].bits = uint16_t(b + i);
        const auto r = isqrt ? aie::invsqrt(v) : aie::inv(v);
        for (unsigned i = 0; i < 32; ++i) std::printf(" %x", r.v[i].bits);
      }
      std::printf("\n%s_bf16_scalar_%d:", fn, m);
      for (unsigned b = 0; b < 65536; ++b) {
        const bfloat16 r = isqrt ? aie::invsqrt(bfloat16::from_bits(uint16_t(b)))
                                 : aie::inv(bfloat16::from_bits(uint16_t(b)));
        std::printf(" %x", r.bits);
      }
      std::printf("\n");
    }
  }
  return 0;
}
'''


def _floats() -> np.ndarray:
    """Floats over the whole range, both signs, the special values, and many in [1, 4)."""
    rng = np.random.default_rng(7)
    wide = (rng.uniform(-1, 1, 2000) * 2.0 ** rng.integers(-130, 128, 2000)).astype(F)
    special = F([0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 1, 2, 3, 4, 0.25, 1e38,
                 3e38, -3e38, 5e37])
    xs = np.concatenate([wide, special, rng.uniform(1, 4, 2032).astype(F)])
    assert xs.size % 16 == 0
    return xs


@pytest.fixture(scope="module")
def elementary(tmp_path_factory: pytest.TempPathFactory) -> dict[int | None, dict[str, list[int]]]:
    """The program's lines for no device, AIE2 and AIE2P."""
    xs = _floats()
    stdin = f"{xs.size}\n" + " ".join(f"{u:x}" for u in xs.view(np.uint32))
    return {arch: _run(tmp_path_factory.mktemp(f"arch{arch}"), ELEMENTARY, arch, stdin)
            for arch in (None, 20, 21)}


@pytest.mark.parametrize("arch", [None, 20])
def test_aie2_float_inv_and_invsqrt_are_the_api_s_seed_and_newton_step(
        elementary: dict[int | None, dict[str, list[int]]], arch: int | None) -> None:
    """They were 1/x and 1/sqrt(x) exactly (a tester: the core's invsqrt is up to ~6.5e-4
    off); now the steps of detail/aie2/elementary.hpp, bit for bit as the numpy model takes
    them, the seed's halving rounded by the rounding mode."""
    lines, xs = elementary[arch], _floats()
    for m, rounding in enumerate(["floor", "conv_even"]):
        assert _same(lines[f"inv_f32_{m}"], inv_f32(xs, rounding)).all()
        assert _same(lines[f"invsqrt_f32_{m}"], invsqrt_f32(xs, rounding)).all()
    # the numbers a kernel sees: about 6.5e-4 off for invsqrt on [1, 4), within 2 ulps for inv
    got = np.asarray(lines["invsqrt_f32_0"], np.uint32).view(F)[2016:]
    exact = 1 / np.sqrt(xs[2016:].astype(np.float64))
    assert 6.0e-4 < np.max(np.abs(got - exact) / exact) < 6.6e-4
    inv = np.asarray(lines["inv_f32_0"], np.uint32).view(F)[2016:]
    assert np.max(np.abs(inv.view(np.int32) - (1 / xs[2016:].astype(np.float64)).astype(F)
                         .view(np.int32))) == 2
    # the rounding mode changes the seed of odd bits, and so the last place of some results
    assert lines["invsqrt_f32_0"] != lines["invsqrt_f32_1"]
    # a float scalar is the API's generic T(1) / a and T(1) / std::sqrt(a)
    with np.errstate(all="ignore"):
        assert _same(lines["inv_f32_scalar_0"], (F(1) / xs).astype(F)).all()
        assert _same(lines["invsqrt_f32_scalar_0"], (F(1) / np.sqrt(xs)).astype(F)).all()


@pytest.mark.parametrize("arch", [None, 20])
def test_aie2_bf16_inv_and_invsqrt_of_every_bf16_value(
        elementary: dict[int | None, dict[str, list[int]]], arch: int | None) -> None:
    """All 65,536 bf16 values, as vectors and as scalars (the API's scalar form runs the
    vector steps), against the model of the bf16 steps."""
    lines = elementary[arch]
    every = np.arange(65536, dtype=np.uint16).view(BF16)
    for m, rounding in enumerate(["floor", "conv_even"]):
        for form in ("", "_scalar"):
            assert _same(lines[f"inv_bf16{form}_{m}"], inv_bf16(every)).all()
            assert _same(lines[f"invsqrt_bf16{form}_{m}"], invsqrt_bf16(every, rounding)).all()
    # 1/3 is 0.33203125, one bf16 ulp below the nearest, 0.333984375
    assert lines["inv_bf16_0"][0x4040] == 0x3EAA


def test_aie2p_inv_and_invsqrt_are_each_lane_s_instruction(
        elementary: dict[int | None, dict[str, list[int]]]) -> None:
    """AIE2P takes every lane through the scalar unit's inv / invsqrt (accuracy unknown): 1/x
    and 1/sqrt(x) in float here, bf16 rounded to nearest even."""
    lines, xs = elementary[21], _floats()
    every = np.arange(65536, dtype=np.uint16).view(BF16)
    with np.errstate(all="ignore"):
        assert _same(lines["inv_f32_0"], (F(1) / xs).astype(F)).all()
        assert _same(lines["invsqrt_f32_0"], (F(1) / np.sqrt(xs)).astype(F)).all()
        f = every.astype(F)
        assert _same(lines["inv_bf16_0"], (F(1) / f).astype(BF16)).all()
        assert _same(lines["invsqrt_bf16_scalar_0"], (F(1) / np.sqrt(f)).astype(BF16)).all()


# -- upshift ----------------------------------------------------------------------------------

UPSHIFT = r'''
#include <aie_api/aie.hpp>
#include <cstdio>

template <typename T, unsigned N> void show(const char *name, const aie::vector<T, N> &v) {
  std::printf("%s:", name);
  for (unsigned i = 0; i < N; ++i) std::printf(" %llx", (unsigned long long)(int64_t)v.v[i]);
  std::printf("\n");
}
template <typename T, unsigned N> void each(const char *type, const aie::vector<T, N> &v) {
  const unsigned shifts[] = {0, 3, 10, 20};
  for (unsigned s : shifts) {
    char name[64];
    std::snprintf(name, sizeof name, "%s_%u", type, s);
    show(name, aie::upshift(v, s));
  }
}

int main() {
  aie::set_saturation(aie::saturation_mode::MODE);
  each("i8", aie::vector<int8_t, 16>(0, 1, -1, 3, -3, 15, -16, 16, -17, 100, -100, 127, -128));
  each("i16", aie::vector<int16_t, 16>(0, 1, -1, 31, 32, -32, -33, 100, -100, 1000, -1000,
                                        32767, -32768, 2047, -2048));
  each("u16", aie::vector<uint16_t, 16>(0, 1, 31, 32, 100, 1000, 2047, 65535));
  each("i32", aie::vector<int32_t, 8>(0, 1, -1, 2047, -2048, 2048, 2147483647, -2147483647 - 1));
  return 0;
}
'''

UPSHIFT_INPUTS = {
    "i8": (np.int8, [0, 1, -1, 3, -3, 15, -16, 16, -17, 100, -100, 127, -128, 0, 0, 0]),
    "i16": (np.int16, [0, 1, -1, 31, 32, -32, -33, 100, -100, 1000, -1000, 32767, -32768, 2047,
                       -2048, 0]),
    "u16": (np.uint16, [0, 1, 31, 32, 100, 1000, 2047, 65535] + [0] * 8),
    "i32": (np.int32, [0, 1, -1, 2047, -2048, 2048, 2**31 - 1, -2**31]),
}


@pytest.mark.parametrize("mode", ["none", "saturate", "symmetric"])
def test_upshift_is_narrowed_as_to_vector_narrows(tmp_path: Path, mode: str) -> None:
    """upshift wrapped whatever the mode (a tester: int16 << 10 under saturate, 753 of 1,024
    lanes wrong); the AIE API upshifts into an accumulator and takes to_vector<T>() of it
    (detail/aie2/shift.hpp), so the saturation mode narrows it: x * 2^s kept to its low bits,
    clamped to T's range, or to +-max."""
    lines = _run(tmp_path, UPSHIFT.replace("MODE", mode))
    for type_name, (dt, xs) in UPSHIFT_INPUTS.items():
        info = np.iinfo(dt)
        lo = -info.max if mode == "symmetric" and info.min < 0 else info.min
        for s in (0, 3, 10, 20):
            exact = [x * 2 ** s for x in xs]
            if mode == "none":
                want = [int(np.array(e & (2 ** info.bits - 1), np.uint64).astype(dt))
                        for e in exact]
            else:
                want = [min(max(e, lo), info.max) for e in exact]
            got = [int(np.array(g, np.uint64).astype(np.int64)) for g in lines[f"{type_name}_{s}"]]
            assert got == want, (type_name, s)
    if mode == "saturate":  # the tester's lanes: 100 << 10 is 32767, not the low bits of 102400
        assert np.asarray(lines["i16_10"][7], np.uint64).astype(np.int64) == 32767


# -- reduce_add --------------------------------------------------------------------------------

REDUCE = r'''
#include <aie_api/aie.hpp>
#include <cstdio>
#include <cstring>
#include <vector>

template <typename T, unsigned N> void sums(const char *name, const std::vector<uint32_t> &xs) {
  std::printf("%s:", name);
  for (unsigned b = 0; b + N <= xs.size(); b += N) {
    aie::vector<T, N> v;
    for (unsigned i = 0; i < N; ++i) {
      float f;
      std::memcpy(&f, &xs[b + i], 4);
      v.v[i] = T(f);
    }
    const float s = float(aie::reduce_add(v));
    uint32_t u;
    std::memcpy(&u, &s, 4);
    std::printf(" %x", u);
  }
  std::printf("\n");
}

int main() {
  aie::set_rounding(aie::rounding_mode::conv_even);
  unsigned n = 0;
  if (std::scanf("%u", &n) != 1) return 1;
  std::vector<uint32_t> xs(n);
  for (auto &x : xs) std::scanf("%x", &x);
  sums<float, 4>("f32_4", xs);
  sums<float, 8>("f32_8", xs);
  sums<float, 16>("f32_16", xs);
  sums<float, 32>("f32_32", xs);
  sums<float, 64>("f32_64", xs);
  sums<bfloat16, 8>("bf16_8", xs);
  sums<bfloat16, 16>("bf16_16", xs);
  sums<bfloat16, 32>("bf16_32", xs);
  sums<bfloat16, 64>("bf16_64", xs);
  return 0;
}
'''


def _addends() -> np.ndarray:
    """The tester's 16 lanes (2^24, 1, -2^24, 1 in lanes 0, 1, 8, 9; a multiple of 64 lanes in
    all), then values of many magnitudes, whose sum's rounding depends on the order."""
    rng = np.random.default_rng(3)
    first = np.zeros(64, F)
    first[[0, 1, 8, 9]] = [2.0 ** 24, 1, -2.0 ** 24, 1]
    spread = (rng.choice([-1, 1], 64 * 40) * 2.0 ** rng.integers(-8, 26, 64 * 40)).astype(F)
    return np.concatenate([first, spread]).astype(F)


@pytest.mark.parametrize("arch", [None, 20, 21])
def test_reduce_add_adds_in_the_api_s_order(tmp_path: Path, arch: int | None) -> None:
    """A float sum was taken in lane order; the AIE API folds the accumulator in halves (AIE2's
    add_reduce_bits_impl<32, float>, AIE2P's float_common), and AIE2P's bf16 sum too, while
    AIE2's bf16 sum goes by rows of 8 through the multiplier: each against its model."""
    xs = _addends()
    lines = _run(tmp_path, REDUCE, arch, f"{xs.size}\n" + " ".join(
        f"{u:x}" for u in xs.view(np.uint32)))
    for n in (4, 8, 16, 32, 64):
        want = np.array([fold_sum(xs[b:b + n]) for b in range(0, xs.size - n + 1, n)], F)
        assert _same(lines[f"f32_{n}"], want).all(), n
    # the tester's lanes sum to 2 folded (2^24 - 2^24, then 1 + 1); in order it was 1
    assert np.asarray(lines["f32_16"][0], np.uint32).view(F) == 2.0
    assert F(F(F(2.0 ** 24) + F(1)) - F(2.0 ** 24)) + F(1) == 1.0
    # order matters for these sums: the fold and the lane order disagree on some
    ordered = [F(np.cumsum(xs[b:b + 16], dtype=F)[-1]) for b in range(0, xs.size, 16)]
    assert any(np.asarray(lines["f32_16"], np.uint32).view(F) != ordered)
    model = rows_sum_bf16 if arch != 21 else fold_sum
    bf16 = xs.astype(BF16)
    for n in (8, 16, 32, 64):
        want = np.array([model(bf16[b:b + n]) for b in range(0, xs.size - n + 1, n)], F)
        assert _same(lines[f"bf16_{n}"], want.astype(BF16).astype(F)).all(), n


def test_bf16_reduce_add_of_aie2_and_aie2p_differ_where_the_order_does(tmp_path: Path) -> None:
    """32 bf16 lanes with 2^24 and 1 in lanes 0 and 1, -2^24 and 1 in lanes 16 and 17: AIE2's
    rows (lanes 0-7: 2^24 + 1 rounds to 2^24; lanes 16-23: -2^24 + 1) give 1, AIE2P's fold
    (lane 0 + lane 16, lane 1 + lane 17) gives 2."""
    xs = np.zeros(64, F)
    xs[[0, 1, 16, 17]] = [2.0 ** 24, 1, -2.0 ** 24, 1]
    stdin = f"{xs.size}\n" + " ".join(f"{u:x}" for u in xs.view(np.uint32))
    got = {arch: np.asarray(_run(tmp_path, REDUCE, arch, stdin)["bf16_32"][0], np.uint32)
           .view(F) for arch in (20, 21)}
    assert (got[20], got[21]) == (1.0, 2.0)
    assert (rows_sum_bf16(xs[:32]), fold_sum(xs[:32].astype(BF16).astype(F))) == (1.0, 2.0)


# -- exp2 and tanh -----------------------------------------------------------------------------

NLF = r'''
#include <aie_api/aie.hpp>
#include <cstdio>

int main() {
  const aie::vector<float, 16> v(0.0f, 1.0f, -1.0f, 0.5f, 10.0f, -3.0f, 2.0f, 0.25f);
  const auto e = aie::exp2(v);  // the AIE API's default: bfloat16 lanes
  const auto t = aie::tanh(v);
  static_assert(std::is_same_v<decltype(e), const aie::vector<bfloat16, 16>>);
  static_assert(std::is_same_v<decltype(t), const aie::vector<bfloat16, 16>>);
  std::printf("exp2:");
  for (unsigned i = 0; i < 8; ++i) std::printf(" %x", e.v[i].bits);
  std::printf("\ntanh:");
  for (unsigned i = 0; i < 8; ++i) std::printf(" %x", t.v[i].bits);
  std::printf("\n");
  return 0;
}
'''


def test_exp2_and_tanh_return_bf16_lanes_on_aie2p(tmp_path: Path) -> None:
    """The API's exp2 and tanh are template <typename TR = bfloat16> of a vector of float: the
    host returned the input's type. Their values: std::exp2 / std::tanh rounded to bf16 (how
    the AIE2P instruction approximates is not known)."""
    lines = _run(tmp_path, NLF, 21)
    xs = F([0, 1, -1, 0.5, 10, -3, 2, 0.25])
    assert lines["exp2"] == list(np.exp2(xs).astype(BF16).view(np.uint16))
    assert lines["tanh"] == list(np.tanh(xs.astype(np.float64)).astype(F).astype(BF16)
                                 .view(np.uint16))
    assert np.asarray(lines["exp2"], np.uint16).view(BF16)[3] == BF16(1.4140625)  # sqrt(2)


@pytest.mark.parametrize("call,arch,words", [
    ("aie::exp2(v)", 20, "aie::exp2: the AIE API has no aie::exp2 on AIE2 (npu1): its aie.hpp "
     "declares it for XDNA2 and AIE-MLv2 only (requires arch::is(XDNA2, AIE_MLv2)), and AIE2 "
     "has no instruction for it; use an npu2 device for the design, or compute 2^x without "
     "aie::exp2 on npu1"),
    ("aie::tanh(v)", 20, "aie::tanh: the AIE API has no aie::tanh on AIE2 (npu1)"),
    ("aie::exp2<float>(v)", 21, "aie::exp2: on AIE2P (npu2) the AIE API's aie::exp2 returns "
     "bfloat16 lanes only (TR = bfloat16, its default: its other TR do not compile or reach no "
     "implementation); use aie::exp2(v) or aie::exp2<bfloat16>(v) and widen the result if "
     "float lanes are needed"),
    ("aie::tanh<float>(v)", 21, "aie::tanh: on AIE2P (npu2) the AIE API's aie::tanh returns "
     "bfloat16 lanes only"),
    ("aie::exp2(aie::broadcast<bfloat16, 16>(bfloat16(v[0])))", 21,
     "aie::exp2: the AIE API's aie::exp2 takes an aie::vector<float, N> (aie.hpp: "
     "exp2(const vector<float, Elems> &)), not this argument; use a vector of float lanes "
     "(bfloat16 lanes widen exactly through aie::accum<accfloat, N>(v).to_vector<float>())"),
    ("aie::exp2(aie::accum<accfloat, 16>(v))", None, "aie::exp2: the AIE API's aie::exp2 takes "
     "an aie::vector<float, N>"),
])
def test_exp2_and_tanh_are_refused_where_the_api_has_no_such_call(
        tmp_path: Path, call: str, arch: int | None, words: str) -> None:
    """The API declares them for XDNA2 and AIE-MLv2 only, of a vector of float, exp2 on XDNA2
    for TR = bfloat16 only (and tanh has no implementation for another TR): the host took all
    of these. A static assertion says which rule (aiedsl turns it into a DesignError)."""
    program = ("#include <aie_api/aie.hpp>\nvoid f(const aie::vector<float, 16> &v, float *o) "
               f"{{\n  auto r = {call};\n  o[0] = float(r[0]);\n}}\n")
    r = _compile(tmp_path, program.replace("\n}", "\n}\nint main() { return 0; }"), arch)
    assert r.returncode != 0
    assert f"static assertion failed: {words}" in r.stderr


def test_a_scalar_exp2_is_the_c_library_s(tmp_path: Path) -> None:
    """aie::exp2 and aie::tanh take vectors only: `exp2(x)` of a float under `using namespace
    aie` is the C library's, as with the AIE API."""
    program = ("#include <aie_api/aie.hpp>\n#include <cstdio>\nusing namespace aie;\n"
               "int main() { float x = 3.0f; std::printf(\"e: %x\\n\", "
               "unsigned(exp2(x) == 8.0f)); return 0; }\n")
    assert _run(tmp_path, program, 21)["e"] == [1]


# -- to_fixed of bf16 ---------------------------------------------------------------------------

TO_FIXED = r'''
#include <aie_api/aie.hpp>
#include <cstdio>

int main() {
  aie::set_rounding(aie::rounding_mode::floor);  // not what to_fixed rounds by
  aie::vector<bfloat16, 16> v;
  const float xs[16] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.25f, -3.75f, 100.0f, -100.0f,
                        1e9f, -1e9f, 0.0f, 7.0f, 255.0f, -0.125f};
  for (unsigned i = 0; i < 16; ++i) v.v[i] = bfloat16::round_even(xs[i]);
  const int shifts[] = {0, 2, -1};
  for (int s : shifts) {
    const auto r = aie::to_fixed<int16_t>(v, s);
    std::printf("shift%d:", s + 1);
    for (unsigned i = 0; i < 16; ++i) std::printf(" %x", unsigned(uint16_t(r.v[i])));
    std::printf("\n");
  }
  return 0;
}
'''


def test_to_fixed_takes_bf16_lanes(tmp_path: Path) -> None:
    """The AIE API's to_fixed<TR> of a vector of bfloat16 (aie.hpp, the Float2Fix steps on the
    lanes moved to accfloat): to nearest even, saturated; the host had only float lanes."""
    lines = _run(tmp_path, TO_FIXED, 20)
    xs = F([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.25, -3.75, 100, -100, 1e9, -1e9, 0, 7, 255,
            -0.125]).astype(BF16).astype(np.float64)
    for s in (0, 2, -1):
        want = np.clip(np.round(xs * 2.0 ** s), -32768, 32767).astype(np.int16)
        assert lines[f"shift{s + 1}"] == list(want.view(np.uint16)), s


# -- what the profile counts -----------------------------------------------------------------

COUNTS = r'''
#include <aie_api/aie.hpp>
#include <cstdio>

template <typename F> void count(const char *name, F f) {
  uint64_t c[aiedsl_host::UNITS];
  aiedsl_profile(c, 1);
  f();
  aiedsl_profile(c, 1);
  std::printf("%s: %llx %llx %llx\n", name, (unsigned long long)c[0], (unsigned long long)c[1],
              (unsigned long long)c[5]);
}

int main() {
  const aie::vector<float, 32> f = aie::broadcast<float, 32>(2.0f);
  const aie::vector<bfloat16, 32> b = aie::broadcast<bfloat16, 32>(2.0f);
  count("inv_f32", [&] { aie::inv(f); });
  count("invsqrt_f32", [&] { aie::invsqrt(f); });
  count("inv_bf16", [&] { aie::inv(b); });
  count("invsqrt_bf16", [&] { aie::invsqrt(b); });
  return 0;
}
'''


@pytest.mark.parametrize("arch,defines,want", [
    # 32 lanes: two steps of 16; 5 (inv) and 4 (invsqrt) element multiplies each, of 13 bf16
    # multiplies for a float one (llvm-aie aiev2_core.h, accuracy safe), of one for bf16
    (20, (), {"inv_f32": [130, 2, 160], "invsqrt_f32": [104, 2, 128], "inv_bf16": [10, 2, 160],
              "invsqrt_bf16": [8, 2, 128]}),
    (20, ("-DAIE2_FP32_EMULATION_ACCURACY_LOW",), {"inv_f32": [50, 2, 160],
                                                   "invsqrt_f32": [40, 2, 128]}),
    (20, ("-DAIE2_FP32_EMULATION_ACCURACY_FAST",), {"inv_f32": [100, 2, 160]}),
    # AIE2P: lane by lane on the scalar unit, which the profile does not count
    (21, (), {"inv_f32": [0, 1, 0], "invsqrt_bf16": [0, 1, 0]}),
])
def test_inv_and_invsqrt_count_their_multiplies(tmp_path: Path, arch: int,
                                                defines: tuple[str, ...],
                                                want: dict[str, list[int]]) -> None:
    """They counted one vector ALU op whatever they issue: vector MAC issues, vector ALU ops
    and MACs per call now."""
    lines = _run(tmp_path, COUNTS, arch, defines=defines)
    assert {k: lines[k] for k in want} == want


# -- messages of a host build that fails ---------------------------------------------------------

DESIGN = '''
import numpy as np
from aiedsl import Tensor, design, fifo, herd, runtime, {tin}, {tout}
from aiedsl.kernels import buffer, declare

def ref(src, dst):
    dst[...] = 0

k = declare("{symbol}", source="{source}", entry="{entry}",
            args=[buffer("src", Tensor[64, {tin}]), buffer("dst", Tensor[64, {tout}], "out")],
            reference=ref, cycles=100, cost="-")

@design(device="{device}")
def d(X: Tensor[64, {tin}], Y: Tensor[64, {tout}]):
    a = fifo(Tensor[64, {tin}], name="a")
    b = fifo(Tensor[64, {tout}], name="b")

    @herd()
    def core():
        with a.consume() as s, b.produce() as t:
            k(s, t)

    with runtime() as rt:
        rt.fill(a, X)
        rt.drain(b, Y)
'''


def _error(tmp_path: Path, cc: str, source: str = "misc.cc", **fields: str) -> tuple[str, str]:
    """``aiedsl kernel test`` of a design calling one kernel of ``cc``: its error's first line
    and its fix line."""
    values = {"tin": "f32", "tout": "f32", "symbol": "rsum_64", "entry": "rsum<64>",
              "device": "npu1_1col", "source": source, **fields}
    (tmp_path / "d.py").write_text(DESIGN.format(**values).lstrip())
    (tmp_path / source).write_text(cc)
    r = subprocess.run([sys.executable, "-m", "aiedsl.cli", "kernel", "test", "d.py"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300,
                       env={"COLUMNS": "300", "PATH": "/usr/bin:/bin", "HOME": str(Path.home())})
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.splitlines()
    return lines[0], next(ln for ln in lines if ln.startswith("  fix: "))


MISC = '''#include <aie_api/aie.hpp>
template <unsigned N> void rsum(const float *in, float *out) {
  aie::vector<float, 16> v = aie::load_v<16>(in);
  out[0] = aie::reduce_add(v);
  for (unsigned i = 1; i < N; ++i) out[i] = in[i];
}
template <unsigned N> void sm(const int16_t *in, int16_t *out) {
  for (unsigned i = 0; i < N; i += 16) {
    aie::vector<int16_t, 32> d = aie::load_v<32>(in);
    aie::vector<int16_t, 16> c = aie::load_v<16>(in);
    auto acc = aie::sliding_mul<16, 8>(c, 0, d, 0);
    aie::store_v(out + i, acc.template to_vector<int16_t>(0));
  }
}
'''


def test_a_name_the_header_lacks_in_another_function_of_the_file_is_said_to_be_there(
        tmp_path: Path) -> None:
    """A file with two templates, one calling aie::sliding_mul: testing the other kernel said
    "rsum_64 uses aie::sliding_mul". The whole file is compiled for it, so it fails, but the
    name is in sm."""
    first, fix = _error(tmp_path, MISC)
    assert first == (
        "d.py:8: error [host kernel build]: misc.cc does not compile on the host, so rsum_64 "
        "cannot be tested there: its function sm uses aie::sliding_mul, which aiedsl's host AIE "
        "API header does not cover")
    assert fix == (
        f"  fix: write it with the AIE API names the host header covers (listed at the top of "
        f"{HEADER}), or test the kernel on an NPU (aiedsl run DESIGN --target npu); or put rsum, "
        "which rsum_64 calls, in a file without sm (the whole file is compiled for each kernel "
        "declared from it)")


def test_a_form_of_an_api_function_the_header_lacks_is_the_header_s_gap(tmp_path: Path
                                                                         ) -> None:
    """aie::to_fixed of a float scalar is the AIE API's (aie.hpp: to_fixed(float a, int
    shift)); the header has vector forms only. It was "does not compile on the host ... fix:
    fix the C++"."""
    cc = ('#include <aie_api/aie.hpp>\n'
          'template <unsigned N> void tf(const float *in, int16_t *out) {\n'
          '  for (unsigned i = 0; i < N; ++i) out[i] = aie::to_fixed<int16_t>(in[i], 0);\n'
          '}\n')
    first, fix = _error(tmp_path, cc, "tf.cc", symbol="tf_64", entry="tf<64>", tout="i16")
    assert first == (
        "d.py:8: error [host kernel build]: tf_64 uses aie::to_fixed<int16_t>(const float&, "
        "int), a call that no form of aie::to_fixed in aiedsl's host AIE API header takes (the "
        "AIE API may have one it lacks), so it cannot be tested on the host")
    assert fix == (
        "  fix: if Peano compiles the call, the gap is the host header's, not the C++'s: check "
        "the kernel on an NPU (aiedsl run DESIGN --target npu), or the design with its numpy "
        "references in the simulator (aiedsl sim DESIGN: --kernels reference is the default); "
        "if not, pass aie::to_fixed arguments of a form the AIE API has")


def _runtime_error(name: str) -> str:
    """The first line ``aiedsl kernel test`` gives rsum_64 of rms.cc including <name>."""
    return (
        f"d.py:8: error [host kernel build]: rsum_64 includes <{name}>, a file of mlir-aie's "
        f"runtime library, not of the AIE API: an mlir-aie install has it as "
        f"aie_runtime_lib/AIE2/{name} and aie_runtime_lib/AIE2P/{name}. aiedsl's Peano "
        "compile (build.sh, --compile) adds the folder of the kernel's architecture to its "
        "include path, as IRON's does, so the kernel compiles for the NPU as it is; aiedsl's "
        "host build has no mlir-aie install, so `aiedsl kernel test`, `kernel profile` and "
        "`sim --kernels native` cannot run this kernel's C++")


def _runtime_fix(name: str) -> str:
    """The fix line that goes with :func:`_runtime_error`."""
    return (
        "  fix: test the design with the kernel's numpy reference in the simulator (aiedsl sim "
        "DESIGN: --kernels reference is the default) and on an NPU (aiedsl run DESIGN --target "
        f"npu); to test the C++ on the host too, define what the kernel uses from <{name}> in "
        "rms.cc itself (copied from that file of your mlir-aie install, or written with the "
        f"AIE API names the host header covers, listed at the top of {HEADER}) and remove the "
        "#include")


@pytest.mark.parametrize("name", ["vec_math.h", "lut_based_ops.h"])
def test_runtime_library_headers_build_for_the_npu_and_are_tested_in_the_simulator(
        tmp_path: Path, name: str) -> None:
    """mlir-aie's rms_norm.cc includes <vec_math.h>, softmax.cc <lut_based_ops.h>: it was "does
    not compile on the host ... fix the C++", then "nor does the Peano compile of aiedsl's
    build.sh": Peano's line now has the runtime library's folder (test_toolchain.py), so the
    message says the host build alone cannot, and where such a kernel is tested."""
    cc = (f'#include <aie_api/aie.hpp>\n#include <{name}>\n'
          'template <unsigned N> void rsum(const float *in, float *out) {\n'
          '  for (unsigned i = 0; i < N; ++i) out[i] = in[i];\n}\n')
    first, fix = _error(tmp_path, cc, "rms.cc")
    assert first == _runtime_error(name)
    assert fix == _runtime_fix(name)


def test_exp2_on_npu1_is_refused_with_the_api_s_rule(tmp_path: Path) -> None:
    """aie::exp2 compiled for npu1 on the host and ran; the AIE API has none for AIE2."""
    cc = ('#include <aie_api/aie.hpp>\n'
          'template <unsigned N> void e2(const float *in, bfloat16 *out) {\n'
          '  for (unsigned i = 0; i < N; i += 16)\n'
          '    aie::store_v(out + i, aie::exp2(aie::load_v<16>(in + i)));\n}\n')
    first, fix = _error(tmp_path, cc, "e2.cc", symbol="e2_64", entry="e2<64>", tout="bf16")
    assert first == (
        "d.py:8: error [host kernel build]: e2_64 calls aie::exp2 (here TR = bfloat16, its "
        "argument vector<float, 16>) in a form the AIE API does not provide: the AIE API has no "
        "aie::exp2 on AIE2 (npu1): its aie.hpp declares it for XDNA2 and AIE-MLv2 only "
        "(requires arch::is(XDNA2, AIE_MLv2)), and AIE2 has no instruction for it")
    assert fix == ("  fix: use an npu2 device for the design, or compute 2^x without aie::exp2 "
                   "on npu1")
