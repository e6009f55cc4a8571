// aie_api/aie.hpp -- aiedsl's HOST stand-in for the AIE API, in plain C++20.
//
// It lets the host's g++ compile an AIE kernel unchanged, so that `aiedsl kernel test` and
// `aiedsl sim --kernels native` can run the kernel's real C++ on numpy data. It computes what
// the hardware computes for the names below (same results, none of the speed); it is not the
// AIE API and only covers this subset. A kernel that uses anything else fails to compile with
// "'<name>' is not a member of 'aie'", which aiedsl reports as not covered by this header; a
// raw intrinsic it lacks fails with "'<name>' was not declared in this scope", which aiedsl
// names as an AIE2 intrinsic this header does not model (aiedsl/kernels/host_errors.py). Of the
// AIE API's headers only this one and aie_api/operators.hpp are here: including another
// (<aie_api/utils.hpp>) fails with "aie_api/utils.hpp: No such file or directory", which
// aiedsl reports as an AIE API header the host stand-in does not provide.
//
// Covered names (exactly these):
//   types:      bfloat16 (16-bit storage; float -> bfloat16 rounds to nearest even; += -= *= /=
//               in float, rounded back), acc32, acc64, accfloat, accauto, the core's scalar
//               names int8 .. uint64,
//               aie::vector<T, N = one 512-bit register> (operator[], get, set, size, a
//                                     constructor from lanes, extract<M>, insert, grow<M>),
//               aie::accum<Acc, N>  (to_vector<T>(shift), from_vector, = vector, the explicit
//                                     constructor from a vector and a shift, converts to a
//                                     vector by to_vector, extract<M>(idx), insert(idx, part),
//                                     grow<M>(), to_native()), aie::mask<N> (test, set, clear,
//                                     count, from_uint32, to_uint32, ~ & |),
//               aie::mmul<M, K, N, TA, TB, Acc>  (only the AIE API's modes for the types on
//                                     __AIE_ARCH__ 20 or 21 when it is defined; size_A,
//                                     size_B, size_C, default, from-vector
//                                     and from-accum constructors, mac, mul, to_vector<T>(shift),
//                                     to_accum)
//   functions:  aie::load_v<N>(p) (N defaults to a register), aie::store_v(p, v),
//               aie::load_unaligned_v<N>(p, n = 1), aie::store_unaligned_v(p, v, n = 1),
//               aie::load_floor_v<N>(p, n = N),
//               aie::zeros<T, N>() (an accumulator for an accumulator tag),
//               aie::broadcast<T, N>(x), aie::add/sub/max/min (vector or scalar on either
//               side; accumulator + vector), aie::mul(v, v), aie::mul(v, s), aie::mul_square,
//               aie::mac, aie::msc, aie::negmul, aie::abs, aie::neg, aie::accumulate<L>,
//               aie::bit_and/bit_or/bit_xor (vector or scalar), aie::bit_not,
//               aie::lt/le/gt/ge/eq/neq (-> mask), aie::select(a, b, mask) (b where set),
//               aie::to_fixed<TR>(v, shift) of float or bfloat16 lanes (to nearest even,
//               saturated), aie::to_float<TR>(v, shift),
//               aie::upshift, aie::downshift, aie::vector_cast<T>,
//               aie::reduce_add/reduce_max/reduce_min, aie::inv, aie::invsqrt (vectors and
//               scalars), aie::exp2<TR>(v), aie::tanh<TR>(v) (a vector of float, TR = bfloat16
//               by default; AIE2P's only: refused for AIE2), aie::filter_even/filter_odd(v,
//               step), aie::interleave_zip/unzip(a,
//               b, step), aie::concat (two or more vectors, or any number of accumulators),
//               aie::extract<M>, aie::insert, aie::transpose(v, rows,
//               cols), aie::shuffle_up/down (shifted-in lanes undefined: poison, see below),
//               aie::shuffle_up_fill/down_fill, aie::shuffle_up_rotate/down_rotate,
//               aie::begin_vector<N>, cbegin_vector, begin_restrict_vector,
//               cbegin_restrict_vector (*it loads, *it = v stores, ++it moves N on),
//               aie::vector_ldst_align, aie::vector_decl_align,
//               aie::rounding_mode, aie::saturation_mode, aie::set_rounding(m),
//               aie::get_rounding(), aie::set_saturation(m), aie::get_saturation()
//   operators:  <aie_api/operators.hpp>: the AIE API's aie::operators (- + < <= > >= == != << >>
//               += -= | ^ & ~ on vectors and accumulators, each calling the aie:: function
//               above; listed in that file)
//   macros:     AIE_PREPARE_FOR_PIPELINING, AIE_LOOP_MIN_ITERATION_COUNT(n), chess's
//               chess_prepare_for_pipelining, chess_loop_range, chess_unroll_loop,
//               chess_flatten_loop (empty here), C's restrict; event0(), event1() (no-ops)
//   not covered: the raw intrinsics and native types other than those listed under native
//               and cascade below,
//               aie::sliding_mul*, aie::lut and parallel lookups, block floating point
//               (bfp16ebs8), ups/srs as free functions
//   native:     AIE2's vector and accumulator types (v64int8 .. v16float, the 1024-bit
//               v128int8 .. v32float, v8acc64 .. v64acc32, v16accfloat .. v64accfloat) as
//               aie:: types, broadcast_to_<type>, broadcast_zero_to_<type>,
//               broadcast_s8..u32/bfloat16/float and their broadcast_zero_ forms,
//               shift_bytes, shift, ext_elem, extract_elem, upd_elem, srs_to_<type>,
//               lsrs/ssrs/ulsrs/ussrs, ups_to_v16acc64/v32acc32/v16acc32 (host_native.hpp)
//   cascade:    get_scd_<type>() and put_mcd(x) for every type llvm-aie's aiev2_streams.h
//               and aie2p_streams.h move but the 4-bit ones: one word of v16acc32, v8acc64,
//               v16accfloat, v64int8, v64uint8, v32int16, v32uint16, v16int32, v16uint32,
//               v32bfloat16; two of v32acc32, v16acc64, v32int32, v128int8, v128uint8, v64int16,
//               v64uint16, v32uint32; on AIE2P (or no __AIE_ARCH__) also v16float and v32float
//               both ways, and the gets of v32accfloat (two words), v64acc32, v32acc64 and
//               v64accfloat (four) (host_cascade.hpp); aie::accum<Acc, N>(native) and
//               to_native(), aie::mmul(accum) and to_accum(). The words a call gets come from
//               the bytes the test (or the simulator) hands in, the words it puts go to the
//               bytes it hands out, in order: aiedsl_cascade(in, in_words, out, out_words) sets
//               them before a call, and counts the words the call got and put
//               (aiedsl_cascade_moved). A 32-lane accfloat accumulator goes as two words:
//               put_mcd(acc.extract<16>(0)), put_mcd(acc.extract<16>(1)), and comes back as
//               aie::concat of two get_scd_v16accfloat() (taken one after the other).
//
// Semantics chosen to match AIE2:
//   * only the sizes the AIE API has compile (a static_assert names the rule): vectors of a
//     power-of-two number of lanes and at least 128 bits (larger than 1024 bits the API keeps
//     several registers), accumulators of a power-of-two number of lanes, at least 8 of acc32
//     and 4 of acc64 or accfloat;
//   * what the AIE API leaves undefined is poison, as aiedsl's unwritten buffers are: a
//     default-constructed vector holds NaN (the smallest signed, the largest unsigned integer),
//     an accumulator NaN or 0x80 in every byte of an integer lane (a large offset whichever bits
//     to_vector keeps), and so do grow's new lanes and the lanes shuffle_up/down shift in;
//     zeros, broadcast, the constructors from lanes or vectors and mmul's default (the API
//     says its first mac starts from zero) are exact;
//   * load_v / store_v take a pointer aligned to the vector (the API's vector_ldst_align: 16
//     bytes for 128 bits, else 32 on AIE2; 16, 32, 64 on AIE2P), the unaligned forms one
//     aligned to their n elements, measured from the start of the kernel buffer the pointer is
//     in (a core's buffers are aligned, the host's arrays need not be); a local array is not
//     checked (the host's stack says nothing of the core's: give it
//     alignas(aie::vector_decl_align)). A misaligned access is done as a core does it (the
//     low address bits dropped) and recorded; aiedsl reports it when the call returns
//     (aiedsl_misaligned). A vector copied from or into a kernel buffer is a load or a store
//     through a pointer to its type (*(v16int32 *)(out + i) = *(v16int32 *)(in + i), as
//     mlir-aie's relu.cc writes them), which the core does as load_v's: it is checked, done,
//     recorded and counted by the profile the same way (aie::vector's copy constructor and
//     assignment); a copy between registers and locals is a plain one. A vector read in place
//     through such a pointer (passed by reference, never copied) is not seen;
//   * an integer accumulator lane is 32 bits (acc32) or 64 (acc64), as the core's are: a 512-bit
//     accumulator register is "sixteen lanes of 32-bit data or eight lanes of 64-bit data"
//     (AM027, AIE-ML v2 "Accumulator Registers"; UG1603 the same of AIE-ML's 256-bit ones), and
//     llvm-aie's aiebase_typedefs.h makes v16acc32 16 __acc32 in 64 bytes, which the AIE API's
//     acc32 is (detail/aie2/accum.hpp). What is written to a lane keeps its low bits, i.e. wraps
//     modulo 2^32 (2^64): mul, mac, msc, negmul, accumulate, acc +- vector and mmul. The
//     integer VMUL/VMAC/VMSC/VADD/VSUB have no saturation-mode input and no overflow flag
//     (llvm-aie, aie2/AIE2GenFixupInstrInfo.td: no Uses or Defs, where SRS has Uses = [crSat,
//     crRnd] and Defs = [srSRS_of], UPS Uses = [crSat, ...] and Defs = [srUPS_of]), and mlir-aie
//     lowers arith.addi/subi of vector<32xi32>, which wrap, to that accumulator add on acc32
//     lanes (VectorToAIEVecConversions.cpp, genAddElemAieML). An upshift into a lane
//     (from_vector, the accum(vector, shift) constructor, ups_to_*) wraps likewise under
//     saturation none; under saturate or symmetric the value is first clamped to what fits
//     after the shift (UG1583, "Upshift"). to_vector<T>(shift) shifts right arithmetically
//     and rounds by the tile's rounding mode (reset: floor, i.e. toward minus infinity), then
//     narrows by its saturation mode (reset: none, keep the low bits of T; saturate: clamp to
//     T's range; symmetric: clamp to +-max). set_rounding and set_saturation change the modes
//     for every later to_vector and upshift, as the control registers do on a core (per core:
//     aiedsl sets the calling core's modes before each call, from the reset values at its
//     first, and reads them back after it: aiedsl_set_modes, aiedsl_get_modes);
//   * integer vector arithmetic wraps whatever the saturation mode: aie::add and aie::sub of
//     integer vectors (and with a scalar), aie::neg and aie::abs keep the low bits of each lane
//     (int8 127 + 1 is -128 under saturate too). The AIE API's detail/aie2/add.hpp
//     (add_sub_bits_impl_common::run, which AIE2P includes too) calls ::add / ::sub on native
//     vectors, which llvm-aie's clang/lib/Headers/aiev2_vadd.h (aie2p_vadd.h alike) defines
//     as a + b and a - b; llvm-aie selects the IR's add and sub of v64i8, v32i16 and v16i32,
//     which wrap, to VADD_8/16/32 and VSUB_* (aie2/AIE2InstrPatterns.td), and those read no
//     mode register (aie2/AIE2GenFixupInstrInfo.td, 8.3.1: no Uses = [crSat], which VPACK, SRS
//     and UPS have). neg and abs (detail/aie2/neg.hpp, abs.hpp: ::neg, ::abs) are VNEG_GTZ and
//     VABS_GTZ (8.3.4, 8.5.4), without it too. aie::reduce_add folds by the same adds
//     (detail/aie2/add_reduce.hpp): an int32 sum wraps; 8- and 16-bit lanes are folded to 16
//     and 8 lanes, summed exactly in an accumulator and narrowed by its to_vector, under the
//     mode. The modes apply where a value leaves an accumulator (to_vector, srs) or is
//     upshifted into one; the accumulator's own add wraps (VADD on accumulators, 9.2).
//     aie::upshift is such a trip (an accumulator upshifted, then to_vector: shift.hpp), so it
//     saturates under saturate and symmetric; aie::downshift is an arithmetic shift;
//   * floating-point results follow the AIE API's algorithms where it has them, not exact
//     math: aie::reduce_add of float (and of bf16) adds in the API's order, folding halves
//     (AIE2's bf16: by rows of 8, host_core.hpp); every product of float vectors (aie::mul,
//     mac, msc, negmul, mul_square, a float aie::mmul) is the one the core emulates with bf16
//     multiplies, on AIE2 and AIE2P alike (neither has an fp32 multiplier): each operand split
//     into bf16 pieces by the rounding mode, their products summed in the intrinsic's order
//     (detail::fp32_product, host_core.hpp, which says what is and is not known; aiedsl's numpy
//     model is aiedsl/kernels/fp32_emulation.py): the AIE API's aie::mul and kin use the
//     default, "safe", steps whatever AIE2_FP32_EMULATION_ACCURACY_FAST / _LOW say, within an
//     ulp of one rounding; AIE2's plain intrinsics, which aie::inv / aie::invsqrt of float
//     vectors and a float mmul's mul() call, follow those defines. On AIE2 aie::inv and
//     aie::invsqrt of float and bf16 vectors (and bf16 scalars) are the API's seed and Newton
//     step (invsqrt's relative error up to about 6.5e-4); AIE2P's per-lane inv/invsqrt
//     instructions, float scalars and exp2/tanh are computed in float and rounded (their
//     accuracy on the core is not in the sources read);
//   * accfloat accumulates in float; to_vector<bfloat16>() rounds to nearest even whatever the
//     rounding mode. On the hardware the mode applies: the core rounds an accumulator-to-vector
//     conversion by it, and its reset mode, floor, truncates; only conv_even rounds to nearest
//     even as the numpy references do (the other round-to-nearest modes break ties otherwise).
//     So a conversion from float to bfloat16 made under any other mode is recorded and aiedsl
//     reports it when the call returns (aiedsl_bf16_rounding), as a misaligned access: a kernel
//     narrowing to bf16 sets conv_even for the call and restores the previous mode, as mm.cc
//     does. Recorded: accum<accfloat>::to_vector<bfloat16> (and the conversion of such an
//     accumulator to a vector), mmul::to_vector<bfloat16>, aie::add/sub of bf16 vectors
//     (added in accfloat), reduce_add of bf16, to_float<bfloat16>, inv/invsqrt of bf16 (their
//     Newton steps), every call; and a scalar float converted to bfloat16 (a cast, an
//     initialisation, bf16 += ...), which Peano compiles to the same conversion (llvm-aie,
//     AIELegalizerHelper.cpp), when its value is not a compile-time constant and bf16 does not
//     hold it exactly (otherwise every mode gives the same bits). Not recorded: max/min/abs/neg
//     (no rounding), exp2/tanh (AIE2P's instruction: how it rounds is not known here);
//   * mmul<M, K, N> multiplies a row-major M x K block by a row-major K x N block into a
//     row-major M x N accumulator, as aie::mmul does. On AIE2P (__AIE_ARCH__ 21) with
//     AIE_API_EMULATE_BFLOAT16_MMUL_WITH_BFP16, which aiedsl's builds for AIE2P define as
//     IRON's do, bf16 4x8x8 and 8x8x8 run as the AIE API runs them there, on the bfp16 unit:
//     A's rows and B's columns are quantized to bfp16ebs8 in blocks of 8 along K (the block's
//     largest exponent E, signed 8-bit mantissas of step 2^(E - 133), rounded by the tile's
//     rounding mode, saturated; a block holding an infinity or NaN is NaN), each row-column
//     dot is exact and added to the f32 accumulator once (detail::bfp16_mac). That is
//     aiedsl/kernels/bfp16.py's model, the numpy references' too: its docstring says which
//     parts of it are known and which were chosen.

#ifndef AIEDSL_HOST_AIE_API_HPP
#define AIEDSL_HOST_AIE_API_HPP


#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#if __has_include(<source_location>)
#include <source_location>
#endif

// The header is split by what it holds; each part needs the ones before it.
#include "host_scalars.hpp"
#include "host_runtime.hpp"
#include "host_core.hpp"
#include "host_logic.hpp"
#include "host_arith.hpp"
#include "host_lanes.hpp"
#include "host_native.hpp"
#include "host_cascade.hpp"

#endif // AIEDSL_HOST_AIE_API_HPP
