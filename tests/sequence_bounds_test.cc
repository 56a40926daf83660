// Sequence numbers never wrap: the last sequence a log can reach is
// 18446744073709551615 (as its next sequence), and the empty batch on an
// empty log is out_of_bounds whatever the log's first sequence.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "alog/log.h"
#include "cli_util.h"
#include "support/util.h"

using namespace alog;
using namespace alog::test;

namespace {

std::unique_ptr<Log> open_at(const std::string& dir, uint64_t start) {
  Options o;
  o.start_sequence = start;
  auto r = Log::open(dir, o);
  REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  return std::move(r).value();
}

}  // namespace

TEST_CASE("an append that would pass sequence 18446744073709551615 is out_of_bounds and writes nothing") {
  TempDir t;
  auto log = open_at(t / "log", UINT64_MAX - 2);
  auto before = snapshot_tree(t / "log");
  auto r = log->append({"a", "b", "c"});
  CHECK(r.status().code() == Errc::out_of_bounds);
  CHECK(snapshot_tree(t / "log") == before);
  CHECK(log->next_sequence() == UINT64_MAX - 2);
  // Two records fit: the next sequence is then the largest a uint64 holds.
  auto ok = log->append({"a", "b"});
  REQUIRE(ok.is_ok());
  CHECK(*ok == UINT64_MAX - 1);
  CHECK(log->next_sequence() == UINT64_MAX);
  CHECK(log->append({"c"}).status().code() == Errc::out_of_bounds);
  CHECK(log->read(UINT64_MAX - 1)->payload == "b");
  log.reset();
  auto again = Log::open(t / "log");
  REQUIRE(again.is_ok());
  CHECK((*again)->next_sequence() == UINT64_MAX);
  CHECK((*again)->append({"c"}).status().code() == Errc::out_of_bounds);
}

TEST_CASE("a log may start at sequence 18446744073709551615 and then takes no record") {
  TempDir t;
  auto log = open_at(t / "log", UINT64_MAX);
  CHECK(list_dir(t / "log").front() == "18446744073709551615.seg");
  CHECK(log->append({"a"}).status().code() == Errc::out_of_bounds);
}

TEST_CASE("an empty batch on an empty log that starts past 0 is out_of_bounds") {
  TempDir t;
  auto log = open_at(t / "log", 100);
  std::vector<std::string_view> none;
  CHECK(log->append(none).status().code() == Errc::out_of_bounds);
  REQUIRE(log->append({"a", "b"}).is_ok());
  CHECK(*log->append(none) == 101);
  REQUIRE(log->truncate_before(102).is_ok());  // empty again, first sequence 102
  CHECK(log->append(none).status().code() == Errc::out_of_bounds);
}

TEST_CASE("alog append past the last sequence exits 8 with out_of_bounds and appends nothing") {
  TempDir t;
  std::string d = t / "logs";
  auto r = cli::run_alog("--json append --start-sequence 18446744073709551614 " + shq(d), "a\nb\nc\n");
  CHECK(r.exit_code == 8);
  CHECK(r.out.find("\"code\":\"out_of_bounds\"") != std::string::npos);
  // Nothing was appended to the new log, so the failed append removed it.
  CHECK(cli::run_alog("cat " + shq(d)).exit_code == 8);
  CHECK(list_dir(t.path()).empty());
  CHECK(cli::run_alog("append --start-sequence 18446744073709551616 " + shq(t / "other"), "a\n").exit_code == 16);
}
