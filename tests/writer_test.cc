// Writer: group commit, ordering, splitting, errors and stop, with many
// producers and concurrent scanners. A counting, gating Fs wrapper around
// posix_fs() counts fdatasync calls and can hold or fail a write, so tests
// build batches deterministically without sleeping.
#include "alog/writer.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "alog/log.h"
#include "alog/scanner.h"
#include "support/util.h"

using namespace alog;
using namespace alog::test;

namespace {

// posix_fs() with counters and two one-shot traps on File::pwritev: hold
// (block until release()) and fail (EIO).
class TestFs final : public Fs {
 public:
  std::atomic<uint64_t> datasyncs{0};

  // The next pwritev blocks until release(); wait_held() waits until it does.
  void hold_next_write() {
    std::lock_guard<std::mutex> g(mu_);
    hold_armed_ = true;
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
  // The next pwritev fails with EIO without writing.
  void fail_next_write() {
    std::lock_guard<std::mutex> g(mu_);
    fail_armed_ = true;
  }

  // Called by TestFile::pwritev before it writes; false: fail the write. A
  // failure armed while this write is held applies to the next one.
  bool before_write() {
    std::unique_lock<std::mutex> lk(mu_);
    bool fail = fail_armed_;
    fail_armed_ = false;
    if (hold_armed_) {
      hold_armed_ = false;
      held_ = true;
      cv_.notify_all();
      cv_.wait(lk, [&] { return !held_; });
    }
    return !fail;
  }

  Result<std::unique_ptr<File>> open(const std::string& path, OpenMode mode) override;
  Status rename(const std::string& from, const std::string& to) override {
    return base().rename(from, to);
  }
  Status unlink(const std::string& path) override { return base().unlink(path); }
  Status mkdir(const std::string& path) override { return base().mkdir(path); }
  Result<std::vector<std::string>> list(const std::string& dir) override {
    return base().list(dir);
  }
  Status sync_dir(const std::string& dir) override { return base().sync_dir(dir); }
  Result<std::unique_ptr<FileLock>> lock(const std::string& path) override {
    return base().lock(path);
  }
  bool is_locked(const std::string& path) override { return base().is_locked(path); }
  bool is_locked_slow() const override { return base().is_locked_slow(); }
  Result<FileStat> stat(const std::string& path) override { return base().stat(path); }

 private:
  static Fs& base() { return posix_fs(); }
  std::mutex mu_;
  std::condition_variable cv_;
  bool hold_armed_ = false;
  bool held_ = false;
  bool fail_armed_ = false;
};

class TestFile final : public File {
 public:
  TestFile(std::unique_ptr<File> f, TestFs* fs) : f_(std::move(f)), fs_(fs) {}
  Result<size_t> pread(void* buf, size_t n, uint64_t off) override {
    return f_->pread(buf, n, off);
  }
  Status pwritev(const struct iovec* iov, int iovcnt, uint64_t off) override {
    if (!fs_->before_write())
      return Status(Errc::io, "write: injected failure", EIO).at(path(), off);
    return f_->pwritev(iov, iovcnt, off);
  }
  Status truncate(uint64_t size) override { return f_->truncate(size); }
  Status datasync() override {
    fs_->datasyncs.fetch_add(1);
    return f_->datasync();
  }
  Result<uint64_t> size() override { return f_->size(); }
  const std::string& path() const override { return f_->path(); }

