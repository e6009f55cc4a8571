// host_lanes.hpp -- part of aiedsl's host AIE API header: lane movement, iterators,
// shuffles, accumulator forms, exp2/tanh.
// Include aie.hpp, not this file.

#ifndef AIEDSL_HOST_HOST_LANES_HPP
#define AIEDSL_HOST_HOST_LANES_HPP

namespace aie {

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

// 2^x and tanh(x) lane by lane (AIE2P has them in hardware), computed in float; exp2<R>(v)
// returns lanes of R (the input's type by default), from a vector or an accumulator.
// A bf16 result rounds to nearest even here, not noted: the AIE2P instruction makes it, and
// whether it follows the rounding mode is not known here.
template <typename R, typename V, typename F> auto aiedsl_float_lanes(const V &a, F f) {
  using T = std::remove_cv_t<std::remove_reference_t<decltype(a.v[0])>>;
  using Out = std::conditional_t<std::is_void_v<R>, T, R>;
  vector<Out, V::size()> out;
  AIEDSL_COUNT(VALU, 1);
  for (unsigned i = 0; i < V::size(); ++i)
    out.v[i] = detail::cast<Out>(f(float(a.v[i])));
  return out;
}
template <typename R = void, typename V> auto exp2(const V &a) {
  return aiedsl_float_lanes<R>(a, [](float x) { return std::exp2(x); });
}
template <typename R = void, typename V> auto tanh(const V &a) {
  return aiedsl_float_lanes<R>(a, [](float x) { return std::tanh(x); });
}

} // namespace aie

#endif // AIEDSL_HOST_HOST_LANES_HPP
