// Salvage (recover --force): the salvage vectors' after/ bytes, byte for
// byte; kept and lost ranges as expect.json says; no sequence moves.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "alog/log.h"
#include "alog/scanner.h"
#include "alog/verify.h"
#include "salvage.h"
#include "support/util.h"

using namespace alog;
using namespace alog::detail;
using namespace alog::test;
using nlohmann::json;

namespace {

const std::string kVectors = std::string(ALOG_TESTDATA_DIR) + "/vectors";

std::vector<std::pair<uint64_t, uint64_t>> runs_of(const json& v) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (const json& r : v) out.push_back({r["first_seq"].get<uint64_t>(), r["last_seq"].get<uint64_t>()});
  return out;
}

// Lost and kept sequences of a whole plan, merged across segments; the
// segments the plan does not touch count as kept.
void plan_runs(const SalvagePlan& p, const VerifyReport& before,
               std::vector<std::pair<uint64_t, uint64_t>>* lost,
               std::vector<std::pair<uint64_t, uint64_t>>* kept) {
  std::vector<SeqRun> l, k;
  for (const auto& s : p.segments) l.insert(l.end(), s.lost.begin(), s.lost.end());
  std::vector<bool> is_lost(p.next_sequence, false);
  for (const SeqRun& r : l)
    for (uint64_t q = r.first; q <= r.last; q++) is_lost[q] = true;
  const uint64_t first = before.first_sequence.value_or(0);
  for (uint64_t q = first; q < p.next_sequence; q++) {
    auto& v = is_lost[q] ? *lost : *kept;
    if (!v.empty() && v.back().second + 1 == q) v.back().second = q;
    else v.push_back({q, q});
  }
}

void check_salvage_vector(const std::string& name) {
  CAPTURE(name);
  const json e = json::parse(read_file(kVectors + "/" + name + "/expect.json"))["salvage"];
  TempDir t;
  copy_tree(kVectors + "/" + name + "/log", t / "log");
  VerifyOptions vo;
  auto d = verify_detail(t / "log", vo);
  REQUIRE(d.is_ok());
  SalvageOptions so;
  so.checkpoint_stride = 4;  // the log's alog.json
  auto plan = plan_salvage(posix_fs(), t / "log", *d, so, 1767225700000);
  REQUIRE(plan.is_ok());
  REQUIRE_MESSAGE(plan->refused.empty(), plan->refused);
  CHECK(plan->next_sequence == e["next_sequence"].get<uint64_t>());
  std::vector<std::string> rebuilt, created;
  for (const auto& s : plan->segments) (s.create ? created : rebuilt).push_back(s.file);
  CHECK(rebuilt == e["rebuilt"].get<std::vector<std::string>>());
  CHECK(created == e["created"].get<std::vector<std::string>>());
  std::vector<std::pair<uint64_t, uint64_t>> lost, kept;
  plan_runs(*plan, d->report, &lost, &kept);
  CHECK(lost == runs_of(e["lost_ranges"]));
  CHECK(kept == runs_of(e["kept_ranges"]));

  auto saved = apply_salvage(posix_fs(), t / "log", *plan, 4, 1767225700000);
  REQUIRE_MESSAGE(saved.is_ok(), saved.status().to_string());
  // Not a structured binding: clang 14 cannot capture one (CAPTURE is a lambda).
  for (const auto& item : e["after_sha256"].items()) {
    const std::string file = item.key();
    CAPTURE(file);
    CHECK(sha256_hex(read_file(t / ("log/" + file))) == item.value().get<std::string>());
  }
  // The originals are in lost+found/, byte for byte.
  for (size_t i = 0; i < plan->segments.size(); i++) {
    const auto& s = plan->segments[i];
    if (s.create) continue;
    CHECK(read_file(t / ("log/" + (*saved)[i])) ==
          read_file(kVectors + "/" + name + "/log/" + s.file));
  }
  auto after = verify(t / "log");
  REQUIRE(after.is_ok());
  CHECK(after->clean());
  CHECK(after->next_sequence == e["next_sequence"].get<uint64_t>());
}

}  // namespace

TEST_CASE("salvage leaves every salvage vector's after/ segment files byte for byte") {
  for (const char* name : {"salvage-midlog", "salvage-length-flip", "salvage-missing-segment"})
    check_salvage_vector(name);
}

namespace {

// Plans (and unless refused, applies) a salvage of the log at dir.
SalvagePlan salvage(const std::string& dir, const SalvageOptions& so, bool apply = true) {
  auto d = verify_detail(dir, VerifyOptions{});
  REQUIRE(d.is_ok());
  auto plan = plan_salvage(posix_fs(), dir, *d, so, 1767225700000);
  REQUIRE(plan.is_ok());
  if (apply && plan->refused.empty())
    REQUIRE(apply_salvage(posix_fs(), dir, *plan, so.checkpoint_stride, 1767225700000).is_ok());
  return *plan;
}

void flip(const std::string& path, size_t at) {
  std::string b = read_file(path);
  b[at] = char(b[at] ^ 0x21);
  write_file(path, b);
}

}  // namespace

TEST_CASE("an unreadable first-segment header is refused without --first-seq and salvaged with it") {
  TempDir t;
  copy_tree(kVectors + "/multi-segment/log", t / "log");
  flip(t / "log/00000000000000000000.seg", 20);  // created at: the header CRC fails
  auto before = snapshot_tree(t / "log");
  SalvageOptions so;
  SalvagePlan p = salvage(t / "log", so);
  CHECK(p.refused.find("00000000000000000000.seg:0") != std::string::npos);
  CHECK(p.refused.find("--first-seq") != std::string::npos);
  CHECK(snapshot_tree(t / "log") == before);
  so.first_seq = 0;
  p = salvage(t / "log", so);
  REQUIRE_MESSAGE(p.refused.empty(), p.refused);
  auto rep = verify(t / "log");
  REQUIRE(rep.is_ok());
  CHECK(rep->clean());
  CHECK(rep->records == 174);  // the start came from the name, the generation from the frame at 192
  CHECK(rep->lost_records == 0);
}

