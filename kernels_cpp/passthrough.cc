// passthrough.cc -- aiedsl micro-kernel: copy a buffer on one AIE2 core.
//
// ---------------------------------------------------------------------------
// What it computes
// ---------------------------------------------------------------------------
//   passthrough<T, N>(in, out):   out[i] = in[i]   for 0 <= i < N
//
// ---------------------------------------------------------------------------
// Data layout
// ---------------------------------------------------------------------------
//   in, out: N contiguous elements of T each, not overlapping (both are
//   __restrict), both 32-byte aligned. The copy is layout-agnostic.
//   Vectors are 512 bits, W = 64 / sizeof(T) lanes:
//     float / int32_t: W = 16;  bfloat16 / int16_t: W = 32;  int8_t: W = 64.
//   N % W == 0 (static_assert'ed).
//
// ---------------------------------------------------------------------------
// AIE API names used (exactly this subset)
// ---------------------------------------------------------------------------
//   types:     aie::vector<T, W>
//   functions: aie::load_v<W>(const T *), aie::store_v(T *, vector)
//   macros:    AIE_PREPARE_FOR_PIPELINING, AIE_LOOP_MIN_ITERATION_COUNT(n)
//              (defined below if absent; see mm.cc)
//
// ---------------------------------------------------------------------------
// Cost model (cycles per call, AIE2 / npu1, Peano -O2)
// ---------------------------------------------------------------------------
//   cycles(T, N) = (N * sizeof(T)) / 32 + 14
//
//   Reasoning: per 512-bit vector, the load takes one cycle (two 256-bit
//   load units work in parallel) but the store takes two (one 256-bit store
//   unit), so the pipelined loop is store-bound at II = 2 per 64 bytes, one
//   cycle per 32 bytes. The constant 14 (fill/drain + call) is the measured
//   npu1 overhead of the equally shaped scale kernel (see scale.cc); an
//   estimate here.
// ---------------------------------------------------------------------------

#ifndef AIEDSL_KERNELS_PASSTHROUGH_CC
#define AIEDSL_KERNELS_PASSTHROUGH_CC

#include <stdint.h>

#include <aie_api/aie.hpp>

#ifndef AIEDSL_PRAGMA
#define AIEDSL_PRAGMA(x) _Pragma(#x)
#endif
#ifndef AIE_PREPARE_FOR_PIPELINING
#if defined(__chess__)
#define AIE_PREPARE_FOR_PIPELINING [[chess::prepare_for_pipelining]]
#else
#define AIE_PREPARE_FOR_PIPELINING
#endif
#endif
#ifndef AIE_LOOP_MIN_ITERATION_COUNT
#if defined(__chess__)
#define AIE_LOOP_MIN_ITERATION_COUNT(x) [[chess::min_loop_count(x)]]
#elif defined(__AIECC__)
#define AIE_LOOP_MIN_ITERATION_COUNT(x)                                        \
  AIEDSL_PRAGMA(clang loop min_iteration_count(x))
#else
#define AIE_LOOP_MIN_ITERATION_COUNT(x)
#endif
#endif

template <typename T, unsigned N>
void passthrough(const T *__restrict in, T *__restrict out) {
  // Lanes of one 512-bit vector of T.
  constexpr unsigned W = 64 / sizeof(T);
  static_assert(64 % sizeof(T) == 0, "element size must divide 64 bytes");
  static_assert(N > 0 && N % W == 0,
                "N must be a positive multiple of the 512-bit lane count");

  AIE_PREPARE_FOR_PIPELINING
  AIE_LOOP_MIN_ITERATION_COUNT(1)
  for (unsigned i = 0; i < N / W; ++i) {
    aie::vector<T, W> v = aie::load_v<W>(in + i * W);
    aie::store_v(out + i * W, v);
  }
}

#endif // AIEDSL_KERNELS_PASSTHROUGH_CC
