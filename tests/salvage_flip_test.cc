// Salvage against every single-byte flip of a small multi-segment log, and a
// crash at every file-system step of a salvage (MemFs): every record keeps
// its sequence, only what FORMAT.md's step 1 cannot prove is lost, and no
// sequence ever moves.
#include <doctest/doctest.h>

#include <map>

#include "alog/log.h"
#include "alog/scanner.h"
#include "alog/verify.h"
#include "salvage.h"
#include "support/mem_fs.h"

using namespace alog;
using namespace alog::detail;
using namespace alog::test;

namespace {

const std::string kDir = "/db/log";
constexpr uint32_t kStride = 4;

// Three sealed segments and an active one, batches of 1-5 records.
std::map<uint64_t, std::string> make_log(MemFs& fs) {
  REQUIRE(fs.mkdir("/db"));
  Options o;
  o.fs = &fs;
  o.max_segment_size = 700;
  o.checkpoint_stride = kStride;
  o.sync_on_append = true;
  uint64_t t = 1767225600000;
  o.clock_ms = [&t] { return t += 1000; };
  std::map<uint64_t, std::string> recs;
  auto log = Log::open(kDir, o);
  REQUIRE(log.is_ok());
  uint64_t seq = 0;
  for (int b = 0; (*log)->segments().size() < 4; b++) {
    std::vector<std::string> p;
    for (int j = 0; j <= b % 5; j++, seq++) p.push_back("record-" + std::to_string(seq) + std::string(seq % 23, 'x'));
    std::vector<std::string_view> v(p.begin(), p.end());
    auto last = (*log)->append(v);
    REQUIRE(last.is_ok());
    for (size_t j = 0; j < p.size(); j++) recs[*last + 1 - p.size() + j] = p[j];
  }
  REQUIRE((*log)->close().is_ok());
  return recs;
}

struct Outcome {
  Status status;                    // of reading after the salvage
  std::map<uint64_t, std::string> kept;
  std::vector<uint64_t> lost;
  uint64_t next = 0;
  bool clean = false;
  bool refused = false;
  std::string problems;  // after the salvage, for messages
};

Outcome salvage_and_read(MemFs& fs, uint64_t next_seq) {
  Outcome out;
  VerifyOptions vo;
  vo.fs = &fs;
  auto d = verify_detail(kDir, vo);
  REQUIRE(d.is_ok());
  SalvageOptions so;
  so.checkpoint_stride = kStride;
  so.first_seq = 0;  // the operator knows where the log starts and ends
  so.next_seq = next_seq;
  if (d->report.has(Classification::corruption)) {
    auto plan = plan_salvage(fs, kDir, *d, so, 1767225700000);
    REQUIRE(plan.is_ok());
    if (!plan->refused.empty()) {
      out.refused = true;
      return out;
    }
    auto applied = apply_salvage(fs, kDir, *plan, kStride, 1767225700000);
    REQUIRE_MESSAGE(applied.is_ok(), applied.status().to_string());
  }
  // As recover does: the open for writing cuts a torn tail that is the
  // active segment's only damage.
  {
    Options wo;
    wo.fs = &fs;
    auto w = Log::open(kDir, wo);
    REQUIRE_MESSAGE(w.is_ok(), w.status().to_string());
    REQUIRE((*w)->close().is_ok());
  }
  auto after = verify_detail(kDir, vo);
  REQUIRE(after.is_ok());
  out.clean = after->report.clean();
  for (const Problem& p : after->report.problems)
    out.problems += p.file + ":" + std::to_string(p.offset.value_or(0)) + " " + p.kind + " " + p.message + "\n";
  Options o;
  o.fs = &fs;
  auto log = Log::open_read(kDir, o);
  REQUIRE(log.is_ok());
  out.next = (*log)->next_sequence();
  auto sc = (*log)->scan(0);
  REQUIRE(sc.is_ok());
  while (true) {
    auto more = (*sc)->next();
    if (!more.is_ok()) {
      out.status = more.status();
      break;
    }
    if (!*more) break;
    if ((*sc)->lost()) out.lost.push_back((*sc)->sequence());
    else out.kept[(*sc)->sequence()] = std::string((*sc)->payload());
  }
  return out;
}

}  // namespace

