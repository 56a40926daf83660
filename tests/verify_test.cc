// verify() and recover() against the conformance vectors and hand-made damage.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "alog/crc32c.h"
#include "alog/format.h"
#include "alog/log.h"
#include "alog/verify.h"
#include "support/util.h"

using namespace alog;
using namespace alog::test;
using nlohmann::json;

namespace {
const std::string kVectors = std::string(ALOG_TESTDATA_DIR) + "/vectors";
json expect(const std::string& name) {
  return json::parse(read_file(kVectors + "/" + name + "/expect.json"));
}
const Problem* first_damage(const VerifyReport& r) {
  for (const auto& p : r.problems)
    if (p.classification != Classification::warning) return &p;
  return nullptr;
}
// Rewrites the winning slot of the segment at `seg` (start sequence `start`)
// with its synced CRC off by one bit, its own CRC valid: damage only the slot
// shows. Returns the slot as it was.
format::Slot flip_synced_crc(const std::string& seg, uint64_t start) {
  std::string bytes = read_file(seg);
  auto* raw = reinterpret_cast<uint8_t*>(bytes.data());
  format::SlotChoice c = format::choose_slot(raw, start);
  REQUIRE(c.winner >= 0);
  format::Slot w = c.slot[c.winner];
  format::Slot bad = w;
  bad.synced_crc ^= 1;
  format::encode_slot(bad, raw + (c.winner == 0 ? format::kSlotAOffset : format::kSlotBOffset));
  write_file(seg, bytes);
  return w;
}
}  // namespace

TEST_CASE("verify finds every clean vector clean with the expected checkpoint counts") {
  for (const char* name : {"seed-append", "multi-segment", "start-sequence", "empty",
                           "checkpoint-first", "truncated"}) {
    CAPTURE(name);
    json e = expect(name);
    auto r = verify(kVectors + "/" + name + "/log");
    REQUIRE(r.is_ok());
    CHECK(r->clean());
    CHECK(r->problems.empty());
    CHECK(r->records == e["count"].get<uint64_t>());
    REQUIRE(r->segments.size() == e["segments"].size());
    for (size_t i = 0; i < r->segments.size(); i++) {
      CHECK(r->segments[i].checkpoints == e["segments"][i]["checkpoints"].get<uint64_t>());
      CHECK(r->segments[i].size == e["segments"][i]["size"].get<uint64_t>());
      CHECK(r->segments[i].next_sequence == e["segments"][i]["next"].get<uint64_t>());
    }
  }
}

TEST_CASE("verify reports the first damage of every damaged vector exactly as expect.json says") {
  for (const char* name : {"torn-tail", "unsynced-damage", "midlog-corruption", "sealed-length-flip"}) {
    CAPTURE(name);
    json e = expect(name);
    std::string dir = kVectors + "/" + name + "/log";
    auto before = snapshot_tree(dir);
    auto r = verify(dir);
    REQUIRE(r.is_ok());
    CHECK_FALSE(r->clean());
    const Problem* p = first_damage(*r);
    REQUIRE(p);
    CHECK(p->file == e["damage"]["file"].get<std::string>());
    CHECK(p->offset == e["damage"]["offset"].get<uint64_t>());
    CHECK(p->cut_at == e["damage"]["cut_at"].get<uint64_t>());
    CHECK(classification_name(p->classification) == e["damage"]["classification"].get<std::string>());
    CHECK(snapshot_tree(dir) == before);
  }
}

TEST_CASE("headers-only verify finds a flipped length field without reading payloads") {
  VerifyOptions o;
  o.headers_only = true;
  auto r = verify(kVectors + "/sealed-length-flip/log", o);
  REQUIRE(r.is_ok());
  const Problem* p = first_damage(*r);
  REQUIRE(p);
  CHECK(p->file == "00000000000000000000.seg");
  CHECK(p->classification == Classification::corruption);
}

