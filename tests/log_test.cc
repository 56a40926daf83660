// The Log: append, read, scan, roll, reopen, options and every error of the table.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "alog/log.h"
#include "alog/scanner.h"
#include "alog/verify.h"
#include "support/mem_fs.h"
#include "support/util.h"

using namespace alog;
using namespace alog::test;

namespace {

std::unique_ptr<Log> must_open(const std::string& dir, const Options& o = {}) {
  auto r = Log::open(dir, o);
  REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  return std::move(r).value();
}

std::vector<std::string> all_payloads(const Log& log, uint64_t from = 0) {
  std::vector<std::string> v;
  Status st = range_from(log, from, 0, [&](uint64_t, std::string_view p) {
    v.emplace_back(p);
    return Status::ok();
  });
  REQUIRE_MESSAGE(st.is_ok(), st.to_string());
  return v;
}

Options small(uint64_t seg = 1024, uint32_t stride = 4) {
  Options o;
  o.max_segment_size = seg;
  o.checkpoint_stride = stride;
  return o;
}

}  // namespace

TEST_CASE("append of alpha beta gamma returns the last sequence 2 and reads back in order") {
  TempDir t;
  auto log = must_open(t / "log");
  auto r = log->append({"alpha", "beta", "gamma"});
  REQUIRE(r.is_ok());
  CHECK(*r == 2);
  CHECK(log->sync().is_ok());
  CHECK(log->first_sequence() == 0);
  CHECK(log->last_sequence() == 2);
  CHECK(log->next_sequence() == 3);
  CHECK(all_payloads(*log) == std::vector<std::string>{"alpha", "beta", "gamma"});
  CHECK(log->read(1)->payload == "beta");
}

TEST_CASE("append_multipart writes one record from several parts") {
  TempDir t;
  auto log = must_open(t / "log");
  std::vector<std::string_view> parts = {"he", "", "llo"};
  CHECK(*log->append_multipart(parts) == 0);
  std::vector<std::string_view> a = {"x", "y"}, b = {"z"};
  std::vector<std::span<const std::string_view>> recs = {a, b};
  CHECK(*log->append_multipart_batch(recs) == 2);
  CHECK(all_payloads(*log) == std::vector<std::string>{"hello", "xy", "z"});
}

TEST_CASE("an append with no payloads writes nothing") {
  TempDir t;
  auto log = must_open(t / "log");
  REQUIRE(log->append({"a"}).is_ok());
  auto before = read_file(t / "log/00000000000000000000.seg");
  std::vector<std::string_view> none;
  auto r = log->append(none);
  REQUIRE(r.is_ok());
  CHECK(*r == 0);
  CHECK(read_file(t / "log/00000000000000000000.seg") == before);
  CHECK(log->next_sequence() == 1);
}

TEST_CASE("a log rolls to a new segment when a batch does not fit and reads across segments") {
  TempDir t;
  std::vector<std::string> want;
  {
    auto log = must_open(t / "log", small(600));
    for (int i = 0; i < 50; i++) {
      want.push_back("record-" + std::to_string(i) + std::string(i % 13, 'x'));
      REQUIRE(log->append_one(want.back()).is_ok());
    }
    CHECK(log->segments().size() > 3);
    for (const auto& s : log->segments()) CHECK(s.size <= 600);
    CHECK(all_payloads(*log) == want);
    for (int i = 0; i < 50; i++) CHECK(log->read(uint64_t(i))->payload == want[size_t(i)]);
  }
  auto log = must_open(t / "log", small(600));
  CHECK(log->next_sequence() == 50);
  CHECK(all_payloads(*log) == want);
  CHECK(all_payloads(*log, 37) == std::vector<std::string>(want.begin() + 37, want.end()));
  REQUIRE(log->append_one("after reopen").is_ok());
  auto ro = Log::open_read(t / "log");
  REQUIRE(ro.is_ok());
  CHECK((*ro)->count() == 51);
}

TEST_CASE("a batch is never split across segments") {
  TempDir t;
  auto log = must_open(t / "log", small(1000, 64));
  REQUIRE(log->append({std::string(400, 'a')}).is_ok());  // EOF at 608
  std::vector<std::string> big(4, std::string(100, 'b'));
  std::vector<std::string_view> v(big.begin(), big.end());
  REQUIRE(log->append(v).is_ok());
  auto segs = log->segments();
  REQUIRE(segs.size() == 2);
  CHECK(segs[1].first_sequence == 1);
  CHECK(segs[1].next_sequence == 5);
}

