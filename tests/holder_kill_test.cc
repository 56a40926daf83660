// A holder killed while it serves a control-socket request (issue 12): a
// crash of the holder mid-request leaves the log as a crash of the command
// alone would. The holder (tests/holder_kill_helper.cc) appends batches,
// then serves one request from the real `alog` client with the shipped
// control service, and kills itself at the N-th call of one kind of file
// operation made inside the request. The parent feeds the holder's reports
// to the oracle, waits for the client's exit, reopens the log and checks:
// the oracle (every record synced before the request kept unless the
// request's own cut removed it, no partial batch, bounds consistent, verify
// clean), the next append (no sequence reused), `alog verify` (exit 0), and
// the client's answer: exit 8 and one line `holder_lost` when the holder
// died, the command's own report when it did not.
//
// Each sweep runs N = 1, 2, ... for each kind of call until the request
// completes without reaching the N-th call. The fast tier sweeps one
// workload per request kind; the slow tier sweeps ALOG_TEST_SCALE of them.
// The pipes are the synchronization: the client starts once the holder
// says it listens, and the parent reads both to their end.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "alog/log.h"
#include "cli_child.h"
#include "cli_util.h"
#include "support/kill_parent.h"
#include "support/oracle.h"
#include "support/util.h"
#include "support/workload.h"

using namespace alog;
using namespace alog::test;
using nlohmann::json;

