// The alog commands' main paths, in text and JSON, with their exit statuses
// (man/alog*.1). Every test runs the built binary.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "cli_util.h"

using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

TEST_CASE("append creates a log with alog.json and prints the last sequence") {
  TempDir t;
  std::string d = t / "logs";
  RunResult r = run_alog("append " + shq(d), "alpha\nbeta\ngamma\n");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "2\n");
  CHECK(r.err == "");
  CHECK(read_file(d + "/alog.json") ==
        "{\"schema_version\":1,\"start_sequence\":0,\"max_segment_size\":134217728,"
        "\"max_disk_size\":10737418240,\"max_segments\":0,\"max_payload_size\":16777216,"
        "\"checkpoint_stride\":64}\n");
  r = run_alog("append --json " + shq(d), "delta\n");
  CHECK(r.exit_code == 0);
  CHECK(r.out ==
        "{\"schema_version\":1,\"status\":\"ok\",\"exit_status\":0,\"path\":\"" + d +
            "\",\"created\":false,\"first_seq\":3,\"last_seq\":3,\"records\":1,\"batches\":1,"
            "\"payload_bytes\":5,\"synced\":true,\"next_seq\":4,\"recovered\":null,\"open_repairs\":[]}\n");
}

TEST_CASE("append keeps creation options in alog.json and warns that --start-sequence is ignored later") {
  TempDir t;
  std::string d = t / "logs";
  RunResult r = run_alog("append --start-sequence 1000 --checkpoint-stride 4 " + shq(d), "a\n");
  CHECK(r.out == "1000\n");
  json j = json::parse(read_file(d + "/alog.json"));
  CHECK(j["start_sequence"] == 1000);
  CHECK(j["checkpoint_stride"] == 4);
  r = run_alog("append --start-sequence 5 " + shq(d), "b\n");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "1001\n");
  CHECK(r.err.find("warning: --start-sequence is ignored") != std::string::npos);
}

TEST_CASE("append splits by NUL, by length prefix, and one record per file") {
  TempDir t;
  std::string d = t / "logs";
  CHECK(run_alog("append -0 " + shq(d), std::string("a\0b\nc\0", 6)).out == "1\n");
  CHECK(run_alog("append --len32 " + shq(d), std::string("\0\0\0\2hi\0\0\0\0", 10)).out == "3\n");
  write_file(t / "f1", "one\ntwo\n");
  write_file(t / "f2", "");
  CHECK(run_alog("append --whole " + shq(d) + " " + shq(t / "f1") + " " + shq(t / "f2")).out == "5\n");
  RunResult r = run_alog("cat --json --payload=utf8 " + shq(d));
  CHECK(r.out ==
        "{\"type\":\"record\",\"seq\":0,\"length\":1,\"payload_encoding\":\"utf8\",\"payload\":\"a\"}\n"
        "{\"type\":\"record\",\"seq\":1,\"length\":3,\"payload_encoding\":\"utf8\",\"payload\":\"b\\nc\"}\n"
        "{\"type\":\"record\",\"seq\":2,\"length\":2,\"payload_encoding\":\"utf8\",\"payload\":\"hi\"}\n"
        "{\"type\":\"record\",\"seq\":3,\"length\":0,\"payload_encoding\":\"utf8\",\"payload\":\"\"}\n"
        "{\"type\":\"record\",\"seq\":4,\"length\":8,\"payload_encoding\":\"utf8\",\"payload\":\"one\\ntwo\\n\"}\n"
        "{\"type\":\"record\",\"seq\":5,\"length\":0,\"payload_encoding\":\"utf8\",\"payload\":\"\"}\n");
}

TEST_CASE("append reports a cut length prefix as bad_input at its offset and keeps earlier batches") {
  TempDir t;
  std::string d = t / "logs";
  RunResult r = run_alog("append --batch 1 --len32 " + shq(d), std::string("\0\0\0\1x\0\0\0\5ab", 11));
  CHECK(r.exit_code == 8);
  CHECK(r.out == "");
  CHECK(r.err == "alog: stdin:5: record of 5 bytes cut short: 2 bytes left (appended up to sequence 0)\n");
  CHECK(run_alog("cat " + shq(d)).out == "x\n");
}

