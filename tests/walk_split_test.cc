// A segment's walk split across threads at a checkpoint found ahead ends
// where one thread's walk ends, in the same state, whatever lies in the
// part the helper walked: and a checkpoint that is only payload bytes
// leaves the walk to one thread.
#include <doctest/doctest.h>

#include <set>

#include "alog/fs.h"
#include "alog/verify.h"
#include "frame_reader.h"
#include "long_segment.h"
#include "walk_split.h"

using namespace alog;
using namespace alog::detail;
using namespace alog::test;

namespace {

struct End {
  Stop stop;
  WalkState state, boundary;
  std::string expected, found;
  bool operator==(const End& o) const {
    return stop == o.stop && state.offset == o.state.offset && state.seq == o.state.seq &&
           state.crc == o.state.crc && state.pending == o.state.pending &&
           state.open_batch == o.state.open_batch && boundary.offset == o.boundary.offset &&
           boundary.seq == o.boundary.seq && expected == o.expected && found == o.found;
  }
};

struct Segment {
  std::unique_ptr<File> file;
  uint64_t limit;
  explicit Segment(const std::string& d) {
    auto f = posix_fs().open(long_segment(d), OpenMode::read);
    REQUIRE(f.is_ok());
    file = std::move(*f);
    limit = file_size(long_segment(d));
  }
  SplitWalk::Setup setup() const { return {file.get(), limit, 1, format::kHeaderSize, 0, true}; }
};

// One thread's walk from the first frame; `stepped` gets every frame's offset.
End walk_alone(const Segment& s, std::set<uint64_t>* stepped = nullptr) {
  FrameWindow w(s.file.get(), s.limit);
  Walker walk(&w, 1, WalkState{}, true);
  Stop stop;
  while (true) {
    if (stepped) stepped->insert(walk.state().offset);
    if ((stop = walk.step()) != Stop::none) break;
  }
  return {stop, walk.state(), walk.boundary(), walk.expected(), walk.found()};
}

// The same walk with a helper on the second half; `joined` tells whether
// the main walk took the helper's part over.
End walk_split(const Segment& s, bool* joined, size_t* helper_frames = nullptr) {
  FrameWindow w(s.file.get(), s.limit);
  Walker walk(&w, 1, WalkState{}, true);
  size_t frames = 0;
  SplitWalk split(s.setup(), 2, [&](size_t part, const Walker&, std::span<const RecordView> run) {
    CHECK(part == 1);
    frames += std::max<size_t>(run.size(), 1);
  });
  REQUIRE(split.helpers() == 1);
  REQUIRE(split.next() > format::kHeaderSize);
  REQUIRE(split.next() < s.limit);
  *joined = false;
  Stop stop;
  while ((stop = walk.step()) == Stop::none) *joined = split.join(walk, {}) || *joined;
  if (helper_frames) *helper_frames = frames;
  return {stop, walk.state(), walk.boundary(), walk.expected(), walk.found()};
}

}  // namespace

TEST_CASE("a long segment's walk split at a checkpoint ahead ends at its EOF in the state of one thread's walk") {
  TempDir t;
  Segment s(make_long_log(t));
  End alone = walk_alone(s);
  REQUIRE(alone.stop == Stop::eof);
  REQUIRE(alone.state.seq == kLongRecords);
  bool joined;
  size_t helper_frames;
  End split = walk_split(s, &joined, &helper_frames);
  CHECK(joined);
  CHECK(helper_frames > kLongRecords / 3);  // the helper walked a part of its own
  CHECK(split == alone);
}

TEST_CASE("damage in the part a helper thread walked is met again by the main walk, at the same frame and with the same finding") {
  for (int rec : {150000, 209999}) {
    CAPTURE(rec);
    for (uint64_t at : {uint64_t(50), uint64_t(10) - 16}) {  // a payload byte; the header's flags
      TempDir t;
      const std::string d = make_long_log(t);
      set_byte(long_segment(d), payload_offset(d, rec) + at, 0xff);
      Segment s(d);
      End alone = walk_alone(s);
      REQUIRE(alone.stop != Stop::eof);
      REQUIRE(alone.state.seq == uint64_t(rec));
      bool joined;
      End split = walk_split(s, &joined);
      CHECK(joined);
      CHECK(split == alone);
    }
  }
}

TEST_CASE("damage before the split point stops the main walk there, and the helper thread's part is never taken") {
  TempDir t;
  const std::string d = make_long_log(t);
  set_byte(long_segment(d), payload_offset(d, 1000) + 5, 0x00);
  Segment s(d);
  End alone = walk_alone(s);
  REQUIRE(alone.stop == Stop::frame_crc);
  bool joined;
  End split = walk_split(s, &joined);
  CHECK_FALSE(joined);
  CHECK(split == alone);
}

