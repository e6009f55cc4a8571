"""The host AIE API header against the API's documented semantics: each operation run through
g++ on known lanes and compared with what the API says it computes (integers bit-exact)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from aiedsl.kernels.host import HOST_INCLUDE

PROGRAM = r'''
#include <aie_api/aie.hpp>
#include <cstdio>

template <typename V> void show(const char *name, const V &v) {
  std::printf("%s:", name);
  for (unsigned i = 0; i < V::size(); ++i) std::printf(" %.9g", double(v.v[i]));
  std::printf("\n");
}
template <unsigned N> void show_mask(const char *name, const aie::mask<N> &m) {
  std::printf("%s:", name);
  for (unsigned i = 0; i < N; ++i) std::printf(" %d", int(m.test(i)));
  std::printf("\n");
}

int main() {
  aie::vector<int32_t, 8> a(1, -2, 3, -4, 5, -6, 7, -8);
  aie::vector<int32_t, 8> b(8, 7, 6, 5, 4, 3, 2, 1);
  show("bit_and", aie::bit_and(a, b));
  show("bit_or", aie::bit_or(a, b));
  show("bit_xor", aie::bit_xor(a, 3));
  show("bit_not", aie::bit_not(a));
  show_mask("lt", aie::lt(a, b));
  show_mask("ge_scalar", aie::ge(a, 3));
  show_mask("eq", aie::eq(a, a));
  show("select", aie::select(a, b, aie::lt(a, 0)));
  show("abs", aie::abs(a));
  show("neg", aie::neg(a));
  aie::vector<int8_t, 16> edge(-128, 127, -1, 0);
  show("abs_i8_wraps", aie::abs(edge));
  show("add_scalar", aie::add(a, 10));
  show("min_scalar_first", aie::min(0, a));
  std::printf("reduce_min: %d\n", int(aie::reduce_min(a)));
  aie::accum<acc64, 8> acc = aie::mul(a, b);
  show("mac", aie::mac(acc, a, b).to_vector<int32_t>());
  show("msc", aie::msc(acc, a, b).to_vector<int32_t>());
  show("negmul", aie::negmul(a, b).to_vector<int32_t>());
  show("accum_plus_vector", aie::add(acc, a).to_vector<int32_t>());
  show("filter_even", aie::filter_even(a));
  show("filter_odd_2", aie::filter_odd(a, 2));
  auto z = aie::interleave_zip(a, b, 1);
  show("zip_first", z.first);
  show("zip_second", z.second);
  auto u = aie::interleave_unzip(z.first, z.second, 1);
  show("unzip_first", u.first);
  show("unzip_second", u.second);
  show("concat", aie::concat(aie::extract<4>(a, 1), aie::extract<4>(b, 0)));
  show("concat_4", aie::concat(aie::extract<4>(a, 0), aie::extract<4>(b, 1),
                               aie::extract<4>(a, 1), aie::extract<4>(b, 0)));
  show("member_extract", a.extract<4>(1));
  aie::vector<int32_t, 8> c = a;
  c.insert(1, aie::vector<int32_t, 4>(9, 9, 9, 9));
  show("insert", c);
  show("grow", aie::vector<int32_t, 4>(5, 6, 7, 8).grow<8>(1));
  show("transpose_2x4", aie::transpose(a, 2, 4));
  show("shuffle_up_fill", aie::shuffle_up_fill(a, b, 2));
  show("shuffle_down_fill", aie::shuffle_down_fill(a, b, 3));
  show("shuffle_up_rotate", aie::shuffle_up_rotate(a, 1));
  aie::vector<int16_t, 8> coeff(2, 3);
  aie::vector<int16_t, 8> d0(1, 1, 1, 1, 1, 1, 1, 1), d1(1, 2, 3, 4, 5, 6, 7, 8);
  show("accumulate", aie::accumulate<8>(coeff, 0, d0, d1).to_vector<int32_t>());
  auto zacc = aie::zeros<acc32, 8>();
  zacc = aie::vector<int16_t, 8>(1, 2, 3, 4, 5, 6, 7, 8);
  show("accum_from_vector", zacc.to_vector<int16_t>());
  alignas(aie::vector_decl_align) int32_t buf[16];
  for (int i = 0; i < 16; ++i) buf[i] = i;
  auto it = aie::begin_vector<8>(buf);
  aie::vector<int32_t, 8> first = *it;
  *++it = aie::add(first, 100);
  aie::vector<int32_t, 16> whole = aie::load_v<16>(buf);
  show("iterators", whole);
  aie::vector<float, 4> f(4.0f, 0.25f, 1.0f, 16.0f);
  show("inv", aie::inv(f));
  // AIE2's seed 0x7eb53567 - bits(x) and its two steps, subnormals flushed, each product
  // emulated: NaN past about 1.2e38 and for an infinity, 0 where the steps underflow
  show("inv_edges", aie::inv(aie::vector<float, 8>(2e38f, -1e38f, 0x1p125f,
                                                    std::numeric_limits<float>::infinity(),
                                                    3e38f, -3e38f, 5e37f, 4.0f)));
  show("invsqrt", aie::invsqrt(f));
  // a build naming no device takes float results too (AIE2P's aie::exp2 returns bf16 only)
  show("exp2", aie::exp2<float>(aie::vector<float, 4>(0.0f, 1.0f, -1.0f, 3.0f)));
  show("exp2_bf16", aie::exp2(aie::vector<float, 8>(0.5f, 1.0f, 2.0f, 10.0f)));  // the default
  bfloat16 h(1.0f);
  h += 0.00390625f;  // 1 + 2^-8: a tie, rounds to even (1.0)
  std::printf("bf16_plus_eq: %.9g\n", double(float(h)));
  aie::vector<float, 16> g(-0.5f, 0.5f, 1.5f, 2.5f, -2.5f, 2.75f, -2.25f, -1.5f, 3e9f, -3e9f,
                           40000.5f, -0.4f);
  aie::set_rounding(aie::rounding_mode::floor);  // not what to_fixed rounds by
  show("to_fixed_even", aie::to_fixed<int32_t>(g, 0));
  aie::vector<float, 8> g8(2.75f, -2.25f, 0.5f, -0.5f, 0.625f, 0.875f, -0.375f, 9000.0f);
  show("to_fixed_shift2", aie::to_fixed<int16_t>(g8, 2));
  show("to_fixed_shift_minus1", aie::to_fixed<int32_t>(aie::vector<float, 4>(5.0f, 7.0f, -5.0f,
                                                                              -7.0f), -1));
  show("to_float_shift1", aie::to_float<float>(aie::vector<int32_t, 4>(3, -3, 7, 0), 1));
  show("upshift", aie::upshift(aie::vector<int32_t, 4>(1, -1, 3, 127), 20));
  show("downshift", aie::downshift(aie::vector<int32_t, 4>(-8, 8, -1, 5), 2));
  show("vector_cast", aie::vector_cast<float>(aie::vector<int32_t, 4>(0x3f800000, 0x40000000)));
  aie::mask<8> m = aie::lt(a, 0);
  std::printf("mask_bits: %u %u\n", m.to_uint32(), (~m).count());
  // undefined in the AIE API: poison here, so that forgetting aie::zeros fails
  show("undef_i16", aie::vector<int16_t, 8>());
  show("undef_u8", aie::vector<uint8_t, 16>());
  show("undef_f32", aie::vector<float, 4>());
  show("undef_bf16", aie::vector<bfloat16, 8>());
  aie::accum<acc32, 16> undef_acc32;
  show("undef_acc32", undef_acc32.to_vector<int32_t>());
  show("undef_acc32_i8_shift4", undef_acc32.to_vector<int8_t>(4));
  show("undef_acc64", aie::accum<acc64, 4>().to_vector<int32_t>());
  show("undef_accfloat", aie::accum<accfloat, 8>().to_vector<float>());
  show("zeros_acc32", aie::zeros<acc32, 8>().to_vector<int32_t>());
  show("zeros_f32", aie::zeros<float, 4>());
  aie::accum<acc32, 8> from_vector(aie::vector<int16_t, 8>(1, 2, 3, 4, 5, 6, 7, 8), 2);
  show("accum_ctor_shift", from_vector.to_vector<int32_t>());
  // loads and stores by alignment, counted from the start of the kernel buffer (a local array
  // is not checked: the host's stack says nothing of the core's)
  alignas(aie::vector_decl_align) int32_t row[32];
  for (int i = 0; i < 32; ++i) row[i] = i;
  const uint64_t row_base = uint64_t(uintptr_t(row)), row_bytes = sizeof row;
  aiedsl_buffers(&row_base, &row_bytes, 1);
  show("load_unaligned", aie::load_unaligned_v<8>(row + 3));
  show("load_unaligned_4", aie::load_unaligned_v<8>(row + 4, 4));
  show("load_floor", aie::load_floor_v<8>(row + 11));
  show("load_floor_4", aie::load_floor_v<8>(row + 11, 4));
  std::printf("misaligned_none: %u\n", aiedsl_host::misaligned_count);
  show("load_v_misaligned", aie::load_v<8>(row + 3));  // as the core: from row + 0
  const int64_t *r = aiedsl_host::misaligned_first;
  std::printf("misaligned_load_v: %u %d %d %d %d %d\n", aiedsl_host::misaligned_count, int(r[0]),
              int(r[1]), int(r[2]), int(r[3]), int(r[4]));
  aie::store_unaligned_v(row + 1, aie::broadcast<int32_t, 8>(-1));
  show("store_unaligned", aie::load_v<16>(row));
  aie::load_unaligned_v<8>(row + 1, 2);  // claims 2 elements of alignment: 1 is all it has
  std::printf("misaligned_claim: %u\n", aiedsl_host::misaligned_count);
  // a vector copied from or into a kernel buffer through a pointer to its type is a load or a
  // store: checked, done and counted as load_v's and store_v's; a copy between locals is not
  for (int i = 0; i < 32; ++i) row[i] = i;
  aiedsl_buffers(&row_base, &row_bytes, 1);
  uint64_t before[aiedsl_host::UNITS], after[aiedsl_host::UNITS];
  aiedsl_profile(before, 1);
  v8int32 through = *(v8int32 *)(row + 3);  // 12 bytes off: as the core, from row + 0
  v8int32 local = through;
  local = through;
  aiedsl_profile(after, 0);
  show("pointer_load_misaligned", local);
  std::printf("pointer_load: %u %d %d %d %d %d %d %d %d %llu %llu\n",
              aiedsl_host::misaligned_count, int(r[0]), int(r[1]), int(r[2]), int(r[3]),
              int(r[4]), int(r[5]), int(r[6]), int(r[7]), (unsigned long long)after[3],
              (unsigned long long)after[4]);
  *(v8int32 *)(row + 20) = aie::add(local, 100);  // 80 bytes: stored at row + 16
  *(v8int32 *)(row + 8) = *(v8int32 *)(row + 24);  // both aligned: a load and a store
  aiedsl_profile(after, 0);
  show("pointer_store_misaligned", aie::load_v<32>(row));
  std::printf("pointer_store: %u %d %d %llu %llu\n", aiedsl_host::misaligned_count, int(r[0]),
              int(r[5]), (unsigned long long)after[3], (unsigned long long)after[4]);
  aiedsl_buffers(&row_base, &row_bytes, 1);
  v32bfloat16 *bf = (v32bfloat16 *)row;  // 64 bytes: aligned
  v32bfloat16 bf_lanes = bf[1];
  (void)bf_lanes;
  std::printf("pointer_aligned: %u\n", aiedsl_host::misaligned_count);
  // conversions to bfloat16 under a rounding mode other than conv_even are counted (the core
  // rounds them by its mode); aiedsl_buffers clears the count before each call
  aiedsl_buffers(nullptr, nullptr, 0);
  const int64_t *q = aiedsl_host::bf16_rounding_first;
  auto note = [&](const char *name) {
    std::printf("%s: %u %d %d\n", name, aiedsl_host::bf16_rounding_count, int(q[0]), int(q[1]));
  };
  aie::set_rounding(aie::rounding_mode::floor);
  aie::vector<bfloat16, 16> p16 = aie::broadcast<bfloat16, 16>(1.0f);  // a constant: folded
  volatile float half = 0.5f, third = 1.0f / 3.0f;  // run-time values
  bfloat16 exact(half);  // bf16 holds it: every mode gives the same bits
  aie::max(p16, p16);
  aie::neg(p16);
  aie::accum<accfloat, 16> fa;
  fa.from_vector(p16);
  fa.to_vector<float>();
  note("bf16_note_none");
  fa.to_vector<bfloat16>();
  note("bf16_note_accum");
  aie::vector<bfloat16, 16> via_accum = fa;  // the same conversion
  aie::add(p16, p16);
  aie::sub(p16, p16);
  aie::reduce_add(p16);
  aie::to_float<bfloat16>(aie::vector<int32_t, 16>(1, 2), 0);
  aie::inv(p16);
  aie::invsqrt(p16);
  aie::mmul<4, 8, 4, bfloat16, bfloat16, accauto> mm;
  mm.to_vector<bfloat16>();
  note("bf16_note_ops");
  aiedsl_buffers(nullptr, nullptr, 0);
  bfloat16 cast(third);
  note("bf16_note_scalar");
  aiedsl_buffers(nullptr, nullptr, 0);
  aie::set_rounding(aie::rounding_mode::symmetric_inf);  // to nearest, but ties away from zero
  aie::add(p16, p16);
  note("bf16_note_symmetric_inf");
  aiedsl_buffers(nullptr, nullptr, 0);
  aie::set_rounding(aie::rounding_mode::conv_even);
  fa.to_vector<bfloat16>();
  aie::add(p16, p16);
  bfloat16 cast_even(third);
  note("bf16_note_conv_even");
  std::printf("bf16_values: %.9g %.9g %.9g %.9g\n", double(float(exact)), double(float(cast)),
              double(float(via_accum[0])), double(float(cast_even)));
  using bf16_limits = std::numeric_limits<bfloat16>;
  static_assert(bf16_limits::is_specialized && bf16_limits::digits == 8);
  static_assert(bf16_limits::has_denorm == std::numeric_limits<float>::has_denorm &&
                !bf16_limits::traps && bf16_limits::has_infinity);
  std::printf("bf16_limits: %.9g %.9g %.9g %.9g %.9g %.9g %.9g\n",
              double(float(bf16_limits::lowest())), double(float(bf16_limits::max())),
              double(float(bf16_limits::min())), double(float(bf16_limits::epsilon())),
              double(float(bf16_limits::infinity())), double(float(bf16_limits::denorm_min())),
              double(float(bf16_limits::quiet_NaN())));
  return 0;
}
'''


@pytest.fixture(scope="module")
def lines() -> dict[str, list[float]]:
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ on PATH: the host AIE API header cannot be compiled")
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp) / "t.cc", Path(tmp) / "t"
        src.write_text(PROGRAM)
        subprocess.run([cxx, "-std=c++20", "-O1", f"-I{HOST_INCLUDE}", str(src), "-o", str(exe)],
                       check=True, capture_output=True, text=True)
        out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return {name: [float(x) for x in rest.split()]
            for name, rest in (line.split(":", 1) for line in out.splitlines())}


A = np.array([1, -2, 3, -4, 5, -6, 7, -8], dtype=np.int64)
B = np.array([8, 7, 6, 5, 4, 3, 2, 1], dtype=np.int64)


def _g9(x: float) -> float:
    """``x`` as the program prints it (nine significant digits)."""
    return float(f"{float(x):.9g}")


def test_logic_comparisons_and_select(lines: dict[str, list[float]]) -> None:
    assert lines["bit_and"] == list(A & B)
    assert lines["bit_or"] == list(A | B)
    assert lines["bit_xor"] == list(A ^ 3)
    assert lines["bit_not"] == list(~A)
    assert lines["lt"] == list((A < B).astype(int))
    assert lines["ge_scalar"] == list((A >= 3).astype(int))
    assert lines["eq"] == [1] * 8
    # select(a, b, m): b where the mask is set
    assert lines["select"] == list(np.where(A < 0, B, A))
    assert lines["mask_bits"] == [float(sum(1 << i for i in range(8) if A[i] < 0)), 4]


def test_arithmetic(lines: dict[str, list[float]]) -> None:
    assert lines["abs"] == list(np.abs(A))
    assert lines["neg"] == list(-A)
    # no saturation by default: |-128| keeps the low 8 bits, -128
    assert lines["abs_i8_wraps"] == [-128, 127, 1, 0] + [0] * 12
    assert lines["add_scalar"] == list(A + 10)
    assert lines["min_scalar_first"] == list(np.minimum(0, A))
    assert lines["reduce_min"] == [-8]
    assert lines["mac"] == list(2 * A * B)
    assert lines["msc"] == [0] * 8
    assert lines["negmul"] == list(-A * B)
    assert lines["accum_plus_vector"] == list(A * B + A)
    assert lines["accumulate"] == list(2 * 1 + 3 * np.arange(1, 9))
    assert lines["accum_from_vector"] == list(range(1, 9))


def test_lane_movement(lines: dict[str, list[float]]) -> None:
    assert lines["filter_even"] == list(A[0::2])
    assert lines["filter_odd_2"] == [3, -4, 7, -8]  # lanes 2-3 and 6-7: odd pairs
    zipped = np.stack([A, B], axis=1).reshape(-1)
    assert lines["zip_first"] == list(zipped[:8])
    assert lines["zip_second"] == list(zipped[8:])
    assert lines["unzip_first"] == list(A)
    assert lines["unzip_second"] == list(B)
    assert lines["concat"] == list(A[4:]) + list(B[:4])
    # (an int8 MLP tester's aie::concat(b8, b8, b8, b8) was refused: the AIE API's is variadic)
    assert lines["concat_4"] == list(A[:4]) + list(B[4:]) + list(A[4:]) + list(B[:4])
    assert lines["member_extract"] == list(A[4:8])
    assert lines["insert"] == list(A[:4]) + [9, 9, 9, 9]
    assert lines["grow"] == [_g9(-2 ** 31)] * 4 + [5, 6, 7, 8]  # new lanes undefined: poison
    assert lines["transpose_2x4"] == list(A.reshape(2, 4).T.reshape(-1))
    assert lines["shuffle_up_fill"] == list(B[-2:]) + list(A[:-2])
    assert lines["shuffle_down_fill"] == list(A[3:]) + list(B[:3])
    assert lines["shuffle_up_rotate"] == list(np.roll(A, 1))
    assert lines["iterators"] == list(range(8)) + list(np.arange(8) + 100)


def test_float_functions(lines: dict[str, list[float]]) -> None:
    from aie_api_models import inv_f32, invsqrt_f32

    assert lines["inv"] == [0.25, 4.0, 1.0, 0.0625]  # the steps are exact on powers of two
    inv = lines["inv_edges"]
    # each product emulated with bf16 pieces (aiedsl/kernels/fp32_emulation.py): an infinite
    # operand splits into inf - inf, and a product that overflows sums +inf and -inf pieces,
    # so 1/inf and the seeds past about 2.4e38 are NaN (one rounded product: -inf, -inf, inf);
    # 1/2^125's steps lose the pieces below float's smallest normal: 2.35084521e-38, not 2^-125
    assert np.isnan(inv[0]) and np.isnan(inv[3]) and np.isnan(inv[4]) and np.isnan(inv[5])
    assert [inv[i] for i in (1, 2, 6, 7)] == [0.0, 2.35084521e-38, 0.0, 0.25]
    model = inv_f32(np.float32([2e38, -1e38, 2.0 ** 125, np.inf, 3e38, -3e38, 5e37, 4.0]))
    assert [_g9(x) for x in model] == [_g9(x) for x in inv] or np.array_equal(
        np.float32([_g9(x) for x in model]), np.float32(inv), equal_nan=True)
    # AIE2's one Newton step (a build that names no device is AIE2's): 0.500040889, not 0.5
    assert lines["invsqrt"] == [_g9(x) for x in invsqrt_f32([4.0, 0.25, 1.0, 16.0])]
    assert lines["invsqrt"][0] != 0.5
    assert lines["exp2"] == [1.0, 2.0, 0.5, 8.0]
    # sqrt(2) rounded to bf16; the lanes not given are 0
    assert lines["exp2_bf16"] == [1.4140625, 2.0, 4.0, 1024.0] + [1.0] * 4
    assert lines["bf16_plus_eq"] == [1.0]


def test_bf16_limits_are_the_types_not_zeros(lines: dict[str, list[float]]) -> None:
    """std::numeric_limits<bfloat16> was the unspecialised template, all zeros: mlir-aie's
    reduce_max, starting its running max at lowest(), returned 0 for all-negative inputs."""
    bf = ml_dtypes.finfo(ml_dtypes.bfloat16)
    *values, nan = lines["bf16_limits"]
    assert values == [_g9(bf.min), _g9(bf.max), _g9(bf.smallest_normal), _g9(bf.eps),
                      float("inf"), _g9(bf.smallest_subnormal)]
    assert np.isnan(nan)


def test_conversions_and_shifts(lines: dict[str, list[float]]) -> None:
    # to nearest, ties to even, saturated, whatever the rounding mode: the AIE API's (2026.1)
    # float -> fixed conversion (its table: "Uses aie::rounding_mode::conv_even")
    assert lines["to_fixed_even"] == [0, 0, 2, 2, -2, 3, -2, -2, _g9(2**31 - 1), _g9(-2**31),
                                      40000, 0] + [0] * 4
    assert lines["to_fixed_shift2"] == [11, -9, 2, -2, 2, 4, -2, 32767]  # x 4: 2.5, 3.5, -1.5
    assert lines["to_fixed_shift_minus1"] == [2, 4, -2, -4]  # / 2: 2.5, 3.5, -2.5, -3.5
    assert lines["to_float_shift1"] == [1.5, -1.5, 3.5, 0.0]
    assert lines["upshift"] == [float(1 << 20), float(-(1 << 20)), float(3 << 20),
                                float(127 << 20)]
    assert lines["downshift"] == [-2, 2, -1, 1]  # arithmetic
    assert lines["vector_cast"] == [1.0, 2.0, 0.0, 0.0]


def test_default_vectors_and_accumulators_hold_poison(lines: dict[str, list[float]]) -> None:
    """A kernel's `aie::accum<acc32, 32> acc;` then `acc = aie::mac(acc, ...)`, the aie::zeros
    forgotten, passed on the zeros this header started every vector and accumulator with. The
    AIE API leaves them undefined; they now hold what aiedsl's unwritten buffers hold."""
    assert lines["undef_i16"] == [-2 ** 15] * 8   # the smallest signed integer
    assert lines["undef_u8"] == [255] * 16        # the largest unsigned one
    assert all(np.isnan(lines["undef_f32"])) and all(np.isnan(lines["undef_bf16"]))
    # an integer accumulator has 0x80 in every byte: whichever bits to_vector keeps show it
    assert lines["undef_acc32"] == [_g9(np.int32(np.uint32(0x80808080)))] * 16
    assert lines["undef_acc32_i8_shift4"] == [8] * 16     # bits 4..11 of 0x80808080
    assert lines["undef_acc64"] == [_g9(np.int32(np.uint32(0x80808080)))] * 4
    assert all(np.isnan(lines["undef_accfloat"]))
    assert lines["zeros_acc32"] == [0] * 8 and lines["zeros_f32"] == [0] * 4
    # the AIE API's explicit accum(vector, shift)
    assert lines["accum_ctor_shift"] == [4 * x for x in range(1, 9)]