namespace {

// The kinds of call the killing file system counts (support/kill_fs.h); a
// write also with half of its bytes written before the kill.
struct Kill {
  const char* op;
  bool mid_write;
};
const Kill kKills[] = {{"write", false},  {"write", true},   {"truncate", false}, {"sync", false},
                       {"rename", false}, {"unlink", false}, {"sync_dir", false}};
// More calls of one kind than any request makes: a sweep that reaches it is a bug.
constexpr uint64_t kMostCalls = 200;

Options holder_options(uint64_t seed) {
  Options o;
  o.max_segment_size = 64 * kKiB;
  o.checkpoint_stride = 8;
  o.max_segments = seed % 3 == 0 ? 3 : 0;
  return o;
}

// The request's command line, chosen from what the model holds when the
// holder listens: each one removes records (or seals a segment with records).
std::vector<std::string> request(const std::string& kind, const std::string& dir, const Oracle& o) {
  const uint64_t held = o.next() - o.first();
  REQUIRE(held >= 4);
  if (kind == "truncate-before")
    return {"truncate-before", "--json", dir, "--keep", std::to_string(held / 2)};
  if (kind == "truncate-after")
    return {"truncate-after", "--json", dir, std::to_string(o.first() + held / 3)};
  return {"roll", "--json", dir};
}

// Kills the helper if the test stops early (a failed REQUIRE), so that no
// holder is left waiting for a request.
struct Reaper {
  pid_t pid;
  ~Reaper() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

struct Tally {
  uint64_t runs = 0, killed = 0, completed = 0;
  std::map<std::string, uint64_t> kills_by_op;  // kinds of call the request was killed at
  bool killed_at(const char* op) const { return kills_by_op.count(op) != 0; }
};

// One run: the holder serves `kind` and dies at call `n` of kind `k` inside it
// (or completes). Returns whether it was killed.
bool run_once(const std::string& kind, uint64_t seed, const Kill& k, uint64_t n, Tally& t) {
  const std::string op = std::string(k.op) + (k.mid_write ? " (half written)" : "");
  TempDir tmp;
  const std::string dir = tmp / "log";
  const Options opt = holder_options(seed);
  Oracle o(0, opt.max_segments);
  Feeder f(o);
  const std::string what =
      kind + ", seed " + std::to_string(seed) + ", kill at " + op + " " + std::to_string(n);
  INFO(what);

  std::vector<std::string> args = {
      ALOG_HOLDER_KILL_HELPER, dir, std::to_string(seed), "--kill-at", k.op, std::to_string(n)};
  if (k.mid_write) args.push_back("--mid-write");
  KillChild h = spawn_child(args);
  Reaper reaper{h.pid};
  Lines lines(h.fd);
  std::string line, began;  // began: the request's begin report
  bool listening = false;
  while (!listening && lines.next(&line)) {
    f.feed(line);
    listening = line == "LISTEN";
  }
  REQUIRE_MESSAGE(listening, "the holder never listened");

  cli::Child client(request(kind, dir, o));
  const int exit_code = client.wait_exit();
  const std::string out = client.rest(0), err = client.rest(1);
  while (lines.next(&line)) {
    f.feed(line);
    if (line.rfind("BT", 0) == 0 || line.rfind("BR", 0) == 0) began = line;
  }
  int status = 0;
  REQUIRE(::waitpid(h.pid, &status, 0) == h.pid);
  reaper.pid = -1;
  const bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  t.runs++;

  // The client: the lost holder's error, or the command's own report.
  INFO("client exit " << exit_code << ", stdout: " << out << "stderr: " << err);
  json j = json::parse(out, nullptr, /*allow_exceptions=*/false);
  REQUIRE_MESSAGE(j.is_object(), "the client printed no JSON object");
  if (killed) {
    t.killed++;
    CHECK_MESSAGE(!began.empty(), "the holder died before the request began");
    CHECK_MESSAGE(f.last_begin == began, "the holder died outside the request: " << f.last_begin);
    CHECK(exit_code == 8);
    cli::check_one_line_error(RunResult{exit_code, out, err}, dir);
    CHECK(err.find("went away") != std::string::npos);
    CHECK(j["status"] == "error");
    CHECK(j["error"]["code"] == "holder_lost");
  } else {
    t.completed++;
    const bool exited_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    CHECK_MESSAGE(exited_ok, "holder status " << status);
    CHECK(exit_code == 0);
    CHECK(j["status"] == "ok");
    if (kind == "roll") {
      CHECK(j["rolled"] == true);
    } else {
      // The cut the holder reported to the model is the one the command made.
      REQUIRE(began.size() > 4);
      CHECK(j["seq"] == std::stoull(began.substr(4)));
      CHECK(j["records_removed"].get<uint64_t>() > 0);
    }
  }

  // The log, reopened: the oracle's checks, then the next append and a
  // reopen (no sequence reused, the append durable), then `alog verify`.
  Oracle::CheckOptions co;
  co.after_crash = true;  // a kill keeps the page cache: what is on disk is final
  std::unique_ptr<Log> log;
  CheckReport r = o.reopen_and_check(dir, opt, co, &log);
  std::vector<std::string> v = f.errors;
  v.insert(v.end(), r.violations.begin(), r.violations.end());
  if (log) {
    const uint64_t next = log->next_sequence();
    std::vector<std::string> batch;
    for (uint64_t i = 0; i < 3; i++) batch.push_back(make_payload(next + i, 777, 200));
    auto a = o.append(*log, batch);
    CHECK(a.is_ok());
    if (a.is_ok()) CHECK(*a == next + 2);
    CHECK(o.sync(*log).is_ok());
    CHECK(o.close(*log).is_ok());
    log.reset();
    CheckReport r2 = o.reopen_and_check(dir, opt, co);
    v.insert(v.end(), r2.violations.begin(), r2.violations.end());
  }
  v.insert(v.end(), o.live_violations().begin(), o.live_violations().end());
  std::string text;
  for (const auto& x : v) text += "  " + x + "\n";
  CHECK_MESSAGE(v.empty(), what << ":\n" << text);
  RunResult vr = cli::run_alog("verify " + shq(dir));
  CHECK_MESSAGE(vr.exit_code == 0, what << ": alog verify: " << vr.out << vr.err);
  if (killed) t.kills_by_op[op]++;
  return killed;
}

// For each kind of call, N = 1, 2, ... until the request completes.
Tally sweep(const std::string& kind, uint64_t seed) {
  Tally t;
  for (const Kill& k : kKills) {
    uint64_t n = 1;
    while (run_once(kind, seed, k, n, t))
      REQUIRE_MESSAGE(++n <= kMostCalls, kind << " never completed");
  }
  std::string by_op;
  for (const auto& [op, k] : t.kills_by_op) by_op += " " + op + " " + std::to_string(k);
  MESSAGE(kind << ", seed " << seed << ": " << t.runs << " runs, " << t.killed
               << " killed mid-request (at" << by_op << "), " << t.completed << " completed");
  return t;
}

}  // namespace

// The seeds: SEED % 3 == 0 gives a log of at most 3 segments (a roll
// recycles the oldest), else no limit. The slow tier sweeps more of them.

TEST_CASE(
    "a holder killed mid-request leaves the log as a crash of the request alone would: "
    "truncate-before --keep") {
  for (uint64_t seed = 1; seed < 1 + scaled(1); seed++) {
    Tally t = sweep("truncate-before", seed);
    // It renames whole segments away and syncs the directory, then writes and syncs the slot.
    for (const char* op : {"write", "write (half written)", "sync", "rename", "sync_dir"})
      CHECK(t.killed_at(op));
  }
}

TEST_CASE(
    "a holder killed mid-request leaves the log as a crash of the request alone would: "
    "truncate-after") {
  for (uint64_t seed = 2; seed < 2 + scaled(1); seed++) {
    Tally t = sweep("truncate-after", seed);
    // It removes whole segments, then cuts the active one and writes its EOF.
    for (const char* op :
         {"write", "write (half written)", "sync", "truncate", "rename", "sync_dir"})
      CHECK(t.killed_at(op));
  }
}

TEST_CASE(
    "a holder killed mid-request leaves the log as a crash of the request alone would: roll, one "
    "that recycles and one that creates a segment") {
  for (uint64_t seed = 3; seed < 3 + scaled(2); seed++) {
    Tally t = sweep("roll", seed);
    // It seals (writes and syncs) the active segment, then makes the next one.
    for (const char* op : {"write", "write (half written)", "sync", "rename", "sync_dir"})
      CHECK(t.killed_at(op));
  }
}
