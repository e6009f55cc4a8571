// aie_api/aie.hpp -- aiedsl's HOST stand-in for the AIE API, in plain C++20.
//
// It lets the host's g++ compile an AIE kernel unchanged, so that `aiedsl kernel test` and
// `aiedsl sim --kernels native` can run the kernel's real C++ on numpy data. It computes what
// the hardware computes for the names below (same results, none of the speed); it is not the
// AIE API and only covers this subset. A kernel that uses anything else fails to compile with
// "'<name>' is not a member of 'aie'", which aiedsl reports as not covered by this header.
//
// Covered names (exactly these):
//   types:      bfloat16 (16-bit storage; float -> bfloat16 rounds to nearest even),
//               acc32, acc64, accfloat, accauto,
//               aie::vector<T, N>   (operator[], get, set, size),
//               aie::accum<Acc, N>  (to_vector<T>(shift), from_vector),
//               aie::mmul<M, K, N, TA, TB, Acc>  (size_A, size_B, size_C, default and
//                                     from-vector constructors, mac, mul, to_vector<T>(shift))
//   functions:  aie::load_v<N>(p), aie::store_v(p, v), aie::zeros<T, N>(),
//               aie::broadcast<T, N>(x), aie::add(v, v), aie::sub(v, v), aie::mul(v, v),
//               aie::mul(v, s), aie::max(v, v), aie::min(v, v), aie::reduce_add(v),
//               aie::reduce_max(v), aie::vector_ldst_align,
//               aie::rounding_mode, aie::saturation_mode, aie::set_rounding(m),
//               aie::get_rounding(), aie::set_saturation(m), aie::get_saturation()
//   macros:     AIE_PREPARE_FOR_PIPELINING, AIE_LOOP_MIN_ITERATION_COUNT(n) (empty here)
//   cascade:    v16accfloat (the native 512-bit accumulator word), get_scd_v16accfloat(),
//               put_mcd(v16accfloat), aie::accum<accfloat, 16>(v16accfloat) and to_native(),
//               aie::mmul(accum) and to_accum(). The words a call gets come from the array the
//               test (or the simulator) hands in, the words it puts go to the array it hands
//               out, in order: aiedsl_cascade(in, in_words, out, out_words) sets them before a
//               call, and counts words read past the end or not written (aiedsl_cascade_error).
//
// Semantics chosen to match AIE2:
//   * integer accumulators hold exact products and sums (acc32 / acc64); to_vector<T>(shift)
//     shifts right arithmetically and rounds by the tile's rounding mode (reset: floor, i.e.
//     toward minus infinity), then narrows by its saturation mode (reset: none, keep the low
//     bits of T; saturate: clamp to T's range; symmetric: clamp to +-max). set_rounding and
//     set_saturation change the modes for every later to_vector, as the control registers do
//     on a core (one core per process here: the modes are per shared library);
//   * accfloat accumulates in float; to_vector<bfloat16>() rounds to nearest even whatever the
//     rounding mode (on the hardware the mode applies: a kernel narrowing accfloat to bf16
//     sets conv_even, as mm.cc does, to get what this header computes);
//   * mmul<M, K, N> multiplies a row-major M x K block by a row-major K x N block into a
//     row-major M x N accumulator, as aie::mmul does.

#ifndef AIEDSL_HOST_AIE_API_HPP
#define AIEDSL_HOST_AIE_API_HPP

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#define AIEDSL_HOST_AIE_API 1
#ifndef AIE_PREPARE_FOR_PIPELINING
#define AIE_PREPARE_FOR_PIPELINING
#endif
#ifndef AIE_LOOP_MIN_ITERATION_COUNT
#define AIE_LOOP_MIN_ITERATION_COUNT(x)
#endif

struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  bfloat16(float f) { // round to nearest, ties to even (NaN stays NaN)
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) {
      bits = uint16_t((u >> 16) | 0x40);
      return;
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    bits = uint16_t(u >> 16);
  }
  operator float() const {
    uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};
static_assert(sizeof(bfloat16) == 2, "bfloat16 is 16 bits");

struct acc32 {};
struct acc64 {};
struct accfloat {};
struct accauto {};

