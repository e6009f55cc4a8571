// host_runtime.hpp -- part of aiedsl's host AIE API header: cascade buffers, operation
// counters and their C entry points (the cascade intrinsics are host_cascade.hpp's).
// Include aie.hpp, not this file.

#ifndef AIEDSL_HOST_HOST_RUNTIME_HPP
#define AIEDSL_HOST_HOST_RUNTIME_HPP

// The call's cascade words, as bytes (64 a word): the stream moves bits, whatever the type the
// kernel reads or writes them as.
namespace aiedsl_host {
inline constexpr unsigned CASCADE_WORD_BYTES = 64;
inline const unsigned char *cascade_in = nullptr;
inline unsigned char *cascade_out = nullptr;
inline unsigned cascade_in_words = 0, cascade_out_words = 0, cascade_in_pos = 0,
                cascade_out_pos = 0;
// For each word put (the first CASCADE_ORDER_WORDS): how many words the call had got by then.
// The order of a call's gets and puts decides whether a chain with fifos between its cores
// hangs on the NPU; aiedsl holds it to the order the kernel declares (cascade_step).
inline constexpr unsigned CASCADE_ORDER_WORDS = 4096;
inline unsigned cascade_got_at_put[CASCADE_ORDER_WORDS] = {};
} // namespace aiedsl_host

// What `aiedsl kernel profile` counts: vector multiply-type ops (VMAC; an aie::mmul mac counts
// the hardware multiplies its mode issues, host_core.hpp's mode table), other vector ALU ops
// (VALU), lane movement (SHUFFLE), bytes loaded and stored by vector loads and stores (load_v,
// store_v and their kin, and a vector read or written through a pointer to it in a kernel
// buffer: *(v32bfloat16 *)p), and the multiply-accumulates those ops perform (MACS); and of the
// bytes loaded and stored, those inside the call's buffers (BUFFER_LOAD_BYTES,
// BUFFER_STORE_BYTES): a vector moved to or from a local array covers none of them. Scalar code
// is not counted.
namespace aiedsl_host {
enum unit : unsigned { VMAC, VALU, SHUFFLE, LOAD_BYTES, STORE_BYTES, MACS, BUFFER_LOAD_BYTES,
                       BUFFER_STORE_BYTES, UNITS };
inline uint64_t counts[UNITS] = {};
} // namespace aiedsl_host
#define AIEDSL_COUNT(unit, n) (aiedsl_host::counts[aiedsl_host::unit] += uint64_t(n))

extern "C" {
// The counts since the last reset, in aiedsl_host::unit order.
__attribute__((visibility("default"))) void aiedsl_profile(uint64_t *out, int reset) {
  for (unsigned i = 0; i < aiedsl_host::UNITS; ++i) {
    out[i] = aiedsl_host::counts[i];
    if (reset) aiedsl_host::counts[i] = 0;
  }
}
// Hand a call its cascade: the words it will get and the room for the words it will put.
__attribute__((visibility("default"))) void aiedsl_cascade(const unsigned char *in,
                                                           unsigned in_words,
                                                           unsigned char *out,
                                                           unsigned out_words) {
  using namespace aiedsl_host;
  cascade_in = in, cascade_in_words = in_words, cascade_in_pos = 0;
  cascade_out = out, cascade_out_words = out_words, cascade_out_pos = 0;
}
// The words the call got and put, into moved[0] and moved[1], past what it was handed or had
// room for too: aiedsl compares them with the declared words. (A count of mismatches summed in
// unsigned arithmetic was 0 for a kernel putting more than it had room for: the overrun's count
// and its negative remainder cancelled.)
__attribute__((visibility("default"))) void aiedsl_cascade_moved(unsigned *moved) {
  using namespace aiedsl_host;
  moved[0] = cascade_in_pos, moved[1] = cascade_out_pos;
}
// The words got before each of the first n words put (n at most CASCADE_ORDER_WORDS).
__attribute__((visibility("default"))) void aiedsl_cascade_order(unsigned *out, unsigned n) {
  using namespace aiedsl_host;
  for (unsigned i = 0; i < n && i < CASCADE_ORDER_WORDS; ++i) out[i] = cascade_got_at_put[i];
}
}