TEST_CASE("append over the disk budget fails with disk_full and exit 8") {
  TempDir t;
  std::string d = t / "logs";
  RunResult r = run_alog("append --max-disk-size 300 " + shq(d), std::string(200, 'x') + "\n");
  CHECK(r.exit_code == 8);
  check_one_line_error(r, d);
  CHECK(r.err.find("(nothing appended)") != std::string::npos);
  r = run_alog("--json append --max-disk-size 300 " + shq(d), std::string(200, 'x') + "\n");
  CHECK(r.exit_code == 8);
  CHECK(json::parse(r.out)["error"]["code"] == "disk_full");
}

TEST_CASE("append with an invalid option value is a usage error and creates nothing") {
  TempDir t;
  std::string d = t / "logs";
  RunResult r = run_alog("append --segment-size 100 " + shq(d), "a\n");
  CHECK(r.exit_code == 16);
  CHECK(count_lines(r.err) == 1);
  CHECK_FALSE(file_exists(d));
  CHECK(run_alog("append --segment-size 10KB " + shq(d), "a\n").exit_code == 16);
  CHECK(run_alog("append -0 --len32 " + shq(d), "a\n").exit_code == 16);
  CHECK_FALSE(file_exists(d));
}

TEST_CASE("cat prints the seed records one per line") {
  RunResult r = run_alog("cat " + shq(vector_log("seed-append")));
  CHECK(r.exit_code == 0);
  CHECK(r.out == "alpha\nbeta\ngamma\n");
  CHECK(r.err == "");
  CHECK(run_alog("cat --seq " + shq(vector_log("seed-append"))).out == "0\talpha\n1\tbeta\n2\tgamma\n");
  CHECK(run_alog("cat -0 " + shq(vector_log("seed-append"))).out == std::string("alpha\0beta\0gamma\0", 17));
}

TEST_CASE("cat --json prints NDJSON records with base64 payloads") {
  RunResult r = run_alog("cat --json " + shq(vector_log("seed-append")));
  CHECK(r.exit_code == 0);
  CHECK(r.out ==
        "{\"type\":\"record\",\"seq\":0,\"length\":5,\"payload_encoding\":\"base64\",\"payload\":\"YWxwaGE=\"}\n"
        "{\"type\":\"record\",\"seq\":1,\"length\":4,\"payload_encoding\":\"base64\",\"payload\":\"YmV0YQ==\"}\n"
        "{\"type\":\"record\",\"seq\":2,\"length\":5,\"payload_encoding\":\"base64\",\"payload\":\"Z2FtbWE=\"}\n");
}

TEST_CASE("cat selects records with --from, --to, --count and --last") {
  std::string d = shq(vector_log("start-sequence"));
  RunResult all = run_alog("cat --seq --payload=none " + d);
  REQUIRE(all.exit_code == 0);
  CHECK(all.out.rfind("1000\n1001\n", 0) == 0);
  CHECK(run_alog("cat --seq --payload=none --from 1002 --to 1004 " + d).out == "1002\n1003\n1004\n");
  CHECK(run_alog("cat --seq --payload=none --from 1002 --count 2 " + d).out == "1002\n1003\n");
  std::string tail = run_alog("cat --seq --payload=none --last 2 " + d).out;
  CHECK(count_lines(tail) == 2);
  CHECK(all.out.substr(all.out.size() - tail.size()) == tail);
  CHECK(run_alog("cat --from 5 --to 4 " + d).exit_code == 16);
  CHECK(run_alog("cat --from 5 --last 4 " + d).exit_code == 16);
}

TEST_CASE("cat --from below the first record starts at the first and says which it is") {
  const std::string d = vector_log("start-sequence");
  RunResult r = run_alog("cat --seq --payload=none --from 5 --count 1 " + shq(d));
  CHECK(r.exit_code == 0);
  CHECK(r.out == "1000\n");
  CHECK(r.err == "alog: " + d + ": warning: --from 5: the log's first record is 1000 (those before it were "
                                "removed, or never written); starting there\n");
  CHECK(run_alog("-q cat --from 5 --count 1 " + shq(d)).err == "");
}

TEST_CASE("cat --len32 output appends back into an identical log") {
  TempDir t;
  std::string copy = t / "copy";
  RunResult r = run(alog_cli() + " cat --len32 " + shq(vector_log("multi-segment")) + " | " +
                    alog_cli() + " append --len32 " + shq(copy));
  CHECK(r.exit_code == 0);
  CHECK(run_alog("cat --json " + shq(copy)).out == run_alog("cat --json " + shq(vector_log("multi-segment"))).out);
}

