// add_one for the golden add_one designs: b = a + V on N int32 values (mlir-aie's npu-xrt
// add_one tests add 1 or 41). Plain C++: these designs are compared as MLIR.
#include <stdint.h>

template <unsigned N, int V> void add_one(const int32_t *a, int32_t *b, int32_t n) {
  for (unsigned i = 0; i < N && i < unsigned(n); ++i)
    b[i] = a[i] + V;
}