TEST_CASE("verify goes on past payload damage that a later checkpoint confirms") {
  TempDir t;
  copy_tree(kVectors + "/multi-segment/log", t / "log");
  // Payload of sequence 3 (its frame at 240, 111 bytes) in the first, sealed
  // segment; the checkpoint after it (stride 4) confirms the header.
  flip_bit(t / "log/00000000000000000000.seg", 256 + 5, 0);
  auto r = verify(t / "log");
  REQUIRE(r.is_ok());
  int damaged = 0;
  for (const auto& p : r->problems) {
    if (p.kind == "frame_crc") {
      damaged++;
      CHECK(p.first_seq == 3);
      CHECK(p.last_seq == 3);
      CHECK(p.offset == 240);
      CHECK(p.cut_at == 240);
    }
  }
  CHECK(damaged == 1);
  CHECK(r->records == 174);
  CHECK(r->segments.back().clean);
}

TEST_CASE("verify goes on in the slot's synced state when the walk disagrees with it, as readers do") {
  // Damage before the synced offset that only the slot can show: its synced
  // CRC no longer matches the headers. Readers and the writer walk the tail
  // from the slot's state, so verify must judge the tail in that state too;
  // else the EOF a recovery writes there looks like a torn tail (found by
  // fuzz_reader).
  TempDir t;
  copy_tree(kVectors + "/torn-tail/log", t / "log");
  const std::string seg = t / "log/00000000000000000165.seg";
  const format::Slot w = flip_synced_crc(seg, 165);

  auto kinds = [](const VerifyReport& r) {
    std::vector<std::string> v;
    for (const auto& p : r.problems) v.push_back(p.kind + "/" + classification_name(p.classification));
    return v;
  };
  // The checkpoint after the synced offset was written in the true state,
  // so a walk in the slot's state stops there: a torn tail, as for readers.
  auto r = verify(t / "log");
  REQUIRE(r.is_ok());
  CHECK(kinds(*r) == std::vector<std::string>{"synced_offset/corruption", "checkpoint_crc/torn_tail"});
  CHECK(r->problems[0].offset == w.synced_offset);
  const uint64_t next = r->next_sequence;
  auto reader = Log::open_read(t / "log");
  REQUIRE(reader.is_ok());
  CHECK((*reader)->next_sequence() == next);
  reader->reset();

  // Recovery cuts the torn tail and writes an EOF in the slot's state.
  {
    auto log = Log::open(t / "log");
    REQUIRE(log.is_ok());
    CHECK((*log)->next_sequence() == next);
    REQUIRE((*log)->close().is_ok());
  }
  r = verify(t / "log");
  REQUIRE(r.is_ok());
  CHECK(kinds(*r) == std::vector<std::string>{"synced_offset/corruption"});
  CHECK(r->next_sequence == next);
}

TEST_CASE("verify does not go on past payload damage when the slot's synced state then disagrees") {
  // Payload damage in seq 167 (frame 434) of the torn-tail vector's active
  // segment, and a synced CRC that no longer matches the headers: going on
  // past the damage would need the synced offset (555) to confirm it, and it
  // does not. So the walk stops at the damage, before and after recovery.
  TempDir t;
  copy_tree(kVectors + "/torn-tail/log", t / "log");
  const std::string seg = t / "log/00000000000000000165.seg";
  flip_bit(seg, 434 + 16 + 7, 2);
  REQUIRE(flip_synced_crc(seg, 165).synced_offset == 555);
  auto first_damage_kind = [&] {
    auto r = verify(t / "log");
    REQUIRE(r.is_ok());
    const Problem* p = first_damage(*r);
    REQUIRE(p);
    CHECK(p->offset == 434);
    CHECK(p->kind == "frame_crc");
    CHECK(p->classification == Classification::corruption);
    for (const auto& q : r->problems) CHECK(q.classification != Classification::torn_tail);
    return r->next_sequence;
  };
  CHECK(first_damage_kind() == 165);  // the damaged frame ends the batch 165-167
  {
    auto log = Log::open(t / "log");
    REQUIRE(log.is_ok());
    REQUIRE((*log)->close().is_ok());
  }
  CHECK(first_damage_kind() == 165);  // the damaged frame ends the batch 165-167
}

