// recover --force (salvage) and cat --salvage through the CLI: the plan is
// what the run does, a salvaged log reads as cat --salvage read it before,
// and nothing moves a sequence.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_util.h"

using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

namespace {

// The "record" and "lost" lines of cat --json output.
std::string records_only(const std::string& out) {
  std::string keep;
  size_t at = 0;
  while (at < out.size()) {
    size_t nl = out.find('\n', at);
    std::string line = out.substr(at, nl - at);
    at = nl == std::string::npos ? out.size() : nl + 1;
    json j = json::parse(line);
    if (j["type"] == "record" || j["type"] == "lost") keep += line + "\n";
  }
  return keep;
}

}  // namespace

TEST_CASE("cat --salvage reads a damaged log as recover --force leaves it, without changing a byte") {
  for (const char* name : {"salvage-midlog", "salvage-length-flip", "salvage-missing-segment"}) {
    CAPTURE(name);
    TempDir t;
    std::string dir = copy_vector(t, name);
    auto before = snapshot_tree(dir);
    RunResult read = run_alog("--json cat --salvage " + dir);
    CHECK(read.exit_code == 4);  // damage found, left in place
    CHECK(snapshot_tree(dir) == before);
    CHECK(read.out.find("\"type\":\"problem\"") != std::string::npos);
    RunResult plan = run_alog("--json recover -n --force " + dir);
    CHECK(plan.exit_code == 1);  // a dry run exits as the real run will
    CHECK(snapshot_tree(dir) == before);
    RunResult done = run_alog("--json recover --force " + dir);
    CHECK(done.exit_code == 1);
    // The plan's actions are the run's, but for where the original went.
    json p = json::parse(plan.out), d = json::parse(done.out);
    for (auto* j : {&p, &d})
      for (auto& a : (*j)["actions"]) a.erase("saved_to");
    CHECK(p["actions"] == d["actions"]);
    CHECK(p["next_seq"] == d["next_seq"]);
    // The original's manifest says what salvage lost from it, run by run.
    const json report = json::parse(done.out);  // named: a loop over a temporary's part would dangle
    for (const auto& a : report["actions"]) {
      if (a["action"] != "salvage") continue;
      const std::string bin = dir + "/" + a["saved_to"].get<std::string>();
      json m = json::parse(read_file(bin.substr(0, bin.size() - 4) + ".json"));
      CHECK(m["offset"] == 0);
      CHECK(m["source"] == a["file"]);
      REQUIRE(m["lost"].size() == a["lost_ranges"].size());
      for (size_t i = 0; i < m["lost"].size(); i++) {
        CHECK(m["lost"][i]["first_seq"] == a["lost_ranges"][i]["first_seq"]);
        CHECK(m["lost"][i]["last_seq"] == a["lost_ranges"][i]["last_seq"]);
      }
      // And the resumed runs it tried and did not keep, by offset in the original.
      for (const auto& r : m["not_kept"]) {
        CHECK(r["offset"].get<uint64_t>() >= 192);
        CHECK(r["offset"].get<uint64_t>() < r["end_offset"].get<uint64_t>());
        CHECK(r["end_offset"].get<uint64_t>() <= m["length"].get<uint64_t>());
        CHECK(!r["reason"].get<std::string>().empty());
      }
      if (std::string(name) == "salvage-length-flip") CHECK(!m["not_kept"].empty());
    }
    RunResult after = run_alog("--json cat " + dir);
    CHECK(after.exit_code == 0);
    CHECK(records_only(after.out) == records_only(read.out));
    RunResult verify = run_alog("verify " + dir);
    CHECK(verify.exit_code == 0);
    // The next append continues after the highest synced sequence.
    RunResult app = run_alog("append " + dir, "next\n");
    CHECK(app.exit_code == 0);
    CHECK(app.out == std::to_string(d["next_seq"].get<uint64_t>()) + "\n");
  }
}

TEST_CASE("recover without --force refuses corruption and names --force as the salvage") {
  TempDir t;
  std::string dir = copy_vector(t, "salvage-midlog");
  auto before = snapshot_tree(dir);
  RunResult r = run_alog("recover " + dir);
  CHECK(r.exit_code == 4);
  CHECK(r.out.find("use --force to salvage") != std::string::npos);
  auto after = snapshot_tree(dir);
  after.erase("LOCK");  // the real run takes the lock
  CHECK(after == before);
}

