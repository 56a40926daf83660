// Options::walk_tail_in_background: a read-only open that walks a long
// unsynced tail on a thread of its own gives scans, accessors, torn tails
// and errors exactly what an open that walks it first gives.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "alog/format.h"
#include "alog/log.h"
#include "alog/scanner.h"
#include "support/mem_fs.h"
#include "unsynced_log.h"

using namespace alog;
using namespace alog::test;

namespace {

// The log opened both ways, and what a scan from the start of each returned:
// the background one scanned first, before anything asks for its end.
struct BothWays {
  std::unique_ptr<Log> first, back;
  std::vector<Rec> want, got;
  Status first_error, back_error;
};

BothWays scan_both_ways(MemFs& fs) {
  BothWays b;
  b.first = open_read(fs, false);
  b.back = open_read(fs, true);
  b.got = scan_all(*b.back, &b.back_error);
  b.want = scan_all(*b.first, &b.first_error);
  return b;
}

}  // namespace

TEST_CASE("a scan while the tail is walked in the background returns every record a walk at open does") {
  MemFs fs;
  make_unsynced_log(fs);
  BothWays b = scan_both_ways(fs);
  CHECK(b.first_error.is_ok());
  CHECK(b.back_error.is_ok());
  REQUIRE(b.want.size() == 64000);
  CHECK(b.got == b.want);
  CHECK(b.back->next_sequence() == b.first->next_sequence());
  CHECK(b.back->torn_tail() == b.first->torn_tail());
  CHECK(b.back->tail_cut().has_value() == b.first->tail_cut().has_value());
  CHECK(b.back->damage().is_ok());
}

TEST_CASE("the accessors of a log whose tail is walked in the background wait for the walk") {
  MemFs fs;
  make_unsynced_log(fs);
  auto back = open_read(fs, true);
  CHECK(back->next_sequence() == 64000);
  CHECK(back->last_sequence() == 63999);
  auto segs = back->segments();
  REQUIRE(segs.size() == 1);
  auto r = back->read(63999);
  REQUIRE(r.is_ok());
  CHECK(r->payload.starts_with("record 63999"));
}

TEST_CASE("a scan that starts past what the background walk has confirmed waits for it") {
  MemFs fs;
  make_unsynced_log(fs);
  auto back = open_read(fs, true);
  auto sc = back->scan(63990);
  REQUIRE(sc.is_ok());
  uint64_t n = 0, last = 0;
  while (true) {
    auto more = (*sc)->next();
    REQUIRE(more.is_ok());
    if (!*more) break;
    last = (*sc)->sequence();
    n++;
  }
  CHECK(n == 10);
  CHECK(last == 63999);
}

TEST_CASE("a torn last batch walked in the background is the end, and no record of it is shown") {
  MemFs fs;
  make_unsynced_log(fs);
  // A byte of record 63950's payload, in the last batch [63900, 64000).
  set_byte(fs, payload_offset(fs, 63950) + 3, '#');
  BothWays b = scan_both_ways(fs);
  CHECK(b.back_error.is_ok());
  REQUIRE(b.want.size() == 63900);
  CHECK(b.got == b.want);
  CHECK(b.back->next_sequence() == 63900);
  CHECK_FALSE(b.back->torn_tail().empty());
  CHECK(b.back->torn_tail() == b.first->torn_tail());
  REQUIRE(b.back->tail_cut().has_value());
  REQUIRE(b.first->tail_cut().has_value());
  CHECK(b.back->tail_cut()->records == b.first->tail_cut()->records);
}

TEST_CASE("a read error in a tail walked in the background ends the scan with it and is the log's damage") {
  MemFs fs;
  make_unsynced_log(fs);
  const uint64_t bad = payload_offset(fs, 50000) & ~uint64_t{511};
  REQUIRE(fs.set_unreadable(kActive, bad, bad + 512).is_ok());
  // Walked at open, the error fails the open.
  Options o;
  o.fs = &fs;
  CHECK(Log::open_read(kDir, o).status().code() == Errc::io);
  auto back = open_read(fs, true);
  Status err;
  std::vector<Rec> got = scan_all(*back, &err);
  CHECK(err.code() == Errc::io);
  CHECK(got.size() < 50000);
  for (size_t i = 0; i < got.size(); i++) CHECK(got[i].seq == i);
  CHECK(back->damage().code() == Errc::io);
}
