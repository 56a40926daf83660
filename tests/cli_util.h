// Helpers for the CLI tests: running `alog` and checking the one-line error.
#pragma once

#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "support/util.h"

namespace alog::test::cli {

inline std::string vector_log(const std::string& name) {
  return std::string(ALOG_TESTDATA_DIR) + "/vectors/" + name + "/log";
}

// Runs `alog ARGS` (ARGS already shell-quoted where needed).
inline RunResult run_alog(const std::string& args, const std::string& stdin_data = {}) {
  return run(alog_cli() + " " + args, stdin_data);
}

// A fresh copy of a conformance vector's log in `tmp`, returned as its path.
inline std::string copy_vector(const TempDir& tmp, const std::string& name) {
  std::string to = tmp / name;
  copy_tree(vector_log(name), to);
  return to;
}

inline size_t count_lines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// The error is exactly one line "alog: ..." that names `path`.
inline void check_one_line_error(const RunResult& r, const std::string& path) {
  INFO("stderr: " << r.err);
  CHECK(count_lines(r.err) == 1);
  CHECK(r.err.rfind("alog: ", 0) == 0);
  CHECK(r.err.find(path) != std::string::npos);
}

// UBSan's checks test whether memory is readable through a pipe of their
// own, which a process out of descriptors cannot make: they then report
// every object as invalid. Tests that run the tool out of descriptors run
// in the other builds only.
inline bool ubsan_build() { return std::string(ALOG_TEST_SANITIZE).find("undefined") != std::string::npos; }

// The command that runs this build's alog as uid and gid 65534, or "" after
// a MESSAGE saying why that cannot be had here: not root, or uid 65534
// cannot run a copy of the tool. setpriv keeps root's capabilities up to
// its exec, so it would exec a binary nobody cannot reach (a build under a
// 0700 directory, as in CI's fresh clone) and every command would fail
// there as "Permission denied": `env` makes the exec nobody's own, and the
// tool runs from a copy in a directory every user may enter.
inline std::string alog_as_nobody() {
  if (::geteuid() != 0) {
    MESSAGE("not root: cannot run as another user");
    return "";
  }
  static const TempDir shared;
  static const std::string command = [] {
    std::filesystem::permissions(shared.path(), std::filesystem::perms::owner_all |
                                                    std::filesystem::perms::group_read |
                                                    std::filesystem::perms::group_exec |
                                                    std::filesystem::perms::others_read |
                                                    std::filesystem::perms::others_exec);
    const std::string copy = shared / "alog";
    std::filesystem::copy_file(ALOG_CLI_PATH, copy);
    return "setpriv --reuid=65534 --regid=65534 --clear-groups env " + shq(copy);
  }();
  if (RunResult probe = run(command + " --version"); probe.exit_code != 0) {
    MESSAGE("uid 65534 cannot run " << command << " here: " << probe.err);
    return "";
  }
  return command;
}

}  // namespace alog::test::cli
