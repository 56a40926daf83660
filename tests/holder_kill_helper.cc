// alog_holder_kill_helper: the holder of tests/holder_kill_test.cc. It plays
// `alog append` serving its control socket: it opens a log on the real file
// system through the killing file system (support/kill_fs.h), appends batches
// (the last one unsynced), then starts the shipped ControlService
// (cmd/control_service.h) and serves one request from a real `alog` client
// with the shipped serve_request(), as cmd/append.cc does between two batches.
// It reports every operation on stdout (support/kill_protocol.h); the served
// request is reported as the truncation or roll it carries out. With
// --kill-at OP N it dies by SIGKILL at the N-th call of kind OP made while
// serving the request (no call before or after it is counted). After the
// request it appends and syncs once more and closes.
//
//   alog_holder_kill_helper DIR SEED [--kill-at OP N [--mid-write]]
//
// SEED picks the workload and the segment limit (3 when SEED % 3 == 0, so
// that a roll recycles; else none); segments are 64 KiB.
#include <poll.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "alog/log.h"
#include "alog/retention.h"
#include "control_protocol.h"
#include "control_service.h"
#include "support/kill_fs.h"
#include "support/kill_report.h"

using namespace alog;
using namespace alog::test;
namespace cli = alog::cli;

namespace {

int usage() {
  std::fprintf(stderr, "usage: alog_holder_kill_helper DIR SEED [--kill-at OP N [--mid-write]]\n");
  return 2;
}

// The sequence a truncate-before request cuts at, by the library's planner
// that the command uses (a request by SEQ or by --keep / --keep-segments).
uint64_t truncate_before_cut(const Log& log, const cli::Json& args) {
  auto str = [&](const char* k) -> std::optional<uint64_t> {
    if (!args.contains(k) || !args[k].is_string()) return std::nullopt;
    return std::strtoull(args[k].get<std::string>().c_str(), nullptr, 10);
  };
  if (auto seq = str("seq")) return *seq;
  RetentionPolicy p;
  p.keep_records = str("keep");
  p.keep_segments = str("keep_segments");
  return retention_plan(log.segments(), p).cut;
}

// Serves the request: reported as the operation it carries out, with the
// kill counting only inside it.
int serve(Log& log, const std::string& op, const cli::Json& args, const cli::Global& g) {
  const bool dry = args.contains("dry_run") && args["dry_run"] == true;
  std::string end;
  if (dry) {
    end = "";  // changes nothing: nothing for the model
  } else if (op == cli::control::kOpTruncateBefore) {
    say("BTB " + std::to_string(truncate_before_cut(log, args)));
    end = "ETB";
  } else if (op == cli::control::kOpTruncateAfter) {
    say("BTA " + args.value("seq", std::string("0")));
    end = "ETA";
  } else {
    say("BR" + before(log));
    end = "ER";
  }
  g_kill.enter();
  int rc = 1;
  try {
    rc = cli::serve_request(log, op, args, g);
  } catch (...) {
    g_kill.leave();
    if (!end.empty()) say(end + state(log, false));
    throw;
  }
  g_kill.leave();
  if (!end.empty()) say(end + state(log, rc == 0));
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::string dir = argv[1];
  const uint64_t seed = std::strtoull(argv[2], nullptr, 10);
  for (int i = 3; i < argc; i++) {
    if (!std::strcmp(argv[i], "--kill-at") && i + 2 < argc) {
      g_kill.op = argv[++i];
      g_kill.nth = std::strtoull(argv[++i], nullptr, 10);
    } else if (!std::strcmp(argv[i], "--mid-write")) {
      g_kill.mid_write = true;
    } else {
      return usage();
    }
  }
  g_kill.only_inside = true;
  KillFs fs;
  std::mt19937_64 rng(seed);
  Options o;
  o.fs = &fs;
  o.max_segments = seed % 3 == 0 ? 3 : 0;
  o.max_segment_size = 64 * kKiB;
  o.checkpoint_stride = 8;
  std::unique_ptr<Log> opened = reported_open(dir, o);
  if (!opened) return 1;
  Log& log = *opened;
  uint64_t tag = seed * 1000;
  // About 300 KiB in 64 KiB segments (a --keep of half the records removes
  // two whole segments); every third batch synced, the last not.
  for (int op = 0; op < 21; op++) {
    reported_append(log, ++tag, 1 + rng() % 20, 100, 3000);
    if (op % 3 == 1) reported_sync(log);
  }

  cli::Global g;
  std::unique_ptr<cli::ControlService> service = cli::ControlService::start(g, dir);
  if (!service) return 1;  // it said why on stderr
  say("LISTEN");
  while (!service->pending()) {
    struct pollfd p {
      service->wake_fd(), POLLIN, 0
    };
    if (::poll(&p, 1, -1) < 0 && errno != EINTR) {
      std::perror("poll");
      return 1;
    }
  }
  service->serve([&](const std::string& op, const cli::Json& args, const cli::Global& rg) {
    return serve(log, op, args, rg);
  });
  say("SERVED");
  // The holder goes on: the next batch after the request.
  reported_append(log, ++tag, 1 + rng() % 20, 100, 3000);
  reported_sync(log);
  service.reset();
  say("BC");
  bool ok = log.close().is_ok();
  say("EC" + state(log, ok));
  say("DONE");
  return 0;
}
