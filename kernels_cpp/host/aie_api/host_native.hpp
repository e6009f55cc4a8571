// host_native.hpp -- part of aiedsl's host AIE API header: AIE2's native vector and
// accumulator types (v16int32, v32bfloat16, v16acc64, v16accfloat ...) as the aie:: types they
// hold, and
// the intrinsics kernels call on them next to the AIE API: broadcasts, shift_bytes/shift,
// ext_elem/upd_elem, the shift-round-saturate family (srs_to_*, lsrs, ssrs, ulsrs, ussrs) and
// the upshifts (ups_to_*). Names and signatures are llvm-aie's AIE2 intrinsic headers'
// (aiev2_scl2vec.h, aiev2_srs.h, aiev2_ups.h); srs rounds and saturates by the modes
// aie::set_rounding / aie::set_saturation set, as the hardware's mode registers do.
#ifndef AIEDSL_HOST_HOST_NATIVE_HPP
#define AIEDSL_HOST_HOST_NATIVE_HPP

// name, element type, lanes
#define AIEDSL_NATIVE_VECTORS(X)                                                            \
  X(v16int8, int8_t, 16) X(v32int8, int8_t, 32) X(v64int8, int8_t, 64)                      \
  X(v16uint8, uint8_t, 16) X(v32uint8, uint8_t, 32) X(v64uint8, uint8_t, 64)                \
  X(v8int16, int16_t, 8) X(v16int16, int16_t, 16) X(v32int16, int16_t, 32)                  \
  X(v8uint16, uint16_t, 8) X(v16uint16, uint16_t, 16) X(v32uint16, uint16_t, 32)            \
  X(v4int32, int32_t, 4) X(v8int32, int32_t, 8) X(v16int32, int32_t, 16)                    \
  X(v4uint32, uint32_t, 4) X(v8uint32, uint32_t, 8) X(v16uint32, uint32_t, 16)              \
  X(v8bfloat16, bfloat16, 8) X(v16bfloat16, bfloat16, 16) X(v32bfloat16, bfloat16, 32)      \
  X(v4float, float, 4) X(v8float, float, 8) X(v16float, float, 16)

#define AIEDSL_NATIVE_TYPE(NAME, T, N) using NAME = aie::vector<T, N>;
AIEDSL_NATIVE_VECTORS(AIEDSL_NATIVE_TYPE)
#undef AIEDSL_NATIVE_TYPE

using v8acc64 = aie::accum<acc64, 8>;
using v16acc64 = aie::accum<acc64, 16>;
using v32acc64 = aie::accum<acc64, 32>;
using v8acc32 = aie::accum<acc32, 8>;
using v16acc32 = aie::accum<acc32, 16>;
using v32acc32 = aie::accum<acc32, 32>;
using v64acc32 = aie::accum<acc32, 64>;
using v16accfloat = aie::accum<accfloat, 16>;
using v32accfloat = aie::accum<accfloat, 32>;
using v64accfloat = aie::accum<accfloat, 64>;
// The 1024-bit vectors (a pair of 512-bit registers), which the two-word cascade intrinsics
// move (host_cascade.hpp).
using v128int8 = aie::vector<int8_t, 128>;
using v128uint8 = aie::vector<uint8_t, 128>;
using v64int16 = aie::vector<int16_t, 64>;
using v64uint16 = aie::vector<uint16_t, 64>;
using v32int32 = aie::vector<int32_t, 32>;
using v32uint32 = aie::vector<uint32_t, 32>;
using v32float = aie::vector<float, 32>;

// broadcast_to_<type>(x): every lane x; broadcast_zero_to_<type>(): every lane 0.
#define AIEDSL_NATIVE_BROADCAST(NAME, T, N)                                                 \
  inline NAME broadcast_to_##NAME(T x) { return aie::broadcast<T, N>(x); }                  \
  inline NAME broadcast_zero_to_##NAME() { return aie::broadcast<T, N>(T(0)); }
