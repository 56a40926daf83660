// Every command against hostile input: a missing directory, an empty one, a
// regular file, an empty or short segment, a huge length field, no
// permission and a full disk. Each must exit with its documented status,
// print one error line naming the path, never crash, and (every command
// but append) leave the directory byte-identical.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "cli_util.h"

using namespace alog::test;
using namespace alog::test::cli;

namespace {

// Each command with the arguments it needs after DIR.
struct Cmd {
  std::string name, args_after;
  bool mutating;
};
const std::vector<Cmd> kCommands = {
    {"cat", "", false},          {"seek", " 0", false},          {"verify", "", false},
    {"dump-frames", "", false},  {"stats", "", false},           {"recover", "", true},
    {"recover -n", "", true},    {"truncate-before", " 1", true}, {"truncate-after", " 0", true},
    {"truncate-before -n", " 1", true}, {"truncate-after -n", " 0", true},
};

RunResult run_cmd(const Cmd& c, const std::string& path, const std::string& alog = alog_cli()) {
  return run(alog + " " + c.name + " " + shq(path) + c.args_after);
}

// Runs every command on `path` (inside `dir`): the exit status is one of
// `allowed`, the error one line naming the path, and nothing changed.
void every_command(const std::string& dir, const std::string& path, std::vector<int> allowed_ro,
                   std::vector<int> allowed_mut) {
  for (const auto& c : kCommands) {
    auto before = snapshot_tree(dir);
    RunResult r = run_cmd(c, path);
    INFO(c.name << " " << path << " -> " << r.exit_code << " " << r.err);
    const auto& allowed = c.mutating ? allowed_mut : allowed_ro;
    CHECK(std::find(allowed.begin(), allowed.end(), r.exit_code) != allowed.end());
    CHECK(r.exit_code < 128);  // no signal, no crash
    if (r.exit_code == 8) check_one_line_error(r, path);
    CHECK(snapshot_tree(dir) == before);
  }
}

}  // namespace

TEST_CASE("every command on a missing directory exits 8 with one line naming it") {
  TempDir t;
  std::string d = t / "missing";
  for (const auto& c : kCommands) {
    RunResult r = run_cmd(c, d);
    INFO(c.name);
    CHECK(r.exit_code == 8);
    check_one_line_error(r, d);
    CHECK_FALSE(file_exists(d));
  }
  RunResult j = run_alog("--json verify " + shq(d));
  CHECK(j.out.find("\"code\":\"not_found\"") != std::string::npos);
}

TEST_CASE("every command but append on an empty directory exits 8 with not_a_log and leaves it empty") {
  TempDir t;
  std::string d = t / "empty";
  std::filesystem::create_directory(d);
  every_command(t.path(), d, {8}, {8});
  CHECK(list_dir(d).empty());
  RunResult j = run_alog("--json cat " + shq(d));
  CHECK(j.out.find("\"code\":\"not_a_log\"") != std::string::npos);
  CHECK(run_alog("append " + shq(d), "a\n").exit_code == 0);  // append creates a log there
}

TEST_CASE("every command on a regular file that is not a segment fails without changing it") {
  TempDir t;
  std::string f = t / "notes.txt";
  write_file(f, std::string(300, 'z'));
  // Read-only commands take it as a segment: damaged header (4) or not a log (8).
  every_command(t.path(), f, {4, 8}, {8});
  RunResult a = run_alog("append " + shq(f), "a\n");
  CHECK(a.exit_code == 8);
  check_one_line_error(a, f);
  CHECK(read_file(f) == std::string(300, 'z'));
}

TEST_CASE("every command on an empty segment file reports damage without changing it") {
  TempDir t;
  std::string d = t / "logs";
  std::filesystem::create_directory(d);
  write_file(d + "/00000000000000000000.seg", "");
  write_file(d + "/LOCK", "");
  every_command(d, d, {4}, {4});
  every_command(d, d + "/00000000000000000000.seg", {4}, {8});
}

