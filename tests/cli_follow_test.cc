// `alog cat -f` against a log that this test changes through the library
// while the command runs (man/alog-cat.1 "FOLLOWING"). The child's output
// pipe is the synchronization (cli_child.h).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "alog/log.h"
#include "cli_child.h"
#include "cli_util.h"

using namespace alog;
using namespace alog::test;
using alog::test::cli::Child;
using nlohmann::json;

namespace {

Options small() {
  Options o;
  o.max_segment_size = 600;
  o.checkpoint_stride = 4;
  return o;
}

std::string payload(uint64_t seq) { return "record " + std::to_string(seq); }

void append_n(Log& log, int n) {
  for (int i = 0; i < n; i++) REQUIRE(log.append_one(payload(log.next_sequence())).is_ok());
}

}  // namespace

TEST_CASE("cat -f prints records appended by another process as they arrive, across rolls, and exits 130 on SIGINT") {
  TempDir t;
  std::string d = t / "logs";
  auto opened = Log::open(d, small());
  REQUIRE(opened.is_ok());
  Log& log = **opened;
  append_n(log, 3);
  Child c({"cat", "-f", "--seq", d});
  for (uint64_t s = 0; s < 3; s++) CHECK(c.line(0) == std::to_string(s) + "\t" + payload(s));
  // Enough records to roll the 600-byte segments several times.
  size_t before = log.segments().size();
  append_n(log, 40);
  CHECK(log.segments().size() > before);
  for (uint64_t s = 3; s < 43; s++) CHECK(c.line(0) == std::to_string(s) + "\t" + payload(s));
  append_n(log, 1);
  CHECK(c.line(0) == "43\t" + payload(43));
  CHECK(c.interrupt() == 130);
}

TEST_CASE("cat -f reports records removed behind it by truncate-after and follows from the cut") {
  TempDir t;
  std::string d = t / "logs";
  auto opened = Log::open(d, small());
  REQUIRE(opened.is_ok());
  Log& log = **opened;
  append_n(log, 10);
  Child c({"--json", "cat", "-f", "--payload=utf8", d});
  for (uint64_t s = 0; s < 10; s++) {
    auto l = c.line(0);
    REQUIRE(l);
    json j = json::parse(*l);
    CHECK(j["type"] == "record");
    CHECK(j["seq"] == s);
    CHECK(j["payload"] == payload(s));
  }
  REQUIRE(log.truncate_after(4).is_ok());
  auto l = c.line(0);
  REQUIRE(l);
  json reset = json::parse(*l);
  CHECK(reset["type"] == "reset");
  CHECK(reset["reason"] == "truncated_after");
  CHECK(reset["lost_first_seq"] == 5);
  CHECK(reset["lost_last_seq"] == 9);
  CHECK(reset["next_seq"] == 5);
  auto err = c.line(1);
  REQUIRE(err);
  CHECK(err->rfind("alog: " + d + ": warning: records 5-9 ", 0) == 0);
  // New records reuse the sequences after the cut.
  append_n(log, 2);
  for (uint64_t s = 5; s < 7; s++) {
    auto r = c.line(0);
    REQUIRE(r);
    json j = json::parse(*r);
    CHECK(j["type"] == "record");
    CHECK(j["seq"] == s);
  }
  CHECK(c.interrupt() == 130);
}

TEST_CASE("cat -f in text mode gives the truncate-after notice on standard error only") {
  TempDir t;
  std::string d = t / "logs";
  auto opened = Log::open(d, small());
  REQUIRE(opened.is_ok());
  Log& log = **opened;
  append_n(log, 6);
  Child c({"cat", "-f", "--seq", d});
  for (uint64_t s = 0; s < 6; s++) CHECK(c.line(0) == std::to_string(s) + "\t" + payload(s));
  REQUIRE(log.truncate_after(1).is_ok());
  CHECK(c.line(1) == "alog: " + d +
                         ": warning: records 2-5 already written were removed by truncate-after; "
                         "following from 2");
  append_n(log, 1);
  CHECK(c.line(0) == "2\t" + payload(2));
  CHECK(c.interrupt() == 130);
}

