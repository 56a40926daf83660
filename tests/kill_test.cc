// A real process killed with SIGKILL in the middle of its work, then the log
// reopened and checked by the oracle: the child (tests/kill_helper.cc) drives
// a log on the real file system and reports each operation before and after
// it; the parent feeds those reports to the oracle, kills the child, and
// reopens. A kill keeps the page cache, so what the parent reads is final.
//
//  * mid-append: large batches (some taking two pwritev calls), the parent
//    sends SIGKILL right after reading that an append began;
//  * mid-truncate: the child kills itself at the N-th write, fsync, truncate,
//    rename, unlink or directory sync of a workload with both truncations
//    (for a write, after half of its bytes);
//  * mid-recover: after a killed append, a second child reopens the log and
//    kills itself at the N-th call during recovery.
//
// A failure names the run; the slow tier scales the runs with ALOG_TEST_SCALE.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alog/log.h"
#include "support/kill_parent.h"
#include "support/oracle.h"
#include "support/util.h"
#include "support/workload.h"

using namespace alog;
using namespace alog::test;

namespace {

struct Run {
  std::string mode;
  std::vector<std::string> kill_at;  // --kill-at OP N [--mid-write]
  uint64_t kill_after_appends = 0;   // 0: the child kills itself (or finishes)
};

// Runs one child on `dir`, feeding the oracle. Returns what was in flight when
// it died ("" when it finished or died between operations).
std::string run_child(const std::string& dir, uint64_t seed, const Run& r, Feeder& f,
                      bool* killed) {
  std::vector<std::string> args = {ALOG_KILL_HELPER, r.mode, dir, std::to_string(seed)};
  args.insert(args.end(), r.kill_at.begin(), r.kill_at.end());
  KillChild c = spawn_child(args);
  Lines lines(c.fd);
  std::string line;
  uint64_t appends = 0;
  bool sent = false;
  while (lines.next(&line)) {
    f.feed(line);
    if (!sent && r.kill_after_appends && line.rfind("BA ", 0) == 0 && ++appends == r.kill_after_appends) {
      ::kill(c.pid, SIGKILL);  // the append has just begun
      sent = true;
    }
  }
  int status = 0;
  ::waitpid(c.pid, &status, 0);
  *killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  if (!*killed && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
    f.errors.push_back("the child exited with status " + std::to_string(status));
  return f.last_begin;
}

Options reopen_options(uint64_t seed) {
  Options o;
  o.max_segment_size = 4 * kMiB;
  o.max_segments = seed % 3 == 0 ? 3 : 0;
  return o;
}

struct Tally {
  uint64_t runs = 0, killed = 0, mid_append = 0, mid_truncate = 0, mid_recover = 0, violations = 0;
};

void check(const std::string& what, const std::string& dir, uint64_t seed, Oracle& o, Feeder& f,
           Tally& t) {
  Oracle::CheckOptions co;
  co.after_crash = true;
  CheckReport r = o.reopen_and_check(dir, reopen_options(seed), co);
  std::vector<std::string> v = f.errors;
  v.insert(v.end(), r.violations.begin(), r.violations.end());
  v.insert(v.end(), o.live_violations().begin(), o.live_violations().end());
  t.runs++;
  if (!v.empty()) {
    t.violations++;
    std::string s = what + ", seed " + std::to_string(seed) + ":\n";
    for (const auto& x : v) s += "  " + x + "\n";
    FAIL(s);
  }
}

}  // namespace

TEST_CASE("a process killed mid-append, mid-truncate or mid-recover leaves a log the oracle accepts") {
  Tally t;
  const uint64_t n_append = scaled(110), n_truncate = scaled(70), n_recover = scaled(40);
  const char* ops[] = {"write", "sync", "truncate", "rename", "unlink", "sync_dir"};

  for (uint64_t s = 0; s < n_append; s++) {
    TempDir tmp;
    std::string dir = tmp / "log";
    Oracle o(0, reopen_options(s).max_segments);
    Feeder f(o);
    bool killed = false;
    std::string in_flight = run_child(dir, s, {"append", {}, 1 + s % 5}, f, &killed);
    t.killed += killed;
    t.mid_append += killed && in_flight.rfind("BA", 0) == 0;
    check("mid-append kill", dir, s, o, f, t);
  }
  for (uint64_t s = 0; s < n_truncate; s++) {
    TempDir tmp;
    std::string dir = tmp / "log";
    Oracle o(0, reopen_options(s).max_segments);
    Feeder f(o);
    bool killed = false;
    // Mostly at the N-th call of a kind inside the truncations (the renames
    // of whole segments, their directory syncs, the slot, the cut, the EOF);
    // a quarter of the runs count every call of the workload.
    const char* op = ops[s % std::size(ops)];
    const bool inside = s % 4 != 3;
    std::vector<std::string> kill_at = {"--kill-at", op,
                                        std::to_string(inside ? 1 + (s / 6) % 5 : 1 + (s / 6) * 7 % 40)};
    if (inside) kill_at.push_back("--kill-in-truncate");
    if (std::string(op) == "write" && s % 2 == 0) kill_at.push_back("--mid-write");
    std::string in_flight = run_child(dir, s, {"truncate", kill_at, 0}, f, &killed);
    t.killed += killed;
    t.mid_truncate += killed && in_flight.rfind("BT", 0) == 0;
    t.mid_append += killed && in_flight.rfind("BA", 0) == 0;
    check(std::string("self-kill at ") + op + " " + kill_at[2] + (inside ? " inside a truncation" : "") +
              " in the truncate workload",
          dir, s, o, f, t);
  }
  for (uint64_t s = 0; s < n_recover; s++) {
    TempDir tmp;
    std::string dir = tmp / "log";
    Oracle o(0, reopen_options(s).max_segments);
    Feeder f(o);
    bool killed = false;
    // A batch torn by the kill (half of one of its writes on disk) ...
    run_child(dir, s, {"append", {"--kill-at", "write", std::to_string(1 + s % 4), "--mid-write"}, 0}, f,
              &killed);
    // ... then recovery killed at one of its first calls of a kind: the copy
    // of the cut bytes to lost+found/, the cut, the EOF, the slot.
    // (Recovery of a torn tail makes about 4 writes, 4 fsyncs, 1 truncate and
    // 3 directory syncs.)
    const char* rops[] = {"write", "sync", "truncate", "sync_dir"};
    const uint64_t most[] = {4, 4, 1, 3};
    const char* op = rops[s % 4];
    std::vector<std::string> kill_at = {"--kill-at", op, std::to_string(1 + (s / 4) % most[s % 4])};
    if (s % 8 == 0) kill_at.push_back("--mid-write");
    Feeder rf(o, /*ignore=*/true);
    bool rkilled = false;
    run_child(dir, s, {"recover", kill_at, 0}, rf, &rkilled);
    t.killed += killed + rkilled;
    t.mid_recover += rkilled;
    f.errors.insert(f.errors.end(), rf.errors.begin(), rf.errors.end());
    check(std::string("recovery killed at ") + op + " " + kill_at[2] + " after a torn append", dir, s, o,
          f, t);
  }
  MESSAGE(t.runs << " runs, " << t.killed << " kills (" << t.mid_append << " mid-append, "
                 << t.mid_truncate << " mid-truncate, " << t.mid_recover << " mid-recover), "
                 << t.violations << " violations");
  CHECK(t.runs >= 200);
  CHECK(t.violations == 0);
}