TEST_CASE("cat --salvage refuses a segment file, -f and --last as usage errors") {
  TempDir t;
  std::string dir = copy_vector(t, "salvage-midlog");
  CHECK(run_alog("cat --salvage -f " + dir).exit_code == 16);
  CHECK(run_alog("cat --salvage --last 3 " + dir).exit_code == 16);
  CHECK(run_alog("cat --salvage " + dir + "/00000000000000000000.seg").exit_code == 16);
}

TEST_CASE("recover --force refuses with a one-line reason naming the file when salvage cannot go on") {
  TempDir t;
  std::string dir = copy_vector(t, "multi-segment");
  std::string f = dir + "/00000000000000000000.seg";
  std::string b = read_file(f);
  b[20] = char(b[20] ^ 1);  // the first segment's fixed header
  write_file(f, b);
  auto before = snapshot_tree(dir);
  RunResult r = run_alog("recover --force " + dir);
  CHECK(r.exit_code == 4);
  CHECK(r.out.find("refused: salvage cannot go on: ") != std::string::npos);
  CHECK(r.out.find("--first-seq") != std::string::npos);
  auto after = snapshot_tree(dir);
  after.erase("LOCK");
  CHECK(after == before);
  RunResult ok = run_alog("recover --force --first-seq 0 " + dir);
  CHECK(ok.exit_code == 1);
  CHECK(run_alog("verify " + dir).exit_code == 0);
}

TEST_CASE("seek --salvage finds a record where recover --force leaves it, without changing a byte") {
  TempDir t;
  std::string dir = copy_vector(t, "salvage-midlog");  // 165 lost, 0-164 and 166-173 kept
  auto before = snapshot_tree(dir);
  RunResult lost = run_alog("--json seek --salvage " + dir + " 165");
  CHECK(lost.exit_code == 4);  // the damage is there
  json l = json::parse(lost.out);
  CHECK(l["lost"] == true);
  CHECK(l["file"] == "00000000000000000165.seg");
  CHECK(l["salvage"]["rebuilt"] == true);
  CHECK(!l["salvage"]["reason"].get<std::string>().empty());
  CHECK(l["salvage"]["problems"].size() >= 1);
  CHECK(lost.err.find(": corruption: ") != std::string::npos);
  CHECK(run_alog("seek --salvage " + dir + " 165").out.find("record 165 is lost: salvage writes a lost frame (") !=
        std::string::npos);
  RunResult kept = run_alog("--json seek --salvage --payload base64 " + dir + " 166");
  json k = json::parse(kept.out);
  CHECK(k["lost"] == false);
  CHECK(k["crc_status"] == "ok");
  RunResult untouched = run_alog("--json seek --salvage --payload base64 " + dir + " 10");
  json u = json::parse(untouched.out);
  CHECK(u["salvage"]["rebuilt"] == false);
  CHECK(u["crc_status"] == "ok");
  RunResult beyond = run_alog("seek --salvage " + dir + " 174");
  CHECK(beyond.exit_code == 8);
  CHECK(beyond.err.find("not in the salvaged log [0, 173]") != std::string::npos);
  CHECK(snapshot_tree(dir) == before);
  // After the real salvage, seek finds the same records and the same lost one.
  REQUIRE(run_alog("recover --force " + dir).exit_code == 1);
  json l2 = json::parse(run_alog("--json seek " + dir + " 165").out);
  CHECK(l2["lost"] == true);
  json k2 = json::parse(run_alog("--json seek --payload base64 " + dir + " 166").out);
  CHECK(k2["payload"] == k["payload"]);
  json u2 = json::parse(run_alog("--json seek --payload base64 " + dir + " 10").out);
  CHECK(u2["payload"] == u["payload"]);
  CHECK(u2["frame_offset"] == u["frame_offset"]);
}

TEST_CASE("seek --salvage on an undamaged log is the plain lookup, exit 0") {
  TempDir t;
  std::string dir = copy_vector(t, "multi-segment");
  RunResult s = run_alog("--json seek --salvage --payload hex " + dir + " 100");
  RunResult p = run_alog("--json seek --payload hex " + dir + " 100");
  CHECK(s.exit_code == 0);
  json a = json::parse(s.out), b = json::parse(p.out);
  CHECK(a["salvage"]["problems"].empty());
  a.erase("salvage");
  CHECK(a == b);
  CHECK(run_alog("seek --salvage " + dir + "/00000000000000000000.seg 1").exit_code == 16);
}
