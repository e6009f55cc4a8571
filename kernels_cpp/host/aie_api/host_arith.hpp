// host_arith.hpp -- part of aiedsl's host AIE API header: arithmetic beyond add/sub/mul.
// Include aie.hpp, not this file.

#ifndef AIEDSL_HOST_HOST_ARITH_HPP
#define AIEDSL_HOST_HOST_ARITH_HPP

namespace aie {

// ---- arithmetic beyond add/sub/mul ---------------------------------------------------------
// abs and neg of integer lanes are VABS_GTZ / VNEG_GTZ (the AIE API's detail/aie2/abs.hpp and
// neg.hpp call ::abs / ::neg, which llvm-aie's aiev2_vadd.h makes __builtin_aiev2_vabs_gtz* /
// vneg_gtz*), which read no saturation mode: the lane keeps the low bits whatever the mode, so
// |-128| and -(-128) are -128 in int8 (what the core gives there is not in these sources; the
// mode cannot change it).
template <typename T, unsigned N> vector<T, N> abs(const vector<T, N> &a) {
  vector<T, N> out;
  AIEDSL_COUNT(VALU, 1);
  for (unsigned i = 0; i < N; ++i) {
    auto x = detail::wide_t<T>(a.v[i]);
    out.v[i] = detail::wrap<T>(x < 0 ? -x : x);
  }
  return out;
}
template <typename T, unsigned N> vector<T, N> neg(const vector<T, N> &a) {
  vector<T, N> out;
  AIEDSL_COUNT(VALU, 1);
  for (unsigned i = 0; i < N; ++i) out.v[i] = detail::wrap<T>(-detail::wide_t<T>(a.v[i]));
  return out;
}
// Vector-scalar forms of add/sub/max/min (the scalar broadcast to every lane).
#define AIEDSL_HOST_SCALAR_FORM(NAME)                                                        \
  template <typename T, unsigned N, typename S,                                              \
            typename = std::enable_if_t<std::is_arithmetic_v<S> || std::is_same_v<S, bfloat16>>> \
  vector<T, N> NAME(const vector<T, N> &a, S b) { return NAME(a, broadcast<T, N>(T(b))); }
AIEDSL_HOST_SCALAR_FORM(add)
AIEDSL_HOST_SCALAR_FORM(sub)
AIEDSL_HOST_SCALAR_FORM(max)
AIEDSL_HOST_SCALAR_FORM(min)
#undef AIEDSL_HOST_SCALAR_FORM
#define AIEDSL_HOST_SCALAR_FIRST(NAME)                                                       \
  template <typename T, unsigned N, typename S,                                              \
            typename = std::enable_if_t<std::is_arithmetic_v<S> || std::is_same_v<S, bfloat16>>> \
  vector<T, N> NAME(S a, const vector<T, N> &b) { return NAME(broadcast<T, N>(T(a)), b); }
AIEDSL_HOST_SCALAR_FIRST(add)
AIEDSL_HOST_SCALAR_FIRST(sub)
AIEDSL_HOST_SCALAR_FIRST(max)
AIEDSL_HOST_SCALAR_FIRST(min)
#undef AIEDSL_HOST_SCALAR_FIRST

// accumulate<L>(coeff, start, d0, d1, ...): lane l is the sum over k of coeff[start + k] *
// dk[l] (a weighted sum of vectors), in the accumulator for their products.
template <unsigned L, typename Acc, typename CT, unsigned CN, typename T, typename... Vs>
accum<Acc, L> accumulate(const accum<Acc, L> &acc, const vector<CT, CN> &coeff, unsigned start,
                         const vector<T, L> &d0, const Vs &...rest) {
  accum<Acc, L> out = acc;
  const vector<T, L> *data[] = {&d0, &rest...};
  // float lanes: a mac of each vector, its products emulated (detail::fp32_product)
  constexpr bool fp32 = std::is_same_v<T, float> && std::is_same_v<CT, float>;
  for (unsigned k = 0; k < 1 + sizeof...(rest); ++k) {
    if constexpr (fp32) detail::count_fp32_elem<L>(detail::fp32_mac);
    for (unsigned l = 0; l < L; ++l) {
      if constexpr (fp32)
        out.v[l] = detail::ftz(out.v[l] + detail::fp32_product(coeff.v[start + k], data[k]->v[l],
                                                               detail::fp32_safe));
      else
        out.v[l] += detail::wide_t<CT>(coeff.v[start + k]) * detail::wide_t<T>(data[k]->v[l]);
    }
  }
  if constexpr (!fp32) {
    AIEDSL_COUNT(VMAC, 1 + sizeof...(rest));
    AIEDSL_COUNT(MACS, L * (1 + sizeof...(rest)));
  }
  return out;
}
template <unsigned L, typename CT, unsigned CN, typename T, typename... Vs>
accum<typename detail::default_acc<T, CT>::type, L> accumulate(const vector<CT, CN> &coeff,
                                                               unsigned start,
                                                               const vector<T, L> &d0,
                                                               const Vs &...rest) {
  return accumulate<L>(zeros<typename detail::default_acc<T, CT>::type, L>(), coeff, start, d0,
                       rest...);
}

template <typename T, unsigned N> T reduce_min(const vector<T, N> &a) {
  AIEDSL_COUNT(VALU, aiedsl_log2<N>());
  T m = a.v[0];
  for (unsigned i = 1; i < N; ++i)
    if (detail::wide_t<T>(a.v[i]) < detail::wide_t<T>(m)) m = a.v[i];
  return m;
}

// acc + a * b (mac), acc - a * b (msc), -(a * b) (negmul), a * a (mul_square).
// A float lane's product is the emulated one (detail::fp32_product), rounded before the
// accumulator adds it, subtracts it or it is negated (the AIE API's _conf intrinsics).
template <typename Acc, typename T, unsigned N>
accum<Acc, N> mac(const accum<Acc, N> &acc, const vector<T, N> &a, const vector<T, N> &b) {
  accum<Acc, N> out = acc;
  detail::count_product<T, N>(detail::fp32_mac);
  for (unsigned i = 0; i < N; ++i) {
    out.v[i] += detail::lane_product(a.v[i], b.v[i]);
    if constexpr (std::is_same_v<T, float>) out.v[i] = detail::ftz(out.v[i]);
  }
  return out;
}
template <typename Acc, typename T, unsigned N, typename S,
          typename = std::enable_if_t<std::is_arithmetic_v<S> || std::is_same_v<S, bfloat16>>>
accum<Acc, N> mac(const accum<Acc, N> &acc, const vector<T, N> &a, S b) {
  return mac(acc, a, broadcast<T, N>(T(b)));
}
template <typename Acc, typename T, unsigned N>
accum<Acc, N> msc(const accum<Acc, N> &acc, const vector<T, N> &a, const vector<T, N> &b) {
  accum<Acc, N> out = acc;
  detail::count_product<T, N>(detail::fp32_mac);
  for (unsigned i = 0; i < N; ++i) {
    out.v[i] -= detail::lane_product(a.v[i], b.v[i]);
    if constexpr (std::is_same_v<T, float>) out.v[i] = detail::ftz(out.v[i]);
  }
  return out;
}
template <typename T, unsigned N>
accum<typename detail::default_acc<T>::type, N> negmul(const vector<T, N> &a,
                                                       const vector<T, N> &b) {
  accum<typename detail::default_acc<T>::type, N> out;
  detail::count_product<T, N>(detail::fp32_negmul);
  for (unsigned i = 0; i < N; ++i) out.v[i] = -detail::lane_product(a.v[i], b.v[i]);
  return out;
}
template <typename T, unsigned N>
accum<typename detail::default_acc<T>::type, N> mul_square(const vector<T, N> &a) {
  return mul(a, a);
}

// ---- 1/x and 1/sqrt(x) -------------------------------------------------------------------
// What the core computes, per architecture, as the AIE API (2026.1: jgmelber/aie_api) does it:
// AIE2 (__AIE_ARCH__ 20, and a build that names no device):
//  * float vectors: detail/aie2/elementary.hpp, elementary_vector_bits_impl<Inv / InvSqrt, 32,
//    float, float, N>: an integer seed and one Newton step, 16 lanes a step, in accfloat
//    (aie2_inv, aie2_invsqrt below): up to about 6.5e-4 relative error for invsqrt, 2 ulps for
//    inv (on [1, 2]);
//  * bfloat16 vectors, and bfloat16 scalars (elementary_bits_common_impl: the vector steps on
//    a vector of the value): the same steps with bf16 operands, each accfloat result converted
//    to bf16 (aie2_inv_bf16, aie2_invsqrt_bf16);
//  * float scalars: detail/elementary.hpp's generic elementary_bits_impl, T(1) / a and
//    T(1) / std::sqrt(a) in the core's scalar code: 1.0f / x and 1.0f / std::sqrt(x) here.
// AIE2P (__AIE_ARCH__ 21): every lane, float or bf16, goes through the scalar unit's inv /
// invsqrt instructions (llvm-aie aie2p_nlf.h: __builtin_aie2p_inv, __builtin_aie2p_invsqrt):
// float lanes by detail/elementary.hpp's generic per-lane loop into detail/aie2p/elementary.hpp's
// elementary_bits_impl<Inv / InvSqrt, float>, bf16 lanes (and scalars) by its
// elementary_vector_scalar_common, which converts the results back through accfloat. Their
// accuracy is not in these sources: 1.0f / x and 1.0f / std::sqrt(x) in float here, a bf16
// result rounded to nearest even.
// A conversion to bf16 the AIE API makes through accfloat rounds by the rounding mode on the
// core (reset: floor); here it rounds to nearest even and the call is noted when the mode is
// not conv_even (note_bf16), as every such conversion is.
namespace detail {
inline uint32_t float_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}
// One fp32 product of a float step: AIE2's plain mul_elem_16 / mac_elem_16 / msc_elem_16 /
// negmul_elem_16, which the AIE API's float steps call, follow AIE2_FP32_EMULATION_ACCURACY_FAST
// and _LOW (fp32_plain_accuracy; host_core.hpp says how the product is made and what is not
// known); msc is sub(acc, product), negmul neg(product): the product is rounded before the add.
inline float aie2_fmul(float a, float b) { return fp32_product(a, b, fp32_plain_accuracy()); }
constexpr unsigned fp32_mul_issues() { return fp32_multiplies(fp32_plain_accuracy()); }
// The steps' constants (elementary.hpp): inv's seed 0x7eb53567 (0x7eb5 for bf16), k1, k2;
// invsqrt's C1, C2, C3 (after rrrola's inv_sqrt), C2 * C3 evaluated in float as the API's
// constexpr product is. A bf16 step multiplies by k1 and C2 broadcast as bfloat16: 1.9375 and
// 0.703125 (nearest and floor agree).
constexpr float inv_k1 = 1.9395974f, inv_k2 = 1.436142f, isq_c2 = 0.703952253f,
                isq_c3 = 2.38924456f, isq_c2c3 = isq_c2 * isq_c3;
constexpr float inv_k1_bf16 = 1.9375f, isq_c2_bf16 = 0.703125f;
constexpr uint32_t isq_c1 = 0x5F1FFFF9u;
// AIE2's float 1/x: y = bits(0x7eb53567 - bits(x)) (an int32 vector sub: it wraps); then
// -(x * y) + k2, times y, times -k1 (negmul: this is -y1), and y1 * (2 - y1 * x) as
// negmul(-y1, mac(-y1, x, 2)). Past about 1.2e38 the seed is NaN; where the steps underflow, 0.
inline float aie2_inv(float x) {
  const float y = ftz(bits_float(0x7eb53567u - float_bits(x)));
  float acc = ftz(-aie2_fmul(x, y) + inv_k2);
  acc = aie2_fmul(acc, y);
  const float neg_y = -aie2_fmul(acc, inv_k1);
  const float r = ftz(aie2_fmul(neg_y, x) + 2.0f);
  return -aie2_fmul(neg_y, r);
}
// The bits of x halved as the API does it: accum<acc64>(bits).to_vector<int32>(1), a shift
// right by one rounded by the rounding mode (an odd float's bits round to even under
// conv_even, down under floor), then C1 minus that (an int32 vector sub: it wraps).
inline float isq_seed(float x) {
  const int64_t half = round_shift(int64_t(int32_t(float_bits(x))), 1);
  return ftz(bits_float(isq_c1 - uint32_t(half)));
}
// AIE2's float 1/sqrt(x): x2 = x * C2; y the seed; x2yy = C2C3 - x2 * (y * y) (msc: the
// product rounded, then the subtraction); y * x2yy.
inline float aie2_invsqrt(float x) {
  const float x2 = aie2_fmul(x, isq_c2);
  const float y = isq_seed(x);
  const float x2yy = ftz(isq_c2c3 - aie2_fmul(x2, aie2_fmul(y, y)));
  return aie2_fmul(y, x2yy);
}
// An accfloat step result converted to bf16 (to_vector<bfloat16>); a product of two bf16 values
// is exact in fp32 (8 + 8 significant bits), so each step below rounds once in fp32 at most.
inline float bf16_step(float acc) { return float(bfloat16::round_even(ftz(acc))); }
// AIE2's bf16 1/x: the seed 0x7eb5 - bits(x) (int16 sub), then the float steps with bf16
// operands, each result converted to bf16.
inline bfloat16 aie2_inv_bf16(bfloat16 x) {
  const float xf = ftz(float(x));
  const float y = ftz(float(bfloat16::from_bits(uint16_t(0x7eb5u - x.bits))));
  float t = bf16_step(-(xf * y) + inv_k2);
  t = bf16_step(t * y);
  const float neg_y = bf16_step(-(t * inv_k1_bf16));
  const float r = bf16_step(neg_y * xf + 2.0f);
  return bfloat16::round_even(ftz(-(neg_y * r)));
}
// AIE2's bf16 1/sqrt(x): x2 = bf16(x * C2); y = bf16(seed); yy = bf16(y * y);
// x2yy = bf16(C2C3 - x2 * yy) (msc_elem_16_2: one rounding); bf16(y * x2yy).
inline bfloat16 aie2_invsqrt_bf16(bfloat16 x) {
  const float x2 = bf16_step(ftz(float(x)) * isq_c2_bf16);
  const float y = bf16_step(isq_seed(float(x)));  // from the bits as they are
  const float yy = bf16_step(y * y);
  const float x2yy = bf16_step(isq_c2c3 - x2 * yy);
  return bfloat16::round_even(ftz(y * x2yy));
}
#if defined(__AIE_ARCH__) && __AIE_ARCH__ == 21
constexpr bool aie2_elementary = false;  // AIE2P: per lane on the scalar unit
#else
constexpr bool aie2_elementary = true;
#endif
// One lane of inv (isqrt false) or invsqrt (true) of a vector of T, or a scalar T.
template <typename T> T elementary_lane(T x, bool isqrt, bool scalar) {
  if constexpr (std::is_same_v<T, bfloat16>) {
    if (aie2_elementary) return isqrt ? aie2_invsqrt_bf16(x) : aie2_inv_bf16(x);
  } else if constexpr (std::is_same_v<T, float>) {
    if (aie2_elementary && !scalar) return isqrt ? aie2_invsqrt(x) : aie2_inv(x);
  }
  const float f = float(x);
  return cast<T>(isqrt ? 1.0f / std::sqrt(f) : 1.0f / f);
}
// What a vector inv / invsqrt issues, for `aiedsl kernel profile`: on AIE2, per 16 lanes (the
// API's num_op), its element multiplies (inv: negmul, mul, negmul, mac, negmul; invsqrt: mul,
// mul, msc, mul), each one bf16 multiply instruction for bf16 lanes and fp32_mul_issues() for
// float ones, and the integer subtraction that makes the seed; the accumulator adds and the
// conversions between the steps are not counted (no conversion is). On AIE2P each lane is a
// scalar instruction, which the profile does not count: one vector ALU op a call stands for it.
template <typename T, unsigned N> void count_elementary(unsigned multiplies) {
  if (!aie2_elementary || !(std::is_same_v<T, float> || std::is_same_v<T, bfloat16>)) {
    AIEDSL_COUNT(VALU, 1);
    return;
  }
  constexpr unsigned ops = N < 16 ? 1 : N / 16;
  const unsigned issues = std::is_same_v<T, float> ? fp32_mul_issues() : 1;
  AIEDSL_COUNT(VMAC, ops * multiplies * issues);
  AIEDSL_COUNT(MACS, ops * multiplies * 16);
  AIEDSL_COUNT(VALU, ops);
}
}  // namespace detail
template <typename T, unsigned N> vector<T, N> inv(const vector<T, N> &a) {
  if constexpr (std::is_same_v<T, bfloat16>) detail::note_bf16(detail::op_inv);
  detail::count_elementary<T, N>(5);
  vector<T, N> out;
  for (unsigned i = 0; i < N; ++i) out.v[i] = detail::elementary_lane(a.v[i], false, false);
  return out;
}
template <typename T> T inv(T x) {
  if constexpr (std::is_same_v<T, bfloat16>) detail::note_bf16(detail::op_inv);
  return detail::elementary_lane(x, false, true);
}
template <typename T, unsigned N> vector<T, N> invsqrt(const vector<T, N> &a) {
  if constexpr (std::is_same_v<T, bfloat16>) detail::note_bf16(detail::op_invsqrt);
  detail::count_elementary<T, N>(4);
  vector<T, N> out;
  for (unsigned i = 0; i < N; ++i) out.v[i] = detail::elementary_lane(a.v[i], true, false);
  return out;
}
template <typename T> T invsqrt(T x) {
  if constexpr (std::is_same_v<T, bfloat16>) detail::note_bf16(detail::op_invsqrt);
  return detail::elementary_lane(x, true, true);
}