TEST_CASE("cat of a torn tail prints the records before it, warns once and exits 0") {
  std::string d = vector_log("torn-tail");
  RunResult r = run_alog("cat --seq --payload=none " + shq(d));
  CHECK(r.exit_code == 0);
  CHECK(count_lines(r.out) == 169);
  CHECK(r.err == "alog: " + d + "/00000000000000000165.seg:770: warning: torn tail (truncated_header), "
                 "treated as the end of the log\n");
  CHECK(run_alog("-q cat " + shq(d)).err == "");
  RunResult j = run_alog("cat --json " + shq(d));
  std::string last = j.out.substr(j.out.rfind('\n', j.out.size() - 2) + 1);
  json p = json::parse(last);
  CHECK(p["type"] == "problem");
  CHECK(p["classification"] == "torn_tail");
  CHECK(p["cut_at"] == 683);
}

TEST_CASE("cat of corruption in synced data prints what came before, reports it and exits 4") {
  std::string d = vector_log("midlog-corruption");
  RunResult r = run_alog("cat --seq --payload=none " + shq(d));
  CHECK(r.exit_code == 4);
  CHECK(count_lines(r.out) == 165);
  CHECK(r.err == "alog: " + d + "/00000000000000000165.seg:192: corruption: frame_crc: frame crc mismatch in the payload of "
                    "sequence 165 before the synced offset; a later checkpoint confirms the header, so the walk "
                    "goes on\n");
}

TEST_CASE("cat to a full standard output reports a write error and exits 8") {
  RunResult r = run(alog_cli() + " cat " + shq(vector_log("multi-segment")) + " >/dev/full");
  CHECK(r.exit_code == 8);
  CHECK(r.err == "alog: stdout: write error: No space left on device\n");
}

TEST_CASE("cat into a pipe closed early ends quietly") {
  RunResult r = run(alog_cli() + " cat " + shq(vector_log("multi-segment")) + " | head -n 1");
  CHECK(r.exit_code == 0);
  CHECK(count_lines(r.out) == 1);
  CHECK(r.err == "");
}

TEST_CASE("cat of a single segment file prints that segment's records") {
  RunResult r = run_alog("cat --seq --payload=none " + shq(vector_log("multi-segment") + "/00000000000000000165.seg"));
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind("165\n", 0) == 0);
  CHECK(run_alog("cat -f " + shq(vector_log("multi-segment") + "/00000000000000000165.seg")).exit_code == 16);
}

TEST_CASE("cat of a torn segment file ends at the last batch boundary, never inside a batch") {
  // The torn batch holds 169-171; a log reader ends at 168, so must cat SEGMENT.
  std::string seg = vector_log("torn-tail") + "/00000000000000000165.seg";
  RunResult r = run_alog("cat --seq --payload=none " + shq(seg));
  CHECK(r.exit_code == 0);
  CHECK(r.out == "165\n166\n167\n168\n");
  CHECK(r.err == "alog: " + seg + ":770: warning: torn tail: truncated_header (expected 16 header bytes, "
                 "found 5 bytes before end of file); the records end here\n");
  CHECK(run_alog("cat --seq --payload=none --last 2 " + shq(seg)).out == "167\n168\n");
}

TEST_CASE("cat of a segment file with damage before its synced offset prints what came before and exits 4") {
  std::string seg = vector_log("midlog-corruption") + "/00000000000000000165.seg";
  RunResult r = run_alog("cat --seq --payload=none " + shq(seg));
  CHECK(r.exit_code == 4);
  CHECK(r.out == "");
  CHECK(r.err.find(seg + ":192: ") != std::string::npos);
  CHECK(r.err.find("frame_crc") != std::string::npos);
}

TEST_CASE("seek finds a record in text and JSON and reports the frame's CRC") {
  std::string d = shq(vector_log("seed-append"));
  RunResult r = run_alog("seek " + d + " 2");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("00000000000000000000.seg") != std::string::npos);
  RunResult j = run_alog("seek --json --payload=utf8 " + d + " 1");
  CHECK(j.exit_code == 0);
  json o = json::parse(j.out);
  CHECK(o["schema_version"] == 1);
  CHECK(o["status"] == "ok");
  CHECK(o["payload"] == "beta");
  CHECK(o["headers_walked"] == 2);
  RunResult oob = run_alog("seek " + d + " 3");
  CHECK(oob.exit_code == 8);
  check_one_line_error(oob, vector_log("seed-append"));
}

