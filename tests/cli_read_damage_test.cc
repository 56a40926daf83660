// Damage is damage for reading commands: asking cat or seek for a sequence
// that damage made unreadable, but that lies inside the range verify
// reports, exits 4 with verify's problem, never 8 with out_of_bounds. And
// what is not a log is not damage: a file that is no segment is not_a_log.
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

TEST_CASE("a file that is no segment is not_a_log for every command, a garbled segment corruption") {
  TempDir t;
  std::string text = "root:x:0:0:root:/root:/bin/sh\n";
  for (int i = 0; i < 10; i++) text += text;
  write_file(t / "passwd", text);
  write_file(t / "empty", "");
  write_file(t / "short", "hi\n");  // too short to begin with the magic
  write_file(t / "00000000000000000000.seg", text);
  for (std::string c : {"verify", "stats", "cat", "dump-frames", "seek"}) {
    std::string after = c == "seek" ? " 0" : "";
    for (std::string f : {"passwd", "empty", "short"}) {
      RunResult r = run_alog(c + " " + shq(t / f) + after);
      INFO(c << " " << f << ": " << r.err);
      CHECK(r.exit_code == 8);
      CHECK(r.err == "alog: " + t / f + ": not a segment file (no ALOG magic)\n");
    }
    RunResult s = run_alog(c + " " + shq(t / "00000000000000000000.seg") + after);
    INFO(c << ": " << s.err);
    CHECK(s.exit_code == 4);
  }
  CHECK(run_alog("--json verify " + shq(t / "passwd")).out.find("\"code\":\"not_a_log\"") != std::string::npos);
  // dump-frames decodes what it can before saying so.
  CHECK(run_alog("dump-frames " + shq(t / "passwd")).out.find("header") != std::string::npos);
}

TEST_CASE("cat and seek read a sealed segment whose synced data is missing up to its damage") {
  TempDir t;
  std::string d = t / "log";
  copy_tree(base_log(), d);
  const std::string f = seg(d, 80);
  std::filesystem::resize_file(f, std::filesystem::file_size(f) - 500);  // synced data cut off
  RunResult v = run_alog("--json verify " + shq(d));
  CHECK(v.exit_code == 4);
  const json problem = json::parse(v.out)["problems"][0];
  const uint64_t first_lost = problem["first_seq"].get<uint64_t>();
  REQUIRE(first_lost > 80);
  REQUIRE(first_lost < 120);
  // The records of segment 80 before the damage are read, then the problem.
  RunResult c = run_alog("--json cat --payload=none --from 80 " + shq(d));
  CHECK(c.exit_code == 4);
  CHECK(count_lines(c.out) >= first_lost - 80 + 1);
  CHECK(c.out.find("{\"type\":\"record\",\"seq\":" + std::to_string(first_lost - 1) + ",") != std::string::npos);
  json p = json::parse(c.out.substr(c.out.rfind('{')));
  CHECK(p["type"] == "problem");
  CHECK(p["file"] == "00000000000000000080.seg");
  // A record before the damage is found, and its segment's damage reported (exit 4).
  RunResult before = run_alog("--json seek " + shq(d) + " " + std::to_string(first_lost - 1));
  CHECK(before.exit_code == 4);
  json found = json::parse(before.out);
  CHECK(found["crc_status"] == "ok");
  CHECK(found["problem"]["file"] == "00000000000000000080.seg");
  RunResult s = run_alog("seek " + shq(d) + " 130");
  CHECK(s.exit_code == 4);
  CHECK(s.err.find("00000000000000000080.seg:") != std::string::npos);
}

TEST_CASE("stats counts a torn tail's payloads as it counts its records: up to the cut, as cat reads them") {
  const std::string d = vector_log("torn-tail");
  const json j = json::parse(run_alog("--json stats " + shq(d)).out);
  RunResult c = run_alog("--json cat --payload=none " + shq(d));
  uint64_t records = 0, bytes = 0;
  for (size_t at = 0, nl; (nl = c.out.find('\n', at)) != std::string::npos; at = nl + 1) {
    const json r = json::parse(c.out.substr(at, nl - at));
    if (r.value("type", "record") != "record") continue;
    records++;
    bytes += r["length"].get<uint64_t>();
  }
  CHECK(j["totals"]["records"] == records);
  CHECK(j["totals"]["payload_bytes"] == bytes);
  uint64_t in_histogram = 0;
  for (const json& b : j["payload_size_histogram"]) in_histogram += b["count"].get<uint64_t>();
  CHECK(in_histogram == records);
}

TEST_CASE("dump-frames of a log with a missing middle segment prints verify's sequence_gap problem and exits 4") {
  TempDir t;
  std::string d = t / "log";
  copy_tree(base_log(), d);
  std::filesystem::remove(seg(d, 80));
  RunResult dump = run_alog("--json dump-frames " + shq(d));
  CHECK(dump.exit_code == 4);
  json problem;
  for (size_t at = 0, nl; (nl = dump.out.find('\n', at)) != std::string::npos; at = nl + 1) {
    json j = json::parse(dump.out.substr(at, nl - at));
    if (j["type"] == "problem") problem = j;
  }
  REQUIRE(problem.is_object());
  problem.erase("type");
  const json v = json::parse(run_alog("--json verify " + shq(d)).out);
  REQUIRE(v["problems"].size() == 1);
  CHECK(problem == v["problems"][0]);
}

TEST_CASE("seek and cat into the second of two damages report the damage that holds the sequence, not the first") {
  TempDir t;
  std::string d = t / "log";
  copy_tree(base_log(), d);
  std::filesystem::remove(seg(d, 40));
  write_at(seg(d, 120), 0, "XXXXXXXX");
  RunResult s = run_alog("seek " + shq(d) + " 130");
  CHECK(s.exit_code == 4);
  CHECK(s.err.rfind("alog: " + seg(d, 120) + ":0: corruption: segment_header: ", 0) == 0);
  RunResult c = run_alog("--json cat --from 130 " + shq(d));
  CHECK(c.exit_code == 4);
  json p = json::parse(c.out);
  CHECK(p["kind"] == "segment_header");
  CHECK(p["file"] == "00000000000000000120.seg");
  // Between the readable records and the second damage: the first, which ended them.
  RunResult m = run_alog("seek " + shq(d) + " 100");
  CHECK(m.exit_code == 4);
  CHECK(m.err.rfind("alog: " + seg(d, 80) + ":0: corruption: sequence_gap: ", 0) == 0);
}

TEST_CASE("cat of a damaged segment file on its own ends with verify's problem for that file, as cat of the log does") {
  const std::string f = vector_log("midlog-corruption") + "/00000000000000000165.seg";
  RunResult c = run_alog("--json cat --payload=none " + shq(f));
  CHECK(c.exit_code == 4);
  json p = json::parse(c.out.substr(c.out.rfind('{')));
  json v = json::parse(run_alog("--json verify " + shq(f)).out);
  REQUIRE(v["problems"].size() == 1);
  json want = v["problems"][0];
  want["type"] = "problem";
  CHECK(p == want);
  CHECK(c.err.rfind("alog: " + f + ":192: corruption: frame_crc: ", 0) == 0);
  CHECK(count_lines(c.err) == 1);
}