TEST_CASE("salvage after any single-byte flip keeps every record at its sequence and verifies clean") {
  MemFs fs;
  const auto recs = make_log(fs);
  const uint64_t next = recs.rbegin()->first + 1;
  const auto snap = fs.snapshot();
  auto names = fs.list(kDir);
  REQUIRE(names.is_ok());
  uint64_t flips = 0, refused = 0, lossless = 0;
  for (const std::string& name : *names) {
    if (!format::parse_segment_name(name)) continue;
    const std::string path = kDir + "/" + name;
    const std::string orig = *fs.read_all(path);
    for (size_t i = 0; i < orig.size(); i++) {
      fs.restore(snap);
      std::string bad = orig;
      bad[i] = char(bad[i] ^ 0x5A);
      REQUIRE(fs.set_contents(path, bad));
      Outcome o = salvage_and_read(fs, next);
      flips++;
      CAPTURE(name);
      CAPTURE(i);
      CHECK_FALSE(o.refused);  // the operator gave the first and next sequences
      if (o.refused) {
        refused++;
        continue;
      }
      CHECK(o.status.is_ok());
      CHECK_MESSAGE(o.clean, o.problems);
      CHECK(o.next == next);  // no sequence moves
      CHECK(o.kept.size() + o.lost.size() == recs.size());
      for (const auto& [seq, payload] : o.kept) {
        auto it = recs.find(seq);
        REQUIRE(it != recs.end());
        CHECK(it->second == payload);  // a kept record is the record written at its sequence
      }
      // A payload flip costs its record; a header flip at most a checkpoint
      // interval and the records of the next one.
      CHECK(o.lost.size() <= 2 * (kStride + 5));
      if (o.lost.empty()) lossless++;
    }
  }
  MESSAGE(flips << " flips: " << lossless << " without loss, " << refused << " refused");
  CHECK(lossless > 0);
}

TEST_CASE("a crash at every file-system step of a salvage leaves the damaged log or the salvaged one") {
  MemFs fs;
  const auto recs = make_log(fs);
  const uint64_t next = recs.rbegin()->first + 1;
  auto names = fs.list(kDir);
  REQUIRE(names.is_ok());
  std::string first;
  for (const auto& n : *names)
    if (format::parse_segment_name(n) && (first.empty() || n < first)) first = n;
  // A payload flip in the first (sealed) segment: salvage rebuilds it.
  const std::string path = kDir + "/" + first;
  std::string bad = *fs.read_all(path);
  bad[format::kHeaderSize + 20] = char(bad[format::kHeaderSize + 20] ^ 0x01);
  REQUIRE(fs.set_contents(path, bad));
  const auto damaged = fs.snapshot();
  VerifyOptions vo;
  vo.fs = &fs;
  auto d = verify_detail(kDir, vo);
  REQUIRE(d.is_ok());
  SalvageOptions so;
  so.checkpoint_stride = kStride;
  auto plan = plan_salvage(fs, kDir, *d, so, 1767225700000);
  REQUIRE(plan.is_ok());
  REQUIRE(plan->refused.empty());
  const Op ops[] = {Op::write, Op::sync, Op::rename, Op::unlink, Op::sync_dir, Op::create, Op::mkdir};
  std::map<Op, uint64_t> calls;
  fs.reset_calls();
  REQUIRE(apply_salvage(fs, kDir, *plan, kStride, 1767225700000).is_ok());
  for (Op op : ops) calls[op] = fs.calls(op);
  uint64_t crashes = 0, salvaged = 0;
  // Each mutating call in turn loses power (several crash images each);
  // last, a salvage that completes, then a crash.
  std::vector<std::pair<Op, uint64_t>> steps;
  for (Op op : ops)
    for (uint64_t nth = 1; nth <= calls[op]; nth++) steps.push_back({op, nth});
  steps.push_back({Op::write, 0});
  for (const auto& step : steps) {
    const Op op = step.first;
    const uint64_t nth = step.second;
    for (uint64_t seed = 0; seed < 4; seed++) {
      CAPTURE(int(op));
      CAPTURE(nth);
      CAPTURE(seed);
      fs.restore(damaged);
      fs.clear_faults();
      fs.reset_calls();
      if (nth) {
        fs.fail(op, nth, FaultKind::power_off);
        CHECK_FALSE(apply_salvage(fs, kDir, *plan, kStride, 1767225700000).is_ok());
      } else {
        REQUIRE(apply_salvage(fs, kDir, *plan, kStride, 1767225700000).is_ok());
      }
      fs.clear_faults();
      fs.crash(nth * 131 + uint64_t(op) * 7 + seed, CrashMode::random);
      crashes++;
      // Opening for writing deletes a leftover .seg.tmp; the log is then the
      // damaged one (the salvage can run again) or the salvaged one.
      Options o;
      o.fs = &fs;
      {
        auto log = Log::open(kDir, o);
        REQUIRE_MESSAGE(log.is_ok(), log.status().to_string());
        CHECK((*log)->next_sequence() == next);
        REQUIRE((*log)->close().is_ok());
      }
      auto rep = verify(kDir, vo);
      REQUIRE(rep.is_ok());
      if (rep->clean()) {
        salvaged++;
        CHECK(rep->lost_records == 1);
        // The original was in lost+found/ before it was replaced.
        auto lf = fs.list(kDir + "/lost+found");
        REQUIRE(lf.is_ok());
        bool has_copy = false;
        for (const auto& n : *lf)
          if (n.size() > 4 && n.compare(n.size() - 4, 4, ".bin") == 0 &&
              *fs.read_all(kDir + "/lost+found/" + n) == bad)
            has_copy = true;
        CHECK(has_copy);
      } else {
        CHECK(*fs.read_all(path) == bad);  // the damaged original, untouched
      }
    }
  }
  MESSAGE(crashes << " crashes, " << salvaged << " left the salvaged log");
  CHECK(crashes > 20);
  CHECK(salvaged >= 4);  // the completed salvage survives every crash
}

