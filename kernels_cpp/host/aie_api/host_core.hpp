// host_core.hpp -- part of aiedsl's host AIE API header: modes, vector, accum, loads
// and stores, basic arithmetic, mmul.
// Include aie.hpp, not this file.

#ifndef AIEDSL_HOST_HOST_CORE_HPP
#define AIEDSL_HOST_HOST_CORE_HPP

namespace aie {

// The tile's rounding and saturation modes (the crRnd / crSat control registers).
enum class rounding_mode : unsigned {
  floor, ceil, symmetric_floor, symmetric_ceil, positive_inf, negative_inf, symmetric_inf,
  symmetric_zero, conv_even, conv_odd
};
// As the AIE API numbers them: truncate is its deprecated name for saturate (both 1), so a
// kernel setting truncate (Vitis vision's do) clamps as the hardware does.
enum class saturation_mode : unsigned { none = 0, saturate = 1, truncate = 1, symmetric = 3 };

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

namespace detail {
// What converted to bfloat16, in the order of aiedsl/kernels/faults.py's BF16_OPS.
enum bf16_op : int { op_accum_to_vector, op_mmul_to_vector, op_add, op_sub, op_reduce_add,
                     op_to_float, op_inv, op_invsqrt, op_scalar };
// A conversion from float to bfloat16 that the core makes by its accumulator-to-vector
// conversion, which rounds by the rounding mode (the AIE API's set_rounding: "the rounding
// mode used in accumulator to vector conversions"), reset to floor. Only conv_even rounds as
// the numpy references and this header do (the other round-to-nearest modes break ties
// otherwise), so under any other mode the conversion is recorded for aiedsl to report
// (aiedsl_bf16_rounding); the result is still rounded to nearest even here.
inline void note_bf16(bf16_op op) {
  if (g_rounding == rounding_mode::conv_even) return;
  if (aiedsl_host::bf16_rounding_count++ == 0) {
    aiedsl_host::bf16_rounding_first[0] = op;
    aiedsl_host::bf16_rounding_first[1] = int64_t(g_rounding);
  }
}
// x as T; a bfloat16 rounded to nearest even without a note (the caller notes the operation
// when the AIE API converts through the accumulator there).
template <typename T, typename S> T cast(S x) {
  if constexpr (std::is_same_v<T, bfloat16>) return bfloat16::round_even(float(x));
  else return T(x);
}
} // namespace detail

} // namespace aie

// A float the kernel's C++ converts to bfloat16 at run time: Peano compiles it to the same
// accumulator-to-bf16 conversion (llvm-aie, AIELegalizerHelper.cpp: G_FPTRUNC and scalar bf16
// G_FADD/G_FSUB become the accfloat-to-bf16 intrinsic), so it rounds by the mode too. A
// constant the compiler folds (__builtin_constant_p) and a value bf16 holds exactly convert
// alike under every mode, so only the others are noted.
inline bfloat16::bfloat16(float f) : bits(round_even(f).bits) {
  if (!__builtin_constant_p(f) && f == f && float(*this) != f)
    aie::detail::note_bf16(aie::detail::op_scalar);
}

namespace aie {

inline void set_rounding(rounding_mode m) { detail::g_rounding = m; }
inline rounding_mode get_rounding() { return detail::g_rounding; }
inline void set_saturation(saturation_mode m) { detail::g_saturation = m; }
inline saturation_mode get_saturation() { return detail::g_saturation; }

} // namespace aie

namespace aie {
namespace detail {
// v (exact) rounded to a whole number by rounding mode `mode` (the tile's when not given):
// round_shift's rules, for a value that is not an integer scaled by a power of two.
inline double round_whole(double v, rounding_mode mode) {
  const double low = std::floor(v), frac = v - low, high = low + 1;
  if (frac == 0) return low;
  const bool neg = v < 0;
  switch (mode) {
  case rounding_mode::floor: return low;
  case rounding_mode::ceil: return high;
  case rounding_mode::symmetric_floor: return neg ? high : low;
  case rounding_mode::symmetric_ceil: return neg ? low : high;
  default: break;
  }
  if (frac != 0.5) return frac > 0.5 ? high : low;
  const bool odd = std::fmod(low, 2.0) != 0;
  switch (mode) {
  case rounding_mode::positive_inf: return high;
  case rounding_mode::negative_inf: return low;
  case rounding_mode::symmetric_inf: return neg ? low : high;
  case rounding_mode::symmetric_zero: return neg ? high : low;
  case rounding_mode::conv_even: return odd ? high : low;
  default: return odd ? low : high;                              // conv_odd
  }
}

inline double round_whole(double v) { return round_whole(v, g_rounding); }

// AM020 ("Floating-Point Vector Unit"): "Denormalized numbers are not supported by the AIE-ML
// floating-point data path": a subnormal operand or step result is taken as a zero of its sign
// (what the core puts in its place is not said there).
inline float ftz(float v) {
  return std::fpclassify(v) == FP_SUBNORMAL ? std::copysign(0.0f, v) : v;
}

// ---- the fp32 multiply, emulated -------------------------------------------------------------
// Neither AIE2 nor AIE2P has an fp32 multiplier: llvm-aie's intrinsic headers make a product of
// float vectors of bf16 multiplies (clang/lib/Headers/aiev2/aiev2_core.h, mul_elem_16_accuracy_*;
// aie2p/aie2p_vmult.h, mul_elem_32_accuracy_*_inner). Each operand is split into bf16 pieces,
// each the remainder so far converted to bf16 (to_v16bfloat16 / to_v32bfloat16, which round by
// the tile's rounding mode; floor on AIE2 under AIE2_FP32_EMULATION_SET_RND_MODE), each
// remainder an msc of the piece and a vector of ones (exact); the products of the pieces (exact
// in fp32) are summed in accfloat in a fixed order. The AIE API's aie::mul/mac/msc/negmul of
// float vectors call the _conf intrinsics (detail/aie2{,p}/mul_acc32_fp.hpp:
// mul_elem_16_conf, mul_elem_32_conf), which both headers make of the default ("safe") steps
// whatever is defined; mac and msc then add or subtract the rounded product (aiev2_core.h's
// mac_elem_16_conf: add(acc, p); aie2p's mac_elem_32_accuracy_safe_inner: add_conf(acc, tmp)),
// negmul negates it. AIE2's plain intrinsics (mul_elem_16, mac_elem_16, ..., mul_4x8_8x4 of
// floats), which aie::inv / aie::invsqrt of float vectors and a float aie::mmul's mul() call,
// follow AIE2_FP32_EMULATION_ACCURACY_FAST / _LOW; AIE2P's are the safe ones. How accfloat
// rounds each add is not in these sources: to nearest even here (and the three-term addmac
// that ends AIE2's plain mac_elem_16: the chain's sum, then the accumulator). aiedsl's numpy
// model is aiedsl/kernels/fp32_emulation.py, the same steps.
enum fp32_accuracy : int { fp32_safe, fp32_fast, fp32_low };
// The variant AIE2's plain intrinsics follow (as aiev2_core.h #defines them); AIE2P's: safe.
constexpr fp32_accuracy fp32_plain_accuracy() {
#if defined(__AIE_ARCH__) && __AIE_ARCH__ == 21
  return fp32_safe;
#elif defined(AIE2_FP32_EMULATION_ACCURACY_FAST)
  return fp32_fast;
#elif defined(AIE2_FP32_EMULATION_ACCURACY_LOW)
  return fp32_low;
#else
  return fp32_safe;
#endif
}
// bf16 multiply instructions one vector op of a variant issues: the remainders' msc (4; 2 for
// low) and the products (9, 6, 3).
constexpr unsigned fp32_multiplies(fp32_accuracy a) {
  return a == fp32_fast ? 10 : a == fp32_low ? 5 : 13;
}
// The mode the split rounds by.
inline rounding_mode fp32_split_mode() {
#if defined(AIE2_FP32_EMULATION_SET_RND_MODE) && !(defined(__AIE_ARCH__) && __AIE_ARCH__ == 21)
  return rounding_mode::floor;  // aiev2_core.h's set_rnd(0) around the split
#else
  return g_rounding;
#endif
}
// v converted to bf16 as an accumulator-to-bf16 conversion does: 8 significant bits, rounded by
// `mode`; infinities and NaNs pass, subnormals are zeros, past bf16's largest an infinity.
inline float bf16_by_mode(float v, rounding_mode mode) {
  v = ftz(v);
  if (!std::isfinite(v) || v == 0.0f) return v;
  int e;
  std::frexp(double(v), &e);
  const double step = std::ldexp(1.0, e - 8), r = round_whole(double(v) / step, mode) * step;
  if (std::fabs(r) > double(std::numeric_limits<float>::max()))
    return std::copysign(std::numeric_limits<float>::infinity(), v);
  return ftz(float(r));
}
// x split into `pieces` bf16 values (out[0] the largest).
inline void fp32_split(float x, unsigned pieces, rounding_mode mode, float *out) {
  float rest = ftz(x);
  for (unsigned i = 0; i < pieces; ++i) {
    out[i] = bf16_by_mode(rest, mode);
    rest = ftz(rest - out[i]);  // exact
  }
}
// x * y as the emulation `a` makes it: the products of the pieces (x's, y's: 0 the largest),
// in the header's order, each exact, summed in fp32.
inline float fp32_product(float x, float y, fp32_accuracy a) {
  static constexpr unsigned char safe[9][2] = {{2, 2}, {2, 1}, {1, 2}, {0, 2}, {1, 1},
                                               {2, 0}, {1, 0}, {0, 1}, {0, 0}};
  static constexpr unsigned char fast[6][2] = {{0, 2}, {1, 1}, {2, 0}, {1, 0}, {0, 1}, {0, 0}};
  static constexpr unsigned char low[3][2] = {{1, 0}, {0, 1}, {0, 0}};
  const unsigned char(*order)[2] = a == fp32_fast ? fast : a == fp32_low ? low : safe;
  const unsigned n = a == fp32_fast ? 6 : a == fp32_low ? 3 : 9;
  const rounding_mode mode = fp32_split_mode();
  float px[3] = {}, py[3] = {};
  fp32_split(x, a == fp32_low ? 2 : 3, mode, px);
  fp32_split(y, a == fp32_low ? 2 : 3, mode, py);
  float t = ftz(px[order[0][0]] * py[order[0][1]]);
  for (unsigned i = 1; i < n; ++i) t = ftz(t + ftz(px[order[i][0]] * py[order[i][1]]));
  return t;
}
// What an element-wise product op of N float lanes issues, for `aiedsl kernel profile`: per
// vector op (16 lanes on AIE2, mul_elem_16_conf; 32 on AIE2P, mul_elem_32_conf) the safe
// variant's 13 bf16 multiplies; on AIE2P also its eight accumulator adds; and one accumulator
// op for the product's use (mac's add, msc's sub; on AIE2 negmul's neg too, where AIE2P negates
// each product in the multiplier).
enum fp32_use : int { fp32_mul, fp32_mac, fp32_negmul };
template <unsigned N> void count_fp32_elem(fp32_use use) {
#if defined(__AIE_ARCH__) && __AIE_ARCH__ == 21
  constexpr unsigned lanes = 32, adds = 8;
  const unsigned tail = use == fp32_mac ? 1 : 0;
#else
  constexpr unsigned lanes = 16, adds = 0;
  const unsigned tail = use == fp32_mul ? 0 : 1;
#endif
  constexpr unsigned ops = N < lanes ? 1 : N / lanes;
  AIEDSL_COUNT(VMAC, ops * fp32_multiplies(fp32_safe));
  AIEDSL_COUNT(VALU, ops * (adds + tail));
  AIEDSL_COUNT(MACS, N);
}
} // namespace detail
} // namespace aie

