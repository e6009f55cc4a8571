// threshold.cc -- aiedsl micro-kernel: truncating threshold of uint8 pixels on one AIE2 core.
//
// ---------------------------------------------------------------------------
// What it computes
// ---------------------------------------------------------------------------
//   threshold_u8<N>(in, out, thr, n):
//       out[i] = min(in[i], (uint8_t)thr)   for 0 <= i < N
//
//   The "truncate" threshold type of mlir-aie's test/npu-xrt/two_col kernel
//   (XF_THRESHOLD_TYPE_TRUNC): every value above the threshold becomes the
//   threshold. thr arrives as an int32_t because it is read from a
//   runtime-parameter buffer of 32-bit slots (aiex.npu.rtp_write writes whole
//   words); only its low 8 bits are used (static_cast<uint8_t>, i.e. the
//   value modulo 256). aiedsl check refuses a level outside 0..255, passed
//   in the call or written by rt.rtp_write (scalar("thr", i32,
//   narrows_to=u8)): 300 would silently truncate at 44.
//   * n is the element count passed at run time; it must equal N. The loop
//     runs to the compile-time N (so the compiler knows the trip count and
//     can software-pipeline it); n itself is not read. aiedsl check refuses
//     another n (scalar("n", i32, equals=N)), and the numpy reference, like
//     this loop, processes all N elements whatever n says.
//
// ---------------------------------------------------------------------------
// Data layout
// ---------------------------------------------------------------------------
//   in, out: N contiguous uint8_t each, not overlapping, 64-byte aligned.
//   N % 64 == 0 (static_assert'ed): one 512-bit vector = 64 uint8 lanes.
//
// ---------------------------------------------------------------------------
// AIE API names used (exactly this subset)
// ---------------------------------------------------------------------------
//   types:     aie::vector<uint8_t, 64>
//   functions: aie::load_v<64>(const uint8_t *), aie::broadcast<uint8_t, 64>,
//              aie::min(vector, vector), aie::store_v(uint8_t *, vector)
//   macros:    AIE_PREPARE_FOR_PIPELINING, AIE_LOOP_MIN_ITERATION_COUNT(n)
//              (defined below if absent; see mm.cc)
//
// ---------------------------------------------------------------------------
// Cost model (cycles per call, AIE2 / npu1, Peano -O2)
// ---------------------------------------------------------------------------
//   cycles(N) = 2 * (N / 64) + 14
//
//   Reasoning, as for scale.cc: one loop iteration loads 64 uint8 (512 bits:
//   one 256-bit load on each of the two load units, 1 cycle), does one
//   64-lane vmin (1 cycle, overlapped), and stores 512 bits through the single
//   256-bit store port (2 cycles). The pipelined loop is store-bound at
//   II = 2 per 64 pixels; 14 cycles of fill, drain and broadcast, the
//   overhead measured for scale.cc's loop of the same shape.
// ---------------------------------------------------------------------------

#ifndef AIEDSL_KERNELS_THRESHOLD_CC
#define AIEDSL_KERNELS_THRESHOLD_CC

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

template <unsigned N>
void threshold_u8(const uint8_t *__restrict in, uint8_t *__restrict out,
                  int32_t thr, int32_t n) {
  constexpr unsigned L = 64; // uint8 lanes in a 512-bit vector
  static_assert(N > 0 && N % L == 0, "N must be a positive multiple of 64");
  (void)n; // contract: n == N; the loop bound is the compile-time N

  const aie::vector<uint8_t, L> t =
      aie::broadcast<uint8_t, L>(static_cast<uint8_t>(thr));

  AIE_PREPARE_FOR_PIPELINING
  AIE_LOOP_MIN_ITERATION_COUNT(1)
  for (unsigned i = 0; i < N / L; ++i) {
    aie::vector<uint8_t, L> v = aie::load_v<L>(in + i * L);
    aie::store_v(out + i * L, aie::min(v, t));
  }
}

#endif // AIEDSL_KERNELS_THRESHOLD_CC
