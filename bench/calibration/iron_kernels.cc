// iron_kernels.cc -- aiedsl's own plain C++ for the kernels of the calibration designs
// (bench/calibration/*.py) that aiedsl's library does not have.
//
// Each function computes what the kernel of the measured IRON design computes, on the same
// buffers, so that the designs can be declared, checked and built. They are written for
// clarity, not speed: the cycle costs the designs declare are those of the IRON kernels that
// ran on the NPU (vectorised AIE API code, or MLIR loops compiled by Peano), reasoned from
// their source in each design's `cost=` string, not the cost of this C++.

#ifndef AIEDSL_BENCH_IRON_KERNELS_CC
#define AIEDSL_BENCH_IRON_KERNELS_CC

#include <stdint.h>

#include <aie_api/aie.hpp>

// Copy(Kern): copy `width` bytes (IRON's inline passThroughLine loop).
template <unsigned N>
void copy_line_u8(const uint8_t *in, uint8_t *out, int32_t width) {
  for (int32_t i = 0; i < width && i < int32_t(N); ++i)
    out[i] = in[i];
}

// VVOp(Mul): c = a * b on int32, low 32 bits kept (IRON's inline arith.muli loop).
template <unsigned N>
void mul_elems_i32(const int32_t *a, const int32_t *b, int32_t *c) {
  for (unsigned i = 0; i < N; ++i)
    c[i] = int32_t(uint32_t(a[i]) * uint32_t(b[i]));
}

// VVOp(AddKern): c = a + b on bfloat16, computed in float and rounded to bfloat16.
template <unsigned N>
void add_elems_bf16(const bfloat16 *a, const bfloat16 *b, bfloat16 *c) {
  for (unsigned i = 0; i < N; ++i)
    c[i] = bfloat16(float(a[i]) + float(b[i]));
}

// ColorThreshold: binary threshold of one line, out = in > thresh ? max_value : 0.
template <unsigned N>
void threshold_line_u8(const uint8_t *in, uint8_t *out, int32_t width, int16_t thresh,
                       int16_t max_value, int8_t kind) {
  (void)kind; // the measured design passes 0: binary
  for (int32_t i = 0; i < width && i < int32_t(N); ++i)
    out[i] = in[i] > uint8_t(thresh) ? uint8_t(max_value) : uint8_t(0);
}

// MVAdd: out[r][c] = in[r][c] + bias[c] on an R x C float tile stored row by row.
template <unsigned R, unsigned C>
void bias_add_rows_f32(const float *in, const float *bias, float *out) {
  for (unsigned r = 0; r < R; ++r)
    for (unsigned c = 0; c < C; ++c)
      out[r * C + c] = in[r * C + c] + bias[c];
}

// GEMM: int16 tiles stored in B x B blocks (blocks row-major, each block row-major).
template <unsigned B>
static inline unsigned blocked_at(unsigned i, unsigned j, unsigned cols) {
  return ((i / B) * (cols / B) + j / B) * (B * B) + (i % B) * B + j % B;
}

template <unsigned N>
void zero_i16(int16_t *c) {
  for (unsigned i = 0; i < N; ++i)
    c[i] = 0;
}

// C += A * B in 4x4 blocks, accumulated in 32 bits and stored back as int16 (low bits).
template <unsigned M, unsigned K, unsigned NC>
void matmul_i16_blocked(const int16_t *a, const int16_t *b, int16_t *c) {
  for (unsigned i = 0; i < M; ++i)
    for (unsigned j = 0; j < NC; ++j) {
      int32_t sum = c[blocked_at<4>(i, j, NC)];
      for (unsigned k = 0; k < K; ++k)
        sum += int32_t(a[blocked_at<4>(i, k, K)]) * int32_t(b[blocked_at<4>(k, j, NC)]);
      c[blocked_at<4>(i, j, NC)] = int16_t(sum);
    }
}

#endif // AIEDSL_BENCH_IRON_KERNELS_CC
