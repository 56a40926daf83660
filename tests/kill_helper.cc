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
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "alog/log.h"
#include "support/kill_protocol.h"
#include "support/oracle.h"

using namespace alog;
using namespace alog::test;

namespace {

void say(const std::string& line) {
  std::string l = line + "\n";
  ssize_t n = ::write(1, l.data(), l.size());
  (void)n;
}

// The file system, with a SIGKILL at the N-th call of one kind.
struct KillPlan {
  std::string op;  // write, sync, truncate, rename, unlink, sync_dir
  uint64_t nth = 0;
  bool mid_write = false;
  bool only_in_truncate = false;
  bool in_truncate = false;
  uint64_t seen = 0;
  bool hit(const char* what) {
    if (only_in_truncate && !in_truncate) return false;
    return nth && op == what && ++seen == nth;
  }
};
KillPlan g_kill;

[[noreturn]] void die() {
  ::raise(SIGKILL);
  std::abort();
}

class KillFile final : public File {
 public:
  explicit KillFile(std::unique_ptr<File> f) : f_(std::move(f)) {}
  Result<size_t> pread(void* buf, size_t n, uint64_t off) override { return f_->pread(buf, n, off); }
  Status pwritev(const struct iovec* iov, int iovcnt, uint64_t off) override {
    if (g_kill.hit("write")) {
      if (g_kill.mid_write) {
        // Half of the bytes reach the file, then the process dies.
        uint64_t total = 0;
        for (int i = 0; i < iovcnt; i++) total += iov[i].iov_len;
        std::string half;
        for (int i = 0; i < iovcnt && half.size() < total / 2; i++)
          half.append(static_cast<const char*>(iov[i].iov_base),
                      std::min<size_t>(iov[i].iov_len, total / 2 - half.size()));
        (void)f_->pwrite(half.data(), half.size(), off);
      }
      die();
    }
    return f_->pwritev(iov, iovcnt, off);
  }
  Status truncate(uint64_t size) override {
    if (g_kill.hit("truncate")) die();
    return f_->truncate(size);
  }
  Status datasync() override {
    if (g_kill.hit("sync")) die();
    return f_->datasync();
  }
  Result<uint64_t> size() override { return f_->size(); }
  const std::string& path() const override { return f_->path(); }

 private:
  std::unique_ptr<File> f_;
};

class KillFs final : public Fs {
 public:
  Result<std::unique_ptr<File>> open(const std::string& path, OpenMode mode) override {
    ALOG_ASSIGN(auto f, real().open(path, mode));
    return std::unique_ptr<File>(new KillFile(std::move(f)));
  }
  Status rename(const std::string& from, const std::string& to) override {
    if (g_kill.hit("rename")) die();
    return real().rename(from, to);
  }
  Status unlink(const std::string& path) override {
    if (g_kill.hit("unlink")) die();
    return real().unlink(path);
  }
  Status mkdir(const std::string& path) override { return real().mkdir(path); }
  Result<std::vector<std::string>> list(const std::string& dir) override { return real().list(dir); }
  Status sync_dir(const std::string& dir) override {
    if (g_kill.hit("sync_dir")) die();
    return real().sync_dir(dir);
  }
  Result<std::unique_ptr<FileLock>> lock(const std::string& path) override { return real().lock(path); }
  bool is_locked(const std::string& path) override { return real().is_locked(path); }
  Result<FileStat> stat(const std::string& path) override { return real().stat(path); }

 private:
  static Fs& real() { return posix_fs(); }
};

std::string state(const Log& log, bool ok) {
  LiveState s = live_state(log);
  return " " + std::to_string(ok) + " " + std::to_string(s.failed) + " " + std::to_string(s.first) +
         " " + std::to_string(s.next) + " " + std::to_string(s.active_start) + " " +
         std::to_string(s.second_start) + " " + std::to_string(s.segments);
}

void append(Log& log, uint64_t tag, uint64_t n, uint64_t min_len, uint64_t max_len) {
  LiveState s = live_state(log);
  say("BA " + std::to_string(tag) + " " + std::to_string(n) + " " + std::to_string(min_len) + " " +
      std::to_string(max_len) + " " + std::to_string(s.segments) + " " + std::to_string(s.second_start));
  std::vector<std::string> batch;
  const uint64_t seq = log.next_sequence();
  for (uint64_t i = 0; i < n; i++) batch.push_back(make_payload(seq + i, tag, batch_len(tag, i, min_len, max_len)));
  std::vector<std::string_view> v(batch.begin(), batch.end());
  bool ok = log.append(v).is_ok();
  say("EA" + state(log, ok));
}

void sync(Log& log) {
  say("BS");
  bool ok = log.sync().is_ok();
  say("ES" + state(log, ok));
}

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
      g_kill.only_in_truncate = true;
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
  say("BO");
  auto opened = Log::open(dir, o);
  if (!opened.is_ok()) {
    std::fprintf(stderr, "open: %s\n", opened.status().to_string().c_str());
    say("EO 0 1 0 0 0 0 0");
    return 1;
  }
  Log& log = **opened;
  say("EO" + state(log, true));
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
        append(log, ++tag, 1030 + rng() % 200, 2048, 2300);
      } else {
        append(log, ++tag, 1 + rng() % 4, 32 * kKiB, 600 * kKiB);
      }
      if (op % 2 == 1) sync(log);
      continue;
    }
    uint64_t k = rng() % 100;
    const uint64_t first = log.first_sequence(), next = log.next_sequence();
    if (k < 55 || next == first) {
      append(log, ++tag, 1 + rng() % 20, 100, 3000);
    } else if (k < 70) {
      sync(log);
    } else if (k < 85) {
      uint64_t seq = first + rng() % (next - first + 1);
      say("BTB " + std::to_string(seq));
      g_kill.in_truncate = true;
      bool ok = log.truncate_before(seq).is_ok();
      g_kill.in_truncate = false;
      say("ETB" + state(log, ok));
    } else {
      uint64_t seq = first + rng() % (next - first);
      say("BTA " + std::to_string(seq));
      g_kill.in_truncate = true;
      bool ok = log.truncate_after(seq).is_ok();
      g_kill.in_truncate = false;
      say("ETA" + state(log, ok));
    }
  }
  say("BC");
  bool ok = log.close().is_ok();
  say("EC" + state(log, ok));
  say("DONE");
  return 0;
}
