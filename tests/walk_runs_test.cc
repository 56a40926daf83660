// A walk that takes runs of data frames at once (Walker::take_data, which
// the rendered scan's tail parts and Walker::run use) accepts exactly the
// frames a walk stepping one frame at a time accepts, leaves the same state
// and boundary after each run, and stops where that walk stops with the
// same finding: on random logs, damaged ones, and the conformance vectors.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "alog/fs.h"
#include "alog/log.h"
#include "frame_reader.h"
#include "support/util.h"

using namespace alog;
using namespace alog::detail;
using namespace alog::test;

namespace {

bool same(const WalkState& a, const WalkState& b) {
  return a.offset == b.offset && a.seq == b.seq && a.crc == b.crc && a.pending == b.pending &&
         a.open_batch == b.open_batch;
}

// What a walk stepping one frame at a time saw after each accepted frame.
struct Accepted {
  WalkState state, boundary;
  uint64_t frame_offset, frame_seq;
  bool data;
  std::string payload;
};

struct Walked {
  std::vector<Accepted> frames;
  Stop stop;
  WalkState state, boundary;
  std::string expected, found;
};

struct Start {
  uint16_t generation;
  WalkState state;
};

std::optional<Start> start_of(File& f) {
  uint8_t hdr[format::kHeaderSize];
  auto got = f.pread(hdr, sizeof hdr, 0);
  if (!got.is_ok() || *got < sizeof hdr) return std::nullopt;
  format::SegmentHeader h;
  if (format::decode_segment_header(hdr, &h) != format::HeaderError::none) return std::nullopt;
  format::SlotChoice c = format::choose_slot(hdr, h.start_sequence);
  if (c.winner < 0) return std::nullopt;
  return Start{h.generation, read_state(c.slot[c.winner])};
}

Walked step_by_step(File& f, uint64_t limit, const Start& s, size_t chunk) {
  FrameWindow w(&f, limit, chunk);
  Walker walk(&w, s.generation, s.state, /*read_payloads=*/true);
  Walked out;
  while ((out.stop = walk.step()) == Stop::none) {
    const FrameInfo& fi = walk.frame();
    out.frames.push_back({walk.state(), walk.boundary(), fi.offset, fi.seq, fi.h.is_data(),
                          fi.payload ? std::string(reinterpret_cast<const char*>(fi.payload), fi.h.word)
                                     : std::string()});
  }
  out.state = walk.state();
  out.boundary = walk.boundary();
  out.expected = walk.expected();
  out.found = walk.found();
  return out;
}

// The same walk taking runs of at most `max` frames where it can; checks
// each run against the one-frame walk `ref`. Returns how many frames came in runs.
size_t check_runs(File& f, uint64_t limit, const Start& s, size_t chunk, size_t max, const Walked& ref) {
  FrameWindow w(&f, limit, chunk);
  Walker walk(&w, s.generation, s.state, /*read_payloads=*/true);
  std::vector<RecordView> run(max);
  size_t i = 0, in_runs = 0;
  Stop stop;
  while (true) {
    const size_t n = walk.take_data(run.data(), max);
    REQUIRE(n <= max);
    for (size_t k = 0; k < n; k++) {
      REQUIRE(i + k < ref.frames.size());
      const Accepted& a = ref.frames[i + k];
      CHECK(a.data);
      CHECK(run[k].sequence == a.frame_seq);
      CHECK_FALSE(run[k].lost);
      CHECK(run[k].payload == a.payload);
    }
    if (n > 0) {
      i += n;
      in_runs += n;
      const Accepted& a = ref.frames[i - 1];
      CHECK(same(walk.state(), a.state));
      CHECK(same(walk.boundary(), a.boundary));
      CHECK(walk.frame().offset == a.frame_offset);
      CHECK(walk.frame().seq == a.frame_seq);
      CHECK(std::string(reinterpret_cast<const char*>(walk.frame().payload), walk.frame().h.word) == a.payload);
      continue;
    }
    if ((stop = walk.step()) != Stop::none) break;
    REQUIRE(i < ref.frames.size());
    CHECK(same(walk.state(), ref.frames[i].state));
    i++;
  }
  CHECK(i == ref.frames.size());
  CHECK(stop == ref.stop);
  CHECK(same(walk.state(), ref.state));
  CHECK(same(walk.boundary(), ref.boundary));
  CHECK(walk.expected() == ref.expected);
  CHECK(walk.found() == ref.found);
  // Walker::run (runs where it can) ends the same way.
  FrameWindow w2(&f, limit, chunk);
  Walker whole(&w2, s.generation, s.state, /*read_payloads=*/true);
  CHECK(whole.run() == ref.stop);
  CHECK(same(whole.state(), ref.state));
  CHECK(same(whole.boundary(), ref.boundary));
  CHECK(whole.found() == ref.found);
  return in_runs;
}

// Checks every segment file of `dir`; returns how many frames came in runs.
size_t check_dir(const std::string& dir, std::mt19937_64& rng) {
  size_t in_runs = 0;
  for (const auto& name : list_dir(dir)) {
    if (!name.ends_with(".seg")) continue;
    const std::string path = dir + "/" + name;
    CAPTURE(path);
    auto f = posix_fs().open(path, OpenMode::read);
    REQUIRE(f.is_ok());
    auto start = start_of(**f);
    if (!start) continue;  // no walk without a header
    const uint64_t limit = file_size(path);
    for (size_t chunk : {size_t{512}, size_t{4096}, size_t{1} << 20}) {
      CAPTURE(chunk);
      const Walked ref = step_by_step(**f, limit, *start, chunk);
      const size_t maxes[] = {1, 2, 3, 4, 5, 7, 64, 4096};
      const size_t max = maxes[rng() % std::size(maxes)];
      CAPTURE(max);
      in_runs += check_runs(**f, limit, *start, chunk, max, ref);
    }
  }
  return in_runs;
}

// A log of random batches (1-40 records of 0-600 bytes, now and then one
// of 5000), checkpoints every 16 headers, its tail left unsynced.
std::string random_log(const std::string& d, std::mt19937_64& rng) {
  Options o;
  o.checkpoint_stride = 16;
  auto log = Log::open(d, o);
  REQUIRE(log.is_ok());
  for (int b = 0; b < 60; b++) {
    std::vector<std::string> recs(1 + rng() % 40);
    for (auto& r : recs) r.assign(rng() % 8 == 0 ? 5000 : rng() % 601, char('a' + rng() % 26));
    std::vector<std::string_view> views(recs.begin(), recs.end());
    REQUIRE((*log)->append(views).is_ok());
  }
  REQUIRE((*log)->close(false).is_ok());
  return d + "/00000000000000000000.seg";
}

}  // namespace

