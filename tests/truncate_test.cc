// truncate_before, truncate_after, recycling and retention: every edge, a
// reopen after each, scanners across them, and a crash after every
// file-system step of each multi-step operation.
#include <doctest/doctest.h>
#include <fmt/core.h>

#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "alog/format.h"
#include "alog/log.h"
#include "alog/retention.h"
#include "alog/scanner.h"
#include "alog/verify.h"
#include "support/mem_fs.h"
#include "support/util.h"

using namespace alog;
using namespace alog::test;

namespace {

using Records = std::map<uint64_t, std::string>;

Records contents(const Log& log) {
  Records r;
  Status st = range_from(log, 0, 0, [&](uint64_t s, std::string_view p) {
    r[s] = std::string(p);
    return Status::ok();
  });
  REQUIRE_MESSAGE(st.is_ok(), st.to_string());
  return r;
}

std::string text(const Log& log) {
  std::string s;
  for (auto& [k, v] : contents(log)) s += std::to_string(k) + ":" + v + " ";
  return s;
}

struct Fixture {
  MemFs fs;
  Options opt;
  Fixture(uint64_t seg = 600, uint32_t stride = 4) {
    REQUIRE(fs.mkdir("/t").is_ok());
    opt.fs = &fs;
    opt.max_segment_size = seg;
    opt.checkpoint_stride = stride;
    uint64_t clock = 1000;
    opt.clock_ms = [clock]() mutable { return clock += 1000; };
  }
  std::unique_ptr<Log> open() {
    auto r = Log::open("/t/log", opt);
    REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
    return std::move(r).value();
  }
  // Batches of sizes 1..4 cycling, payloads "p<seq>" padded.
  void fill(Log& log, int records) {
    int made = 0, k = 0;
    while (made < records) {
      int n = std::min(1 + k++ % 4, records - made);
      std::vector<std::string> p;
      for (int j = 0; j < n; j++) {
        uint64_t s = log.next_sequence() + uint64_t(j);
        p.push_back(fmt::format("p{}{}", s, std::string(s % 23, '.')));
      }
      std::vector<std::string_view> v(p.begin(), p.end());
      REQUIRE(log.append(v).is_ok());
      made += n;
    }
  }
  bool clean() {
    auto v = verify("/t/log", VerifyOptions{false, &fs, {}});
    REQUIRE(v.is_ok());
    for (auto& p : v->problems) MESSAGE(p.file << ":" << p.offset.value_or(0) << " " << p.kind << " " << p.message);
    return v->clean();
  }
};

}  // namespace

TEST_CASE("the seed's truncation example prints 1:b and 2:c") {
  TempDir t;
  auto log = std::move(Log::open(t / "log")).value();
  REQUIRE(log->append({"a", "b", "c", "d"}).is_ok());
  REQUIRE(log->truncate_before(1).is_ok());
  REQUIRE(log->truncate_after(2).is_ok());
  CHECK(text(*log) == "1:b 2:c ");
  log.reset();
  auto again = std::move(Log::open(t / "log")).value();
  CHECK(text(*again) == "1:b 2:c ");
}

TEST_CASE("truncate_before below or at the first record does nothing") {
  Fixture f;
  auto log = f.open();
  f.fill(*log, 10);
  REQUIRE(log->truncate_before(3).is_ok());
  auto before = text(*log);
  CHECK(log->truncate_before(0).is_ok());
  CHECK(log->truncate_before(3).is_ok());
  CHECK(text(*log) == before);
  CHECK(log->first_sequence() == 3);
}

TEST_CASE("truncate_before at the last record keeps only it, across segment boundaries") {
  Fixture f;
  auto log = f.open();
  f.fill(*log, 60);
  REQUIRE(log->segments().size() > 2);
  REQUIRE(log->truncate_before(59).is_ok());
  CHECK(log->first_sequence() == 59);
  CHECK(log->count() == 1);
  CHECK(log->segments().size() == 1);
  CHECK(contents(*log).begin()->second.substr(0, 3) == "p59");
  log.reset();
  auto again = f.open();
  CHECK(again->first_sequence() == 59);
  CHECK(again->count() == 1);
  CHECK(f.clean());
}

