// Retention run by alog append (man/alog-append.1 "Retention"): policies
// stored in alog.json, applied at open and after each roll, and
// --segment-age. Old segments come from a library writer with a clock in
// the past, so nothing waits for time to pass.
#include <doctest/doctest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>
#include <string>

#include "alog/log.h"
#include "cli_child.h"
#include "cli_util.h"

using namespace alog;
using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

namespace {

std::string lines(int n, int width) {
  std::string s;
  for (int i = 0; i < n; i++) s += std::string(size_t(width), char('a' + i % 26)) + "\n";
  return s;
}

size_t segment_count(const std::string& dir) {
  auto log = Log::open_read(dir);
  REQUIRE(log.is_ok());
  return (*log)->segments().size();
}

// A log of two segments (or one with one_segment) written with a clock
// in 1970, and its alog.json.
void old_log(const std::string& dir, bool one_segment) {
  Options o;
  o.max_segment_size = 600;
  o.clock_ms = [] { return uint64_t(1000); };
  auto log = Log::open(dir, o);
  REQUIRE(log.is_ok());
  while ((*log)->segments().size() < (one_segment ? 1u : 2u) ||
         (*log)->segments().back().next_sequence == (*log)->segments().back().start_sequence)
    REQUIRE((*log)->append_one(std::string(50, 'o')).is_ok());
  REQUIRE((*log)->close().is_ok());
  write_file(dir + "/alog.json", "{\"max_segment_size\":600}\n");
}

}  // namespace

TEST_CASE("append stores its retention policies in alog.json and every later append applies them after each roll") {
  TempDir t;
  std::string d = t / "log";
  RunResult r = run_alog("--json append --batch 1 --segment-size 600 --keep-segments 2 " + shq(d), lines(100, 50));
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out);
  CHECK(j["retention_records_removed"].get<uint64_t>() > 0);
  CHECK(json::parse(read_file(d + "/alog.json"))["retention"] == json{{"keep_segments", 2}});
  CHECK(segment_count(d) == 2);
  r = run_alog("--json append --batch 1 " + shq(d), lines(100, 50));
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out)["retention_records_removed"].get<uint64_t>() > 0);
  CHECK(segment_count(d) == 2);
  CHECK(run_alog("verify " + shq(d)).exit_code == 0);
}

TEST_CASE("append applies a stored --older-than at open") {
  TempDir t;
  std::string d = t / "log";
  old_log(d, /*one_segment=*/false);
  REQUIRE(segment_count(d) == 2);
  RunResult r = run_alog("--json append --older-than 1d " + shq(d), "new\n");
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out)["retention_records_removed"].get<uint64_t>() > 0);
  CHECK(segment_count(d) == 1);
  CHECK(json::parse(read_file(d + "/alog.json"))["retention"] == json{{"older_than_s", 86400}});
}

TEST_CASE("append --segment-age seals an active segment older than that, so that age retention can free it") {
  TempDir t;
  std::string d = t / "log";
  old_log(d, /*one_segment=*/true);
  REQUIRE(segment_count(d) == 1);
  RunResult r = run_alog("append --segment-age 1h " + shq(d), "new\n");
  REQUIRE(r.exit_code == 0);
  CHECK(segment_count(d) == 2);
  auto log = Log::open_read(d);
  REQUIRE(log.is_ok());
  auto segs = (*log)->segments();
  CHECK(!segs[0].active);
  CHECK(segs[1].next_sequence - segs[1].start_sequence == 1);  // "new" alone in the new segment
}

TEST_CASE("append refuses a retention entry in alog.json that is not an object, and --keep-segments 0") {
  TempDir t;
  std::string d = t / "log";
  REQUIRE(run_alog("append " + shq(d), "a\n").exit_code == 0);
  write_file(d + "/alog.json", "{\"retention\":[1]}\n");
  RunResult r = run_alog("append " + shq(d), "b\n");
  CHECK(r.exit_code == 8);
  check_one_line_error(r, d + "/alog.json");
  CHECK(run_alog("append --keep-segments 0 " + shq(t / "other"), "a\n").exit_code == 16);
}

TEST_CASE("a live append with --segment-age rolls its active segment while no input comes") {
  TempDir t;
  std::string d = t / "log";
  Child c({"append", "--segment-age", "1s", "--flush-interval", "10ms", d}, Child::Stdin::pipe);
  c.write("a\n");
  // The roll is the event waited for: one second of age, then at most one more.
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kFailsafeMs);
  while (std::chrono::steady_clock::now() < until) {
    auto log = Log::open_read(d);
    if (log.is_ok() && (*log)->segments().size() == 2) break;
    std::this_thread::yield();
  }
  CHECK(segment_count(d) == 2);
  c.close_stdin();
  CHECK(c.wait_exit() == 0);
  CHECK(run_alog("verify " + shq(d)).exit_code == 0);
}

TEST_CASE("append to a recycling log counts the records recycling dropped, and a log that does not recycle has no such count") {
  TempDir t;
  const std::string d = t / "ring";
  auto first_seq = [&] {
    auto log = Log::open_read(d);
    REQUIRE(log.is_ok());
    return (*log)->first_sequence();
  };
  RunResult r = run_alog("--json append --segment-size 1k --max-segments 3 " + shq(d), lines(300, 20));
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out);
  const uint64_t after_first = first_seq();
  CHECK(after_first > 0);
  CHECK(j["recycled_records"] == after_first);  // the log started at 0; nothing else removes
  r = run_alog("--json append " + shq(d), lines(100, 20));
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out)["recycled_records"] == first_seq() - after_first);
  r = run_alog("--json append " + shq(t / "plain"), lines(10, 20));
  CHECK_FALSE(json::parse(r.out).contains("recycled_records"));
}
