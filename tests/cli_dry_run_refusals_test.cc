// A dry run refuses exactly what its real run refuses, and a refused real
// run has changed nothing: recover, truncate-before and truncate-after make
// every check of the real run (the lock file, lost+found/, alog.json, hard
// links, permission, a read-only file system) before their first change,
// and the dry run makes the same checks without changing a byte.
#include <doctest/doctest.h>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>

#include "cli_util.h"

using namespace alog::test;
using namespace alog::test::cli;
namespace fs = std::filesystem;

namespace {

// Each writing command on the torn-tail vector (records 0-170, a torn tail
// in its active segment): every one of them has something to do.
const std::vector<std::string> kCommands = {"recover", "truncate-before", "truncate-after"};

std::string args_for(const std::string& c) {
  if (c == "truncate-before") return " 5";
  if (c == "truncate-after") return " 100";
  return "";
}

// Every name under `dir`, links not followed: its kind, link count and, for
// a regular file, its bytes.
std::map<std::string, std::string> tree_state(const std::string& dir) {
  std::map<std::string, std::string> m;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    struct stat st;
    REQUIRE(::lstat(e.path().c_str(), &st) == 0);
    std::string v = std::to_string(st.st_mode & S_IFMT) + " " + std::to_string(st.st_nlink);
    if (S_ISREG(st.st_mode)) v += " " + read_file(e.path().string());
    m[fs::relative(e.path(), dir).string()] = v;
  }
  return m;
}

// The "code" of the JSON error object on standard output, or "".
std::string error_code(const RunResult& r) {
  const std::string key = "\"error\":{\"code\":\"";
  const size_t at = r.out.find(key);
  if (at == std::string::npos) return "";
  const size_t from = at + key.size(), to = r.out.find('"', from);
  return to == std::string::npos ? "" : r.out.substr(from, to - from);
}

// `ALOG --json CMD [-n] DIR ARGS`, killed after 20 s.
RunResult run_cmd(const std::string& c, bool dry, const std::string& dir, const std::string& alog = alog_cli()) {
  return run("timeout -k 5 20 " + alog + " --json " + c + (dry ? " -n " : " ") + shq(dir) +
             args_for(c));
}

// The dry run and the real run of every command exit 8 with error code
// `code`, the real run naming `named`, and neither changes anything in `dir`
// (`alog`: the command that runs the tool).
void both_refuse(const std::string& dir, const std::string& code, const std::string& named,
                 const std::vector<std::string>& cmds = kCommands, const std::string& alog = alog_cli()) {
  for (const auto& c : cmds) {
    const auto before = tree_state(dir);
    RunResult dry = run_cmd(c, true, dir, alog);
    INFO(c << " -n -> " << dry.exit_code << ": " << dry.out << dry.err);
    CHECK(dry.exit_code == 8);
    CHECK(error_code(dry) == code);
    CHECK(tree_state(dir) == before);
    RunResult real = run_cmd(c, false, dir, alog);
    INFO(c << " -> " << real.exit_code << ": " << real.out << real.err);
    CHECK(real.exit_code == 8);
    CHECK(error_code(real) == code);
    CHECK(real.out.find(named) != std::string::npos);
    CHECK(tree_state(dir) == before);
  }
}

std::string segment(const std::string& dir, const std::string& start) { return dir + "/" + start + ".seg"; }

const std::string kActive = "00000000000000000165", kSealed = "00000000000000000000";

}  // namespace

TEST_CASE("a dry run refuses a LOCK that is a symbolic link as the real run does, creating nothing") {
  TempDir t;
  std::string d = copy_vector(t, "torn-tail");
  fs::create_symlink(t / "nologin", d + "/LOCK");
  both_refuse(d, "not_a_log", d + "/LOCK");
  CHECK_FALSE(fs::exists(t / "nologin"));
}

TEST_CASE("a dry run refuses a LOCK that is a FIFO as the real run does") {
  TempDir t;
  std::string d = copy_vector(t, "torn-tail");
  REQUIRE(::mkfifo((d + "/LOCK").c_str(), 0644) == 0);
  both_refuse(d, "not_a_log", d + "/LOCK");
}

TEST_CASE("a dry run refuses a LOCK that is a directory as the real run does") {
  TempDir t;
  std::string d = copy_vector(t, "torn-tail");
  fs::create_directory(d + "/LOCK");
  both_refuse(d, "io", d + "/LOCK");
}

TEST_CASE("a dry run refuses a LOCK with a second hard link as the real run does") {
  TempDir t;
  std::string d = copy_vector(t, "torn-tail");
  write_file(t / "outside", "precious");
  fs::create_hard_link(t / "outside", d + "/LOCK");
  both_refuse(d, "not_a_log", d + "/LOCK");
  CHECK(read_file(t / "outside") == "precious");
}

TEST_CASE("a dry run refuses a lost+found that is a symbolic link as the real run does") {
  TempDir t;
  std::string d = copy_vector(t, "torn-tail");
  fs::create_directory(t / "elsewhere");
  fs::create_symlink(t / "elsewhere", d + "/lost+found");
  write_file(d + "/LOCK", "");  // the real recover takes the lock first
  both_refuse(d, "not_a_log", d + "/lost+found");
  CHECK(fs::is_empty(t / "elsewhere"));
}

