// Dry runs tell the truth: for every kind of damage and every mutating
// command, the dry run's report equals the real run's (but for "dry_run",
// "applied" and the concrete lost+found/ names), the exit statuses agree,
// and after the real run a reader sees the range the report gave.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>

#include "cli_util.h"
#include "damaged_log.h"

using namespace alog::test;
using namespace alog::test::cli;
using nlohmann::json;

namespace {

// A batch of two records after the active segment's synced offset, cut
// inside its second frame: the slots are put back as they were before it.
void torn_tail(const std::string& d) {
  std::string f = seg(d, 160);
  std::string slots = read_file(f).substr(64, 128);
  REQUIRE(run_alog("append --batch 2 " + shq(d), records(200, 202)).exit_code == 0);
  write_at(f, 64, slots);
  truncate_file(f, file_size(f) - 40);
}

struct Damage {
  const char* name;
  std::function<void(const std::string&)> apply;
};

const std::vector<Damage> kDamage = {
    {"no damage", [](const std::string&) {}},
    {"a missing middle segment", [](const std::string& d) { std::filesystem::remove(seg(d, 80)); }},
    {"an unreadable segment header", [](const std::string& d) { write_at(seg(d, 80), 0, "XXXXXXXX"); }},
    {"a zeroed block in a sealed segment",
     [](const std::string& d) { write_at(seg(d, 80), 1000, std::string(1000, '\0')); }},
    {"a payload bit flip in a sealed segment", [](const std::string& d) { flip_bit(seg(d, 80), 1100, 0); }},
    {"a length byte flip in a sealed segment", [](const std::string& d) { set_byte(seg(d, 80), 280, 0x49); }},
    {"a torn tail", torn_tail},
    {"bytes after a sealed segment's EOF",
     [](const std::string& d) { write_file(seg(d, 40), read_file(seg(d, 40)) + std::string(500, 'g')); }},
    {"bytes after the active segment's EOF",
     [](const std::string& d) { write_file(seg(d, 160), read_file(seg(d, 160)) + std::string(500, 'g')); }},
    {"a misnamed segment",
     [](const std::string& d) { std::filesystem::rename(seg(d, 160), d + "/00000000000000000161.seg"); }},
    {"a leftover .tmp and .del",
     [](const std::string& d) {
       write_file(seg(d, 200) + ".tmp", std::string(300, 't'));
       write_file(seg(d, 0) + ".del", read_file(seg(d, 0)));
     }},
    {"a sequence gap before the active segment", [](const std::string& d) { std::filesystem::remove(seg(d, 120)); }},
    {"synced data missing from a sealed segment",
     [](const std::string& d) { truncate_file(seg(d, 40), file_size(seg(d, 40)) - 500); }},
};

// Each mutating command: the arguments before DIR and after it.
struct Cmd {
  std::string before, after;
};
const std::vector<Cmd> kCommands = {
    {"recover", ""},
    {"recover --force", ""},
    {"truncate-before --keep 10", ""},
    {"truncate-before --keep-bytes 9000", ""},
    {"truncate-before --keep-segments 2", ""},
    {"truncate-before --older-than 1d", ""},
    {"truncate-before", " 50"},
    {"truncate-after", " 50"},
};

// The report without what may differ: dry_run, applied, lost+found/ names.
json comparable(const std::string& out) {
  json j = json::parse(out);
  j.erase("dry_run");
  j.erase("applied");
  std::function<void(json&)> strip = [&](json& v) {
    if (v.is_object()) {
      for (auto& [k, x] : v.items()) {
        if (k == "saved_to" && x.is_string() && x.get<std::string>().rfind("lost+found/", 0) == 0) x = "lost+found/";
        else strip(x);
      }
    } else if (v.is_array()) {
      for (auto& x : v) strip(x);
    }
  };
  strip(j);
  return j;
}

}  // namespace

TEST_CASE("every mutating command's dry run reports what its real run then does, on every kind of damage") {
  for (const Damage& dm : kDamage) {
    for (const Cmd& c : kCommands) {
      INFO(dm.name << ": " << c.before << " DIR" << c.after);
      TempDir t;
      std::string d = t / "log";
      copy_tree(base_log(), d);
      dm.apply(d);
      RunResult dry = run_alog("--json " + c.before + " -n " + shq(d) + c.after);
      RunResult real = run_alog("--json " + c.before + " " + shq(d) + c.after);
      INFO("dry: " << dry.out << dry.err);
      INFO("real: " << real.out << real.err);
      CHECK(dry.exit_code == real.exit_code);
      REQUIRE(!dry.out.empty());
      REQUIRE(!real.out.empty());
      CHECK(comparable(dry.out) == comparable(real.out));
      json r = json::parse(real.out);
      if (real.exit_code >= 4 || r.value("refused", false)) continue;
      // A reader now sees the range the report gave, and every saved piece is there.
      json v = json::parse(run_alog("--json verify " + shq(d)).out);
      CHECK(v["first_seq"] == r["first_seq"]);
      CHECK(v["last_seq"] == r["last_seq"]);
      CHECK(v["next_seq"] == r["next_seq"]);
      for (const auto& a : r.value("actions", json::array()))
        if (a["saved_to"].is_string() && a["action"] != "rename")
          CHECK(file_exists(d + "/" + a["saved_to"].get<std::string>()));
      if (r.contains("recovered") && !r["recovered"].is_null())
        CHECK(file_exists(d + "/" + r["recovered"]["saved_to"].get<std::string>()));
      // No sequence is reused: the next append gets the next sequence the report gave.
      if (v["status"] == "ok") {
        RunResult app = run_alog("append " + shq(d), "after\n");
        CHECK(app.exit_code == 0);
        CHECK(app.out == std::to_string(r["next_seq"].get<uint64_t>()) + "\n");
      }
    }
  }
}

