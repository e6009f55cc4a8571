// mm.cc -- aiedsl micro-kernel: blocked matrix multiply (bf16 -> f32, bf16 -> bf16,
// int8 -> int32, int8 -> int8, int8 -> int16, int16 -> int32, int16 -> int16: the combinations
// of mlir-aie's aie_kernels/aie2/mm.cc and aie2p/mm.cc) for one AIE2 / AIE2P compute core. The
// description below is for the bf16 -> f32 4x8x4 case; matmul_blocked at the end takes any
// mmul block shape r x s x t, and "Narrow outputs" says what changes for bf16, int8 and int16 C.
// matmul_narrow narrows an int32 tile of sums to int8 once.
//
// ---------------------------------------------------------------------------
// What it computes
// ---------------------------------------------------------------------------
//   matmul_blocked<bfloat16, float, 4, 8, 4, M, K, N>(a, b, c):   C += A * B
//
//   A is M x K bfloat16, B is K x N bfloat16, C is M x N float (f32).
//   Products of two bf16 values are exact in f32; sums are f32 (accfloat
//   accumulator). On AIE2P (npu2) there is no bf16 matrix multiply: built with
//   AIE_API_EMULATE_BFLOAT16_MMUL_WITH_BFP16, as aiedsl builds AIE2P kernels,
//   the 4x8x8 mmul converts A and B to bfp16ebs8 (blocks of 8 along K sharing
//   an exponent, 8-bit mantissas, rounded to nearest even: the kernel sets
//   conv_even for the call) and multiplies those (aiedsl/kernels/bfp16.py has
//   the model and its sources).
//   The kernel ACCUMULATES into C: it reads C, adds A*B, and
//   writes C back. Zero C first (zero.cc) to get a plain product; calling it
//   once per K-slice of a larger problem sums the slices.
//
// ---------------------------------------------------------------------------
// Data layout (blocked, exactly as the DMA packs the tiles)
// ---------------------------------------------------------------------------
//   Block shapes are those of the native AIE2 bf16 matrix-multiply
//   instruction, r x s x t = 4 x 8 x 4.
//
//   A: (M/4) x (K/8) blocks; each block is 4 rows x 8 cols, row-major
//      (32 contiguous bf16 = 64 bytes); blocks in row-major order.
//      Element A[i][k] is at
//        ((i/4) * (K/8) + (k/8)) * 32 + (i%4) * 8 + (k%8).
//   B: (K/8) x (N/4) blocks; each block is 8 rows x 4 cols, row-major
//      (32 contiguous bf16 = 64 bytes); blocks in row-major order.
//      Element B[k][j] is at
//        ((k/8) * (N/4) + (j/4)) * 32 + (k%8) * 4 + (j%4).
//   C: (M/4) x (N/4) blocks; each block is 4 rows x 4 cols, row-major
//      (16 contiguous f32 = 64 bytes); blocks in row-major order.
//      Element C[i][j] is at
//        ((i/4) * (N/4) + (j/4)) * 16 + (i%4) * 4 + (j%4).
//
//   All three buffers must be 32-byte aligned (AIE2 minimum for 256/512-bit
//   vector loads/stores); every block then sits on a 64-byte boundary.
//   Sizes: M % 8 == 0, K % 8 == 0, N % 8 == 0 (static_assert'ed). M and N
//   need pairs of 4-row / 4-col blocks because of the 2x2 register blocking.
//
// ---------------------------------------------------------------------------
// Algorithm
// ---------------------------------------------------------------------------
//   2x2 accumulator blocking: each step of the two outer loops owns a pair of
//   A block-rows (bm, bm+1) and a pair of B block-columns (bn, bn+1), i.e. an
//   8x8 patch of C held in four 4x4 accumulators C00, C01, C10, C11. The four
//   C blocks are loaded from memory into the accumulators, the inner loop
//   walks the K/8 block-columns of A / block-rows of B doing four
//   4x8 * 8x4 MACs per step (each A block and each B block loaded is used
//   twice), and the four accumulators are stored back to C.
//
// ---------------------------------------------------------------------------
// AIE API names used (exactly this subset)
// ---------------------------------------------------------------------------
//   types:     bfloat16, accauto, aie::vector<T, N>
//   class:     aie::mmul<4, 8, 4, bfloat16, bfloat16, accauto>   (MMUL below)
//   members:   MMUL::size_A (=32), MMUL::size_B (=32), MMUL::size_C (=16)
//              MMUL(const aie::vector<float, MMUL::size_C> &)  -- init acc
//                                                                 from C
//              MMUL::mac(const aie::vector<bfloat16, size_A> &,
//                        const aie::vector<bfloat16, size_B> &)   -- acc += A*B
//              MMUL::to_vector<float>()  (spelled C.template to_vector<float>())
//              MMUL(const aie::vector<int8_t, MMUL::size_C> &, int shift),
//              MMUL::to_vector<int8_t>(int shift)          -- int8 C only
//   functions: aie::load_v<Elems>(const T *), aie::store_v(T *, vector),
//              aie::get_rounding(), aie::set_rounding(aie::rounding_mode),
//              aie::get_saturation(), aie::set_saturation(aie::saturation_mode)
//              (aie::rounding_mode::conv_even, aie::saturation_mode::saturate)
//   macros:    AIE_PREPARE_FOR_PIPELINING, AIE_LOOP_MIN_ITERATION_COUNT(n)
//              (defined below if absent; they expand to nothing on a host
//              compiler, to chess attributes under __chess__, and to
//              `#pragma clang loop min_iteration_count(n)` under Peano,
//              which defines __AIECC__).
//
// ---------------------------------------------------------------------------
// Cost model (cycles per call, AIE2 / npu1, Peano -O2)
// ---------------------------------------------------------------------------
//   cycles(M, K, N) = (M/8) * (N/8) * (4 * (K/8) + 7) + 20
//
//   Reasoning:
//   * Inner K step: 4 mmul MACs (the vector unit issues one 4x8x4 bf16 MAC,
//     128 MACs, per cycle -> 4 cycles) and 4 vector loads of 512 bits
//     (A0, A1, B0, B1). AIE2 has two 256-bit load units, i.e. 512 bits per
//     cycle -> 4 cycles. Compute and load bandwidth balance: II = 4 per step
//     of the pipelined inner loop, K/8 steps per 8x8 patch of C.
//   * Per 8x8 patch, around the inner loop: loading and storing the 4 C
//     blocks and the pipeline's fill and drain, mostly overlapped with the
//     neighbouring patches' inner loops: 7 cycles, calibrated so the model
//     gives Taka et al.'s (arXiv 2512.13282) single-core bf16 measurement on
//     npu1, 64x104x64 at 112.6 MACs/cycle (the model: 112.2).
//   * Per call: function entry/exit and loop setup, ~20 cycles (estimate).
//   * Example: 64x64x64 -> 64 patches * (32 + 7) + 20 = 2516 cycles against
//     the 2048-cycle compute bound (81 % of the 128 MAC/cycle peak).
//   The int8 model has the same form with its own per-patch constant (11,
//   calibrated to Taka et al.'s int8 64x232x64 at 233 MACs/cycle); see
//   aiedsl/kernels/matmul.py (matmul_step). A step is the longer of its 4
//   mmuls, one a cycle (each shape here is the core's peak MACs per cycle
//   for its input type), and its two A and two B block loads at the core's
//   load bytes per cycle (TargetModel.core_load_bytes_per_cycle): 64 on AIE2,
//   two 256-bit loads; 128 on AIE2P, whose two load slots each fill a 512-bit
//   x register (llvm-aie's VLDA_dmx_lda_x, VLDB_dmx_ldb_x). So npu2's 4x8x8
//   bf16 step loads 384 bytes in 3 cycles and its 4 mmuls bound it: 4 cycles
//   (at AIE2's load width those 384 bytes would take 6).
//   The narrow outputs below cost the same: the C loads and stores (half or
//   a quarter of the bytes) and the conversion are in the per-patch constant,
//   overlapped with the neighbouring patches' inner loops.
//   matmul_narrow: per r x t block, its int32 bytes loaded or its narrowed
//   bytes stored, whichever takes longer at the core's load and store widths
//   (npu1, 4x8 blocks: 128 bytes at 64 per cycle, 2 cycles), plus 14 for
//   pipeline fill and drain (as zero.cc's; an estimate).
//
// ---------------------------------------------------------------------------
// Narrow outputs (C smaller than the accumulator)
// ---------------------------------------------------------------------------
//   bf16 -> bf16 (TO = bfloat16): each call loads its C blocks into f32
//     accumulators (exact), adds A*B in f32 and rounds C back to bf16 with
//     round-to-nearest-even (the kernel sets aie::rounding_mode::conv_even
//     for the call; the reset mode, floor, would truncate; on AIE2P the bfp16
//     conversion of A and B rounds by that mode too, and by the core's mode,
//     floor after reset, for an f32 C). So a K loop of
//     calls rounds C once per call: C_{j+1} = bf16(C_j + A_j B_j). It halves
//     C in L1 (a 96x96 tile: 18 KB instead of 36 KB), which is what lets
//     Taka et al.'s 96x56x96 and 112x48x96 tiles fit 64 KB double-buffered.
//   int8 -> int8 (TO = int8_t, SHIFT >= 0): each call loads C shifted left
//     by SHIFT into the 32-bit accumulators (aie::mmul(vector, shift)), adds
//     A*B exactly and narrows with to_vector<int8_t>(SHIFT): shift right
//     rounding to nearest, ties to even (conv_even), and saturate to
//     [-128, 127]:
//       C_{j+1} = sat8(round((C_j * 2^SHIFT + A_j B_j) / 2^SHIFT)).
//     So a K loop of n calls into one C rounds and saturates its partial
//     sums n times, not once: a partial sum clipped at 127 stays clipped
//     whatever the later calls add (mlir-aie's i8 -> i8 kernel,
//     aie_kernels/aie2/mm.cc, stores every call's C narrowed too). For one
//     rounding, sum into an int32 C and narrow it once after the last call
//     with matmul_narrow (below): C = sat8(round(sum / 2^SHIFT)).
//   int8 -> int16 and int16 -> int16 (TO = int16_t, SHIFT 0..15): the same
//     with C saturated to [-32768, 32767]. The accumulator is 32 bits for
//     both (the AIE API's default_accum_bits for 8- and 16-bit inputs), so
//     int16 products, up to 2^30 each, can wrap its lanes in a long K step,
//     as they do for an int32 C. mlir-aie's own i8_i16 and i16_i16 kernels
//     store with to_vector<T_out>() (no shift) in whatever rounding and
//     saturation modes the core is in; these set them as for int8.
//     The rounding and saturation modes are set for the call and the
//     previous modes restored at its end (the control registers are the
//     core's, shared with every other kernel it runs).
//   Wider outputs (f32, int32) keep the reset modes and shift 0, exactly as
//   before: int32 keeps the low 32 bits.
// ---------------------------------------------------------------------------