def test_loads_and_stores_by_alignment(lines: dict[str, list[float]]) -> None:
    assert lines["load_unaligned"] == list(range(3, 11))
    assert lines["load_unaligned_4"] == list(range(4, 12))
    assert lines["load_floor"] == list(range(8, 16))   # 8 lanes: down to 8 elements
    assert lines["load_floor_4"] == list(range(8, 16))  # down to 4 elements: row + 8
    assert lines["misaligned_none"] == [0]
    # a load_v 12 bytes off: recorded (op load_v, 8 lanes of 4 bytes, 32 needed, kernel
    # buffer 0) and, as on the core, read from the address with its low bits dropped
    assert lines["load_v_misaligned"] == list(range(8))
    assert lines["misaligned_load_v"] == [1, 0, 8, 4, 32, 0]
    assert lines["store_unaligned"] == [0] + [-1] * 8 + list(range(9, 16))
    assert lines["misaligned_claim"] == [2]


def test_loads_and_stores_through_a_vector_pointer(lines: dict[str, list[float]]) -> None:
    """`*(v16int32 *)(out + i) = *(v16int32 *)(in + i + 1)` (mlir-aie's relu.cc style) passed
    `kernel test` and the native simulation, and `kernel profile` counted none of its bytes,
    while the same access by aie::load_v was refused. A vector copied from or into a kernel
    buffer is now a load or a store, as load_v and store_v are; copies between locals are
    neither checked nor counted."""
    from aiedsl.kernels.faults import ELEM_KINDS, MISALIGNED_OPS

    # the load 12 bytes off, as the core does it, from row + 0; the local copies after it
    assert lines["pointer_load_misaligned"] == list(range(8))
    # 1 recorded: op, 8 lanes of 4 bytes, 32 needed, buffer 0, byte 12, -, int32; 32 bytes
    # loaded and none stored (the local copy and assignment are not memory)
    assert lines["pointer_load"] == [1, MISALIGNED_OPS.index("load through a vector pointer"),
                                     8, 4, 32, 0, 12, 0, ELEM_KINDS.index("int"), 32, 0]
    # the store 16 bytes off lands at row + 16; the aligned copy puts row[24:32] at row[8:16]
    assert lines["pointer_store_misaligned"] == (
        list(range(8)) + list(range(24, 32)) + list(range(100, 108)) + list(range(24, 32)))
    assert lines["pointer_store"] == [2, MISALIGNED_OPS.index("load through a vector pointer"),
                                      12, 64, 64]
    assert lines["pointer_aligned"] == [0]