// The calling core's modes, in aie::rounding_mode's and aie::saturation_mode's order. A core's
// control registers are its own, but a process may run many cores' kernels (`aiedsl sim
// --kernels native`) and a core may call kernels from several libraries: aiedsl keeps the
// modes per core, sets them before each call and reads them back after it.
extern "C" {
__attribute__((visibility("default"))) void aiedsl_set_modes(unsigned rounding,
                                                             unsigned saturation) {
  aie::detail::g_rounding = aie::rounding_mode(rounding);
  aie::detail::g_saturation = aie::saturation_mode(saturation);
}
__attribute__((visibility("default"))) void aiedsl_get_modes(unsigned *modes) {
  modes[0] = unsigned(aie::detail::g_rounding);
  modes[1] = unsigned(aie::detail::g_saturation);
}
}

namespace aie {

namespace detail {
// An integer accumulator lane is as wide as the register's: 32 bits of acc32, 64 of acc64 (a
// 512-bit register is 16 lanes of 32 bits or 8 of 64 on AIE2 and AIE2P). A lane is stored in an
// integer of its width, so every write keeps its low bits, as the core's does (C++20 converts to
// a narrower signed integer modulo 2^bits); the arithmetic is done in 64 bits or unsigned.
template <typename Acc, typename T> struct acc_storage;
template <typename T> struct acc_storage<acc32, T> { using type = int32_t; };
template <typename T> struct acc_storage<acc64, T> { using type = int64_t; };
template <typename T> struct acc_storage<accfloat, T> { using type = float; };
// The accumulator the AIE API picks for products of A and B (detail/mul.hpp,
// default_accum_bits): 32 bits for 8- and 16-bit integers, 64 when either is 32 bits (its 48
// is a 64-bit lane on AIE2 and AIE2P), accfloat for floating point.
template <typename A, typename B = A> struct default_acc {
  using type = std::conditional_t<std::is_integral_v<A>,
                                  std::conditional_t<(sizeof(A) >= 4 || sizeof(B) >= 4), acc64,
                                                     acc32>,
                                  accfloat>;
};
template <typename T> using wide_t = std::conditional_t<std::is_integral_v<T>, int64_t, float>;
// One lane's product of aie::mul, mac, msc, negmul of T: a float's is the emulated one
// (fp32_product, the safe variant the AIE API's _conf intrinsics use), others exact.
template <typename T> wide_t<T> lane_product(T a, T b) {
  if constexpr (std::is_same_v<T, float>) return fp32_product(a, b, fp32_safe);
  else return wide_t<T>(a) * wide_t<T>(b);
}

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
    return cast<T>(float(x));                              // bfloat16 rounds to nearest even
  }
}

// x written to a vector lane of T by the vector unit's own arithmetic, which reads no
// saturation mode: an integer keeps its low bits (wraps modulo 2^bits) whatever the mode; a
// float is rounded to T (bfloat16 to nearest even). That is aie::add/sub of integer vectors
// (and their scalar forms), aie::neg, aie::abs and the folding steps of aie::reduce_add (see
// "Semantics chosen" in aie.hpp for the sources); narrow(), which the modes govern, is for what
// leaves an accumulator (to_vector, srs).
template <typename T, typename S> T wrap(S x) {
  if constexpr (std::is_integral_v<T>)
    return T(typename std::make_unsigned<T>::type(int64_t(x)));
  else
    return cast<T>(float(x));
}

// x moved into an accumulator lane of type S, shifted left by shift (0 to 63), as the core's
// upshift (UPS, which from_vector is) does it. An integer lane takes the low bits of x * 2^shift
// under saturation mode none; under saturate or symmetric, x is first clamped to what fits the
// lane after the shift, then shifted (AI Engine-ML Intrinsics User Guide, UG1583, "Upshift"; the
// instruction reads the saturation mode and sets the UPS overflow flag: llvm-aie's VUPS and
// VLDA.UPS definitions, Uses = [crSat, ...], Defs = [srUPS_of]).
template <typename S, typename T> S upshift(T x, int shift) {
  if constexpr (std::is_floating_point_v<S>) {
    return S(wide_t<T>(x)) * S(int64_t(1) << shift);
  } else {
    constexpr int64_t top = int64_t(std::numeric_limits<S>::max());
    int64_t v = int64_t(x);
    if (g_saturation == saturation_mode::saturate || g_saturation == saturation_mode::symmetric) {
      const int64_t hi = top >> shift;
      const int64_t lo = (g_saturation == saturation_mode::symmetric
                              ? -top
                              : int64_t(std::numeric_limits<S>::min())) >> shift;
      v = v > hi ? hi : v < lo ? lo : v;
    }
    return S(uint64_t(v) << shift);
  }
}
} // namespace detail

