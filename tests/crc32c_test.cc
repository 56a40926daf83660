// CRC32C check values on every implementation compiled in.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "alog/crc32c.h"

#include "alog/format.h"

namespace {

struct Impl {
  const char* name;
  bool available;
  uint32_t (*fn)(uint32_t, const void*, size_t);
};

std::vector<Impl> impls() {
  return {{"portable", true, alog::crc::portable},
          {"sse42", alog::crc::have_sse42(), alog::crc::sse42},
          {"isal", alog::crc::have_isal(), alog::crc::isal},
          {"dispatch", true, alog::crc32c_extend}};
}

}  // namespace

TEST_CASE("every crc32c implementation gives the check value of 123456789") {
  for (const auto& i : impls()) {
    if (!i.available) continue;
    CAPTURE(i.name);
    CHECK(i.fn(0, "123456789", 9) == 0xE3069283u);
    CHECK(i.fn(0, "", 0) == 0u);
  }
}

TEST_CASE("every crc32c implementation matches the RFC 3720 test vectors") {
  std::vector<uint8_t> zeros(32, 0), ones(32, 0xFF), inc(32), dec(32);
  for (int k = 0; k < 32; k++) {
    inc[k] = uint8_t(k);
    dec[k] = uint8_t(31 - k);
  }
  for (const auto& i : impls()) {
    if (!i.available) continue;
    CAPTURE(i.name);
    CHECK(i.fn(0, zeros.data(), 32) == 0x8A9136AAu);
    CHECK(i.fn(0, ones.data(), 32) == 0x62A8AB43u);
    CHECK(i.fn(0, inc.data(), 32) == 0x46DD794Eu);
    CHECK(i.fn(0, dec.data(), 32) == 0x113FDB5Cu);
  }
}

TEST_CASE("extending a crc equals the crc of the concatenation for every split and size") {
  std::string data;
  for (int k = 0; k < 3000; k++) data.push_back(char(k * 131 + 7));
  for (const auto& i : impls()) {
    if (!i.available) continue;
    CAPTURE(i.name);
    for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{63}, size_t{112},
                     size_t{511}, size_t{512}, size_t{513}, size_t{3000}}) {
      uint32_t whole = alog::crc::portable(0, data.data(), n);
      CHECK(i.fn(0, data.data(), n) == whole);
      for (size_t cut : {size_t{0}, n / 3, n}) {
        uint32_t a = i.fn(0, data.data(), cut);
        CHECK(i.fn(a, data.data() + cut, n - cut) == whole);
      }
    }
  }
}

TEST_CASE("every implementation agrees with the portable one at every length up to 300") {
  std::string data;
  for (int k = 0; k < 300; k++) data.push_back(char(k * 37 + 11));
  for (const auto& i : impls()) {
    if (!i.available) continue;
    CAPTURE(i.name);
    for (size_t n = 0; n <= data.size(); n++) {
      CAPTURE(n);
      CHECK(i.fn(0x12345678u, data.data(), n) == alog::crc::portable(0x12345678u, data.data(), n));
    }
  }
}

TEST_CASE("the ISA-L threshold chosen at start-up is one of the sizes timed, 128 to 256 bytes") {
  const size_t t = alog::crc::isal_threshold();
  CHECK(t >= 128);
  CHECK(t <= 256);
  CHECK(t % 16 == 0);
  if (!alog::crc::have_isal() || !alog::crc::have_sse42()) CHECK(t == 256);
  // Whatever was chosen, the dispatcher names ISA-L exactly from there on.
  if (alog::crc::have_isal()) {
    CHECK(std::string(alog::crc::dispatch_name(t)) == "isal");
    if (alog::crc::have_sse42()) CHECK(std::string(alog::crc::dispatch_name(t - 1)) == "sse42");
  }
}

TEST_CASE("crc32c_frame is a frame's CRC and the running CRC over its header, at every payload length to 300") {
  std::string data;
  for (int k = 0; k < 316; k++) data.push_back(char(k * 29 + 3));
  const auto* h = reinterpret_cast<const uint8_t*>(data.data());
  for (size_t n = 0; n <= 300; n++) {
    CAPTURE(n);
    uint32_t running = 0x9abcdef0u ^ uint32_t(n);
    const uint32_t want_running = alog::crc32c_extend(running, h, 16);
    const uint32_t got = alog::crc32c_frame(h, data.data() + 16, n, &running);
    CHECK(got == alog::crc::portable(alog::crc::portable(0, h, 12), data.data() + 16, n));
    CHECK(running == want_running);
  }
}

TEST_CASE("crc32c_extend2 is crc32c_extend over the first piece, then the second") {
  std::string data;
  for (int k = 0; k < 700; k++) data.push_back(char(k * 53 + 3));
  for (size_t na : {size_t{0}, size_t{5}, size_t{12}, size_t{255}, size_t{256}, size_t{300}})
    for (size_t nb : {size_t{0}, size_t{1}, size_t{100}, size_t{255}, size_t{256}, size_t{400}}) {
      CAPTURE(na);
      CAPTURE(nb);
      const char* b = data.data() + na;
      CHECK(alog::crc32c_extend2(7, data.data(), na, b, nb) ==
            alog::crc32c_extend(alog::crc32c_extend(7, data.data(), na), b, nb));
      CHECK(alog::crc32c_extend2(0, data.data(), na, b, nb) == alog::crc32c(data.data(), na + nb));
    }
}

