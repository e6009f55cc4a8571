// rgba2gray.cc -- aiedsl micro-kernel: RGBA pixels to 8-bit gray on one AIE2 core.
//
// ---------------------------------------------------------------------------
// What it computes
// ---------------------------------------------------------------------------
//   rgba2gray_u8<N>(in, out):
//       s      = 77 * R + 150 * G + 29 * B          (in[4i], in[4i+1], in[4i+2])
//       out[i] = s / 256, rounded to nearest, ties to even   for 0 <= i < N
//
//   The luma of ITU-R BT.601 (0.299 R + 0.587 G + 0.114 B) in 8-bit fixed
//   point: the weights are 0.299, 0.587 and 0.114 times 256, rounded, and sum
//   to 256, so white (255, 255, 255) stays 255 and no sum needs saturating.
//   Alpha (in[4i+3]) is read and ignored. The rounding is the core's
//   conv_even mode, set for the call and restored after it (a core keeps its
//   modes from call to call, whichever kernel set them).
//
// ---------------------------------------------------------------------------
// Data layout
// ---------------------------------------------------------------------------
//   in:  N pixels of 4 uint8_t each (R, G, B, A), 4N bytes, 64-byte aligned.
//   out: N uint8_t, not overlapping in, 32-byte aligned.
//   N % 32 == 0 (static_assert'ed): 32 pixels (128 bytes) a step.
//
// ---------------------------------------------------------------------------
// AIE API names used (exactly this subset)
// ---------------------------------------------------------------------------
//   types:     aie::vector<uint8_t, 32/64/128>, aie::accum<acc32, 32>,
//              aie::rounding_mode
//   functions: aie::load_v<64>(const uint8_t *), aie::concat(v, v),
//              aie::filter_even(v, 1), aie::filter_odd(v, 1),
//              aie::mul(vector, scalar), aie::mac(accum, vector, scalar),
//              accum::to_vector<uint8_t>(shift), aie::store_v(uint8_t *, v),
//              aie::get_rounding(), aie::set_rounding(aie::rounding_mode)
//   macros:    AIE_PREPARE_FOR_PIPELINING, AIE_LOOP_MIN_ITERATION_COUNT(n)
//              (defined below if absent; see mm.cc)
//
// ---------------------------------------------------------------------------
// Cost model (cycles per call, AIE2 / npu1, Peano -O2)
// ---------------------------------------------------------------------------
//   cycles(N) = 5 * (N / 32) + 20
//
//   Reasoning: a step of 32 pixels loads 128 bytes (two 512-bit loads, one
//   cycle each over the two 256-bit load units), separates the channels with
//   five filters on the shuffle unit (even and odd bytes of the 1024-bit
//   pixel vector: R B R B... and G A G A...; then R and B from the first, G
//   from the second), makes three 32-lane uint8 x uint8 products on the MAC
//   unit (1 mul + 2 mac), one srs to uint8 and one 256-bit store. The
//   shuffle unit, one a cycle, bounds the pipelined loop at II = 5 (the bound
//   `aiedsl kernel profile` finds); 20 cycles of fill, drain, the mode reads
//   and writes, and the call (threshold.cc's 14, plus the modes).
// ---------------------------------------------------------------------------

#ifndef AIEDSL_KERNELS_RGBA2GRAY_CC
#define AIEDSL_KERNELS_RGBA2GRAY_CC

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
void rgba2gray_u8(const uint8_t *__restrict in, uint8_t *__restrict out) {
  constexpr unsigned L = 32; // pixels a step: 32 lanes of uint8 x uint8 -> acc32
  static_assert(N > 0 && N % L == 0, "N must be a positive multiple of 32");
  // BT.601 luma weights times 256 (they sum to 256)
  constexpr uint8_t WR = 77, WG = 150, WB = 29;

  const aie::rounding_mode old_rounding = aie::get_rounding();
  aie::set_rounding(aie::rounding_mode::conv_even);

  AIE_PREPARE_FOR_PIPELINING
  AIE_LOOP_MIN_ITERATION_COUNT(1)
  for (unsigned i = 0; i < N / L; ++i) {
    const uint8_t *p = in + 4 * L * i;
    const aie::vector<uint8_t, 4 * L> px =
        aie::concat(aie::load_v<2 * L>(p), aie::load_v<2 * L>(p + 2 * L));
    const aie::vector<uint8_t, 2 * L> rb = aie::filter_even(px, 1); // R B R B ...
    const aie::vector<uint8_t, 2 * L> ga = aie::filter_odd(px, 1);  // G A G A ...
    aie::accum<acc32, L> acc = aie::mul(aie::filter_even(rb, 1), WR);
    acc = aie::mac(acc, aie::filter_even(ga, 1), WG);
    acc = aie::mac(acc, aie::filter_odd(rb, 1), WB);
    aie::store_v(out + L * i, acc.template to_vector<uint8_t>(8));
  }
  aie::set_rounding(old_rounding);
}

#endif // AIEDSL_KERNELS_RGBA2GRAY_CC