TEST_CASE("a scanner from below the first record starts at the first and stops at to") {
  TempDir t;
  Options o;
  o.start_sequence = 100;
  auto log = must_open(t / "log", o);
  for (int i = 0; i < 10; i++) REQUIRE(log->append_one(std::to_string(i)).is_ok());
  auto sc = log->scan(5, 104);
  REQUIRE(sc.is_ok());
  std::vector<uint64_t> seqs;
  while (*(*sc)->next()) seqs.push_back((*sc)->sequence());
  CHECK(seqs == std::vector<uint64_t>{100, 101, 102, 103, 104});
}

TEST_CASE("a scanner at the end sees records appended later") {
  TempDir t;
  auto log = must_open(t / "log", small(400));
  REQUIRE(log->append_one("a").is_ok());
  auto sc = std::move(log->scan(0)).value();
  CHECK(*sc->next());
  CHECK_FALSE(*sc->next());
  for (int i = 0; i < 20; i++) REQUIRE(log->append_one("more-" + std::to_string(i)).is_ok());
  int n = 0;
  while (*sc->next()) n++;
  CHECK(n == 20);
}

TEST_CASE("random reads use the checkpoint index and find every record") {
  TempDir t;
  auto log = must_open(t / "log", small(1 << 20, 16));
  std::vector<std::string> p;
  for (int b = 0; b < 40; b++) {
    std::vector<std::string> batch;
    for (int j = 0; j < 1 + b % 7; j++) batch.push_back(std::to_string(b) + "/" + std::to_string(j));
    std::vector<std::string_view> v(batch.begin(), batch.end());
    REQUIRE(log->append(v).is_ok());
    p.insert(p.end(), batch.begin(), batch.end());
  }
  for (size_t i = p.size(); i-- > 0;) CHECK(log->read(i)->payload == p[i]);
  CHECK(log->read(p.size()).status().code() == Errc::not_found);
}

TEST_CASE("invalid options are an invalid_argument error at open") {
  TempDir t;
  Options o;
  o.checkpoint_stride = 0;
  CHECK(Log::open(t / "a", o).status().code() == Errc::invalid_argument);
  o.checkpoint_stride = 65536;
  CHECK(Log::open(t / "a", o).status().code() == Errc::invalid_argument);
  Options s;
  s.max_segment_size = 223;  // 192 + 16 + 16 - 1
  CHECK(Log::open(t / "b", s).status().code() == Errc::invalid_argument);
  s.max_segment_size = 224;
  CHECK(Log::open(t / "b", s).is_ok());
}

TEST_CASE("a record larger than max_payload_size rejects its whole batch before anything is written") {
  TempDir t;
  Options o;
  o.max_payload_size = 10;
  auto log = must_open(t / "log", o);
  auto before = read_file(t / "log/00000000000000000000.seg");
  auto r = log->append({"ok", std::string(11, 'x'), "ok"});
  CHECK(r.status().code() == Errc::payload_too_large);
  CHECK(read_file(t / "log/00000000000000000000.seg") == before);
  std::vector<std::string_view> parts = {"123456", "78901"};
  CHECK(log->append_multipart(parts).status().code() == Errc::payload_too_large);
  CHECK(log->append({std::string(10, 'y')}).is_ok());
}

TEST_CASE("more than 65535 records in one batch is batch_too_large") {
  TempDir t;
  auto log = must_open(t / "log");
  std::vector<std::string_view> v(65536, std::string_view());
  CHECK(log->append(v).status().code() == Errc::batch_too_large);
  v.resize(65535);
  CHECK(log->append(v).is_ok());
}

TEST_CASE("a batch that cannot fit an empty segment is batch_too_large joined with segment_full") {
  TempDir t;
  auto log = must_open(t / "log", small(512));
  auto r = log->append({std::string(300, 'a')});
  CHECK(r.status().code() == Errc::batch_too_large);
  CHECK(r.status().is(Errc::segment_full));
  CHECK(log->next_sequence() == 0);
}

