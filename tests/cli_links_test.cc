// Hostile directory shapes: symbolic links, hard links, FIFOs and special
// files planted where alog keeps its files. No command may write a byte
// outside the log directory or wait on a FIFO; each refuses with one line
// naming the path (exit 8). Every run is bounded by timeout(1), so a hang
// fails the test instead of stalling it.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "cli_util.h"

using namespace alog::test;
using namespace alog::test::cli;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kReaders = {"cat", "seek", "verify", "dump-frames", "stats"};
const std::vector<std::string> kWriters = {"recover", "recover -n", "truncate-before -n",
                                           "truncate-after -n", "truncate-before", "truncate-after"};

std::string args_for(const std::string& c) {
  if (c == "seek") return " 0";
  if (c.find("truncate-before") != std::string::npos) return " 1";
  if (c.find("truncate-after") != std::string::npos) return " 0";
  return "";
}

// `alog CMD DIR ARGS` killed after 20 s (exit 124 then).
RunResult bounded(const std::string& c, const std::string& dir, const std::string& stdin_data = {}) {
  return run("timeout -k 5 20 " + alog_cli() + " " + c + " " + shq(dir) + args_for(c), stdin_data);
}

std::string first_segment(const std::string& dir) {
  for (const auto& n : list_dir(dir))
    if (n.size() == 24 && n.substr(20) == ".seg") return n;
  return {};
}

std::string last_segment(const std::string& dir) {
  std::string last;
  for (const auto& n : list_dir(dir))
    if (n.size() == 24 && n.substr(20) == ".seg") last = n;
  return last;
}

// Every command in `cmds` on `dir` exits 8 at once with one line naming `named`.
void all_refuse(const std::vector<std::string>& cmds, const std::string& dir, const std::string& named) {
  for (const auto& c : cmds) {
    RunResult r = bounded(c, dir);
    INFO(c << " -> " << r.exit_code << ": " << r.err);
    CHECK(r.exit_code == 8);
    check_one_line_error(r, named);
  }
}

}  // namespace

TEST_CASE("a segment that is a symbolic link is refused by every command and its target never changes") {
  TempDir t;
  std::string d = copy_vector(t, "multi-segment");
  std::string seg = last_segment(d);
  fs::rename(d + "/" + seg, t / "outside.seg");
  fs::create_symlink(t / "outside.seg", d + "/" + seg);
  std::string before = read_file(t / "outside.seg");
  all_refuse(kReaders, d, d + "/" + seg);
  all_refuse(kWriters, d, d + "/" + seg);
  RunResult a = bounded("append", d, "x\n");
  CHECK(a.exit_code == 8);
  check_one_line_error(a, d + "/" + seg);
  CHECK(read_file(t / "outside.seg") == before);
  CHECK(fs::is_symlink(d + "/" + seg));
}

TEST_CASE("a segment with a second hard link outside the log is never written") {
  TempDir t;
  std::string d = copy_vector(t, "multi-segment");
  std::string seg = last_segment(d);
  fs::create_hard_link(d + "/" + seg, t / "outside.seg");
  std::string before = read_file(t / "outside.seg");
  for (const std::string c : {"truncate-after", "append"}) {
    RunResult r = bounded(c, d, "x\n");
    INFO(c << ": " << r.err);
    CHECK(r.exit_code == 8);
    check_one_line_error(r, d + "/" + seg);
    CHECK(r.err.find("hard links") != std::string::npos);
  }
  // recover finds nothing to do in a clean log and opens nothing for writing.
  CHECK(bounded("recover", d).exit_code == 0);
  CHECK(read_file(t / "outside.seg") == before);
  CHECK(bounded("verify", d).exit_code == 0);  // reading it is harmless
}

TEST_CASE("a FIFO named like a segment is refused at once by every command") {
  TempDir t;
  std::string d = copy_vector(t, "multi-segment");
  std::string fifo = d + "/00000000000000009999.seg";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  write_file(d + "/LOCK", "");
  auto before = snapshot_tree(d);
  all_refuse(kReaders, d, fifo);
  all_refuse(kWriters, d, fifo);
  RunResult a = bounded("append", d, "x\n");
  CHECK(a.exit_code == 8);
  check_one_line_error(a, fifo);
  CHECK(a.err.find("FIFO") != std::string::npos);
  CHECK(snapshot_tree(d) == before);
}

