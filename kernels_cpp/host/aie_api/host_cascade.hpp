// host_cascade.hpp -- part of aiedsl's host AIE API header: the cascade stream's intrinsics.
// Include aie.hpp, not this file.
//
// get_scd_<type>() takes the next word(s) of the cascade, put_mcd(x) puts x as word(s), for
// every type llvm-aie's stream headers move (clang/lib/Headers/aiev2/aiev2_streams.h on AIE2,
// aie2p/aie2p_streams.h on AIE2P), but the 4-bit ones (the header has no int4 type): a 512-bit
// vector or accumulator is one word, a 1024-bit one two (the low half first: llvm-aie puts
// extract_v16acc32(a, 0) then (a, 1), and gets into set_v32acc32(0, ...) then insert(r, 1,
// ...)), and AIE2P's 2048-bit gets four. The words are bits: a call's get reads the bytes
// aiedsl_cascade handed it, whatever type put them, and a put writes its bytes out. What AIE2
// lacks (get_scd_v16float, put_mcd(v16float), get_scd_v32accfloat, the 32-float and the
// four-word forms) compiles only for AIE2P or a build that names no architecture, as Peano
// compiles it only there; AIE2P has no put_mcd(v32accfloat) either (put its halves:
// acc.extract<16>(0), then (1)). The forms with an enable argument (get_scd_v16acc32(int en))
// are not modelled.

#ifndef AIEDSL_HOST_HOST_CASCADE_HPP
#define AIEDSL_HOST_HOST_CASCADE_HPP

namespace aiedsl_host {
// The next sizeof(W) / 64 words of the call's cascade input, as a W. Past the words handed in
// the core would stall (nothing more comes down the cascade): the lanes stay undefined (the
// type's poison), and the count, past the words declared, makes aiedsl say so after the call.
template <typename W> W cascade_get() {
  W w;
  static_assert(sizeof(w.v) % CASCADE_WORD_BYTES == 0, "a cascade value is whole words");
  unsigned char *bytes = reinterpret_cast<unsigned char *>(w.v.data());
  for (unsigned i = 0; i < sizeof(w.v) / CASCADE_WORD_BYTES; ++i, ++cascade_in_pos)
    if (cascade_in && cascade_in_pos < cascade_in_words)
      std::memcpy(bytes + CASCADE_WORD_BYTES * i,
                  cascade_in + CASCADE_WORD_BYTES * cascade_in_pos, CASCADE_WORD_BYTES);
  return w;
}
// w put as sizeof(W) / 64 words. Past the room the core would stall (nobody takes more words):
// counted, as above.
template <typename W> void cascade_put(const W &w) {
  static_assert(sizeof(w.v) % CASCADE_WORD_BYTES == 0, "a cascade value is whole words");
  const unsigned char *bytes = reinterpret_cast<const unsigned char *>(w.v.data());
  for (unsigned i = 0; i < sizeof(w.v) / CASCADE_WORD_BYTES; ++i, ++cascade_out_pos) {
    if (cascade_out_pos < CASCADE_ORDER_WORDS) cascade_got_at_put[cascade_out_pos] = cascade_in_pos;
    if (cascade_out && cascade_out_pos < cascade_out_words)
      std::memcpy(cascade_out + CASCADE_WORD_BYTES * cascade_out_pos,
                  bytes + CASCADE_WORD_BYTES * i, CASCADE_WORD_BYTES);
  }
}
} // namespace aiedsl_host

#define AIEDSL_CASCADE_GET(TYPE)                                                             \
  inline TYPE get_scd_##TYPE() { return aiedsl_host::cascade_get<TYPE>(); }
#define AIEDSL_CASCADE_PUT(TYPE)                                                             \
  inline void put_mcd(const TYPE &w) { aiedsl_host::cascade_put(w); }
#define AIEDSL_CASCADE_BOTH(TYPE) AIEDSL_CASCADE_GET(TYPE) AIEDSL_CASCADE_PUT(TYPE)

// AIE2 and AIE2P: one word
AIEDSL_CASCADE_BOTH(v16acc32)
AIEDSL_CASCADE_BOTH(v8acc64)
AIEDSL_CASCADE_BOTH(v16accfloat)
AIEDSL_CASCADE_BOTH(v64int8)
AIEDSL_CASCADE_BOTH(v64uint8)
AIEDSL_CASCADE_BOTH(v32int16)
AIEDSL_CASCADE_BOTH(v32uint16)
AIEDSL_CASCADE_BOTH(v16int32)
AIEDSL_CASCADE_BOTH(v16uint32)
AIEDSL_CASCADE_BOTH(v32bfloat16)
// AIE2 and AIE2P: two words
AIEDSL_CASCADE_BOTH(v32acc32)
AIEDSL_CASCADE_BOTH(v16acc64)
AIEDSL_CASCADE_BOTH(v32int32)
AIEDSL_CASCADE_BOTH(v128int8)
AIEDSL_CASCADE_BOTH(v128uint8)
AIEDSL_CASCADE_BOTH(v64int16)
AIEDSL_CASCADE_BOTH(v64uint16)
AIEDSL_CASCADE_BOTH(v32uint32)
#if !defined(__AIE_ARCH__) || __AIE_ARCH__ == 21
// AIE2P only: float vectors, the 32-lane float accumulator's get, the four-word gets
AIEDSL_CASCADE_BOTH(v16float)
AIEDSL_CASCADE_BOTH(v32float)
AIEDSL_CASCADE_GET(v32accfloat)
AIEDSL_CASCADE_GET(v64acc32)
AIEDSL_CASCADE_GET(v32acc64)
AIEDSL_CASCADE_GET(v64accfloat)
#endif

#undef AIEDSL_CASCADE_BOTH
#undef AIEDSL_CASCADE_PUT
#undef AIEDSL_CASCADE_GET

#endif // AIEDSL_HOST_HOST_CASCADE_HPP
