// alog/inspect.h: one segment's header and slots, and the walk frame by frame,
// which must agree with verify() on every vector.
#include <doctest/doctest.h>

#include "alog/inspect.h"
#include "alog/verify.h"
#include "support/util.h"

using namespace alog;
using namespace alog::test;

namespace {

const std::string kVectors = std::string(ALOG_TESTDATA_DIR) + "/vectors";

struct Walked {
  uint64_t data = 0, checkpoints = 0;
  inspect::Frame last;  // the EOF or the frame that stopped the walk
};

Walked walk_all(const inspect::Segment& s, bool payloads) {
  inspect::FrameWalker w(s, payloads);
  Walked out;
  while (true) {
    auto f = w.next();
    REQUIRE(f.is_ok());
    if (f->stops() || f->eof()) {
      out.last = *f;
      return out;
    }
    if (f->header.is_data()) {
      CHECK(f->sequence == w.sequence() - 1);
      CHECK(f->payload.size() == (payloads ? f->header.word : 0));
      out.data++;
    } else {
      out.checkpoints++;
    }
  }
}

}  // namespace

TEST_CASE("the inspect walker meets every record and checkpoint of a clean log and ends at its EOF, as verify does") {
  const std::string dir = kVectors + "/multi-segment/log";
  auto v = verify(dir);
  REQUIRE(v.is_ok());
  REQUIRE(v->clean());
  for (const SegmentReport& sr : v->segments) {
    CAPTURE(sr.file);
    auto s = inspect::open_segment(dir + "/" + sr.file);
    REQUIRE(s.is_ok());
    REQUIRE(s->walkable());
    CHECK(s->header.start_sequence == sr.start_sequence);
    for (bool payloads : {false, true}) {
      Walked w = walk_all(*s, payloads);
      CHECK(w.last.eof());
      CHECK(w.last.end() == sr.size);
      CHECK(w.data == sr.records);
      CHECK(w.checkpoints == sr.checkpoints);
    }
  }
}

TEST_CASE("the inspect walker stops where verify does, with verify's kind, texts and batch boundary") {
  for (const char* name : {"torn-tail", "unsynced-damage", "midlog-corruption", "sealed-length-flip"}) {
    CAPTURE(name);
    const std::string dir = kVectors + "/" + name + "/log";
    auto v = verify(dir);
    REQUIRE(v.is_ok());
    const Problem* p = nullptr;
    for (const auto& q : v->problems)
      if (q.classification != Classification::warning) {
        p = &q;
        break;
      }
    REQUIRE(p);
    auto s = inspect::open_segment(dir + "/" + p->file);
    REQUIRE(s.is_ok());
    inspect::FrameWalker w(*s, /*read_payloads=*/true);
    inspect::Frame f;
    do {
      auto r = w.next();
      REQUIRE(r.is_ok());
      f = *r;
    } while (!f.stops() && !f.eof());
    REQUIRE(f.stops());
    CHECK(f.offset == p->offset);
    CHECK(f.problem == p->kind);
    CHECK(f.expected == p->expected);
    CHECK(f.found == p->found);
    CHECK(p->message.rfind(f.message, 0) == 0);
    CHECK(w.boundary_offset() == p->cut_at);
    // A stopped walk stays stopped.
    auto again = w.next();
    REQUIRE(again.is_ok());
    CHECK(again->offset == f.offset);
    CHECK(again->problem == f.problem);
  }
}

TEST_CASE("find_valid_data_frame finds the next data frame valid on its own, and none past the last") {
  const std::string path = kVectors + "/multi-segment/log/00000000000000000000.seg";
  auto s = inspect::open_segment(path);
  REQUIRE(s.is_ok());
  inspect::FrameWalker w(*s, true);
  std::vector<uint64_t> data;
  uint64_t eof = 0;
  while (true) {
    auto f = w.next();
    REQUIRE(f.is_ok());
    if (f->eof()) {
      eof = f->offset;
      break;
    }
    if (f->header.is_data()) data.push_back(f->offset);
  }
  REQUIRE(data.size() >= 2);
  auto at = inspect::find_valid_data_frame(*s, data[0]);
  REQUIRE(at.is_ok());
  CHECK(*at == data[0]);
  at = inspect::find_valid_data_frame(*s, data[0] + 1);
  REQUIRE(at.is_ok());
  CHECK(*at == data[1]);
  at = inspect::find_valid_data_frame(*s, data.back() + 1);
  REQUIRE(at.is_ok());
  CHECK_FALSE(at->has_value());
  CHECK(eof > data.back());
}

TEST_CASE("open_segment reports a missing file as not_found and a short file as an incomplete header") {
  TempDir t;
  auto missing = inspect::open_segment(t / "00000000000000000000.seg");
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().code() == Errc::not_found);
  write_file(t / "short.seg", "ALOG");
  auto s = inspect::open_segment(t / "short.seg");
  REQUIRE(s.is_ok());
  CHECK(s->length == 4);
  CHECK_FALSE(s->header_complete);
  CHECK_FALSE(s->walkable());
}
