// A log of more segments than the process may have open descriptors: every
// command works under `ulimit -n 64` (segments are opened through a bounded
// cache, src/file_cache.h).
#include <doctest/doctest.h>

#include <filesystem>

#include "cli_util.h"

using namespace alog::test;
using namespace alog::test::cli;

namespace {

RunResult limited(const std::string& args, const std::string& in = {}) {
  return run("ulimit -n 64 && exec " + alog_cli() + " " + args, in);
}

}  // namespace

TEST_CASE("every command works on a log of 400 segments under ulimit -n 64") {
  TempDir t;
  const std::string d = t / "log";
  std::string input;
  for (int i = 0; i < 7000; i++) input += "record-" + std::to_string(i) + std::string(200, 'p') + "\n";
  REQUIRE(run_alog("append -q --segment-size 4KiB --no-sync " + shq(d), input).exit_code == 0);
  size_t segments = 0;
  for (const auto& e : std::filesystem::directory_iterator(d))
    segments += e.path().extension() == ".seg";
  REQUIRE(segments >= 400);

  RunResult v = limited("verify " + shq(d));
  INFO(v.err);
  CHECK(v.exit_code == 0);
  CHECK(v.out.find("7000 records (0-6999), next 7000: clean") != std::string::npos);
  RunResult c = limited("cat " + shq(d));
  CHECK(c.exit_code == 0);
  CHECK(count_lines(c.out) == 7000);
  const std::string last = "record-6999" + std::string(200, 'p') + "\n";
  CHECK(c.out.substr(c.out.size() - last.size()) == last);
  CHECK(limited("stats " + shq(d)).exit_code == 0);
  RunResult s = limited("seek --payload utf8 " + shq(d) + " 17");
  CHECK(s.exit_code == 0);
  CHECK(s.out.find("record-17ppp") != std::string::npos);
  CHECK(limited("--json seek " + shq(d) + " 6999").exit_code == 0);
  CHECK(limited("append -q " + shq(d), "one more\n").exit_code == 0);
  RunResult dry = limited("--json truncate-before -n --keep 100 " + shq(d));
  CHECK(dry.exit_code == 0);
  RunResult tb = limited("--json truncate-before --keep 100 " + shq(d));
  CHECK(tb.exit_code == 0);
  CHECK(tb.out.substr(tb.out.find("\"next_seq\"")) == dry.out.substr(dry.out.find("\"next_seq\"")));
  CHECK(limited("truncate-after " + shq(d) + " 6990").exit_code == 0);
  RunResult after = limited("verify " + shq(d));
  CHECK(after.exit_code == 0);
  CHECK(after.out.find("next 6991: clean") != std::string::npos);
}
