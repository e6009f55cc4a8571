// mm_cascade.cc -- aiedsl micro-kernel: one stage of a K-split matrix multiply whose partial
// sums pass from core to core by the accumulator cascade (bf16 in, f32 accumulators, AIE2 and
// AIE2P).
//
// ---------------------------------------------------------------------------
// What it computes
// ---------------------------------------------------------------------------
//   A chain of cores splits K: core j multiplies A_j (M x K_j) by B_j (K_j x N). The chain's
//   first core starts from zero and puts its partial sum on the cascade (PUT); each middle core
//   gets the sum so far, adds its own product and puts it on (GET and PUT); the last core gets
//   it, adds its product and stores C (GET only):
//       matmul_cascade_put<...>(a, b)          acc  = A B              -> cascade
//       matmul_cascade_put_get<...>(a, b)      acc  = cascade + A B    -> cascade
//       matmul_cascade_get<...>(a, b, c)       C    = cascade + A B    (C is overwritten)
//   On AIE2P the 4x8x8 mmul runs on the bfp16 unit, as mm.cc's does: A and B are quantized to
//   bfp16ebs8 first, rounded to nearest even (the stage sets conv_even for the call, as mm.cc
//   does; aiedsl/kernels/bfp16.py has the model).
//
// ---------------------------------------------------------------------------
// Data layout
// ---------------------------------------------------------------------------
//   A, B and C are blocked as in mm.cc (r x s x t = 4 x 8 x 4 on AIE2, 4 x 8 x 8 on AIE2P).
//   The cascade carries the accumulators of C's 2x2 patches in the order the kernel makes
//   them: patch by patch (block-rows bm = 0, 2, ..., block-columns bn = 0, 2, ...), in each
//   patch the blocks (bm, bn), (bm, bn + 1), (bm + 1, bn), (bm + 1, bn + 1). The cascade word
//   is 512 bits on both (mlir-aie's getAccumulatorCascadeSize, which its NPU2 model inherits
//   from AIE2's), 16 f32 (v16accfloat): a 4x4 block on AIE2 is one word, a 4x8 block on AIE2P
//   two, its lanes 0-15 then 16-31 (the block's rows 0-1, then 2-3). Every stage walks C in
//   the same order, so the words meet. A middle stage gets a patch's words, adds its product
//   and puts them before it gets the next patch's (4 words each way on AIE2, 8 on AIE2P).
//
// ---------------------------------------------------------------------------
// AIE API names used (besides mm.cc's)
// ---------------------------------------------------------------------------
//   aie::accum<accfloat, 16>(v16accfloat), MMUL(accum), MMUL::to_accum(), and the cascade
//   intrinsics get_scd_v16accfloat() and put_mcd(v16accfloat) (llvm-aie's aiev2_streams.h and
//   aie2p_streams.h); an aie::accum<accfloat, 16> converts to v16accfloat. On AIE2P a 32-lane
//   block goes as its halves, acc.extract<16>(0) then (1) (aie2p_streams.h has no
//   put_mcd(v32accfloat)), and comes back as aie::concat of two gets taken one after the
//   other (a function's arguments are evaluated in no set order).
//
// ---------------------------------------------------------------------------
// Cost model (cycles per call): as mm.cc's K steps, with a patch's cascade words in place of
// its C block loads or stores (aiedsl/kernels/cascade.py, cascade_cycles):
//   AIE2 / npu1:   (M/8) (N/8) (4 (K/8) + 7) + 20     the patch's four words, one a cycle,
//                                                     within mm.cc's calibrated 7
//   AIE2P / npu2:  (M/8) (N/16) (4 (K/8) + 11) + 20   its eight words: 4 cycles more
// The simulator moves a call's words as a stream with its neighbours' calls, not in lockstep
// (aiedsl/sim/cascade_stream.py): a put ends once its downstream neighbour has taken all but
// the 4 words the link holds (a two-word FIFO on each side), a get once its last word came in,
// each at its own pace or as the other side lets it, and a put_get stage passes a patch on as
// this kernel does, its 4 words put once it has got the patch's 4 (8 and 8 on AIE2P: its
// cascade_step, (4, 4) or (8, 8)), taking no word of the next patch while those do not fit.
// ---------------------------------------------------------------------------
#ifndef AIEDSL_KERNELS_MM_CASCADE_CC
#define AIEDSL_KERNELS_MM_CASCADE_CC

