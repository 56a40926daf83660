// The search for a data frame valid on its own after a stop: the frame it
// finds, and a cost linear in the bytes searched however the lengths are forged.
#include <doctest/doctest.h>

#include <chrono>
#include <random>
#include <string>

#include "alog/format.h"
#include "frame_reader.h"
#include "support/mem_fs.h"

using namespace alog;
using namespace alog::detail;
using namespace alog::format;

namespace {

// A file holding `bytes`, in a MemFs of its own.
struct Bytes {
  alog::test::MemFs fs;
  std::unique_ptr<File> f;
  explicit Bytes(const std::string& bytes) {
    REQUIRE(fs.mkdir("/d").is_ok());
    auto r = fs.open("/d/x", OpenMode::create_excl);
    REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
    f = std::move(r).value();
    REQUIRE(f->pwrite(bytes.data(), bytes.size(), 0).is_ok());
  }
};

std::string data_frame(const std::string& payload, uint16_t gen = 1) {
  uint8_t h[kFrameHeaderSize];
  encode_data_header(uint32_t(payload.size()), gen, true, payload.data(), payload.size(), h);
  return std::string(reinterpret_cast<char*>(h), sizeof h) + payload;
}

std::optional<uint64_t> search(const std::string& bytes, uint64_t from = 0) {
  Bytes b(bytes);
  FrameWindow w(b.f.get(), bytes.size());
  return find_valid_data_frame(w, 1, from);
}

}  // namespace

TEST_CASE("the search finds a valid frame of any length behind garbage, and no damaged one") {
  std::mt19937 rng(7);
  for (size_t len : {0u, 1u, 63u, 64u, 65u, 255u, 256u, 257u, 1000u, 70000u, 3u << 20}) {
    std::string payload(len, '\0');
    for (auto& c : payload) c = char(rng());
    std::string junk(517, 'j');
    std::string bytes = junk + data_frame(payload) + "tail";
    INFO("length " << len);
    CHECK(search(bytes) == junk.size());
    CHECK_FALSE(search(bytes, junk.size() + 1).has_value());
    if (len > 0) {
      bytes[junk.size() + kFrameHeaderSize + len / 2] ^= 1;
      CHECK_FALSE(search(bytes).has_value());
    }
  }
}

TEST_CASE("the search skips a forged header claiming a long payload and finds the frame after it") {
  std::string real = data_frame(std::string(300, 'r'));
  // A header that claims the rest of the file, with a CRC of nothing.
  std::string forged = data_frame(std::string(1000, 'f')).substr(0, kFrameHeaderSize);
  std::string bytes = forged + std::string(100, 'z') + real + std::string(2000, 'z');
  CHECK(search(bytes) == forged.size() + 100);
}

TEST_CASE("the search after a stop is linear in the bytes searched, however many headers claim long payloads") {
  // 8 MiB of fake headers, one every 256 bytes, each claiming nearly the whole rest.
  const size_t n = 8u << 20;
  std::string bytes(n, 'z');
  for (size_t off = 0; off + 4096 < n; off += 256) {
    std::string h = data_frame(std::string(10, 'x')).substr(0, kFrameHeaderSize);
    uint32_t len = uint32_t(n - off - 4096);
    h[0] = char(len >> 24), h[1] = char(len >> 16), h[2] = char(len >> 8), h[3] = char(len);
    bytes.replace(off, kFrameHeaderSize, h);
  }
  auto t0 = std::chrono::steady_clock::now();
  CHECK_FALSE(search(bytes).has_value());
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  // CRCing each claim would be ~32,000 candidates x ~4 MiB = 128 GiB of CRC.
  CHECK(ms < 20000);
  MESSAGE("searched 8 MiB with 32,000 forged claims in " << ms << " ms");
}
