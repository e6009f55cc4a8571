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
//   of the output. For every tap and every two s-channel steps, the A blocks (r pixels x s
//   channels) are gathered from the tap's row at a one-pixel shift: one 128-bit load of 2s
//   channels per pixel (zeros past the row's ends), the halves interleaved into the two steps'
//   blocks, each multiplied into the accumulators (aie::mmul<r, s, t, int8, int8>). The sums
//   are narrowed by SHIFT (round to nearest even, saturate), clamped at zero when RELU, and
//   stored one pixel's 2t channels (128 bits) at a time.
//
// AIE API used: aie::mmul, aie::vector (128 bits and up), aie::load_v, aie::store_v, aie::zeros,
//   aie::concat, aie::interleave_zip, aie::max, to_vector<int8_t>(shift), extract,
//   set_rounding/set_saturation.
// Cost (estimate): 9 taps x CIN/s steps per 2x2 output patch. Per step: 4 mmuls (one cycle
//   each at the core's int8 peak) with loads of matmul's A and B bytes; and r lane moves, one
//   a cycle in the core's single slot for them: each pair of steps makes two gathers of r
//   pixels, each r/2 interleave_zips of 128-bit pixel pairs and r/2 concats of the 128-bit
//   zipped halves (the concats of 256-bit blocks into the 8x8x8 A block pair registers and
//   move nothing). max(4, r) cycles per step: the lane moves bind on npu2 (8x8x8, r = 8).
//   See conv3x3_lane_moves in aiedsl/kernels/conv.py.
#ifndef AIEDSL_KERNELS_CONV3X3_CC
#define AIEDSL_KERNELS_CONV3X3_CC

#include <stdint.h>
#include <utility>
#include <aie_api/aie.hpp>

// The r x s A blocks of pixels x0..x0+r-1 (each shifted by `shift` pixels) for channels
// c0..c0+s-1 (first) and c0+s..c0+2s-1 (second) of a W x CIN row; zeros outside the row. Each
// pixel's 2s channels are one 128-bit load (the AIE API's vectors start at 128 bits); the
// blocks are the pixels' low and high halves, interleaved two pixels at a time.
template <unsigned r, unsigned s, unsigned W, unsigned CIN>
inline std::pair<aie::vector<int8_t, r * s>, aie::vector<int8_t, r * s>>
aiedsl_conv_gather(const int8_t *__restrict row, int x0, int shift, unsigned c0) {
  static_assert(r == 4 || r == 8, "r is 4 or 8 pixels");
  static_assert(2 * s == 16, "two channel steps are one 128-bit load");
  aie::vector<int8_t, 2 * s> v[r];
  for (unsigned i = 0; i < r; ++i) {
    const int x = x0 + int(i) + shift;
    v[i] = (x < 0 || x >= int(W)) ? aie::zeros<int8_t, 2 * s>()
                                  : aie::load_v<2 * s>(row + unsigned(x) * CIN + c0);
  }
  // zip(v[i], v[i+1], s): first = both pixels' channels c0.., second = both pixels' c0+s..
  const auto z01 = aie::interleave_zip(v[0], v[1], s);
  const auto z23 = aie::interleave_zip(v[2], v[3], s);
  if constexpr (r == 4) {
    return {aie::concat(z01.first, z23.first), aie::concat(z01.second, z23.second)};
  } else {
    const auto z45 = aie::interleave_zip(v[4], v[5], s);
    const auto z67 = aie::interleave_zip(v[6], v[7], s);
    return {aie::concat(aie::concat(z01.first, z23.first), aie::concat(z45.first, z67.first)),
            aie::concat(aie::concat(z01.second, z23.second),
                        aie::concat(z45.second, z67.second))};
  }
}

template <unsigned r, unsigned s, unsigned t, unsigned W, unsigned CIN, unsigned COUT,
          int SHIFT, bool RELU>
void conv3x3_i8(const int8_t *__restrict top, const int8_t *__restrict mid,
                const int8_t *__restrict bot, const int8_t *__restrict w,
                int8_t *__restrict out) {
  static_assert(W % (2 * r) == 0 && CIN % (2 * s) == 0 && COUT % (2 * t) == 0,
                "W, CIN and COUT must fit the 2x2-blocked mmul (CIN two channel steps at a time)");
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
        for (unsigned c0 = 0; c0 < CIN; c0 += 2 * s) { // two channel steps per gather
          const auto a0 = aiedsl_conv_gather<r, s, W, CIN>(row, int(x0), shift, c0);
          const auto a1 = aiedsl_conv_gather<r, s, W, CIN>(row, int(x0 + r), shift, c0);
          for (unsigned h = 0; h < 2; ++h) {
            const aie::vector<int8_t, MMUL::size_A> &p0 = h ? a0.second : a0.first;
            const aie::vector<int8_t, MMUL::size_A> &p1 = h ? a1.second : a1.first;
            const int8_t *pb = wt + ((c0 / s + h) * NB + bn) * MMUL::size_B;
            aie::vector<int8_t, MMUL::size_B> b0 = aie::load_v<MMUL::size_B>(pb);
            aie::vector<int8_t, MMUL::size_B> b1 = aie::load_v<MMUL::size_B>(pb + MMUL::size_B);
            acc00.mac(p0, b0);
            acc01.mac(p0, b1);
            acc10.mac(p1, b0);
            acc11.mac(p1, b1);
          }
        }
      }
      // Per r-pixel group, the two t-channel blocks side by side: each pixel's 2t channels are
      // one 128-bit store (zip the blocks t lanes at a time: pixel 0's two halves, pixel 1's..).
      MMUL *accs[2][2] = {{&acc00, &acc01}, {&acc10, &acc11}};
      for (unsigned g = 0; g < 2; ++g) {
        aie::vector<int8_t, MMUL::size_C> c[2];
        for (unsigned h = 0; h < 2; ++h) {
          c[h] = accs[g][h]->template to_vector<int8_t>(SHIFT);
          if constexpr (RELU)
            c[h] = aie::max(c[h], aie::zeros<int8_t, MMUL::size_C>());
        }
        const auto z = aie::interleave_zip(c[0], c[1], t);
        const unsigned px = x0 + g * r, co = bn * t;
        constexpr unsigned half = r / 2; // pixels in each of z.first, z.second
        for (unsigned i = 0; i < half; ++i) {
          aie::store_v(out + (px + i) * COUT + co, z.first.template extract<2 * t>(i));
          aie::store_v(out + (px + half + i) * COUT + co, z.second.template extract<2 * t>(i));
        }
      }
    }
  }
  aie::set_rounding(old_rounding);
  aie::set_saturation(old_saturation);
}

#endif // AIEDSL_KERNELS_CONV3X3_CC