TEST_CASE("verify of a clean log says clean and exits 0") {
  RunResult r = run_alog("verify " + shq(vector_log("multi-segment")));
  CHECK(r.exit_code == 0);
  CHECK(r.out == "verified 9 segments, 174 records (0-173), next 174: clean\n");
  RunResult j = run_alog("verify --json " + shq(vector_log("multi-segment")));
  json o = json::parse(j.out);
  CHECK(o["status"] == "ok");
  CHECK(o["exit_status"] == 0);
  CHECK(o["problems"].empty());
}

TEST_CASE("verify of a torn tail exits 4 with one torn_tail problem") {
  RunResult j = run_alog("verify --json " + shq(vector_log("torn-tail")));
  CHECK(j.exit_code == 4);
  json o = json::parse(j.out);
  CHECK(o["status"] == "damaged");
  REQUIRE(o["problems"].size() == 1);
  CHECK(o["problems"][0]["kind"] == "truncated_header");
  CHECK(o["problems"][0]["offset"] == 770);
  CHECK(o["problems"][0]["cut_at"] == 683);
}

TEST_CASE("a torn tail while a live writer holds the lock is not damage") {
  TempDir t;
  std::string d = copy_vector(t, "torn-tail");
  RunResult r = run("flock " + shq(d + "/LOCK") + " " + alog_cli() + " verify --json " + shq(d));
  CHECK(r.exit_code == 0);
  json o = json::parse(r.out);
  CHECK(o["writer_active"] == true);
  CHECK(o["torn_tail_count"] == 0);
  CHECK(o["corruption_count"] == 0);
  RunResult c = run("flock " + shq(d + "/LOCK") + " " + alog_cli() + " cat " + shq(d));
  CHECK(c.exit_code == 0);
  CHECK(c.err == "");
}

TEST_CASE("mutating commands fail fast with locked while another process holds the lock") {
  TempDir t;
  std::string d = copy_vector(t, "multi-segment");
  write_file(d + "/LOCK", "");  // flock(1) creates it; the snapshot should not see that
  for (std::string cmd : {"append", "recover", "recover -n", "truncate-before -n", "truncate-after -n",
                          "truncate-before", "truncate-after"}) {
    std::string args = cmd + " " + shq(d);
    if (cmd.rfind("truncate", 0) == 0) args += " 5";
    auto before = snapshot_tree(d);
    RunResult r = run("flock " + shq(d + "/LOCK") + " " + alog_cli() + " " + args, "x\n");
    INFO(cmd);
    CHECK(r.exit_code == 8);
    // append's errors say how far it got (man/alog-append.1).
    const std::string got = cmd == "append" ? " (nothing appended)" : "";
    CHECK(r.err == "alog: " + d + "/LOCK: another process holds the lock" + got + "\n");
    CHECK(snapshot_tree(d) == before);
  }
}

TEST_CASE("recover --dry-run of a torn tail exits 1 as the real run will and changes nothing") {
  TempDir t;
  std::string d = copy_vector(t, "torn-tail");
  auto before = snapshot_tree(d);
  RunResult r = run_alog("recover -n " + shq(d));
  CHECK(r.exit_code == 1);
  CHECK(snapshot_tree(d) == before);
  RunResult j = run_alog("recover -n --json " + shq(d));
  json o = json::parse(j.out);
  CHECK(o["dry_run"] == true);
  CHECK(o["applied"] == false);
  CHECK(o["actions"].size() == 1);
  CHECK(snapshot_tree(d) == before);
}

TEST_CASE("recover cuts a torn tail, keeps the bytes in lost+found and exits 1") {
  TempDir t;
  std::string d = copy_vector(t, "torn-tail");
  RunResult r = run_alog("recover --json " + shq(d));
  CHECK(r.exit_code == 1);
  json o = json::parse(r.out);
  CHECK(o["status"] == "repaired");
  CHECK(o["applied"] == true);
  CHECK(file_exists(d + "/lost+found"));
  CHECK(run_alog("verify " + shq(d)).exit_code == 0);
  CHECK(run_alog("recover " + shq(d)).exit_code == 0);
}

