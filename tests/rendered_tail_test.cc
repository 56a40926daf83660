// scan_rendered on a log whose unsynced tail is walked in the background:
// it stops that walk, reads the rest of the tail in parts, the log's own
// walk taking each part's walk over in order, and leaves the records read
// and the log (its end, torn tail, cut, damage) as a walk at open does,
// whatever stops the walk and however the scan itself ends.
#include <doctest/doctest.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "alog/crc32c.h"
#include "alog/rendered_scan.h"
#include "log_impl.h"
#include "support/forward_fs.h"
#include "unsynced_log.h"

namespace alog {

// What the tests see of a log's internals (a friend of LogImpl).
class LogTestPeer {
 public:
  static bool tail_walk_asked_to_stop(const Log& log) {
    return log.impl().stop_tail_walk_.load(std::memory_order_relaxed);
  }
};

}  // namespace alog

using namespace alog;
using namespace alog::test;

namespace {

// Holds every pread but the test thread's until opened: the background walk
// waits at its first read until a rendered scan has asked it to stop, so
// the scan always takes the walk over, at the synced offset.
class GateFs final : public ForwardFs {
 public:
  explicit GateFs(Fs& in) : ForwardFs(in), main_(std::this_thread::get_id()) {}
  Result<std::unique_ptr<File>> open(const std::string& p, OpenMode m) override {
    ALOG_ASSIGN(std::unique_ptr<File> f, in_.open(p, m));
    return std::unique_ptr<File>(std::make_unique<GateFile>(std::move(f), *this));
  }
  void open_gate() {
    std::lock_guard<std::mutex> g(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  void pass() {
    if (std::this_thread::get_id() == main_) return;
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return open_; });
  }
  class GateFile final : public ForwardFile {
   public:
    GateFile(std::unique_ptr<File> in, GateFs& fs) : ForwardFile(std::move(in)), fs_(fs) {}
    Result<size_t> pread(void* buf, size_t n, uint64_t off) override {
      fs_.pass();
      return file_->pread(buf, n, off);
    }