TEST_CASE("a walk taking runs of data frames accepts what a walk of one frame at a time accepts, on random logs") {
  std::mt19937_64 rng(20261206);
  size_t in_runs = 0;
  for (int i = 0; i < 4; i++) {
    TempDir t;
    random_log(t / "log", rng);
    in_runs += check_dir(t / "log", rng);
  }
  CHECK(in_runs > 1000);  // the runs did the walking
}

TEST_CASE("a walk taking runs of data frames stops where a walk of one frame at a time stops, with the same finding, on damaged logs") {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 40; i++) {
    CAPTURE(i);
    TempDir t;
    const std::string seg = random_log(t / "log", rng);
    const uint64_t size = file_size(seg);
    const uint64_t at = format::kHeaderSize + rng() % (size - format::kHeaderSize);
    if (i % 4 == 3) truncate_file(seg, at);
    else flip_bit(seg, at, int(rng() % 8));
    check_dir(t / "log", rng);
  }
}

TEST_CASE("a walk taking runs of data frames agrees with a walk of one frame at a time on every conformance vector's segments") {
  std::mt19937_64 rng(3);
  size_t dirs = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(ALOG_TESTDATA_DIR) + "/vectors")) {
    if (!e.is_directory()) continue;
    const auto names = list_dir(e.path().string());
    if (std::none_of(names.begin(), names.end(), [](const std::string& n) { return n.ends_with(".seg"); })) continue;
    check_dir(e.path().string(), rng);
    dirs++;
  }
  CHECK(dirs >= 14);
}