struct vector_ldst_align {};
// Bytes a vector declared in memory is aligned to (alignas(aie::vector_decl_align)): enough for
// any load_v (see ldst_align below).
#if defined(__AIE_ARCH__) && __AIE_ARCH__ == 21
inline constexpr std::size_t vector_decl_align = 64;
#else
inline constexpr std::size_t vector_decl_align = 32;
#endif

namespace detail {
// The sizes the AIE API has (aie_api 2025.1, detail/aie2/vector_native_types.hpp and
// accum_native_types.hpp, the same on AIE2P): a vector is 128, 256, 512 or 1024 bits natively,
// larger ones are arrays of native vectors whose lane count must be a power of two; so a power
// of two of at least 128 bits. Accumulators: a power of two of lanes, at least 8 of acc32 and 4
// of acc64 or accfloat.
template <typename T, unsigned N> constexpr bool vector_size_ok() {
  return N && (N & (N - 1)) == 0 && 8 * sizeof(T) * N >= 128;
}
template <typename Acc, unsigned N> constexpr bool accum_size_ok() {
  return N && (N & (N - 1)) == 0 && N >= (std::is_same_v<Acc, acc32> ? 8u : 4u);
}

// What a default-constructed vector or accumulator holds. The AIE API leaves it undefined (on a
// core: what the register held); here it is what aiedsl fills unwritten buffers with (NaN, the
// smallest signed or largest unsigned integer), so a kernel that reads one before writing it
// fails its test instead of passing on zeros.
template <typename T> T poison() {
  if constexpr (std::is_same_v<T, bfloat16>) {
    bfloat16 b;
    b.bits = 0x7fc0; // NaN
    return b;
  } else if constexpr (std::is_floating_point_v<T>) {
    return std::numeric_limits<T>::quiet_NaN();
  } else if constexpr (std::is_signed_v<T>) {
    return std::numeric_limits<T>::min();
  } else {
    return std::numeric_limits<T>::max();
  }
}
// An integer accumulator lane has 0x80 in every byte (of its 32 or 64 bits): whichever bits
// to_vector<T>(shift) keeps, a large negative offset shows (the smallest integer would read as 0
// through a narrowing to_vector).
template <typename Acc, typename S> S accum_poison() {
  if constexpr (std::is_floating_point_v<S>) return std::numeric_limits<S>::quiet_NaN();
  else if constexpr (std::is_same_v<Acc, acc32>) return S(int32_t(0x80808080u));
  else return S(int64_t(0x8080808080808080ull));
}
} // namespace detail

namespace detail {
template <typename T, unsigned N> void copy_vector(void *to, const void *from);
} // namespace detail

template <typename T> inline constexpr bool is_acc_tag_v =
    std::is_same_v<T, acc32> || std::is_same_v<T, acc64> || std::is_same_v<T, accfloat>;

// A vector's lanes default to a native 512-bit register (aie::vector<bfloat16> has 32).
template <typename T, unsigned N = 64 / sizeof(T)> struct vector {
  static_assert(detail::vector_size_ok<T, N>(),
                "aie::vector: the AIE API has vectors of a power-of-two number of lanes and at "
                "least 128 bits (128, 256, 512, 1024 bits, or more as several registers)");
  std::array<T, N> v;
  vector() { v.fill(detail::poison<T>()); } // undefined in the AIE API: see poison()
  // A copy from or to a kernel buffer is a vector load or store: a kernel reads and writes
  // memory through a pointer to the vector type as well as with load_v (*(v16int32 *)p = x),
  // and the core drops the low address bits of that pointer too. Such a copy is checked,
  // counted and done as load_v / store_v do theirs (detail::copy_vector); any other copy (a
  // register or a local) is a plain one.
  vector(const vector &o) { detail::copy_vector<T, N>(this, &o); }
  vector &operator=(const vector &o) {
    detail::copy_vector<T, N>(this, &o);
    return *this;
  }
  // vector<T, N>(x0, x1, ...): the first lanes given, the rest zero.
  template <typename... Ts, typename = std::enable_if_t<(sizeof...(Ts) >= 2 && sizeof...(Ts) <= N)>>
  vector(Ts... xs) : v{T(xs)...} {}
  static constexpr unsigned size() { return N; }
  // The idx-th M-lane part; that part replaced; the vector widened to M lanes (the new lanes
  // undefined in the AIE API: poison here).
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
  static_assert(detail::accum_size_ok<Acc, N>(),
                "aie::accum: the AIE API has accumulators of a power-of-two number of lanes, at "
                "least 8 of acc32 and 4 of acc64 or accfloat");
  using storage = typename detail::acc_storage<Acc, float>::type;
  std::array<storage, N> v;
  accum() { v.fill(detail::accum_poison<Acc, storage>()); } // undefined in the AIE API
  // The vector's lanes, shifted left by shift (the AIE API's explicit accum(vector, shift)).
  template <typename T> explicit accum(const vector<T, N> &x, int shift = 0) {
    from_vector(x, shift);
  }
  // The native type (v16accfloat, v16acc32, v32acc32 ...) is this accumulator itself here
  // (host_native.hpp names them), so the AIE API's accum(native) constructor is the copy and
  // to_native() a copy.
  accum to_native() const { return *this; }
  // The AIE API's accum::extract<M>(idx): the idx-th M-lane part; insert(idx, part): that part
  // replaced by an accumulator of the same lanes (another tag of the same representation, as
  // the API's has_same_representation asks); grow<M>(): this one in the low lanes of a larger
  // one, the new lanes undefined (poison here).
  template <unsigned M> accum<Acc, M> extract(unsigned idx) const {
    static_assert(N % M == 0, "accum::extract: M must divide the accumulator");
    accum<Acc, M> out;
    for (unsigned i = 0; i < M; ++i) out.v[i] = v[idx * M + i];
    return out;
  }
  template <unsigned M, typename Acc2> accum &insert(unsigned idx, const accum<Acc2, M> &part) {
    static_assert(std::is_same_v<typename accum<Acc2, M>::storage, storage>,
                  "accum::insert: the part must have the accumulator's representation");
    static_assert(N % M == 0, "accum::insert: M must divide the accumulator");
    for (unsigned i = 0; i < M; ++i) v[idx * M + i] = part.v[i];
    return *this;
  }
  template <unsigned M> accum<Acc, M> grow() const {
    static_assert(M % N == 0, "accum::grow: the new size must be a multiple of N");
    accum<Acc, M> out;
    for (unsigned i = 0; i < N; ++i) out.v[i] = v[i];
    return out;
  }
  template <typename T> accum &operator=(const vector<T, N> &x) {
    from_vector(x);
    return *this;
  }
  // An accumulator stored as a vector narrows by the modes, as to_vector<T>() does.
  template <typename T> operator vector<T, N>() const { return to_vector<T>(); }
  static constexpr unsigned size() { return N; }
  template <typename T> vector<T, N> to_vector(int shift = 0) const {
    if constexpr (std::is_same_v<T, bfloat16> && std::is_floating_point_v<storage>)
      detail::note_bf16(detail::op_accum_to_vector);
    vector<T, N> out;
    for (unsigned i = 0; i < N; ++i) out.v[i] = detail::narrow<T>(v[i], shift);
    return out;
  }
  template <typename T> void from_vector(const vector<T, N> &x, int shift = 0) {
    for (unsigned i = 0; i < N; ++i) v[i] = detail::upshift<storage>(x.v[i], shift);
  }
};

