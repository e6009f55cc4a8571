// zero.cc -- aiedsl micro-kernel: fill a buffer with zeros on one AIE2 core.
//
// ---------------------------------------------------------------------------
// What it computes
// ---------------------------------------------------------------------------
//   zero<T, N>(c):   c[i] = 0   for 0 <= i < N
//
//   Typical use: clear the f32 C tile before a sequence of matmul_bf16_f32
//   calls that accumulate into it.
//
// ---------------------------------------------------------------------------
// Data layout
// ---------------------------------------------------------------------------
//   c: N contiguous elements of T (layout-agnostic: a blocked tile is zeroed
//   the same way as a row-major one). c must be 32-byte aligned.
//   Stores are 512-bit vectors, W = 64 / sizeof(T) lanes:
//     float / int32_t: W = 16;  bfloat16 / int16_t: W = 32;  int8_t: W = 64.
//   N % W == 0 (static_assert'ed).
//
// ---------------------------------------------------------------------------
// AIE API names used (exactly this subset)
// ---------------------------------------------------------------------------
//   types:     aie::vector<T, W>
//   functions: aie::zeros<T, W>(), aie::store_v(T *, vector)
//   macros:    AIE_PREPARE_FOR_PIPELINING, AIE_LOOP_MIN_ITERATION_COUNT(n)
//              (defined below if absent; see mm.cc)
//
// ---------------------------------------------------------------------------
// Cost model (cycles per call, AIE2 / npu1, Peano -O2)
// ---------------------------------------------------------------------------
//   cycles(T, N) = (N * sizeof(T)) / 32 + 14
//
//   Reasoning: AIE2 has a single 256-bit (32-byte) store unit, so each
//   512-bit vector store issues as two 256-bit stores: the pipelined loop
//   runs at II = 2 per 64 bytes, i.e. one cycle per 32 bytes. The zero
//   vector is materialised once, outside the loop. The constant 14 covers
//   pipeline fill/drain and the loop set-up; it is taken from the measured
//   npu1 figure for the streaming scale kernel (see scale.cc), an estimate
//   here (a store-only loop has a shorter fill, so it is slightly high).
// ---------------------------------------------------------------------------

#ifndef AIEDSL_KERNELS_ZERO_CC
#define AIEDSL_KERNELS_ZERO_CC

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

template <typename T, unsigned N> void zero(T *__restrict c) {
  // Lanes of one 512-bit vector of T.
  constexpr unsigned W = 64 / sizeof(T);
  static_assert(64 % sizeof(T) == 0, "element size must divide 64 bytes");
  static_assert(N > 0 && N % W == 0,
                "N must be a positive multiple of the 512-bit lane count");

  const aie::vector<T, W> zeros_v = aie::zeros<T, W>();

  AIE_PREPARE_FOR_PIPELINING
  AIE_LOOP_MIN_ITERATION_COUNT(1)
  for (unsigned i = 0; i < N / W; ++i) {
    aie::store_v(c + i * W, zeros_v);
  }
}

#endif // AIEDSL_KERNELS_ZERO_CC
