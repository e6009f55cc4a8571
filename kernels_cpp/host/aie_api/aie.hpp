// aie_api/aie.hpp -- aiedsl's HOST stand-in for the AIE API, in plain C++20.
//
// It lets the host's g++ compile an AIE kernel unchanged, so that `aiedsl kernel test` and
// `aiedsl sim --kernels native` can run the kernel's real C++ on numpy data. It computes what
// the hardware computes for the names below (same results, none of the speed); it is not the
// AIE API and only covers this subset. A kernel that uses anything else fails to compile with
// "'<name>' is not a member of 'aie'", which aiedsl reports as not covered by this header.
//
// Covered names (exactly these):
//   types:      bfloat16 (16-bit storage; float -> bfloat16 rounds to nearest even; += -= *= /=
//               in float, rounded back), acc32, acc64, accfloat, accauto, the core's scalar
//               names int8 .. uint64,
//               aie::vector<T, N = one 512-bit register> (operator[], get, set, size, a
//                                     constructor from lanes, extract<M>, insert, grow<M>),
//               aie::accum<Acc, N>  (to_vector<T>(shift), from_vector, = vector, converts to a
//                                     vector by to_vector), aie::mask<N> (test, set, clear,
//                                     count, from_uint32, to_uint32, ~ & |),
//               aie::mmul<M, K, N, TA, TB, Acc>  (size_A, size_B, size_C, default, from-vector
//                                     and from-accum constructors, mac, mul, to_vector<T>(shift),
//                                     to_accum)
//   functions:  aie::load_v<N>(p) (N defaults to a register), aie::store_v(p, v),
//               aie::zeros<T, N>() (an accumulator for an accumulator tag),
//               aie::broadcast<T, N>(x), aie::add/sub/max/min (vector or scalar on either
//               side; accumulator + vector), aie::mul(v, v), aie::mul(v, s), aie::mul_square,
//               aie::mac, aie::msc, aie::negmul, aie::abs, aie::neg, aie::accumulate<L>,
//               aie::bit_and/bit_or/bit_xor (vector or scalar), aie::bit_not,
//               aie::lt/le/gt/ge/eq/neq (-> mask), aie::select(a, b, mask) (b where set),
//               aie::reduce_add/reduce_max/reduce_min, aie::inv, aie::invsqrt, aie::exp2<R>,
//               aie::tanh<R>, aie::filter_even/filter_odd(v, step), aie::interleave_zip/unzip(a,
//               b, step), aie::concat, aie::extract<M>, aie::insert, aie::transpose(v, rows,
//               cols), aie::shuffle_up/down (shifted-in lanes zero here, undefined in the API),
//               aie::shuffle_up_fill/down_fill, aie::shuffle_up_rotate/down_rotate,
//               aie::begin_vector<N>, cbegin_vector, begin_restrict_vector,
//               cbegin_restrict_vector (*it loads, *it = v stores, ++it moves N on),
//               aie::vector_ldst_align, aie::vector_decl_align,
//               aie::rounding_mode, aie::saturation_mode, aie::set_rounding(m),
//               aie::get_rounding(), aie::set_saturation(m), aie::get_saturation()
//   macros:     AIE_PREPARE_FOR_PIPELINING, AIE_LOOP_MIN_ITERATION_COUNT(n), chess's
//               chess_prepare_for_pipelining, chess_loop_range, chess_unroll_loop,
//               chess_flatten_loop (empty here), C's restrict; event0(), event1() (no-ops)
//   not covered: the raw AIE2 intrinsics and their vector types (v16int32, ext_elem, ...),
//               aie::sliding_mul*, aie::lut and parallel lookups, block floating point
//               (bfp16ebs8), ups/srs as free functions
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
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#define AIEDSL_HOST_AIE_API 1
// What the AIE compilers accept and a host C++ compiler does not: C's `restrict`, the core's
// scalar type names, and the trace-event intrinsics (no-ops here: there is no trace unit).
#ifndef restrict
#define restrict __restrict
#endif
typedef int8_t int8;
typedef uint8_t uint8;
typedef int16_t int16;
typedef uint16_t uint16;
typedef int32_t int32;
typedef uint32_t uint32;
typedef int64_t int64;
typedef uint64_t uint64;
inline void event0() {}
inline void event1() {}
// Chess's loop pragmas, spelled as statements by kernels written for it: nothing on the host.
#define chess_prepare_for_pipelining
#define chess_loop_range(...)
#define chess_unroll_loop(...)
#define chess_flatten_loop
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
  // Arithmetic in float, the result rounded back to bf16 (as scalar bf16 code does on a core).
  bfloat16 &operator+=(float x) { return *this = bfloat16(float(*this) + x); }
  bfloat16 &operator-=(float x) { return *this = bfloat16(float(*this) - x); }
  bfloat16 &operator*=(float x) { return *this = bfloat16(float(*this) * x); }
  bfloat16 &operator/=(float x) { return *this = bfloat16(float(*this) / x); }
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

