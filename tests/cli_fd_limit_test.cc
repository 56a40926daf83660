// alog under a low descriptor limit (ulimit -n): every limit from the
// smallest at which the tool starts at all to one with room to spare. Each
// append either fails with one line naming what it could not open, exit
// status 8, changing nothing, or appends its record; where the limit
// leaves no room for the control socket (its socket or its pipes) the
// append goes on without it and says so. No limit is hard-coded: the
// descriptors this process passes on, and what the sanitizers open, move
// the counts.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "cli_util.h"

using namespace alog::test;
using namespace alog::test::cli;

namespace {

RunResult run_limited(int n, const std::string& args, const std::string& in = {}) {
  return run("ulimit -n " + std::to_string(n) + " && exec " + alog_cli() + " " + args, in);
}

// The smallest limit at which the tool runs at all (the dynamic loader
// needs descriptors of its own); 64 when none below it does.
int smallest_limit() {
  int n = 3;
  while (n < 64 && run_limited(n, "--version").exit_code != 0) n++;
  return n;
}

}  // namespace

TEST_CASE("under any descriptor limit append fails with one line and changes nothing, or appends, without the control socket when it has no room" *
          doctest::skip(ubsan_build())) {
  TempDir t;
  std::string d = t / "log";
  REQUIRE(run_alog("append -q " + shq(d), "r0\n").exit_code == 0);
  const int floor = smallest_limit();
  REQUIRE(floor < 64);
  std::string expect = "r0\n";
  std::set<std::string> without;  // what the warnings said was missing
  int appended = 0, failed = 0;
  RunResult last;
  for (int n = floor; n <= floor + 40; n++) {
    const std::string rec = "r" + std::to_string(n) + "\n";
    last = run_limited(n, "append " + shq(d), rec);
    INFO("ulimit -n " << n << ": exit " << last.exit_code << ", stderr: " << last.err);
    if (last.exit_code == 8) {
      failed++;
      check_one_line_error(last, d);
      CHECK(last.err.find("Too many open files") != std::string::npos);
      continue;
    }
    REQUIRE(last.exit_code == 0);
    appended++;
    expect += rec;
    if (last.err.empty()) continue;
    CHECK(count_lines(last.err) == 1);
    const std::string tail = ": Too many open files; no control socket (maintenance commands wait for the lock)\n";
    REQUIRE(last.err.size() > tail.size());
    CHECK(last.err.compare(last.err.size() - tail.size(), tail.size(), tail) == 0);
    const std::string head = "alog: " + d + "/control.sock: warning: ";
    REQUIRE(last.err.rfind(head, 0) == 0);
    without.insert(last.err.substr(head.size(), last.err.find(':', head.size()) - head.size()));
  }
  CHECK(failed > 0);
  CHECK(without == std::set<std::string>{"pipe", "socket"});
  CHECK(last.exit_code == 0);
  CHECK(last.err.empty());  // room to spare at the end
  CHECK(run_alog("cat " + shq(d)).out == expect);
  CHECK(appended == int(count_lines(expect)) - 1);
  CHECK(run_alog("verify -q " + shq(d)).exit_code == 0);
}

TEST_CASE("under any descriptor limit a read-only command prints what it prints with room, or fails with one line, and changes no byte" *
          doctest::skip(ubsan_build())) {
  TempDir t;
  std::string d = t / "log";
  std::string in;
  for (int i = 0; i < 7000; i++) in += "record " + std::to_string(i) + "\n";
  REQUIRE(run_alog("append -q --segment-size 4KiB " + shq(d), in).exit_code == 0);
  const size_t segments = snapshot_tree(d).size() - 2;  // LOCK and alog.json besides
  // Twice as many segments as a limit of 20 descriptors lets a process open.
  REQUIRE(segments >= 40);
  const int floor = smallest_limit();
  REQUIRE(floor < 20);
  const auto before = snapshot_tree(d);
  for (const std::string args : {"cat", "verify", "stats", "seek", "cat --json --from 7 --to 9"}) {
    const std::string cmd = args == "seek" ? "seek " + shq(d) + " 5000" : args + " " + shq(d);
    const RunResult with_room = run_alog(cmd);
    REQUIRE(with_room.exit_code == 0);
    for (int n = floor; n <= floor + 24; n++) {
      const RunResult r = run_limited(n, cmd);
      INFO(cmd << " under ulimit -n " << n << ": exit " << r.exit_code << ", stderr: " << r.err);
      if (r.exit_code == 0 || n == 20) {
        CHECK(r.exit_code == 0);
        CHECK(r.out == with_room.out);
        CHECK(r.err == with_room.err);
      } else {
        CHECK(r.exit_code == 8);
        check_one_line_error(r, d);
        CHECK(r.err.find("Too many open files") != std::string::npos);
      }
    }
  }
  CHECK(snapshot_tree(d) == before);
}
