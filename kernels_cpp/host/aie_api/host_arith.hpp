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
  AIEDSL_COUNT(VMAC, 1 + sizeof...(rest));
  AIEDSL_COUNT(MACS, L * (1 + sizeof...(rest)));
  for (unsigned k = 0; k < 1 + sizeof...(rest); ++k)
    for (unsigned l = 0; l < L; ++l)
      out.v[l] += detail::wide_t<CT>(coeff.v[start + k]) * detail::wide_t<T>(data[k]->v[l]);
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
template <typename Acc, typename T, unsigned N>
accum<Acc, N> mac(const accum<Acc, N> &acc, const vector<T, N> &a, const vector<T, N> &b) {
  accum<Acc, N> out = acc;
  AIEDSL_COUNT(VMAC, 1);
  AIEDSL_COUNT(MACS, N);
  for (unsigned i = 0; i < N; ++i)
    out.v[i] += detail::wide_t<T>(a.v[i]) * detail::wide_t<T>(b.v[i]);
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
  AIEDSL_COUNT(VMAC, 1);
  AIEDSL_COUNT(MACS, N);
  for (unsigned i = 0; i < N; ++i)
    out.v[i] -= detail::wide_t<T>(a.v[i]) * detail::wide_t<T>(b.v[i]);
  return out;
}
template <typename T, unsigned N>
accum<typename detail::default_acc<T>::type, N> negmul(const vector<T, N> &a,
                                                       const vector<T, N> &b) {
  accum<typename detail::default_acc<T>::type, N> out;
  AIEDSL_COUNT(VMAC, 1);
  AIEDSL_COUNT(MACS, N);
  for (unsigned i = 0; i < N; ++i)
    out.v[i] = -(detail::wide_t<T>(a.v[i]) * detail::wide_t<T>(b.v[i]));
  return out;
}
template <typename T, unsigned N>
accum<typename detail::default_acc<T>::type, N> mul_square(const vector<T, N> &a) {
  return mul(a, a);
}

// 1/x and 1/sqrt(x), lane by lane, computed in float and stored as T (bf16 rounds to nearest
// even); the hardware's results may differ in the last place. For bf16 the AIE API's Newton
// steps convert accfloat to bf16 (detail/aie2/elementary.hpp), which the rounding mode rounds.
namespace detail {
inline float ftz(float v) { return std::fpclassify(v) == FP_SUBNORMAL ? std::copysign(0.0f, v) : v; }
// AIE2's float vector inv (the AIE API's detail/aie2/elementary.hpp, ElementaryOp::Inv on float):
// the seed 0x7eb53567 - bits(x) as an int32, one refinement (k1 = 1.9395974, k2 = 1.436142) and
// one Newton step, each result flushed to zero as the core flushes subnormals. Within 2^122 it
// is taken as 1/x (the last place aside); beyond, the steps themselves: 0 where they underflow
// (|x| past about 2^124.9), NaN where the seed is (|x| past about 1.2e38), and an infinity of the
// other sign past about 2.4e38 and for an infinity.
inline float aie2_inv(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  const uint32_t mag = u & 0x7fffffffu;
  if (mag > 0x7f800000u) return x;  // NaN stays NaN
  if (mag < 0x7c800000u) return 1.0f / x;
  const uint32_t seed = 0x7eb53567u - u;
  float y;
  std::memcpy(&y, &seed, 4);
  y = ftz(y);
  float acc = ftz(ftz(-x * y) + 1.436142f);
  acc = ftz(acc * y);
  const float neg_y = ftz(-(acc * 1.9395974f));
  const float r = ftz(ftz(neg_y * x) + 2.0f);
  return ftz(-(neg_y * r));
}
}  // namespace detail
template <typename T, unsigned N> vector<T, N> inv(const vector<T, N> &a) {
  if constexpr (std::is_same_v<T, bfloat16>) detail::note_bf16(detail::op_inv);
  vector<T, N> out;
  AIEDSL_COUNT(VALU, 1);
#if defined(__AIE_ARCH__) && __AIE_ARCH__ == 21
  constexpr bool aie2_float = false;  // AIE2P: the scalar inv per lane, not modelled here
#else
  constexpr bool aie2_float = std::is_same_v<T, float>;
#endif
  for (unsigned i = 0; i < N; ++i)
    out.v[i] = aie2_float ? T(detail::aie2_inv(float(a.v[i])))
                          : detail::cast<T>(1.0f / float(a.v[i]));
  return out;
}
template <typename T> T inv(T x) {
  if constexpr (std::is_same_v<T, bfloat16>) detail::note_bf16(detail::op_inv);
  return detail::cast<T>(1.0f / float(x));
}
template <typename T, unsigned N> vector<T, N> invsqrt(const vector<T, N> &a) {
  if constexpr (std::is_same_v<T, bfloat16>) detail::note_bf16(detail::op_invsqrt);
  vector<T, N> out;
  AIEDSL_COUNT(VALU, 1);
  for (unsigned i = 0; i < N; ++i) out.v[i] = detail::cast<T>(1.0f / std::sqrt(float(a.v[i])));
  return out;
}
template <typename T> T invsqrt(T x) {
  if constexpr (std::is_same_v<T, bfloat16>) detail::note_bf16(detail::op_invsqrt);
  return detail::cast<T>(1.0f / std::sqrt(float(x)));
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
// Lanes shifted left (upshift) or right, arithmetically (downshift).
template <typename T, unsigned N> vector<T, N> upshift(const vector<T, N> &v, unsigned shift) {
  static_assert(std::is_integral_v<T>, "upshift takes integer vectors");
  vector<T, N> out;
  AIEDSL_COUNT(VALU, 1);
  for (unsigned i = 0; i < N; ++i)
    out.v[i] = T(typename std::make_unsigned<T>::type(v.v[i]) << shift);
  return out;
}
template <typename T, unsigned N> vector<T, N> downshift(const vector<T, N> &v, unsigned shift) {
  static_assert(std::is_integral_v<T>, "downshift takes integer vectors");
  vector<T, N> out;
  AIEDSL_COUNT(VALU, 1);
  for (unsigned i = 0; i < N; ++i) out.v[i] = T(v.v[i] >> shift);
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
