// Random logs for the bulk-read tests: several small segments, batches of
// 1-9 records, payloads of 0-400 random (binary) bytes, checkpoints every 4
// records, and an unsynced last part on odd seeds.
#pragma once

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "alog/log.h"

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

}  // namespace alog::test
