// CRC32C implementations (portable tables, SSE4.2 instruction, ISA-L) and the
// size-based dispatcher. The benchmark bench/crc_bench measures the crossover.
#include "alog/crc32c.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>

#include "alog/format.h"

#if defined(ALOG_HAVE_ISAL)
#include <isa-l/crc.h>
#endif
#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace alog {
namespace crc {
namespace {

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    t[0][i] = c;
  }
  for (int s = 1; s < 8; s++)
    for (uint32_t i = 0; i < 256; i++) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  return t;
}
constexpr Tables kTables = make_tables();

}  // namespace

uint32_t portable(uint32_t crc, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  while (n >= 8) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    lo = __builtin_bswap32(lo);
    hi = __builtin_bswap32(hi);
#endif
    lo ^= c;
    c = kTables[7][lo & 0xFF] ^ kTables[6][(lo >> 8) & 0xFF] ^ kTables[5][(lo >> 16) & 0xFF] ^
        kTables[4][lo >> 24] ^ kTables[3][hi & 0xFF] ^ kTables[2][(hi >> 8) & 0xFF] ^
        kTables[1][(hi >> 16) & 0xFF] ^ kTables[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) c = (c >> 8) ^ kTables[0][(c ^ *p++) & 0xFF];
  return ~c;
}

#if defined(__x86_64__)
namespace {
// Looked up once, before main: a function-local static would cost a guard
// check on every call of the dispatcher (three per frame in a walk).
// (Anything calling in before this is set would take a slower, correct path.)
const bool kHaveSse42 = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2") != 0;
}();
}  // namespace

bool have_sse42() { return kHaveSse42; }

namespace {
// A chain's bytes, 8 at a time, then the last 0-7 in at most three steps,
// not one per byte (a frame header's 12 bytes are one 8-byte and one 4-byte
// step); on the raw register. In line: the three-chain routines below end
// each chain with it.
__attribute__((target("sse4.2"), always_inline)) inline uint64_t sse42_rest(uint64_t c,
                                                                            const uint8_t* p,
                                                                            size_t n) {
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
  }
  auto c32 = static_cast<uint32_t>(c);
  if (n & 4) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    c32 = _mm_crc32_u32(c32, v);
    p += 4;
  }
  if (n & 2) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    c32 = _mm_crc32_u16(c32, v);
    p += 2;
  }
  if (n & 1) c32 = _mm_crc32_u8(c32, *p);
  return c32;
}
}  // namespace

