// Unit tests of the toolkit's pure parts: SIZE, DURATION and SEQ values, and
// the retention policies of truncate-before. The CLI is not a library, so
// its sources are compiled in here.
#include <doctest/doctest.h>

#include "../cmd/retention.cc"
#include "../cmd/units.cc"

using namespace alog::cli;

TEST_CASE("sizes accept binary units in any case and nothing else") {
  CHECK(parse_size("4096") == 4096u);
  CHECK(parse_size("4k") == 4096u);
  CHECK(parse_size("4K") == 4096u);
  CHECK(parse_size("4KiB") == 4096u);
  CHECK(parse_size("64MiB") == 67108864u);
  CHECK(parse_size("1G") == 1073741824u);
  CHECK(parse_size("2t") == (uint64_t(2) << 40));
  CHECK(parse_size("7B") == 7u);
  CHECK_FALSE(parse_size(""));
  CHECK_FALSE(parse_size("1.5G"));
  CHECK_FALSE(parse_size("4 k"));
  CHECK_FALSE(parse_size("-4k"));
  CHECK_FALSE(parse_size("4KB"));
  CHECK_FALSE(parse_size("4MB"));
  CHECK_FALSE(parse_size("k"));
  CHECK_FALSE(parse_size("18446744073709551616"));
  CHECK_FALSE(parse_size("16777216T"));
  CHECK(parse_size("18446744073709551615") == UINT64_MAX);
}

TEST_CASE("durations take w d h m s once each in that order and need a unit") {
  CHECK(parse_duration_s("7d") == 7u * 86400);
  CHECK(parse_duration_s("12h") == 12u * 3600);
  CHECK(parse_duration_s("30m") == 1800u);
  CHECK(parse_duration_s("45s") == 45u);
  CHECK(parse_duration_s("1w") == 7u * 86400);
  CHECK(parse_duration_s("1d12h") == 86400u + 12 * 3600);
  CHECK(parse_duration_s("2h30m15s") == 2u * 3600 + 30 * 60 + 15);
  CHECK(parse_duration_s("90m") == 5400u);
  CHECK_FALSE(parse_duration_s("90"));
  CHECK_FALSE(parse_duration_s(""));
  CHECK_FALSE(parse_duration_s("30m2h"));
  CHECK_FALSE(parse_duration_s("1h1h"));
  CHECK_FALSE(parse_duration_s("1h 30m"));
  CHECK_FALSE(parse_duration_s("1y"));
  CHECK_FALSE(parse_duration_s("-1d"));
  CHECK_FALSE(parse_duration_s("99999999999999999999s"));
}

TEST_CASE("sequences are decimal unsigned 64-bit integers without sign or unit") {
  CHECK(parse_u64("0") == 0u);
  CHECK(parse_u64("18446744073709551615") == UINT64_MAX);
  CHECK_FALSE(parse_u64("18446744073709551616"));
  CHECK_FALSE(parse_u64("-1"));
  CHECK_FALSE(parse_u64("+1"));
  CHECK_FALSE(parse_u64("1k"));
  CHECK_FALSE(parse_u64(" 1"));
  CHECK_FALSE(parse_u64(""));
}

namespace {
// Four segments of 10 records each, 1000 bytes each, created 1 s apart; the last is active.
std::vector<RetentionSegment> four_segments() {
  std::vector<RetentionSegment> v;
  for (uint64_t i = 0; i < 4; i++) v.push_back({i * 10, i * 10 + 10, 1000, 1000 * (i + 1), i == 3});
  return v;
}
}  // namespace

TEST_CASE("keep N cuts at the next sequence minus N and never below the first") {
  RetentionPolicy p;
  p.keep_records = 5;
  CHECK(plan_retention(four_segments(), p, 0).cut == 35u);
  p.keep_records = 0;
  CHECK(plan_retention(four_segments(), p, 0).cut == 40u);
  p.keep_records = 1000;
  RetentionPlan plan = plan_retention(four_segments(), p, 0);
  CHECK(plan.cut == 0u);
  CHECK(plan.policy.empty());
}

TEST_CASE("keep-bytes removes the oldest sealed segments until the rest fit") {
  RetentionPolicy p;
  p.keep_bytes = 2500;
  CHECK(plan_retention(four_segments(), p, 0).cut == 20u);
  p.keep_bytes = 4000;
  CHECK(plan_retention(four_segments(), p, 0).cut == 0u);
  p.keep_bytes = 0;  // the active segment always stays
  CHECK(plan_retention(four_segments(), p, 0).cut == 30u);
}

TEST_CASE("keep-segments keeps the newest K and never the active one out") {
  RetentionPolicy p;
  p.keep_segments = 2;
  CHECK(plan_retention(four_segments(), p, 0).cut == 20u);
  p.keep_segments = 1;
  CHECK(plan_retention(four_segments(), p, 0).cut == 30u);
  p.keep_segments = 9;
  CHECK(plan_retention(four_segments(), p, 0).cut == 0u);
}

TEST_CASE("older-than goes by the successor's created_at and keeps the active segment") {
  RetentionPolicy p;
  // now 5000, older than 2500 ms: cutoff 2500; segment 0's successor was created at 2000.
  p.older_than_ms = 2500;
  CHECK(plan_retention(four_segments(), p, 5000).cut == 10u);
  // A successor created exactly at the cutoff is not older than it.
  p.older_than_ms = 3000;
  CHECK(plan_retention(four_segments(), p, 5000).cut == 0u);
  p.older_than_ms = 0;
  CHECK(plan_retention(four_segments(), p, 5000).cut == 30u);
  p.older_than_ms = 1000000;  // longer ago than the clock: nothing
  CHECK(plan_retention(four_segments(), p, 5000).cut == 0u);
}

TEST_CASE("several policies together take the strictest cut and report each") {
  RetentionPolicy p;
  p.keep_records = 25;   // 15
  p.keep_segments = 3;   // 10
  p.keep_bytes = 1500;   // 30
  RetentionPlan plan = plan_retention(four_segments(), p, 0);
  CHECK(plan.cut == 30u);
  CHECK(plan.policy == "keep_bytes");
  REQUIRE(plan.cuts.size() == 3);
  CHECK(plan.cuts[0].cut == 15u);
  CHECK(plan.cuts[1].cut == 30u);
  CHECK(plan.cuts[2].cut == 10u);
}

TEST_CASE("retention of a log whose first segment was truncated inside starts at its first record") {
  auto segs = four_segments();
  segs[0].first_sequence = 7;
  RetentionPolicy p;
  p.keep_records = 100;
  CHECK(plan_retention(segs, p, 0).cut == 7u);
  p = {};
  p.keep_segments = 3;
  CHECK(plan_retention(segs, p, 0).cut == 10u);
}