TEST_CASE("a dry run refuses a lost+found that is a regular file as the real run does") {
  TempDir t;
  std::string d = copy_vector(t, "torn-tail");
  write_file(d + "/lost+found", "junk");
  write_file(d + "/LOCK", "");  // the real recover takes the lock first
  both_refuse(d, "not_a_log", d + "/lost+found");
}

TEST_CASE("a dry run refuses an alog.json that is a symbolic link, a FIFO or not JSON as the real run does") {
  TempDir t;
  std::string d = copy_vector(t, "torn-tail");
  const std::string cfg = d + "/alog.json";
  write_file(t / "outside.json", "{}");
  fs::create_symlink(t / "outside.json", cfg);
  both_refuse(d, "bad_config", cfg);
  fs::remove(cfg);
  REQUIRE(::mkfifo(cfg.c_str(), 0644) == 0);
  both_refuse(d, "bad_config", cfg);
  fs::remove(cfg);
  write_file(cfg, "{not json");
  both_refuse(d, "bad_config", cfg);
}

TEST_CASE("a dry run refuses a hard-linked active segment as the real run does, and nothing is saved first") {
  TempDir t;
  std::string d = copy_vector(t, "torn-tail");
  fs::create_hard_link(segment(d, kActive), t / "outside.seg");
  write_file(d + "/LOCK", "");  // the real recover takes the lock first
  const std::string before = read_file(t / "outside.seg");
  both_refuse(d, "not_a_log", segment(d, kActive));
  CHECK(read_file(t / "outside.seg") == before);
  CHECK_FALSE(fs::exists(d + "/lost+found"));
}

TEST_CASE("a hard-linked sealed segment refuses recover before the torn tail is cut, and the dry run says so") {
  TempDir t;
  std::string d = copy_vector(t, "torn-tail");
  fs::create_hard_link(segment(d, kSealed), t / "outside.seg");
  write_file(d + "/LOCK", "");  // the real recover takes the lock first
  both_refuse(d, "not_a_log", segment(d, kSealed));
  CHECK(file_size(segment(d, kActive)) == 775);
  CHECK_FALSE(fs::exists(d + "/lost+found"));
  // Without the second name the same log recovers.
  fs::remove(t / "outside.seg");
  CHECK(run_cmd("recover", false, d).exit_code == 1);
}

TEST_CASE("a dry run refuses a read-only file system as the real run does") {
  TempDir t;
  const std::string at = t / "ro";
  fs::create_directory(at);
  if (::geteuid() != 0 || ::mount("tmpfs", at.c_str(), "tmpfs", 0, "size=4m") != 0) {
    MESSAGE("cannot mount a tmpfs here: " << (::geteuid() != 0 ? "not root" : std::strerror(errno)));
    return;
  }
  std::string d = at + "/log";
  copy_tree(vector_log("torn-tail"), d);
  write_file(d + "/LOCK", "");  // so the lock file's own open meets the read-only mount
  const bool ro = ::mount(nullptr, at.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr) == 0;
  if (ro) both_refuse(d, "io", d);
  else MESSAGE("cannot remount read-only: " << std::strerror(errno));
  ::umount2(at.c_str(), MNT_DETACH);
  if (ro) {
    // Without LOCK, the dry run does not create it and refuses as the real run does.
    REQUIRE(::mount("tmpfs", at.c_str(), "tmpfs", 0, "size=4m") == 0);
    copy_tree(vector_log("torn-tail"), d);
    REQUIRE(::mount(nullptr, at.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr) == 0);
    both_refuse(d, "io", d + "/LOCK");
    ::umount2(at.c_str(), MNT_DETACH);
  }
}

TEST_CASE("a dry run as a user who may not write the log refuses as the real run does") {
  const std::string nobody = alog_as_nobody();
  if (nobody.empty()) return;
  TempDir t;
  fs::permissions(t.path(), fs::perms::all);  // nobody may enter t
  std::string d = copy_vector(t, "torn-tail");
  // Readable by everyone: the plan can be made, the log cannot be written.
  fs::permissions(d, fs::perms::all & ~fs::perms::others_write & ~fs::perms::group_write);
  both_refuse(d, "io", d + "/LOCK", kCommands, nobody);
  // With LOCK there and writable, the segments still are not.
  write_file(d + "/LOCK", "");
  fs::permissions(d + "/LOCK", fs::perms::all);
  both_refuse(d, "io", d + "/" + kSealed, kCommands, nobody);
  CHECK(read_file(d + "/LOCK").empty());
}

TEST_CASE("a cut whose walk to its record meets damage is refused by the dry run as by the real run, which removes nothing") {
  // sealed-length-flip: sequence 0's length is flipped in the first of
  // nine sealed segments, so the walk to any record of that segment fails.
  TempDir t;
  const std::string d = copy_vector(t, "sealed-length-flip");
  const auto before = tree_state(d);
  for (const std::string& c : {"truncate-before " + shq(d) + " 3", "truncate-before --keep 171 " + shq(d),
                               "truncate-after " + shq(d) + " 2"}) {
    RunResult dry = run(alog_cli() + " --json " + c + " -n");
    RunResult real = run(alog_cli() + " --json " + c);
    INFO(c << ": " << dry.out << " / " << real.out);
    CHECK(dry.exit_code == 4);
    CHECK(real.exit_code == 4);
    CHECK(error_code(dry) == "corrupt");
    CHECK(dry.out == real.out);
    CHECK(dry.err == real.err);
    CHECK(tree_state(d) == before);
  }
}
