// alog roll and Log::roll (man/alog-roll.1): the active segment sealed now,
// so that retention can remove records that were in it.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "alog/log.h"
#include "alog/writer.h"
#include "cli_util.h"

using namespace alog;
using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

TEST_CASE("roll seals the active segment, and retention can then remove the records that were in it") {
  TempDir t;
  std::string d = t / "log";
  REQUIRE(run_alog("append " + shq(d), "a\nb\nc\n").exit_code == 0);
  // One segment: retention never touches the active one.
  CHECK(run_alog("truncate-before --keep-segments 1 " + shq(d)).out.rfind("nothing to do", 0) == 0);
  RunResult r = run_alog("roll " + shq(d));
  CHECK(r.exit_code == 0);
  CHECK(r.out ==
        "sealed 00000000000000000000.seg (records 0-2); new active segment 00000000000000000003.seg\n");
  r = run_alog("--json truncate-before --keep-segments 1 " + shq(d));
  CHECK(r.exit_code == 0);
  CHECK(json::parse(r.out)["records_removed"] == 3);
  REQUIRE(run_alog("append " + shq(d), "d\n").exit_code == 0);
  CHECK(run_alog("cat --seq " + shq(d)).out == "3\td\n");
  CHECK(run_alog("verify " + shq(d)).exit_code == 0);
}

TEST_CASE("roll of a log whose active segment holds no record does nothing") {
  TempDir t;
  std::string d = t / "log";
  REQUIRE(run_alog("append " + shq(d), "a\n").exit_code == 0);
  REQUIRE(run_alog("roll " + shq(d)).exit_code == 0);
  RunResult r = run_alog("--json roll " + shq(d));
  CHECK(r.exit_code == 0);
  json j = json::parse(r.out);
  CHECK(j["rolled"] == false);
  CHECK(j["sealed"] == nullptr);
  CHECK(j["active"] == "00000000000000000001.seg");
  CHECK(run_alog("roll " + shq(d)).out ==
        "nothing to do: the active segment 00000000000000000001.seg holds no record\n");
}

TEST_CASE("roll of a log of one segment fails with segment_full") {
  TempDir t;
  std::string d = t / "log";
  REQUIRE(run_alog("append --max-segments 1 " + shq(d), "a\n").exit_code == 0);
  RunResult r = run_alog("--json roll " + shq(d));
  CHECK(r.exit_code == 8);
  CHECK(json::parse(r.out)["error"]["code"] == "segment_full");
}

TEST_CASE("roll of a directory that is not a log fails without creating one") {
  TempDir t;
  RunResult r = run_alog("roll " + shq(t / "none"));
  CHECK(r.exit_code == 8);
  CHECK(!file_exists(t / "none"));
}

TEST_CASE("a roll that may not create a segment in DIR fails before it seals anything") {
  const std::string nobody = alog_as_nobody();
  if (nobody.empty()) return;
  TempDir t;
  std::filesystem::permissions(t.path(), std::filesystem::perms::all);  // nobody may enter t
  std::string d = t / "log";
  REQUIRE(run_alog("append " + shq(d), "a\nb\n").exit_code == 0);
  // Its files writable by everyone, the directory not.
  for (const auto& n : list_dir(d))
    if (n != "alog.json") std::filesystem::permissions(d + "/" + n, std::filesystem::perms(0666));
  const auto before = snapshot_tree(d);
  RunResult r = run(nobody + " --json roll " + shq(d));
  CHECK(r.exit_code == 8);
  CHECK(json::parse(r.out)["error"]["code"] == "io");
  check_one_line_error(r, d);
  CHECK(r.err.find("create files in the directory: Permission denied") != std::string::npos);
  CHECK(snapshot_tree(d) == before);
}

TEST_CASE("Log::roll seals the active segment and is busy while a Writer runs") {
  TempDir t;
  auto log = Log::open(t / "log");
  REQUIRE(log.is_ok());
  REQUIRE((*log)->append_one("x").is_ok());
  REQUIRE((*log)->roll().is_ok());
  auto segs = (*log)->segments();
  REQUIRE(segs.size() == 2);
  CHECK(!segs[0].active);
  CHECK(segs[0].synced_offset == segs[0].size - 16);
  CHECK(segs[1].start_sequence == 1);
  CHECK((*log)->roll().is_ok());  // nothing in the new active segment: nothing to seal
  CHECK((*log)->segments().size() == 2);
  Writer w(**log);
  REQUIRE(w.start().is_ok());
  CHECK((*log)->roll().code() == Errc::busy);
  REQUIRE(w.stop().is_ok());
}