TEST_CASE("a FIFO or a link to a device at alog.json fails at once with bad_config") {
  TempDir t;
  std::string d = copy_vector(t, "seed-append");
  std::string cfg = d + "/alog.json";
  REQUIRE(::mkfifo(cfg.c_str(), 0644) == 0);
  for (const std::string c : {"append", "stats", "truncate-after"}) {
    RunResult r = bounded("--json " + c, d, "x\n");
    INFO(c << ": " << r.err);
    CHECK(r.exit_code == 8);
    CHECK(r.out.find("\"code\":\"bad_config\"") != std::string::npos);
    check_one_line_error(r, cfg);
  }
  fs::remove(cfg);
  fs::create_symlink("/dev/zero", cfg);
  RunResult r = bounded("append", d, "x\n");
  CHECK(r.exit_code == 8);
  check_one_line_error(r, cfg);
}

TEST_CASE("an alog.json larger than 1 MiB is refused without reading it") {
  TempDir t;
  std::string d = copy_vector(t, "seed-append");
  write_file(d + "/alog.json", "{" + std::string((1 << 20) + 1, ' ') + "}");
  RunResult r = bounded("append", d, "x\n");
  CHECK(r.exit_code == 8);
  check_one_line_error(r, d + "/alog.json");
  CHECK(r.err.find("larger than") != std::string::npos);
}

TEST_CASE("symbolic links at the next segments' .seg.tmp names are replaced, never written through") {
  TempDir t;
  std::string d = t / "logs";
  REQUIRE(run_alog("append --segment-size 400 " + shq(d), "first\n").exit_code == 0);
  // The names the next rolls will use: one record per segment from sequence 1 on.
  std::vector<std::string> targets;
  for (int s = 1; s <= 6; s++) {
    std::string target = t / ("outside" + std::to_string(s));
    write_file(target, "precious");
    targets.push_back(target);
    char name[32];
    std::snprintf(name, sizeof name, "%020d.seg.tmp", s);
    fs::create_symlink(target, d + "/" + name);
  }
  std::string records;
  for (int i = 0; i < 6; i++) records += std::string(150, char('a' + i)) + "\n";
  RunResult a = bounded("append", d, records);
  INFO(a.err);
  CHECK(a.exit_code == 0);
  for (const auto& target : targets) CHECK(read_file(target) == "precious");
  for (const auto& n : list_dir(d)) CHECK_FALSE(fs::is_symlink(d + "/" + n));
  RunResult v = bounded("verify", d);
  CHECK(v.exit_code == 0);
  CHECK(run_alog("cat " + shq(d)).out == "first\n" + records);
}

TEST_CASE("a symbolic link at alog.json.tmp is not written through when a log is created") {
  TempDir t;
  std::string d = t / "logs";
  fs::create_directory(d);
  write_file(t / "outside", "precious");
  fs::create_symlink(t / "outside", d + "/alog.json.tmp");
  RunResult a = bounded("append", d, "x\n");
  // alog.json.tmp is not one of a log's names: the directory is not a log.
  CHECK(a.exit_code == 8);
  CHECK(read_file(t / "outside") == "precious");
  fs::remove(d + "/alog.json.tmp");
  REQUIRE(bounded("append", d, "x\n").exit_code == 0);
  fs::create_symlink(t / "outside", d + "/alog.json.tmp");
  fs::remove(d + "/alog.json");
  fs::remove_all(d);
  fs::create_directory(d);
  write_file(d + "/alog.json", "{}");
  fs::create_symlink(t / "outside", d + "/alog.json.tmp");
  CHECK(bounded("append", d, "x\n").exit_code == 8);  // still not a log's name
  CHECK(read_file(t / "outside") == "precious");
}

TEST_CASE("a dangling symbolic link at LOCK is refused and its target never created") {
  TempDir t;
  std::string d = copy_vector(t, "seed-append");
  fs::create_symlink(t / "nologin", d + "/LOCK");
  for (const std::string c : {"append", "recover", "truncate-after"}) {
    RunResult r = bounded(c, d, "x\n");
    INFO(c << ": " << r.err);
    CHECK(r.exit_code == 8);
    check_one_line_error(r, d + "/LOCK");
    CHECK_FALSE(fs::exists(t / "nologin"));
  }
}