#ifndef AIEDSL_KERNELS_MM_CC
#define AIEDSL_KERNELS_MM_CC

#include <stdint.h>

#include <type_traits>

#include <aie_api/aie.hpp>

// Loop-hint macros (same names as mlir-aie's aie_kernel_utils.h, which is not
// on our include path). Only defined when absent, so this block may appear
// several times in one translation unit.
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

// Narrow C: loaded into the accumulator (shifted left by SHIFT for integers), and stored back
// rounded (and, for integers, shifted right by SHIFT and saturated).
template <typename TO> constexpr bool aiedsl_narrow_c() {
  return std::is_same_v<TO, bfloat16> || (std::is_integral_v<TO> && sizeof(TO) < 4);
}

template <typename MMUL, typename TO, int SHIFT>
inline MMUL aiedsl_acc_from(const aie::vector<TO, MMUL::size_C> &v) {
  if constexpr (std::is_integral_v<TO> && SHIFT != 0)
    return MMUL(v, SHIFT);
  else
    return MMUL(v);
}

template <bool RELU, typename TO, unsigned L>
inline aie::vector<TO, L> aiedsl_relu(const aie::vector<TO, L> &v) {
  if constexpr (RELU)
    return aie::max(v, aie::zeros<TO, L>());
  else
    return v;
}