TEST_CASE("verify reports a sequence gap between segments") {
  TempDir t;
  copy_tree(kVectors + "/multi-segment/log", t / "log");
  remove_tree(t / "log/00000000000000000061.seg");
  auto r = verify(t / "log");
  REQUIRE(r.is_ok());
  bool gap = false;
  for (const auto& p : r->problems)
    if (p.kind == "sequence_gap") {
      gap = true;
      CHECK(p.file == "00000000000000000087.seg");
      CHECK(p.first_seq == 61);
      CHECK(p.last_seq == 86);
    }
  CHECK(gap);
}

TEST_CASE("verify of a directory without segments is a not_a_log error") {
  TempDir t;
  write_file(t / "notes.txt", "hello");
  auto r = verify(t.path());
  CHECK(r.status().code() == Errc::not_a_log);
  auto m = verify(t / "missing");
  CHECK(m.status().code() == Errc::not_found);
}

TEST_CASE("recover cuts a torn tail and keeps the cut bytes in lost+found") {
  json e = expect("torn-tail");
  TempDir t;
  copy_tree(kVectors + "/torn-tail/log", t / "log");
  auto r = recover(t / "log");
  REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  CHECK(r->applied);
  CHECK_FALSE(r->refused);
  REQUIRE(r->actions.size() == 1);
  CHECK(r->actions[0].action == "cut");
  CHECK(r->actions[0].offset == e["damage"]["cut_at"].get<uint64_t>());
  CHECK(file_exists(t / ("log/" + r->actions[0].saved_to)));
  CHECK(r->actions[0].saved_to.rfind("lost+found/00000000000000000165.seg@683.", 0) == 0);
  CHECK(r->after.clean());
  CHECK(r->after.records == e["after_recover"]["count"].get<uint64_t>());
  CHECK(file_size(t / "log/00000000000000000165.seg") == e["after_recover"]["file_size"].get<uint64_t>());
  CHECK(list_dir(t / "log/lost+found").size() == 2);
}

TEST_CASE("recover refuses corruption without force and changes nothing") {
  TempDir t;
  copy_tree(kVectors + "/midlog-corruption/log", t / "log");
  auto before = snapshot_tree(t / "log");
  auto r = recover(t / "log");
  REQUIRE(r.is_ok());
  CHECK(r->refused);
  CHECK_FALSE(r->applied);
  auto after = snapshot_tree(t / "log");
  after.erase("LOCK");
  CHECK(after == before);
}

TEST_CASE("a dry-run recover plans the cut and changes nothing") {
  TempDir t;
  copy_tree(kVectors + "/torn-tail/log", t / "log");
  auto before = snapshot_tree(t / "log");
  RecoverOptions o;
  o.dry_run = true;
  auto r = recover(t / "log", o);
  REQUIRE(r.is_ok());
  CHECK_FALSE(r->applied);
  REQUIRE(r->actions.size() == 1);
  CHECK(snapshot_tree(t / "log") == before);
}

TEST_CASE("a forced recover salvages a flipped length: records 0-3 lost, every other record keeps its sequence") {
  TempDir t;
  copy_tree(kVectors + "/salvage-length-flip/log", t / "log");
  RecoverOptions o;
  o.force = true;
  o.checkpoint_stride = 4;  // the log's alog.json
  auto r = recover(t / "log", o);
  REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  CHECK(r->applied);
  CHECK(r->after.clean());
  CHECK(r->after.records == 170);
  CHECK(r->after.lost_records == 4);
  REQUIRE(r->actions.size() == 1);
  CHECK(r->actions[0].action == "salvage");
  CHECK(r->actions[0].records_dropped == 4);
  CHECK(read_file(t / "log/00000000000000000000.seg") ==
        read_file(kVectors + "/salvage-length-flip/after/00000000000000000000.seg"));
  CHECK(read_file(t / ("log/" + r->actions[0].saved_to)) ==
        read_file(kVectors + "/salvage-length-flip/log/00000000000000000000.seg"));
  auto log = Log::open(t / "log");
  REQUIRE(log.is_ok());
  CHECK((*log)->next_sequence() == 174);  // never renumbered
  auto again = (*log)->append({"again"});
  REQUIRE(again.is_ok());
  CHECK(*again == 174);
}

