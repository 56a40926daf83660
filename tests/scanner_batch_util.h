// Random logs for the bulk-read tests: several small segments, batches of
// 1-9 records, payloads of 0-400 random (binary) bytes, checkpoints every 4
// records, and an unsynced last part on odd seeds; damaged or salvaged
// ones; and how a reading is written down to be compared.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "alog/log.h"
#include "alog/verify.h"
#include "support/util.h"

namespace alog::test {

struct RandomLog {
  std::vector<std::string> segments;  // paths, in log order
  std::vector<std::string> payloads;  // by sequence, from 0
};

inline RandomLog make_random_log(const std::string& dir, uint32_t seed) {
  std::mt19937 rng(seed);
  Options o;
  o.max_segment_size = 8192;
  o.checkpoint_stride = 4;
  auto log = Log::open(dir, o);
  REQUIRE(log.is_ok());
  RandomLog made;
  const int batches = 40 + int(rng() % 40);
  for (int b = 0; b < batches; b++) {
    std::vector<std::string> recs(1 + rng() % 9);
    for (auto& r : recs) {
      size_t len = rng() % 4 == 0 ? 0 : rng() % 401;
      for (size_t i = 0; i < len; i++) r.push_back(char(rng()));
    }
    std::vector<std::string_view> views(recs.begin(), recs.end());
    REQUIRE((*log)->append(views).is_ok());
    made.payloads.insert(made.payloads.end(), recs.begin(), recs.end());
    if (b == batches / 2 || seed % 2 == 0) REQUIRE((*log)->sync().is_ok());
  }
  for (const SegmentInfo& s : (*log)->segments()) made.segments.push_back(dir + "/" + s.file);
  REQUIRE((*log)->close(/*sync=*/seed % 2 == 0).is_ok());
  return made;
}

// One kind of damage per seed: payload bits, a header byte, a torn tail,
// a missing middle segment.
inline void damage_random_log(const RandomLog& made, uint32_t seed) {
  std::mt19937 rng(seed * 7919);
  const std::vector<std::string>& segs = made.segments;
  const std::string& victim = segs[rng() % segs.size()];
  const uint64_t len = file_size(victim);
  switch (seed % 4) {
    case 0:
      for (int i = 0; i < 3; i++) {
        const uint64_t off = 192 + rng() % (len - 192);
        flip_bit(victim, off, int(rng() % 8));
      }
      break;
    case 1: {
      const uint64_t off = 192 + rng() % (len - 192);
      set_byte(victim, off, uint8_t(rng()));
      break;
    }
    case 2: truncate_file(segs.back(), file_size(segs.back()) - 1 - rng() % 40); break;
    case 3:
      if (segs.size() > 2) std::filesystem::remove(segs[1]);
      else flip_bit(victim, 200, 3);
      break;
  }
}

// Payload damage in every other sealed segment, salvaged (recover --force):
// lost frames in its place.
inline void salvage_random_log(const std::string& dir, const RandomLog& made, uint32_t seed) {
  std::mt19937 rng(seed);
  for (size_t i = 0; i + 1 < made.segments.size(); i += 2) {
    const uint64_t len = file_size(made.segments[i]);
    flip_bit(made.segments[i], 192 + 16 + rng() % (len - 224), 1);
  }
  RecoverOptions ro;
  ro.force = true;
  ro.checkpoint_stride = 4;
  REQUIRE(recover(dir, ro).is_ok());
}

// A record as the comparisons write it down: "SEQ record|lost PAYLOAD-HEX".
inline std::string record_item(uint64_t seq, bool lost, std::string_view payload) {
  return std::to_string(seq) + (lost ? " lost " : " record ") + hex(std::string(payload));
}

// An error as the comparisons write it down: code, path, offset, message.
inline std::string error_item(const Status& st) {
  return std::string(errc_name(st.code())) + " " + st.path() + ":" +
         (st.offset() ? std::to_string(*st.offset()) : "-") + " " + st.message();
}

}  // namespace alog::test