TEST_CASE("recover --force of a deleted middle segment drops no record and moves no sequence") {
  TempDir t;
  std::string d = t / "log";
  copy_tree(base_log(), d);
  std::filesystem::remove(seg(d, 80));
  json r = json::parse(run_alog("--json recover --force " + shq(d)).out);
  CHECK(r["records_dropped"] == 0);  // the gap's 80-119 were gone already; 120-199 stay
  CHECK(r["actions"].back()["action"] == "create_lost");
  CHECK(r["last_seq"] == 199);
  CHECK(r["next_seq"] == 200);
  std::string want;
  for (int i = 0; i < 200; i++)
    if (i < 80 || i >= 120) want += std::to_string(i) + "\n";
  CHECK(run_alog("cat --seq --payload=none " + shq(d)).out == want);
}

TEST_CASE("recover --force of an unreadable segment header keeps its records by its name") {
  TempDir t;
  std::string d = t / "log";
  copy_tree(base_log(), d);
  write_at(seg(d, 80), 0, "XXXXXXXX");
  json r = json::parse(run_alog("--json recover -n --force " + shq(d)).out);
  CHECK(r["records_dropped"] == 0);
  json last = r["actions"].back();
  CHECK(last["file"] == "00000000000000000080.seg");
  CHECK(last["action"] == "salvage");
  CHECK(last["kept_ranges"][0]["first_seq"] == 80);
  CHECK(last["kept_ranges"][0]["last_seq"] == 119);
  CHECK(r["next_seq"] == 200);
}

TEST_CASE("recover saves bytes after the active segment's EOF and says so") {
  TempDir t;
  std::string d = t / "log";
  copy_tree(base_log(), d);
  write_file(seg(d, 160), read_file(seg(d, 160)) + std::string(500, 'g'));
  RunResult r = run_alog("recover " + shq(d));
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("cut 00000000000000000160.seg at 3792: 0 records, 500 bytes, saved to lost+found/") !=
        std::string::npos);
  CHECK(r.out.find("nothing to do") == std::string::npos);
  CHECK(file_size(seg(d, 160)) == 3792);
}

TEST_CASE("recover renames a misnamed segment, exits 1 and names the new name in text and JSON") {
  TempDir t;
  std::string d = t / "log";
  copy_tree(base_log(), d);
  std::filesystem::rename(seg(d, 160), d + "/00000000000000000161.seg");
  RunResult dry = run_alog("recover -n " + shq(d));
  CHECK(dry.exit_code == 1);
  CHECK(dry.out.find("would rename 00000000000000000161.seg to 00000000000000000160.seg\n") != std::string::npos);
  json j = json::parse(run_alog("--json recover " + shq(d)).out);
  CHECK(j["exit_status"] == 1);
  CHECK(j["actions"][0]["saved_to"] == "00000000000000000160.seg");
  CHECK(file_exists(seg(d, 160)));
}

TEST_CASE("append and truncate-before that cut a torn tail on open report it once, in text and in JSON") {
  TempDir t;
  std::string d = t / "log";
  copy_tree(base_log(), d);
  torn_tail(d);
  std::string d2 = t / "log2";
  copy_tree(d, d2);
  RunResult a = run_alog("--json append " + shq(d), "x\n");
  CHECK(a.exit_code == 0);
  json j = json::parse(a.out);
  CHECK(j["recovered"]["file"] == "00000000000000000160.seg");
  CHECK(j["recovered"]["offset"] == 3776);
  CHECK(j["recovered"]["records"] == 1);
  std::string saved = j["recovered"]["saved_to"].get<std::string>();
  CHECK(saved.rfind("lost+found/00000000000000000160.seg@3776.", 0) == 0);
  CHECK(file_exists(d + "/" + saved));
  CHECK(count_lines(a.err) == 1);
  CHECK(a.err.find("warning: opening cut torn tail: truncated payload: 1 record and ") != std::string::npos);
  CHECK(a.err.find(saved) != std::string::npos);
  RunResult tb = run_alog("truncate-before " + shq(d2) + " 10");
  CHECK(tb.exit_code == 0);
  CHECK(count_lines(tb.err) == 1);
  CHECK(tb.err.find(".bin\n") != std::string::npos);
}

