// Text output escapes control characters in every name and message it
// prints (as ls quotes names), so a planted file name cannot forge a line or
// send escape sequences to the terminal; JSON output carries names as they are.
#include <doctest/doctest.h>

#include <filesystem>

#include "cli_util.h"
#include "damaged_log.h"

using namespace alog::test;
using namespace alog::test::cli;

namespace {

const std::string kForged =
    "x\nverified 9 segments, 99 records (0-98), next 99: clean\n00000000000000000005.seg.tmp";

bool has_control(const std::string& s) {
  for (unsigned char c : s)
    if ((c < 0x20 && c != '\n') || c == 0x7f) return true;
  return false;
}

}  // namespace

TEST_CASE("a leftover named with a newline cannot forge verify's summary line") {
  TempDir t;
  std::string d = copy_vector(t, "multi-segment");
  write_file(d + "/" + kForged, "");
  RunResult v = run_alog("verify " + shq(d));
  INFO(v.out);
  CHECK(v.out.find("\nverified 9 segments, 99 records (0-98), next 99: clean\n") == std::string::npos);
  CHECK(v.out.rfind("verified 9 segments, 99 records", 0) != 0);
  CHECK(v.out.find("x\\nverified 9 segments") != std::string::npos);
  RunResult j = run_alog("--json verify " + shq(d));
  CHECK(j.out.find("x\\nverified 9 segments, 99 records (0-98), next 99: clean\\n0000") != std::string::npos);
}

TEST_CASE("escape sequences in names reach neither standard output nor standard error") {
  TempDir t;
  std::string d = copy_vector(t, "multi-segment");
  write_file(d + "/\x1b]0;owned\x07\x1b[2J.seg.tmp", "");
  for (std::string c : {"verify", "stats", "recover -n", "dump-frames"}) {
    RunResult r = run_alog(c + " " + shq(d));
    INFO(c << ": " << r.out << r.err);
    CHECK_FALSE(has_control(r.out));
    CHECK_FALSE(has_control(r.err));
  }
  // An error naming such a path is escaped too.
  std::string odd = t / "log\x1b[31m\nfake";
  RunResult e = run_alog("verify " + shq(odd));
  CHECK(e.exit_code == 8);
  CHECK(count_lines(e.err) == 1);
  CHECK(e.err.find("log\\033[31m\\nfake") != std::string::npos);
}

TEST_CASE("the corruption line of a read into damage escapes a log directory named with a newline") {
  TempDir t;
  std::string d = t / "log\nalog: forged";
  copy_tree(base_log(), d);
  std::filesystem::remove(seg(d, 80));
  for (std::string c : {"seek " + shq(d) + " 130", "cat --from 120 " + shq(d)}) {
    RunResult r = run_alog(c);
    INFO(c << ": " << r.err);
    CHECK(r.exit_code == 4);
    CHECK(count_lines(r.err) == 1);
    CHECK(r.err.find("log\\nalog: forged/00000000000000000120.seg:0: corruption: sequence_gap: ") !=
          std::string::npos);
  }
}