AIEDSL_NATIVE_VECTORS(AIEDSL_NATIVE_BROADCAST)
#undef AIEDSL_NATIVE_BROADCAST

// The 512-bit scalar broadcasts and their older zero spellings.
inline v64int8 broadcast_s8(int8_t x) { return aie::broadcast<int8_t, 64>(x); }
inline v32int16 broadcast_s16(int16_t x) { return aie::broadcast<int16_t, 32>(x); }
inline v16int32 broadcast_s32(int32_t x) { return aie::broadcast<int32_t, 16>(x); }
inline v64uint8 broadcast_u8(uint8_t x) { return aie::broadcast<uint8_t, 64>(x); }
inline v32uint16 broadcast_u16(uint16_t x) { return aie::broadcast<uint16_t, 32>(x); }
inline v16uint32 broadcast_u32(uint32_t x) { return aie::broadcast<uint32_t, 16>(x); }
inline v32bfloat16 broadcast_bfloat16(bfloat16 x) { return aie::broadcast<bfloat16, 32>(x); }
inline v16float broadcast_float(float x) { return aie::broadcast<float, 16>(x); }
inline v64int8 broadcast_zero_s8() { return broadcast_s8(0); }
inline v32int16 broadcast_zero_s16() { return broadcast_s16(0); }
inline v16int32 broadcast_zero_s32() { return broadcast_s32(0); }
inline v64uint8 broadcast_zero_u8() { return broadcast_u8(0); }
inline v32uint16 broadcast_zero_u16() { return broadcast_u16(0); }
inline v16uint32 broadcast_zero_u32() { return broadcast_u32(0); }
inline v32bfloat16 broadcast_zero_bfloat16() { return broadcast_bfloat16(0.0f); }
inline v16float broadcast_zero_float() { return broadcast_float(0.0f); }

// shift_bytes(a, b, s): the 64 bytes from byte s of a followed by b (a's bytes first), as the
// vector's type; shift(a, b, s) does the same by s lanes. s is taken modulo 64 bytes, as the
// instruction's 6-bit field does.
template <typename T, unsigned N, typename = std::enable_if_t<sizeof(T) * N == 64>>
aie::vector<T, N> shift_bytes(const aie::vector<T, N> &a, const aie::vector<T, N> &b,
                              unsigned s) {
  AIEDSL_COUNT(SHUFFLE, 1);
  unsigned char both[128];
  std::memcpy(both, a.v.data(), 64);
  std::memcpy(both + 64, b.v.data(), 64);
  aie::vector<T, N> out;
  std::memcpy(out.v.data(), both + (s % 64), 64);
  return out;
}
template <typename T, unsigned N, typename = std::enable_if_t<sizeof(T) * N == 64>>
aie::vector<T, N> shift(const aie::vector<T, N> &a, const aie::vector<T, N> &b, unsigned s) {
  return shift_bytes(a, b, s * unsigned(sizeof(T)));
}

// ext_elem(v, i) and extract_elem(v, i): lane i (sign: the lane's signedness, which its type
// already gives); upd_elem(v, i, x): v with lane i set to x.
template <typename T, unsigned N> T ext_elem(const aie::vector<T, N> &v, int i, int = 1) {
  return v.v[unsigned(i) % N];
}
template <typename T, unsigned N> T extract_elem(const aie::vector<T, N> &v, int i, int = 1) {
  return v.v[unsigned(i) % N];
}
template <typename T, unsigned N, typename S>
aie::vector<T, N> upd_elem(aie::vector<T, N> v, int i, S x) {
  v.v[unsigned(i) % N] = T(x);
  return v;
}

// Shift-round-saturate: an accumulator to a vector of the named type, shifted right by shft
// with the current rounding and saturation modes (sign: whether the result is signed; the
// return type already says it).
#define AIEDSL_NATIVE_SRS(TO, ACC, T)                                                       \
  inline TO srs_to_##TO(const ACC &acc, int shft, int = 0) {                               \
    return acc.template to_vector<T>(shft);                                                 \
  }