template <typename TO, int SHIFT, typename MMUL>
inline aie::vector<TO, MMUL::size_C> aiedsl_acc_to(const MMUL &acc) {
  if constexpr (std::is_integral_v<TO> && SHIFT != 0)
    return acc.template to_vector<TO>(SHIFT);
  else
    return acc.template to_vector<TO>();
}

// C += A * B for any mmul block shape r x s x t the AIE API has for TI x TI -> TO:
// bf16 -> f32 or bf16 (4x8x4 npu1, 4x8x8 npu2), int8 -> int32, int8 or int16 (4x8x8 npu1, 8x8x8
// npu2), int16 -> int32 or int16 (4x4x4 npu1, 4x4x8 npu2), as mlir-aie's mm.cc for AIE2 and AIE2P.
// Blocks as described above with 4, 8, 4 replaced by r, s, t; M % (2r) == 0, K % s == 0,
// N % (2t) == 0. SHIFT (int8 or int16 C only) scales C by 2^-SHIFT.
// ZERO_C starts from zero instead of C (C = A * B, what a 1x1 convolution computes); RELU clamps
// the narrowed result at zero (conv2d_1x1's activation).
template <typename TI, typename TO, unsigned r, unsigned s, unsigned t, unsigned M, unsigned K,
          unsigned N, int SHIFT = 0, bool ZERO_C = false, bool RELU = false>
