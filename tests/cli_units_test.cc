// Unit tests of the toolkit's pure parts: SIZE, DURATION and SEQ values
// (the retention policies of truncate-before are the library's
// retention_plan, tested in tests/retention_test.cc). The CLI is not a
// library, so its sources are compiled in here.
#include <doctest/doctest.h>

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