TEST_CASE("sequences missing next to a name-derived start are refused without --confirm-missing") {
  TempDir t;
  copy_tree(kVectors + "/multi-segment/log", t / "log");
  REQUIRE(std::remove((t / "log/00000000000000000087.seg").c_str()) == 0);
  flip(t / "log/00000000000000000107.seg", 20);
  SalvageOptions so;
  SalvagePlan p = salvage(t / "log", so);
  CHECK(p.refused.find("--confirm-missing") != std::string::npos);
  so.confirm_missing = true;
  p = salvage(t / "log", so);
  REQUIRE_MESSAGE(p.refused.empty(), p.refused);
  auto rep = verify(t / "log");
  REQUIRE(rep.is_ok());
  CHECK(rep->clean());
  CHECK(rep->lost_records == 20);  // 87-106
  CHECK(rep->next_sequence == 174);
}

TEST_CASE("an unreadable header whose frames cannot tell the generation is refused without --generation") {
  TempDir t;
  copy_tree(kVectors + "/multi-segment/log", t / "log");
  const std::string f = t / "log/00000000000000000061.seg";
  flip(f, 20);                          // the fixed header
  flip(f, 64 + 10);                     // slot A
  flip(f, 128 + 10);                    // slot B
  flip(f, format::kHeaderSize + 16 + 2);  // the first record's payload
  SalvageOptions so;
  SalvagePlan p = salvage(t / "log", so);
  CHECK(p.refused.find("00000000000000000061.seg:0") != std::string::npos);
  CHECK(p.refused.find("--generation") != std::string::npos);
  so.generation = 1;
  p = salvage(t / "log", so);
  REQUIRE_MESSAGE(p.refused.empty(), p.refused);
  auto rep = verify(t / "log");
  REQUIRE(rep.is_ok());
  CHECK(rep->clean());
  CHECK(rep->lost_records == 1);  // the damaged record; its header was confirmed
  CHECK(rep->next_sequence == 174);
}

namespace {

// Rewrites the winning slot of `path` through `edit`, with a valid CRC and a
// counter that still wins.
void forge_slot(const std::string& path, const std::function<void(format::Slot&)>& edit) {
  std::string b = read_file(path);
  auto* p = reinterpret_cast<uint8_t*>(b.data());
  format::SegmentHeader h;
  REQUIRE(format::decode_segment_header(p, &h) == format::HeaderError::none);
  format::SlotChoice c = format::choose_slot(p, h.start_sequence);
  REQUIRE(c.winner >= 0);
  format::Slot s = c.slot[c.winner];
  edit(s);
  s.counter = uint16_t(s.counter + 2);
  format::encode_slot(s, p + (c.winner == 0 ? format::kSlotAOffset : format::kSlotBOffset));
  write_file(path, b);
}

}  // namespace

TEST_CASE("a slot that claims more sequences than its segment can hold is refused, changing nothing") {
  TempDir t;
  copy_tree(kVectors + "/multi-segment/log", t / "log");
  const std::string f = t / "log/00000000000000000165.seg";
  const uint64_t size = read_file(f).size();
  forge_slot(f, [&](format::Slot& s) {  // synced data "beyond the end of the file", 2^60 records
    s.synced_offset = size + 4096;
    s.synced_sequence = uint64_t{1} << 60;
  });
  auto before = snapshot_tree(t / "log");
  SalvageOptions so;
  so.checkpoint_stride = 4;
  SalvagePlan p = salvage(t / "log", so);
  CAPTURE(p.refused);
  CHECK(p.refused.find("00000000000000000165.seg:0") != std::string::npos);
  CHECK(p.refused.find("lost frames") != std::string::npos);
  CHECK(p.refused.find("not trusted") != std::string::npos);
  CHECK(snapshot_tree(t / "log") == before);
}

TEST_CASE("a missing range of more lost frames than a segment can hold needs --confirm-missing") {
  TempDir t;
  copy_tree(kVectors + "/multi-segment/log", t / "log");
  REQUIRE(std::remove((t / "log/00000000000000000087.seg").c_str()) == 0);  // 87-106: 20 sequences
  auto before = snapshot_tree(t / "log");
  SalvageOptions so;
  so.checkpoint_stride = 4;
  so.max_segment_size = 19 * format::kFrameHeaderSize;  // room for 19 lost frames
  SalvagePlan p = salvage(t / "log", so);
  CHECK(p.refused.find("sequences 87-106 are missing") != std::string::npos);
  CHECK(p.refused.find("--confirm-missing") != std::string::npos);
  CHECK(snapshot_tree(t / "log") == before);
  so.max_segment_size = 20 * format::kFrameHeaderSize;  // room for all 20
  p = salvage(t / "log", so, /*apply=*/false);
  CHECK(p.refused.empty());
  so.max_segment_size = 19 * format::kFrameHeaderSize;
  so.confirm_missing = true;
  p = salvage(t / "log", so);
  REQUIRE_MESSAGE(p.refused.empty(), p.refused);
  auto rep = verify(t / "log");
  REQUIRE(rep.is_ok());
  CHECK(rep->clean());
  CHECK(rep->lost_records == 20);
}