// One 512-bit cascade word as accfloat: what get_scd_v16accfloat / put_mcd move.
struct v16accfloat {
  float e[16];
};

namespace aiedsl_host {
inline const float *cascade_in = nullptr;
inline float *cascade_out = nullptr;
inline unsigned cascade_in_words = 0, cascade_out_words = 0, cascade_in_pos = 0,
                cascade_out_pos = 0, cascade_errors = 0;
} // namespace aiedsl_host

extern "C" {
// Hand a call its cascade: the words it will get and the room for the words it will put.
__attribute__((visibility("default"))) void aiedsl_cascade(const float *in, unsigned in_words,
                                                           float *out, unsigned out_words) {
  using namespace aiedsl_host;
  cascade_in = in, cascade_in_words = in_words, cascade_in_pos = 0;
  cascade_out = out, cascade_out_words = out_words, cascade_out_pos = 0;
  cascade_errors = 0;
}
// Words read past what was handed in or put past the room, plus words of room left unwritten.
__attribute__((visibility("default"))) unsigned aiedsl_cascade_error() {
  using namespace aiedsl_host;
  return cascade_errors + (cascade_out_words - cascade_out_pos) +
         (cascade_in_words - cascade_in_pos);
}
}

inline v16accfloat get_scd_v16accfloat() {
  using namespace aiedsl_host;
  v16accfloat w{};
  if (cascade_in && cascade_in_pos < cascade_in_words)
    std::memcpy(w.e, cascade_in + 16 * cascade_in_pos, sizeof w.e);
  else
    ++cascade_errors; // the hardware would stall here: nothing more comes down the cascade
  ++cascade_in_pos;
  return w;
}

inline void put_mcd(const v16accfloat &w) {
  using namespace aiedsl_host;
  if (cascade_out && cascade_out_pos < cascade_out_words)
    std::memcpy(cascade_out + 16 * cascade_out_pos, w.e, sizeof w.e);
  else
    ++cascade_errors; // the hardware would stall: nobody takes more words
  ++cascade_out_pos;
}

