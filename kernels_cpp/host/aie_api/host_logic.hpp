// host_logic.hpp -- part of aiedsl's host AIE API header: bitwise ops, comparisons, masks, select.
// Include aie.hpp, not this file.

#ifndef AIEDSL_HOST_HOST_LOGIC_HPP
#define AIEDSL_HOST_HOST_LOGIC_HPP

namespace aie {

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

} // namespace aie

#endif // AIEDSL_HOST_HOST_LOGIC_HPP