   private:
    GateFs& fs_;
  };
  const std::thread::id main_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// What a reading of the log tells, and the log's state after it.
struct Seen {
  std::vector<Rec> records;
  std::string end;  // "end", or the error's code and message
  uint64_t next = 0;
  std::string torn_tail, cut, damage;
  // Asked by another thread while the scan had the walk: it waits for the end.
  std::optional<uint64_t> next_meanwhile;
};

std::string describe(const Status& st) { return st.is_ok() ? "end" : st.to_string(); }

void read_rest(Scanner& sc, Seen& s) {
  while (true) {
    auto more = sc.next();
    if (!more.is_ok()) {
      s.end = describe(more.status());
      return;
    }
    if (!*more) break;
    s.records.push_back({sc.sequence(), std::string(sc.payload())});
  }
  s.end = "end";
}

void state_of(const Log& log, Seen& s) {
  s.next = log.next_sequence();
  s.torn_tail = log.torn_tail();
  if (const auto& c = log.tail_cut())
    s.cut = c->file + " " + std::to_string(c->offset) + " " + std::to_string(c->bytes) + " " +
            std::to_string(c->records) + " " + c->reason;
  s.damage = describe(log.damage());
}

// The tail walked at open, then a Scanner from the start.
Seen walked_at_open(MemFs& fs) {
  Seen s;
  auto log = open_read(fs, false);
  auto sc = log->scan(0);
  REQUIRE(sc.is_ok());
  read_rest(**sc, s);
  state_of(*log, s);
  return s;
}

// The tail taken over from the background walk by scan_rendered (with
// `write`, or one that keeps the records), then the Scanner it returns;
// `rendered` gets the records scan_rendered wrote.
Seen taken_over(MemFs& fs, size_t threads, uint64_t part_bytes, uint64_t* rendered = nullptr,
                std::function<Status(std::string_view, uint64_t, uint64_t, uint32_t)> write = {}) {
  GateFs gate(fs);
  Options o;
  o.fs = &gate;
  o.walk_tail_in_background = true;
  auto log = Log::open_read(kDir, o);
  REQUIRE(log.is_ok());
  // The gate opens once the scan has asked the walk to stop (or has ended:
  // then the check below fails); the log's end is asked for at once then.
  std::atomic<bool> scanned{false};
  Seen s;
  std::thread opener([&] {
    while (!scanned.load() && !LogTestPeer::tail_walk_asked_to_stop(**log)) std::this_thread::yield();
    gate.open_gate();
    if (LogTestPeer::tail_walk_asked_to_stop(**log)) s.next_meanwhile = (*log)->next_sequence();
  });
  RenderedScanOptions ro;
  ro.threads = threads;
  ro.part_bytes = part_bytes;
  ro.render = [](std::span<const std::string_view> payloads, RenderedBytes& out) {
    for (std::string_view p : payloads) {
      std::memcpy(out.reserve(p.size() + 1), p.data(), p.size());
      out.reserve(1)[p.size()] = '\n';
      out.commit(p.size() + 1);
    }
  };
  ro.write = write ? write : [&](std::string_view bytes, uint64_t first, uint64_t records, uint32_t last_crc) -> Status {
    for (size_t at = 0, nl; (nl = bytes.find('\n', at)) != std::string_view::npos; at = nl + 1)
      s.records.push_back({first++, std::string(bytes.substr(at, nl - at))});
    CHECK(last_crc == crc32c(s.records.back().payload.data(), s.records.back().payload.size()));
    if (rendered) *rendered += records;
    return {};
  };
  auto sc = scan_rendered(**log, 0, ro);
  scanned = true;
  opener.join();
  CHECK(LogTestPeer::tail_walk_asked_to_stop(**log));  // the scan took the walk over
  if (sc.is_ok()) read_rest(**sc, s);
  else s.end = describe(sc.status());
  state_of(**log, s);
  return s;
}

void check_same(const Seen& got, const Seen& want) {
  CHECK(got.next_meanwhile == want.next);
  CHECK(got.records.size() == want.records.size());
  CHECK(got.records == want.records);
  CHECK(got.end == want.end);
  CHECK(got.next == want.next);
  CHECK(got.torn_tail == want.torn_tail);
  CHECK(got.cut == want.cut);
  CHECK(got.damage == want.damage);
}

void check_every_way(MemFs& fs) {
  const Seen want = walked_at_open(fs);
  for (size_t threads : {size_t{1}, size_t{2}, size_t{3}})
    for (uint64_t part : {uint64_t{64} << 10, uint64_t{1} << 20}) {
      INFO(threads << " threads, parts of " << part << " B");
      check_same(taken_over(fs, threads, part), want);
    }
}

// Payloads that hold whole checkpoint frames of the segment's generation.
std::string with_checkpoints(uint64_t seq) {
  uint8_t cp[format::kFrameHeaderSize];
  format::encode_checkpoint(0, 0, /*generation=*/1, /*eof=*/false, cp);
  const std::string frame(reinterpret_cast<const char*>(cp), 16);
  return "record " + std::to_string(seq) + " " + frame + std::string(40, 'x') + frame + std::string(30, 'y');
}

}  // namespace

TEST_CASE("a rendered scan takes an intact tail over from the background walk and reads it whole") {
  MemFs fs;
  make_unsynced_log(fs);
  uint64_t rendered = 0;
  Seen got = taken_over(fs, 2, 256 << 10, &rendered);
  CHECK(rendered == 64000);  // every record through the parts, none left to the Scanner
  check_same(got, walked_at_open(fs));
  check_every_way(fs);
}

TEST_CASE("a rendered scan that takes the tail over ends it where a walk at open does: a torn batch, damage midway") {
  for (uint64_t seq : {uint64_t{63950}, uint64_t{30005}, uint64_t{5}}) {
    MemFs fs;
    make_unsynced_log(fs);
    set_byte(fs, payload_offset(fs, seq) + 3, '#');
    INFO("damage in record " << seq);
    const Seen want = walked_at_open(fs);
    CHECK(want.records.size() == seq / 100 * 100);  // its batch is cut
    CHECK_FALSE(want.torn_tail.empty());
    check_every_way(fs);
  }
}

TEST_CASE("a rendered scan that takes the tail over tells the bytes after its EOF as a walk at open does") {
  MemFs fs;
  make_unsynced_log(fs);
  auto bytes = fs.read_all(kActive);
  REQUIRE(bytes.is_ok());
  REQUIRE(fs.set_contents(kActive, *bytes + std::string(5000, 'z')).is_ok());
  const Seen want = walked_at_open(fs);
  CHECK_FALSE(want.cut.empty());
  check_every_way(fs);
}

TEST_CASE("payloads that look like checkpoints in a tail taken over do not change what is read") {
  MemFs fs;
  make_unsynced_log(fs, with_checkpoints);
  uint64_t rendered = 0;
  Seen got = taken_over(fs, 2, 64 << 10, &rendered);
  CHECK(rendered < 64000);  // a part began at a false checkpoint: the rest read in order
  check_same(got, walked_at_open(fs));
  check_every_way(fs);
}

TEST_CASE("a rendered scan that took the tail over and fails to write leaves the log concluded as a walk at open does") {
  MemFs fs;
  make_unsynced_log(fs);
  const Seen want = walked_at_open(fs);
  int calls = 0;
  auto failing = [&](std::string_view, uint64_t, uint64_t, uint32_t) -> Status {
    return ++calls == 3 ? Status(Errc::io, "disk full") : Status();
  };
  Seen got = taken_over(fs, 2, 64 << 10, nullptr, failing);
  CHECK(calls == 3);
  CHECK(got.end.find("disk full") != std::string::npos);
  CHECK(got.next == want.next);
  CHECK(got.next_meanwhile == want.next);
  CHECK(got.torn_tail == want.torn_tail);
  CHECK(got.cut == want.cut);
  CHECK(got.damage == want.damage);
}

TEST_CASE("a read error in a tail taken over ends the records before it and is the log's damage") {
  MemFs fs;
  make_unsynced_log(fs);
  const uint64_t bad = payload_offset(fs, 50000) & ~uint64_t{511};
  REQUIRE(fs.set_unreadable(kActive, bad, bad + 512).is_ok());
  for (size_t threads : {size_t{1}, size_t{3}}) {
    Seen got = taken_over(fs, threads, 64 << 10);
    CHECK(got.end.find("io") != std::string::npos);
    CHECK(got.damage == got.end);
    CHECK(got.records.size() <= 50000);
    CHECK(got.records.size() > 40000);  // up to the last batch boundary before the error
    for (size_t i = 0; i < got.records.size(); i++) CHECK(got.records[i] == Rec{i, unsynced_payload(i)});
  }
}