 private:
  std::unique_ptr<File> f_;
  TestFs* fs_;
};

Result<std::unique_ptr<File>> TestFs::open(const std::string& path, OpenMode mode) {
  ALOG_ASSIGN(auto f, base().open(path, mode));
  return std::unique_ptr<File>(new TestFile(std::move(f), this));
}

std::unique_ptr<Log> open_log(const TempDir& dir, Options o) {
  auto log = Log::open(dir / "log", o);
  REQUIRE_MESSAGE(log.is_ok(), log.status().to_string());
  return std::move(log).value();
}

// Every record of the log, in order.
std::vector<Record> read_all(const Log& log) {
  std::vector<Record> out;
  auto sc = log.scan(0);
  REQUIRE(sc.is_ok());
  while (true) {
    auto more = (*sc)->next();
    REQUIRE_MESSAGE(more.is_ok(), more.status().to_string());
    if (!*more) break;
    out.push_back({(*sc)->sequence(), std::string((*sc)->payload())});
  }
  return out;
}

uint64_t seq_of(std::future<Result<uint64_t>>& f) {
  auto r = f.get();
  REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  return *r;
}

// ---- the many-producer workload ----

constexpr uint64_t kMaxPayload = 1024;

// Producer p's i-th payload: "p:i:" then filler derived from (p, i); every
// 997th is one byte over the max payload size.
bool oversized(uint32_t i) { return i % 997 == 500; }
std::string make_payload(uint32_t p, uint32_t i) {
  if (oversized(i)) return std::string(kMaxPayload + 1, 'x');
  std::string s = std::to_string(p) + ":" + std::to_string(i) + ":";
  size_t fill = (i * 7 + p * 13) % 300;
  for (size_t k = 0; k < fill; k++) s.push_back(static_cast<char>('a' + (p + i + k) % 26));
  return s;
}
// Parses "p:i:" and checks the rest; false when the payload is not one of ours.
bool check_payload(std::string_view s, uint32_t* p, uint32_t* i) {
  size_t a = s.find(':');
  size_t b = a == std::string_view::npos ? a : s.find(':', a + 1);
  if (b == std::string_view::npos) return false;
  *p = static_cast<uint32_t>(std::stoul(std::string(s.substr(0, a))));
  *i = static_cast<uint32_t>(std::stoul(std::string(s.substr(a + 1, b - a - 1))));
  return s == make_payload(*p, *i);
}

// Lets scanners sleep until producers acknowledge more records.
class Progress {
 public:
  void add(uint64_t n) {
    {
      std::lock_guard<std::mutex> g(mu_);
      acks_ += n;
    }
    cv_.notify_all();
  }
  void finish() {
    {
      std::lock_guard<std::mutex> g(mu_);
      done_ = true;
    }
    cv_.notify_all();
  }
  // Waits until more than `seen` acks or the end; returns false at the end.
  bool wait_past(uint64_t* seen) {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return acks_ > *seen || done_; });
    if (acks_ > *seen) {
      *seen = acks_;
      return true;
    }
    return false;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t acks_ = 0;
  bool done_ = false;
};

struct Outcome {
  Errc code = Errc::ok;
  uint64_t seq = 0;
};

struct Workload {
  uint32_t producers = 8;
  uint32_t per_producer = 10000;
  uint32_t scanners = 2;
  // Producer 0 stops the writer after this many of its appends (0: never).
  uint32_t stop_after = 0;
};

// Reads the log as it grows, checking that sequences are contiguous from 0
// and every payload is intact. Returns the first problem, or "".
std::string scan_while_writing(const Log& log, Progress& progress, uint64_t* seen_records) {
  auto sc = log.scan(0);
  if (!sc.is_ok()) return sc.status().to_string();
  uint64_t expect = 0, acks = 0;
  bool more_coming = true;
  while (true) {
    auto more = (*sc)->next();
    if (!more.is_ok()) return "scan: " + more.status().to_string();
    if (*more) {
      if ((*sc)->sequence() != expect)
        return "scan: sequence " + std::to_string((*sc)->sequence()) + " where " +
               std::to_string(expect) + " was expected";
      uint32_t p, i;
      if (!check_payload((*sc)->payload(), &p, &i))
        return "scan: bad payload at sequence " + std::to_string(expect);
      if (expect % 4096 == 0) {
        // The other readers' entry points, while the writer appends and rolls.
        auto r = log.read(expect);
        if (!r.is_ok() || r->payload != (*sc)->payload())
          return "read(" + std::to_string(expect) + ") disagrees with the scan";
        if (log.next_sequence() <= expect || log.segments().empty() || log.disk_size() == 0 ||
            log.failed())
          return "accessors inconsistent at sequence " + std::to_string(expect);
      }
      expect++;
      continue;
    }
    // At the end as of now: one last pass after the producers are done.
    if (!more_coming) break;
    more_coming = progress.wait_past(&acks);
  }
  *seen_records = expect;
  return "";
}

// Runs the workload against a fresh log and checks everything the writer
// promises about what was acknowledged.
void run_workload(const Workload& w) {
  TempDir dir;
  Options o;
  o.max_segment_size = 256 * kKiB;  // several rolls while scanners read
  o.max_payload_size = kMaxPayload;
  auto log = open_log(dir, o);
  Writer writer(*log);
  REQUIRE(writer.start().is_ok());

  Progress progress;
  std::vector<std::vector<Outcome>> out(w.producers, std::vector<Outcome>(w.per_producer));
  std::vector<std::string> problems(w.producers + w.scanners);
  std::vector<uint64_t> scanned(w.scanners);
  Status stop_status;

  std::vector<std::thread> threads;
  for (uint32_t s = 0; s < w.scanners; s++)
    threads.emplace_back(
        [&, s] { problems[w.producers + s] = scan_while_writing(*log, progress, &scanned[s]); });
  std::vector<std::thread> producers;
  for (uint32_t p = 0; p < w.producers; p++)
    producers.emplace_back([&, p] {
      auto record = [&](uint32_t i, const Result<uint64_t>& r) {
        out[p][i] = {r.status().code(), r.is_ok() ? r.value() : 0};
        if (r.is_ok() && (i % 32 == 0)) progress.add(32);
      };
      if (p % 2 == 0) {
        // Blocking producers: one request in flight.
        for (uint32_t i = 0; i < w.per_producer; i++) {
          record(i, writer.append(make_payload(p, i)));
          if (p == 0 && w.stop_after != 0 && i + 1 == w.stop_after) stop_status = writer.stop();
        }
        return;
      }
      // Async producers: up to 32 requests in flight from one thread.
      std::deque<std::pair<uint32_t, std::future<Result<uint64_t>>>> window;
      for (uint32_t i = 0; i < w.per_producer; i++) {
        std::string payload = make_payload(p, i);
        auto f = writer.append_async(payload);
        payload.assign(payload.size(), '#');  // the writer must have copied it
        if (oversized(i) && f.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
          problems[p] = "oversized request " + std::to_string(i) + " was not failed at once";
        window.emplace_back(i, std::move(f));
        if (window.size() == 32) {
          record(window.front().first, window.front().second.get());
          window.pop_front();
        }
      }
      for (auto& [i, f] : window) record(i, f.get());
    });
  for (auto& t : producers) t.join();
  if (w.stop_after == 0) REQUIRE(writer.stop().is_ok());
  progress.finish();
  for (auto& t : threads) t.join();

  CHECK(stop_status.is_ok());
  CHECK(writer.stop().code() == Errc::stopped);
  for (const auto& pr : problems) CHECK_MESSAGE(pr.empty(), pr);

  // Per producer: oversized requests failed alone; otherwise ok, then (after
  // the stop) only stopped; acknowledged sequences rise with i.
  std::vector<std::pair<uint32_t, uint32_t>> by_seq;  // (producer, i) per acknowledged record
  uint64_t acked = 0;
  for (uint32_t p = 0; p < w.producers; p++) {
    bool seen_stopped = false;
    uint64_t last = 0;
    bool any = false;
    for (uint32_t i = 0; i < w.per_producer; i++) {
      const Outcome& oc = out[p][i];
      if (oversized(i)) {
        CHECK(oc.code == Errc::payload_too_large);
        continue;
      }
      if (oc.code == Errc::stopped) {
        REQUIRE(w.stop_after != 0);
        seen_stopped = true;
        continue;
      }
      REQUIRE_MESSAGE(oc.code == Errc::ok, "producer ", p, " request ", i, ": ",
                      errc_name(oc.code));
      REQUIRE_MESSAGE(!seen_stopped, "producer ", p, " request ", i,
                      " succeeded after a stopped one");
      if (any) REQUIRE_MESSAGE(oc.seq > last, "producer ", p, " order broken at ", i);
      last = oc.seq;
      any = true;
      acked++;
      if (by_seq.size() <= oc.seq) by_seq.resize(oc.seq + 1, {UINT32_MAX, 0});
      REQUIRE_MESSAGE(by_seq[oc.seq].first == UINT32_MAX, "sequence ", oc.seq,
                      " acknowledged twice");
      by_seq[oc.seq] = {p, i};
    }
  }
  if (w.stop_after != 0) {
    // Producer 0 stopped the writer, so everything it sent later was refused.
    for (uint32_t i = w.stop_after; i < w.per_producer; i++)
      if (!oversized(i)) CHECK(out[0][i].code == Errc::stopped);
  } else {
    uint32_t over = 0;
    for (uint32_t i = 0; i < w.per_producer; i++) over += oversized(i);
    CHECK(acked == uint64_t(w.producers) * (w.per_producer - over));
  }
  // Sequences contiguous: every one in [0, next) acknowledged exactly once.
  REQUIRE(by_seq.size() == acked);
  REQUIRE(log->next_sequence() == acked);
  for (uint64_t s : scanned) CHECK(s == acked);
  CHECK(writer.stats().records == acked);
  CHECK(writer.stats().failed == 0);
  CHECK(log->segments().size() > 1);

  // Every acknowledged record reads back with its payload.
  auto all = read_all(*log);
  REQUIRE(all.size() == acked);
  for (uint64_t s = 0; s < acked; s++) {
    REQUIRE(all[s].sequence == s);
    REQUIRE_MESSAGE(all[s].payload == make_payload(by_seq[s].first, by_seq[s].second), "sequence ",
                    s);
  }
  auto one = log->read(acked / 2);
  REQUIRE(one.is_ok());
  CHECK(one->payload == all[acked / 2].payload);
}

}  // namespace

TEST_CASE("a writer serves 8 producers with oversized requests and concurrent scanners") {
  run_workload(Workload{});
}

TEST_CASE("a writer stopped in the middle flushes what was queued and refuses the rest") {
  Workload w;
  w.stop_after = w.per_producer / 2;
  run_workload(w);
}

TEST_CASE("a lone writer request is written at once, not after the max delay") {
  TempDir dir;
  TestFs fs;
  Options o;
  o.sync_on_append = true;
  o.fs = &fs;
  auto log = open_log(dir, o);
  WriterOptions wo;
  wo.max_delay = std::chrono::hours(1);  // waiting for it would hang the test
  Writer writer(*log, wo);
  REQUIRE(writer.start().is_ok());
  uint64_t before = fs.datasyncs.load();
  auto r = writer.append("alone");
  REQUIRE(r.is_ok());
  CHECK(*r == 0);
  CHECK(fs.datasyncs.load() - before == 1);
  CHECK(writer.stats().batches == 1);
  auto r2 = writer.append("again");
  REQUIRE(r2.is_ok());
  CHECK(*r2 == 1);
  CHECK(fs.datasyncs.load() - before == 2);
}

TEST_CASE("a writer collects requests into one batch while the previous one is written") {
  TempDir dir;
  TestFs fs;
  Options o;
  o.sync_on_append = true;
  o.fs = &fs;
  auto log = open_log(dir, o);
  Writer writer(*log);
  REQUIRE(writer.start().is_ok());
  uint64_t before = fs.datasyncs.load();

  fs.hold_next_write();
  auto first = writer.append_async("first");
  fs.wait_held();  // the writer thread is inside the first batch's write
  std::vector<std::future<Result<uint64_t>>> rest;
  for (int i = 0; i < 100; i++) rest.push_back(writer.append_async("r" + std::to_string(i)));
  fs.release();

  CHECK(seq_of(first) == 0);
  for (int i = 0; i < 100; i++) CHECK(seq_of(rest[i]) == uint64_t(i) + 1);  // arrival order
  CHECK(writer.stats().batches == 2);
  CHECK(fs.datasyncs.load() - before == 2);  // one sync per batch, not per request
  REQUIRE(writer.stop().is_ok());
  auto all = read_all(*log);
  REQUIRE(all.size() == 101);
  CHECK(all[42].payload == "r41");
}

TEST_CASE("a writer batch holds at most max length requests and max bytes of payload") {
  TempDir dir;
  TestFs fs;
  Options o;
  o.fs = &fs;
  auto log = open_log(dir, o);

  SUBCASE("max length") {
    WriterOptions wo;
    wo.max_length = 4;
    Writer writer(*log, wo);
    REQUIRE(writer.start().is_ok());
    fs.hold_next_write();
    auto first = writer.append_async("first");
    fs.wait_held();
    std::vector<std::future<Result<uint64_t>>> rest;
    for (int i = 0; i < 10; i++) rest.push_back(writer.append_async("x"));
    fs.release();
    for (auto& f : rest) seq_of(f);
    CHECK(seq_of(first) == 0);
    CHECK(writer.stats().batches == 1 + 3);  // 4 + 4 + 2
  }
  SUBCASE("max bytes, and a request larger than it goes alone") {
    WriterOptions wo;
    wo.max_bytes = 100;
    Writer writer(*log, wo);
    REQUIRE(writer.start().is_ok());
    fs.hold_next_write();
    auto first = writer.append_async("first");
    fs.wait_held();
    std::vector<std::future<Result<uint64_t>>> rest;
    for (int i = 0; i < 6; i++) rest.push_back(writer.append_async(std::string(40, 'a')));
    rest.push_back(writer.append_async(std::string(250, 'b')));
    rest.push_back(writer.append_async(std::string(40, 'c')));
    fs.release();
    for (size_t i = 0; i < rest.size(); i++) CHECK(seq_of(rest[i]) == i + 1);
    CHECK(seq_of(first) == 0);
    CHECK(writer.stats().batches == 1 + 3 + 1 + 1);  // 2+2+2 of 40, the 250 alone, the last 40
  }
}

TEST_CASE(
    "a writer splits a batch too large for the log and fails only the record that cannot fit") {
  TempDir dir;
  TestFs fs;
  Options o;
  o.fs = &fs;
  o.max_segment_size = 4096;  // an empty segment holds three 1000-byte records
  auto log = open_log(dir, o);
  Writer writer(*log);
  REQUIRE(writer.start().is_ok());

  fs.hold_next_write();
  auto first = writer.append_async("first");
  fs.wait_held();
  std::vector<std::future<Result<uint64_t>>> rest;
  for (int i = 0; i < 10; i++) {
    // Request 6 cannot fit even an empty segment; it is below max_payload_size.
    size_t len = i == 6 ? 4000 : 1000;
    rest.push_back(writer.append_async(std::string(len, static_cast<char>('a' + i))));
  }
  fs.release();

  CHECK(seq_of(first) == 0);
  uint64_t expect = 1;
  for (int i = 0; i < 10; i++) {
    auto r = rest[i].get();
    if (i == 6) {
      REQUIRE(!r.is_ok());
      CHECK(r.status().code() == Errc::batch_too_large);
      CHECK(r.status().is(Errc::segment_full));
      continue;
    }
    REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
    CHECK(*r == expect++);  // consecutive, in arrival order, around the failed one
  }
  auto st = writer.stats();
  CHECK(st.splits > 0);
  CHECK(st.failed == 1);
  CHECK(st.records == 10);
  REQUIRE(writer.stop().is_ok());
  auto all = read_all(*log);
  REQUIRE(all.size() == 10);
  CHECK(all[7].payload == std::string(1000, 'h'));  // request 7 after the failed 6
  CHECK(log->segments().size() > 3);
}

TEST_CASE("a writer fails every request of a batch with the log's error") {
  TempDir dir;
  TestFs fs;
  Options o;
  o.fs = &fs;
  auto log = open_log(dir, o);
  Writer writer(*log);
  REQUIRE(writer.start().is_ok());

  fs.hold_next_write();
  auto first = writer.append_async("first");
  fs.wait_held();
  std::vector<std::future<Result<uint64_t>>> rest;
  for (int i = 0; i < 5; i++) rest.push_back(writer.append_async("doomed"));
  fs.fail_next_write();  // the next batch's write
  fs.release();

  CHECK(seq_of(first) == 0);
  for (auto& f : rest) {
    auto r = f.get();
    REQUIRE(!r.is_ok());
    CHECK(r.status().code() == Errc::io);
  }
  CHECK(writer.stats().failed == 5);
  // The failed write was rolled back; the log goes on.
  CHECK(!log->failed());
  auto r = writer.append("after");
  REQUIRE(r.is_ok());
  CHECK(*r == 1);
}

TEST_CASE("a writer with sync_on_append costs one data sync per batch plus those of each roll") {
  TempDir dir;
  TestFs fs;
  Options o;
  o.fs = &fs;
  o.sync_on_append = true;
  o.max_segment_size = 64 * kKiB;
  auto log = open_log(dir, o);
  REQUIRE(log->segments().size() == 1);
  Writer writer(*log);
  REQUIRE(writer.start().is_ok());
  uint64_t before = fs.datasyncs.load();

  const int producers = 8, each = 250;
  std::vector<std::string> errors(producers);
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; p++)
    threads.emplace_back([&, p] {
      for (int i = 0; i < each; i++) {
        auto r = writer.append(std::string(200, static_cast<char>('a' + p)));
        if (!r.is_ok() && errors[p].empty()) errors[p] = r.status().to_string();
      }
    });
  for (auto& t : threads) t.join();
  REQUIRE(writer.stop().is_ok());
  for (const auto& e : errors) CHECK_MESSAGE(e.empty(), e);