TEST_CASE("truncate_before at the next sequence empties the log and keeps the next sequence") {
  Fixture f;
  auto log = f.open();
  f.fill(*log, 30);
  REQUIRE(log->truncate_before(30).is_ok());
  CHECK(log->empty());
  CHECK(log->next_sequence() == 30);
  CHECK_FALSE(log->last_sequence().has_value());
  log.reset();
  auto again = f.open();
  CHECK(again->empty());
  CHECK(again->next_sequence() == 30);
  CHECK(*again->append({"x"}) == 30);
  CHECK(text(*again) == "30:x ");
  CHECK(f.clean());
}

TEST_CASE("truncate_before beyond the next sequence is out_of_bounds") {
  Fixture f;
  auto log = f.open();
  f.fill(*log, 5);
  CHECK(log->truncate_before(6).code() == Errc::out_of_bounds);
  CHECK(log->count() == 5);
}

TEST_CASE("truncate_before inside a sealed segment moves its read offset and survives reopen") {
  Fixture f;
  auto log = f.open();
  f.fill(*log, 60);
  auto segs = log->segments();
  uint64_t mid = segs[1].first_sequence + 1;
  REQUIRE(mid < segs[1].next_sequence);
  REQUIRE(log->truncate_before(mid).is_ok());
  auto now = log->segments();
  CHECK(now.size() == segs.size() - 1);
  CHECK(now[0].first_sequence == mid);
  CHECK(now[0].read_offset > 192);
  CHECK(now[0].size == segs[1].size);
  auto want = contents(*log);
  log.reset();
  auto again = f.open();
  CHECK(contents(*again) == want);
  CHECK(f.clean());
}

TEST_CASE("truncate_after inside a batch writes a checkpoint and frees the later sequences") {
  Fixture f;
  auto log = f.open();
  REQUIRE(log->append({"a", "b", "c"}).is_ok());
  REQUIRE(log->append({"d", "e"}).is_ok());
  REQUIRE(log->truncate_after(1).is_ok());
  CHECK(text(*log) == "0:a 1:b ");
  CHECK(*log->append({"c2"}) == 2);
  CHECK(text(*log) == "0:a 1:b 2:c2 ");
  log.reset();
  auto again = f.open();
  CHECK(text(*again) == "0:a 1:b 2:c2 ");
  CHECK(f.clean());
}

TEST_CASE("truncate_after on a batch boundary and at the last record") {
  Fixture f;
  auto log = f.open();
  REQUIRE(log->append({"a", "b"}).is_ok());
  REQUIRE(log->append({"c"}).is_ok());
  REQUIRE(log->truncate_after(2).is_ok());
  CHECK(text(*log) == "0:a 1:b 2:c ");
  REQUIRE(log->truncate_after(1).is_ok());
  CHECK(text(*log) == "0:a 1:b ");
  log.reset();
  CHECK(text(*f.open()) == "0:a 1:b ");
  CHECK(f.clean());
}

TEST_CASE("truncate_after at the first record keeps one record and cannot empty the log") {
  Fixture f;
  auto log = f.open();
  f.fill(*log, 40);
  REQUIRE(log->truncate_before(7).is_ok());
  CHECK(log->truncate_after(6).code() == Errc::out_of_bounds);
  CHECK(log->truncate_after(40).code() == Errc::out_of_bounds);
  REQUIRE(log->truncate_after(7).is_ok());
  CHECK(log->count() == 1);
  CHECK(log->segments().size() == 1);
  log.reset();
  auto again = f.open();
  CHECK(again->count() == 1);
  CHECK(again->first_sequence() == 7);
  CHECK(f.clean());
}

TEST_CASE("truncate_after across segment boundaries removes later segments and appends reuse sequences") {
  Fixture f;
  auto log = f.open();
  f.fill(*log, 60);
  auto segs = log->segments();
  REQUIRE(segs.size() > 3);
  uint64_t cut = segs[1].first_sequence + 2;
  REQUIRE(log->truncate_after(cut).is_ok());
  CHECK(log->segments().size() == 2);
  CHECK(log->next_sequence() == cut + 1);
  CHECK(*log->append({"new"}) == cut + 1);
  log.reset();
  auto again = f.open();
  CHECK(again->next_sequence() == cut + 2);
  CHECK(again->read(cut + 1)->payload == "new");
  CHECK(f.clean());
}

TEST_CASE("truncations of an empty log") {
  Fixture f;
  auto log = f.open();
  CHECK(log->truncate_before(0).is_ok());
  CHECK(log->truncate_before(1).code() == Errc::out_of_bounds);
  CHECK(log->truncate_after(0).code() == Errc::out_of_bounds);
}