__attribute__((target("sse4.2"))) uint32_t sse42(uint32_t crc, const void* data, size_t n) {
  return ~static_cast<uint32_t>(sse42_rest(~crc, static_cast<const uint8_t*>(data), n));
}
namespace {
// Three chains of the crc32 instruction side by side over their common
// length, then each chain's rest on its own.
__attribute__((target("sse4.2"))) void sse42_3(uint32_t crc[3], const void* const data[3],
                                               const size_t n[3]) {
  const auto* a = static_cast<const uint8_t*>(data[0]);
  const auto* b = static_cast<const uint8_t*>(data[1]);
  const auto* c = static_cast<const uint8_t*>(data[2]);
  size_t common = std::min(n[0], std::min(n[1], n[2])) & ~size_t{7};
  // The raw registers: the inverse of a finished CRC.
  uint64_t ca = ~crc[0], cb = ~crc[1], cc = ~crc[2];
  for (size_t i = 0; i < common; i += 8) {
    uint64_t va, vb, vc;
    std::memcpy(&va, a + i, 8);
    std::memcpy(&vb, b + i, 8);
    std::memcpy(&vc, c + i, 8);
    ca = _mm_crc32_u64(ca, va);
    cb = _mm_crc32_u64(cb, vb);
    cc = _mm_crc32_u64(cc, vc);
  }
  crc[0] = ~static_cast<uint32_t>(sse42_rest(ca, a + common, n[0] - common));
  crc[1] = ~static_cast<uint32_t>(sse42_rest(cb, b + common, n[1] - common));
  crc[2] = ~static_cast<uint32_t>(sse42_rest(cc, c + common, n[2] - common));
}

// One chain over `count` pieces, in order; frame headers (16 bytes) as two
// steps each, in line.
__attribute__((target("sse4.2"))) uint32_t sse42_each(uint32_t crc, const uint8_t* const* pieces,
                                                      size_t count, size_t len) {
  if (len != 16) {
    for (size_t i = 0; i < count; i++) crc = sse42(crc, pieces[i], len);
    return crc;
  }
  uint64_t c = ~crc;
  for (size_t i = 0; i < count; i++) {
    uint64_t w0, w1;
    std::memcpy(&w0, pieces[i], 8);
    std::memcpy(&w1, pieces[i] + 8, 8);
    c = _mm_crc32_u64(_mm_crc32_u64(c, w0), w1);
  }
  return ~static_cast<uint32_t>(c);
}

// crc32c_frames_3: header bytes 0-11 and the payload after the header, for
// three frames side by side.
__attribute__((target("sse4.2"))) void sse42_frames_3(const uint8_t* const f[3], uint32_t crc[3],
                                                      uint32_t* running) {
  if (running) {
    // The running chain over the three headers, beside the frames' chains.
    uint64_t r = ~running[0];
    for (int k = 0; k < 3; k++) {
      uint64_t w0, w1;
      std::memcpy(&w0, f[k], 8);
      std::memcpy(&w1, f[k] + 8, 8);
      r = _mm_crc32_u64(_mm_crc32_u64(r, w0), w1);
      running[k + 1] = ~static_cast<uint32_t>(r);
    }
  }
  // Each chain starts with its header's 12 bytes (one 8-byte and one 4-byte
  // step), then the payloads go through sse42_3.
  const void* payload[3];
  size_t n[3];
  for (int k = 0; k < 3; k++) {
    uint64_t w;
    uint32_t w4;
    std::memcpy(&w, f[k], 8);
    std::memcpy(&w4, f[k] + 8, 4);
    crc[k] = ~_mm_crc32_u32(static_cast<uint32_t>(_mm_crc32_u64(0xFFFFFFFFu, w)), w4);
    payload[k] = f[k] + 16;
    n[k] = format::get32(f[k]);
  }
  sse42_3(crc, payload, n);
}

// crc32c_seal_frames_3: the CRCs stored big-endian in bytes 12-15, and the
// running chain over the finished headers, its bytes 12-15 taken from the
// registers (a load of the bytes just stored would wait for the stores).
__attribute__((target("sse4.2"))) inline uint64_t sse42_sealed_header(uint64_t r, const uint8_t* f,
                                                                      uint32_t crc) {
  uint64_t w0;
  uint32_t w2;
  std::memcpy(&w0, f, 8);
  std::memcpy(&w2, f + 8, 4);
  return _mm_crc32_u64(_mm_crc32_u64(r, w0), uint64_t{w2} | uint64_t{__builtin_bswap32(crc)} << 32);
}
__attribute__((target("sse4.2"))) void sse42_seal_frames_3(uint8_t* const f[3],
                                                           uint32_t* running) {
  uint32_t crc[3];
  sse42_frames_3(f, crc, nullptr);
  uint64_t r = ~*running;
  for (int k = 0; k < 3; k++) {
    format::put32(f[k] + 12, crc[k]);
    r = sse42_sealed_header(r, f[k], crc[k]);
  }
  *running = ~static_cast<uint32_t>(r);
}

// Both pieces in one call of the SSE4.2 code (sse42 inlined twice).
__attribute__((target("sse4.2"))) uint32_t sse42_two(uint32_t crc, const void* a, size_t na,
                                                     const void* b, size_t nb) {
  return sse42(sse42(crc, a, na), b, nb);
}

// crc32c_frame: the running chain's two steps beside the frame's chain.
__attribute__((target("sse4.2"))) uint32_t sse42_frame(const uint8_t* h, const void* payload,
                                                       size_t n, uint32_t* running) {
  uint64_t w0, w1;
  std::memcpy(&w0, h, 8);
  std::memcpy(&w1, h + 8, 8);
  uint64_t r = _mm_crc32_u64(~*running, w0);
  r = _mm_crc32_u64(r, w1);
  *running = ~static_cast<uint32_t>(r);
  return sse42_two(0, h, 12, payload, n);
}

// crc32c_seal_frame: one frame of sse42_seal_frames_3.
__attribute__((target("sse4.2"))) void sse42_seal_frame(uint8_t* f, uint32_t* running) {
  const uint32_t crc = sse42_two(0, f, 12, f + 16, format::get32(f));
  format::put32(f + 12, crc);
  *running = ~static_cast<uint32_t>(sse42_sealed_header(~*running, f, crc));
}
}  // namespace
#else
namespace {
constexpr bool kHaveSse42 = false;
void sse42_3(uint32_t crc[3], const void* const data[3], const size_t n[3]) {
  for (int i = 0; i < 3; i++) crc[i] = portable(crc[i], data[i], n[i]);
}
uint32_t sse42_each(uint32_t crc, const uint8_t* const* pieces, size_t count, size_t len) {
  for (size_t i = 0; i < count; i++) crc = portable(crc, pieces[i], len);
  return crc;
}
uint32_t sse42_two(uint32_t crc, const void* a, size_t na, const void* b, size_t nb) {
  return portable(portable(crc, a, na), b, nb);
}
uint32_t sse42_frame(const uint8_t* h, const void* payload, size_t n, uint32_t* running) {
  *running = portable(*running, h, 16);
  return sse42_two(0, h, 12, payload, n);
}
void sse42_frames_3(const uint8_t* const f[3], uint32_t crc[3], uint32_t* running) {
  for (int k = 0; k < 3; k++) {
    crc[k] = portable(portable(0, f[k], 12), f[k] + 16, format::get32(f[k]));
    if (running) running[k + 1] = portable(running[k], f[k], 16);
  }
}
void sse42_seal_frame(uint8_t* f, uint32_t* running) {
  format::put32(f + 12, portable(portable(0, f, 12), f + 16, format::get32(f)));
  *running = portable(*running, f, 16);
}
void sse42_seal_frames_3(uint8_t* const f[3], uint32_t* running) {
  for (int k = 0; k < 3; k++) sse42_seal_frame(f[k], running);
}
}  // namespace
bool have_sse42() { return false; }
uint32_t sse42(uint32_t crc, const void* data, size_t n) { return portable(crc, data, n); }
#endif