// What `aiedsl kernel profile` counts: vector multiply-type ops (VMAC), other vector ALU ops
// (VALU), lane movement (SHUFFLE), bytes loaded and stored by vector loads and stores, and the
// multiply-accumulates those ops perform (MACS). Scalar code is not counted.
namespace aiedsl_host {
enum unit : unsigned { VMAC, VALU, SHUFFLE, LOAD_BYTES, STORE_BYTES, MACS, UNITS };
inline uint64_t counts[UNITS] = {};
} // namespace aiedsl_host
#define AIEDSL_COUNT(unit, n) (aiedsl_host::counts[aiedsl_host::unit] += uint64_t(n))

extern "C" {
// The counts since the last reset, in aiedsl_host::unit order.
__attribute__((visibility("default"))) void aiedsl_profile(uint64_t *out, int reset) {
  for (unsigned i = 0; i < aiedsl_host::UNITS; ++i) {
    out[i] = aiedsl_host::counts[i];
    if (reset) aiedsl_host::counts[i] = 0;
  }
}
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
// Bytes a vector declared in memory is aligned to (alignas(aie::vector_decl_align)).
inline constexpr std::size_t vector_decl_align = 32;

template <typename T> inline constexpr bool is_acc_tag_v =
    std::is_same_v<T, acc32> || std::is_same_v<T, acc64> || std::is_same_v<T, accfloat>;

// A vector's lanes default to a native 512-bit register (aie::vector<bfloat16> has 32).
template <typename T, unsigned N = 64 / sizeof(T)> struct vector {
  std::array<T, N> v{};
  vector() = default;
  // vector<T, N>(x0, x1, ...): the first lanes given, the rest zero.
  template <typename... Ts, typename = std::enable_if_t<(sizeof...(Ts) >= 2 && sizeof...(Ts) <= N)>>
  vector(Ts... xs) : v{T(xs)...} {}
  static constexpr unsigned size() { return N; }
  // The idx-th M-lane part; that part replaced; the vector widened to M lanes (zeros above).
  template <unsigned M> vector<T, M> extract(unsigned idx) const {
    static_assert(N % M == 0, "extract: M must divide the vector");
    vector<T, M> out;
    for (unsigned i = 0; i < M; ++i) out.v[i] = v[idx * M + i];
    return out;
  }
  template <unsigned M> vector &insert(unsigned idx, const vector<T, M> &part) {
    for (unsigned i = 0; i < M; ++i) v[idx * M + i] = part.v[i];
    return *this;
  }
  template <unsigned M> vector<T, M> grow(unsigned idx = 0) const {
    vector<T, M> out;
    for (unsigned i = 0; i < N; ++i) out.v[idx * N + i] = v[i];
    return out;
  }
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
  template <typename T> accum &operator=(const vector<T, N> &x) {
    from_vector(x);
    return *this;
  }
  // An accumulator stored as a vector narrows by the modes, as to_vector<T>() does.
  template <typename T> operator vector<T, N>() const { return to_vector<T>(); }
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

template <unsigned N = 0, typename T> vector<T, N ? N : 64 / sizeof(T)> load_v(const T *p) {
  constexpr unsigned L = N ? N : 64 / sizeof(T);
  vector<T, L> out;
  std::memcpy(out.v.data(), p, sizeof(T) * L);
  AIEDSL_COUNT(LOAD_BYTES, sizeof(T) * L);
  return out;
}

template <typename T, unsigned N> void store_v(T *p, const vector<T, N> &x) {
  std::memcpy(p, x.v.data(), sizeof(T) * N);
  AIEDSL_COUNT(STORE_BYTES, sizeof(T) * N);
}

// zeros<T, N>(): a vector of T, or an accumulator when T is an accumulator tag (acc32, ...).
template <typename T, unsigned N>
std::conditional_t<is_acc_tag_v<T>, accum<T, N>, vector<T, N>> zeros() { return {}; }

template <typename T, unsigned N = 64 / sizeof(T)> vector<T, N> broadcast(T x) {
  vector<T, N> out;
  out.v.fill(x);
  return out;
}

#define AIEDSL_HOST_LANEWISE(NAME, EXPR)                                                     \
  template <typename T, unsigned N>                                                          \
  vector<T, N> NAME(const vector<T, N> &a, const vector<T, N> &b) {                          \
    vector<T, N> out;                                                                        \
    AIEDSL_COUNT(VALU, 1);                                                                   \
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
  AIEDSL_COUNT(VMAC, 1);
  AIEDSL_COUNT(MACS, N);
  for (unsigned i = 0; i < N; ++i)
    out.v[i] = detail::wide_t<T>(a.v[i]) * detail::wide_t<T>(b.v[i]);
  return out;
}

template <typename T, unsigned N, typename S,
          typename = std::enable_if_t<std::is_arithmetic_v<S> || std::is_same_v<S, bfloat16>>>
accum<typename detail::default_acc<T>::type, N> mul(const vector<T, N> &a, S s) {
  accum<typename detail::default_acc<T>::type, N> out;
  AIEDSL_COUNT(VMAC, 1);
  AIEDSL_COUNT(MACS, N);
  for (unsigned i = 0; i < N; ++i)
    out.v[i] = detail::wide_t<T>(a.v[i]) * detail::wide_t<T>(T(s));
  return out;
}

// A reduction takes log2(N) vector steps (halving the lanes each time).
template <unsigned N> constexpr unsigned aiedsl_log2(unsigned n = N) {
  return n <= 1 ? 0 : 1 + aiedsl_log2<N>(n / 2);
}
template <typename T, unsigned N> T reduce_add(const vector<T, N> &a) {
  AIEDSL_COUNT(VALU, aiedsl_log2<N>());
  detail::wide_t<T> s = 0;
  for (unsigned i = 0; i < N; ++i) s += detail::wide_t<T>(a.v[i]);
  return detail::narrow<T>(s, 0);
}

template <typename T, unsigned N> T reduce_max(const vector<T, N> &a) {
  AIEDSL_COUNT(VALU, aiedsl_log2<N>());
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
  mmul(const accum_type &acc) {
    for (unsigned i = 0; i < size_C; ++i) c[i] = storage(acc.v[i]);
  }
  accum_type to_accum() const {
    accum_type out;
    for (unsigned i = 0; i < size_C; ++i) out.v[i] = typename accum_type::storage(c[i]);
    return out;
  }
  template <typename T> mmul(const vector<T, size_C> &init, int shift = 0) {
    for (unsigned i = 0; i < size_C; ++i)
      c[i] = storage(detail::wide_t<T>(init.v[i])) * (1 << shift);
  }
  void mac(const vector<TA, size_A> &a, const vector<TB, size_B> &b) {
    AIEDSL_COUNT(VMAC, 1);
    AIEDSL_COUNT(MACS, M * K * N);
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

// ---- lane-wise logic, comparisons and masks -------------------------------------------------
#define AIEDSL_HOST_BITWISE(NAME, OP)                                                        \
  template <typename T, unsigned N>                                                          \
  vector<T, N> NAME(const vector<T, N> &a, const vector<T, N> &b) {                          \
    static_assert(std::is_integral_v<T>, #NAME " takes integer vectors");                    \
    vector<T, N> out;                                                                        \
    AIEDSL_COUNT(VALU, 1);                                                                   \
    for (unsigned i = 0; i < N; ++i) out.v[i] = T(a.v[i] OP b.v[i]);                         \
    return out;                                                                              \
  }                                                                                          \
  template <typename T, unsigned N, typename S,                                              \
            typename = std::enable_if_t<std::is_integral_v<S>>>                              \
  vector<T, N> NAME(const vector<T, N> &a, S b) { return NAME(a, broadcast<T, N>(T(b))); }
AIEDSL_HOST_BITWISE(bit_and, &)
AIEDSL_HOST_BITWISE(bit_or, |)
AIEDSL_HOST_BITWISE(bit_xor, ^)
#undef AIEDSL_HOST_BITWISE

template <typename T, unsigned N> vector<T, N> bit_not(const vector<T, N> &a) {
  vector<T, N> out;
  AIEDSL_COUNT(VALU, 1);
  for (unsigned i = 0; i < N; ++i) out.v[i] = T(~a.v[i]);
  return out;
}

// One bit per lane (aie::mask<N>).
template <unsigned N> struct mask {
  std::array<bool, N> b{};
  static constexpr unsigned size() { return N; }
  bool test(unsigned i) const { return b[i]; }
  void set(unsigned i) { b[i] = true; }
  void clear(unsigned i) { b[i] = false; }
  unsigned count() const {
    unsigned n = 0;
    for (bool x : b) n += x;
    return n;
  }
  static mask from_uint32(uint32_t bits) {
    mask m;
    for (unsigned i = 0; i < N && i < 32; ++i) m.b[i] = (bits >> i) & 1u;
    return m;
  }
  uint32_t to_uint32() const {
    uint32_t bits = 0;
    for (unsigned i = 0; i < N && i < 32; ++i) bits |= uint32_t(b[i]) << i;
    return bits;
  }
  mask operator~() const {
    mask m;
    for (unsigned i = 0; i < N; ++i) m.b[i] = !b[i];
    return m;
  }
  mask operator&(const mask &o) const {
    mask m;
    for (unsigned i = 0; i < N; ++i) m.b[i] = b[i] && o.b[i];
    return m;
  }
  mask operator|(const mask &o) const {
    mask m;
    for (unsigned i = 0; i < N; ++i) m.b[i] = b[i] || o.b[i];
    return m;
  }
};

#define AIEDSL_HOST_COMPARE(NAME, OP)                                                        \
  template <typename T, unsigned N> mask<N> NAME(const vector<T, N> &a, const vector<T, N> &b) { \
    mask<N> m;                                                                               \
    AIEDSL_COUNT(VALU, 1);                                                                   \
    for (unsigned i = 0; i < N; ++i)                                                         \
      m.b[i] = detail::wide_t<T>(a.v[i]) OP detail::wide_t<T>(b.v[i]);                       \
    return m;                                                                                \
  }                                                                                          \
  template <typename T, unsigned N, typename S,                                              \
            typename = std::enable_if_t<std::is_arithmetic_v<S> || std::is_same_v<S, bfloat16>>> \
  mask<N> NAME(const vector<T, N> &a, S b) { return NAME(a, broadcast<T, N>(T(b))); }           \
  template <typename T, unsigned N, typename S,                                              \
            typename = std::enable_if_t<std::is_arithmetic_v<S> || std::is_same_v<S, bfloat16>>> \
  mask<N> NAME(S a, const vector<T, N> &b) { return NAME(broadcast<T, N>(T(a)), b); }
AIEDSL_HOST_COMPARE(lt, <)
AIEDSL_HOST_COMPARE(le, <=)
AIEDSL_HOST_COMPARE(gt, >)
AIEDSL_HOST_COMPARE(ge, >=)
AIEDSL_HOST_COMPARE(eq, ==)
AIEDSL_HOST_COMPARE(neq, !=)
#undef AIEDSL_HOST_COMPARE

// select(a, b, m): lane i is b[i] where m is set, else a[i] (the AIE API's order).
template <typename T, unsigned N>
vector<T, N> select(const vector<T, N> &a, const vector<T, N> &b, const mask<N> &m) {
  vector<T, N> out;
  AIEDSL_COUNT(VALU, 1);
  for (unsigned i = 0; i < N; ++i) out.v[i] = m.b[i] ? b.v[i] : a.v[i];
  return out;
}
template <typename T, unsigned N, typename S,
          typename = std::enable_if_t<std::is_arithmetic_v<S> || std::is_same_v<S, bfloat16>>>
vector<T, N> select(S a, const vector<T, N> &b, const mask<N> &m) {
  return select(broadcast<T, N>(T(a)), b, m);
}
template <typename T, unsigned N, typename S,
          typename = std::enable_if_t<std::is_arithmetic_v<S> || std::is_same_v<S, bfloat16>>>
vector<T, N> select(const vector<T, N> &a, S b, const mask<N> &m) {
  return select(a, broadcast<T, N>(T(b)), m);
}

template <typename S, unsigned N,
          typename = std::enable_if_t<std::is_arithmetic_v<S> || std::is_same_v<S, bfloat16>>>
vector<S, N> select(S a, S b, const mask<N> &m) {
  return select(broadcast<S, N>(a), broadcast<S, N>(b), m);
}

// ---- arithmetic beyond add/sub/mul ---------------------------------------------------------
template <typename T, unsigned N> vector<T, N> abs(const vector<T, N> &a) {
  vector<T, N> out;
  AIEDSL_COUNT(VALU, 1);
  for (unsigned i = 0; i < N; ++i) {
    auto x = detail::wide_t<T>(a.v[i]);
    out.v[i] = detail::narrow<T>(x < 0 ? -x : x, 0);
  }
  return out;
}
template <typename T, unsigned N> vector<T, N> neg(const vector<T, N> &a) {
  vector<T, N> out;
  AIEDSL_COUNT(VALU, 1);
  for (unsigned i = 0; i < N; ++i) out.v[i] = detail::narrow<T>(-detail::wide_t<T>(a.v[i]), 0);
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
accum<typename detail::default_acc<T>::type, L> accumulate(const vector<CT, CN> &coeff,
                                                           unsigned start,
                                                           const vector<T, L> &d0,
                                                           const Vs &...rest) {
  return accumulate<L>(accum<typename detail::default_acc<T>::type, L>{}, coeff, start, d0,
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
accum<typename detail::default_acc<T>::type, N> negmul(const vector<T, N> &a, const vector<T, N> &b) {
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
// even); the hardware's results may differ in the last place.
template <typename T, unsigned N> vector<T, N> inv(const vector<T, N> &a) {
  vector<T, N> out;
  AIEDSL_COUNT(VALU, 1);
  for (unsigned i = 0; i < N; ++i) out.v[i] = T(1.0f / float(a.v[i]));
  return out;
}
template <typename T> T inv(T x) { return T(1.0f / float(x)); }
template <typename T, unsigned N> vector<T, N> invsqrt(const vector<T, N> &a) {
  vector<T, N> out;
  AIEDSL_COUNT(VALU, 1);
  for (unsigned i = 0; i < N; ++i) out.v[i] = T(1.0f / std::sqrt(float(a.v[i])));
  return out;
}
template <typename T> T invsqrt(T x) { return T(1.0f / std::sqrt(float(x))); }

// ---- lane movement -------------------------------------------------------------------------
// Lanes 0, 2, 4, ... (filter_even) or 1, 3, 5, ... (filter_odd) taken in groups of `step`.
template <typename T, unsigned N> vector<T, N / 2> filter_even(const vector<T, N> &a,
                                                                unsigned step = 1) {
  AIEDSL_COUNT(SHUFFLE, 1);
  vector<T, N / 2> out;
  unsigned k = 0;
  for (unsigned i = 0; i < N && k < N / 2; ++i)
    if ((i / step) % 2 == 0) out.v[k++] = a.v[i];
  return out;
}
template <typename T, unsigned N> vector<T, N / 2> filter_odd(const vector<T, N> &a,
                                                               unsigned step = 1) {
  AIEDSL_COUNT(SHUFFLE, 1);
  vector<T, N / 2> out;
  unsigned k = 0;
  for (unsigned i = 0; i < N && k < N / 2; ++i)
    if ((i / step) % 2 == 1) out.v[k++] = a.v[i];
  return out;
}
// interleave_zip: a's and b's groups of `step` lanes alternated, the first N lanes in .first,
// the rest in .second; interleave_unzip undoes it.
template <typename T, unsigned N>
std::pair<vector<T, N>, vector<T, N>> interleave_zip(const vector<T, N> &a, const vector<T, N> &b,
                                                     unsigned step = 1) {
  AIEDSL_COUNT(SHUFFLE, 1);
  std::array<T, 2 * N> all{};
  unsigned k = 0;
  for (unsigned g = 0; g < N; g += step)
    for (const vector<T, N> *src : {&a, &b})
      for (unsigned i = g; i < g + step && i < N; ++i) all[k++] = src->v[i];
  std::pair<vector<T, N>, vector<T, N>> out;
  for (unsigned i = 0; i < N; ++i) out.first.v[i] = all[i], out.second.v[i] = all[N + i];
  return out;
}
template <typename T, unsigned N>
std::pair<vector<T, N>, vector<T, N>> interleave_unzip(const vector<T, N> &a,
                                                       const vector<T, N> &b, unsigned step = 1) {
  AIEDSL_COUNT(SHUFFLE, 1);
  std::array<T, 2 * N> all{};
  for (unsigned i = 0; i < N; ++i) all[i] = a.v[i], all[N + i] = b.v[i];
  std::pair<vector<T, N>, vector<T, N>> out;
  unsigned ka = 0, kb = 0;
  for (unsigned i = 0; i < 2 * N; ++i) {
    if ((i / step) % 2 == 0) out.first.v[ka++] = all[i];
    else out.second.v[kb++] = all[i];
  }
  return out;
}
template <typename T, unsigned N>
vector<T, 2 * N> concat(const vector<T, N> &a, const vector<T, N> &b) {
  AIEDSL_COUNT(SHUFFLE, 1);
  vector<T, 2 * N> out;
  for (unsigned i = 0; i < N; ++i) out.v[i] = a.v[i], out.v[N + i] = b.v[i];
  return out;
}
// The idx-th M-lane part of a (a.extract<M>(idx) in the AIE API).
template <unsigned M, typename T, unsigned N> vector<T, M> extract(const vector<T, N> &a,
                                                                   unsigned idx) {
  static_assert(N % M == 0, "extract: M must divide the vector");
  vector<T, M> out;
  for (unsigned i = 0; i < M; ++i) out.v[i] = a.v[idx * M + i];
  return out;
}
template <typename T, unsigned N, unsigned M>
vector<T, N> insert(vector<T, N> a, unsigned idx, const vector<T, M> &part) {
  for (unsigned i = 0; i < M; ++i) a.v[idx * M + i] = part.v[i];
  return a;
}
// A rows x cols matrix held row-major in a, returned column-major (transposed).
template <typename T, unsigned N> vector<T, N> transpose(const vector<T, N> &a, unsigned rows,
                                                        unsigned cols) {
  AIEDSL_COUNT(SHUFFLE, 1);
  vector<T, N> out;
  for (unsigned r = 0; r < rows; ++r)
    for (unsigned c = 0; c < cols; ++c) out.v[c * rows + r] = a.v[r * cols + c];
  return out;
}

// ---- vector iterators: *it loads N elements, *it = v stores them, ++it moves N on --------------
template <typename T, unsigned N> struct vector_ref {
  T *p;
  operator vector<T, N>() const { return load_v<N>(p); }
  vector_ref &operator=(const vector<T, N> &x) {
    store_v(p, x);
    return *this;
  }
};
template <typename T, unsigned N> struct vector_iterator {
  T *p;
  vector_ref<T, N> operator*() const { return {p}; }
  vector_iterator &operator++() {
    p += N;
    return *this;
  }
  vector_iterator operator++(int) {
    vector_iterator old = *this;
    p += N;
    return old;
  }
  vector_iterator &operator+=(int k) {
    p += k * int(N);
    return *this;
  }
  bool operator!=(const vector_iterator &o) const { return p != o.p; }
  bool operator==(const vector_iterator &o) const { return p == o.p; }
};
template <typename T, unsigned N> struct const_vector_iterator {
  const T *p;
  vector<T, N> operator*() const { return load_v<N>(p); }
  const_vector_iterator &operator++() {
    p += N;
    return *this;
  }
  const_vector_iterator operator++(int) {
    const_vector_iterator old = *this;
    p += N;
    return old;
  }
  const_vector_iterator &operator+=(int k) {
    p += k * int(N);
    return *this;
  }
  bool operator!=(const const_vector_iterator &o) const { return p != o.p; }
  bool operator==(const const_vector_iterator &o) const { return p == o.p; }
};
template <unsigned N, typename T> vector_iterator<T, N> begin_vector(T *p) { return {p}; }
template <unsigned N, typename T> const_vector_iterator<T, N> cbegin_vector(const T *p) {
  return {p};
}
template <unsigned N, typename T> vector_iterator<T, N> begin_restrict_vector(T *p) { return {p}; }
template <unsigned N, typename T> const_vector_iterator<T, N> cbegin_restrict_vector(const T *p) {
  return {p};
}

// acc + v and acc - v: the vector widened into the accumulator's lanes.
template <typename Acc, typename T, unsigned N>
accum<Acc, N> add(const accum<Acc, N> &acc, const vector<T, N> &x) {
  accum<Acc, N> out = acc;
  AIEDSL_COUNT(VALU, 1);
  for (unsigned i = 0; i < N; ++i) out.v[i] += detail::wide_t<T>(x.v[i]);
  return out;
}
template <typename Acc, typename T, unsigned N>
accum<Acc, N> sub(const accum<Acc, N> &acc, const vector<T, N> &x) {
  accum<Acc, N> out = acc;
  AIEDSL_COUNT(VALU, 1);
  for (unsigned i = 0; i < N; ++i) out.v[i] -= detail::wide_t<T>(x.v[i]);
  return out;
}

// Lanes moved up (to higher indices) or down by n; the lanes that come in are the top (up) or
// bottom (down) n lanes of `fill` (_fill) or of v itself (_rotate).
template <typename T, unsigned N>
vector<T, N> shuffle_up_fill(const vector<T, N> &v, const vector<T, N> &fill, unsigned n) {
  AIEDSL_COUNT(SHUFFLE, 1);
  vector<T, N> out;
  for (unsigned i = 0; i < N; ++i) out.v[i] = i < n ? fill.v[N - n + i] : v.v[i - n];
  return out;
}
template <typename T, unsigned N>
vector<T, N> shuffle_down_fill(const vector<T, N> &v, const vector<T, N> &fill, unsigned n) {
  AIEDSL_COUNT(SHUFFLE, 1);
  vector<T, N> out;
  for (unsigned i = 0; i < N; ++i) out.v[i] = i + n < N ? v.v[i + n] : fill.v[i + n - N];
  return out;
}
// shuffle_up / shuffle_down: the lanes shifted in are undefined in the AIE API; zeros here.
template <typename T, unsigned N> vector<T, N> shuffle_up(const vector<T, N> &v, unsigned n) {
  return shuffle_up_fill(v, vector<T, N>{}, n);
}
template <typename T, unsigned N> vector<T, N> shuffle_down(const vector<T, N> &v, unsigned n) {
  return shuffle_down_fill(v, vector<T, N>{}, n);
}
template <typename T, unsigned N> vector<T, N> shuffle_up_rotate(const vector<T, N> &v, unsigned n) {
  return shuffle_up_fill(v, v, n % N);
}
template <typename T, unsigned N>
vector<T, N> shuffle_down_rotate(const vector<T, N> &v, unsigned n) {
  return shuffle_down_fill(v, v, n % N);
}

// 2^x and tanh(x) lane by lane (AIE2P has them in hardware), computed in float; exp2<R>(v)
// returns lanes of R (the input's type by default), from a vector or an accumulator.
template <typename R, typename V, typename F> auto aiedsl_float_lanes(const V &a, F f) {
  using T = std::remove_cv_t<std::remove_reference_t<decltype(a.v[0])>>;
  using Out = std::conditional_t<std::is_void_v<R>, T, R>;
  vector<Out, V::size()> out;
  AIEDSL_COUNT(VALU, 1);
  for (unsigned i = 0; i < V::size(); ++i) out.v[i] = Out(f(float(a.v[i])));
  return out;
}
template <typename R = void, typename V> auto exp2(const V &a) {
  return aiedsl_float_lanes<R>(a, [](float x) { return std::exp2(x); });
}
template <typename R = void, typename V> auto tanh(const V &a) {
  return aiedsl_float_lanes<R>(a, [](float x) { return std::tanh(x); });
}

} // namespace aie

#endif // AIEDSL_HOST_AIE_API_HPP
