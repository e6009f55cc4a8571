// conv3x3.cc -- aiedsl micro-kernel: one output row of an int8 3x3 convolution (stride 1, zero
// padding 1), with a ReLU option, on one AIE2 / AIE2P core.
//
// ---------------------------------------------------------------------------
// What it computes
// ---------------------------------------------------------------------------
//   out[x, co] = relu(sat8(round_even(sum_{kh, kw, ci} row_kh[x + kw - 1, ci] * w[kh, kw, ci, co]
//                                      / 2^SHIFT)))
//   for x in 0..W-1, co in 0..COUT-1; pixels outside the row are zero (padding 1).
//
// ---------------------------------------------------------------------------
// Data layout
// ---------------------------------------------------------------------------
//   top, mid, bot: the three input rows kh = 0, 1, 2, each W x CIN int8, row-major (pixel by
//     pixel, its CIN channels contiguous: HWC).
//   w: nine taps kh, kw (row-major), each CIN x COUT int8 in the i8 mmul's B blocks (s x t,
//     blocks row-major), as matmul's B: tap (kh, kw) starts at (kh * 3 + kw) * CIN * COUT.
//   out: W x COUT int8, row-major.
//
// ---------------------------------------------------------------------------
// Algorithm
// ---------------------------------------------------------------------------
//   2x2 accumulator blocking as mm.cc: each step owns two r-pixel groups and two t-channel groups
//   of the output. For every tap and every s-channel step, the A block (r pixels x s channels)
//   is gathered from the tap's row at a one-pixel shift (r loads of s bytes, zeros past the
//   row's ends) and multiplied into the accumulators (aie::mmul<r, s, t, int8, int8>). The sums
//   are narrowed by SHIFT (round to nearest even, saturate), clamped at zero when RELU, and
//   stored pixel by pixel.
//
// AIE API used: aie::mmul, aie::vector, aie::load_v, aie::store_v, aie::zeros, aie::concat,
//   aie::max, to_vector<int8_t>(shift), extract, set_rounding/set_saturation.
// Cost (estimate): 9 taps x CIN/s steps of 4 mmuls per 2x2 output patch, each step's A gathered
//   with 2r short loads: max(4, 2r/2) cycles per step; see aiedsl/kernels/matmul.py.
#ifndef AIEDSL_KERNELS_CONV3X3_CC
#define AIEDSL_KERNELS_CONV3X3_CC

#include <stdint.h>
#include <aie_api/aie.hpp>

// The r x s A block of pixels x0..x0+r-1 (each shifted by `shift` pixels) and channels
// c0..c0+s-1 of a W x CIN row; zeros outside the row.
template <unsigned r, unsigned s, unsigned W, unsigned CIN>
inline aie::vector<int8_t, r * s> aiedsl_conv_gather(const int8_t *__restrict row, int x0,
                                                     int shift, unsigned c0) {
  static_assert(r == 4 || r == 8, "r is 4 or 8 pixels");
  aie::vector<int8_t, s> v[r];
  for (unsigned i = 0; i < r; ++i) {
    const int x = x0 + int(i) + shift;
    v[i] = (x < 0 || x >= int(W)) ? aie::zeros<int8_t, s>()
                                  : aie::load_v<s>(row + unsigned(x) * CIN + c0);
  }
  if constexpr (r == 4)
    return aie::concat(aie::concat(v[0], v[1]), aie::concat(v[2], v[3]));
  else
    return aie::concat(aie::concat(aie::concat(v[0], v[1]), aie::concat(v[2], v[3])),
                       aie::concat(aie::concat(v[4], v[5]), aie::concat(v[6], v[7])));
}

template <unsigned r, unsigned s, unsigned t, unsigned W, unsigned CIN, unsigned COUT,
          int SHIFT, bool RELU>
void conv3x3_i8(const int8_t *__restrict top, const int8_t *__restrict mid,
                const int8_t *__restrict bot, const int8_t *__restrict w,
                int8_t *__restrict out) {
  static_assert(W % (2 * r) == 0 && CIN % s == 0 && COUT % (2 * t) == 0,
                "W, CIN and COUT must fit the 2x2-blocked mmul");
  using MMUL = aie::mmul<r, s, t, int8_t, int8_t, acc32>;
  const aie::rounding_mode old_rounding = aie::get_rounding();
  const aie::saturation_mode old_saturation = aie::get_saturation();
  aie::set_rounding(aie::rounding_mode::conv_even);
  aie::set_saturation(aie::saturation_mode::saturate);

  const int8_t *rows[3] = {top, mid, bot};
  constexpr unsigned NB = COUT / t; // B block-columns per tap
  for (unsigned x0 = 0; x0 < W; x0 += 2 * r) {
    for (unsigned bn = 0; bn < NB; bn += 2) {
      const aie::vector<int8_t, MMUL::size_C> zero = aie::zeros<int8_t, MMUL::size_C>();
      MMUL acc00(zero), acc01(zero), acc10(zero), acc11(zero);
      for (unsigned tap = 0; tap < 9; ++tap) {
        const int8_t *row = rows[tap / 3];
        const int shift = int(tap % 3) - 1;
        const int8_t *__restrict wt = w + tap * CIN * COUT;
        for (unsigned c0 = 0; c0 < CIN; c0 += s) {
          aie::vector<int8_t, MMUL::size_A> a0 =
              aiedsl_conv_gather<r, s, W, CIN>(row, int(x0), shift, c0);
          aie::vector<int8_t, MMUL::size_A> a1 =
              aiedsl_conv_gather<r, s, W, CIN>(row, int(x0 + r), shift, c0);
          const int8_t *pb = wt + ((c0 / s) * NB + bn) * MMUL::size_B;
          aie::vector<int8_t, MMUL::size_B> b0 = aie::load_v<MMUL::size_B>(pb);
          aie::vector<int8_t, MMUL::size_B> b1 = aie::load_v<MMUL::size_B>(pb + MMUL::size_B);
          acc00.mac(a0, b0);
          acc01.mac(a0, b1);
          acc10.mac(a1, b0);
          acc11.mac(a1, b1);
        }
      }
      MMUL *accs[4] = {&acc00, &acc01, &acc10, &acc11};
      for (unsigned q = 0; q < 4; ++q) {
        aie::vector<int8_t, MMUL::size_C> c = accs[q]->template to_vector<int8_t>(SHIFT);
        if constexpr (RELU)
          c = aie::max(c, aie::zeros<int8_t, MMUL::size_C>());
        const unsigned px = x0 + (q / 2) * r, co = (bn + q % 2) * t;
        for (unsigned i = 0; i < r; ++i) // pixel by pixel: t channels each
          aie::store_v(out + (px + i) * COUT + co, c.template extract<t>(i));
      }
    }
  }
  aie::set_rounding(old_rounding);
  aie::set_saturation(old_saturation);
}

#endif // AIEDSL_KERNELS_CONV3X3_CC