SIZES = r'''
#include <aie_api/aie.hpp>
void f() { %s x; (void)x; }
'''


@pytest.mark.parametrize("decl,ok", [
    ("aie::vector<int32_t, 4>", True),      # 128 bits, the smallest
    ("aie::vector<int8_t, 128>", True),     # 1024 bits
    ("aie::vector<int32_t, 64>", True),     # 2048 bits: the AIE API keeps 4 registers
    ("aie::vector<bfloat16, 8>", True),
    ("aie::vector<int32_t, 12>", False),    # not a power of two
    ("aie::vector<int32_t, 2>", False),     # 64 bits
    ("aie::vector<int8_t, 8>", False),
    ("aie::accum<acc32, 8>", True),
    ("aie::accum<acc32, 64>", True),
    ("aie::accum<acc64, 4>", True),
    ("aie::accum<accfloat, 4>", True),
    ("aie::accum<acc32, 4>", False),        # acc32 starts at 8 lanes
    ("aie::accum<acc64, 12>", False),
])
def test_only_the_vector_and_accumulator_sizes_the_api_has_compile(
        tmp_path: Path, decl: str, ok: bool) -> None:
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ on PATH: the host AIE API header cannot be compiled")
    src = tmp_path / "s.cc"
    src.write_text(SIZES % decl)
    for arch in (20, 21):
        r = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", f"-D__AIE_ARCH__={arch}",
                            f"-I{HOST_INCLUDE}", str(src)], capture_output=True, text=True)
        assert (r.returncode == 0) == ok, (arch, r.stderr[-400:])
        if not ok and "vector" in decl:
            assert ("aie::vector: the AIE API has vectors of a power-of-two number of lanes and "
                    "at least 128 bits (128, 256, 512, 1024 bits, or more as several registers)"
                    ) in r.stderr
        elif not ok:
            assert ("aie::accum: the AIE API has accumulators of a power-of-two number of lanes, "
                    "at least 8 of acc32 and 4 of acc64 or accfloat") in r.stderr