TEST_CASE("payload bytes that look like a checkpoint where the split falls leave the walk to one thread, with the same end") {
  TempDir t;
  Segment s(make_long_log(t, /*fake_checkpoint=*/true));
  std::set<uint64_t> stepped;
  End alone = walk_alone(s, &stepped);
  REQUIRE(alone.stop == Stop::eof);
  {
    SplitWalk probe(s.setup(), 2);
    REQUIRE(probe.helpers() == 1);
    REQUIRE_FALSE(stepped.count(probe.next()));  // the split point is inside a payload
  }
  bool joined;
  End split = walk_split(s, &joined);
  CHECK_FALSE(joined);
  CHECK(split == alone);
}

TEST_CASE("a walk shorter than two parts of 8 MiB is not split") {
  TempDir t;
  const std::string d = t / "log";
  {
    auto log = Log::open(d);
    REQUIRE(log.is_ok());
    std::vector<std::string> recs(1000, std::string(100, 'x'));
    std::vector<std::string_view> views(recs.begin(), recs.end());
    for (int b = 0; b < 100; b++) REQUIRE((*log)->append(views).is_ok());  // 11.6 MB
  }
  Segment s(d);
  SplitWalk split(s.setup(), 2);
  CHECK(split.helpers() == 0);
  CHECK(split.next() == UINT64_MAX);
}

TEST_CASE("find_checkpoint finds the first checkpoint header valid on its own in the range, and none past its end") {
  TempDir t;
  Segment s(make_long_log(t));
  std::set<uint64_t> stepped;
  walk_alone(s, &stepped);
  auto first = find_checkpoint(*s.file, 1, 1 << 20, 2 << 20);
  REQUIRE(first);
  CHECK(stepped.count(*first));
  CHECK(*first >= (1u << 20));
  // Checkpoints end the batches of 1,000 records here: none in 1 KiB after one.
  CHECK_FALSE(find_checkpoint(*s.file, 1, *first + 1, *first + 1024));
  CHECK_FALSE(find_checkpoint(*s.file, 2, 1 << 20, 2 << 20));  // another generation
}

TEST_CASE("opening a log whose long unsynced tail is torn in either half, walked on several threads, ends it at the batch before the tear, for reading and for writing") {
  // 24 MB unsynced after the first 1,000 records: the open's walk of the
  // tail is split across the CPUs (when there are several).
  for (int torn : {30000, 150000, 209500}) {
    for (bool payload : {false, true}) {
      CAPTURE(torn);
      CAPTURE(payload);
      TempDir t;
      const std::string d = make_long_log(t, false, 1000);
      const uint64_t at = payload_offset(d, torn);
      if (payload) set_byte(long_segment(d), at + 40, 0x00);  // a bad CRC: a torn tail in unsynced bytes
      else truncate_file(long_segment(d), at + 40);           // a frame cut short
      const uint64_t boundary = uint64_t(torn - torn % 1000);  // batches of 1,000
      {
        auto r = Log::open_read(d);
        REQUIRE(r.is_ok());
        CHECK((*r)->next_sequence() == boundary);
        auto last = (*r)->read(boundary - 1);
        REQUIRE(last.is_ok());
        CHECK(last->payload == long_payload(int(boundary - 1), false));
      }
      {
        auto w = Log::open(d);
        REQUIRE(w.is_ok());
        CHECK((*w)->next_sequence() == boundary);
        REQUIRE((*w)->close().is_ok());
      }
      auto rep = verify(d);
      REQUIRE(rep.is_ok());
      CHECK(rep->clean());
      CHECK(rep->next_sequence == boundary);
    }
  }
}

TEST_CASE("verify on two threads reports the lost records of a long segment's second half as one thread does") {
  TempDir t;
  const std::string d = make_long_log(t);
  // Salvage turns the damaged record into a lost frame in the part a helper walks.
  set_byte(long_segment(d), payload_offset(d, 150000) + 50, 0xff);
  RecoverOptions ro;
  ro.force = true;
  auto rec = recover(d, ro);
  REQUIRE(rec.is_ok());
  REQUIRE_FALSE(rec->refused);
  VerifyOptions one, two;
  two.jobs = 2;
  auto a = verify(d, one);
  auto b = verify(d, two);
  REQUIRE(a.is_ok());
  REQUIRE(b.is_ok());
  CHECK(a->lost_records == 1);
  CHECK(b->lost_records == a->lost_records);
  REQUIRE(a->problems.size() == b->problems.size());
  for (size_t i = 0; i < a->problems.size(); i++) {
    CHECK(a->problems[i].kind == b->problems[i].kind);
    CHECK(a->problems[i].offset == b->problems[i].offset);
    CHECK(a->problems[i].message == b->problems[i].message);
  }
}