#if defined(ALOG_HAVE_ISAL)
bool have_isal() { return true; }
uint32_t isal(uint32_t crc, const void* data, size_t n) {
  // crc32_iscsi works on the raw register (init ~0, no final XOR) and takes
  // an int length, so feed huge buffers in pieces.
  const auto* p = static_cast<const unsigned char*>(data);
  unsigned int c = ~crc;
  constexpr size_t kPiece = size_t{1} << 30;
  while (n > 0) {
    size_t k = n < kPiece ? n : kPiece;
    c = crc32_iscsi(const_cast<unsigned char*>(p), static_cast<int>(k), c);
    p += k;
    n -= k;
  }
  return ~c;
}
#else
bool have_isal() { return false; }
uint32_t isal(uint32_t crc, const void* data, size_t n) { return portable(crc, data, n); }
#endif

namespace {

// The smallest size of 128, 144, ..., 256 from which ISA-L is faster than the
// SSE4.2 loop at every candidate size up to 256 (the best of three timings
// of 32 calls each), or 256.
size_t choose_isal_threshold() {
  constexpr size_t kLow = 128, kHigh = 256, kStep = 16;
  if (!have_isal() || !have_sse42()) return kHigh;
  alignas(64) uint8_t buf[kHigh];
  for (size_t i = 0; i < kHigh; i++) buf[i] = static_cast<uint8_t>(i * 131 + 7);
  using Clock = std::chrono::steady_clock;
  auto best_ns = [&](uint32_t (*f)(uint32_t, const void*, size_t), size_t n) {
    int64_t best = INT64_MAX;
    volatile uint32_t sink = 0;
    for (int round = 0; round < 3; round++) {
      uint32_t c = 0;
      auto t0 = Clock::now();
      for (int i = 0; i < 32; i++) c = f(c, buf, n);
      best = std::min<int64_t>(best, std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
      sink = c;
    }
    (void)sink;
    return best;
  };
  size_t from = kHigh;
  for (size_t n = kHigh; n >= kLow; n -= kStep) {
    if (best_ns(isal, n) >= best_ns(sse42, n)) break;
    from = n;
  }
  return from;
}

// Before main, after kHaveSse42 (which this file defines first). A call from
// another file's static initializer before this is set sees 0: ISA-L for
// every size, a correct CRC.
const size_t kIsalFrom = choose_isal_threshold();

}  // namespace

size_t isal_threshold() { return kIsalFrom; }

const char* dispatch_name(size_t n) {
  if (n >= kIsalFrom && have_isal()) return "isal";
  if (have_sse42()) return "sse42";
  if (have_isal()) return "isal";
  return "portable";
}

}  // namespace crc

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t n) {
  if (n >= crc::kIsalFrom && crc::have_isal()) return crc::isal(crc, data, n);
  if (crc::kHaveSse42) return crc::sse42(crc, data, n);
  if (crc::have_isal()) return crc::isal(crc, data, n);
  return crc::portable(crc, data, n);
}