TEST_CASE("the five option combinations of the seed's retention table") {
  struct Row {
    uint64_t disk;
    uint32_t segments;
    const char* expect;
  };
  for (Row row : {Row{3000, 0, "disk_full"}, Row{3000, 3, "recycles"}, Row{0, 0, "grows"},
                  Row{0, 3, "recycles"}, Row{3000, 1, "segment_full"}}) {
    CAPTURE(row.expect);
    CAPTURE(row.disk);
    Fixture f(600);
    f.opt.max_disk_size = row.disk;
    f.opt.max_segments = row.segments;
    auto log = f.open();
    Status last;
    for (int i = 0; i < 200 && last.is_ok(); i++)
      last = log->append({std::string(40, char('a' + i % 26))}).take_status();
    std::string what = last.is_ok() ? "ok" : errc_name(last.code());
    if (std::string(row.expect) == "recycles") {
      CHECK(what == "ok");
      CHECK(log->segments().size() == 3);
      CHECK(log->first_sequence() > 0);
      CHECK(log->count() + log->first_sequence() == 200);
    } else if (std::string(row.expect) == "grows") {
      CHECK(what == "ok");
      CHECK(log->segments().size() > 10);
    } else {
      CHECK(what == row.expect);
    }
    if (row.disk) CHECK(log->disk_size() <= row.disk);
    auto want = contents(*log);
    log.reset();
    CHECK(contents(*f.open()) == want);
    CHECK(f.clean());
  }
}

TEST_CASE("a recycled segment gets generation plus one and its stale frames are never read") {
  Fixture f(600);
  f.opt.max_segments = 2;
  auto log = f.open();
  f.fill(*log, 40);
  auto segs = log->segments();
  REQUIRE(segs.size() == 2);
  bool recycled = false;
  for (auto& s : segs) recycled = recycled || s.generation == 2;
  CHECK(recycled);
  for (auto& s : segs)
    if (s.generation == 2) CHECK(s.file_length >= s.size);
  auto want = contents(*log);
  log.reset();
  auto again = f.open();
  CHECK(contents(*again) == want);
  CHECK(f.clean());
}

TEST_CASE("recycling wraps the generation from 65535 to 1") {
  Fixture f(600);
  f.opt.max_segments = 2;
  {
    auto log = f.open();  // one empty segment: rewrite it as generation 65535
  }
  std::string seg = "/t/log/00000000000000000000.seg";
  std::string img = *f.fs.current_image(seg);
  uint8_t h[208];
  std::memcpy(h, img.data(), 208);
  format::SegmentHeader hdr;
  REQUIRE(format::decode_segment_header(h, &hdr) == format::HeaderError::none);
  hdr.generation = 65535;
  format::encode_segment_header(hdr, h);
  format::encode_checkpoint(0, 0, 65535, true, h + 192);
  REQUIRE(f.fs.set_contents(seg, std::string(reinterpret_cast<char*>(h), 208)).is_ok());
  auto log = f.open();
  CHECK(log->segments()[0].generation == 65535);
  // Append until the first recycle: the file of generation 65535 comes back as the newest segment.
  while (log->first_sequence() == 0) REQUIRE(log->append_one(std::string(50, 'w')).is_ok());
  auto segs = log->segments();
  REQUIRE(segs.size() == 2);
  CHECK(segs[1].generation == 1);
  CHECK(segs[1].file_length > segs[1].size);  // stale frames of generation 65535 behind the EOF
  auto want = contents(*log);
  log.reset();
  CHECK(contents(*f.open()) == want);
  CHECK(f.clean());
}

TEST_CASE("a scanner holding a segment that truncate_before removes keeps reading and moves on") {
  TempDir t;
  Options o;
  o.max_segment_size = 600;
  auto log = std::move(Log::open(t / "log", o)).value();
  for (int i = 0; i < 60; i++) REQUIRE(log->append_one("r" + std::to_string(i) + std::string(20, '-')).is_ok());
  auto sc = std::move(log->scan(0)).value();
  REQUIRE(*sc->next());
  REQUIRE(log->truncate_before(50).is_ok());
  std::vector<uint64_t> seen = {sc->sequence()};
  while (*sc->next()) seen.push_back(sc->sequence());
  // It finishes the segment it holds, then continues where the log now is.
  CHECK(seen.front() == 0);
  CHECK(seen.back() == 59);
  for (size_t i = 1; i < seen.size(); i++) CHECK(seen[i] > seen[i - 1]);
}

