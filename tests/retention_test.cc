// Unit tests of alog::retention_plan (alog/retention.h) on hand-made
// segment lists: each policy's cut, the strictest of them, and the edges
// (the active segment stays, older_than is an absolute cutoff compared
// strictly with the successor's created_at). Moved from the CLI's own copy
// of the policies; tests/truncate_test.cc covers retention_cut on real logs.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "alog/retention.h"

using namespace alog;

namespace {
// Four segments of 10 records each, 1000 bytes each, created 1 s apart; the last is active.
std::vector<SegmentInfo> four_segments() {
  std::vector<SegmentInfo> v;
  for (uint64_t i = 0; i < 4; i++) {
    SegmentInfo s{};
    s.file = "seg" + std::to_string(i);
    s.start_sequence = s.first_sequence = i * 10;
    s.next_sequence = i * 10 + 10;
    s.read_offset = 192;
    s.size = s.file_length = 1000;
    s.generation = 1;
    s.created_at_ms = 1000 * (i + 1);
    s.active = i == 3;
    v.push_back(s);
  }
  return v;
}
}  // namespace

TEST_CASE("retention_plan: keep N cuts at the next sequence minus N and never below the first") {
  RetentionPolicy p;
  p.keep_records = 5;
  CHECK(retention_plan(four_segments(), p).cut == 35u);
  p.keep_records = 0;
  CHECK(retention_plan(four_segments(), p).cut == 40u);
  p.keep_records = 1000;
  RetentionPlan plan = retention_plan(four_segments(), p);
  CHECK(plan.cut == 0u);
  CHECK(std::string(plan.policy).empty());
}

TEST_CASE("retention_plan: keep_bytes removes the oldest sealed segments until the rest fit") {
  RetentionPolicy p;
  p.keep_bytes = 2500;
  CHECK(retention_plan(four_segments(), p).cut == 20u);
  p.keep_bytes = 4000;
  CHECK(retention_plan(four_segments(), p).cut == 0u);
  p.keep_bytes = 0;  // the active segment always stays
  CHECK(retention_plan(four_segments(), p).cut == 30u);
}

TEST_CASE("retention_plan: keep_segments keeps the newest K and never the active one out") {
  RetentionPolicy p;
  p.keep_segments = 2;
  CHECK(retention_plan(four_segments(), p).cut == 20u);
  p.keep_segments = 1;
  CHECK(retention_plan(four_segments(), p).cut == 30u);
  p.keep_segments = 9;
  CHECK(retention_plan(four_segments(), p).cut == 0u);
}

TEST_CASE("retention_plan: older_than goes by the successor's created_at and keeps the active segment") {
  RetentionPolicy p;
  // Cutoff 2500 (now 5000, older than 2500 ms): segment 0's successor was created at 2000.
  p.older_than_ms = 2500;
  CHECK(retention_plan(four_segments(), p).cut == 10u);
  // A successor created exactly at the cutoff is not older than it.
  p.older_than_ms = 2000;
  CHECK(retention_plan(four_segments(), p).cut == 0u);
  p.older_than_ms = 5000;  // everything sealed is older: all but the active segment go
  CHECK(retention_plan(four_segments(), p).cut == 30u);
  p.older_than_ms = 0;  // a cutoff before any segment was made: nothing
  CHECK(retention_plan(four_segments(), p).cut == 0u);
}

TEST_CASE("retention_plan: several policies together take the strictest cut and report each") {
  RetentionPolicy p;
  p.keep_records = 25;   // 15
  p.keep_segments = 3;   // 10
  p.keep_bytes = 1500;   // 30
  RetentionPlan plan = retention_plan(four_segments(), p);
  CHECK(plan.cut == 30u);
  CHECK(std::string(plan.policy) == "keep_bytes");
  REQUIRE(plan.cuts.size() == 3);
  CHECK(plan.cuts[0].cut == 15u);
  CHECK(plan.cuts[1].cut == 30u);
  CHECK(plan.cuts[2].cut == 10u);
}

TEST_CASE("retention_plan of a log whose first segment was truncated inside starts at its first record") {
  auto segs = four_segments();
  segs[0].first_sequence = 7;
  RetentionPolicy p;
  p.keep_records = 100;
  CHECK(retention_plan(segs, p).cut == 7u);
  p = {};
  p.keep_segments = 3;
  CHECK(retention_plan(segs, p).cut == 10u);
}
