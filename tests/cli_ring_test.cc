// A healthy recycling ring is quiet: the stale frames after the EOF of a
// recycled segment (generation > 1) are no warning for verify, and stats
// counts them (man/alog-verify.1 "bytes_after_eof"); opening for writing
// drops them unsaved and reports no cut. Frames of the segment's own
// generation after its EOF (a lost batch) are still saved and reported.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "alog/log.h"
#include "cli_util.h"

using namespace alog;
using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

namespace {

// A ring closed while its active segment is a recycled file holding one
// record: the file is as long as a full segment, its tail stale frames.
std::string make_ring(const TempDir& t) {
  std::string d = t / "ring";
  Options o;
  o.max_segment_size = 600;
  o.checkpoint_stride = 4;
  o.max_segments = 3;
  auto log = Log::open(d, o);
  REQUIRE(log.is_ok());
  for (int i = 0; i < 1000; i++) {
    uint64_t active = (*log)->segments().back().start_sequence;
    REQUIRE((*log)->append_one(std::string(60, 'x')).is_ok());
    const auto segs = (*log)->segments();
    if (segs.back().start_sequence != active && segs.back().generation > 1) break;
  }
  REQUIRE((*log)->close().is_ok());
  return d;
}

std::string active_file(const std::string& d) {
  json s = json::parse(run_alog("--json stats " + shq(d)).out);
  return d + "/" + s["segments"].back()["file"].get<std::string>();
}

}  // namespace

TEST_CASE("verify reports no warning for the stale frames of a recycled segment and stats counts them") {
  TempDir t;
  std::string d = make_ring(t);
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

TEST_CASE("recover has nothing to do on a ring whose active segment has stale frames, and an append drops them unsaved") {
  TempDir t;
  std::string d = make_ring(t);
  const std::string active = active_file(d);
  const size_t long_length = read_file(active).size();
  RunResult plan = run_alog("--json recover -n " + shq(d));
  CHECK(plan.exit_code == 0);
  CHECK(json::parse(plan.out)["actions"].empty());
  RunResult app = run_alog("--json append " + shq(d), "one\n");
  REQUIRE(app.exit_code == 0);
  CHECK(app.err == "");
  CHECK(json::parse(app.out)["recovered"].is_null());
  CHECK(!file_exists(d + "/lost+found"));
  CHECK(read_file(active).size() < long_length);  // truncated after its EOF
  RunResult v = run_alog("--json verify " + shq(d));
  CHECK(v.exit_code == 0);
}

TEST_CASE("frames of a recycled segment's own generation after its EOF are saved and reported as a cut") {
  TempDir t;
  std::string d = make_ring(t);
  const std::string active = active_file(d);
  json s = json::parse(run_alog("--json stats " + shq(d)).out);
  const size_t eof = s["segments"].back()["size"].get<size_t>() - 16;
  // A lost batch of three: the file after it (the stale frames after its
  // EOF as they were: that append's open truncated them), but with the
  // header's slots and the old EOF frame as before it (their sectors never
  // landed), so the batch's second and third frames lie after the EOF.
  const std::string before = read_file(active);
  REQUIRE(run_alog("append --batch 3 " + shq(d), "a\nb\nc\n").exit_code == 0);
  std::string lost = read_file(active);
  REQUIRE(lost.size() < before.size());
  lost += before.substr(lost.size());
  lost.replace(0, 192, before, 0, 192);
  lost.replace(eof, 16, before, eof, 16);
  write_file(active, lost);
  RunResult v = run_alog("--json verify " + shq(d));
  CHECK(v.exit_code == 0);
  CHECK(v.out.find("bytes_after_eof") != std::string::npos);
  RunResult plan = run_alog("--json recover -n " + shq(d));
  CHECK(plan.exit_code == 1);
  json pj = json::parse(plan.out);
  REQUIRE(pj["actions"].size() == 1);
  CHECK(pj["actions"][0]["offset"].get<size_t>() == eof + 16);
  RunResult app = run_alog("--json append " + shq(d), "one\n");
  REQUIRE(app.exit_code == 0);
  json aj = json::parse(app.out);
  REQUIRE(aj["recovered"].is_object());
  CHECK(aj["recovered"]["offset"].get<size_t>() == eof + 16);
  CHECK(aj["recovered"]["bytes"].get<size_t>() == before.size() - eof - 16);
  CHECK(file_exists(d + "/lost+found"));
}
