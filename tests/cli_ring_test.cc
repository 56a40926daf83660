// A healthy recycling ring is quiet: the stale frames after the EOF of a
// recycled segment (generation > 1) are no warning for verify, and stats
// counts them (man/alog-verify.1 "bytes_after_eof").
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "alog/log.h"
#include "cli_util.h"

using namespace alog;
using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

TEST_CASE("verify reports no warning for the stale frames of a recycled segment and stats counts them") {
  TempDir t;
  std::string d = t / "ring";
  {
    Options o;
    o.max_segment_size = 600;
    o.checkpoint_stride = 4;
    o.max_segments = 3;
    auto log = Log::open(d, o);
    REQUIRE(log.is_ok());
    // Records until a roll recycles a file: the new active segment then
    // holds one record in a file as long as a full one.
    for (int i = 0; i < 1000; i++) {
      uint64_t active = (*log)->segments().back().start_sequence;
      REQUIRE((*log)->append_one(std::string(60, 'x')).is_ok());
      const auto segs = (*log)->segments();
      if (segs.back().start_sequence != active && segs.back().generation > 1) break;
    }
    REQUIRE((*log)->close().is_ok());
  }
  RunResult st = run_alog("--json stats " + shq(d));
  REQUIRE(st.exit_code == 0);
  json s = json::parse(st.out);
  CHECK(s["totals"]["stale_bytes"].get<uint64_t>() > 0);
  bool recycled = false;
  for (const auto& seg : s["segments"]) recycled = recycled || seg["generation"].get<int>() > 1;
  CHECK(recycled);
  RunResult v = run_alog("--json verify " + shq(d));
  CHECK(v.exit_code == 0);
  CHECK(v.err == "");
  CHECK(v.out.find("bytes_after_eof") == std::string::npos);
}