namespace detail {
// Bytes a load_v / store_v pointer must be aligned to: the AIE API's vector_ldst_align
// (aie_api detail/ld_st.hpp), which its load_v and store_v assert ("Insufficient alignment").
template <typename T, unsigned N> constexpr unsigned ldst_align() {
  constexpr unsigned bits = 8 * sizeof(T) * N;
#if defined(__AIE_ARCH__) && __AIE_ARCH__ == 21
  return bits == 128 ? 16 : bits == 256 ? 32 : 64;
#else
  return bits == 128 ? 16 : 32; // AIE2 (and a build that names no device)
#endif
}
enum ldst_op : int { op_load_v, op_store_v, op_load_unaligned_v, op_store_unaligned_v,
                     op_load_floor_v, op_load_pointer, op_store_pointer };
// What a vector's lanes are, for naming a vector pointer's type in a report (v16int32): signed
// integers, unsigned ones, bfloat16, float.
template <typename T> constexpr int elem_kind() {
  if constexpr (std::is_same_v<T, bfloat16>) return 2;
  else if constexpr (std::is_floating_point_v<T>) return 3;
  else return std::is_signed_v<T> ? 0 : 1;
}
// Where p points: the index of the kernel buffer it is in (or strays up to 4 KiB before or past:
// the core's memory around a buffer is aligned too) and its byte offset from the buffer's start,
// or -1 and its address (a local array, on the host's stack).
inline int64_t locate(const void *p, int64_t &offset) {
  const int64_t a = int64_t(uintptr_t(p));
  int64_t best = -1, nearest = 4097; // outside every buffer: the nearest within 4 KiB (the first
  for (unsigned i = 0; i < aiedsl_host::buffers; ++i) { // one within reach would depend on
    const int64_t d = a - int64_t(aiedsl_host::buffer_base[i]); // where the host put them)
    const int64_t size = int64_t(aiedsl_host::buffer_bytes[i]);
    const int64_t away = d < 0 ? -d : d >= size ? d - size + 1 : 0;
    if (away < nearest) best = i, nearest = away, offset = d;
  }
  if (best < 0) offset = a;
  return best;
}
// Where a load or store was called: its line when that is in the file being compiled (the
// kernel's, the main file: __BASE_FILE__), else 0. A defaulted argument of the call, so that
// a misaligned access names the kernel's line (a tester: "read 'x' at byte 4" in a kernel of a
// dozen loads); 0 where the library has no std::source_location.
#if defined(__cpp_lib_source_location)
using where = std::source_location;
// Precompiled (aiedsl/kernels/host_pch.py builds it with AIEDSL_HOST_PCH defined), this
// header's own __BASE_FILE__ would name the header: that build reads host_base_file.hpp after
// it, which defines aiedsl_base_file() to name the file being compiled.
#if defined(AIEDSL_HOST_PCH)
extern "C" __attribute__((visibility("hidden"))) const char *aiedsl_base_file();
#define AIEDSL_BASE_FILE aiedsl_base_file()
#else
#define AIEDSL_BASE_FILE __BASE_FILE__
#endif
inline unsigned kernel_line(const where &at) {
  return std::strcmp(at.file_name(), AIEDSL_BASE_FILE) == 0 ? at.line() : 0;
}
#define AIEDSL_HERE std::source_location::current()
#else
struct where {};
inline unsigned kernel_line(const where &) { return 0; }
#define AIEDSL_HERE ::aie::detail::where {}
#endif
// Whether p is aligned to `align` bytes (a power of two); a misaligned access is recorded.
inline bool check_align(const void *p, uint64_t align, int op, unsigned lanes, unsigned elem,
                        unsigned aligned_elems = 0, int kind = 0, unsigned line = 0) {
  int64_t offset;
  const int64_t buffer = locate(p, offset);
  const bool power = align && (align & (align - 1)) == 0;
  // A local array is not checked: where the host's stack puts it (which moves from run to run)
  // says nothing of where the core's does, so a verdict from it would change between runs.
  if (power && (buffer < 0 || (offset & int64_t(align - 1)) == 0)) return true;
  if (aiedsl_host::misaligned_count++ == 0) {
    const int64_t rec[9] = {op, lanes, elem, int64_t(align), buffer, offset, aligned_elems,
                            kind, line};
    std::memcpy(aiedsl_host::misaligned_first, rec, sizeof rec);
  }
  return false;
}
// p with its low address bits dropped to a multiple of `align` (from its buffer's start), as a
// core's vector load or store does with a misaligned address.
template <typename T> T *floor_to(T *p, uint64_t align) {
  int64_t offset;
  locate(p, offset);
  return (T *)((const unsigned char *)p - (offset & int64_t(align - 1)));
}
// Whether p is inside one of the call's buffers (not merely near one, as locate allows: a vector
// copied to or from just past a buffer is a local's, or a fault the guard bytes show).
inline bool in_buffer(const void *p) {
  const uintptr_t a = uintptr_t(p);
  if (a - aiedsl_host::buffers_low >= aiedsl_host::buffers_span) return false;
  for (unsigned i = 0; i < aiedsl_host::buffers; ++i)
    if (a - aiedsl_host::buffer_base[i] < aiedsl_host::buffer_bytes[i]) return true;
  return false;
}
// A vector load's or store's bytes, counted, and counted again as the buffers' when p is in one
// (a profile's coverage of the inputs and outputs: a local array's are not theirs).
inline void count_load(const void *p, uint64_t bytes) {
  AIEDSL_COUNT(LOAD_BYTES, bytes);
  if (in_buffer(p)) AIEDSL_COUNT(BUFFER_LOAD_BYTES, bytes);
}
inline void count_store(const void *p, uint64_t bytes) {
  AIEDSL_COUNT(STORE_BYTES, bytes);
  if (in_buffer(p)) AIEDSL_COUNT(BUFFER_STORE_BYTES, bytes);
}
// A vector copied from a kernel buffer is loaded, one copied into a buffer stored, as the core
// does it through a pointer: aligned to the vector as load_v / store_v need (the same check,
// record and report, the low address bits dropped when misaligned) and counted as their bytes.
// The lanes pass through a temporary: the load completes before the store, as on the core, when
// the two overlap in one buffer.
template <typename T, unsigned N> void copy_vector(void *to, const void *from) {
  constexpr unsigned bytes = sizeof(T) * N, A = ldst_align<T, N>();
  const bool load = in_buffer(from), store = in_buffer(to);
  if (!load && !store) {
    if (to != from) std::memcpy(to, from, bytes);
    return;
  }
  unsigned char lanes[bytes];
  if (load) {
    if (!check_align(from, A, op_load_pointer, N, sizeof(T), 0, elem_kind<T>()))
      from = floor_to((const unsigned char *)from, A);
    count_load(from, bytes);
  }
  std::memcpy(lanes, from, bytes);
  if (store) {
    if (!check_align(to, A, op_store_pointer, N, sizeof(T), 0, elem_kind<T>()))
      to = floor_to((unsigned char *)to, A);
    count_store(to, bytes);
  }
  std::memcpy(to, lanes, bytes);
}
} // namespace detail

template <unsigned N = 0, typename T>
vector<T, N ? N : 64 / sizeof(T)> load_v(const T *p, detail::where at = AIEDSL_HERE) {
  constexpr unsigned L = N ? N : 64 / sizeof(T);
  constexpr unsigned A = detail::ldst_align<T, L>();
  if (!detail::check_align(p, A, detail::op_load_v, L, sizeof(T), 0, 0,
                           detail::kernel_line(at)))
    p = detail::floor_to(p, A); // what the core loads
  vector<T, L> out;
  std::memcpy(out.v.data(), p, sizeof(T) * L);
  detail::count_load(p, sizeof(T) * L);
  return out;
}

template <typename T, unsigned N>
void store_v(T *p, const vector<T, N> &x, detail::where at = AIEDSL_HERE) {
  constexpr unsigned A = detail::ldst_align<T, N>();
  if (!detail::check_align(p, A, detail::op_store_v, N, sizeof(T), 0, 0,
                           detail::kernel_line(at)))
    p = detail::floor_to(p, A); // where the core stores
  std::memcpy(p, x.v.data(), sizeof(T) * N);
  detail::count_store(p, sizeof(T) * N);
}

