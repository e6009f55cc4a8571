// host_scalars.hpp -- part of aiedsl's host AIE API header: portability, bfloat16,
// accumulator tags.
// Include aie.hpp, not this file.

#ifndef AIEDSL_HOST_HOST_SCALARS_HPP
#define AIEDSL_HOST_HOST_SCALARS_HPP

#define AIEDSL_HOST_AIE_API 1
// What the AIE compilers accept and a host C++ compiler does not: C's `restrict`, the core's
// scalar type names, and the trace-event intrinsics (no-ops here: there is no trace unit).
#ifndef restrict
#define restrict __restrict
#endif
typedef int8_t int8;
typedef uint8_t uint8;
typedef int16_t int16;
typedef uint16_t uint16;
typedef int32_t int32;
typedef uint32_t uint32;
typedef int64_t int64;
typedef uint64_t uint64;
inline void event0() {}
inline void event1() {}
// Chess's loop pragmas, spelled as statements by kernels written for it: nothing on the host.
#define chess_prepare_for_pipelining
#define chess_loop_range(...)
#define chess_unroll_loop(...)
#define chess_flatten_loop
#ifndef AIE_PREPARE_FOR_PIPELINING
#define AIE_PREPARE_FOR_PIPELINING
#endif
#ifndef AIE_LOOP_MIN_ITERATION_COUNT
#define AIE_LOOP_MIN_ITERATION_COUNT(x)
#endif

struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  // A float converted to bfloat16 by the kernel's C++ (a cast, an initialisation, the scalar
  // arithmetic below): rounds to nearest even, and is noted when the core would round it by a
  // rounding mode other than conv_even (defined in host_core.hpp, which holds the mode).
  inline bfloat16(float f);
  // f rounded to nearest, ties to even (NaN stays NaN): the header's own conversions, which
  // note what the core would round otherwise where the AIE API does them (detail::note_bf16).
  static bfloat16 round_even(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    bfloat16 b;
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) {
      b.bits = uint16_t((u >> 16) | 0x40);
      return b;
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    b.bits = uint16_t(u >> 16);
    return b;
  }
  // The value whose bits are ``b``.
  static constexpr bfloat16 from_bits(uint16_t b) {
    bfloat16 v;
    v.bits = b;
    return v;
  }
  operator float() const {
    uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  // Arithmetic in float, the result rounded back to bf16 (as scalar bf16 code does on a core).
  bfloat16 &operator+=(float x) { return *this = bfloat16(float(*this) + x); }
  bfloat16 &operator-=(float x) { return *this = bfloat16(float(*this) - x); }
  bfloat16 &operator*=(float x) { return *this = bfloat16(float(*this) * x); }
  bfloat16 &operator/=(float x) { return *this = bfloat16(float(*this) / x); }
};
static_assert(sizeof(bfloat16) == 2, "bfloat16 is 16 bits");

// bfloat16's limits, as the AIE API specializes them: kernels start a running maximum at
// lowest() (mlir-aie's reduce_max) and would otherwise read a value-initialised 0.
template <> class std::numeric_limits<bfloat16> {
public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr bool is_iec559 = false;
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int digits = 8; // 7 stored fraction bits and the implicit one
  static constexpr int digits10 = 2;
  static constexpr int max_digits10 = 4;
  static constexpr int radix = 2;
  static constexpr int min_exponent = -125; // float's exponent range: bf16 is float's top half
  static constexpr int min_exponent10 = -37;
  static constexpr int max_exponent = 128;
  static constexpr int max_exponent10 = 38;
  static constexpr std::float_round_style round_style = std::round_to_nearest;
  // float's, whose upper half a bfloat16 is (std::float_denorm_style is deprecated in C++23,
  // but the member is still part of numeric_limits)
  static constexpr auto has_denorm = std::numeric_limits<float>::has_denorm;
  static constexpr bool has_denorm_loss = std::numeric_limits<float>::has_denorm_loss;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = std::numeric_limits<float>::tinyness_before;
  static constexpr bfloat16 min() { return bfloat16::from_bits(0x0080); } // smallest normal
  static constexpr bfloat16 max() { return bfloat16::from_bits(0x7f7f); }
  static constexpr bfloat16 lowest() { return bfloat16::from_bits(0xff7f); } // -max()
  static constexpr bfloat16 epsilon() { return bfloat16::from_bits(0x3c00); } // 2^-7
  static constexpr bfloat16 round_error() { return bfloat16::from_bits(0x3f00); } // 0.5
  static constexpr bfloat16 infinity() { return bfloat16::from_bits(0x7f80); }
  static constexpr bfloat16 quiet_NaN() { return bfloat16::from_bits(0x7fc0); }
  static constexpr bfloat16 signaling_NaN() { return bfloat16::from_bits(0x7fa0); }
  static constexpr bfloat16 denorm_min() { return bfloat16::from_bits(0x0001); }
};

struct acc32 {};
struct acc64 {};
struct accfloat {};
struct accauto {};

#endif // AIEDSL_HOST_HOST_SCALARS_HPP