TEST_CASE("a lost+found that is a symbolic link is refused and nothing is saved through it") {
  TempDir t;
  std::string d = copy_vector(t, "torn-tail");
  fs::create_directory(t / "elsewhere");
  fs::create_symlink(t / "elsewhere", d + "/lost+found");
  write_file(d + "/LOCK", "");
  auto before = snapshot_tree(d);
  RunResult r = bounded("recover", d);
  INFO(r.err);
  CHECK(r.exit_code == 8);
  check_one_line_error(r, d + "/lost+found");
  CHECK(list_dir(t / "elsewhere").empty());
  CHECK(snapshot_tree(d) == before);
  RunResult a = bounded("append", d, "x\n");  // opening would cut the tail too
  CHECK(a.exit_code == 8);
  CHECK(list_dir(t / "elsewhere").empty());
}

TEST_CASE("appending into a directory that is not a log changes nothing there") {
  TempDir t;
  std::string d = t / "notalog";
  fs::create_directory(d);
  write_file(d + "/alog.json", "{\"max_segment_size\": 4096}");
  write_file(d + "/notes.txt", "mine");
  auto before = snapshot_tree(d);
  RunResult a = bounded("append --segment-size 1MiB", d, "x\n");
  CHECK(a.exit_code == 8);
  check_one_line_error(a, d);
  CHECK(snapshot_tree(d) == before);
  CHECK_FALSE(fs::exists(d + "/LOCK"));
}

TEST_CASE("cutting the torn tail of a sparse segment copies no holes to lost+found") {
  TempDir t;
  std::string d = copy_vector(t, "seed-append");
  std::string seg = d + "/" + first_segment(d);
  uint64_t len = file_size(seg);
  for (uint64_t off = len - 16; off < len; off++) set_byte(seg, off, 0xff);  // no EOF: a torn tail
  truncate_file(seg, len + (1ull << 30));  // a 1 GiB hole after it
  RunResult r = bounded("recover", d);
  INFO(r.err << r.out);
  CHECK(r.exit_code == 1);
  std::string bin;
  for (const auto& n : list_dir(d + "/lost+found"))
    if (n.size() > 4 && n.substr(n.size() - 4) == ".bin") bin = d + "/lost+found/" + n;
  REQUIRE(!bin.empty());
  struct stat st;
  REQUIRE(::stat(bin.c_str(), &st) == 0);
  CHECK(uint64_t(st.st_size) == 16 + (1ull << 30));
  CHECK(uint64_t(st.st_blocks) * 512 < (1u << 20));
  CHECK(bounded("verify", d).exit_code == 0);
}

TEST_CASE("files saved in lost+found have names no one can plant in advance") {
  TempDir t;
  std::string d = copy_vector(t, "torn-tail");
  REQUIRE(bounded("recover", d).exit_code == 1);
  auto names = list_dir(d + "/lost+found");
  REQUIRE(names.size() == 2);
  // NAME@OFFSET.MS.RANDOM.bin: 16 hex digits no caller chooses.
  std::string stem = names[0].substr(0, names[0].size() - 4);
  CHECK(names[1] == stem + ".json");
  auto dot = stem.find_last_of('.');
  CHECK(stem.size() - dot - 1 == 16);
}

TEST_CASE("a hard link planted at the next segment's .seg.tmp name is removed, never written, and its other name keeps its bytes") {
  TempDir t;
  std::string d = t / "logs";
  REQUIRE(run_alog("append --segment-size 400 " + shq(d), "first\n").exit_code == 0);
  write_file(t / "outside", "precious");
  fs::create_hard_link(t / "outside", d + "/00000000000000000001.seg.tmp");
  RunResult a = bounded("append", d, std::string(150, 'a') + "\n");
  INFO(a.err);
  CHECK(a.exit_code == 0);
  CHECK(read_file(t / "outside") == "precious");
  CHECK(fs::hard_link_count(t / "outside") == 1);
  CHECK(bounded("verify", d).exit_code == 0);
}

TEST_CASE("a LOCK with a second hard link is refused by every writer and never written") {
  TempDir t;
  std::string d = copy_vector(t, "seed-append");
  write_file(t / "outside", "precious");
  fs::create_hard_link(t / "outside", d + "/LOCK");
  auto before = snapshot_tree(d);
  for (const std::string c : {"append", "recover", "truncate-after"}) {
    RunResult r = bounded(c, d, "x\n");
    INFO(c << ": " << r.err);
    CHECK(r.exit_code == 8);
    check_one_line_error(r, d + "/LOCK");
  }
  CHECK(read_file(t / "outside") == "precious");
  CHECK(snapshot_tree(d) == before);
}
