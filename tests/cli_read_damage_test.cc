// Damage is damage for reading commands: asking cat or seek for a sequence
// that damage made unreadable, but that lies inside the range verify
// reports, exits 4 with verify's problem, never 8 with out_of_bounds.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "cli_util.h"
#include "damaged_log.h"

using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

TEST_CASE("seek and cat past a missing middle segment exit 4 with verify's sequence_gap problem") {
  TempDir t;
  std::string d = t / "log";
  copy_tree(base_log(), d);
  std::filesystem::remove(seg(d, 80));
  const std::string line = "alog: " + seg(d, 120) + ":0: corruption: sequence_gap: ";
  RunResult s = run_alog("seek " + shq(d) + " 130");
  CHECK(s.exit_code == 4);
  CHECK(s.err.rfind(line, 0) == 0);
  RunResult c = run_alog("--json cat --from 120 " + shq(d));
  CHECK(c.exit_code == 4);
  json p = json::parse(c.out);
  CHECK(p["type"] == "problem");
  CHECK(p["kind"] == "sequence_gap");
  CHECK(p["file"] == "00000000000000000120.seg");
  CHECK(c.err.rfind(line, 0) == 0);
}

TEST_CASE("cat of a log with an unreadable middle header prints the records before it, then the problem") {
  TempDir t;
  std::string d = t / "log";
  copy_tree(base_log(), d);
  write_at(seg(d, 80), 0, "XXXXXXXX");
  RunResult c = run_alog("--json cat --payload=none " + shq(d));
  CHECK(c.exit_code == 4);
  CHECK(count_lines(c.out) == 81);
  json p = json::parse(c.out.substr(c.out.rfind('{')));
  CHECK(p["type"] == "problem");
  CHECK(p["kind"] == "segment_header");
  CHECK(c.err.find(":0: corruption: segment_header: ") != std::string::npos);
}

TEST_CASE("seek beyond the range verify reports stays out_of_bounds") {
  TempDir t;
  std::string d = t / "log";
  copy_tree(base_log(), d);
  std::filesystem::remove(seg(d, 80));
  RunResult s = run_alog("seek " + shq(d) + " 200");
  CHECK(s.exit_code == 8);
  CHECK(s.err.find("not in the log") != std::string::npos);
}