TEST_CASE("dump-frames decodes a cut piece of lost+found at the offsets and generation its manifest gives") {
  TempDir t;
  std::string d = t / "log";
  copy_tree(base_log(), d);
  torn_tail(d);
  RunResult a = run_alog("--json append " + shq(d), "x\n");
  REQUIRE(a.exit_code == 0);
  const std::string saved = d + "/" + json::parse(a.out)["recovered"]["saved_to"].get<std::string>();
  json manifest = json::parse(read_file(saved.substr(0, saved.size() - 4) + ".json"));
  CHECK(manifest["offset"] == 3776);
  CHECK(manifest["generation"] == 1);
  RunResult dump = run_alog("--json dump-frames " + shq(saved));
  CHECK(dump.exit_code == 0);
  std::vector<json> lines;
  for (size_t at = 0; at < dump.out.size();) {
    size_t nl = dump.out.find('\n', at);
    lines.push_back(json::parse(dump.out.substr(at, nl - at)));
    at = nl + 1;
  }
  REQUIRE(lines.size() >= 3);
  CHECK(lines[0]["type"] == "piece");
  CHECK(lines[0]["source"] == "00000000000000000160.seg");
  CHECK(lines[0]["source_offset"] == 3776);
  CHECK(lines[1]["type"] == "frame");
  CHECK(lines[1]["offset"] == 3776);  // as in the segment it was cut from
  CHECK(lines[1]["region"] == "cut");
  CHECK(lines[1]["status"] == "ok");  // the first record of the torn batch
  CHECK(lines[2]["status"] == "truncated_payload");  // the cut second one
  CHECK(lines.back()["type"] == "end");
  CHECK(lines.back()["failed"] == 1);
  // Text: the same, one line per frame.
  RunResult text = run_alog("dump-frames " + shq(saved));
  CHECK(text.out.rfind("piece ", 0) == 0);
  CHECK(text.out.find("\n3776 data ") != std::string::npos);
}

TEST_CASE("append and truncate-before report the leftovers their open removes and the segments it renames") {
  TempDir t;
  std::string d = t / "log";
  copy_tree(base_log(), d);
  write_file(seg(d, 200) + ".tmp", std::string(300, 't'));
  std::filesystem::rename(seg(d, 160), d + "/00000000000000000161.seg");
  std::string d2 = t / "log2";
  copy_tree(d, d2);
  RunResult a = run_alog("--json append " + shq(d), "x\n");
  CHECK(a.exit_code == 0);
  json j = json::parse(a.out);
  REQUIRE(j["open_repairs"].size() == 2);
  CHECK(j["open_repairs"][0]["action"] == "remove");
  CHECK(j["open_repairs"][0]["file"] == "00000000000000000200.seg.tmp");
  CHECK(j["open_repairs"][1]["action"] == "rename");
  CHECK(j["open_repairs"][1]["file"] == "00000000000000000161.seg");
  CHECK(j["open_repairs"][1]["to"] == "00000000000000000160.seg");
  CHECK(count_lines(a.err) == 2);
  CHECK(a.err.find("200.seg.tmp: warning: opening removed it: ") != std::string::npos);
  CHECK(a.err.find("161.seg: warning: opening renamed it to 00000000000000000160.seg: ") != std::string::npos);
  CHECK(!file_exists(seg(d, 200) + ".tmp"));
  CHECK(file_exists(seg(d, 160)));
  // The dry run says what the real run's open will do, and changes nothing.
  RunResult dry = run_alog("--json truncate-before -n " + shq(d2) + " 10");
  CHECK(dry.exit_code == 0);
  CHECK(json::parse(dry.out)["open_repairs"] == j["open_repairs"]);
  CHECK(dry.err.find("warning: opening for writing would remove it: ") != std::string::npos);
  CHECK(dry.err.find("warning: opening for writing would rename it to 00000000000000000160.seg: ") != std::string::npos);
  CHECK(file_exists(seg(d2, 200) + ".tmp"));
  RunResult tb = run_alog("truncate-before " + shq(d2) + " 10");
  CHECK(tb.exit_code == 0);
  CHECK(count_lines(tb.err) == 2);
  CHECK(!file_exists(seg(d2, 200) + ".tmp"));
}

TEST_CASE("truncate commands refuse a log whose write open would refuse it, dry run or not") {
  TempDir t;
  std::string d = t / "log";
  copy_tree(base_log(), d);
  write_at(seg(d, 80), 0, "XXXXXXXX");
  auto before = snapshot_tree(d);
  for (std::string c : {"truncate-before -n --keep 10 ", "truncate-after -n ", "truncate-before --keep 10 ",
                        "truncate-after "}) {
    RunResult r = run_alog(c + shq(d) + (c.rfind("truncate-after", 0) == 0 ? " 50" : ""));
    INFO(c);
    CHECK(r.exit_code == 4);
    CHECK(r.err.find("00000000000000000080.seg:0: segment header") != std::string::npos);
  }
  CHECK(snapshot_tree(d) == before);
}