TEST_CASE("with max_segments 1 a full segment is segment_full") {
  TempDir t;
  Options o = small(512);
  o.max_segments = 1;
  auto log = must_open(t / "log", o);
  REQUIRE(log->append({std::string(200, 'a')}).is_ok());
  auto r = log->append({std::string(200, 'b')});
  CHECK(r.status().code() == Errc::segment_full);
  CHECK_FALSE(r.status().is(Errc::batch_too_large));
  CHECK(log->segments().size() == 1);
}

TEST_CASE("an append that would exceed max_disk_size fails with disk_full and changes nothing") {
  TempDir t;
  Options o = small(512);
  o.max_disk_size = 1000;
  auto log = must_open(t / "log", o);
  REQUIRE(log->append({std::string(250, 'a')}).is_ok());
  REQUIRE(log->append({std::string(200, 'a')}).is_ok());  // rolls: 474 + 432
  auto before = snapshot_tree(t / "log");
  auto r = log->append({std::string(200, 'c')});
  CHECK(r.status().code() == Errc::disk_full);
  CHECK(snapshot_tree(t / "log") == before);
  CHECK(log->disk_size() <= 1000);
  CHECK(log->disk_size() == file_size(t / "log/00000000000000000000.seg") +
                                file_size(t / "log/00000000000000000001.seg"));
}

TEST_CASE("a second writer on the same log gets a locked error") {
  TempDir t;
  auto log = must_open(t / "log");
  auto second = Log::open(t / "log");
  CHECK(second.status().code() == Errc::locked);
  auto ro = Log::open_read(t / "log");
  CHECK(ro.is_ok());
  log.reset();
  CHECK(Log::open(t / "log").is_ok());
}

TEST_CASE("opening for reading a missing directory is not_found and a plain directory is not_a_log") {
  TempDir t;
  CHECK(Log::open_read(t / "missing").status().code() == Errc::not_found);
  write_file(t / "file", "x");
  CHECK(Log::open_read(t / "file").status().code() == Errc::not_a_log);
  CHECK(Log::open(t / "file").status().code() == Errc::not_a_log);
  CHECK(Log::open_read(t.path()).status().code() == Errc::not_a_log);
}

TEST_CASE("opening for writing refuses a directory that holds other files and no segments, before creating LOCK") {
  TempDir t;
  write_file(t / "precious.txt", "do not touch");
  CHECK(Log::open(t.path()).status().code() == Errc::not_a_log);
  CHECK(list_dir(t.path()) == std::vector<std::string>{"precious.txt"});
}

TEST_CASE("opening for reading never changes a byte") {
  TempDir t;
  {
    auto log = must_open(t / "log", small(600));
    for (int i = 0; i < 30; i++) REQUIRE(log->append_one(std::string(20, char('a' + i % 26))).is_ok());
  }
  std::string active = t / ("log/" + list_dir(t / "log").rbegin()[1]);  // last .seg, before LOCK
  truncate_file(active, file_size(active) - 5);
  auto before = snapshot_tree(t / "log");
  auto ro = Log::open_read(t / "log");
  REQUIRE(ro.is_ok());
  CHECK_FALSE((*ro)->torn_tail().empty());
  all_payloads(**ro);
  ro->reset();
  CHECK(snapshot_tree(t / "log") == before);
}

TEST_CASE("opening deletes leftover tmp and del files and renames a misnamed segment") {
  TempDir t;
  {
    auto log = must_open(t / "log", small(400));
    for (int i = 0; i < 10; i++) REQUIRE(log->append_one(std::string(60, 'z')).is_ok());
  }
  auto names = list_dir(t / "log");
  write_file(t / "log/00000000000000000099.seg.tmp", "junk");
  write_file(t / "log/00000000000000000098.seg.del", "junk");
  std::string second = names[1];
  std::rename((t / ("log/" + second)).c_str(), (t / "log/00000000000000000555.seg").c_str());
  auto log = must_open(t / "log", small(400));
  CHECK(list_dir(t / "log") == names);
  CHECK(log->count() == 10);
}

TEST_CASE("a cleanly closed segment records its EOF as the synced offset") {
  TempDir t;
  {
    auto log = must_open(t / "log");
    REQUIRE(log->append({"a", "b"}).is_ok());
  }
  auto ro = Log::open_read(t / "log");
  REQUIRE(ro.is_ok());
  auto s = (*ro)->segments();
  CHECK(s[0].synced_offset == s[0].size - 16);
}

