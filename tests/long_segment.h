// A log of one long segment, for the walks split across threads
// (src/walk_split.h: parts of at least 8 MiB): 210,000 records of 100 bytes
// in batches of 1,000 (24.4 MB), each payload "record NNNNNNNN" padded with
// dots, optionally after 16 bytes that form a valid checkpoint header (bytes
// of a payload that look like a checkpoint, where a split may fall).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "alog/crc32c.h"
#include "alog/format.h"
#include "alog/log.h"
#include "support/util.h"

namespace alog::test {

constexpr int kLongRecords = 210000;

inline std::string long_payload(int i, bool fake_checkpoint) {
  std::string p;
  if (fake_checkpoint) {
    uint8_t h[16] = {0x12, 0x34, 0x56, 0x78, 0, 7, 0, 0, 0, 1, 0, 4};  // crc, stride 7, generation 1, Checkpoint
    uint32_t c = crc32c(h, 12);
    for (int k = 0; k < 4; k++) h[12 + k] = static_cast<uint8_t>(c >> (24 - 8 * k));
    p.assign(reinterpret_cast<const char*>(h), 16);
  }
  char id[32];
  std::snprintf(id, sizeof id, "record %08d", i);
  p += id;
  p.resize(100, '.');
  return p;
}

// The records before `synced` are appended and the log closed with a sync;
// the rest are appended after a reopen and left unsynced (close(false)).
inline std::string make_long_log(const TempDir& t, bool fake_checkpoint = false, int synced = kLongRecords) {
  const std::string d = t / "log";
  auto append = [&](int from, int to, bool sync) {
    auto log = Log::open(d);
    REQUIRE(log.is_ok());
    for (int b = from; b < to; b += 1000) {
      std::vector<std::string> recs;
      for (int i = b; i < std::min(to, b + 1000); i++) recs.push_back(long_payload(i, fake_checkpoint));
      std::vector<std::string_view> views(recs.begin(), recs.end());
      REQUIRE((*log)->append(views).is_ok());
    }
    REQUIRE((*log)->close(sync).is_ok());
  };
  append(0, synced, true);
  if (synced < kLongRecords) append(synced, kLongRecords, false);
  return d;
}

inline std::string long_segment(const std::string& d) { return d + "/00000000000000000000.seg"; }

// The file offset of record i's payload.
inline uint64_t payload_offset(const std::string& d, int i, bool fake_checkpoint = false) {
  char id[32];
  std::snprintf(id, sizeof id, "record %08d", i);
  size_t at = read_file(long_segment(d)).find(id);
  REQUIRE(at != std::string::npos);
  return at - (fake_checkpoint ? 16 : 0);
}

}  // namespace alog::test
