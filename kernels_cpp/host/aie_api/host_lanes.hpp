// host_lanes.hpp -- part of aiedsl's host AIE API header: lane movement, iterators,
// shuffles, accumulator forms, exp2/tanh.
// Include aie.hpp, not this file.

#ifndef AIEDSL_HOST_HOST_LANES_HPP
#define AIEDSL_HOST_HOST_LANES_HPP

namespace aie {

// ---- lane movement -------------------------------------------------------------------------
// What the profile counts for the calls below: the lane-moving instructions a core needs, the
// least the AIE API issues (a lower bound, as the whole profile is).
//   * A VSHUFFLE reads two 512-bit x registers and writes one (llvm-aie AIE2PGenInstrInfo.td,
//     VSHUFFLE_vec_shuffle_x: an mv-slot instruction, x sources and destination). The AIE API
//     zips and unzips in 512-bit pieces (detail/aie2/interleave.hpp, which AIE2P shares:
//     native_elems = 512 / TypeBits): a pair narrower than 512 bits is grown to 512 and one
//     ::shuffle's low half kept; a 512-bit pair takes two (mode.low(), mode.high()), a wider
//     one two per 512-bit piece; a step of the whole vector (256 bits or more: its
//     shuffle_mode::is_bypass) returns the inputs unmoved.
//   * A concat of parts of 256 bits or more moves nothing: a 512-bit x register is the pair of
//     256-bit w registers wl, wh and a 1024-bit y the pair of two x (llvm-aie
//     AIE2RegisterInfo.cpp getCoveringSubRegs: sub_256_lo/hi, sub_512_lo/hi; AIE2P's
//     AIE2PRegisterInfo.td the same), and the AIE API builds it with the native ::concat
//     (detail/aie2/vector.hpp, vector_base::upd_all), as it does a concat of accumulators
//     (below). Parts of 128 bits are moved into place with shuffle_down (upd_all: "use
//     shuffle_down to fill the lowest bits from input chunks", one ::shift_bytes, VSHIFT, an
//     mv-slot instruction on AIE2P, per part): counted as one, the least that puts the second
//     part above the first.
template <typename T, unsigned N> constexpr unsigned aiedsl_zip_shuffles(unsigned step) {
  constexpr unsigned bits = 8 * sizeof(T) * N;
  if (bits >= 256 && step == N) return 0; // shuffle_mode::is_bypass
  return bits < 512 ? 1 : 2 * (bits / 512);
}
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
  AIEDSL_COUNT(SHUFFLE, (aiedsl_zip_shuffles<T, N>(step)));
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
  AIEDSL_COUNT(SHUFFLE, (aiedsl_zip_shuffles<T, N>(step)));
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
// Vectors of one type and size side by side, two or more (the AIE API's variadic concat): the
// first one's lanes lowest; parts under 256 bits move, one shift per part after the first.
template <typename T, unsigned N, typename... Rest>
  requires(sizeof...(Rest) >= 1 && (std::is_same_v<Rest, vector<T, N>> && ...))
vector<T, N *(1 + sizeof...(Rest))> concat(const vector<T, N> &first, const Rest &...rest) {
  AIEDSL_COUNT(SHUFFLE, (8 * sizeof(T) * N < 256 ? sizeof...(Rest) : 0)); // (above)
  vector<T, N *(1 + sizeof...(Rest))> out;
  unsigned at = 0;
  for (const vector<T, N> *part : {&first, &rest...}) {
    for (unsigned i = 0; i < N; ++i) out.v[at + i] = part->v[i];
    at += N;
  }
  return out;
}
// Accumulators of one type and size side by side (the AIE API's concat of accumulators, any
// number of them): a larger accumulator, the first one's lanes lowest. Moves no data on the
// core (a 1024-bit accumulator is a pair of 512-bit ones), so counted as nothing.
template <typename Acc, unsigned N, typename... Rest>
  requires(std::is_same_v<Rest, accum<Acc, N>> && ...)
accum<Acc, N *(1 + sizeof...(Rest))> concat(const accum<Acc, N> &first, const Rest &...rest) {
  accum<Acc, N *(1 + sizeof...(Rest))> out;
  unsigned at = 0;
  for (const accum<Acc, N> *part : {&first, &rest...}) {
    for (unsigned i = 0; i < N; ++i) out.v[at + i] = part->v[i];
    at += N;
  }
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
// shuffle_up / shuffle_down: the lanes shifted in are undefined in the AIE API; poison here.
template <typename T, unsigned N> vector<T, N> shuffle_up(const vector<T, N> &v, unsigned n) {
  return shuffle_up_fill(v, vector<T, N>{}, n);
}
template <typename T, unsigned N> vector<T, N> shuffle_down(const vector<T, N> &v, unsigned n) {
  return shuffle_down_fill(v, vector<T, N>{}, n);
}
template <typename T, unsigned N>
vector<T, N> shuffle_up_rotate(const vector<T, N> &v, unsigned n) {
  return shuffle_up_fill(v, v, n % N);
}
template <typename T, unsigned N>
vector<T, N> shuffle_down_rotate(const vector<T, N> &v, unsigned n) {
  return shuffle_down_fill(v, v, n % N);
}

// aie::exp2 and aie::tanh: the AIE API's (aie.hpp) take a vector of float and return lanes of TR,
// bfloat16 by default (template <typename TR = bfloat16, unsigned Elems>, taking
// const vector<float, Elems> &), and exist for XDNA2 and AIE-MLv2 only (requires
// arch::is(XDNA2, AIE_MLv2): __AIE_ARCH__ 21 and 22), exp2 on XDNA2 for TR = bfloat16 only. On
// AIE2P each 16 lanes are one instruction of the core's (detail/aie2p/elementary.hpp:
// ::exp2 / ::tanh of an accfloat accumulator, llvm-aie aie2p_nlf_vector.h: __builtin_aie2p_exp2
// and __builtin_aie2p_tanh, v16accfloat to v16bfloat16); tanh has that implementation for
// TR = bfloat16 only, another TR compiling but reaching the API's UNREACHABLE_MSG
// (detail/elementary.hpp). So a build for AIE2 refuses both, as do another TR on AIE2P and an
// argument that is not a vector of float (Peano would refuse all but tanh's TR). How the
// instruction approximates and rounds is not in these sources: here std::exp2 / std::tanh in
// float, rounded to nearest even to bf16 (not noted as a conversion by the rounding mode:
// whether the mode applies is not known either), so a lane may differ from the core's by more
// than one bf16 rounding. A build that names no device takes TR = float too.
namespace detail {
template <typename V> inline constexpr bool is_float_vector_v = false;
template <unsigned N> inline constexpr bool is_float_vector_v<vector<float, N>> = true;
// A vector or an accumulator: what the functions below are offered (a scalar argument is left to
// the C library's exp2 and tanh, which a kernel calling exp2(x) under `using namespace aie` means).
template <typename V> inline constexpr bool is_lanes_v = false;
template <typename T, unsigned N> inline constexpr bool is_lanes_v<vector<T, N>> = true;
template <typename A, unsigned N> inline constexpr bool is_lanes_v<accum<A, N>> = true;
// Whether the architecture built for has exp2 / tanh, and returns lanes of TR from them.
template <typename TR> constexpr bool nlf_arch_ok() {
#if defined(__AIE_ARCH__) && __AIE_ARCH__ == 20
  return sizeof(TR) == 0;  // never (dependent, so that only a call asserts)
#else
  return true;
#endif
}
template <typename TR> constexpr bool nlf_type_ok() {
#if defined(__AIE_ARCH__) && __AIE_ARCH__ == 21
  return std::is_same_v<TR, bfloat16>;
#else
  return std::is_same_v<TR, bfloat16> || std::is_same_v<TR, float>;
#endif
}
template <typename TR, typename V, typename F> vector<TR, V::size()> nlf_lanes(const V &a, F f) {
  vector<TR, V::size()> out;
  AIEDSL_COUNT(VALU, V::size() < 16 ? 1 : V::size() / 16);  // one instruction a 16 lanes
  for (unsigned i = 0; i < V::size(); ++i) out.v[i] = detail::cast<TR>(f(float(a.v[i])));
  return out;
}
} // namespace detail
#define AIEDSL_HOST_NLF(NAME, WHAT)                                                                \
  template <typename TR = bfloat16, typename V,                                                    \
            typename = std::enable_if_t<detail::is_lanes_v<V>>>                                    \
  auto NAME(const V &a) {                                                                          \
    static_assert(detail::nlf_arch_ok<TR>(),                                                       \
                  "aie::" #NAME ": the AIE API has no aie::" #NAME " on AIE2 (npu1): its "         \
                  "aie.hpp declares it for XDNA2 and AIE-MLv2 only (requires arch::is(XDNA2, "     \
                  "AIE_MLv2)), and AIE2 has no instruction for it; use an npu2 device for the "    \
                  "design, or compute " WHAT " without aie::" #NAME " on npu1");                   \
    static_assert(!detail::nlf_arch_ok<TR>() || detail::is_float_vector_v<V>,                      \
                  "aie::" #NAME ": the AIE API's aie::" #NAME " takes an aie::vector<float, N> "   \
                  "(aie.hpp: " #NAME "(const vector<float, Elems> &)), not this argument; use a "  \
                  "vector of float lanes (bfloat16 lanes widen exactly through "                   \
                  "aie::accum<accfloat, N>(v).to_vector<float>())");                               \
    static_assert(!detail::nlf_arch_ok<TR>() || detail::nlf_type_ok<TR>(),                         \
                  "aie::" #NAME ": on AIE2P (npu2) the AIE API's aie::" #NAME " returns "          \
                  "bfloat16 lanes only (TR = bfloat16, its default: its other TR do not "          \
                  "compile or reach no implementation); use aie::" #NAME "(v) or aie::" #NAME      \
                  "<bfloat16>(v) and widen the result if float lanes are needed");                 \
    if constexpr (detail::is_float_vector_v<V>)                                                    \
      return detail::nlf_lanes<TR>(a, [](float x) { return std::NAME(x); });                       \
  }
AIEDSL_HOST_NLF(exp2, "2^x")
AIEDSL_HOST_NLF(tanh, "tanh(x)")
#undef AIEDSL_HOST_NLF

} // namespace aie

#endif // AIEDSL_HOST_HOST_LANES_HPP