namespace aie {

// The tile's rounding and saturation modes (the crRnd / crSat control registers).
enum class rounding_mode : unsigned {
  floor, ceil, symmetric_floor, symmetric_ceil, positive_inf, negative_inf, symmetric_inf,
  symmetric_zero, conv_even, conv_odd
};
enum class saturation_mode : unsigned { none, truncate, saturate, symmetric };

namespace detail {
inline rounding_mode g_rounding = rounding_mode::floor;     // reset values
inline saturation_mode g_saturation = saturation_mode::none;

// x / 2^shift, rounded by the current mode (exact integer arithmetic).
inline int64_t round_shift(int64_t x, int shift) {
  if (shift <= 0) return x;
  const int64_t q = x >> shift;                 // floor
  const int64_t rem = x - (q << shift);         // 0 <= rem < 2^shift
  if (rem == 0) return q;
  const int64_t half = int64_t(1) << (shift - 1);
  const bool neg = x < 0;
  switch (g_rounding) {
  case rounding_mode::floor: return q;
  case rounding_mode::ceil: return q + 1;
  case rounding_mode::symmetric_floor: return neg ? q + 1 : q;   // toward zero
  case rounding_mode::symmetric_ceil: return neg ? q : q + 1;    // away from zero
  default: break;
  }
  if (rem != half) return rem > half ? q + 1 : q;                // to nearest
  switch (g_rounding) {                                          // a tie
  case rounding_mode::positive_inf: return q + 1;
  case rounding_mode::negative_inf: return q;
  case rounding_mode::symmetric_inf: return neg ? q : q + 1;
  case rounding_mode::symmetric_zero: return neg ? q + 1 : q;
  case rounding_mode::conv_even: return (q & 1) ? q + 1 : q;
  default: return (q & 1) ? q : q + 1;                           // conv_odd
  }
}
} // namespace detail

inline void set_rounding(rounding_mode m) { detail::g_rounding = m; }
inline rounding_mode get_rounding() { return detail::g_rounding; }
inline void set_saturation(saturation_mode m) { detail::g_saturation = m; }
inline saturation_mode get_saturation() { return detail::g_saturation; }

namespace detail {
template <typename Acc, typename T> struct acc_storage;
template <typename T> struct acc_storage<acc32, T> { using type = int64_t; };
template <typename T> struct acc_storage<acc64, T> { using type = int64_t; };
template <typename T> struct acc_storage<accfloat, T> { using type = float; };
template <typename T> struct acc_storage<accauto, T> {
  using type = std::conditional_t<std::is_integral_v<T>, int64_t, float>;
};
// The accumulator AIE2 picks for products of T.
template <typename T> struct default_acc {
  using type = std::conditional_t<std::is_integral_v<T>,
                                  std::conditional_t<(sizeof(T) >= 4), acc64, acc32>, accfloat>;
};
template <typename T> using wide_t = std::conditional_t<std::is_integral_v<T>, int64_t, float>;

template <typename T, typename S> T narrow(S x, int shift) {
  if constexpr (std::is_integral_v<T>) {
    int64_t v = round_shift(int64_t(x), shift);
    const int64_t hi = int64_t(std::numeric_limits<T>::max());
    const int64_t lo = int64_t(std::numeric_limits<T>::min());
    if (g_saturation == saturation_mode::saturate)
      v = v > hi ? hi : (v < lo ? lo : v);
    else if (g_saturation == saturation_mode::symmetric)
      v = v > hi ? hi : (v < (std::is_signed_v<T> ? -hi : 0) ? (std::is_signed_v<T> ? -hi : 0)
                                                                : v);
    return T(typename std::make_unsigned<T>::type(v));     // none: keep the low bits
  } else {
    return T(float(x));                                    // bfloat16 rounds to nearest even
  }
}
} // namespace detail

struct vector_ldst_align {};

template <typename T, unsigned N> struct vector {
  std::array<T, N> v{};
  static constexpr unsigned size() { return N; }
  T &operator[](unsigned i) { return v[i]; }
  const T &operator[](unsigned i) const { return v[i]; }
  T get(unsigned i) const { return v[i]; }
  void set(T x, unsigned i) { v[i] = x; }
};

template <typename Acc, unsigned N> struct accum {
  using storage = typename detail::acc_storage<Acc, float>::type;
  std::array<storage, N> v{};
  accum() = default;
  // The native 512-bit word (accfloat x 16 only: the cascade's word).
  template <typename W, typename = std::enable_if_t<std::is_same_v<W, v16accfloat> &&
                                                    std::is_same_v<Acc, accfloat> && N == 16>>
  accum(const W &w) {
    for (unsigned i = 0; i < N; ++i) v[i] = w.e[i];
  }
  v16accfloat to_native() const {
    static_assert(std::is_same_v<Acc, accfloat> && N == 16, "to_native: accfloat x 16 only");
    v16accfloat w;
    for (unsigned i = 0; i < N; ++i) w.e[i] = v[i];
    return w;
  }
  operator v16accfloat() const { return to_native(); }
  static constexpr unsigned size() { return N; }
  template <typename T> vector<T, N> to_vector(int shift = 0) const {
    vector<T, N> out;
    for (unsigned i = 0; i < N; ++i) out.v[i] = detail::narrow<T>(v[i], shift);
    return out;
  }
  template <typename T> void from_vector(const vector<T, N> &x, int shift = 0) {
    for (unsigned i = 0; i < N; ++i) v[i] = storage(detail::wide_t<T>(x.v[i])) * (1 << shift);
  }
};

template <unsigned N, typename T> vector<T, N> load_v(const T *p) {
  vector<T, N> out;
  std::memcpy(out.v.data(), p, sizeof(T) * N);
  return out;
}

template <typename T, unsigned N> void store_v(T *p, const vector<T, N> &x) {
  std::memcpy(p, x.v.data(), sizeof(T) * N);
}

template <typename T, unsigned N> vector<T, N> zeros() { return vector<T, N>{}; }

template <typename T, unsigned N> vector<T, N> broadcast(T x) {
  vector<T, N> out;
  out.v.fill(x);
  return out;
}

#define AIEDSL_HOST_LANEWISE(NAME, EXPR)                                                     \
  template <typename T, unsigned N>                                                          \
  vector<T, N> NAME(const vector<T, N> &a, const vector<T, N> &b) {                          \
    vector<T, N> out;                                                                        \
    for (unsigned i = 0; i < N; ++i) {                                                       \
      auto x = detail::wide_t<T>(a.v[i]), y = detail::wide_t<T>(b.v[i]);                     \
      out.v[i] = detail::narrow<T>(EXPR, 0);                                                 \
    }                                                                                        \
    return out;                                                                              \
  }
AIEDSL_HOST_LANEWISE(add, x + y)
AIEDSL_HOST_LANEWISE(sub, x - y)
AIEDSL_HOST_LANEWISE(max, (x > y ? x : y))
AIEDSL_HOST_LANEWISE(min, (x < y ? x : y))
#undef AIEDSL_HOST_LANEWISE

template <typename T, unsigned N>
accum<typename detail::default_acc<T>::type, N> mul(const vector<T, N> &a, const vector<T, N> &b) {
  accum<typename detail::default_acc<T>::type, N> out;
  for (unsigned i = 0; i < N; ++i)
    out.v[i] = detail::wide_t<T>(a.v[i]) * detail::wide_t<T>(b.v[i]);
  return out;
}

template <typename T, unsigned N, typename S,
          typename = std::enable_if_t<std::is_arithmetic_v<S> || std::is_same_v<S, bfloat16>>>
accum<typename detail::default_acc<T>::type, N> mul(const vector<T, N> &a, S s) {
  accum<typename detail::default_acc<T>::type, N> out;
  for (unsigned i = 0; i < N; ++i)
    out.v[i] = detail::wide_t<T>(a.v[i]) * detail::wide_t<T>(T(s));
  return out;
}

template <typename T, unsigned N> T reduce_add(const vector<T, N> &a) {
  detail::wide_t<T> s = 0;
  for (unsigned i = 0; i < N; ++i) s += detail::wide_t<T>(a.v[i]);
  return detail::narrow<T>(s, 0);
}

template <typename T, unsigned N> T reduce_max(const vector<T, N> &a) {
  T m = a.v[0];
  for (unsigned i = 1; i < N; ++i)
    if (detail::wide_t<T>(a.v[i]) > detail::wide_t<T>(m)) m = a.v[i];
  return m;
}

template <unsigned M, unsigned K, unsigned N, typename TA, typename TB, typename Acc = accauto>
struct mmul {
  static constexpr unsigned size_A = M * K;
  static constexpr unsigned size_B = K * N;
  static constexpr unsigned size_C = M * N;
  using storage = typename detail::acc_storage<Acc, TA>::type;
  std::array<storage, size_C> c{};

