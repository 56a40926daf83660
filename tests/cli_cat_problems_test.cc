// cat's problem objects are verify's: for the same damage the same values
// (kind, message, first_seq, last_seq, ...), whether cat meets it in a
// frame, in a segment's slots or at a torn tail, and with --salvage too.
// Damaged slots end cat and seek with a problem, never an error object.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "alog/crc32c.h"
#include "alog/format.h"
#include "cli_util.h"
#include "damaged_log.h"

using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

namespace {

// The last line of `out` as JSON.
json last_object(const std::string& out) {
  std::string s = out;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return json::parse(s.substr(s.rfind('\n') + 1));
}

// verify's first problem of the log at d, as cat prints it ("type" first).
json verify_problem(const std::string& d) {
  json v = json::parse(run_alog("--json verify " + shq(d)).out);
  REQUIRE(!v["problems"].empty());
  json typed = {{"type", "problem"}};
  typed.update(v["problems"][0]);
  return typed;
}

}  // namespace

TEST_CASE("cat's problem object equals verify's on every damaged vector") {
  for (std::string v : {"torn-tail", "unsynced-damage", "midlog-corruption", "sealed-length-flip",
                        "salvage-midlog", "salvage-length-flip", "salvage-missing-segment"}) {
    INFO(v);
    const std::string d = vector_log(v);
    RunResult c = run_alog("--json cat --payload=none " + shq(d));
    CHECK(last_object(c.out) == verify_problem(d));
    RunResult j = run_alog("--json cat -j 2 --payload=none " + shq(d));
    CHECK(j.out == c.out);
  }
}

TEST_CASE("cat --salvage prints a torn tail's problem line as plain cat does, and exits 0") {
  const std::string d = vector_log("torn-tail");
  RunResult plain = run_alog("--json cat --payload=none " + shq(d));
  RunResult salvaged = run_alog("--json cat --salvage --payload=none " + shq(d));
  CHECK(plain.exit_code == 0);
  CHECK(salvaged.exit_code == 0);
  CHECK(last_object(salvaged.out) == last_object(plain.out));
  CHECK(salvaged.err.find(": warning: torn tail (truncated_header)") != std::string::npos);
}

TEST_CASE("cat and seek report both slots of the active segment damaged as verify's metadata_slots problem") {
  TempDir t;
  std::string d = t / "log";
  copy_tree(base_log(), d);
  set_byte(seg(d, 160), 70, 0xff);
  set_byte(seg(d, 160), 134, 0xff);
  const std::string line = "alog: " + seg(d, 160) + ":0: corruption: metadata_slots: ";
  RunResult c = run_alog("--json cat --payload=none " + shq(d));
  CHECK(c.exit_code == 4);
  CHECK(count_lines(c.out) == 161);
  CHECK(last_object(c.out) == verify_problem(d));
  CHECK(c.err.rfind(line, 0) == 0);
  for (std::string s : {"170", "300"}) {
    RunResult k = run_alog("--json seek " + shq(d) + " " + s);
    INFO(s << ": " << k.err);
    CHECK(k.exit_code == 4);
    CHECK(last_object(k.out) == verify_problem(d));
    CHECK(k.err.rfind(line, 0) == 0);
  }
}

TEST_CASE("cat and seek report a synced offset past the end of the active segment as verify's synced_offset problem") {
  TempDir t;
  std::string d = t / "log";
  copy_tree(base_log(), d);
  // Slot B (the winner) claims synced data up to 5000, with a valid CRC.
  const std::string f = seg(d, 160);
  std::string slot = read_file(f).substr(alog::format::kSlotBOffset, alog::format::kSlotSize);
  auto* b = reinterpret_cast<uint8_t*>(slot.data());
  alog::format::put64(b + 24, 5000);
  alog::format::put32(b + 60, alog::crc32c(b, 60));
  write_at(f, alog::format::kSlotBOffset, slot);
  RunResult v = run_alog("--json verify " + shq(d));
  REQUIRE(v.exit_code == 4);
  RunResult c = run_alog("--json cat --payload=none " + shq(d));
  CHECK(c.exit_code == 4);
  CHECK(count_lines(c.out) == 201);
  json p = last_object(c.out);
  CHECK(p["type"] == "problem");
  CHECK(p["kind"] == "synced_offset");
  CHECK(p["offset"] == 5000);
  bool verify_has_it = false;
  const json verified = json::parse(v.out);
  for (json q : verified["problems"]) {
    q.erase("type");
    json mine = p;
    mine.erase("type");
    verify_has_it = verify_has_it || q == mine;
  }
  CHECK(verify_has_it);
  CHECK(c.err.find(f + ":5000: corruption: synced_offset: ") != std::string::npos);
  // seek finds the record, and reports its segment's damage: exit 4.
  RunResult k = run_alog("--json seek " + shq(d) + " 199");
  CHECK(k.exit_code == 4);
  json s = json::parse(k.out);
  CHECK(s["crc_status"] == "ok");
  CHECK(s["problem"]["kind"] == "synced_offset");
  RunResult text = run_alog("seek " + shq(d) + " 199");
  CHECK(text.exit_code == 4);
  CHECK(text.out.find("corruption: synced_offset: ") != std::string::npos);
}