  uint64_t syncs = fs.datasyncs.load() - before;
  uint64_t rolls = log->segments().size() - 1;
  auto st = writer.stats();
  CHECK(st.records == uint64_t(producers) * each);
  CHECK(rolls >= 3);
  // A roll syncs the sealed segment once (its synced offset is already its
  // EOF with sync_on_append) and the new segment's header once.
  CHECK(syncs == st.batches + 2 * rolls);
  MESSAGE(st.batches, " batches for ", st.records, " records, ", rolls, " rolls");
}

TEST_CASE("a running writer makes direct appends, syncs and truncations busy") {
  TempDir dir;
  auto log = open_log(dir, {});
  REQUIRE(log->append_one("direct").is_ok());
  Writer writer(*log);
  REQUIRE(writer.start().is_ok());

  CHECK(log->append_one("x").status().code() == Errc::busy);
  std::string_view parts[] = {"a", "b"};
  CHECK(log->append_multipart(parts).status().code() == Errc::busy);
  CHECK(log->sync().code() == Errc::busy);
  CHECK(log->truncate_before(1).code() == Errc::busy);
  CHECK(log->truncate_after(0).code() == Errc::busy);
  Writer second(*log);
  CHECK(second.start().code() == Errc::busy);
  // Reads are fine meanwhile.
  CHECK(log->read(0).is_ok());

  auto r = writer.append("through the writer");
  REQUIRE(r.is_ok());
  CHECK(*r == 1);
  REQUIRE(writer.stop().is_ok());
  auto d = log->append_one("direct again");
  REQUIRE(d.is_ok());
  CHECK(*d == 2);
}

