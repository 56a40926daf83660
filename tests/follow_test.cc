// Read-only logs while another writer works: refresh() picks up appends,
// rolls and truncations; a reader in another process sees a consistent prefix.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "alog/log.h"
#include "alog/scanner.h"
#include "support/util.h"

using namespace alog;
using namespace alog::test;

namespace {
Options small() {
  Options o;
  o.max_segment_size = 700;
  o.checkpoint_stride = 4;
  return o;
}
std::string payload(uint64_t seq) { return "rec" + std::to_string(seq) + std::string(seq % 17, '+'); }
void append_n(Log& log, int n) {
  for (int i = 0; i < n; i++) REQUIRE(log.append_one(payload(log.next_sequence())).is_ok());
}
// Reads what the scanner has now; returns the error, if any.
Status drain(Scanner& sc, std::vector<uint64_t>* seqs) {
  while (true) {
    auto r = sc.next();
    if (!r.is_ok()) return r.status();
    if (!*r) return {};
    CHECK(sc.payload().substr(0, payload(sc.sequence()).size()) == payload(sc.sequence()));
    seqs->push_back(sc.sequence());
  }
}
}  // namespace

TEST_CASE("refresh of a read-only log picks up records and segments appended since open") {
  TempDir t;
  auto w = std::move(Log::open(t / "log", small())).value();
  append_n(*w, 5);
  auto r = std::move(Log::open_read(t / "log")).value();
  auto sc = std::move(r->scan(0)).value();
  std::vector<uint64_t> seen;
  REQUIRE(drain(*sc, &seen).is_ok());
  CHECK(seen.size() == 5);
  append_n(*w, 60);
  REQUIRE(r->refresh().is_ok());
  CHECK(r->next_sequence() == 65);
  CHECK(r->segments().size() == w->segments().size());
  REQUIRE(drain(*sc, &seen).is_ok());
  CHECK(seen.size() == 65);
  for (size_t i = 0; i < seen.size(); i++) CHECK(seen[i] == i);
}

TEST_CASE("refresh after another writer's truncate_after stops the scanners of the cut segment") {
  TempDir t;
  auto w = std::move(Log::open(t / "log", small())).value();
  append_n(*w, 10);
  auto r = std::move(Log::open_read(t / "log")).value();
  auto beyond = std::move(r->scan(0)).value();
  auto before = std::move(r->scan(0)).value();
  std::vector<uint64_t> a, b;
  REQUIRE(drain(*beyond, &a).is_ok());
  for (int i = 0; i < 4; i++) REQUIRE(*before->next());
  REQUIRE(w->truncate_after(5).is_ok());
  REQUIRE(w->append_one(payload(6) + "X").is_ok());
  REQUIRE(r->refresh().is_ok());
  CHECK(r->next_sequence() == 7);
  // Seen from another process the cut's position is unknown: both stop.
  CHECK(drain(*beyond, &a).code() == Errc::segment_reaped);
  CHECK(drain(*before, &b).code() == Errc::segment_reaped);
  auto fresh = std::move(r->scan(0)).value();
  std::vector<uint64_t> all;
  REQUIRE(drain(*fresh, &all).is_ok());
  CHECK(all.size() == 7);
}

TEST_CASE("refresh after a truncate_after that regrew and synced past the old end stops every scanner of that segment") {
  TempDir t;
  auto w = std::move(Log::open(t / "log", small())).value();
  append_n(*w, 10);
  auto r = std::move(Log::open_read(t / "log")).value();
  auto sc = std::move(r->scan(0)).value();
  std::vector<uint64_t> a;
  for (int i = 0; i < 4; i++) REQUIRE(*sc->next());
  REQUIRE(w->truncate_after(5).is_ok());
  for (int i = 0; i < 10; i++) REQUIRE(w->append_one(payload(w->next_sequence()) + "X").is_ok());
  REQUIRE(w->sync().is_ok());
  REQUIRE(r->refresh().is_ok());
  CHECK(r->next_sequence() == 16);
  // Where the cut was cannot be known from outside: nothing read before is trusted.
  CHECK(drain(*sc, &a).code() == Errc::segment_reaped);
  auto fresh = std::move(r->scan(0)).value();
  std::vector<uint64_t> all;
  REQUIRE(drain(*fresh, &all).is_ok());
  CHECK(all.size() == 16);
}

TEST_CASE("refresh after another writer's truncate_before lets a scanner finish its segment") {
  TempDir t;
  auto w = std::move(Log::open(t / "log", small())).value();
  append_n(*w, 60);
  auto r = std::move(Log::open_read(t / "log")).value();
  auto sc = std::move(r->scan(0)).value();
  REQUIRE(*sc->next());
  REQUIRE(w->truncate_before(55).is_ok());
  REQUIRE(r->refresh().is_ok());
  CHECK(r->first_sequence() == 55);
  std::vector<uint64_t> seen;
  REQUIRE(drain(*sc, &seen).is_ok());
  CHECK(seen.back() == 59);
}

TEST_CASE("a scanner on a segment another process recycles stops with segment_reaped") {
  TempDir t;
  Options o = small();
  o.max_segments = 2;
  auto w = std::move(Log::open(t / "log", o)).value();
  append_n(*w, 3);
  auto r = std::move(Log::open_read(t / "log")).value();
  auto sc = std::move(r->scan(0)).value();
  REQUIRE(*sc->next());
  append_n(*w, 80);  // recycles the first file, several times over
  REQUIRE(r->refresh().is_ok());
  Status st;
  std::vector<uint64_t> seen;
  st = drain(*sc, &seen);
  CHECK(st.code() == Errc::segment_reaped);
}

TEST_CASE("a read-only open of a log being appended by another process sees a consistent prefix") {
  TempDir t;
  { auto w = std::move(Log::open(t / "log", small())).value(); }
  int go[2];
  REQUIRE(pipe(go) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto w = Log::open(t / "log", small());
    if (!w.is_ok()) _exit(2);
    char c = 1;
    if (write(go[1], &c, 1) != 1) _exit(3);
    for (int b = 0; b < 3000; b++) {
      std::vector<std::string> p;
      for (int j = 0; j < 1 + b % 5; j++) p.push_back(payload((*w)->next_sequence() + uint64_t(j)));
      std::vector<std::string_view> v(p.begin(), p.end());
      if (!(*w)->append(v).is_ok()) _exit(4);
    }
    _exit(0);
  }
  char c;
  REQUIRE(read(go[0], &c, 1) == 1);
  int opens = 0;
  uint64_t last_count = 0;
  int status = 0;
  while (waitpid(child, &status, WNOHANG) == 0) {
    auto r = Log::open_read(t / "log");
    if (!r.is_ok()) {
      // A segment may vanish between listing and opening; nothing else is allowed.
      CHECK(r.status().code() == Errc::not_found);
      continue;
    }
    opens++;
    auto sc = std::move((*r)->scan(0)).value();
    std::vector<uint64_t> seen;
    Status st = drain(*sc, &seen);
    CHECK_MESSAGE(st.is_ok(), st.to_string());
    for (size_t i = 0; i < seen.size(); i++) REQUIRE(seen[i] == i);
    CHECK(seen.size() >= last_count);
    last_count = seen.size();
  }
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(opens > 0);
  auto r = std::move(Log::open_read(t / "log")).value();
  CHECK(r->count() == 3000 * 3);
}