TEST_CASE("recover refuses corruption without --force and exits 4 changing nothing") {
  TempDir t;
  std::string d = copy_vector(t, "midlog-corruption");
  write_file(d + "/LOCK", "");  // a real run takes the lock, which creates LOCK
  auto before = snapshot_tree(d);
  RunResult r = run_alog("recover " + shq(d));
  CHECK(r.exit_code == 4);
  CHECK(snapshot_tree(d) == before);
  RunResult f = run_alog("recover --force " + shq(d));
  CHECK((f.exit_code & 1) == 1);
  CHECK(run_alog("verify " + shq(d)).exit_code == 0);
}

TEST_CASE("truncate-before SEQ removes records and reports them") {
  TempDir t;
  std::string d = t / "logs";
  run_alog("append " + shq(d), "a\nb\nc\nd\n");
  RunResult r = run_alog("truncate-before " + shq(d) + " 1");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "removed 1 record (0), 0 segments, 0 bytes freed; log now 1-3, next 4\n");
  r = run_alog("truncate-after " + shq(d) + " 2");
  CHECK(r.out == "removed 1 record (3), 0 segments, 1 byte freed; log now 1-2, next 3\n");
  CHECK(run_alog("cat --seq " + shq(d)).out == "1\tb\n2\tc\n");
  CHECK(run_alog("truncate-before " + shq(d) + " 1").out == "nothing to do; log 1-2, next 3\n");
  RunResult oob = run_alog("truncate-before " + shq(d) + " 9");
  CHECK(oob.exit_code == 8);
  check_one_line_error(oob, d);
}

TEST_CASE("truncate-before --dry-run changes nothing and prints the schema of the real run") {
  TempDir t;
  std::string d = copy_vector(t, "multi-segment");
  auto before = snapshot_tree(d);
  RunResult dry = run_alog("truncate-before -n --json --keep-segments 3 " + shq(d));
  CHECK(dry.exit_code == 0);
  CHECK(snapshot_tree(d) == before);
  json a = json::parse(dry.out);
  CHECK(a["dry_run"] == true);
  RunResult real = run_alog("truncate-before --json --keep-segments 3 " + shq(d));
  json b = json::parse(real.out);
  CHECK(b["dry_run"] == false);
  a.erase("dry_run");
  b.erase("dry_run");
  CHECK(a == b);
  CHECK(b["segments_removed"] == 6);
  CHECK(run_alog("stats --json " + shq(d)).exit_code == 0);
}

TEST_CASE("truncate-before --keep, --keep-bytes, --keep-segments and --older-than cut where retention_plan says") {
  // multi-segment: segments start at 0 33 61 87 107 129 136 149 165 (active), next 174;
  // the last two sealed ones and the active one are 1796 + 1756 + 860 bytes; all were
  // created on 2026-01-01, long before now.
  TempDir t;
  std::string d = copy_vector(t, "multi-segment");
  auto before = snapshot_tree(d);
  auto plan = [&](const std::string& opts) {
    RunResult r = run_alog("--json truncate-before -n " + opts + " " + shq(d));
    CHECK(r.exit_code == 0);
    return json::parse(r.out);
  };
  json k = plan("--keep 10");
  CHECK(k["seq"] == 164);
  CHECK(k["segments_removed"] == 7);
  CHECK(k["records_removed"] == 164);
  CHECK(plan("--keep-bytes 3000")["seq"] == 149);
  CHECK(plan("--keep-bytes 0")["seq"] == 165);  // the active segment stays
  CHECK(plan("--keep-segments 2")["seq"] == 149);
  CHECK(plan("--older-than 1s")["seq"] == 165);
  json none = plan("--older-than 36500d");
  CHECK(none["segments_removed"] == 0);
  CHECK(none["records_removed"] == 0);
  json both = plan("--keep 100 --keep-segments 5");
  CHECK(both["seq"] == 107);  // the strictest wins, and the report says which
  CHECK(both["policy"] == "keep_segments");
  CHECK(both["cuts"] == json{{"keep_records", 74}, {"keep_segments", 107}});
  CHECK(snapshot_tree(d) == before);
  RunResult real = run_alog("truncate-before --keep-bytes 3000 " + shq(d));
  CHECK(real.exit_code == 0);
  CHECK(run_alog("cat --seq --payload=none --count 1 " + shq(d)).out == "149\n");
}