TEST_CASE("a stopped writer refuses everything with stopped") {
  TempDir dir;
  auto log = open_log(dir, {});
  Writer writer(*log);
  CHECK(writer.append("early").status().code() == Errc::invalid_argument);  // not started
  REQUIRE(writer.start().is_ok());
  CHECK(writer.running());
  CHECK(writer.start().code() == Errc::invalid_argument);  // already started
  REQUIRE(writer.append("one").is_ok());
  REQUIRE(writer.stop().is_ok());
  CHECK(!writer.running());

  CHECK(writer.append("late").status().code() == Errc::stopped);
  std::string_view parts[] = {"a", "b"};
  CHECK(writer.append_multipart(parts).status().code() == Errc::stopped);
  auto f = writer.append_async("late");
  REQUIRE(f.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
  CHECK(f.get().status().code() == Errc::stopped);
  bool called = false;
  writer.append_async("late", [&](Result<uint64_t> r) {
    called = true;  // on this thread, before append_async returns
    CHECK(r.status().code() == Errc::stopped);
  });
  CHECK(called);
  CHECK(writer.start().code() == Errc::stopped);
  CHECK(writer.stop().code() == Errc::stopped);
  CHECK(log->next_sequence() == 1);
}

TEST_CASE("a writer that was never started stops cleanly and cannot start later") {
  TempDir dir;
  auto log = open_log(dir, {});
  Writer writer(*log);
  CHECK(writer.stop().is_ok());
  CHECK(writer.start().code() == Errc::stopped);
  CHECK(log->append_one("direct").is_ok());  // never attached
}

TEST_CASE("a writer rejects an oversized request at once without touching its batch") {
  TempDir dir;
  TestFs fs;
  Options o;
  o.fs = &fs;
  o.max_payload_size = 10;
  auto log = open_log(dir, o);
  Writer writer(*log);
  REQUIRE(writer.start().is_ok());
  fs.hold_next_write();
  auto first = writer.append_async("first");
  fs.wait_held();
  auto a = writer.append_async("small");
  // The writer is held, yet the oversized ones fail at once.
  CHECK(writer.append(std::string(11, 'x')).status().code() == Errc::payload_too_large);
  std::string_view parts[] = {"123456", "78901"};
  auto big = writer.append_multipart_async(parts);
  REQUIRE(big.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
  CHECK(big.get().status().code() == Errc::payload_too_large);
  auto b = writer.append_async("small too");
  fs.release();
  CHECK(seq_of(first) == 0);
  CHECK(seq_of(a) == 1);
  CHECK(seq_of(b) == 2);
}

TEST_CASE("a writer appends multipart records as their concatenation") {
  TempDir dir;
  auto log = open_log(dir, {});
  Writer writer(*log);
  REQUIRE(writer.start().is_ok());
  std::string_view parts[] = {"head-", "", "body-", "tail"};
  auto r = writer.append_multipart(parts);
  REQUIRE(r.is_ok());
  std::string owned[] = {"async-", "parts"};
  std::string_view views[] = {owned[0], owned[1]};
  auto f = writer.append_multipart_async(views);
  owned[0] = "clobbered";  // copied at the call
  CHECK(seq_of(f) == 1);
  REQUIRE(writer.stop().is_ok());
  auto all = read_all(*log);
  REQUIRE(all.size() == 2);
  CHECK(all[0].payload == "head-body-tail");
  CHECK(all[1].payload == "async-parts");
}

TEST_CASE("writer callbacks run on the writer thread and may queue more but not block") {
  TempDir dir;
  auto log = open_log(dir, {});
  Writer writer(*log);
  REQUIRE(writer.start().is_ok());
  std::promise<std::vector<Status>> seen;
  std::promise<uint64_t> chained;
  writer.append_async("one", [&](Result<uint64_t> r) {
    std::vector<Status> s;
    s.push_back(r.status());
    s.push_back(writer.append("blocking").status());  // would wait for this thread
    s.push_back(writer.stop());
    writer.append_async("two",
                        [&](Result<uint64_t> r2) { chained.set_value(r2.is_ok() ? *r2 : 99); });
    seen.set_value(std::move(s));
  });
  auto s = seen.get_future().get();
  CHECK(s[0].is_ok());
  CHECK(s[1].code() == Errc::invalid_argument);
  CHECK(s[2].code() == Errc::invalid_argument);
  CHECK(chained.get_future().get() == 1);
  CHECK(writer.running());
}

TEST_CASE("a writer's destructor writes what is queued and detaches from the log") {
  TempDir dir;
  TestFs fs;
  Options o;
  o.fs = &fs;
  auto log = open_log(dir, o);
  std::vector<std::future<Result<uint64_t>>> futures;
  {
    Writer writer(*log);
    REQUIRE(writer.start().is_ok());
    fs.hold_next_write();
    futures.push_back(writer.append_async("first"));
    fs.wait_held();
    for (int i = 0; i < 20; i++) futures.push_back(writer.append_async("queued"));
    fs.release();
  }
  for (size_t i = 0; i < futures.size(); i++) CHECK(seq_of(futures[i]) == i);
  CHECK(log->append_one("direct").is_ok());
}

TEST_CASE("a writer refuses bad options and read-only logs") {
  TempDir dir;
  auto log = open_log(dir, {});
  REQUIRE(log->append_one("x").is_ok());
  WriterOptions bad;
  bad.max_length = 0;
  CHECK(Writer(*log, bad).start().code() == Errc::invalid_argument);
  bad = {};
  bad.max_length = 65536;
  CHECK(Writer(*log, bad).start().code() == Errc::invalid_argument);
  bad = {};
  bad.max_bytes = 0;
  CHECK(Writer(*log, bad).start().code() == Errc::invalid_argument);
  bad = {};
  bad.max_delay = std::chrono::microseconds(-1);
  CHECK(Writer(*log, bad).start().code() == Errc::invalid_argument);
  REQUIRE(log->close().is_ok());
  auto ro = Log::open_read(dir / "log");
  REQUIRE(ro.is_ok());
  CHECK(Writer(**ro).start().code() == Errc::read_only);
}

TEST_CASE(
    "a writer truncates in order with its appends while a scanner keeps its removed segment") {
  TempDir dir;
  Options o;
  o.max_segment_size = 4096;
  auto log = open_log(dir, o);
  Writer writer(*log);
  REQUIRE(writer.start().is_ok());
  for (int i = 0; i < 40; i++) REQUIRE(writer.append(std::string(300, char('a' + i % 26))).is_ok());
  auto segs = log->segments();
  REQUIRE(segs.size() >= 4);
  auto sc = log->scan(0);
  REQUIRE(sc.is_ok());
  auto got = (*sc)->next();  // the scanner now holds the first segment
  REQUIRE((got.is_ok() && got.value()));
  uint64_t cut = segs[2].start_sequence;
  REQUIRE(writer.truncate_before(cut).is_ok());
  CHECK(log->first_sequence() == cut);
  // The removed first segment stays readable to the end, then the scan resumes at `cut`.
  uint64_t expect = 1;
  while (true) {
    auto more = (*sc)->next();
    REQUIRE_MESSAGE(more.is_ok(), more.status().to_string());
    if (!*more) break;
    if (expect == segs[0].next_sequence) expect = cut;
    CHECK((*sc)->sequence() == expect);
    CHECK((*sc)->payload() == std::string(300, char('a' + expect % 26)));
    expect++;
  }
  CHECK(expect == 40);
  CHECK(writer.truncate_before(1000).code() == Errc::out_of_bounds);
  REQUIRE(writer.truncate_after(38).is_ok());
  CHECK(log->next_sequence() == 39);
  auto r = writer.append("after the cut");
  REQUIRE(r.is_ok());
  CHECK(*r == 39);
}

TEST_CASE("a writer syncs on request, after what was queued before") {
  TempDir dir;
  TestFs fs;
  Options o;
  o.fs = &fs;
  auto log = open_log(dir, o);
  Writer writer(*log);
  REQUIRE(writer.start().is_ok());
  uint64_t before = fs.datasyncs.load();
  REQUIRE(writer.append("one").is_ok());
  CHECK(fs.datasyncs.load() == before);  // no sync_on_append: the writer never syncs by itself
  REQUIRE(writer.sync().is_ok());
  CHECK(fs.datasyncs.load() == before + 1);
  CHECK(log->segments().back().synced_offset == log->segments().back().size - 16);
  REQUIRE(writer.stop().is_ok());
  CHECK(writer.sync().code() == Errc::stopped);
}
