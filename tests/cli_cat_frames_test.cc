// cat checks the checkpoint and EOF frames it steps over: damage in one (of
// a sealed segment, or of the active segment before its synced offset)
// ends the output with verify's problem and exit 4, on every read path:
// the plain scan, the rendered parts of -j, and one job or two alike.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "damaged_log.h"

using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

namespace {

// In the base log every segment has checkpoints at 1072, 1968, 2864 and
// 3760 (after each batch of ten 88-byte frames), and its EOF at 3776.
constexpr uint64_t kCheckpoint = 1968, kLastCheckpoint = 3760, kEof = 3776;

// The base log with `damage` done to a copy of it.
template <class Damage>
std::string damaged(const TempDir& t, Damage&& damage) {
  std::string d = t / "log";
  copy_tree(base_log(), d);
  damage(d);
  return d;
}

// verify's first problem, as the object cat prints ("type" first).
json verify_problem(const std::string& d) {
  RunResult v = run_alog("--json verify " + shq(d));
  REQUIRE(v.exit_code == 4);
  json p = json::parse(v.out)["problems"][0];
  json typed = {{"type", "problem"}};
  typed.update(p);
  return typed;
}

// cat in every way it reads: each exits 4 with verify's problem (the
// object with --json, the corruption line always), and -j 1 and -j 2 print
// the same records.
void check_cat_reports(const std::string& d, uint64_t offset, const std::string& kind) {
  const json want = verify_problem(d);
  CHECK(want["offset"] == offset);
  CHECK(want["kind"] == kind);
  const std::string line =
      "alog: " + d + "/" + want["file"].get<std::string>() + ":" + std::to_string(offset) + ": corruption: " + kind + ": ";
  for (std::string how : {"cat", "cat -j 1", "cat -j 2", "cat --seq", "--json cat", "--json cat -j 2"}) {
    RunResult c = run_alog(how + " " + shq(d));
    INFO(how << ": " << c.err);
    CHECK(c.exit_code == 4);
    CHECK(c.err.find(line) != std::string::npos);
    if (how.rfind("--json", 0) == 0) CHECK(json::parse(c.out.substr(c.out.rfind('{'))) == json(want));
  }
  RunResult one = run_alog("cat -j 1 " + shq(d)), two = run_alog("cat -j 2 " + shq(d));
  CHECK(one.out == two.out);
  CHECK(one.out == run_alog("cat " + shq(d)).out);
}

}  // namespace

TEST_CASE("cat reports a checkpoint of a sealed segment with a reserved byte set, as verify does") {
  TempDir t;
  std::string d = damaged(t, [](const std::string& log) { set_byte(seg(log, 40), kCheckpoint + 7, 0x72); });
  check_cat_reports(d, kCheckpoint, "reserved_bytes");
  // The records before the checkpoint's batch are printed, none after it.
  RunResult c = run_alog("cat --seq " + shq(d));
  CHECK(c.out.find("59\t") != std::string::npos);
  CHECK(c.out.find("60\t") == std::string::npos);
}

TEST_CASE("cat reports a damaged EOF frame of a sealed segment, as verify does") {
  TempDir t;
  std::string d = damaged(t, [](const std::string& log) { flip_bit(seg(log, 40), kEof + 13, 2); });
  check_cat_reports(d, kEof, "frame_crc");
}

TEST_CASE("cat reports the last checkpoint before a sealed EOF with broken flags, as verify does") {
  TempDir t;
  std::string d = damaged(t, [](const std::string& log) { set_byte(seg(log, 80), kLastCheckpoint + 10, 0x80); });
  check_cat_reports(d, kLastCheckpoint, "bad_flags");
}

TEST_CASE("cat reports a damaged checkpoint of the active segment before its synced offset, as verify does") {
  TempDir t;
  std::string d = damaged(t, [](const std::string& log) { flip_bit(seg(log, 160), 1072 + 2, 0); });
  check_cat_reports(d, 1072, "frame_crc");
}