MMUL = r'''
#include <aie_api/aie.hpp>
void f() { aie::mmul<%d, %d, %d, %s, %s> m; (void)m; }
'''


SPARSE_ONLY = ("aie::mmul: the AIE API has this M x K x N for these input types on this "
               "architecture only with a sparse B (aie::sparse_vector), which aiedsl's host "
               "AIE API does not model; use a mode with a dense B: 4x8x8 or 4x16x8 (and "
               "8x8x8 on AIE2P) for 8-bit inputs, 4x4x8 for 16-bit ones or 16 x 8 bits, 4x8x8 "
               "for bfloat16 (on AIE2P through the bfp16 unit)")
NOT_A_MODE = ("aie::mmul: this M x K x N is not a mode the AIE API has for these input types on "
              "this architecture (__AIE_ARCH__)")


# "sparse": refused as a mode whose B the AIE API takes only as an aie::sparse_vector (its
# detail/aie2/ or detail/aie2p/ mmul_<A>_<B>.hpp specialization has no mac() of a dense B)
@pytest.mark.parametrize("shape,types,ok_aie2,ok_aie2p", [
    ((4, 8, 4), "bfloat16", True, True),     # npu1's bf16 mode; npu2 has it too
    ((4, 8, 8), "bfloat16", True, True),
    ((4, 16, 4), "bfloat16", "sparse", False),
    ((4, 8, 4), "int8_t", True, False),      # npu1's int8 4x8x4 is gone on AIE2P
    ((8, 8, 8), "int8_t", True, True),
    ((4, 16, 8), "int8_t", True, True),      # dense B: two 4x8x8 (AIE2) or 8x8x8 (AIE2P) macs
    ((8, 16, 8), "int8_t", "sparse", "sparse"),
    ((4, 16, 16), "int8_t", "sparse", False),
    ((2, 8, 8), "int16_t", "sparse", "sparse"),
    ((4, 4, 4), "int16_t", True, False),     # the library's npu1 int16 mode
    ((4, 4, 8), "int16_t", True, True),      # ... and its npu2 one
    ((3, 8, 4), "bfloat16", False, False),
])
def test_mmul_takes_only_the_modes_the_api_has_on_the_architecture(
        tmp_path: Path, shape: tuple[int, int, int], types: str, ok_aie2: bool | str,
        ok_aie2p: bool | str) -> None:
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ on PATH: the host AIE API header cannot be compiled")
    src = tmp_path / "m.cc"
    src.write_text(MMUL % (*shape, types, types))
    for arch, ok in ((20, ok_aie2), (21, ok_aie2p), (None, True)):
        flag = [] if arch is None else [f"-D__AIE_ARCH__={arch}"]
        r = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", *flag, f"-I{HOST_INCLUDE}",
                            str(src)], capture_output=True, text=True)
        assert (r.returncode == 0) == (ok is True), (arch, r.stderr[-400:])
        if ok is not True:
            assert (SPARSE_ONLY if ok == "sparse" else NOT_A_MODE) in r.stderr
            assert (NOT_A_MODE if ok == "sparse" else SPARSE_ONLY) not in r.stderr


