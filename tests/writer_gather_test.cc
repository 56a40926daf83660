// Writer: after a batch is done, the next one waits for the callers it woke
// to queue again, within a bound, so one round of producers shares one write.
// A gating Fs holds the writes that make batches; the held write of the batch
// whose callers are watched is kept for a while on purpose: that is a slow
// device (the bound is a quarter of the write), not a synchronization.
#include "alog/writer.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "alog/log.h"
#include "support/forward_fs.h"
#include "support/util.h"

using namespace alog;
using namespace alog::test;

namespace {

// posix_fs() whose next pwritev, once armed, blocks until release().
class GateFs final : public ForwardFs {
 public:
  GateFs() : ForwardFs(posix_fs()) {}

  void hold_next_write() {
    std::lock_guard<std::mutex> g(mu_);
    armed_ = true;
  }
  void wait_held() {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return held_; });
  }
  void release() {
    {
      std::lock_guard<std::mutex> g(mu_);
      held_ = false;
    }
    cv_.notify_all();
  }
  void before_write() {
    std::unique_lock<std::mutex> lk(mu_);
    if (!armed_) return;
    armed_ = false;
    held_ = true;
    cv_.notify_all();
    cv_.wait(lk, [&] { return !held_; });
  }

  Result<std::unique_ptr<File>> open(const std::string& path, OpenMode mode) override;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false;
  bool held_ = false;
};

class GateFile final : public ForwardFile {
 public:
  GateFile(std::unique_ptr<File> f, GateFs* fs) : ForwardFile(std::move(f)), fs_(fs) {}
  Status pwritev(const struct iovec* iov, int iovcnt, uint64_t off) override {
    fs_->before_write();
    return file_->pwritev(iov, iovcnt, off);
  }

 private:
  GateFs* fs_;
};

Result<std::unique_ptr<File>> GateFs::open(const std::string& path, OpenMode mode) {
  ALOG_ASSIGN(auto f, in_.open(path, mode));
  return std::unique_ptr<File>(new GateFile(std::move(f), this));
}

void wait_queued(const Writer& w, uint64_t n) {
  while (w.stats().queued < n) std::this_thread::yield();
}

// Batch 1 (one async record) is held while `callers` blocking callers queue
// batch 2; batch 2's write is then held for `slow`; each caller runs `then`
// after its first append returns (doctest's REQUIRE must not throw on
// those threads, so they CHECK).
template <typename Then>
std::vector<uint64_t> round_after_slow_batch(Writer& w, GateFs& fs, int callers,
                                             std::chrono::milliseconds slow, Then then) {
  fs.hold_next_write();
  auto first = w.append_async("first");
  fs.wait_held();
  std::vector<uint64_t> seqs(static_cast<size_t>(callers), ~uint64_t{0});
  std::vector<std::thread> ts;
  for (int i = 0; i < callers; i++)
    ts.emplace_back([&, i] {
      auto r = w.append("a" + std::to_string(i));
      CHECK(r.is_ok());
      seqs[static_cast<size_t>(i)] = then(i);
    });
  wait_queued(w, static_cast<uint64_t>(callers));
  fs.hold_next_write();  // batch 2's write
  fs.release();          // batch 1 is written
  fs.wait_held();
  std::this_thread::sleep_for(slow);  // a slow device (see the top of the file)
  fs.release();
  for (auto& t : ts) t.join();
  REQUIRE(first.get().is_ok());
  return seqs;
}

}  // namespace

TEST_CASE("a writer waits for the callers its last batch woke and writes their next records as one batch") {
  TempDir dir;
  GateFs fs;
  Options o;
  o.fs = &fs;
  auto log = Log::open(dir / "log", o);
  REQUIRE(log.is_ok());
  WriterOptions wo;
  wo.max_delay = std::chrono::hours(1);  // the bound is then a quarter of the slow write
  Writer w(**log, wo);
  REQUIRE(w.start().is_ok());
  const int callers = 4;
  auto seqs = round_after_slow_batch(w, fs, callers, std::chrono::milliseconds(800), [&](int i) {
    auto r = w.append("b" + std::to_string(i));
    CHECK(r.is_ok());
    return r.is_ok() ? *r : ~uint64_t{0};
  });
  // first, the four a's, the four b's: three writes.
  CHECK(w.stats().batches == 3);
  CHECK(w.stats().records == 1 + 2 * callers);
  std::sort(seqs.begin(), seqs.end());
  for (int i = 0; i < callers; i++) CHECK(seqs[static_cast<size_t>(i)] == uint64_t(1 + callers + i));
  CHECK(w.stats().queued == 0);
  REQUIRE(w.stop().is_ok());
}

TEST_CASE("a writer stops waiting for callers that do not come back once its bound has passed") {
  TempDir dir;
  GateFs fs;
  Options o;
  o.fs = &fs;
  auto log = Log::open(dir / "log", o);
  REQUIRE(log.is_ok());
  WriterOptions wo;
  wo.max_delay = std::chrono::hours(1);
  Writer w(**log, wo);
  REQUIRE(w.start().is_ok());
  // Of four callers only one appends again: its record is written alone,
  // after at most a quarter of the slow write, not after the hour.
  auto seqs = round_after_slow_batch(w, fs, 4, std::chrono::milliseconds(200), [&](int i) {
    if (i != 2) return uint64_t{0};
    auto r = w.append("again");
    CHECK(r.is_ok());
    return r.is_ok() ? *r : ~uint64_t{0};
  });
  CHECK(seqs[2] == 5);
  CHECK(w.stats().batches == 3);
  REQUIRE(w.stop().is_ok());
}

TEST_CASE("a writer counts the requests it has queued and not yet taken") {
  TempDir dir;
  GateFs fs;
  Options o;
  o.fs = &fs;
  auto log = Log::open(dir / "log", o);
  REQUIRE(log.is_ok());
  Writer w(**log);
  REQUIRE(w.start().is_ok());
  fs.hold_next_write();
  auto first = w.append_async("first");
  fs.wait_held();
  CHECK(w.stats().queued == 0);  // taken: it is being written
  std::vector<std::future<Result<uint64_t>>> rest;
  for (int i = 0; i < 3; i++) rest.push_back(w.append_async("r"));
  CHECK(w.stats().queued == 3);
  fs.release();
  for (auto& f : rest) REQUIRE(f.get().is_ok());
  CHECK(w.stats().queued == 0);
  REQUIRE(first.get().is_ok());
  REQUIRE(w.stop().is_ok());
}