// The forms for a pointer aligned to aligned_elems elements only (a power of two); the AIE API
// asserts that alignment. Slower on a core, exact here.
template <unsigned N = 0, typename T>
vector<T, N ? N : 64 / sizeof(T)> load_unaligned_v(const T *p, unsigned aligned_elems = 1,
                                                   detail::where at = AIEDSL_HERE) {
  constexpr unsigned L = N ? N : 64 / sizeof(T);
  detail::check_align(p, uint64_t(aligned_elems) * sizeof(T), detail::op_load_unaligned_v, L,
                      sizeof(T), aligned_elems, 0, detail::kernel_line(at));
  vector<T, L> out;
  std::memcpy(out.v.data(), p, sizeof(T) * L);
  detail::count_load(p, sizeof(T) * L);
  return out;
}
template <unsigned N = 0, typename T, unsigned M>
void store_unaligned_v(T *p, const vector<T, M> &x, unsigned aligned_elems = 1,
                       detail::where at = AIEDSL_HERE) {
  static_assert(N == 0 || N == M, "store_unaligned_v<N>: N is the vector's size");
  detail::check_align(p, uint64_t(aligned_elems) * sizeof(T), detail::op_store_unaligned_v, M,
                      sizeof(T), aligned_elems, 0, detail::kernel_line(at));
  std::memcpy(p, x.v.data(), sizeof(T) * M);
  detail::count_store(p, sizeof(T) * M);
}
// load_floor_v<N>(p, n): a load from p rounded down to a multiple of n elements (n a power of
// two); that address must suit load_v.
template <unsigned N, typename T>
vector<T, N> load_floor_v(const T *p, unsigned n = N, detail::where at = AIEDSL_HERE) {
  const uint64_t bytes = uint64_t(n) * sizeof(T);
  if ((bytes & (bytes - 1)) == 0) p = detail::floor_to(p, bytes);
  else detail::check_align(p, bytes, detail::op_load_floor_v, N, sizeof(T), n, 0,
                           detail::kernel_line(at));
  return load_v<N>(p, at);
}

// zeros<T, N>(): a vector of T, or an accumulator when T is an accumulator tag (acc32, ...).
template <typename T, unsigned N>
std::conditional_t<is_acc_tag_v<T>, accum<T, N>, vector<T, N>> zeros() {
  std::conditional_t<is_acc_tag_v<T>, accum<T, N>, vector<T, N>> out;
  if constexpr (is_acc_tag_v<T>) out.v.fill(typename accum<T, N>::storage(0));
  else out.v.fill(T(0));
  return out;
}

template <typename T, unsigned N = 64 / sizeof(T)> vector<T, N> broadcast(T x) {
  vector<T, N> out;
  out.v.fill(x);
  return out;
}

// NOTE: for bfloat16 lanes, the conversion the AIE API makes (add and sub add in accfloat and
// convert back, detail/aie2/add.hpp), or -1 (max and min return one of their lanes: nothing
// to round). Integer lanes wrap whatever the saturation mode (detail::wrap): the AIE API adds
// integer vectors with ::add / ::sub, which are VADD / VSUB (see aie.hpp); max and min never
// overflow.
#define AIEDSL_HOST_LANEWISE(NAME, EXPR, NOTE)                                               \
  template <typename T, unsigned N>                                                          \
  vector<T, N> NAME(const vector<T, N> &a, const vector<T, N> &b) {                          \
    if constexpr (std::is_same_v<T, bfloat16> && NOTE >= 0)                                  \
      detail::note_bf16(detail::bf16_op(NOTE));                                              \
    vector<T, N> out;                                                                        \
    AIEDSL_COUNT(VALU, 1);                                                                   \
    for (unsigned i = 0; i < N; ++i) {                                                       \
      auto x = detail::wide_t<T>(a.v[i]), y = detail::wide_t<T>(b.v[i]);                     \
      out.v[i] = detail::wrap<T>(EXPR);                                                      \
    }                                                                                        \
    return out;                                                                              \
  }
AIEDSL_HOST_LANEWISE(add, x + y, detail::op_add)
AIEDSL_HOST_LANEWISE(sub, x - y, detail::op_sub)
AIEDSL_HOST_LANEWISE(max, (x > y ? x : y), -1)
AIEDSL_HOST_LANEWISE(min, (x < y ? x : y), -1)
#undef AIEDSL_HOST_LANEWISE

namespace detail {
// What an element-wise multiply op of N lanes of T issues: float's emulation (count_fp32_elem),
// else one multiply instruction.
template <typename T, unsigned N> void count_product(fp32_use use) {
  if constexpr (std::is_same_v<T, float>) {
    count_fp32_elem<N>(use);
  } else {
    AIEDSL_COUNT(VMAC, 1);
    AIEDSL_COUNT(MACS, N);
  }
}
} // namespace detail

template <typename T, unsigned N>
accum<typename detail::default_acc<T>::type, N> mul(const vector<T, N> &a, const vector<T, N> &b) {
  accum<typename detail::default_acc<T>::type, N> out;
  detail::count_product<T, N>(detail::fp32_mul);
  for (unsigned i = 0; i < N; ++i) out.v[i] = detail::lane_product(a.v[i], b.v[i]);
  return out;
}

template <typename T, unsigned N, typename S,
          typename = std::enable_if_t<std::is_arithmetic_v<S> || std::is_same_v<S, bfloat16>>>
accum<typename detail::default_acc<T>::type, N> mul(const vector<T, N> &a, S s) {
  accum<typename detail::default_acc<T>::type, N> out;
  detail::count_product<T, N>(detail::fp32_mul);
  for (unsigned i = 0; i < N; ++i) out.v[i] = detail::lane_product(a.v[i], T(s));
  return out;
}