TEST_CASE("truncate-before needs SEQ or a policy, not both") {
  TempDir t;
  std::string d = copy_vector(t, "multi-segment");
  CHECK(run_alog("truncate-before " + shq(d)).exit_code == 16);
  CHECK(run_alog("truncate-before --keep 3 " + shq(d) + " 5").exit_code == 16);
  CHECK(run_alog("truncate-before --older-than 90 " + shq(d)).exit_code == 16);
  CHECK(run_alog("truncate-before --keep-segments 0 " + shq(d)).exit_code == 16);
}

TEST_CASE("truncate-after of an empty log is out_of_bounds") {
  TempDir t;
  std::string d = copy_vector(t, "empty");
  RunResult r = run_alog("--json truncate-after " + shq(d) + " 5");
  CHECK(r.exit_code == 8);
  CHECK(json::parse(r.out)["error"]["code"] == "out_of_bounds");
  check_one_line_error(r, d);
}

TEST_CASE("dump-frames shows the header, both slots and every frame") {
  RunResult r = run_alog("dump-frames " + shq(vector_log("seed-append")));
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("slot A") != std::string::npos);
  CHECK(r.out.find("slot B") != std::string::npos);
  RunResult j = run_alog("dump-frames --json --payload=utf8 " + shq(vector_log("seed-append")));
  std::vector<std::string> types;
  size_t start = 0;
  while (start < j.out.size()) {
    size_t nl = j.out.find('\n', start);
    types.push_back(json::parse(j.out.substr(start, nl - start))["type"]);
    start = nl + 1;
  }
  CHECK(types == std::vector<std::string>{"segment", "slot", "slot", "frame", "frame", "frame", "frame", "checkpoint", "end"});
  CHECK(run_alog("dump-frames " + shq(vector_log("sealed-length-flip"))).exit_code == 4);
}

TEST_CASE("stats prints per-segment rows, totals and histograms") {
  RunResult r = run_alog("stats " + shq(vector_log("multi-segment")));
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("00000000000000000165.seg") != std::string::npos);
  json o = json::parse(run_alog("stats --json " + shq(vector_log("multi-segment"))).out);
  CHECK(o["segments"].size() == 9);
  CHECK(o["totals"]["records"] == 174);
}

TEST_CASE("seek reports a walk that stops before the record as a verify problem, exit 4") {
  std::string d = shq(vector_log("sealed-length-flip"));
  RunResult r = run_alog("seek " + d + " 3");
  CHECK(r.exit_code == 4);
  CHECK(r.out ==
        "record 3: 00000000000000000000.seg (start 0, first 0, next 33)\n"
        "no checkpoint before it; walked 1 header from 192 (seq 0)\n"
        "00000000000000000000.seg:192: corruption: truncated_payload: truncated payload in a sealed "
        "segment (expected payload of 4096 bytes, found 1815 bytes before end of file) [seq 0-32] [cut at 192]\n");
  CHECK(r.err == "");
  json j = json::parse(run_alog("seek --json " + d + " 3").out);
  CHECK(j["frame_offset"].is_null());
  CHECK(j["crc_status"].is_null());
  CHECK(j["problem"]["kind"] == "truncated_payload");
  CHECK(run_alog("seek --payload " + shq(vector_log("seed-append")) + " 1").exit_code == 16);
  CHECK(run_alog("seek --payload=hex " + shq(vector_log("seed-append")) + " 1").out.find(
            "payload hex: 62657461\n") != std::string::npos);
}

TEST_CASE("usage errors exit 16 with one line naming the command") {
  RunResult r = run_alog("cat --bogus x");
  CHECK(r.exit_code == 16);
  CHECK(count_lines(r.err) == 1);
  CHECK(r.err.rfind("alog: cat: ", 0) == 0);
  CHECK(r.err.find("(see alog cat --help)") != std::string::npos);
  CHECK(run_alog("").exit_code == 16);
  CHECK(run_alog("frobnicate").exit_code == 16);
  CHECK(run_alog("--json --format=text verify x").exit_code == 16);
  CHECK(run_alog("seek x -1").exit_code == 16);
  CHECK(run_alog("cat --payload=rot13 x").exit_code == 16);
}

TEST_CASE("--help and --version print to standard output and exit 0") {
  RunResult v = run_alog("--version");
  CHECK(v.exit_code == 0);
  CHECK(v.out == "alog 0.1.0\n");
  RunResult h = run_alog("verify --help");
  CHECK(h.exit_code == 0);
  CHECK(h.out.find("--headers-only") != std::string::npos);
  CHECK(h.err == "");
}