#include <stdint.h>
#include <aie_api/aie.hpp>

#ifndef AIE_PREPARE_FOR_PIPELINING
#define AIE_PREPARE_FOR_PIPELINING
#endif
#ifndef AIE_LOOP_MIN_ITERATION_COUNT
#define AIE_LOOP_MIN_ITERATION_COUNT(x)
#endif

// A C block from the cascade: one word (AIE2's 16 lanes) or two (AIE2P's 32: lanes 0-15 first).
// bf16 inputs on AIE2P's bfp16 unit (AIE_API_EMULATE_BFLOAT16_MMUL_WITH_BFP16, which aiedsl
// defines for AIE2P): each mmul converts A and B to bfp16ebs8 in the core's rounding mode. The
// reset mode, floor, biases every conversion the same way; the kernel sets conv_even for the
// call, as IRON's aie_kernels/aie2p/mm.cc does under ROUND_CONV_EVEN ("to improve
// accuracy"), which IRON's GEMM passes. The macro is tested as the AIE API tests it (#if, so
// =0 means off).
template <typename TI> constexpr bool aiedsl_bfp16_inputs() {
#if AIE_API_EMULATE_BFLOAT16_MMUL_WITH_BFP16 && defined(__AIE_ARCH__) && __AIE_ARCH__ == 21
  return std::is_same_v<TI, bfloat16>;
#else
  return false;
#endif
}

template <typename MMUL> inline MMUL aiedsl_cascade_get() {
  using WORD = aie::accum<accfloat, 16>;
  if constexpr (MMUL::size_C == 16) {
    return MMUL(WORD(get_scd_v16accfloat()));
  } else {
    WORD lo(get_scd_v16accfloat()); // taken in order: the lanes 0-15 come first
    WORD hi(get_scd_v16accfloat());
    return MMUL(aie::concat(lo, hi));
  }
}

// A C block onto the cascade, as aiedsl_cascade_get takes it.
template <typename MMUL> inline void aiedsl_cascade_put(const MMUL &acc) {
  if constexpr (MMUL::size_C == 16) {
    put_mcd(acc.to_accum());
  } else {
    const auto block = acc.to_accum();
    put_mcd(block.template extract<16>(0));
    put_mcd(block.template extract<16>(1));
  }
}

template <typename TI, unsigned r, unsigned s, unsigned t, unsigned M, unsigned K, unsigned N,
          bool GET, bool PUT>