  using accum_type = accum<typename detail::default_acc<TA>::type, size_C>;
  mmul() = default;
  explicit mmul(const accum_type &acc) {
    for (unsigned i = 0; i < size_C; ++i) c[i] = storage(acc.v[i]);
  }
  accum_type to_accum() const {
    accum_type out;
    for (unsigned i = 0; i < size_C; ++i) out.v[i] = typename accum_type::storage(c[i]);
    return out;
  }
  template <typename T> explicit mmul(const vector<T, size_C> &init, int shift = 0) {
    for (unsigned i = 0; i < size_C; ++i)
      c[i] = storage(detail::wide_t<T>(init.v[i])) * (1 << shift);
  }
  void mac(const vector<TA, size_A> &a, const vector<TB, size_B> &b) {
    for (unsigned i = 0; i < M; ++i)
      for (unsigned j = 0; j < N; ++j) {
        storage s = c[i * N + j];
        for (unsigned k = 0; k < K; ++k)
          s += storage(detail::wide_t<TA>(a.v[i * K + k])) *
               storage(detail::wide_t<TB>(b.v[k * N + j]));
        c[i * N + j] = s;
      }
  }
  void mul(const vector<TA, size_A> &a, const vector<TB, size_B> &b) {
    c.fill(storage(0));
    mac(a, b);
  }
  template <typename T> vector<T, size_C> to_vector(int shift = 0) const {
    vector<T, size_C> out;
    for (unsigned i = 0; i < size_C; ++i) out.v[i] = detail::narrow<T>(c[i], shift);
    return out;
  }
};

} // namespace aie

#endif // AIEDSL_HOST_AIE_API_HPP