TEST_CASE("a failed write rolls back cleanly and does not fail the log") {
  MemFs fs;
  REQUIRE(fs.mkdir("/t").is_ok());
  Options o;
  o.fs = &fs;
  auto log = must_open("/t/log", o);
  REQUIRE(log->append({"one"}).is_ok());
  fs.fail(Op::write, 1, FaultKind::short_write);
  auto r = log->append({"two", "three"});
  CHECK(r.status().code() == Errc::io);
  CHECK_FALSE(log->failed());
  REQUIRE(log->append({"four"}).is_ok());
  CHECK(all_payloads(*log) == std::vector<std::string>{"one", "four"});
  REQUIRE(log->sync().is_ok());
  auto v = verify("/t/log", VerifyOptions{false, &fs, {}});
  REQUIRE(v.is_ok());
  CHECK(v->clean());
}

TEST_CASE("a failed fsync fails the log until it is reopened") {
  MemFs fs;
  REQUIRE(fs.mkdir("/t").is_ok());
  Options o;
  o.fs = &fs;
  auto log = must_open("/t/log", o);
  REQUIRE(log->append({"one"}).is_ok());
  fs.fail(Op::sync, 1, FaultKind::sync_lose);
  CHECK(log->sync().code() == Errc::io);
  CHECK(log->failed());
  CHECK(log->append({"two"}).status().code() == Errc::log_failed);
  CHECK(log->sync().code() == Errc::log_failed);
  CHECK(log->truncate_before(1).code() == Errc::log_failed);
  log.reset();
  auto again = must_open("/t/log", o);
  CHECK(again->count() == 1);
  CHECK(again->append({"two"}).is_ok());
}

TEST_CASE("a failed write whose rollback also fails fails the log") {
  MemFs fs;
  REQUIRE(fs.mkdir("/t").is_ok());
  Options o;
  o.fs = &fs;
  auto log = must_open("/t/log", o);
  REQUIRE(log->append({"one"}).is_ok());
  fs.fail(Op::write, 1, FaultKind::eio);
  fs.fail(Op::truncate, 1, FaultKind::eio);
  CHECK(log->append({"two"}).status().code() == Errc::io);
  CHECK(log->failed());
  CHECK(log->append({"three"}).status().code() == Errc::log_failed);
}

TEST_CASE("a read-only log refuses appends") {
  TempDir t;
  must_open(t / "log")->append({"a"}).is_ok();
  auto ro = std::move(Log::open_read(t / "log")).value();
  CHECK(ro->append({"b"}).status().code() == Errc::read_only);
  CHECK(ro->truncate_after(0).code() == Errc::read_only);
}

TEST_CASE("a corrupt payload is reported by read with file, offset and sequence") {
  TempDir t;
  {
    auto log = must_open(t / "log");
    REQUIRE(log->append({"alpha", "beta", "gamma"}).is_ok());
  }
  flip_bit(t / "log/00000000000000000000.seg", 192 + 16 + 5 + 16 + 1, 3);  // in "beta"
  auto log = must_open(t / "log");  // synced data: not cut
  CHECK(log->count() == 3);
  auto r = log->read(1);
  CHECK(r.status().code() == Errc::corrupt);
  CHECK(r.status().offset() == 192 + 21);
  CHECK(r.status().message().find("sequence 1") != std::string::npos);
  CHECK(log->read(0)->payload == "alpha");
}

TEST_CASE("a live writer's lock is seen without taking a lock") {
  TempDir t;
  auto log = must_open(t / "log");
  CHECK(posix_fs().is_locked(t / "log/LOCK"));
  auto v = verify(t / "log");
  REQUIRE(v.is_ok());
  CHECK(v->writer_active);
  // The probe did not disturb the writer's lock: another writer is still refused.
  CHECK(Log::open(t / "log").status().code() == Errc::locked);
  log.reset();
  CHECK_FALSE(posix_fs().is_locked(t / "log/LOCK"));
}

TEST_CASE("close without sync releases the lock and leaves the slot untouched") {
  TempDir t;
  auto log = must_open(t / "log");
  REQUIRE(log->append({"a"}).is_ok());
  auto before = read_file(t / "log/00000000000000000000.seg");
  REQUIRE(log->close(false).is_ok());
  CHECK(read_file(t / "log/00000000000000000000.seg") == before);
  CHECK(Log::open(t / "log").is_ok());
}
