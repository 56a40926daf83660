// The sequence range of a verify problem (man/alog-verify.1 "first_seq,
// last_seq" and OUTPUT): the records readers lose, printed as a bracket
// only when some are.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "alog/verify.h"
#include "cli_util.h"
#include "report.h"

using namespace alog;
using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

namespace {

// The segment files of `dir`, in name (sequence) order.
std::vector<std::string> segment_files(const std::string& dir) {
  std::vector<std::string> v;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".seg") v.push_back(e.path().filename());
  std::sort(v.begin(), v.end());
  return v;
}

// The one line of `text` that contains `what` ("" when none does).
std::string line_with(const std::string& text, const std::string& what) {
  size_t at = text.find(what);
  if (at == std::string::npos) return "";
  size_t from = text.rfind('\n', at), to = text.find('\n', at);
  from = from == std::string::npos ? 0 : from + 1;
  return text.substr(from, to - from);
}

json problem_of(const json& report, const std::string& file, const std::string& kind) {
  for (const auto& p : report["problems"])
    if (p["file"] == file && p["kind"] == kind) return p;
  return nullptr;
}

}  // namespace

TEST_CASE("verify gives an unreadable segment header the range up to the next segment's start") {
  TempDir t;
  std::string d = t / "log";
  std::string in;
  for (int i = 0; i < 1000; i++) in += std::to_string(i) + "\n";
  REQUIRE(run_alog("append --segment-size 4KiB --batch 7 " + shq(d), in).exit_code == 0);
  std::vector<std::string> segs = segment_files(d);
  REQUIRE(segs.size() >= 3);
  set_byte(d + "/" + segs[1], 0, '@');  // a bad magic
  RunResult r = run_alog("verify " + shq(d));
  CHECK(r.exit_code == 4);
  const uint64_t a = std::stoull(segs[1]), b = std::stoull(segs[2]) - 1;
  CHECK(line_with(r.out, segs[1] + ":0: corruption: segment_header:")
            .ends_with(" [seq " + std::to_string(a) + "-" + std::to_string(b) + "]"));
  json p = problem_of(json::parse(run_alog("--json verify " + shq(d)).out), segs[1], "segment_header");
  CHECK(p["first_seq"] == a);
  CHECK(p["last_seq"] == b);
}

TEST_CASE("verify gives no range to an unreadable segment header whose successor starts at or before its name's sequence") {
  TempDir t;
  std::string d = t / "log";
  std::string in;
  for (int i = 0; i < 1000; i++) in += std::to_string(i) + "\n";
  REQUIRE(run_alog("append --segment-size 4KiB --batch 7 " + shq(d), in).exit_code == 0);
  std::vector<std::string> segs = segment_files(d);
  REQUIRE(segs.size() >= 3);
  // The active segment moves to a later name; a copy of an older one with a
  // bad magic takes its place: the next segment starts where the name says.
  const std::string active = segs.back(), older = segs[segs.size() - 2];
  std::filesystem::rename(d + "/" + active, d + "/00000000000000005000.seg");
  std::filesystem::copy_file(d + "/" + older, d + "/" + active);
  set_byte(d + "/" + active, 0, '@');
  RunResult r = run_alog("verify " + shq(d));
  CHECK(r.exit_code == 4);
  std::string line = line_with(r.out, active + ":0: corruption: segment_header:");
  REQUIRE(!line.empty());
  CHECK(line.find("[seq") == std::string::npos);
  json p = problem_of(json::parse(run_alog("--json verify " + shq(d)).out), active, "segment_header");
  CHECK(p["first_seq"] == nullptr);
  CHECK(p["last_seq"] == nullptr);
}

TEST_CASE("a problem's text has no sequence bracket for an empty range") {
  Problem p;
  p.file = "00000000000000000952.seg";
  p.offset = 0;
  p.kind = "segment_header";
  p.message = "bad magic";
  p.first_seq = 952;
  p.last_seq = 951;
  CHECK(alog::cli::problem_text(p, "log", false) ==
        "00000000000000000952.seg:0: corruption: segment_header: bad magic");
  p.last_seq = 952;
  CHECK(alog::cli::problem_text(p, "log", false).ends_with(" [seq 952]"));
}
