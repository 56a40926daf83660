// A log of one segment of about 7 MiB of which nothing is synced, in a
// MemFs, for the tests of walks of its tail (in the background, taken over
// by a rendered scan), and helpers to read and damage it.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "alog/format.h"
#include "alog/log.h"
#include "alog/scanner.h"
#include "support/mem_fs.h"

namespace alog::test {

inline const std::string kDir = "/db/log";
inline const std::string kActive = kDir + "/00000000000000000000.seg";

struct Rec {
  uint64_t seq;
  std::string payload;
  bool operator==(const Rec&) const = default;
};

// "record SEQ" and 90-106 x's: the payloads of make_unsynced_log.
inline std::string unsynced_payload(uint64_t seq) {
  return "record " + std::to_string(seq) + std::string(90 + seq % 17, 'x');
}

// One segment of about 7 MiB, none of it synced: 100-record batches of
// 100-ish bytes, closed without a sync (the synced offset stays at the header).
inline void make_unsynced_log(MemFs& fs, std::string (*payload)(uint64_t) = unsynced_payload) {
  const uint64_t records = 64000;
  REQUIRE(fs.mkdir("/db"));
  Options o;
  o.fs = &fs;
  o.max_segment_size = 64 * kMiB;
  auto log = Log::open(kDir, o);
  REQUIRE(log.is_ok());
  std::vector<std::string> batch;
  for (uint64_t seq = 0; seq < records; seq++) {
    batch.push_back(payload(seq));
    if (batch.size() == 100 || seq + 1 == records) {
      std::vector<std::string_view> views(batch.begin(), batch.end());
      REQUIRE((*log)->append(views).is_ok());
      batch.clear();
    }
  }
  REQUIRE((*log)->close(/*sync=*/false).is_ok());
  auto len = fs.read_all(kActive);
  REQUIRE(len.is_ok());
  REQUIRE(len->size() > 6 * kMiB);  // past the 4 MiB from which the walk goes to a thread
}

inline std::unique_ptr<Log> open_read(MemFs& fs, bool background) {
  Options o;
  o.fs = &fs;
  o.walk_tail_in_background = background;
  auto log = Log::open_read(kDir, o);
  REQUIRE_MESSAGE(log.is_ok(), log.status().to_string());
  return std::move(log).value();
}

// Every record a scan from the start returns, and the error it ended with.
inline std::vector<Rec> scan_all(const Log& log, Status* error) {
  std::vector<Rec> out;
  auto sc = log.scan(0);
  REQUIRE(sc.is_ok());
  std::vector<RecordView> batch(1000);
  while (true) {
    auto n = (*sc)->next_batch(std::span<RecordView>(batch));
    if (!n) {
      *error = n.status();
      return out;
    }
    if (*n == 0) return out;
    for (size_t i = 0; i < *n; i++) out.push_back({batch[i].sequence, std::string(batch[i].payload)});
  }
}

// The payload offset of a record in the one segment: a walk of its frames.
inline uint64_t payload_offset(MemFs& fs, uint64_t seq) {
  auto bytes = fs.read_all(kActive);
  REQUIRE(bytes.is_ok());
  const auto* p = reinterpret_cast<const uint8_t*>(bytes->data());
  uint64_t off = format::kHeaderSize, at = 0;
  while (off + format::kFrameHeaderSize <= bytes->size()) {
    format::FrameHeader h = format::decode_frame_header(p + off);
    if (h.is_data()) {
      if (at == seq) return off + format::kFrameHeaderSize;
      at++;
      off += format::kFrameHeaderSize + h.word;
    } else {
      off += format::kFrameHeaderSize;
    }
  }
  FAIL("no record " << seq);
  return 0;
}

inline void set_byte(MemFs& fs, uint64_t off, char c) {
  auto bytes = fs.read_all(kActive);
  REQUIRE(bytes.is_ok());
  std::string b = *bytes;
  b[off] = c;
  REQUIRE(fs.set_contents(kActive, b).is_ok());
}

}  // namespace alog::test