NATIVE = r'''
#include <aie_api/aie.hpp>
#include <cstdio>

template <typename V> void show(const char *name, const V &v) {
  std::printf("%s:", name);
  for (unsigned i = 0; i < V::size(); ++i) std::printf(" %.9g", double(v.v[i]));
  std::printf("\n");
}

int main() {
  v16int32 a, b;
  for (int i = 0; i < 16; ++i) { a = upd_elem(a, i, i); b = upd_elem(b, i, 100 + i); }
  show("shift_bytes_8", shift_bytes(a, b, 8U));   // two int32 lanes in: a[2..15], b[0..1]
  show("shift_lanes_15", shift(a, b, 15U));
  show("rotate_32", shift_bytes(a, a, 32U));
  std::printf("extract_elem: %d %d\n", extract_elem(b, 3), ext_elem(a, 17));  // index mod 16
  show("broadcast", broadcast_to_v16int32(-7));
  show("zero_bf16", broadcast_zero_bfloat16().extract<8>(0));
  v16acc64 acc = ups_to_v16acc64(broadcast_to_v16int32(-3), 4);  // -48 in every lane
  show("ups", acc.to_vector<int32_t>());
  v16int32 odd = broadcast_to_v16int32(5);
  odd = upd_elem(odd, 1, 6);
  odd = upd_elem(odd, 2, 7);
  odd = upd_elem(odd, 3, -5);
  v16acc64 c = ups_to_v16acc64(odd, 0);
  show("srs_floor", srs_to_v16int32(c, 1).extract<4>(0));
  aie::set_rounding(aie::rounding_mode::conv_even);
  show("srs_even", lsrs(c, 1).extract<4>(0));
  aie::set_saturation(aie::saturation_mode::saturate);
  show("ssrs_sat", ssrs(ups_to_v32acc32(broadcast_to_v32int16(1000), 0), 0).extract<16>(0));
  return 0;
}
'''


