// Kernels shared by the bad-input designs (tests/bad_inputs/*.py). Plain C++: the corpus is only
// loaded, checked and simulated, never compiled.
#include <stdint.h>

template <unsigned N> void add_one(const int32_t *a, int32_t *b, int32_t n) {
  for (unsigned i = 0; i < N && i < unsigned(n); ++i)
    b[i] = a[i] + 1;
}

template <unsigned N> void scale_f32(const float *a, float *b, float f) {
  for (unsigned i = 0; i < N; ++i)
    b[i] = a[i] * f;
}

template <unsigned N> void add_small(const int32_t *a, int32_t *b, int8_t n) {
  for (unsigned i = 0; i < N; ++i)
    b[i] = a[i] + n;
}