// The kernel's buffers in this call (aiedsl_buffers sets them): a vector access is checked for
// alignment from the start of the buffer it points into, since a core's buffers are aligned and
// the host's arrays need not be. The first misaligned access is kept for aiedsl to report.
namespace aiedsl_host {
inline constexpr unsigned MAX_BUFFERS = 32;
inline uintptr_t buffer_base[MAX_BUFFERS] = {};
inline uint64_t buffer_bytes[MAX_BUFFERS] = {};
inline unsigned buffers = 0;
// The bytes from the lowest buffer's first to the highest one's last: every vector copy asks
// whether it reads or writes a buffer (a load or store through a vector pointer), and one that
// falls outside this span (a register or a local: nearly all of them) is answered by a single
// comparison, without looking at the buffers one by one.
inline uintptr_t buffers_low = 0, buffers_span = 0;
// op (aiedsl/kernels/faults.py's MISALIGNED_OPS), lanes, element bytes, bytes of alignment
// needed, buffer index (-1: none, a local array), byte offset in it (or the address),
// aligned_elems (the unaligned forms), element kind (detail::elem_kind: the vector pointer's
// type, named in the report), and the line of the kernel's file that made it (0: unknown, or
// not the kernel's file: a pointer copy, a compiler without std::source_location)
inline int64_t misaligned_first[9] = {};
inline unsigned misaligned_count = 0;
// Conversions to bfloat16 made while the rounding mode was not conv_even (detail::note_bf16):
// the core rounds them by its mode, the header and the numpy references to nearest even. The
// first's op (aiedsl/kernels/faults.py's BF16_OPS) and mode (aie::rounding_mode's order).
inline int64_t bf16_rounding_first[2] = {};
inline unsigned bf16_rounding_count = 0;
// The bf16 aie::mmul shapes this library's C++ runs on AIE2P's bfp16 unit (host_core.hpp,
// detail::bfp16_compiled): bit 0 for 4x8x8, bit 1 for 8x8x8. Set as the library loads, from
// what the kernel's C++ instantiates, so aiedsl can say so before any call: a reference of
// exact bf16 products then differs from the kernel's results by the quantization.
inline unsigned bfp16_mmuls = 0;
} // namespace aiedsl_host

extern "C" {
// The buffers of the next call (first byte, size); clears the misaligned accesses and the
// bfloat16 conversions seen.
__attribute__((visibility("default"))) void aiedsl_buffers(const uint64_t *bases,
                                                           const uint64_t *bytes, unsigned n) {
  using namespace aiedsl_host;
  buffers = n < MAX_BUFFERS ? n : MAX_BUFFERS;
  uintptr_t low = UINTPTR_MAX, high = 0;
  for (unsigned i = 0; i < buffers; ++i) {
    buffer_base[i] = uintptr_t(bases[i]), buffer_bytes[i] = bytes[i];
    if (bytes[i] && buffer_base[i] < low) low = buffer_base[i];
    if (bytes[i] && buffer_base[i] + bytes[i] > high) high = buffer_base[i] + bytes[i];
  }
  buffers_low = low, buffers_span = high > low ? high - low : 0;
  misaligned_count = 0;
  bf16_rounding_count = 0;
}
// How many misaligned vector accesses the call made; the first's record into first[0..8].
__attribute__((visibility("default"))) unsigned aiedsl_misaligned(int64_t *first) {
  using namespace aiedsl_host;
  for (unsigned i = 0; i < 9; ++i) first[i] = misaligned_first[i];
  return misaligned_count;
}
// The bf16 aie::mmul shapes the library's C++ runs on the bfp16 unit (aiedsl_host::bfp16_mmuls).
__attribute__((visibility("default"))) unsigned aiedsl_bfp16_mmuls() {
  return aiedsl_host::bfp16_mmuls;
}
// How many conversions to bfloat16 the call made under a rounding mode other than conv_even;
// the first's op and mode into first[0..1].
__attribute__((visibility("default"))) unsigned aiedsl_bf16_rounding(int64_t *first) {
  using namespace aiedsl_host;
  for (unsigned i = 0; i < 2; ++i) first[i] = bf16_rounding_first[i];
  return bf16_rounding_count;
}
}

#endif // AIEDSL_HOST_HOST_RUNTIME_HPP