TEST_CASE("cat -f reports records removed by truncate-before before it read them and follows from the new first record") {
  TempDir t;
  std::string d = t / "logs";
  auto opened = Log::open(d, small());
  REQUIRE(opened.is_ok());
  Log& log = **opened;
  append_n(log, 10);
  Child c({"--json", "cat", "-f", "--payload=utf8", d});
  for (uint64_t s = 0; s < 10; s++) REQUIRE(c.line(0));
  c.pause_between_looks();
  append_n(log, 40);
  REQUIRE(log.truncate_before(30).is_ok());
  c.resume();
  auto l = c.line(0);
  REQUIRE(l);
  json reset = json::parse(*l);
  CHECK(reset["type"] == "reset");
  CHECK(reset["reason"] == "truncated_before");
  CHECK(reset["lost_first_seq"] == 10);
  CHECK(reset["lost_last_seq"] == 29);
  CHECK(reset["next_seq"] == 30);
  CHECK(c.line(1) == "alog: " + d + ": warning: records 10-29 were removed before they were read; following from 30");
  for (uint64_t s = 30; s < 50; s++) {
    auto r = c.line(0);
    REQUIRE(r);
    json j = json::parse(*r);
    CHECK(j["type"] == "record");
    CHECK(j["seq"] == s);
    CHECK(j["payload"] == payload(s));
  }
  CHECK(c.interrupt() == 130);
}

TEST_CASE("cat -f short of descriptors reads on past a truncate-before and says truncated_before, not recycled") {
  for (rlim_t max_fds : {32, 16}) {
    CAPTURE(max_fds);
    if (max_fds == 16 && cli::ubsan_build()) continue;  // it runs out of descriptors there: see ubsan_build()
    TempDir t;
    std::string d = t / "logs";
    auto opened = Log::open(d, [] {
      Options o;
      o.max_segment_size = 64 << 10;
      return o;
    }());
    REQUIRE(opened.is_ok());
    Log& log = **opened;
    constexpr uint64_t kRecords = 300000, kCut = 250000;  // about 110 segments
    std::vector<std::string> pay;
    for (uint64_t s = 0; s < kRecords; s++) pay.push_back(std::to_string(s));
    std::vector<std::string_view> views(pay.begin(), pay.end());
    for (size_t i = 0; i < views.size(); i += 1000)
      REQUIRE(log.append(std::span(views).subspan(i, std::min<size_t>(1000, views.size() - i)))
                  .is_ok());
    // The follower may hold few descriptors: it closes the least recently
    // used segments and opens them again by name, so the removed ones it had
    // closed are gone under it (reaped), as a recycled one would be.
    Child c({"--json", "cat", "-f", "--payload=utf8", d}, Child::Stdin::null, -1, max_fds);
    c.wait_sleeping_in(SYS_write);  // its output pipe is full: it stopped mid-log
    REQUIRE(log.truncate_before(kCut).is_ok());
    uint64_t want = 0;
    bool reset = false;
    while (want < kRecords) {
      auto l = c.line(0);
      REQUIRE(l);
      json j = json::parse(*l);
      if (j["type"] == "reset") {
        CHECK_FALSE(reset);
        reset = true;
        CHECK(j["reason"] == "truncated_before");
        CHECK(j["lost_first_seq"] == want);
        CHECK(j["next_seq"] == kCut);
        want = kCut;
        continue;
      }
      REQUIRE(j["seq"] == want);  // in order: removed records it could still read, then the rest
      want++;
    }
    CHECK(c.interrupt() == 130);
  }
}