TEST_CASE("a forced recover of midlog corruption loses only the damaged record") {
  TempDir t;
  copy_tree(kVectors + "/salvage-midlog/log", t / "log");
  RecoverOptions o;
  o.force = true;
  o.checkpoint_stride = 4;
  auto r = recover(t / "log", o);
  REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  CHECK(r->after.clean());
  CHECK(r->after.records == 173);
  CHECK(r->after.lost_records == 1);
  auto log = Log::open(t / "log");
  REQUIRE(log.is_ok());
  CHECK((*log)->next_sequence() == 174);
  CHECK((*log)->read(165).status().code() == Errc::lost);
  CHECK((*log)->read(166).is_ok());
}

TEST_CASE("a forced recover refuses to salvage an unreadable first-segment slot without --first-seq") {
  TempDir t;
  copy_tree(kVectors + "/multi-segment/log", t / "log");
  // Garble both slots of the first segment: no valid slot is left.
  std::string f = t / "log/00000000000000000000.seg";
  std::string b = read_file(f);
  b[64 + 10] = char(b[64 + 10] ^ 0x40);
  b[128 + 10] = char(b[128 + 10] ^ 0x40);
  write_file(f, b);
  auto before = snapshot_tree(t / "log");
  RecoverOptions o;
  o.force = true;
  auto r = recover(t / "log", o);
  REQUIRE(r.is_ok());
  CHECK(r->refused);
  CHECK(r->refusal.find("00000000000000000000.seg") != std::string::npos);
  CHECK(r->refusal.find("--first-seq") != std::string::npos);
  auto after = snapshot_tree(t / "log");
  after.erase("LOCK");
  CHECK(after == before);
  o.first_seq = 0;
  auto r2 = recover(t / "log", o);
  REQUIRE_MESSAGE(r2.is_ok(), r2.status().to_string());
  CHECK_FALSE(r2->refused);
  CHECK(r2->after.clean());
  CHECK(r2->after.records == 174);
}

TEST_CASE("a synced offset inside a batch is a batch boundary: a torn tail after it is cut there, not at the batch's start") {
  TempDir t;
  const std::string d = t / "log";
  {
    auto log = Log::open(d);
    REQUIRE(log.is_ok());
    const std::string rec(100, 'r');
    REQUIRE((*log)->append({rec, rec, rec}).is_ok());  // frames at 192, 308 and 424, then the EOF
    REQUIRE((*log)->close().is_ok());
  }
  // The slot says the first two frames are synced (as a writer may leave
  // it: FORMAT.md counts the synced offset among batch boundaries); the
  // third frame's payload is damaged.
  const std::string seg = d + "/00000000000000000000.seg";
  std::string bytes = read_file(seg);
  auto* raw = reinterpret_cast<uint8_t*>(bytes.data());
  format::SlotChoice c = format::choose_slot(raw, 0);
  REQUIRE(c.winner >= 0);
  format::Slot s = c.slot[c.winner];
  s.synced_offset = 424;
  s.synced_sequence = 2;
  s.synced_crc = crc32c_extend(crc32c_extend(0, raw + 192, 16), raw + 308, 16);
  s.synced_pending = 2;
  format::encode_slot(s, raw + (c.winner == 0 ? format::kSlotAOffset : format::kSlotBOffset));
  raw[424 + 16 + 10] ^= 0xff;
  write_file(seg, bytes);
  auto r = verify(d);
  REQUIRE(r.is_ok());
  const Problem* p = first_damage(*r);
  REQUIRE(p);
  CHECK(p->classification == Classification::torn_tail);
  CHECK(p->offset == 424);
  CHECK(p->cut_at == 424);
  CHECK(p->first_seq == 2);
  CHECK(r->next_sequence == 2);
}