TEST_CASE("crc32c_extend_3 is three crc32c_extends, for every mix of lengths around the common part") {
  std::string data;
  for (int k = 0; k < 1200; k++) data.push_back(char(k * 31 + 7));
  const size_t lengths[] = {0, 1, 7, 8, 9, 15, 100, 101, 255, 256, 400};
  for (size_t a : lengths)
    for (size_t b : lengths)
      for (size_t c : lengths) {
        CAPTURE(a);
        CAPTURE(b);
        CAPTURE(c);
        // Different starting CRCs and unaligned, distinct buffers.
        uint32_t crc[3] = {0, 0x12345678, 0xFFFFFFFF};
        const void* p[3] = {data.data() + 1, data.data() + 403, data.data() + 799};
        const size_t n[3] = {a, b, c};
        uint32_t want[3];
        for (int i = 0; i < 3; i++) want[i] = alog::crc::portable(crc[i], p[i], n[i]);
        alog::crc32c_extend_3(crc, p, n);
        CHECK(crc[0] == want[0]);
        CHECK(crc[1] == want[1]);
        CHECK(crc[2] == want[2]);
      }
}

TEST_CASE("crc32c_extend_each is crc32c_extend over each piece in order") {
  std::string data;
  for (int k = 0; k < 4000; k++) data.push_back(char(k * 17 + 5));
  for (size_t len : {size_t{0}, size_t{1}, size_t{16}, size_t{255}, size_t{256}, size_t{300}})
    for (size_t count : {size_t{0}, size_t{1}, size_t{2}, size_t{9}}) {
      CAPTURE(len);
      CAPTURE(count);
      std::vector<const uint8_t*> pieces;
      uint32_t want = 0x0BADF00D;
      for (size_t i = 0; i < count; i++) {
        // Pieces out of address order, as headers between payloads are not.
        pieces.push_back(reinterpret_cast<const uint8_t*>(data.data()) + (count - i) * 301 + i);
        want = alog::crc::portable(want, pieces.back(), len);
      }
      CHECK(alog::crc32c_extend_each(0x0BADF00D, pieces.data(), count, len) == want);
    }
}

namespace {

// Three frames one after another, each a 16-byte header (length in bytes
// 0-3, big-endian as the format stores it) and its payload, with the CRC
// each must get (header bytes 0-11, then the payload) from the portable code.
struct ThreeFrames {
  std::vector<uint8_t> buf;
  uint8_t* f[3];
  uint32_t want[3];
  explicit ThreeFrames(const size_t (&len)[3]) : buf(3 * 16 + len[0] + len[1] + len[2]) {
    for (size_t i = 0; i < buf.size(); i++) buf[i] = uint8_t(i * 31 + 7);
    for (size_t k = 0, at = 0; k < 3; at += 16 + len[k], k++) {
      f[k] = buf.data() + at;
      alog::format::put32(f[k], uint32_t(len[k]));
      want[k] = alog::crc::portable(alog::crc::portable(0, f[k], 12), f[k] + 16, len[k]);
    }
  }
};

// Every mix of three lengths from sets on both sides of the ISA-L threshold
// (128-256 bytes): the SSE4.2 path and the one frame at a time.
template <class Check>
void for_length_mixes(Check check) {
  for (size_t a : {size_t{0}, size_t{5}, size_t{100}, size_t{255}, size_t{300}})
    for (size_t b : {size_t{0}, size_t{7}, size_t{100}, size_t{256}})
      for (size_t c : {size_t{1}, size_t{8}, size_t{101}, size_t{400}}) {
        CAPTURE(a);
        CAPTURE(b);
        CAPTURE(c);
        const size_t len[3] = {a, b, c};
        check(len);
      }
}

}  // namespace

TEST_CASE(
    "crc32c_frames_3 stores each frame's CRC of header bytes 0-11 and its payload, for every mix "
    "of lengths") {
  for_length_mixes([](const size_t (&len)[3]) {
    ThreeFrames t(len);
    const uint8_t* f[3] = {t.f[0], t.f[1], t.f[2]};
    uint32_t got[3];
    alog::crc32c_frames_3(f, got);
    for (int k = 0; k < 3; k++) CHECK(got[k] == t.want[k]);
  });
}

TEST_CASE(
    "crc32c_seal_frames_3 stores each frame's CRC and extends the running CRC over the finished "
    "headers, for every mix of lengths") {
  for_length_mixes([](const size_t (&len)[3]) {
    ThreeFrames t(len);
    uint32_t running = 0x0BADF00D;
    alog::crc32c_seal_frames_3(t.f, &running);
    uint32_t want_running = 0x0BADF00D;
    for (int k = 0; k < 3; k++) {
      CHECK(alog::format::get32(t.f[k] + 12) == t.want[k]);
      want_running = alog::crc::portable(want_running, t.f[k], 16);
    }
    CHECK(running == want_running);
  });
}

TEST_CASE("crc32c_seal_frame stores a frame's CRC and extends the running CRC over its header, at every length to 300") {
  for (size_t n = 0; n <= 300; n++) {
    CAPTURE(n);
    std::vector<uint8_t> buf(16 + n);
    for (size_t i = 0; i < buf.size(); i++) buf[i] = uint8_t(i * 13 + n);
    alog::format::put32(buf.data(), uint32_t(n));
    const uint32_t want = alog::crc::portable(alog::crc::portable(0, buf.data(), 12), buf.data() + 16, n);
    uint32_t running = 0x12345678;
    alog::crc32c_seal_frame(buf.data(), &running);
    CHECK(alog::format::get32(buf.data() + 12) == want);
    CHECK(running == alog::crc::portable(0x12345678, buf.data(), 16));
  }
}
