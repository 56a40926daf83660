// A reader racing a truncation in another process: truncate_before renames
// the oldest segments to NAME.seg.del (and a reaper unlinks them) while a
// reader lists the directory and opens what it listed. A segment gone
// between the two is not an error: the reader looks again (cat -f used to
// die with not_found under routine retention).
#include <doctest/doctest.h>

#include <string>

#include "alog/log.h"
#include "support/forward_fs.h"
#include "support/util.h"

using namespace alog;
using namespace alog::test;

namespace {

// A closed log of 3 segments: records 0-9, 10-19 and 20-24.
std::string three_segments(const TempDir& t) {
  const std::string d = t / "log";
  auto log = Log::open(d);
  REQUIRE(log.is_ok());
  for (int s = 0; s < 3; s++) {
    for (int i = 0; i < (s < 2 ? 10 : 5); i++) REQUIRE((*log)->append_one("r" + std::to_string(i)).is_ok());
    if (s < 2) REQUIRE((*log)->roll().is_ok());
  }
  REQUIRE((*log)->close().is_ok());
  return d;
}

const std::string kFirst = "00000000000000000000.seg";

}  // namespace

TEST_CASE("a reader opening a log while another process truncates it opens what is left, not not_found") {
  TempDir t;
  const std::string d = three_segments(t);
  OpenHookFs fs(posix_fs());
  fs.watch = kFirst;
  fs.hook = [&] { REQUIRE(posix_fs().rename(d + "/" + kFirst, d + "/" + kFirst + ".del").is_ok()); };
  Options o;
  o.fs = &fs;
  auto r = Log::open_read(d, o);
  REQUIRE(r.is_ok());
  CHECK((*r)->first_sequence() == 10);
  CHECK((*r)->next_sequence() == 25);
}

TEST_CASE("a follower's refresh racing a truncation in another process goes on at the new first record") {
  TempDir t;
  const std::string d = three_segments(t);
  OpenHookFs fs(posix_fs());
  Options o;
  o.fs = &fs;
  auto r = Log::open_read(d, o);
  REQUIRE(r.is_ok());
  CHECK((*r)->first_sequence() == 0);
  fs.watch = kFirst;
  fs.hook = [&] { REQUIRE(posix_fs().unlink(d + "/" + kFirst).is_ok()); };
  REQUIRE((*r)->refresh().is_ok());
  CHECK((*r)->first_sequence() == 10);
  CHECK((*r)->next_sequence() == 25);
  auto rec = (*r)->read(24);
  REQUIRE(rec.is_ok());
  CHECK(std::string(rec->payload) == "r4");
}

TEST_CASE("a directory that is gone is still not_found for a reader, at once") {
  TempDir t;
  auto r = Log::open_read(t / "missing");
  CHECK(r.status().code() == Errc::not_found);
}
