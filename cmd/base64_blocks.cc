// base64_blocks (cli.h): the bulk of a base64 encoding in 128-bit vectors,
// twelve bytes into sixteen digits per step (cat --json of small payloads
// spent a fifth of its time in the scalar encoder). The scalar encoder in
// output.cc does the rest and the padding; both spell RFC 4648. The SSSE3
// operations are compiled in their AVX (VEX) encoding: in the legacy SSE
// encoding, beside the AVX-512 string functions of glibc, they ran at a
// third of the speed (measured: cat --json 52 -> 72 ms instead of -> 42 ms).
#include <cstdint>
#include <cstring>

#include "cli.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace alog::cli {

#if defined(__x86_64__)
namespace {

const bool kHaveAvx = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx") != 0;
}();

// Sixteen 6-bit values (one per byte) to their digits: each range of
// values (A-Z, a-z, 0-9, '+', '/') is the value plus one offset, and the
// range is found with a saturating subtraction and one compare, then the
// offset with a 16-entry table.
__attribute__((target("avx"))) inline __m128i digits_of(__m128i v) {
  __m128i range = _mm_subs_epu8(v, _mm_set1_epi8(51));                   // 52..63 -> 1..12, else 0
  const __m128i upper = _mm_cmpgt_epi8(_mm_set1_epi8(26), v);            // 0..25
  range = _mm_or_si128(range, _mm_and_si128(upper, _mm_set1_epi8(13)));  // 0..25 -> 13
  const __m128i offsets =
      _mm_setr_epi8('a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
                    '0' - 52, '0' - 52, '0' - 52, '+' - 62, '/' - 63, 'A', 0, 0);
  return _mm_add_epi8(v, _mm_shuffle_epi8(offsets, range));
}

__attribute__((target("avx"))) size_t blocks_vex(char* out, const uint8_t* in, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 12, out += 16) {
    __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    // Each 3-byte group b0 b1 b2 into a 32-bit lane as b1 b0 b2 b1 (bytes
    // in memory order), so that each 6-bit field sits where a 16-bit
    // multiply can move it into a byte of its own.
    x = _mm_shuffle_epi8(x, _mm_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10));
    // Fields 0 and 2 (the high six bits of b0, the high four of b1 and two
    // of b2...) by a high multiply, fields 1 and 3 by a low one.
    const __m128i hi =
        _mm_mulhi_epu16(_mm_and_si128(x, _mm_set1_epi32(0x0fc0fc00)), _mm_set1_epi32(0x04000040));
    const __m128i lo =
        _mm_mullo_epi16(_mm_and_si128(x, _mm_set1_epi32(0x003f03f0)), _mm_set1_epi32(0x01000010));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), digits_of(_mm_or_si128(hi, lo)));
  }
  return i;
}

}  // namespace

size_t base64_blocks(char* out, const uint8_t* in, size_t n) {
  return kHaveAvx ? blocks_vex(out, in, n) : 0;
}
#else
size_t base64_blocks(char*, const uint8_t*, size_t) { return 0; }
#endif

}  // namespace alog::cli