TEST_CASE("every command on a segment cut inside its header reports damage without changing it") {
  TempDir t;
  std::string d = copy_vector(t, "seed-append");
  write_file(d + "/LOCK", "");
  truncate_file(d + "/00000000000000000000.seg", 100);
  every_command(d, d, {4}, {4});
}

TEST_CASE("every command on a huge length field reports damage without changing it") {
  TempDir t;
  std::string d = copy_vector(t, "multi-segment");
  write_file(d + "/LOCK", "");
  // The first frame of the first (sealed) segment claims a 4 GiB payload.
  for (int off = 192; off < 196; off++) set_byte(d + "/00000000000000000000.seg", uint64_t(off), 0xff);
  every_command(d, d, {0, 4}, {0, 4});
  RunResult v = run_alog("verify " + shq(d));
  CHECK(v.exit_code == 4);
  CHECK(v.out.find("00000000000000000000.seg:192: corruption") != std::string::npos);
  CHECK(run_alog("dump-frames " + shq(d + "/00000000000000000000.seg")).exit_code == 4);
}

TEST_CASE("every command without permission exits 8 with one line naming the path") {
  const std::string nobody = alog_as_nobody();
  if (nobody.empty()) return;
  TempDir t;
  std::filesystem::permissions(t.path(), std::filesystem::perms::all);  // nobody may enter t
  std::string d = copy_vector(t, "seed-append");
  std::filesystem::permissions(d, std::filesystem::perms::owner_all);  // but not the log
  for (const auto& c : kCommands) {
    auto before = snapshot_tree(d);
    RunResult r = run_cmd(c, d, nobody);
    INFO(c.name << ": " << r.err);
    CHECK(r.exit_code == 8);
    check_one_line_error(r, d);
    CHECK(snapshot_tree(d) == before);
  }
  RunResult a = run(nobody + " append " + shq(d), "a\n");
  CHECK(a.exit_code == 8);
  check_one_line_error(a, d);
}

TEST_CASE("commands writing to a full standard output exit 8 with a write error and change nothing") {
  TempDir t;
  std::string d = copy_vector(t, "multi-segment");
  auto before = snapshot_tree(d);
  for (std::string c : {"cat", "verify", "dump-frames", "stats", "seek", "--json verify"}) {
    std::string args = c + " " + shq(d) + (c == "seek" ? " 3" : "");
    RunResult r = run(alog_cli() + " " + args + " >/dev/full");
    INFO(c);
    CHECK(r.exit_code == 8);
    CHECK(r.err == "alog: stdout: write error: No space left on device\n");
  }
  CHECK(snapshot_tree(d) == before);
  CHECK(run(alog_cli() + " completion bash >/dev/full").exit_code == 8);
}

TEST_CASE("append refuses a record larger than max_payload_size at its offset in the input") {
  TempDir t;
  std::string d = t / "logs";
  RunResult r = run_alog("append --max-payload-size 4 " + shq(d), "ok\ntoolong\n");
  CHECK(r.exit_code == 8);
  CHECK(r.err == "alog: stdin:3: record 2 of 7 bytes is larger than max_payload_size 4 (nothing appended)\n");
  RunResult huge = run_alog("append --len32 " + shq(d), std::string("\xff\xff\xff\xf0", 4));
  CHECK(huge.exit_code == 8);
  CHECK(huge.err.rfind("alog: stdin:0: record 1 of 4294967280 bytes is larger than max_payload_size", 0) == 0);
}

TEST_CASE("append with an unreadable alog.json fails with bad_config and appends nothing") {
  TempDir t;
  std::string d = copy_vector(t, "seed-append");
  write_file(d + "/alog.json", "{not json");
  auto before = snapshot_tree(d);
  RunResult r = run_alog("--json append " + shq(d), "x\n");
  CHECK(r.exit_code == 8);
  CHECK(r.out.find("\"code\":\"bad_config\"") != std::string::npos);
  check_one_line_error(r, d + "/alog.json");
  CHECK(snapshot_tree(d) == before);
}