AIEDSL_NATIVE_SRS(v32int8, v32acc32, int8_t)
AIEDSL_NATIVE_SRS(v32uint8, v32acc32, uint8_t)
AIEDSL_NATIVE_SRS(v32int16, v32acc32, int16_t)
AIEDSL_NATIVE_SRS(v32uint16, v32acc32, uint16_t)
AIEDSL_NATIVE_SRS(v16int16, v16acc32, int16_t)
AIEDSL_NATIVE_SRS(v16uint16, v16acc32, uint16_t)
AIEDSL_NATIVE_SRS(v16int32, v16acc64, int32_t)
AIEDSL_NATIVE_SRS(v16uint32, v16acc64, uint32_t)
AIEDSL_NATIVE_SRS(v8int32, v8acc64, int32_t)
AIEDSL_NATIVE_SRS(v8uint32, v8acc64, uint32_t)
#undef AIEDSL_NATIVE_SRS
inline v16int16 srs_to_v16int16(const v16acc64 &acc, int shft, int = 0) {
  return acc.to_vector<int16_t>(shft);
}
inline v16uint16 srs_to_v16uint16(const v16acc64 &acc, int shft, int = 0) {
  return acc.to_vector<uint16_t>(shft);
}
inline v16int32 srs_to_int32(const v16acc64 &acc, int shft, int = 0) {
  return acc.to_vector<int32_t>(shft);
}
// The short spellings: s = 8-bit (from acc32) or 16-bit (from acc64) lanes, l = the wider.
#define AIEDSL_NATIVE_SRS_AS(NAME, TO, ACC)                                                  \
  inline TO NAME(const ACC &acc, int shft, int = 0) { return srs_to_##TO(acc, shft); }
AIEDSL_NATIVE_SRS_AS(ssrs, v32int8, v32acc32)
AIEDSL_NATIVE_SRS_AS(ussrs, v32uint8, v32acc32)
AIEDSL_NATIVE_SRS_AS(ssrs, v16int16, v16acc64)
AIEDSL_NATIVE_SRS_AS(ussrs, v16uint16, v16acc64)
AIEDSL_NATIVE_SRS_AS(lsrs, v32int16, v32acc32)
AIEDSL_NATIVE_SRS_AS(ulsrs, v32uint16, v32acc32)
AIEDSL_NATIVE_SRS_AS(lsrs, v16int16, v16acc32)
AIEDSL_NATIVE_SRS_AS(ulsrs, v16uint16, v16acc32)
AIEDSL_NATIVE_SRS_AS(lsrs, v16int32, v16acc64)
AIEDSL_NATIVE_SRS_AS(ulsrs, v16uint32, v16acc64)
AIEDSL_NATIVE_SRS_AS(lsrs, v8int32, v8acc64)
AIEDSL_NATIVE_SRS_AS(ulsrs, v8uint32, v8acc64)
#undef AIEDSL_NATIVE_SRS_AS

// Upshift: a vector into an accumulator, shifted left by shft (sign: the lanes' signedness,
// which their type already gives).
#define AIEDSL_NATIVE_UPS(TO, FROM)                                                          \
  inline TO ups_to_##TO(const FROM &v, int shft, int = 0) {                                 \
    TO acc;                                                                                  \
    acc.from_vector(v, shft);                                                                \
    return acc;                                                                              \
  }
AIEDSL_NATIVE_UPS(v16acc64, v16int32)
AIEDSL_NATIVE_UPS(v16acc64, v16uint32)
AIEDSL_NATIVE_UPS(v16acc64, v16int16)
AIEDSL_NATIVE_UPS(v16acc64, v16uint16)
AIEDSL_NATIVE_UPS(v32acc32, v32int16)
AIEDSL_NATIVE_UPS(v32acc32, v32int8)
AIEDSL_NATIVE_UPS(v32acc32, v32uint8)
AIEDSL_NATIVE_UPS(v16acc32, v16int16)
#undef AIEDSL_NATIVE_UPS

#endif // AIEDSL_HOST_HOST_NATIVE_HPP