// ---- conversions and shifts ------------------------------------------------------------------
// to_fixed<TR>(v, shift): v * 2^shift rounded to nearest, ties to even, saturated to TR,
// whatever the rounding and saturation modes. That is what the AIE API (2026.1, which mlir-aie
// ships: Xilinx/aie_api, include/aie_api/detail/aie2/elementary.hpp, Float2Fix) computes on
// AIE2 and AIE2P: it adds a magic number 1.0078125 * 2^(23 - shift) (and one 2^16 times
// larger for the upper half of a 32-bit result) in accfloat, which rounds to nearest even,
// with the saturation mode set to saturate for the call; its conversion table
// (include/aie_api/aie_doc.hpp, "Supported float to fixed conversions") says "Uses
// aie::rounding_mode::conv_even". (Only a bfloat16 input had a floor conversion: to_fixed_floor
// now, not covered here.) NaN gives 0 here; the core's result for it is not modelled.
template <typename TR = int32_t, unsigned N> vector<TR, N> to_fixed(const vector<float, N> &v,
                                                                   int shift = 0) {
  vector<TR, N> out;
  AIEDSL_COUNT(VALU, 1);
  const double lo = double(std::numeric_limits<TR>::min());
  const double hi = double(std::numeric_limits<TR>::max());
  for (unsigned i = 0; i < N; ++i) {
    const double x = double(v.v[i]) * std::ldexp(1.0, shift); // exact
    double r = std::floor(x);
    const double frac = x - r;
    if (frac > 0.5 || (frac == 0.5 && std::fmod(r, 2.0) != 0.0)) r += 1.0;
    out.v[i] = x != x ? TR(0) : TR(r < lo ? lo : r > hi ? hi : r);
  }
  return out;
}
// to_fixed<TR>(v, shift) of bfloat16 lanes: the same conversion (aie.hpp's to_fixed for a
// vector of bfloat16 runs the Float2Fix steps above on it, which first move the lanes into
// accfloat, exactly), so the bf16 value converted as a float is.
template <typename TR = int32_t, unsigned N> vector<TR, N> to_fixed(const vector<bfloat16, N> &v,
                                                                   int shift = 0) {
  vector<float, N> f;
  for (unsigned i = 0; i < N; ++i) f.v[i] = float(v.v[i]);
  return to_fixed<TR>(f, shift);
}
// to_float<TR>(v, shift): v / 2^shift as TR (float, or bfloat16 through accfloat, which the
// rounding mode rounds: detail/aie2/elementary.hpp, Fix2Float).
template <typename TR = float, typename T, unsigned N> vector<TR, N> to_float(const vector<T, N> &v,
                                                                             int shift = 0) {
  if constexpr (std::is_same_v<TR, bfloat16>) detail::note_bf16(detail::op_to_float);
  vector<TR, N> out;
  AIEDSL_COUNT(VALU, 1);
  for (unsigned i = 0; i < N; ++i)
    out.v[i] = detail::cast<TR>(float(std::ldexp(double(v.v[i]), -shift)));
  return out;
}
// upshift(v, s) and downshift(v, s): the AIE API's shift_bits_impl_common::run
// (detail/aie2/shift.hpp, which AIE2P uses too) moves the lanes into an accumulator of their
// type's (accum_tag_for_type: acc32 for 8- and 16-bit lanes, acc64 for 32-bit ones) shifted left
// by upshift, and takes to_vector<T>(downshift) of it. So an upshift is narrowed as to_vector
// narrows, by the saturation mode (none: the low bits; saturate and symmetric: clamped), after
// the accumulator's own upshift (which clamps under those modes too: detail::upshift); a
// downshift is an arithmetic shift right whatever the rounding mode (aie.hpp's downshift sets
// rounding_mode::floor for the call) and cannot overflow.
template <typename T, unsigned N> vector<T, N> upshift(const vector<T, N> &v, unsigned shift) {
  static_assert(std::is_integral_v<T>, "upshift takes integer vectors");
  using lane = typename detail::acc_storage<typename detail::default_acc<T>::type, T>::type;
  vector<T, N> out;
  AIEDSL_COUNT(VALU, 1);
  for (unsigned i = 0; i < N; ++i)
    out.v[i] = detail::narrow<T>(detail::upshift<lane>(v.v[i], int(shift)), 0);
  return out;
}
template <typename T, unsigned N> vector<T, N> downshift(const vector<T, N> &v, unsigned shift) {
  static_assert(std::is_integral_v<T>, "downshift takes integer vectors");
  vector<T, N> out;
  AIEDSL_COUNT(VALU, 1);
  // the lane is at most 64 bits wide in the accumulator: a shift past it leaves the sign
  for (unsigned i = 0; i < N; ++i) out.v[i] = T(int64_t(v.v[i]) >> (shift < 63 ? shift : 63));
  return out;
}
// The same bits seen as another element type (lanes N * sizeof(T) / sizeof(D)).
template <typename D, typename T, unsigned N>
vector<D, N * sizeof(T) / sizeof(D)> vector_cast(const vector<T, N> &v) {
  vector<D, N * sizeof(T) / sizeof(D)> out;
  std::memcpy(out.v.data(), v.v.data(), sizeof(T) * N);
  return out;
}

} // namespace aie

#endif // AIEDSL_HOST_HOST_ARITH_HPP