def test_native_aie2_vector_intrinsics(tmp_path: Path) -> None:
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ on PATH: the host AIE API header cannot be compiled")
    src, exe = tmp_path / "n.cc", tmp_path / "n"
    src.write_text(NATIVE)
    subprocess.run([cxx, "-std=c++20", "-O1", f"-I{HOST_INCLUDE}", str(src), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    out = dict(line.split(": ", 1) for line in subprocess.run(
        [str(exe)], check=True, capture_output=True, text=True).stdout.splitlines())
    ints = {k: [int(float(x)) for x in v.split()] for k, v in out.items()}
    assert ints["shift_bytes_8"] == list(range(2, 16)) + [100, 101]
    assert ints["shift_lanes_15"] == [15] + list(range(100, 115))
    assert ints["rotate_32"] == list(range(8, 16)) + list(range(0, 8))
    assert ints["extract_elem"] == [103, 1]
    assert ints["broadcast"] == [-7] * 16
    assert ints["zero_bf16"] == [0] * 8
    assert ints["ups"] == [-48] * 16
    assert ints["srs_floor"] == [2, 3, 3, -3]     # 5/2, 6/2, 7/2, -5/2 rounded down
    assert ints["srs_even"] == [2, 3, 4, -2]      # ties to even
    assert ints["ssrs_sat"] == [127] * 16         # 1000 saturated to int8


def test_conversions_to_bf16_under_another_rounding_mode_are_counted(
        lines: dict[str, list[float]]) -> None:
    """What the core rounds by its rounding mode (accumulator to bf16, the API's bf16 add, a
    scalar float cast) is counted when the mode is not conv_even: count, first op (BF16_OPS),
    mode (ROUNDING_MODES); what has nothing to round, or a constant, is not."""
    from aiedsl.kernels.faults import BF16_OPS, ROUNDING_MODES

    floor, sym_inf = ROUNDING_MODES.index("floor"), ROUNDING_MODES.index("symmetric_inf")
    assert lines["bf16_note_none"][0] == 0  # (the first's record is older: not read)
    assert lines["bf16_note_accum"] == [1, 0, floor]
    assert BF16_OPS[0] == "aie::accum<accfloat>::to_vector<bfloat16>"
    assert lines["bf16_note_ops"] == [9, 0, floor]  # one per call, the first kept
    assert lines["bf16_note_scalar"] == [1, BF16_OPS.index("a float cast to bfloat16"), floor]
    assert lines["bf16_note_symmetric_inf"] == [1, BF16_OPS.index("aie::add of bfloat16 vectors"),
                                                sym_inf]
    assert lines["bf16_note_conv_even"][0] == 0
    # the values are still rounded to nearest even: 1/3 = 0x3EAAAAAB -> 0x3EAB
    assert lines["bf16_values"] == [0.5, 0.333984375, 1.0, 0.333984375]


ACC32 = r'''
#include <aie_api/aie.hpp>
#include <cstdio>

template <typename V> void show(const char *name, const V &v) {
  std::printf("%s:", name);
  for (unsigned i = 0; i < V::size(); ++i) std::printf(" %lld", (long long)v.v[i]);
  std::printf("\n");
}

int main() {
  aie::vector<int16_t, 32> a = aie::broadcast<int16_t, 32>(32767);
  aie::accum<acc32, 32> acc = aie::mul(a, a);
  acc = aie::mac(acc, a, a);
  acc = aie::mac(acc, a, a);
  aie::set_saturation(aie::saturation_mode::saturate);
  show("acc32_int16_shift16", acc.to_vector<int16_t>(16).extract<16>(0));
  show("acc32_int32", acc.to_vector<int32_t>(0).extract<16>(0));
  aie::vector<int32_t, 16> w = aie::broadcast<int32_t, 16>(32767);
  aie::accum<acc64, 16> wide = aie::mul(w, w);
  wide = aie::mac(wide, w, w);
  wide = aie::mac(wide, w, w);
  show("acc64_int16_shift16", wide.to_vector<int16_t>(16));
  show("acc64_int32", wide.to_vector<int32_t>(0));
  aie::mmul<4, 4, 8, int16_t, int16_t> m;
  m.mul(aie::broadcast<int16_t, 16>(32767), aie::broadcast<int16_t, 32>(32767));
  show("mmul_acc32", m.to_vector<int32_t>(0));
  aie::accum<acc32, 16> up;
  up.from_vector(aie::broadcast<int16_t, 16>(1000), 22);
  show("ups_saturate", up.to_vector<int32_t>(0));
  aie::set_saturation(aie::saturation_mode::none);
  up.from_vector(aie::broadcast<int16_t, 16>(1000), 22);
  show("ups_none", up.to_vector<int32_t>(0));
  return 0;
}
'''


def test_acc32_lanes_are_32_bits(tmp_path: Path) -> None:
    """An acc32 lane is 32 bits on AIE2 and AIE2P (a 512-bit accumulator register is 16 lanes
    of 32 bits, AM027 / UG1603), and the integer VMUL/VMAC/VADD instructions neither read the
    saturation mode nor flag an overflow (llvm-aie's AIE2 instruction definitions): a lane keeps
    the low 32 bits of what is written to it. The header kept exact int64 sums instead.

    The tester's case: 32767 * 32767 = 1073676289 (0x3FFF0001), accumulated three times is
    3221028867 (0xBFFD0003), past 2^31 - 1, so the lane holds 3221028867 - 2^32 = -1073938429.
    Under saturate, to_vector<int16>(16) shifts it down, rounding by floor (the reset mode):
    -1073938429 / 65536 = -16386.99995, so -16387 (0xBFFD as a signed 16-bit value), which
    int16 holds; and
    to_vector<int32>(0) gives -1073938429, which int32 holds. (Exact lanes gave 49149,
    saturated to 32767, and 3221028867, saturated to 2147483647.) In an acc64 lane the same
    sum stays 3221028867: those saturated values are right there.

    aie::mmul<4, 4, 8, int16> accumulates in acc32 too (the AIE API's default for 16 x 16
    bits): four products of 32767 * 32767 are 4294705156, which is 4294705156 - 2^32 = -262140
    in 32 bits.

    An upshift into acc32 (from_vector, ups) of 1000 by 22 bits is 4194304000, past 2^31 - 1:
    under saturation none the lane keeps the low bits, 4194304000 - 2^32 = -100663296; under
    saturate 1000 is first clamped to (2^31 - 1) >> 22 = 511 and then shifted: 511 * 2^22 =
    2143289344 (UG1583, "Upshift")."""
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ on PATH: the host AIE API header cannot be compiled")
    src, exe = tmp_path / "acc.cc", tmp_path / "acc"
    src.write_text(ACC32)
    subprocess.run([cxx, "-std=c++20", "-O1", f"-I{HOST_INCLUDE}", str(src), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    out = {name: [int(x) for x in rest.split()] for name, rest in (
        line.split(":", 1) for line in subprocess.run(
            [str(exe)], check=True, capture_output=True, text=True).stdout.splitlines())}
    assert out["acc32_int16_shift16"] == [-16387] * 16
    assert out["acc32_int32"] == [-1073938429] * 16
    assert out["acc64_int16_shift16"] == [32767] * 16
    assert out["acc64_int32"] == [2147483647] * 16
    assert out["mmul_acc32"] == [-262140] * 32
    assert out["ups_saturate"] == [2143289344] * 16
    assert out["ups_none"] == [-100663296] * 16


TRUNCATE = r'''
#include <cstdio>
#include <aie_api/aie.hpp>
int main() {
  aie::vector<int32_t, 16> v = aie::broadcast<int32_t, 16>(300);
  aie::accum<acc64, 16> acc;
  acc.from_vector(v, 0);
  aie::set_saturation(aie::saturation_mode::truncate);
  std::printf("%d", int(acc.to_vector<int8_t>(0)[0]));
  aie::accum<acc32, 16> up;
  up.from_vector(aie::broadcast<int16_t, 16>(1000), 22);
  std::printf(" %d\n", int(up.to_vector<int32_t>(0)[0]));
  return 0;
}
'''


def test_truncate_is_the_api_s_old_name_for_saturate(tmp_path: Path) -> None:
    """The AIE API numbers saturation_mode::truncate as saturate (both 1; deprecated): Vitis
    vision kernels set it. The header had it as a mode of its own that clamped nothing, so 300
    narrowed to int8 kept its low bits (44), not 127, and an upshift wrapped."""
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ on PATH: the host AIE API header cannot be compiled")
    src, exe = tmp_path / "t.cc", tmp_path / "t"
    src.write_text(TRUNCATE)
    subprocess.run([cxx, "-std=c++20", "-O1", f"-I{HOST_INCLUDE}", str(src), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    assert subprocess.run([str(exe)], check=True, capture_output=True,
                          text=True).stdout.split() == ["127", "2143289344"]


WRAPS = r'''
#include <aie_api/aie.hpp>
#include <cstdio>

template <typename V> void show(const char *name, const V &v) {
  std::printf("%s:", name);
  for (unsigned i = 0; i < V::size(); ++i) std::printf(" %lld", (long long)v.v[i]);
  std::printf("\n");
}

int main() {
  aie::set_saturation(aie::saturation_mode::MODE);
  aie::vector<int8_t, 16> a(127, -128, 100, -100, 5), b(1, -1, 100, -100, 6);
  show("add_i8", aie::add(a, b));
  show("sub_i8", aie::sub(a, b));
  show("add_scalar_i8", aie::add(a, 1));
  show("sub_scalar_first_i8", aie::sub(-128, a));
  show("neg_i8", aie::neg(a));
  show("abs_i8", aie::abs(a));
  show("add_u8", aie::add(aie::vector<uint8_t, 16>(255, 200), aie::vector<uint8_t, 16>(1, 100)));
  show("add_i16", aie::add(aie::broadcast<int16_t, 8>(32767), aie::broadcast<int16_t, 8>(1)));
  show("sub_i32", aie::sub(aie::broadcast<int32_t, 4>(-2147483647 - 1),
                           aie::broadcast<int32_t, 4>(1)));
  std::printf("reduce_add_i32: %d\n", aie::reduce_add(aie::broadcast<int32_t, 16>(0x40000000)));
  std::printf("reduce_add_i8_64: %d\n", aie::reduce_add(aie::broadcast<int8_t, 64>(100)));
  std::printf("reduce_add_i8_32: %d\n", aie::reduce_add(aie::broadcast<int8_t, 32>(8)));
  std::printf("reduce_add_i16_32: %d\n", aie::reduce_add(aie::broadcast<int16_t, 32>(20000)));
  aie::accum<acc32, 16> acc;
  acc.from_vector(aie::broadcast<int16_t, 16>(300), 0);
  show("to_vector_i8", acc.to_vector<int8_t>(0));
  return 0;
}
'''


@pytest.mark.parametrize("mode", ["none", "saturate", "symmetric"])
def test_vector_adds_wrap_whatever_the_saturation_mode(tmp_path: Path, mode: str) -> None:
    """Tester: aie::add of int8 vectors saturated under saturation_mode::saturate, so a kernel
    test passed a saturating reference and failed a wrapping one. The AIE API adds integer
    vectors with ::add (detail/aie2/add.hpp), llvm-aie's `a + b`, selected to VADD, which reads
    no saturation mode; neg and abs (VNEG_GTZ, VABS_GTZ) neither. reduce_add folds by those
    adds: an int32 sum wraps; 8- and 16-bit lanes are folded (wrapping) to 16 and 8 lanes,
    whose exact sum an accumulator narrows by the mode: 64 lanes of 100 fold to 16 of -112
    (200 wraps to -56, twice), summing to -1792; 32 of 8 to 16 of 16, 256; 32 of 20000 to 8
    of 14464 (80000 wraps), 115712. What leaves an accumulator (to_vector) still narrows by
    the mode: 300 is 127 under saturate and symmetric, 44 (its low 8 bits) under none."""
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ on PATH: the host AIE API header cannot be compiled")
    src, exe = tmp_path / "w.cc", tmp_path / "w"
    src.write_text(WRAPS.replace("MODE", mode))
    subprocess.run([cxx, "-std=c++20", "-O1", f"-I{HOST_INCLUDE}", str(src), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    out = {name: [int(x) for x in rest.split()] for name, rest in (
        line.split(":", 1) for line in subprocess.run(
            [str(exe)], check=True, capture_output=True, text=True).stdout.splitlines())}
    pad = [0] * 11
    assert out["add_i8"] == [-128, 127, -56, 56, 11] + pad
    assert out["sub_i8"] == [126, -127, 0, 0, -1] + pad
    assert out["add_scalar_i8"] == [-128, -127, 101, -99, 6] + [1] * 11
    assert out["sub_scalar_first_i8"] == [1, 0, 28, -28, 123] + [-128] * 11
    assert out["neg_i8"] == [-127, -128, -100, 100, -5] + pad
    assert out["abs_i8"] == [127, -128, 100, 100, 5] + pad
    assert out["add_u8"] == [0, 44] + [0] * 14
    assert out["add_i16"] == [-32768] * 8
    assert out["sub_i32"] == [2147483647] * 4
    assert out["reduce_add_i32"] == [0]  # 16 * 2^30 = 2^34
    low = {"none": lambda v, bits: (v + 2 ** (bits - 1)) % 2 ** bits - 2 ** (bits - 1),
           "saturate": lambda v, bits: max(-2 ** (bits - 1), min(2 ** (bits - 1) - 1, v)),
           "symmetric": lambda v, bits: max(1 - 2 ** (bits - 1), min(2 ** (bits - 1) - 1, v))}
    narrow = low[mode]
    assert out["reduce_add_i8_64"] == [narrow(16 * -112, 8)]
    assert out["reduce_add_i8_32"] == [narrow(256, 8)]
    assert out["reduce_add_i16_32"] == [narrow(8 * (80000 - 65536), 16)]
    assert out["to_vector_i8"] == [narrow(300, 8)] * 16


CASCADE = r'''
#include <aie_api/aie.hpp>
#include <cstdio>

static unsigned char in[8 * 64], out[8 * 64];

// the bytes the call put (all of them) and the words it got and put
void moved(const char *name) {
  unsigned m[2];
  aiedsl_cascade_moved(m);
  std::printf("%s: %u %u", name, m[0], m[1]);
  for (unsigned i = 0; i < m[1] * 64; ++i) std::printf(" %u", unsigned(out[i]));
  std::printf("\n");
}
template <typename V> void show(const char *name, const V &v) {
  std::printf("%s:", name);
  for (unsigned i = 0; i < V::size(); ++i) std::printf(" %.9g", double(v.v[i]));
  std::printf("\n");
}

#define ROUNDTRIP(TYPE)                                                                      \
  aiedsl_cascade(in, 8, out, 8);                                                             \
  put_mcd(get_scd_##TYPE());                                                                 \
  moved(#TYPE);

int main() {
  for (unsigned i = 0; i < sizeof in; ++i) in[i] = (unsigned char)(i * 7 + 3);
  ROUNDTRIP(v16acc32) ROUNDTRIP(v8acc64) ROUNDTRIP(v16accfloat) ROUNDTRIP(v64int8)
  ROUNDTRIP(v64uint8) ROUNDTRIP(v32int16) ROUNDTRIP(v32uint16) ROUNDTRIP(v16int32)
  ROUNDTRIP(v16uint32) ROUNDTRIP(v32bfloat16) ROUNDTRIP(v32acc32) ROUNDTRIP(v16acc64)
  ROUNDTRIP(v32int32) ROUNDTRIP(v128int8) ROUNDTRIP(v128uint8) ROUNDTRIP(v64int16)
  ROUNDTRIP(v64uint16) ROUNDTRIP(v32uint32) ROUNDTRIP(v16float) ROUNDTRIP(v32float)
  // a 32-lane float accumulator as two words, and back: the halves swapped on the way
  aiedsl_cascade(in, 2, out, 2);
  v16accfloat lo = get_scd_v16accfloat();
  v16accfloat hi = get_scd_v16accfloat();
  aie::accum<accfloat, 32> both = aie::concat(lo, hi);
  put_mcd(both.extract<16>(1));
  put_mcd(both.to_native().extract<16>(0));
  moved("halves_swapped");
  aiedsl_cascade(in, 4, out, 0);
  aie::vector<int32_t, 8> lanes = get_scd_v64acc32().extract<8>(4).to_vector<int32_t>();
  std::printf("four_words:");
  for (unsigned i = 0; i < 8; ++i) std::printf(" %d", int(lanes[i]));
  std::printf("\n");
  moved("four_words_moved");
  aie::accum<acc32, 32> a = aie::zeros<acc32, 32>();
  a.insert(1, aie::accum<acc32, 8>(aie::broadcast<int32_t, 8>(7)));
  show("insert", a.to_vector<int32_t>());
  aie::accum<accfloat, 8> f(aie::broadcast<float, 8>(2.5f));
  show("concat4", aie::concat(f, aie::zeros<accfloat, 8>(), f, f).to_vector<float>());
  show("grow", f.grow<16>().extract<8>(0).to_vector<float>());
  return 0;
}
'''


def test_cascade_intrinsics_move_every_type_as_bits(tmp_path: Path) -> None:
    """Each get_scd_<type>() takes its words' bytes unchanged and put_mcd puts them back (one
    word for a 512-bit type, two for a 1024-bit one, four for v64acc32: the count aiedsl
    checks against the declaration); a 32-lane accfloat accumulator goes as two words by
    extract<16> and comes back by aie::concat of two gets (an i32 cascade kernel using
    get_scd_v16acc32 failed to build: the header had only the accfloat word)."""
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ on PATH: the host AIE API header cannot be compiled")
    src, exe = tmp_path / "c.cc", tmp_path / "c"
    src.write_text(CASCADE)
    subprocess.run([cxx, "-std=c++20", "-O1", f"-I{HOST_INCLUDE}", str(src), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    out = dict(line.split(": ", 1) for line in subprocess.run(
        [str(exe)], check=True, capture_output=True, text=True).stdout.splitlines())
    stream = [(i * 7 + 3) % 256 for i in range(8 * 64)]
    words = {"v16acc32": 1, "v8acc64": 1, "v16accfloat": 1, "v64int8": 1, "v64uint8": 1,
             "v32int16": 1, "v32uint16": 1, "v16int32": 1, "v16uint32": 1, "v32bfloat16": 1,
             "v32acc32": 2, "v16acc64": 2, "v32int32": 2, "v128int8": 2, "v128uint8": 2,
             "v64int16": 2, "v64uint16": 2, "v32uint32": 2, "v16float": 1, "v32float": 2}
    for name, n in words.items():
        assert [int(x) for x in out[name].split()] == [n, n, *stream[:64 * n]], name
    assert [int(x) for x in out["halves_swapped"].split()] == [2, 2, *stream[64:128],
                                                              *stream[:64]]
    lanes = np.array(stream[:256], np.uint8).view(np.int32)
    assert [int(x) for x in out["four_words"].split()] == lanes[32:40].tolist()
    assert out["four_words_moved"] == "4 0"
    assert [int(float(x)) for x in out["insert"].split()] == [0] * 8 + [7] * 8 + [0] * 16
    assert [float(x) for x in out["concat4"].split()] == [2.5] * 8 + [0.0] * 8 + [2.5] * 16
    assert [float(x) for x in out["grow"].split()] == [2.5] * 8


@pytest.mark.parametrize("use", ["v16float w = get_scd_v16float();",
                                 "put_mcd(aie::broadcast<float, 16>(1.0f));",
                                 "v32accfloat w = get_scd_v32accfloat();",
                                 "v64acc32 w = get_scd_v64acc32();"])
def test_aie2p_s_own_cascade_intrinsics_build_for_aie2p_only(tmp_path: Path, use: str) -> None:
    """llvm-aie's aiev2_streams.h has no float-vector cascade intrinsics, no v32accfloat get
    and no four-word gets: a kernel using them builds for npu2 (and a build that names no
    architecture), as Peano builds it, and not for npu1."""
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ on PATH: the host AIE API header cannot be compiled")
    src = tmp_path / "a.cc"
    src.write_text("#include <aie_api/aie.hpp>\nvoid f() { %s }\n" % use)
    for arch, ok in ((20, False), (21, True), (None, True)):
        flag = [] if arch is None else [f"-D__AIE_ARCH__={arch}"]
        r = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", *flag, f"-I{HOST_INCLUDE}",
                            str(src)], capture_output=True, text=True)
        assert (r.returncode == 0) == ok, (arch, r.stderr[-400:])


def test_aie2p_has_no_put_of_a_32_lane_float_accumulator(tmp_path: Path) -> None:
    """aie2p_streams.h gets a v32accfloat but puts none: put_mcd of one builds nowhere (its
    halves go one by one)."""
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ on PATH: the host AIE API header cannot be compiled")
    src = tmp_path / "p.cc"
    src.write_text("#include <aie_api/aie.hpp>\n"
                   "void f(const v32accfloat &a) { put_mcd(a); }\n")
    for arch in (20, 21):
        r = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", f"-D__AIE_ARCH__={arch}",
                            f"-I{HOST_INCLUDE}", str(src)], capture_output=True, text=True)
        assert r.returncode != 0, arch


LANE_MOVES = r'''
#include <aie_api/aie.hpp>
#include <cstdio>

template <unsigned N> aie::vector<int8_t, N> lanes() {
  aie::vector<int8_t, N> v;
  for (unsigned i = 0; i < N; ++i) v[i] = int8_t(i);
  return v;
}
uint64_t counts[aiedsl_host::UNITS];
void moved(const char *name) {
  aiedsl_profile(counts, 1);
  std::printf("%s: %llu\n", name, (unsigned long long)counts[2]);
}

int main() {
  auto q = lanes<16>();  // 128 bits
  auto w = lanes<32>();  // 256
  auto x = lanes<64>();  // 512
  auto y = lanes<128>(); // 1024
  moved("reset");
  aie::interleave_zip(q, q, 8);
  moved("zip_128");
  aie::interleave_unzip(q, q, 8);
  moved("unzip_128");
  aie::interleave_zip(q, q, 16);
  moved("zip_128_whole");
  aie::interleave_zip(w, w, 8);
  moved("zip_256");
  aie::interleave_zip(x, x, 8);
  moved("zip_512");
  aie::interleave_unzip(x, x, 8);
  moved("unzip_512");
  aie::interleave_zip(x, x, 64);
  moved("zip_512_whole");
  aie::interleave_zip(y, y, 8);
  moved("zip_1024");
  aie::concat(q, q);
  moved("concat_128");
  aie::concat(w, w);
  moved("concat_256");
  aie::concat(x, x);
  moved("concat_512");
  aie::concat(q, q, q, q);
  moved("concat_128_four");
  return 0;
}
'''


def test_lane_moves_are_counted_as_the_aie_api_issues_them(tmp_path: Path) -> None:
    """The shuffles ``kernel profile`` counts: a VSHUFFLE writes one 512-bit register, so the
    AIE API zips a pair narrower than 512 bits with one, a 512-bit pair with two, a 1024-bit
    pair with four, and a whole-vector step of 256 bits or more with none; a concat of 256-bit
    or wider parts pairs registers (nothing moves), of 128-bit parts moves one. The profile
    counted one for each call, whatever its width: conv3x3's 8x8x8 gather on npu2 was
    charged two shuffles per 512-bit A block it only paired, and its 512-bit output zips one
    where they take two."""
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ on PATH: the host AIE API header cannot be compiled")
    src, exe = tmp_path / "m.cc", tmp_path / "m"
    src.write_text(LANE_MOVES)
    subprocess.run([cxx, "-std=c++20", "-O1", f"-I{HOST_INCLUDE}", str(src), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    counted = dict(line.split(": ") for line in out.splitlines())
    assert counted == {"reset": "0", "zip_128": "1", "unzip_128": "1", "zip_128_whole": "1",
                       "zip_256": "1", "zip_512": "2", "unzip_512": "2", "zip_512_whole": "0",
                       "zip_1024": "4", "concat_128": "1", "concat_256": "0",
                       "concat_512": "0", "concat_128_four": "3"}


@pytest.mark.parametrize("shape,types,arch,fix", [
    ((4, 4, 4), "int8_t", 20, "i8 x i8 on AIE2 (npu1): 4x8x4, 4x16x4, 8x8x4, 4x8x8, 8x8x8, "
     "2x8x8, 1x16x8, 2x16x8, 4x16x8"),
    ((3, 8, 4), "bfloat16", 21, "bf16 x bf16 on AIE2P (npu2): 8x8x4, 4x8x4, 4x8x8, 8x8x8, "
     "8x1x8"),
])
def test_an_mmul_mode_the_api_lacks_is_told_the_modes_it_has(
        tmp_path: Path, shape: tuple[int, int, int], types: str, arch: int, fix: str) -> None:
    """The fix listed the modes nowhere but in host_core.hpp (a kernel author's tester): it
    names those of the types and the architecture now, read from the header's own table."""
    from aiedsl.kernels.host_errors import explain

    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("no g++ on PATH: the host AIE API header cannot be compiled")
    src = tmp_path / "m.cc"
    src.write_text(MMUL % (*shape, types, types))
    r = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", f"-D__AIE_ARCH__={arch}",
                        f"-I{HOST_INCLUDE}", str(src)], capture_output=True, text=True,
                       env={**os.environ, "LC_ALL": "C"})
    assert r.returncode != 0
    message, said = explain(r.stderr, "k", HOST_INCLUDE / "aie_api" / "aie.hpp")
    assert message.startswith("k uses aie::mmul<")
    assert said == f"use one of the AIE API's mmul modes (M x K x N) for {fix}"