uint32_t crc32c(const void* data, size_t n) { return crc32c_extend(0, data, n); }

uint32_t crc32c_extend_each(uint32_t crc, const uint8_t* const* pieces, size_t count, size_t len) {
  if (crc::kHaveSse42 && len < crc::kIsalFrom) return crc::sse42_each(crc, pieces, count, len);
  for (size_t i = 0; i < count; i++) crc = crc32c_extend(crc, pieces[i], len);
  return crc;
}

void crc32c_extend_3(uint32_t crc[3], const void* const data[3], const size_t n[3]) {
  if (crc::kHaveSse42 && n[0] < crc::kIsalFrom && n[1] < crc::kIsalFrom &&
      n[2] < crc::kIsalFrom)
    return crc::sse42_3(crc, data, n);
  for (int i = 0; i < 3; i++) crc[i] = crc32c_extend(crc[i], data[i], n[i]);
}

uint32_t crc32c_extend2(uint32_t crc, const void* a, size_t na, const void* b, size_t nb) {
  if (crc::kHaveSse42 && na < crc::kIsalFrom && nb < crc::kIsalFrom)
    return crc::sse42_two(crc, a, na, b, nb);
  return crc32c_extend(crc32c_extend(crc, a, na), b, nb);
}

void crc32c_frames_3(const uint8_t* const frames[3], uint32_t crc[3], uint32_t running[4]) {
  if (crc::kHaveSse42 && format::get32(frames[0]) < crc::kIsalFrom &&
      format::get32(frames[1]) < crc::kIsalFrom && format::get32(frames[2]) < crc::kIsalFrom)
    return crc::sse42_frames_3(frames, crc, running);
  for (int k = 0; k < 3; k++) {
    crc[k] = crc32c_extend(crc32c(frames[k], 12), frames[k] + 16, format::get32(frames[k]));
    if (running) running[k + 1] = crc32c_extend(running[k], frames[k], 16);
  }
}

void crc32c_seal_frames_3(uint8_t* const frames[3], uint32_t* running) {
  if (crc::kHaveSse42 && format::get32(frames[0]) < crc::kIsalFrom &&
      format::get32(frames[1]) < crc::kIsalFrom && format::get32(frames[2]) < crc::kIsalFrom)
    return crc::sse42_seal_frames_3(frames, running);
  for (int k = 0; k < 3; k++) crc32c_seal_frame(frames[k], running);
}

void crc32c_seal_frame(uint8_t* frame, uint32_t* running) {
  if (crc::kHaveSse42 && format::get32(frame) < crc::kIsalFrom) return crc::sse42_seal_frame(frame, running);
  format::put32(frame + 12, crc32c_extend(crc32c(frame, 12), frame + 16, format::get32(frame)));
  *running = crc32c_extend(*running, frame, 16);
}

uint32_t crc32c_frame(const uint8_t header[16], const void* payload, size_t n, uint32_t* running) {
  if (crc::kHaveSse42 && n < crc::kIsalFrom) return crc::sse42_frame(header, payload, n, running);
  *running = crc32c_extend(*running, header, 16);
  return crc32c_extend2(0, header, 12, payload, n);
}

}  // namespace alog