// A reduction takes log2(N) vector steps (halving the lanes each time).
template <unsigned N> constexpr unsigned aiedsl_log2(unsigned n = N) {
  return n <= 1 ? 0 : 1 + aiedsl_log2<N>(n / 2);
}
// The AIE API's detail/aie2/add_reduce.hpp (AIE2 and AIE2P). Integer lanes are folded in halves
// by vector adds (::add, VADD: they wrap) down to 16 lanes of 8 bits or 8 of 16 bits, which a
// multiply by ones sums exactly into an accumulator (mul_4x8_8x8 / mul_4x4_4x4 and a mac) whose
// to_vector<T>() narrows by the saturation mode; 32-bit lanes are folded by vector adds all the
// way, so their sum wraps whatever the mode. Floating-point lanes are added in accfloat (fp32),
// in an order that changes the sum:
//  * float (AIE2: add_reduce_bits_impl<32, float>; AIE2P: add_reduce_bits_impl_float_common),
//    and bfloat16 on AIE2P (the same, its reduce_via_mmul being AIE-MLv2's only): the
//    accumulator is folded in halves, lane i + lane i + n/2 (add_reduce_accum), down to one
//    lane; a bf16 sum is then converted to bf16 once;
//  * bfloat16 on AIE2 (add_reduce_bits_impl<16, bfloat16>): each 32 lanes are a 4 x 8 block
//    multiplied by ones (mul_4x8_8x4, then mac_4x8_8x4 for the next 32), which sums each row of
//    8 into its accumulator; then row r + row r + 2, then row 0 + row 1, converted to bf16 once.
//    How the multiplier sums a row's eight products is not in these sources: in order, in
//    fp32, here.
template <typename T, unsigned N> T reduce_add(const vector<T, N> &a) {
  if constexpr (std::is_same_v<T, bfloat16>) detail::note_bf16(detail::op_reduce_add);
  AIEDSL_COUNT(VALU, aiedsl_log2<N>());
#if defined(__AIE_ARCH__) && __AIE_ARCH__ == 21
  constexpr bool bf16_rows = false;
#else
  constexpr bool bf16_rows = std::is_same_v<T, bfloat16>;
#endif
  if constexpr (std::is_integral_v<T>) {
    constexpr unsigned exact = sizeof(T) == 1 ? 16 : sizeof(T) == 2 ? 8 : 1;
    std::array<T, N> t = a.v;
    unsigned n = N;
    for (; n > exact; n /= 2)
      for (unsigned i = 0; i < n / 2; ++i)
        t[i] = detail::wrap<T>(int64_t(t[i]) + int64_t(t[i + n / 2]));
    int64_t s = 0;
    for (unsigned i = 0; i < n; ++i) s += int64_t(t[i]);
    return sizeof(T) >= 4 ? detail::wrap<T>(s) : detail::narrow<T>(s, 0);
  } else if constexpr (bf16_rows) {
    float row[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (unsigned base = 0; base < N; base += 32)  // one mul or mac a 32-lane block
      for (unsigned r = 0; r < 4 && base + 8 * r < N; ++r) {
        float dot = 0.0f;
        for (unsigned k = 0; k < 8; ++k) dot += float(a.v[base + 8 * r + k]);
        row[r] += dot;
      }
    if (N > 16) row[0] += row[2], row[1] += row[3];
    if (N > 8) row[0] += row[1];
    return detail::narrow<T>(row[0], 0);
  } else {
    std::array<float, N> t;
    for (unsigned i = 0; i < N; ++i) t[i] = float(a.v[i]);
    for (unsigned n = N; n > 1; n /= 2)
      for (unsigned i = 0; i < n / 2; ++i) t[i] += t[i + n / 2];
    return detail::narrow<T>(t[0], 0);
  }
}

template <typename T, unsigned N> T reduce_max(const vector<T, N> &a) {
  AIEDSL_COUNT(VALU, aiedsl_log2<N>());
  T m = a.v[0];
  for (unsigned i = 1; i < N; ++i)
    if (detail::wide_t<T>(a.v[i]) > detail::wide_t<T>(m)) m = a.v[i];
  return m;
}

// The M x K x N modes aie::mmul has with a dense B, per architecture and input types: the
// specializations of the AIE API's detail/aie2/ and detail/aie2p/ headers (2025.1; read in
// jgmelber/aie_api, include/aie_api/detail/aie2{,p}/mmul_<A>_<B>.hpp, each mode's mac()).
// __AIE_ARCH__ is 20 on AIE2 (npu1) and 21 on AIE2P (npu2), as Peano predefines it; aiedsl's
// host builds for a device define it the same way. A build that names no device accepts every
// shape.
//
// Each mode's last number is the hardware multiply intrinsics its mac() calls (::mac_4x8_8x8,
// ::mac_8x8_8x8, ...): AIE2's int8 8x8x8 is two 4x8x8 ones, AIE2P's one 8x8x8; AIE2's 32-bit
// 4x4x4 two 4x2x4 ones. The profile counts these as vector MAC issue slots. It is a lower bound
// on the instructions: an intrinsic the core has no unit for (32-bit products, emulated with
// 16-bit ones) counts 1 here, and the profile holds it to the core's peak MACs per cycle for its
// types instead (aiedsl/kernels/profile.py). The float modes' numbers here are not used: their
// mul() and mac() count the bf16 multiplies of the emulation (detail::fp32_mmul).
namespace detail {
template <typename T> constexpr int mmul_type() { // integers by width; bfloat16 and float
  if constexpr (std::is_same_v<T, bfloat16>) return 'b';
  else if constexpr (std::is_same_v<T, float>) return 'f';
  else return int(8 * sizeof(T));
}
// Read as the AIE API reads it (#if: undefined or 0 is off); aiedsl's builds for AIE2P define
// it, Peano's and this header's alike (aiedsl/targets/kernel_arch.py).
#if AIE_API_EMULATE_BFLOAT16_MMUL_WITH_BFP16
constexpr bool aiedsl_bf16_as_bfp16 = true;
#else
constexpr bool aiedsl_bf16_as_bfp16 = false;
#endif
struct mmul_mode {
  int arch, ta, tb;
  unsigned m, k, n, issues;
};
// arch, A type, B type, M, K, N, multiply intrinsics per mac ('b' bfloat16, 'f' float,
// integers by width)
constexpr mmul_mode mmul_modes[] = {
    // AIE2 (__AIE_ARCH__ 20)
    {20, 8, 8, 4, 8, 4, 1}, {20, 8, 8, 4, 16, 4, 2}, {20, 8, 8, 8, 8, 4, 2},
    {20, 8, 8, 4, 8, 8, 1}, {20, 8, 8, 8, 8, 8, 2}, {20, 8, 8, 2, 8, 8, 1},
    {20, 8, 8, 1, 16, 8, 2}, {20, 8, 8, 2, 16, 8, 2}, {20, 8, 8, 4, 16, 8, 2},
    {20, 16, 16, 4, 2, 8, 1}, {20, 16, 16, 8, 2, 8, 2}, {20, 16, 16, 2, 4, 8, 1},
    {20, 16, 16, 4, 4, 8, 2}, {20, 16, 16, 4, 4, 4, 1}, {20, 16, 16, 8, 1, 8, 4},
    {20, 8, 16, 4, 4, 8, 2}, {20, 8, 16, 4, 4, 4, 1},
    {20, 16, 8, 4, 8, 4, 1}, {20, 16, 8, 4, 4, 8, 1}, {20, 16, 8, 8, 4, 4, 1},
    {20, 16, 8, 8, 4, 8, 2}, {20, 16, 8, 4, 4, 4, 1}, {20, 16, 8, 2, 8, 8, 1},
    {20, 'b', 'b', 4, 8, 4, 1}, {20, 'b', 'b', 4, 8, 8, 2}, {20, 'b', 'b', 8, 8, 8, 4},
    {20, 'b', 'b', 8, 8, 4, 2}, {20, 'b', 'b', 8, 1, 8, 4},
    {20, 32, 16, 4, 2, 4, 1}, {20, 32, 16, 4, 4, 4, 1}, {20, 32, 16, 2, 4, 8, 1},
    {20, 32, 16, 4, 4, 8, 2}, {20, 32, 16, 4, 1, 8, 2},
    {20, 16, 32, 4, 4, 4, 1}, {20, 16, 32, 2, 4, 8, 1},
    {20, 32, 32, 4, 2, 4, 1}, {20, 32, 32, 4, 4, 4, 2}, {20, 32, 32, 8, 2, 4, 2},
    {20, 32, 32, 4, 1, 8, 2},
    {20, 'f', 'f', 4, 8, 4, 1}, {20, 'f', 'f', 4, 1, 4, 1}, {20, 'f', 'f', 4, 1, 8, 2},
    // AIE2P (__AIE_ARCH__ 21)
    {21, 8, 8, 2, 8, 8, 1}, {21, 8, 8, 4, 8, 8, 1}, {21, 8, 8, 4, 16, 8, 2},
    {21, 8, 8, 8, 8, 8, 1},
    {21, 16, 16, 4, 2, 8, 1}, {21, 16, 16, 8, 2, 8, 1}, {21, 16, 16, 2, 4, 8, 1},
    {21, 16, 16, 4, 4, 8, 1}, {21, 16, 16, 8, 1, 8, 2},
    {21, 8, 16, 8, 2, 8, 1}, {21, 8, 16, 4, 4, 8, 1},
    {21, 16, 8, 4, 4, 8, 1}, {21, 16, 8, 8, 4, 8, 1}, {21, 16, 8, 4, 8, 8, 1},
    // AIE2P has no bf16 matrix multiply: 8x8x4 and 4x8x4 are eight element-wise mac_elem_32
    // (emulated_mmul_intrinsics.hpp mac_8x8_8x4_bf16), and so are 4x8x8 and, twice, 8x8x8
    // (mac_4x8_8x8_bf16) unless AIE_API_EMULATE_BFLOAT16_MMUL_WITH_BFP16 makes each one bfp16
    // multiply (mac_8x8_8x8T_conf), the 8x8x8 after a mul_elem_64 by ones that widens B: two
    // multiplier issues (IRON's AIE2P GEMM defines it, and so does aiedsl: their A and B are
    // quantized to bfp16 first, bfp16_mac below)
    {21, 'b', 'b', 8, 8, 4, 8}, {21, 'b', 'b', 4, 8, 4, 8},
    {21, 'b', 'b', 4, 8, 8, aiedsl_bf16_as_bfp16 ? 1u : 8u},
    {21, 'b', 'b', 8, 8, 8, aiedsl_bf16_as_bfp16 ? 2u : 16u}, {21, 'b', 'b', 8, 1, 8, 1},
    {21, 32, 16, 4, 2, 8, 1}, {21, 32, 16, 2, 4, 8, 1}, {21, 32, 16, 4, 4, 8, 1},
    {21, 32, 16, 4, 1, 8, 2},
    {21, 16, 32, 4, 4, 8, 1},
    {21, 32, 32, 4, 2, 8, 1}, {21, 32, 32, 4, 4, 4, 2}, {21, 32, 32, 4, 4, 8, 2},
    {21, 32, 32, 8, 2, 8, 2}, {21, 32, 32, 4, 1, 8, 4},
    {21, 'f', 'f', 4, 8, 4, 1}, {21, 'f', 'f', 4, 1, 4, 1}, {21, 'f', 'f', 4, 1, 8, 1},
};
// Modes whose specialization in those headers takes B only as an aie::sparse_vector (its
// vector_B_type; no mac() of a dense vector): the sparse multiplies (mac_4x16_16x8 on AIE2,
// mac_8x16_16x8T on AIE2P) skip half of B's products. aiedsl's host header has no
// sparse_vector, so these are refused rather than multiplied densely at a count the core
// cannot reach (AIE2's int8 4x16x16, 1,024 MACs in two instructions, is 512 a cycle).
constexpr mmul_mode mmul_sparse_modes[] = {
    {20, 8, 8, 8, 16, 8, 2}, {20, 8, 8, 4, 16, 16, 2},
    {20, 16, 16, 2, 8, 8, 1}, {20, 16, 16, 4, 8, 8, 2}, {20, 16, 16, 2, 8, 16, 2},
    {20, 16, 8, 2, 16, 8, 1}, {20, 16, 8, 4, 16, 8, 2},
    {20, 'b', 'b', 4, 16, 4, 1}, {20, 'b', 'b', 4, 16, 8, 2},
    {21, 8, 8, 8, 16, 8, 1},
    {21, 16, 16, 2, 8, 8, 1}, {21, 16, 16, 4, 8, 8, 1},
    {21, 16, 8, 2, 16, 8, 1}, {21, 16, 8, 4, 16, 8, 1},
};
template <std::size_t L>
constexpr const mmul_mode *mmul_find(const mmul_mode (&modes)[L], int arch, int ta, int tb,
                                     unsigned m, unsigned k, unsigned n) {
  for (const mmul_mode &x : modes)
    if (x.arch == arch && x.ta == ta && x.tb == tb && x.m == m && x.k == k && x.n == n)
      return &x;
  return nullptr;
}
constexpr bool mmul_mode_ok(int arch, int ta, int tb, unsigned m, unsigned k, unsigned n) {
  if (arch != 20 && arch != 21) return true; // an architecture the table does not list
  return mmul_find(mmul_modes, arch, ta, tb, m, k, n) != nullptr ||
         mmul_find(mmul_sparse_modes, arch, ta, tb, m, k, n) != nullptr;
}
constexpr bool mmul_dense_ok(int arch, int ta, int tb, unsigned m, unsigned k, unsigned n) {
  return mmul_find(mmul_sparse_modes, arch, ta, tb, m, k, n) == nullptr;
}
// The multiply intrinsics one mac() issues (1 for a mode or architecture the table lacks).
constexpr unsigned mmul_issues(int arch, int ta, int tb, unsigned m, unsigned k, unsigned n) {
  const mmul_mode *x = mmul_find(mmul_modes, arch, ta, tb, m, k, n);
  return x ? x->issues : 1;
}

// The bf16 modes AIE2P runs on its bfp16 unit under the macro (detail/aie2p/mmul_bf16_bf16.hpp:
// 4x8x8 and 8x8x8 convert A and B with ::to_v64bfp16ebs8, then ::mac_8x8_8x8T_conf).
constexpr bool mmul_bfp16(int arch, int ta, int tb, unsigned m, unsigned k, unsigned n) {
  return aiedsl_bf16_as_bfp16 && arch == 21 && ta == 'b' && tb == 'b' && k == 8 && n == 8 &&
         (m == 4 || m == 8);
}

// Instantiated by an mmul of M rows whose mac runs on the bfp16 unit: its initializer, run as the
// kernel's library loads, records the shape in aiedsl_host::bfp16_mmuls, so aiedsl can tell
// that the C++ quantizes A and B without waiting for a call (aiedsl/kernels/host_notes.py).
template <unsigned M>
inline const bool bfp16_compiled = (aiedsl_host::bfp16_mmuls |= (M == 4 ? 1u : 2u), true);

// One block of ::to_v64bfp16ebs8 (eight values x[0], x[stride], ...), as the values it holds
// (into out[0], out[stride], ...):
// aiedsl/kernels/bfp16.py's model, which says what of it is known and where from. The block's
// exponent E is the largest biased exponent among the eight; each mantissa is the value over
// 2^(E - 133) rounded by the tile's rounding mode (the conversion reads crRnd) and saturated to
// a signed byte; a block holding an infinity or a NaN is all NaN.
inline void bfp16_block(const float *x, unsigned stride, double *out) {
  int big = 0;
  for (unsigned i = 0; i < 8; ++i) {
    uint32_t u;
    std::memcpy(&u, &x[i * stride], 4);
    big = std::max(big, int((u >> 23) & 0xffu));
  }
  for (unsigned i = 0; i < 8; ++i) {
    if (big == 0xff) {
      out[i * stride] = std::numeric_limits<double>::quiet_NaN();
      continue;
    }
    const double m = round_whole(std::ldexp(double(x[i * stride]), 133 - big));
    out[i * stride] = std::ldexp(std::clamp(m, -128.0, 127.0), big - 133);
  }
}

// c += a * b for an M x 8 A and an 8 x 8 B on the bfp16 unit: A's rows and B's columns (the rows
// of B transposed) quantized by bfp16_block, each row-column sum of products exact (eight
// products of one scale) and added to c in float, as aiedsl/kernels/bfp16.py's
// bfp16_accumulate adds it.
template <unsigned M>
void bfp16_mac(float *c, const bfloat16 *a, const bfloat16 *b) {
  float fa[M * 8], fb[64];
  for (unsigned i = 0; i < M * 8; ++i) fa[i] = float(a[i]);
  for (unsigned i = 0; i < 64; ++i) fb[i] = float(b[i]);
  double qa[M * 8], qb[64];
  for (unsigned i = 0; i < M; ++i) bfp16_block(fa + i * 8, 1, qa + i * 8);
  for (unsigned j = 0; j < 8; ++j) bfp16_block(fb + j, 8, qb + j);  // column j: qb[k * 8 + j]
  for (unsigned i = 0; i < M; ++i)
    for (unsigned j = 0; j < 8; ++j) {
      double dot = 0;
      for (unsigned k = 0; k < 8; ++k) dot += qa[i * 8 + k] * qb[k * 8 + j];
      c[i * 8 + j] = c[i * 8 + j] + float(dot);
    }
}
} // namespace detail

namespace detail {
// c (M x N, row-major) = (accumulate ? c : 0) + a (M x K) b (K x N) for the float modes, as the
// intrinsics emulate it (fp32_product; the AIE API's detail/aie2{,p}/mmul_fp32_fp32.hpp),
// counted for `aiedsl kernel profile`:
//  * AIE2 4x8x4: mul() is ::mul_4x8_8x4 of floats, which aiev2_core.h makes of the pieces of
//    all of A and B (its *_accuracy_* variants, by the accuracy define): one bf16 4x8x4
//    multiply per pair of pieces, in the elementwise order, each summing its 8 products into
//    the accumulator (in k order here: how the multiplier sums them is not in these sources),
//    after 8 msc (4 for low) to split: 17, 14 or 7 multiplies. mac() calls ::mac_4x8_8x4_conf
//    of floats, which the llvm-aie headers read do not define: taken to be
//    mac_4x8_8x4_accuracy_* (the same steps, then the accumulator added; the same count).
//    (aiev2_core.h's mac_4x8_8x4_accuracy_low, the plain mac_4x8_8x4 of floats under _LOW,
//    multiplies pieces of A by pieces of A, its d being A's remainder: a kernel calling that
//    intrinsic gets that; the AIE API's mac() does not call it, and it is not modelled here);
//  * AIE2 4x1x4 and 4x1x8 (one and two 16-lane ops): mul() is ::mul_elem_16 (by the define),
//    mac() ::mac_elem_16_conf (safe, then the accumulator add);
//  * AIE2P 4x8x4 (emulated_mmul_intrinsics.hpp, mul_4x8_8x4_fp32 / mac_4x8_8x4_fp32): eight
//    element-wise products along k, each the safe emulation rounded, added one after the other
//    (mac_elem_16 / mac_elem_32: 13 multiplies and 8 adds each, and an add for the sum);
//    4x1x4 and 4x1x8: one such op.
template <unsigned M, unsigned K, unsigned N>
void fp32_mmul(float *c, const float *a, const float *b, bool accumulate) {
#if defined(__AIE_ARCH__) && __AIE_ARCH__ == 21
  constexpr bool aie2p = true;
#else
  constexpr bool aie2p = false;
#endif
  AIEDSL_COUNT(MACS, M * K * N);
  if constexpr (K == 1) {  // element-wise: one (two on AIE2 for 4x1x8) vector ops
    const fp32_accuracy v = accumulate ? fp32_safe : fp32_plain_accuracy();
    constexpr unsigned ops = aie2p ? 1 : (M * N) / 16;
    AIEDSL_COUNT(VMAC, ops * fp32_multiplies(v));
    AIEDSL_COUNT(VALU, ops * ((aie2p ? 8 : 0) + (accumulate ? 1 : 0)));
    for (unsigned i = 0; i < M; ++i)
      for (unsigned j = 0; j < N; ++j) {
        const float p = fp32_product(a[i], b[j], v);
        c[i * N + j] = accumulate ? ftz(c[i * N + j] + p) : p;
      }
  } else if constexpr (aie2p) {  // eight element-wise products along k, summed
    AIEDSL_COUNT(VMAC, K * fp32_multiplies(fp32_safe));
    AIEDSL_COUNT(VALU, K * 8 + (accumulate ? K : K - 1));
    for (unsigned i = 0; i < M; ++i)
      for (unsigned j = 0; j < N; ++j) {
        float t = accumulate ? c[i * N + j] : 0.0f;
        for (unsigned k = 0; k < K; ++k) {
          const float p = fp32_product(a[i * K + k], b[k * N + j], fp32_safe);
          t = (k == 0 && !accumulate) ? p : ftz(t + p);
        }
        c[i * N + j] = t;
      }
  } else {  // AIE2 4x8x4: a bf16 4x8x4 multiply per pair of pieces
    static constexpr unsigned char safe[9][2] = {{2, 2}, {2, 1}, {1, 2}, {0, 2}, {1, 1},
                                                 {2, 0}, {1, 0}, {0, 1}, {0, 0}};
    static constexpr unsigned char fast[6][2] = {{0, 2}, {1, 1}, {2, 0}, {1, 0}, {0, 1},
                                                 {0, 0}};
    static constexpr unsigned char low[3][2] = {{1, 0}, {0, 1}, {0, 0}};
    const fp32_accuracy v = fp32_plain_accuracy();
    const unsigned char(*order)[2] = v == fp32_fast ? fast : v == fp32_low ? low : safe;
    const unsigned pairs = v == fp32_fast ? 6 : v == fp32_low ? 3 : 9;
    const unsigned pieces = v == fp32_low ? 2 : 3;
    AIEDSL_COUNT(VMAC, 2 * (2 * (pieces - 1)) + pairs);  // the splits (two halves), the pairs
    const rounding_mode mode = fp32_split_mode();
    float pa[M * K][3] = {}, pb[K * N][3] = {};
    for (unsigned i = 0; i < M * K; ++i) fp32_split(a[i], pieces, mode, pa[i]);
    for (unsigned i = 0; i < K * N; ++i) fp32_split(b[i], pieces, mode, pb[i]);
    for (unsigned i = 0; i < M; ++i)
      for (unsigned j = 0; j < N; ++j) {
        float t = 0.0f;
        for (unsigned q = 0; q < pairs; ++q)
          for (unsigned k = 0; k < K; ++k)
            t = ftz(t + ftz(pa[i * K + k][order[q][0]] * pb[k * N + j][order[q][1]]));
        c[i * N + j] = accumulate ? ftz(c[i * N + j] + t) : t;
      }
  }
}
} // namespace detail

template <unsigned M, unsigned K, unsigned N, typename TA, typename TB, typename Acc = accauto>
struct mmul {
#ifdef __AIE_ARCH__
  static_assert(detail::mmul_mode_ok(__AIE_ARCH__, detail::mmul_type<TA>(),
                                     detail::mmul_type<TB>(), M, K, N),
                "aie::mmul: this M x K x N is not a mode the AIE API has for these input types "
                "on this architecture (__AIE_ARCH__)");
  static_assert(detail::mmul_dense_ok(__AIE_ARCH__, detail::mmul_type<TA>(),
                                      detail::mmul_type<TB>(), M, K, N),
                "aie::mmul: the AIE API has this M x K x N for these input types on this "
                "architecture only with a sparse B (aie::sparse_vector), which aiedsl's host "
                "AIE API does not model; use a mode with a dense B: 4x8x8 or 4x16x8 (and "
                "8x8x8 on AIE2P) for 8-bit inputs, 4x4x8 for 16-bit ones or 16 x 8 bits, 4x8x8 "
                "for bfloat16 (on AIE2P through the bfp16 unit)");
  static constexpr unsigned issues =
      detail::mmul_issues(__AIE_ARCH__, detail::mmul_type<TA>(), detail::mmul_type<TB>(), M, K, N);
  // A and B go through the bfp16 unit (quantized) rather than exact bf16 multiplies
  static constexpr bool bfp16 =
      detail::mmul_bfp16(__AIE_ARCH__, detail::mmul_type<TA>(), detail::mmul_type<TB>(), M, K, N);
#else
  static constexpr unsigned issues = 1;
  static constexpr bool bfp16 = false;
#endif
  static constexpr unsigned size_A = M * K;
  static constexpr unsigned size_B = K * N;
  static constexpr unsigned size_C = M * N;
  // The accumulator given, or the one the AIE API picks for TA x TB (accauto).
  using acc_tag = std::conditional_t<is_acc_tag_v<Acc>, Acc,
                                     typename detail::default_acc<TA, TB>::type>;
  using storage = typename detail::acc_storage<acc_tag, TA>::type;
  // float modes: every product emulated with bf16 multiplies (detail::fp32_mmul)
  static constexpr bool fp32 = std::is_same_v<TA, float> && std::is_same_v<TB, float> &&
                               std::is_same_v<storage, float>;
  std::array<storage, size_C> c{};

  using accum_type = accum<acc_tag, size_C>;
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
    for (unsigned i = 0; i < size_C; ++i) c[i] = detail::upshift<storage>(init.v[i], shift);
  }
  void mac(const vector<TA, size_A> &a, const vector<TB, size_B> &b) {
    if constexpr (fp32) {
      detail::fp32_mmul<M, K, N>(c.data(), a.v.data(), b.v.data(), true);
      return;
    }
    AIEDSL_COUNT(VMAC, issues);
    AIEDSL_COUNT(MACS, M * K * N);
    if constexpr (bfp16 && std::is_same_v<storage, float>) {
      static_cast<void>(&detail::bfp16_compiled<M>);  // odr-used: the shape is recorded
      detail::bfp16_mac<M>(c.data(), a.v.data(), b.v.data());
      return;
    }
    // integers summed modulo 2^64 (no overflow in C++), then kept to the lane's width
    using sum_t = std::conditional_t<std::is_integral_v<storage>, uint64_t, storage>;
    for (unsigned i = 0; i < M; ++i)
      for (unsigned j = 0; j < N; ++j) {
        sum_t s = sum_t(c[i * N + j]);
        for (unsigned k = 0; k < K; ++k)
          s += sum_t(detail::wide_t<TA>(a.v[i * K + k])) *
               sum_t(detail::wide_t<TB>(b.v[k * N + j]));
        c[i * N + j] = storage(s);
      }
  }
  void mul(const vector<TA, size_A> &a, const vector<TB, size_B> &b) {
    if constexpr (fp32) {  // not a mac on zeros: AIE2's mul follows the accuracy define
      detail::fp32_mmul<M, K, N>(c.data(), a.v.data(), b.v.data(), false);
      return;
    }
    c.fill(storage(0));
    mac(a, b);
  }
  template <typename T> vector<T, size_C> to_vector(int shift = 0) const {
    if constexpr (std::is_same_v<T, bfloat16> && std::is_floating_point_v<storage>)
      detail::note_bf16(detail::op_mmul_to_vector);
    vector<T, size_C> out;
    for (unsigned i = 0; i < size_C; ++i) out.v[i] = detail::narrow<T>(c[i], shift);
    return out;
  }
};

} // namespace aie

#endif // AIEDSL_HOST_HOST_CORE_HPP
