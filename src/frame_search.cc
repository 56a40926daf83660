// The search for a data frame valid on its own after a stop, in time linear
// in the bytes searched. Each offset with a plausible header claims a payload
// of up to 4 GiB; CRCing each claim would cost candidates x length (hours for
// a crafted segment). Instead the CRC of any byte range comes from prefix
// CRCs kept every 256 bytes and CRC arithmetic:
//   crc32c(a || b) = crc32c(a) * x^(8|b|) mod P  xor  crc32c(b),
// so each candidate costs at most a few hundred bytes of CRC.
#include <string.h>

#include <algorithm>
#include <vector>

#include "alog/crc32c.h"
#include "frame_reader.h"

namespace alog::detail {

using namespace format;

namespace {

constexpr uint32_t kPoly = 0x82F63B78;  // reflected Castagnoli polynomial
constexpr uint64_t kStep = 256;         // prefix CRCs are kept every kStep bytes
constexpr uint32_t kDirectLimit = 64;   // shorter payloads are CRCed directly

// a * b mod P, in the reflected representation (bit 31 is x^0).
uint32_t multmodp(uint32_t a, uint32_t b) {
  uint32_t m = 1u << 31, p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = b & 1 ? (b >> 1) ^ kPoly : b >> 1;
  }
  return p;
}

// x^(8n) mod P.
uint32_t x8n(uint64_t n) {
  static const auto table = [] {
    std::vector<uint32_t> t(64);  // t[k] = x^(2^k) mod P
    uint32_t p = 1u << 30;        // x^1
    for (auto& e : t) {
      e = p;
      p = multmodp(p, p);
    }
    return t;
  }();
  uint32_t p = 1u << 31;  // x^0
  for (unsigned k = 3; n; n >>= 1, k++)
    if (n & 1) p = multmodp(table[k], p);
  return p;
}

// crc32c(a || b) from crc32c(a), crc32c(b) and the length of b.
uint32_t combine(uint32_t ca, uint32_t cb, uint64_t len_b) { return multmodp(x8n(len_b), ca) ^ cb; }

// CRCs of prefixes of [base, limit) of one file: q_[k] = crc32c(bytes base .. base + k*kStep).
class PrefixCrcs {
 public:
  PrefixCrcs(File* file, uint64_t base, uint64_t limit)
      : base_(base), seq_(file, limit), near_(file, limit, 4096), far_(file, limit, 4096) {
    q_.push_back(0);
  }
  // crc32c of bytes [a, b), base <= a <= b <= limit; nullopt when a read fails.
  std::optional<uint32_t> range(uint64_t a, uint64_t b) {
    auto qa = at(a, near_), qb = at(b, far_);
    if (!qa || !qb) return std::nullopt;
    // qb = combine(qa, crc(a..b), b - a), so crc(a..b) = qb ^ (qa * x^(8(b-a))).
    return *qb ^ multmodp(x8n(b - a), *qa);
  }
 private:
  // crc32c of [base, i), finishing from the last kept prefix with window w.
  std::optional<uint32_t> at(uint64_t i, FrameWindow& w) {
    uint64_t k = (i - base_) / kStep;
    while (q_.size() <= k) {  // each kStep block is CRCed once, in file order
      uint64_t from = base_ + (q_.size() - 1) * kStep;
      if (!seq_.ensure(from, kStep)) return std::nullopt;
      q_.push_back(crc32c_extend(q_.back(), seq_.at(from), kStep));
    }
    uint64_t c = base_ + k * kStep;
    if (i == c) return q_[k];
    if (!w.ensure(c, i - c)) return std::nullopt;
    return crc32c_extend(q_[k], w.at(c), i - c);
  }

  uint64_t base_;
  std::vector<uint32_t> q_;
  FrameWindow seq_, near_, far_;
};

}  // namespace

std::optional<uint64_t> find_valid_data_frame(FrameWindow& w, uint16_t gen, uint64_t from) {
  const uint64_t limit = w.limit();
  std::optional<PrefixCrcs> prefix;
  // Bytes 4-9 of any data frame of generation gen: stride 1, reserved 0,
  // the generation. Offsets without them are passed over by memmem.
  const uint8_t needle[6] = {0, 1, 0, 0, uint8_t(gen >> 8), uint8_t(gen)};
  uint64_t off = from;
  while (off + kFrameHeaderSize <= limit) {
    if (!w.ensure(off, kFrameHeaderSize)) return std::nullopt;
    const uint64_t end = std::min(w.end(), limit);
    const uint8_t* hay = w.at(off + 4);
    const void* hit = memmem(hay, end - off - 4, needle, sizeof needle);
    if (!hit) {  // no offset whose bytes 4-9 the window holds is a candidate
      off = end - (4 + sizeof needle) + 1;
      continue;
    }
    off += static_cast<uint64_t>(static_cast<const uint8_t*>(hit) - hay);
    if (off + kFrameHeaderSize > limit) break;
    if (!w.ensure(off, kFrameHeaderSize)) return std::nullopt;
    const uint8_t* p = w.at(off);
    FrameHeader h = decode_frame_header(p);
    const uint64_t at = off++;
    if (!h.is_data() || (h.is_lost() && h.word != 0)) continue;
    if (h.word > limit - at - kFrameHeaderSize) continue;
    const uint32_t head = crc32c(p, 12);
    if (h.word <= kDirectLimit) {
      if (!w.ensure(at, kFrameHeaderSize + h.word)) return std::nullopt;
      p = w.at(at);
      if (crc32c_extend(head, p + kFrameHeaderSize, h.word) == h.crc) return at;
      continue;
    }
    if (!prefix) prefix.emplace(w.file(), at + kFrameHeaderSize, limit);
    auto body = prefix->range(at + kFrameHeaderSize, at + kFrameHeaderSize + h.word);
    if (body) {
      if (combine(head, *body, h.word) == h.crc) return at;
      continue;
    }
    // A read failed: read the claim through `w`, whose error() the caller checks.
    if (!w.ensure(at, kFrameHeaderSize + h.word)) return std::nullopt;
    p = w.at(at);
    if (crc32c_extend(head, p + kFrameHeaderSize, h.word) == h.crc) return at;
  }
  return std::nullopt;
}

bool stale_after_eof(FrameWindow& w, uint16_t gen, uint64_t from) {
  if (gen <= 1) return false;
  return !find_valid_data_frame(w, gen, from) && w.error().is_ok();
}

}  // namespace alog::detail
