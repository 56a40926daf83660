// verify --jobs N walks segments on N threads (and a long segment on
// several, when there are fewer segments than jobs) and reports exactly what
// one thread does: every problem, range, count and exit status, and so does
// the default (one job per core).
#include <doctest/doctest.h>

#include <filesystem>
#include <functional>

#include "alog/format.h"
#include "cli_util.h"
#include "damaged_log.h"
#include "long_segment.h"

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

TEST_CASE("verify on several threads splits one long segment and reports it exactly as one thread, damaged or not") {
  struct Case {
    const char* what;
    bool fake = false;
    int synced = kLongRecords;
    std::function<void(const std::string&)> damage;
    int exit_code;
    const char* finding;
  };
  const std::vector<Case> cases = {
      {"clean", false, kLongRecords, nullptr, 0, "clean"},
      {"a payload byte in the first half", false, kLongRecords,
       [](const std::string& d) { set_byte(long_segment(d), payload_offset(d, 40000) + 50, 0xff); }, 4,
       "a later checkpoint confirms the header"},
      {"a payload byte in the second half", false, kLongRecords,
       [](const std::string& d) { set_byte(long_segment(d), payload_offset(d, 160000) + 50, 0xff); }, 4,
       "a later checkpoint confirms the header"},
      {"a frame header in the second half", false, kLongRecords,
       [](const std::string& d) { set_byte(long_segment(d), payload_offset(d, 160000) - 6, 0xff); }, 4,
       "invalid frame flags"},
      {"a torn tail after a synced offset in the second half", false, 150000,
       [](const std::string& d) { truncate_file(long_segment(d), file_size(long_segment(d)) - 50); }, 4,
       "torn tail"},
      {"a slot whose synced state disagrees with the walk in the second half", false, 150000,
       [](const std::string& d) {
         std::string h = read_file(long_segment(d)).substr(0, alog::format::kHeaderSize);
         auto c = alog::format::choose_slot(reinterpret_cast<const uint8_t*>(h.data()), 0);
         REQUIRE(c.winner >= 0);
         alog::format::Slot sl = c.slot[c.winner];
         sl.synced_sequence += 1;
         uint8_t b[alog::format::kSlotSize];
         alog::format::encode_slot(sl, b);
         write_at(long_segment(d), alog::format::kFixedSize + alog::format::kSlotSize * uint64_t(c.winner),
                  std::string(reinterpret_cast<const char*>(b), sizeof b));
       },
       4, "disagrees with the slot"},
      {"payloads that look like checkpoints", true, kLongRecords, nullptr, 0, "clean"},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.what));
    TempDir t;
    const std::string d = make_long_log(t, c.fake, c.synced);
    if (c.damage) c.damage(d);
    RunResult one = run_alog("verify -j 1 " + shq(d));
    CHECK(one.exit_code == c.exit_code);
    CHECK(one.out.find(c.finding) != std::string::npos);
    same_for_any_jobs(d);
  }
}