void matmul_blocked(const TI *__restrict a, const TI *__restrict b, TO *__restrict c) {
  static_assert(M > 0 && M % (2 * r) == 0, "M must be a positive multiple of 2r");
  static_assert(K > 0 && K % s == 0, "K must be a positive multiple of s");
  static_assert(N > 0 && N % (2 * t) == 0, "N must be a positive multiple of 2t");
  static_assert(SHIFT == 0 || (std::is_integral_v<TO> && sizeof(TO) < 4),
                "SHIFT is for a narrow integer C");
  static_assert(SHIFT >= 0 && (SHIFT == 0 || SHIFT <= 31 - 8 * int(sizeof(TO))),
                "SHIFT must be 0..23 for an int8 C, 0..15 for an int16 C (C << SHIFT fits the "
                "32-bit accumulator)");

  using MMUL = aie::mmul<r, s, t, TI, TI, accauto>;
  constexpr bool narrow = aiedsl_narrow_c<TO>();

  // Narrow C, and bf16 inputs on AIE2P's bfp16 unit, round to nearest even (and integers
  // saturate) for this call only.
  constexpr bool even = narrow || aiedsl_bfp16_inputs<TI>();
  [[maybe_unused]] const aie::rounding_mode old_rounding = aie::get_rounding();
  [[maybe_unused]] const aie::saturation_mode old_saturation = aie::get_saturation();
  if constexpr (even) {
    aie::set_rounding(aie::rounding_mode::conv_even);
    if constexpr (std::is_integral_v<TO>)
      aie::set_saturation(aie::saturation_mode::saturate);
  }

  // Block counts along each dimension.
  constexpr unsigned MB = M / r; // block-rows of A and C
  constexpr unsigned KB = K / s; // block-cols of A == block-rows of B
  constexpr unsigned NB = N / t; // block-cols of B and C

  for (unsigned bm = 0; bm < MB; bm += 2) {
    // First C block of block-rows bm and bm + 1.
    TO *__restrict c_row0 = c + (bm * NB) * MMUL::size_C;
    TO *__restrict c_row1 = c + ((bm + 1) * NB) * MMUL::size_C;

    for (unsigned bn = 0; bn < NB; bn += 2) {
      TO *__restrict p_c00 = c_row0 + bn * MMUL::size_C;
      TO *__restrict p_c01 = c_row0 + (bn + 1) * MMUL::size_C;
      TO *__restrict p_c10 = c_row1 + bn * MMUL::size_C;
      TO *__restrict p_c11 = c_row1 + (bn + 1) * MMUL::size_C;

      // Start the four accumulators from the current C contents (or from zero).
      const aie::vector<TO, MMUL::size_C> zero_c = aie::zeros<TO, MMUL::size_C>();
      aie::vector<TO, MMUL::size_C> v_c00 = ZERO_C ? zero_c : aie::load_v<MMUL::size_C>(p_c00);
      aie::vector<TO, MMUL::size_C> v_c01 = ZERO_C ? zero_c : aie::load_v<MMUL::size_C>(p_c01);
      aie::vector<TO, MMUL::size_C> v_c10 = ZERO_C ? zero_c : aie::load_v<MMUL::size_C>(p_c10);
      aie::vector<TO, MMUL::size_C> v_c11 = ZERO_C ? zero_c : aie::load_v<MMUL::size_C>(p_c11);
      MMUL acc00 = aiedsl_acc_from<MMUL, TO, SHIFT>(v_c00);
      MMUL acc01 = aiedsl_acc_from<MMUL, TO, SHIFT>(v_c01);
      MMUL acc10 = aiedsl_acc_from<MMUL, TO, SHIFT>(v_c10);
      MMUL acc11 = aiedsl_acc_from<MMUL, TO, SHIFT>(v_c11);

      // A block (bm, 0), (bm + 1, 0); B block (0, bn), (0, bn + 1).
      const TI *__restrict p_a0 = a + (bm * KB) * MMUL::size_A;
      const TI *__restrict p_a1 = a + ((bm + 1) * KB) * MMUL::size_A;
      const TI *__restrict p_b0 = b + bn * MMUL::size_B;
      const TI *__restrict p_b1 = b + (bn + 1) * MMUL::size_B;

      // K/s is a compile-time constant, so the compiler knows the exact trip count; the hint
      // only states the static_assert-backed lower bound.
      AIE_PREPARE_FOR_PIPELINING
      AIE_LOOP_MIN_ITERATION_COUNT(1)
      for (unsigned bk = 0; bk < KB; ++bk) {
        // Next A block along the row; next B block down the column (one block-row, NB blocks).
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

      aie::store_v(p_c00, aiedsl_relu<RELU>(aiedsl_acc_to<TO, SHIFT>(acc00)));
      aie::store_v(p_c01, aiedsl_relu<RELU>(aiedsl_acc_to<TO, SHIFT>(acc01)));
      aie::store_v(p_c10, aiedsl_relu<RELU>(aiedsl_acc_to<TO, SHIFT>(acc10)));
      aie::store_v(p_c11, aiedsl_relu<RELU>(aiedsl_acc_to<TO, SHIFT>(acc11)));
    }
  }

  if constexpr (even) {
    aie::set_rounding(old_rounding);
    aie::set_saturation(old_saturation);
  }
}

// C = sat(round(ACC / 2^SHIFT)): an int32 tile of sums (what matmul_blocked<TI, int32_t, ...>
// summed over a whole K loop) narrowed once to the integer TO, element by element, so the layout
// is the tile's own (C keeps ACC's r x t blocks). Each block is loaded into the mmul's accumulator
// (as matmul_blocked loads an int32 C) and stored as matmul_blocked stores a narrow C: shift right
// by SHIFT rounding to nearest, ties to even (conv_even), saturated to TO's range. M * N must be
// a multiple of r * t (it is for any tile matmul_blocked takes).
template <typename TI, typename TO, unsigned r, unsigned s, unsigned t, unsigned M, unsigned N,
          int SHIFT>
void matmul_narrow(const int32_t *__restrict acc, TO *__restrict c) {
  using MMUL = aie::mmul<r, s, t, TI, TI, accauto>;
  static_assert(std::is_integral_v<TO> && sizeof(TO) < 4, "TO must be a narrow integer");
  static_assert(SHIFT >= 0 && SHIFT <= 31 - 8 * int(sizeof(TO)),
                "SHIFT must be 0..23 for an int8 C, 0..15 for an int16 C (as matmul_blocked's)");
  static_assert((M * N) % MMUL::size_C == 0, "M * N must be a multiple of r * t");
  const aie::rounding_mode old_rounding = aie::get_rounding();
  const aie::saturation_mode old_saturation = aie::get_saturation();
  aie::set_rounding(aie::rounding_mode::conv_even);
  aie::set_saturation(aie::saturation_mode::saturate);

  AIE_PREPARE_FOR_PIPELINING
  AIE_LOOP_MIN_ITERATION_COUNT(1)
  for (unsigned i = 0; i < M * N / MMUL::size_C; ++i) {
    MMUL block(aie::load_v<MMUL::size_C>(acc + i * MMUL::size_C));
    aie::store_v(c + i * MMUL::size_C, aiedsl_acc_to<TO, SHIFT>(block));
  }

  aie::set_rounding(old_rounding);
  aie::set_saturation(old_saturation);
}

#endif // AIEDSL_KERNELS_MM_CC