TEST_CASE("a payload that holds a whole alog segment, damaged, never yields its embedded frames as records") {
  MemFs fs;
  REQUIRE(fs.mkdir("/db"));
  // The segment to embed: another log's records, generation 1 like ours.
  std::string inner;
  {
    Options o;
    o.fs = &fs;
    o.checkpoint_stride = kStride;
    auto log = Log::open("/db/inner", o);
    REQUIRE(log.is_ok());
    for (int i = 0; i < 12; i++) REQUIRE((*log)->append({"inner-" + std::to_string(i)}).is_ok());
    REQUIRE((*log)->close().is_ok());
    inner = *fs.read_all("/db/inner/" + format::segment_name(0));
  }
  Options o;
  o.fs = &fs;
  o.checkpoint_stride = kStride;
  o.sync_on_append = true;
  std::map<uint64_t, std::string> recs;
  uint64_t embed_offset = 0;
  {
    auto log = Log::open(kDir, o);
    REQUIRE(log.is_ok());
    for (uint64_t i = 0; i < 10; i++) {
      std::string p = i == 5 ? inner : "outer-" + std::to_string(i);
      REQUIRE((*log)->append({p}).is_ok());
      recs[i] = p;
    }
    REQUIRE((*log)->close().is_ok());
  }
  const std::string path = kDir + "/" + format::segment_name(0);
  const std::string orig = *fs.read_all(path);
  embed_offset = orig.find(inner) - format::kFrameHeaderSize;  // record 5's frame
  const auto snap = fs.snapshot();
  // Damage record 5's header and its payload's first bytes, one byte at a time.
  for (uint64_t i = embed_offset; i < embed_offset + format::kFrameHeaderSize + 64; i++) {
    CAPTURE(i);
    fs.restore(snap);
    std::string bad = orig;
    bad[i] = char(bad[i] ^ 0x5A);
    REQUIRE(fs.set_contents(path, bad));
    Outcome out = salvage_and_read(fs, 10);
    CHECK_FALSE(out.refused);
    CHECK(out.next == 10);
    for (const auto& [seq, payload] : out.kept) {
      CHECK(recs.count(seq) == 1);
      CHECK(recs[seq] == payload);  // never an "inner-N" record
    }
  }
}