TEST_CASE("a truncate_after cut behind a scanner stops it with segment_reaped; one at the cut carries on") {
  Fixture f(4096);
  auto log = f.open();
  f.fill(*log, 20);
  auto behind = std::move(log->scan(0)).value();
  auto at = std::move(log->scan(0)).value();
  for (int i = 0; i < 15; i++) REQUIRE(*behind->next());
  for (int i = 0; i < 10; i++) REQUIRE(*at->next());
  REQUIRE(log->truncate_after(9).is_ok());
  REQUIRE(log->append({"new10", "new11"}).is_ok());
  CHECK(behind->next().status().code() == Errc::segment_reaped);
  REQUIRE(*at->next());
  CHECK(at->sequence() == 10);
  CHECK(at->payload() == "new10");
}

TEST_CASE("a recycled segment stops a scanner that holds it with segment_reaped") {
  Fixture f(600);
  f.opt.max_segments = 2;
  auto log = f.open();
  f.fill(*log, 5);
  auto sc = std::move(log->scan(0)).value();
  REQUIRE(*sc->next());
  f.fill(*log, 60);
  Status st;
  while (true) {
    auto r = sc->next();
    if (!r.is_ok()) {
      st = r.status();
      break;
    }
    if (!*r) break;
  }
  CHECK(st.code() == Errc::segment_reaped);
}

TEST_CASE("segments report created_at and retention_cut computes each policy's cut") {
  Fixture f(600);
  auto log = f.open();
  f.fill(*log, 60);
  auto segs = log->segments();
  REQUIRE(segs.size() >= 4);
  for (size_t i = 1; i < segs.size(); i++) CHECK(segs[i].created_at_ms > segs[i - 1].created_at_ms);
  RetentionPolicy none;
  CHECK(retention_cut(segs, none) == 0);
  RetentionPolicy keep;
  keep.keep_records = 10;
  CHECK(retention_cut(segs, keep) == 50);
  keep.keep_records = 1000;
  CHECK(retention_cut(segs, keep) == 0);
  RetentionPolicy ks;
  ks.keep_segments = 2;
  CHECK(retention_cut(segs, ks) == segs[segs.size() - 2].first_sequence);
  RetentionPolicy kb;
  kb.keep_bytes = segs.back().file_length + segs[segs.size() - 2].file_length;
  CHECK(retention_cut(segs, kb) == segs[segs.size() - 2].first_sequence);
  kb.keep_bytes = 1;  // never the active segment
  CHECK(retention_cut(segs, kb) == segs.back().first_sequence);
  RetentionPolicy age;
  age.older_than_ms = segs[2].created_at_ms;  // segments 0 and 1 are older than segment 2's creation
  CHECK(retention_cut(segs, age) == segs[1].first_sequence);
  age.older_than_ms = segs[2].created_at_ms + 1;
  CHECK(retention_cut(segs, age) == segs[2].first_sequence);
  RetentionPolicy both = ks;
  both.keep_records = 5;  // the strictest wins
  CHECK(retention_cut(segs, both) == 55);
  REQUIRE(log->truncate_before(retention_cut(segs, ks)).is_ok());
  CHECK(log->segments().size() == 2);
}

namespace {

// Runs `op` on a fully synced log with a power failure at the nth call of
// every kind in turn, then crashes and reopens: the records must be a
// contiguous run whose every record matches `old` or `want`, holding at
// least what both agree on.
void crash_every_step(const std::function<void(Fixture&, Log&)>& setup,
                      const std::function<Status(Log&)>& op, const char* what) {
  for (Op kind : {Op::write, Op::sync, Op::truncate, Op::rename, Op::unlink, Op::sync_dir, Op::create}) {
    for (uint64_t nth = 1;; nth++) {
      Fixture f;
      Records old, want;
      {
        auto log = f.open();
        setup(f, *log);
        REQUIRE(log->sync().is_ok());
        old = contents(*log);
      }
      {
        auto log = f.open();
        f.fs.fail(kind, nth, FaultKind::power_off);
        Status st = op(*log);
        if (f.fs.faults_injected() == 0) {
          REQUIRE_MESSAGE(st.is_ok(), st.to_string());
          break;  // the operation has fewer such calls: done with this kind
        }
      }
      // What the operation would have produced, from a replay without faults.
      {
        Fixture g;
        auto log = g.open();
        setup(g, *log);
        REQUIRE(op(*log).is_ok());
        want = contents(*log);
      }
      f.fs.clear_faults();
      f.fs.crash(nth * 7919 + uint64_t(kind), CrashWeights::format_model());
      auto log = f.open();
      Records got = contents(*log);
      CAPTURE(what);
      CAPTURE(op_name(kind));
      CAPTURE(nth);
      uint64_t prev = 0;
      bool first = true;
      // Not structured bindings: clang 14 cannot capture one (CHECK_MESSAGE is a lambda).
      for (const auto& sp : got) {
        const auto& s = sp.first;
        const auto& p = sp.second;
        if (!first) CHECK(s == prev + 1);
        first = false;
        prev = s;
        bool ok = (old.count(s) && old[s] == p) || (want.count(s) && want[s] == p);
        CHECK_MESSAGE(ok, "record " << s << " matches neither the old nor the new state");
      }
      for (const auto& sp : want) {
        const auto& s = sp.first;
        if (old.count(s) && old[s] == sp.second)
          CHECK_MESSAGE(got.count(s), "record " << s << " lost");
      }
      CHECK(f.clean());
    }
  }
}

}  // namespace

