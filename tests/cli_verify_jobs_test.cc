// verify --jobs N walks segments on N threads and reports exactly what one
// thread does: every problem, range, count and exit status, and so does
// the default (one job per core).
#include <doctest/doctest.h>

#include <filesystem>

#include "cli_util.h"
#include "damaged_log.h"

using namespace alog::test;
using namespace alog::test::cli;

namespace {

void same_for_any_jobs(const std::string& path) {
  CAPTURE(path);
  for (const char* mode : {"", "--headers-only "}) {
    CAPTURE(mode);
    RunResult one = run_alog("--json verify " + std::string(mode) + "-j 1 " + shq(path));
    RunResult text = run_alog("verify " + std::string(mode) + "-j 1 " + shq(path));
    for (const char* jobs : {"2", "3", "0"}) {
      CAPTURE(jobs);
      RunResult many = run_alog("--json verify " + std::string(mode) + "-j " + jobs + " " + shq(path));
      CHECK(many.exit_code == one.exit_code);
      CHECK(many.out == one.out);
      CHECK(many.err == one.err);
      CHECK(run_alog("verify " + std::string(mode) + "-j " + jobs + " " + shq(path)).out == text.out);
    }
    // Without --jobs: one job per core, the same report.
    RunResult dflt = run_alog("--json verify " + std::string(mode) + shq(path));
    CHECK(dflt.exit_code == one.exit_code);
    CHECK(dflt.out == one.out);
    CHECK(dflt.err == one.err);
  }
}

}  // namespace

TEST_CASE("verify on several threads reports every conformance vector exactly as on one") {
  for (const auto& e : std::filesystem::directory_iterator(std::string(ALOG_TESTDATA_DIR) + "/vectors")) {
    if (!std::filesystem::is_directory(e.path() / "log")) continue;
    same_for_any_jobs((e.path() / "log").string());
  }
}

TEST_CASE("verify on several threads reports damage in many segments exactly as on one") {
  TempDir t;
  const std::string d = t / "log";
  copy_tree(base_log(), d);
  set_byte(seg(d, 40), 400, 0x5a);    // a payload byte: confirmed damage, the walk goes on
  set_byte(seg(d, 80), 200, 0xff);    // a frame header: a stop in a sealed segment
  std::filesystem::remove(seg(d, 120));  // a sequence gap
  std::filesystem::resize_file(seg(d, 160), std::filesystem::file_size(seg(d, 160)) - 100);  // a torn tail
  RunResult one = run_alog("verify -j 1 " + shq(d));
  REQUIRE(one.exit_code == 4);
  same_for_any_jobs(d);
}