void matmul_cascade_stage(const TI *__restrict a, const TI *__restrict b,
                          float *__restrict c) {
  static_assert(M > 0 && M % (2 * r) == 0, "M must be a positive multiple of 2r");
  static_assert(K > 0 && K % s == 0, "K must be a positive multiple of s");
  static_assert(N > 0 && N % (2 * t) == 0, "N must be a positive multiple of 2t");
  using MMUL = aie::mmul<r, s, t, TI, TI, accfloat>;
  static_assert(MMUL::size_C == 16 || MMUL::size_C == 32,
                "a C block is one 512-bit cascade word (AIE2 4x8x4) or two (AIE2P 4x8x8)");

  constexpr unsigned MB = M / r;
  constexpr unsigned KB = K / s;
  constexpr unsigned NB = N / t;
  constexpr bool even = aiedsl_bfp16_inputs<TI>();
  [[maybe_unused]] const aie::rounding_mode old_rounding = aie::get_rounding();
  if constexpr (even)
    aie::set_rounding(aie::rounding_mode::conv_even);

  for (unsigned bm = 0; bm < MB; bm += 2) {
    for (unsigned bn = 0; bn < NB; bn += 2) {
      MMUL acc00, acc01, acc10, acc11;
      if constexpr (GET) {
        acc00 = aiedsl_cascade_get<MMUL>();
        acc01 = aiedsl_cascade_get<MMUL>();
        acc10 = aiedsl_cascade_get<MMUL>();
        acc11 = aiedsl_cascade_get<MMUL>();
      } else {
        const aie::vector<float, MMUL::size_C> z = aie::zeros<float, MMUL::size_C>();
        acc00 = MMUL(z);
        acc01 = MMUL(z);
        acc10 = MMUL(z);
        acc11 = MMUL(z);
      }
      const TI *__restrict p_a0 = a + (bm * KB) * MMUL::size_A;
      const TI *__restrict p_a1 = a + ((bm + 1) * KB) * MMUL::size_A;
      const TI *__restrict p_b0 = b + bn * MMUL::size_B;
      const TI *__restrict p_b1 = b + (bn + 1) * MMUL::size_B;

      AIE_PREPARE_FOR_PIPELINING
      AIE_LOOP_MIN_ITERATION_COUNT(1)
      for (unsigned bk = 0; bk < KB; ++bk) {
        aie::vector<TI, MMUL::size_A> v_a0 = aie::load_v<MMUL::size_A>(p_a0);
        p_a0 += MMUL::size_A;
        aie::vector<TI, MMUL::size_A> v_a1 = aie::load_v<MMUL::size_A>(p_a1);
        p_a1 += MMUL::size_A;
        aie::vector<TI, MMUL::size_B> v_b0 = aie::load_v<MMUL::size_B>(p_b0);
        p_b0 += NB * MMUL::size_B;
        aie::vector<TI, MMUL::size_B> v_b1 = aie::load_v<MMUL::size_B>(p_b1);
        p_b1 += NB * MMUL::size_B;
        acc00.mac(v_a0, v_b0);
        acc01.mac(v_a0, v_b1);
        acc10.mac(v_a1, v_b0);
        acc11.mac(v_a1, v_b1);
      }

      if constexpr (PUT) {
        aiedsl_cascade_put(acc00);
        aiedsl_cascade_put(acc01);
        aiedsl_cascade_put(acc10);
        aiedsl_cascade_put(acc11);
      } else {
        float *__restrict c0 = c + (bm * NB + bn) * MMUL::size_C;
        float *__restrict c1 = c + ((bm + 1) * NB + bn) * MMUL::size_C;
        aie::store_v(c0, acc00.template to_vector<float>());
        aie::store_v(c0 + MMUL::size_C, acc01.template to_vector<float>());
        aie::store_v(c1, acc10.template to_vector<float>());
        aie::store_v(c1 + MMUL::size_C, acc11.template to_vector<float>());
      }
    }
  }
  if constexpr (even)
    aie::set_rounding(old_rounding);
}

template <typename TI, unsigned r, unsigned s, unsigned t, unsigned M, unsigned K, unsigned N>
void matmul_cascade_put(const TI *__restrict a, const TI *__restrict b) {
  matmul_cascade_stage<TI, r, s, t, M, K, N, false, true>(a, b, nullptr);
}

template <typename TI, unsigned r, unsigned s, unsigned t, unsigned M, unsigned K, unsigned N>
void matmul_cascade_put_get(const TI *__restrict a, const TI *__restrict b) {
  matmul_cascade_stage<TI, r, s, t, M, K, N, true, true>(a, b, nullptr);
}

template <typename TI, unsigned r, unsigned s, unsigned t, unsigned M, unsigned K, unsigned N>
void matmul_cascade_get(const TI *__restrict a, const TI *__restrict b, float *__restrict c) {
  matmul_cascade_stage<TI, r, s, t, M, K, N, true, false>(a, b, c);
}

#endif // AIEDSL_KERNELS_MM_CASCADE_CC
