// The oracle itself: it passes what the format allows and reports each kind of
// violation it exists to catch (a checker that never fails proves nothing).
// Each case tells the model one thing and does another to the log.
#include <doctest/doctest.h>

#include "alog/log.h"
#include "support/mem_fs.h"
#include "support/oracle.h"

using namespace alog;
using namespace alog::test;

namespace {

constexpr const char* kDir = "/db/log";

struct Fixture {
  MemFs fs;
  Options opt;
  std::unique_ptr<Log> log;
  Oracle oracle{0, 0};
  uint64_t tag = 0;

  Fixture() {
    REQUIRE(fs.mkdir("/db").is_ok());
    opt.fs = &fs;
    opt.max_segment_size = 1024;
    opt.checkpoint_stride = 3;
    auto l = Log::open(kDir, opt);
    REQUIRE(l.is_ok());
    log = std::move(*l);
  }
  std::vector<std::string> batch(size_t n, size_t len = 40) {
    std::vector<std::string> b;
    ++tag;
    for (size_t i = 0; i < n; i++) b.push_back(make_payload(log->next_sequence() + i, tag, len));
    return b;
  }
  void append(size_t n) { REQUIRE(oracle.append(*log, batch(n)).is_ok()); }
  // Reopens after a drop_all crash and returns the oracle's report.
  CheckReport crash_and_check() {
    log.reset();
    fs.crash(1, CrashMode::drop_all);
    Oracle::CheckOptions co;
    co.after_crash = true;
    return oracle.reopen_and_check(kDir, opt, co, &log);
  }
  static bool mentions(const CheckReport& r, const std::string& what) {
    for (const auto& v : r.violations)
      if (v.find(what) != std::string::npos) return true;
    return false;
  }
};

}  // namespace

TEST_CASE("the oracle passes a log that kept every synced batch") {
  Fixture f;
  f.append(3);
  f.append(1);
  REQUIRE(f.oracle.sync(*f.log).is_ok());
  f.append(2);  // unsynced: may go
  CheckReport r = f.crash_and_check();
  CHECK_MESSAGE(r.ok(), r.text());
  CHECK(r.next >= 4);
  CHECK(f.oracle.live_violations().empty());
}

TEST_CASE("the oracle reports a synced record that is missing") {
  Fixture f;
  f.append(2);
  REQUIRE(f.oracle.sync(*f.log).is_ok());
  // The model is told of a synced batch the log never saw.
  auto b = f.batch(2);
  f.oracle.begin_append(b, live_state(*f.log));
  LiveState fake = live_state(*f.log);
  fake.next += 2;
  f.oracle.end_append(true, fake);
  f.oracle.begin_sync();
  f.oracle.end_sync(true, fake);
  CheckReport r = f.crash_and_check();
  CHECK(Fixture::mentions(r, "synced records [2, 4) are lost"));
}

TEST_CASE("the oracle reports records lost that a roll it was told of should have made durable") {
  Fixture f;
  f.append(2);
  REQUIRE(f.oracle.roll(*f.log).is_ok());  // seals [0, 2) durably
  // The model is told of a batch and a roll that the log never saw.
  auto b = f.batch(2);
  f.oracle.begin_append(b, live_state(*f.log));
  LiveState fake = live_state(*f.log);
  fake.next += 2;
  f.oracle.end_append(true, fake);
  f.oracle.begin_roll(fake);
  fake.active_start = fake.next;
  f.oracle.end_roll(true, fake);
  CheckReport r = f.crash_and_check();
  CHECK(r.next == 2);  // the real roll kept its records
  CHECK(Fixture::mentions(r, "synced records [2, 4) are lost"));
}

TEST_CASE("the oracle reports a log that ends inside a batch") {
  Fixture f;
  // The model sees one batch of three; the log gets the same records as 1 + 2
  // and loses the last two to a truncation the model does not know about.
  auto b = f.batch(3);
  f.oracle.begin_append(b, live_state(*f.log));
  REQUIRE(f.log->append({b[0]}).is_ok());
  REQUIRE(f.log->append({b[1], b[2]}).is_ok());
  f.oracle.end_append(true, live_state(*f.log));
  REQUIRE(f.log->truncate_after(0).is_ok());
  CheckReport r = f.crash_and_check();
  CHECK(Fixture::mentions(r, "no batch end the model allows"));
}

TEST_CASE("the oracle reports a record that a truncate_after removed") {
  Fixture f;
  f.append(2);
  f.append(2);
  REQUIRE(f.oracle.sync(*f.log).is_ok());
  f.oracle.begin_truncate_after(1);
  LiveState fake = live_state(*f.log);
  fake.next = 2;
  f.oracle.end_truncate_after(true, fake);  // the log was never truncated
  CheckReport r = f.crash_and_check();
  CHECK(Fixture::mentions(r, "record 2 should not exist"));
}

TEST_CASE("the oracle reports a payload that differs from what was appended") {
  Fixture f;
  auto b = f.batch(1);
  f.oracle.begin_append(b, live_state(*f.log));
  REQUIRE(f.log->append({std::string_view("something else entirely")}).is_ok());
  f.oracle.end_append(true, live_state(*f.log));
  REQUIRE(f.oracle.sync(*f.log).is_ok());
  CheckReport r = f.crash_and_check();
  CHECK(Fixture::mentions(r, "record 0 differs"));
}

TEST_CASE("the oracle reports records that came back after truncate_before") {
  Fixture f;
  f.append(2);
  f.append(2);
  REQUIRE(f.oracle.sync(*f.log).is_ok());
  f.oracle.begin_truncate_before(2);
  LiveState fake = live_state(*f.log);
  fake.first = 2;
  f.oracle.end_truncate_before(true, fake);  // the log still starts at 0
  CheckReport r = f.crash_and_check();
  CHECK(Fixture::mentions(r, "came back after their removal was acknowledged"));
}

TEST_CASE("the oracle reports damage that verify finds in a sealed segment") {
  Fixture f;
  for (int i = 0; i < 12; i++) f.append(2);  // several segments of 1 KiB
  REQUIRE(f.oracle.close(*f.log).is_ok());
  f.log.reset();
  std::string seg = std::string(kDir) + "/00000000000000000000.seg";
  std::string img = *f.fs.current_image(seg);
  img[192 + 16 + 3] ^= 0x10;  // a payload byte of record 0
  REQUIRE(f.fs.set_contents(seg, img).is_ok());
  Oracle::CheckOptions co;
  co.after_crash = true;
  CheckReport r = f.oracle.reopen_and_check(kDir, f.opt, co, &f.log);
  CHECK(Fixture::mentions(r, "verify: 00000000000000000000.seg:192: frame_crc (corruption)"));
}

TEST_CASE("the oracle flags a live log that disagrees with the model") {
  Fixture f;
  f.append(1);
  REQUIRE(f.log->append({std::string_view("behind the oracle's back")}).is_ok());
  f.append(1);
  REQUIRE_FALSE(f.oracle.live_violations().empty());
  CHECK(f.oracle.live_violations()[0].find("the live log holds [0, 3)") != std::string::npos);
}
