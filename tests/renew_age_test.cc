// An open for writing installs an empty active segment again (its name may
// not be durable after an earlier process's failed directory sync,
// open_renew.cc). That must not make the log's records younger: age
// retention dates a sealed segment by its successor's created-at, so the
// new incarnation keeps the old date (one millisecond later, so readers
// tell the files apart). A cron job's open used to date it "now", and an
// idle log's records never grew old enough to be removed.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "alog/log.h"
#include "alog/retention.h"
#include "support/util.h"

using namespace alog;
using namespace alog::test;

namespace {
constexpr uint64_t kDay = 86'400'000;
}  // namespace

TEST_CASE("opens that append nothing keep the empty active segment's date, and age retention still removes the segment before it") {
  TempDir t;
  const std::string d = t / "log";
  uint64_t now = 1'000'000'000;
  Options o;
  o.clock_ms = [&] { return now; };
  {
    auto log = Log::open(d, o);
    REQUIRE(log.is_ok());
    REQUIRE((*log)->append({"a", "b"}).is_ok());
    REQUIRE((*log)->roll().is_ok());
    REQUIRE((*log)->close().is_ok());
  }
  const uint64_t rolled = now;
  // A day of cron runs that open the idle log for writing and append nothing.
  for (int i = 0; i < 3; i++) {
    now += kDay / 4;
    auto log = Log::open(d, o);
    REQUIRE(log.is_ok());
    REQUIRE((*log)->close().is_ok());
  }
  auto log = Log::open_read(d);
  REQUIRE(log.is_ok());
  const std::vector<SegmentInfo> segs = (*log)->segments();
  REQUIRE(segs.size() == 2);
  CHECK(segs[1].active);
  CHECK(segs[1].created_at_ms > rolled);  // a new incarnation each time
  CHECK(segs[1].created_at_ms <= rolled + 3);
  RetentionPolicy p;
  p.older_than_ms = now - kDay / 2;  // records older than half a day
  CHECK(retention_plan(segs, p).cut == 2u);
}

TEST_CASE("a reader following the log moves to the empty active segment installed again and reads what is appended there") {
  TempDir t;
  const std::string d = t / "log";
  {
    auto log = Log::open(d);
    REQUIRE(log.is_ok());
    REQUIRE((*log)->append({"a"}).is_ok());
    REQUIRE((*log)->roll().is_ok());
    REQUIRE((*log)->close().is_ok());
  }
  auto reader = Log::open_read(d);
  REQUIRE(reader.is_ok());
  CHECK((*reader)->next_sequence() == 1);
  {
    auto log = Log::open(d);  // installs the empty active segment again
    REQUIRE(log.is_ok());
    REQUIRE((*log)->append({"b"}).is_ok());
    REQUIRE((*log)->close().is_ok());
  }
  REQUIRE((*reader)->refresh().is_ok());
  CHECK((*reader)->next_sequence() == 2);
  auto rec = (*reader)->read(1);
  REQUIRE(rec.is_ok());
  CHECK(std::string(rec->payload) == "b");
}
