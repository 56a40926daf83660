// Finding a record from its checkpoint: the frames of the gap are walked in
// the window that one pread filled, or by the full walker when anything
// there is unusual (a frame past the read, damage). Reads, truncations and
// their errors must not tell the two apart.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "alog/log.h"
#include "alog/verify.h"
#include "support/forward_fs.h"
#include "support/util.h"

using namespace alog;
using namespace alog::test;

namespace {

std::unique_ptr<Log> must_open(const std::string& dir, const Options& o = {}) {
  auto r = Log::open(dir, o);
  REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  return std::move(r).value();
}

// Checkpoints 1000 records apart (one gap for the whole log), records of
// 0 B to 2 KiB, some of 1.5 MiB (beyond the 1 MiB a gap read takes), in
// batches of 1 to 9.
std::vector<std::string> fill(Log& log) {
  std::vector<std::string> all;
  for (int b = 0; b < 60; b++) {
    std::vector<std::string> batch;
    for (int j = 0; j < 1 + b % 9; j++) {
      size_t n = (b == 17 || b == 41) && j == 0 ? (3u << 19) : size_t((b * 131 + j * 17) % 2048);
      batch.push_back(std::string(n, char('a' + (b + j) % 26)));
    }
    std::vector<std::string_view> v(batch.begin(), batch.end());
    REQUIRE(log.append(v).is_ok());
    all.insert(all.end(), batch.begin(), batch.end());
  }
  return all;
}

// Counts the preads of every file opened through it, and the bytes they read.
class CountFs final : public ForwardFs {
 public:
  explicit CountFs(Fs& in) : ForwardFs(in) {}
  Result<std::unique_ptr<File>> open(const std::string& p, OpenMode m) override {
    ALOG_ASSIGN(std::unique_ptr<File> f, in_.open(p, m));
    return std::unique_ptr<File>(std::make_unique<CountFile>(std::move(f), *this));
  }
  uint64_t read = 0, preads = 0;

 private:
  class CountFile final : public ForwardFile {
   public:
    CountFile(std::unique_ptr<File> in, CountFs& fs) : ForwardFile(std::move(in)), fs_(fs) {}
    Result<size_t> pread(void* buf, size_t n, uint64_t off) override {
      auto r = file_->pread(buf, n, off);
      fs_.preads++;
      if (r.is_ok()) fs_.read += *r;
      return r;
    }

   private:
    CountFs& fs_;
  };
};

Options long_gaps() {
  Options o;
  o.checkpoint_stride = 1000;
  o.max_segment_size = 64 << 20;
  return o;
}

}  // namespace

TEST_CASE("reads by sequence find every record of a long checkpoint gap, large records included") {
  TempDir t;
  auto log = must_open(t / "log", long_gaps());
  auto all = fill(*log);
  for (size_t i = all.size(); i-- > 0;) {
    auto r = log->read(i);
    REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
    CHECK(r->payload == all[i]);
  }
}

TEST_CASE("a read by sequence reads its checkpoint gap about up to its record when the gap's records are of one size") {
  TempDir t;
  Options o;
  o.checkpoint_stride = 100;  // gaps of 100 frames of 16 + 100 bytes
  {
    auto log = must_open(t / "log", o);
    for (int b = 0; b < 10; b++) {
      std::vector<std::string> batch;
      for (int j = 0; j < 100; j++) batch.push_back(std::string(100, char('a' + (b + j) % 26)));
      std::vector<std::string_view> v(batch.begin(), batch.end());
      REQUIRE(log->append(v).is_ok());
    }
  }
  CountFs fs(posix_fs());
  Options ro;
  ro.fs = &fs;
  auto r = Log::open_read(t / "log", ro);
  REQUIRE(r.is_ok());
  auto& log = **r;
  REQUIRE(log.read(999).is_ok());  // builds the index
  const uint64_t frame = 16 + 100, gap = 100 * frame;
  auto bytes_to_read = [&](uint64_t seq) {
    const uint64_t before = fs.read;
    auto rec = log.read(seq);
    REQUIRE(rec.is_ok());
    CHECK(rec->payload == std::string(100, char('a' + (seq / 100 + seq % 100) % 26)));
    return fs.read - before;
  };
  // Ten frames into a gap: twelve frames' bytes, not the gap's.
  for (uint64_t seq : {uint64_t(310), uint64_t(610)}) CHECK(bytes_to_read(seq) <= 12 * frame + 16);
  // The first record of a gap: two frames.
  CHECK(bytes_to_read(500) <= 2 * frame + 16);
  // The last one: the whole gap, read once.
  CHECK(bytes_to_read(799) <= gap + frame);
}

