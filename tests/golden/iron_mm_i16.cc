// The kernels of IRON's whole-array GEMM for the golden test: 64x64 int16 tiles stored in 4x4
// blocks (blocks row-major, each block row-major), C += A * B kept in int16 as IRON's
// matmul_i16_i16. Plain C++: the golden design is compared as MLIR, never timed.
#include <stdint.h>

static inline unsigned at(unsigned i, unsigned j) {
  return ((i / 4) * 16 + j / 4) * 16 + (i % 4) * 4 + j % 4;
}

void zero(int16_t *c) {
  for (unsigned i = 0; i < 64 * 64; ++i)
    c[i] = 0;
}

void matmul(const int16_t *a, const int16_t *b, int16_t *c) {
  for (unsigned i = 0; i < 64; ++i)
    for (unsigned j = 0; j < 64; ++j) {
      int32_t sum = c[at(i, j)];
      for (unsigned k = 0; k < 64; ++k)
        sum += int32_t(a[at(i, k)]) * int32_t(b[at(k, j)]);
      c[at(i, j)] = int16_t(sum);
    }
}
