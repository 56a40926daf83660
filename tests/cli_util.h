// Helpers for the CLI tests: running `alog` and checking the one-line error.
#pragma once

#include <doctest/doctest.h>

#include <unistd.h>

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

// The prefix that runs a command as uid and gid 65534 (setpriv, which says
// on standard error why it could not), or "" after a MESSAGE saying why that
// cannot be had here: not root, or uid 65534 cannot run the tool.
inline std::string as_nobody() {
  if (::geteuid() != 0) {
    MESSAGE("not root: cannot run as another user");
    return "";
  }
  const std::string prefix = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  if (RunResult probe = run(prefix + alog_cli() + " --version"); probe.exit_code != 0) {
    MESSAGE("uid 65534 cannot run " << alog_cli() << " here: " << probe.err);
    return "";
  }
  return prefix;
}

}  // namespace alog::test::cli