TEST_CASE("a read by sequence finds its record past where the gap's first read stopped") {
  // One gap of uneven records: large ones first, then small ones, so the
  // first read (sized as if all were of the gap's mean size) ends short of
  // the small records, and the read goes on.
  TempDir t;
  Options o;
  o.checkpoint_stride = 1000;
  std::vector<std::string> all;
  {
    auto log = must_open(t / "log", o);
    for (int i = 0; i < 200; i++) {
      all.push_back(std::string(i < 100 ? 3000 : 10, char('a' + i % 26)));
      REQUIRE(log->append_one(all.back()).is_ok());
    }
  }
  CountFs fs(posix_fs());
  Options ro;
  ro.fs = &fs;
  auto r = Log::open_read(t / "log", ro);
  REQUIRE(r.is_ok());
  REQUIRE((*r)->read(0).is_ok());  // builds the index
  for (uint64_t seq : {uint64_t(150), uint64_t(5), uint64_t(99), uint64_t(100), uint64_t(199)}) {
    const uint64_t before = fs.preads;
    auto rec = (*r)->read(seq);
    REQUIRE_MESSAGE(rec.is_ok(), rec.status().to_string());
    CHECK(rec->payload == all[seq]);
    if (seq == 100 || seq == 150) CHECK(fs.preads - before >= 2);  // it did read on
  }
}

TEST_CASE("truncate_after anywhere in a long checkpoint gap leaves a log that verifies clean") {
  TempDir t;
  auto log = must_open(t / "log", long_gaps());
  auto all = fill(*log);
  // From the end down: each cut lands inside the gap, before and after the
  // large records, at batch ends and inside batches.
  for (uint64_t keep : {uint64_t(all.size() - 2), uint64_t(200), uint64_t(151), uint64_t(80),
                        uint64_t(77), uint64_t(3), uint64_t(0)}) {
    REQUIRE(log->truncate_after(keep).is_ok());
    CHECK(log->next_sequence() == keep + 1);
    auto v = verify(t / "log");
    REQUIRE(v.is_ok());
    for (auto& p : v->problems) MESSAGE(p.file << ":" << p.offset.value_or(0) << " " << p.message);
    CHECK(v->clean());
    CHECK(log->read(keep)->payload == all[keep]);
  }
}

TEST_CASE("a damaged header inside a checkpoint gap is reported at that frame by a later read") {
  TempDir t;
  Options o;
  o.checkpoint_stride = 1000;
  {
    auto log = must_open(t / "log", o);
    for (int i = 0; i < 50; i++) {
      std::string p = "record " + std::to_string(100 + i);
      REQUIRE(log->append_one(p).is_ok());
    }
  }
  // Every frame: a 16-byte header and 10 bytes of payload, one per batch.
  const uint64_t frame = 16 + 10, tenth = 192 + 10 * frame;
  flip_bit(t / "log/00000000000000000000.seg", tenth + 8, 0);  // its generation
  auto log = must_open(t / "log", o);  // synced data: nothing is cut
  CHECK(log->read(9)->payload == "record 109");
  for (uint64_t seq : {uint64_t(10), uint64_t(11), uint64_t(40)}) {
    auto r = log->read(seq);
    CHECK(r.status().code() == Errc::corrupt);
    CHECK(r.status().offset() == tenth);
    CHECK(r.status().message().find("generation") != std::string::npos);
  }
}

TEST_CASE("reads by sequence find every record when checkpoints are unevenly spaced, before and after the front is truncated") {
  // A checkpoint after every batch (stride 1), batches of 1 to 2,000
  // records: the index's entries are far from evenly spaced in sequence,
  // so the search from an evenly spaced guess must walk out to them.
  TempDir t;
  Options o;
  o.checkpoint_stride = 1;
  o.max_segment_size = 64 << 20;
  auto log = must_open(t / "log", o);
  std::vector<std::string> all;
  const int sizes[] = {1, 2000, 3, 1, 700, 1, 1, 1500, 9, 1};
  for (int round = 0; round < 3; round++) {
    for (int size : sizes) {
      std::vector<std::string> batch;
      for (int j = 0; j < size; j++) batch.push_back(std::to_string(all.size() + batch.size()));
      std::vector<std::string_view> v(batch.begin(), batch.end());
      REQUIRE(log->append(v).is_ok());
      all.insert(all.end(), batch.begin(), batch.end());
    }
  }
  auto read_all = [&](uint64_t from) {
    for (uint64_t i = from; i < all.size(); i++) {
      auto r = log->read(i);
      REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
      CHECK(r->payload == all[i]);
    }
    CHECK(log->read(all.size()).status().is(Errc::not_found));
  };
  read_all(0);
  REQUIRE(log->truncate_before(2500).is_ok());
  read_all(2500);
  CHECK(log->read(2499).status().is(Errc::not_found));
}