TEST_CASE("cat -f of a recycling log reports the records recycled before it read them") {
  TempDir t;
  std::string d = t / "logs";
  Options o = small();
  o.max_segments = 3;
  auto opened = Log::open(d, o);
  REQUIRE(opened.is_ok());
  Log& log = **opened;
  append_n(log, 5);
  Child c({"--json", "cat", "-f", "--payload=utf8", d});
  for (uint64_t s = 0; s < 5; s++) REQUIRE(c.line(0));
  c.pause_between_looks();
  append_n(log, 100);  // many rolls: the oldest segments are recycled
  const uint64_t first = log.first_sequence();
  REQUIRE(first > 5);
  c.resume();
  auto l = c.line(0);
  REQUIRE(l);
  json reset = json::parse(*l);
  CHECK(reset["type"] == "reset");
  CHECK(reset["reason"] == "recycled");
  CHECK(reset["lost_first_seq"] == 5);
  CHECK(reset["lost_last_seq"] == first - 1);
  CHECK(reset["next_seq"] == first);
  for (uint64_t s = first; s < 105; s++) {
    auto r = c.line(0);
    REQUIRE(r);
    json j = json::parse(*r);
    CHECK(j["type"] == "record");
    CHECK(j["seq"] == s);
  }
  CHECK(c.interrupt() == 130);
}

TEST_CASE("cat -f --from beyond the end waits for that record and starts exactly there, with no reset") {
  TempDir t;
  std::string d = t / "logs";
  auto opened = Log::open(d, small());
  REQUIRE(opened.is_ok());
  Log& log = **opened;
  append_n(log, 10);
  Child c({"--json", "cat", "-f", "--payload=utf8", "--from", "15", d});
  c.pause_between_looks();  // it has looked at the log and found 15 missing
  c.resume();
  append_n(log, 10);
  for (uint64_t s = 15; s < 20; s++) {
    auto l = c.line(0);
    REQUIRE(l);
    json j = json::parse(*l);
    CHECK(j["type"] == "record");
    CHECK(j["seq"] == s);
  }
  CHECK(c.interrupt() == 130);
  CHECK(c.rest(1).find("warning") == std::string::npos);
}

TEST_CASE("cat -f reports records it printed that truncate-after removed although others were appended under their sequences since") {
  TempDir t;
  std::string d = t / "logs";
  auto opened = Log::open(d, small());
  REQUIRE(opened.is_ok());
  Log& log = **opened;
  append_n(log, 49);
  Child c({"--json", "cat", "-f", "--payload=utf8", d});
  for (uint64_t s = 0; s < 49; s++) REQUIRE(c.line(0));
  // The follower is at 49 and sees the log only once it is at 49 again.
  c.pause_between_looks();
  REQUIRE(log.truncate_after(16).is_ok());
  for (uint64_t s = 17; s < 49; s++) REQUIRE(log.append_one("again " + std::to_string(s)).is_ok());
  c.resume();
  auto l = c.line(0);
  REQUIRE(l);
  json reset = json::parse(*l);
  CHECK(reset["type"] == "reset");
  CHECK(reset["reason"] == "truncated_after");
  CHECK(reset["lost_first_seq"] == 17);
  CHECK(reset["lost_last_seq"] == 48);
  CHECK(reset["next_seq"] == 17);
  for (uint64_t s = 17; s < 49; s++) {
    auto r = c.line(0);
    REQUIRE(r);
    json j = json::parse(*r);
    CHECK(j["seq"] == s);
    CHECK(j["payload"] == "again " + std::to_string(s));
  }
  CHECK(c.interrupt() == 130);
}

TEST_CASE("cat -F waits for a log that does not exist yet, then follows it") {
  TempDir t;
  std::string d = t / "logs";
  Child c({"cat", "-F", "--seq", d});
  c.pause_between_looks();  // it has looked and found no log
  c.resume();
  auto opened = Log::open(d, small());
  REQUIRE(opened.is_ok());
  Log& log = **opened;
  append_n(log, 3);
  for (uint64_t s = 0; s < 3; s++) CHECK(c.line(0) == std::to_string(s) + "\t" + payload(s));
  append_n(log, 1);
  CHECK(c.line(0) == "3\t" + payload(3));
  CHECK(c.interrupt() == 130);
}

TEST_CASE("cat -F of a path whose parent does not exist either waits too, and is interrupted cleanly") {
  TempDir t;
  std::string d = t / "missing/logs";
  Child c({"cat", "-F", d});
  c.pause_between_looks();
  c.resume();
  CHECK(c.interrupt() == 130);
}
