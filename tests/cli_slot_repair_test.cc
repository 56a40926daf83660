// One flipped byte in a sealed segment's winning slot, with every record
// still readable: the older slot wins, its synced offset is not the EOF,
// and appends refuse (a sequence gap). recover --force salvages it: in the
// first segment the older slot may predate a truncation, so the operator
// gives the first sequence; every record keeps its sequence, nothing is
// dropped, unless the operator's first sequence leaves some behind.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_util.h"

using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

TEST_CASE("recover --force salvages a sealed segment whose winning slot was damaged, dropping nothing") {
  TempDir t;
  std::string d = copy_vector(t, "multi-segment");
  std::string seg = d + "/00000000000000000000.seg";
  flip_bit(seg, 150, 3);  // inside slot B, the winner (synced 2007); slot A says 1475
  std::string records = run_alog("cat " + shq(vector_log("multi-segment"))).out;
  CHECK(run_alog("append " + shq(d), "x\n").exit_code == 4);  // the sequence gap
  RunResult dry = run_alog("recover " + shq(d));
  CHECK(dry.exit_code == 4);
  RunResult refused = run_alog("recover --force " + shq(d));
  CHECK(refused.exit_code == 4);
  CHECK(refused.out.find("--first-seq") != std::string::npos);
  RunResult r = run_alog("recover --force --first-seq 0 " + shq(d));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("salvage 00000000000000000000.seg: keep 0-32; lost none") != std::string::npos);
  CHECK(r.out.find("done: 0 records and ") != std::string::npos);
  CHECK(r.out.find("log 0-173, next 174") != std::string::npos);
  CHECK(run_alog("verify " + shq(d)).exit_code == 0);
  CHECK(run_alog("cat " + shq(d)).out == records);
  CHECK(run_alog("append " + shq(d), "x\n").exit_code == 0);
  // The rebuilt segment has one fresh slot and slot B zero: no slot keeps the old offset.
  RunResult dump = run_alog("dump-frames " + shq(seg));
  CHECK(dump.out.find("slot A at 64: valid") != std::string::npos);
  CHECK(dump.out.find("synced 1475") == std::string::npos);
}

TEST_CASE("recover --force --first-seq reports the records below the first sequence as dropped and the log from there") {
  TempDir t;
  std::string d = copy_vector(t, "multi-segment");
  std::string seg = d + "/00000000000000000000.seg";
  flip_bit(seg, 70, 0);   // slot A
  flip_bit(seg, 134, 0);  // slot B: no valid slot
  const std::string plan_cmd = "--json recover -n --force --first-seq 5 " + shq(d);
  const json plan = json::parse(run_alog(plan_cmd).out);
  RunResult r = run_alog("--json recover --force --first-seq 5 " + shq(d));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  const json done = json::parse(r.out);
  for (const json* j : {&plan, &done}) {
    CHECK((*j)["first_seq"] == 5);
    CHECK((*j)["last_seq"] == 173);
    CHECK((*j)["records_dropped"] == 5);
    const json& a = (*j)["actions"][0];
    CHECK(a["kept_ranges"] == json::parse(R"([{"first_seq":5,"last_seq":32}])"));
    CHECK(a["first_seq"] == 0);
    CHECK(a["last_seq"] == 4);
  }
  const json after = json::parse(run_alog("--json verify " + shq(d)).out);
  CHECK(after["first_seq"] == 5);
  CHECK(after["records"] == 169);
}
