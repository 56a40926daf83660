// Status as a value: an ok Status is a null pointer and an error keeps its
// details on the heap, so copies, moves and assignments must carry every
// field and leave no two values sharing one.
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "alog/status.h"

using namespace alog;

namespace {

Status located_error() {
  return Status(Errc::io, "read failed", 5).at("/d/x.seg", 4096).joined(Errc::segment_full);
}

void check_located_error(const Status& st) {
  CHECK_FALSE(st.is_ok());
  CHECK(st.code() == Errc::io);
  CHECK(st.is(Errc::segment_full));
  CHECK(st.sys_errno() == 5);
  CHECK(st.message() == "read failed");
  CHECK(st.path() == "/d/x.seg");
  CHECK(st.offset() == 4096);
  CHECK(st.to_string() == "io: read failed");
}

}  // namespace

TEST_CASE("an ok status has no message, path, offset or errno, and is only ok") {
  Status st;
  CHECK(st.is_ok());
  CHECK(st.code() == Errc::ok);
  CHECK(st.is(Errc::ok));
  CHECK_FALSE(st.is(Errc::io));
  CHECK(st.message().empty());
  CHECK(st.path().empty());
  CHECK_FALSE(st.offset().has_value());
  CHECK(st.sys_errno() == 0);
  CHECK(st.to_string() == "ok");
}

TEST_CASE("an error status keeps its code, joined code, errno, message, path and offset") {
  check_located_error(located_error());
  Status plain(Errc::corrupt, "bad frame");
  CHECK_FALSE(plain.is(Errc::ok));
  CHECK_FALSE(plain.offset().has_value());
  CHECK(plain.path().empty());
}

TEST_CASE("a copied error status is an independent value with every field") {
  Status a = located_error();
  Status b = a;
  check_located_error(b);
  b.at("/d/y.seg", 1);
  check_located_error(a);
  CHECK(b.path() == "/d/y.seg");
  Status c(Errc::not_found, "gone");
  c = a;
  check_located_error(c);
  c = Status();
  CHECK(c.is_ok());
  check_located_error(a);
}

TEST_CASE("a moved error status leaves its source ok") {
  Status a = located_error();
  Status b = std::move(a);
  check_located_error(b);
  CHECK(a.is_ok());  // NOLINT(bugprone-use-after-move): the moved-from state is specified here
  Status c(Errc::not_found, "gone");
  c = std::move(b);
  check_located_error(c);
}

TEST_CASE("assigning a status to itself keeps it") {
  Status a = located_error();
  const Status& same = a;
  a = same;
  check_located_error(a);
}

TEST_CASE("a location given to an ok status is kept, and it stays ok") {
  Status st;
  st.at("/d", 7);
  CHECK(st.is_ok());
  CHECK(st.path() == "/d");
  CHECK(st.offset() == 7);
}

TEST_CASE("a result carries its error status through a copy and a move") {
  Result<int> r = located_error();
  CHECK_FALSE(r.is_ok());
  Result<int> copy = r;
  check_located_error(copy.status());
  check_located_error(std::move(r).take_status());
  Result<int> ok = 3;
  CHECK(ok.status().is_ok());
  CHECK(*ok == 3);
}