TEST_CASE("a crash after any file-system step of truncate_before leaves the old, new or an in-between state") {
  crash_every_step([](Fixture& f, Log& l) { f.fill(l, 60); },
                   [](Log& l) { return l.truncate_before(45); }, "truncate_before");
}

TEST_CASE("a crash after any file-system step of truncate_after leaves the old, new or an in-between state") {
  crash_every_step([](Fixture& f, Log& l) { f.fill(l, 60); },
                   [](Log& l) { return l.truncate_after(12); }, "truncate_after");
}

TEST_CASE("a crash after any file-system step of a recycling append leaves the old, new or an in-between state") {
  crash_every_step(
      [](Fixture& f, Log& l) {
        (void)f;
        for (int i = 0; i < 12; i++) REQUIRE(l.append_one(std::string(120, char('a' + i))).is_ok());
      },
      [](Log& l) { return l.append({std::string(150, 'R'), std::string(150, 'S')}).take_status(); },
      "recycle");
}

TEST_CASE("a write open finishes a truncation that a crash cut between its two slot writes") {
  Fixture f;
  auto log = f.open();
  f.fill(*log, 60);
  auto segs = log->segments();
  const uint64_t mid = segs[1].first_sequence + 1;
  const std::string path = "/t/log/" + segs[1].file;
  const std::string old_header = f.fs.read_all(path).value().substr(0, format::kHeaderSize);
  REQUIRE(log->truncate_before(mid).is_ok());
  log.reset();
  // As if the crash came after the first slot write: the losing slot still
  // holds the fields from before the truncation (and an older counter).
  std::string img = f.fs.read_all(path).value();
  auto slots_of = [&](const std::string& bytes) {
    return format::choose_slot(reinterpret_cast<const uint8_t*>(bytes.data()), segs[1].start_sequence);
  };
  format::SlotChoice now = slots_of(img);
  REQUIRE(now.winner >= 0);
  const size_t loser_at = now.winner == 0 ? format::kSlotBOffset : format::kSlotAOffset;
  format::SlotChoice before = slots_of(old_header);
  REQUIRE(before.winner >= 0);
  format::Slot old = before.slot[before.winner];
  REQUIRE(old.first_sequence < mid);
  old.counter = uint16_t(now.slot[now.winner].counter - 1);
  uint8_t enc[format::kSlotSize];
  format::encode_slot(old, enc);
  img.replace(loser_at, format::kSlotSize, reinterpret_cast<const char*>(enc), format::kSlotSize);
  REQUIRE(f.fs.set_contents(path, img).is_ok());
  REQUIRE(slots_of(img).slot[1 - now.winner].first_sequence < mid);
  // The write open rewrites the losing slot: then a damaged winner cannot
  // bring back the removed records.
  f.open().reset();
  img = f.fs.read_all(path).value();
  format::SlotChoice fixed = slots_of(img);
  REQUIRE(fixed.state[0] == format::SlotState::valid);
  REQUIRE(fixed.state[1] == format::SlotState::valid);
  CHECK(fixed.slot[0].first_sequence == mid);
  CHECK(fixed.slot[1].first_sequence == mid);
  const size_t winner_at = fixed.winner == 0 ? format::kSlotAOffset : format::kSlotBOffset;
  img[winner_at + 3] = char(img[winner_at + 3] ^ 0x10);
  REQUIRE(f.fs.set_contents(path, img).is_ok());
  Options ro = f.opt;
  auto reader = Log::open_read("/t/log", ro);
  REQUIRE(reader.is_ok());
  CHECK((*reader)->first_sequence() == mid);
}
