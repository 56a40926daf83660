// alog_kill_helper: the child process of tests/kill_test.cc. It drives a real
// log on the real file system and reports every operation on stdout before
// and after it (support/kill_protocol.h), so that the parent can feed the
// oracle; then it dies by SIGKILL: sent by the parent at a moment of its
// choosing, or raised by itself at the N-th call of one kind of file-system
// operation (--kill-at), for a write optionally after half of its bytes.
//
//   alog_kill_helper append|truncate|recover DIR SEED [--kill-at OP N [--mid-write]
//                    [--kill-in-truncate]]
//
// --kill-in-truncate counts only the calls made inside truncate_before and
// truncate_after, so the kill lands in the middle of a truncation.
//
// append:   large batches (some of more than IOV_MAX buffers, so several
//           pwritev calls), every other one synced; 4 MiB segments.
// truncate: small batches, syncs, truncate_before and truncate_after; 64 KiB
//           segments, so truncations remove whole segments.
// recover:  opens the log for writing (recovery) and closes it.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "alog/log.h"
#include "support/kill_fs.h"
#include "support/kill_report.h"

using namespace alog;
using namespace alog::test;

namespace {

int usage() {
  std::fprintf(stderr, "usage: alog_kill_helper append|truncate|recover DIR SEED [--kill-at OP N [--mid-write] [--kill-in-truncate]]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return usage();
  const std::string mode = argv[1], dir = argv[2];
  const uint64_t seed = std::strtoull(argv[3], nullptr, 10);
  for (int i = 4; i < argc; i++) {
    if (!std::strcmp(argv[i], "--kill-at") && i + 2 < argc) {
      g_kill.op = argv[++i];
      g_kill.nth = std::strtoull(argv[++i], nullptr, 10);
    } else if (!std::strcmp(argv[i], "--mid-write")) {
      g_kill.mid_write = true;
    } else if (!std::strcmp(argv[i], "--kill-in-truncate")) {
      g_kill.only_inside = true;
    } else {
      return usage();
    }
  }
  KillFs fs;
  std::mt19937_64 rng(seed);
  Options o;
  o.fs = &fs;
  o.max_segments = seed % 3 == 0 ? 3 : 0;
  if (mode == "append") {
    o.max_segment_size = 4 * kMiB;
  } else if (mode == "truncate") {
    o.max_segment_size = 64 * kKiB;
    o.checkpoint_stride = 8;
  } else if (mode == "recover") {
    o.max_segment_size = 4 * kMiB;
  } else {
    return usage();
  }
  std::unique_ptr<Log> opened = reported_open(dir, o);
  if (!opened) return 1;
  Log& log = *opened;
  if (mode == "recover") {
    say("BC");
    bool ok = log.close().is_ok();
    say("EC" + state(log, ok));
    say("DONE");
    return 0;
  }
  uint64_t tag = seed * 1000;
  for (int op = 0; op < (mode == "append" ? 14 : 60); op++) {
    if (mode == "append") {
      if (rng() % 4 == 0) {
        // More buffers than IOV_MAX (1024): records of at least 2 KiB are
        // written from their own iovec, so the batch takes two pwritev calls.
        reported_append(log, ++tag, 1030 + rng() % 200, 2048, 2300);
      } else {
        reported_append(log, ++tag, 1 + rng() % 4, 32 * kKiB, 600 * kKiB);
      }
      if (op % 2 == 1) reported_sync(log);
      continue;
    }
    uint64_t k = rng() % 100;
    const uint64_t first = log.first_sequence(), next = log.next_sequence();
    if (k < 55 || next == first) {
      reported_append(log, ++tag, 1 + rng() % 20, 100, 3000);
    } else if (k < 70) {
      reported_sync(log);
    } else if (k < 85) {
      uint64_t seq = first + rng() % (next - first + 1);
      say("BTB " + std::to_string(seq));
      g_kill.enter();
      bool ok = log.truncate_before(seq).is_ok();
      g_kill.leave();
      say("ETB" + state(log, ok));
    } else {
      uint64_t seq = first + rng() % (next - first);
      say("BTA " + std::to_string(seq));
      g_kill.enter();
      bool ok = log.truncate_after(seq).is_ok();
      g_kill.leave();
      say("ETA" + state(log, ok));
    }
  }
  say("BC");
  bool ok = log.close().is_ok();
  say("EC" + state(log, ok));
  say("DONE");
  return 0;
}
