// Every single-bit flip in small logs, checked against what FORMAT.md says
// verify() must report: the file, the offset, the kind and the class of the
// damage, and nothing else. Where a flip is harmless by the format's rules the
// expected report says so and the comment at that rule says why. Clean logs
// (these and randomly made ones) must verify with no damage at all.
//
// The expectation for each flipped bit is computed from the clean image's
// layout (a frame parser here, independent of the library's walker) and the
// walk's stop conditions, in the order FORMAT.md lists them.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <sstream>

#include "alog/format.h"
#include "alog/log.h"
#include "alog/verify.h"
#include "support/mem_fs.h"
#include "support/oracle.h"
#include "support/workload.h"

using namespace alog;
using namespace alog::test;
using namespace alog::format;

namespace {

constexpr const char* kDir = "/db/log";

// A problem as the test compares it.
struct Key {
  std::string file;
  uint64_t offset;
  std::string kind;
  Classification cls;
  std::optional<uint64_t> cut_at;  // compared only when the expectation sets it
  bool operator<(const Key& o) const {
    return std::tie(file, offset, kind, cls) < std::tie(o.file, o.offset, o.kind, o.cls);
  }
};

std::string text(const Key& k) {
  return k.file + ":" + std::to_string(k.offset) + " " + k.kind + " (" + classification_name(k.cls) +
         ")" + (k.cut_at ? " cut at " + std::to_string(*k.cut_at) : "");
}

std::multiset<Key> keys(const VerifyReport& r) {
  std::multiset<Key> out;
  for (const auto& p : r.problems)
    out.insert({p.file, p.offset.value_or(UINT64_MAX), p.kind, p.classification, p.cut_at});
  return out;
}

// A frame of the clean image.
struct Frame {
  uint64_t offset;
  FrameHeader h;
  uint64_t size() const { return kFrameHeaderSize + (h.is_data() ? h.word : 0); }
};

// What the test knows about one clean segment file.
struct SegLayout {
  std::string name;
  std::string image;
  bool active = false;
  SlotChoice slots;
  uint64_t read_offset = 0, synced_offset = 0, eof_pos = 0;
  std::vector<Frame> frames;       // from the read offset to the EOF, inclusive
  std::set<uint64_t> boundaries;   // batch boundaries (FORMAT.md "Batches") from the read offset
};

SegLayout layout(const std::string& name, const std::string& img, bool active) {
  SegLayout s;
  s.name = name;
  s.image = img;
  s.active = active;
  SegmentHeader h;
  REQUIRE(decode_segment_header(reinterpret_cast<const uint8_t*>(img.data()), &h) == HeaderError::none);
  s.slots = choose_slot(reinterpret_cast<const uint8_t*>(img.data()), h.start_sequence);
  REQUIRE(s.slots.winner >= 0);
  const Slot& w = s.slots.slot[s.slots.winner];
  s.read_offset = w.read_offset;
  s.synced_offset = w.synced_offset;
  s.boundaries = {w.read_offset, w.synced_offset};
  const auto* p = reinterpret_cast<const uint8_t*>(img.data());
  uint64_t off = w.read_offset;
  while (true) {
    REQUIRE(off + kFrameHeaderSize <= img.size());
    Frame f{off, decode_frame_header(p + off)};
    REQUIRE(f.h.flags_valid());
    s.frames.push_back(f);
    if (f.h.is_eof()) break;
    off += f.size();
    if (f.h.is_batch_end() || f.h.is_checkpoint()) s.boundaries.insert(off);
  }
  s.eof_pos = off;
  return s;
}

// The kind a walk reports when it meets `f` with one bit flipped at byte
// `at` (relative to the frame), per the stop conditions of FORMAT.md
// "Walking a segment" in the library's test order: flags, generation,
// reserved bytes, data stride, a lost frame's length, length past the end
// of the file, CRC.
std::string flipped_kind(const Frame& f, uint64_t at, int bit, uint64_t file_len) {
  uint8_t raw[kFrameHeaderSize];
  // Re-encode the clean header, flip, decode.
  put32(raw, f.h.word);
  put16(raw + 4, f.h.stride);
  put16(raw + 6, f.h.reserved);
  put16(raw + 8, f.h.generation);
  put16(raw + 10, f.h.flags);
  put32(raw + 12, f.h.crc);
  if (at >= kFrameHeaderSize) return "frame_crc";  // payload bytes: the data CRC covers them
  raw[at] ^= static_cast<uint8_t>(1 << bit);
  FrameHeader g = decode_frame_header(raw);
  if (!g.flags_valid()) return "bad_flags";  // includes flags 0 ("unwritten")
  if (g.generation != f.h.generation) return "stale_generation";
  if (g.reserved != 0) return "reserved_bytes";
  if (g.is_data()) {
    if (g.stride != 1) return "bad_stride";
    if (g.is_lost() && g.word != 0) return "lost_length";  // Lost flipped on in a record with a payload
    if (f.offset + kFrameHeaderSize + g.word > file_len) return "truncated_payload";
  }
  // Data: the CRC covers bytes 0-11 and the payload; checkpoint and EOF: their
  // own CRC covers bytes 0-11. Either way a flip anywhere in 0-15 that got
  // this far is a CRC mismatch (a flag flip between Data and Data+BatchEnd,
  // or between Checkpoint and EOF, included: the flags are covered).
  return "frame_crc";
}

struct Expect {
  std::set<Key> keys;
  std::string region;  // for the tally
};

struct LogUnderTest {
  std::string what;
  std::vector<SegLayout> segs;
};

// Builds the files of a log on a MemFs through the library, then lays them
// out. The images are the *current* ones (what a crash that kept every write
// would leave), so the active segment has an unsynced tail.
LogUnderTest make_log(const std::string& what, Options opt,
                      const std::function<void(Log&)>& fill) {
  MemFs fs;
  REQUIRE(fs.mkdir("/db").is_ok());
  opt.fs = &fs;
  opt.clock_ms = [] { return uint64_t{1'700'000'000'000}; };
  auto log = Log::open(kDir, opt);
  REQUIRE(log.is_ok());
  fill(**log);
  LogUnderTest t;
  t.what = what;
  auto segs = (*log)->segments();
  for (size_t i = 0; i < segs.size(); i++) {
    auto img = fs.current_image(std::string(kDir) + "/" + segs[i].file);
    REQUIRE(img);
    t.segs.push_back(layout(segs[i].file, *img, i + 1 == segs.size()));
  }
  return t;
}

// Puts a log's files on a fresh MemFs (no writer, no lock).
void install(MemFs& fs, const LogUnderTest& t) {
  REQUIRE(fs.mkdir("/db").is_ok());
  REQUIRE(fs.mkdir(kDir).is_ok());
  for (const auto& s : t.segs) REQUIRE(fs.set_contents(std::string(kDir) + "/" + s.name, s.image).is_ok());
}

VerifyReport verify_fs(MemFs& fs) {
  VerifyOptions vo;
  vo.fs = &fs;
  auto r = verify(kDir, vo);
  REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  return *r;
}

// The new problems of a report relative to the clean one.
std::multiset<Key> minus(std::multiset<Key> a, const std::multiset<Key>& b) {
  for (const auto& k : b) {
    auto it = a.find(k);
    if (it != a.end()) a.erase(it);
  }
  return a;
}

struct Tally {
  uint64_t flips = 0, detected = 0, harmless = 0, mismatches = 0;
  std::map<std::string, uint64_t> regions;
  std::vector<std::string> first;
};

void flip_every_bit(const LogUnderTest& t, Tally& tally) {
  MemFs fs;
  install(fs, t);
  const VerifyReport clean = verify_fs(fs);
  const std::multiset<Key> base = keys(clean);
  for (const auto& k : base) REQUIRE_MESSAGE(k.cls == Classification::warning, text(k));
  for (const SegLayout& s : t.segs) {
    const std::string path = std::string(kDir) + "/" + s.name;
    const int w = s.slots.winner, l = 1 - w;
    const uint64_t win_off = kSlotAOffset + uint64_t(w) * kSlotSize;
    const uint64_t lose_off = kSlotAOffset + uint64_t(l) * kSlotSize;
    // A flipped winning slot is invalid, so the other slot decides: the report
    // must be the one for the same file with the winner never written (all
    // zero), plus a warning for the invalid slot when the other slot wins.
    // The format cannot tell this from a torn slot update (FORMAT.md: "A torn
    // update leaves the old slot in force"), so an older valid loser is in
    // force, which is only damage when it disagrees with the frames (in a
    // sealed segment: a synced offset that is not the EOF position).
    std::set<Key> winner_expect;
    {
      std::string z = s.image;
      std::fill(z.begin() + static_cast<long>(win_off), z.begin() + static_cast<long>(win_off + kSlotSize), '\0');
      REQUIRE(fs.set_contents(path, z).is_ok());
      auto zk = minus(keys(verify_fs(fs)), base);
      bool no_winner = false;
      for (const auto& k : zk) {
        winner_expect.insert(k);
        no_winner |= k.kind == "metadata_slots";
      }
      if (!no_winner) winner_expect.insert({s.name, win_off, "slot_warning", Classification::warning, {}});
    }
    for (uint64_t o = 0; o < s.image.size(); o++) {
      Expect e;
      if (o < kFixedSize) {
        // Magic, version, header size, start sequence, created at, generation,
        // reserved or CRC: the fixed part's CRC covers bytes 0-59.
        e.region = "segment header";
        e.keys = {{s.name, 0, "segment_header", Classification::corruption, {}}};
      } else if (o >= win_off && o < win_off + kSlotSize) {
        e.region = "winning slot";
        e.keys = winner_expect;
      } else if (o >= lose_off && o < lose_off + kSlotSize) {
        // Harmless: the losing slot is not in force; an invalid one is a warning
        // (FORMAT.md: "one that is neither valid nor all zero is reported as a
        // warning when the other wins"). Its CRC keeps a flip from making it valid.
        e.region = "losing slot";
        e.keys = {{s.name, lose_off, "slot_warning", Classification::warning, {}}};
      } else if (o < s.read_offset) {
        // Harmless: frames before the read offset were removed by
        // truncate_before; no walk starts before the read offset.
        e.region = "before the read offset";
      } else if (o < s.eof_pos + kFrameHeaderSize) {
        const Frame* f = nullptr;
        for (const auto& fr : s.frames)
          if (o >= fr.offset && o < fr.offset + fr.size()) f = &fr;
        REQUIRE(f);
        e.region = f->h.is_eof() ? "EOF frame"
                   : f->h.is_checkpoint() ? "checkpoint frame"
                   : o - f->offset < kFrameHeaderSize ? "data frame header"
                                                      : "payload";
        // In a sealed segment any stop is corruption; in the active one a stop
        // before the synced offset is, at or after it a torn tail.
        Classification c = !s.active || f->offset < s.synced_offset ? Classification::corruption
                                                                    : Classification::torn_tail;
        auto b = s.boundaries.upper_bound(f->offset);
        uint64_t cut = *std::prev(b);  // the last batch boundary at or before the stop
        e.keys = {{s.name, f->offset, "", c, cut}};
        // Kind, per bit (below).
      } else {
        // Harmless: bytes after the EOF frame (stale frames of a recycled
        // file) are never part of the log; the clean report already warns.
        e.region = "after the EOF";
      }
      for (int bit = 0; bit < 8; bit++) {
        std::set<Key> want = e.keys;
        if (!want.empty() && want.begin()->kind.empty()) {
          Key k = *want.begin();
          const Frame* f = nullptr;
          for (const auto& fr : s.frames)
            if (k.offset == fr.offset) f = &fr;
          k.kind = flipped_kind(*f, o - f->offset, bit, s.image.size());
          want = {k};
        }
        std::string img = s.image;
        img[o] = static_cast<char>(img[o] ^ (1 << bit));
        REQUIRE(fs.set_contents(path, img).is_ok());
        auto got = minus(keys(verify_fs(fs)), base);
        tally.flips++;
        tally.regions[e.region]++;
        bool same = got.size() == want.size();
        if (same) {
          auto gi = got.begin();
          for (auto wi = want.begin(); wi != want.end(); ++wi, ++gi) {
            if (gi->file != wi->file || gi->offset != wi->offset || gi->kind != wi->kind ||
                gi->cls != wi->cls || (wi->cut_at && gi->cut_at != wi->cut_at))
              same = false;
          }
        }
        bool harmful = false;
        for (const auto& k : want) harmful |= k.cls != Classification::warning;
        (harmful ? tally.detected : tally.harmless) += same;
        if (!same) {
          tally.mismatches++;
          if (tally.first.size() < 10) {
            std::ostringstream m;
            m << t.what << ": " << s.name << " byte " << o << " bit " << bit << " (" << e.region
              << "): expected {";
            for (const auto& k : want) m << " " << text(k);
            m << " } got {";
            for (const auto& k : got) m << " " << text(k);
            m << " }";
            tally.first.push_back(m.str());
          }
        }
      }
    }
    REQUIRE(fs.set_contents(path, s.image).is_ok());
  }
}

std::vector<std::string> batch_of(uint64_t seq, std::initializer_list<size_t> lens) {
  std::vector<std::string> b;
  for (size_t len : lens) b.push_back(make_payload(seq + b.size(), 7, len));
  return b;
}

void append(Log& log, std::initializer_list<size_t> lens) {
  auto b = batch_of(log.next_sequence(), lens);
  std::vector<std::string_view> v(b.begin(), b.end());
  REQUIRE(log.append(v).is_ok());
}

// Two sealed segments and an active one, checkpoints every 3 records, a
// zero-length payload, a read offset moved by truncate_before, and an active
// segment synced half way with an unsynced tail.
LogUnderTest mixed_log() {
  Options opt;
  opt.max_segment_size = 640;
  opt.checkpoint_stride = 3;
  return make_log("mixed log", opt, [](Log& log) {
    append(log, {5});
    append(log, {0, 2, 17});
    append(log, {40});
    append(log, {20, 20});
    append(log, {9});
    append(log, {120, 3});
    append(log, {60, 60, 60, 1});
    append(log, {33});
    append(log, {2});
    append(log, {90, 90});
    REQUIRE(log.truncate_before(2).is_ok());
    append(log, {11});
    append(log, {4, 4});
    REQUIRE(log.sync().is_ok());
    append(log, {25});
    append(log, {7, 8, 9});
    REQUIRE(log.segments().size() >= 3);
  });
}

// Recycling (max segments 2): files of generation 2 and 3 with stale frames
// of the older generation after their EOF, one of them the active segment.
LogUnderTest recycled_log() {
  Options opt;
  opt.max_segment_size = 480;
  opt.max_segments = 2;
  opt.checkpoint_stride = 2;
  return make_log("recycled log", opt, [](Log& log) {
    for (int i = 0; i < 14; i++) append(log, {static_cast<size_t>(30 + 7 * i), 10});
    // Short last batches, so the recycled active file keeps stale bytes.
    append(log, {1});
    REQUIRE(log.sync().is_ok());
    append(log, {2});
    bool stale = false;
    for (const auto& s : log.segments()) stale |= s.generation > 1 && s.file_length > s.size;
    REQUIRE(stale);
  });
}

// One active segment whose synced offset lies between two checkpoints, with
// frames after the second: payload damage before the synced offset makes
// verify walk on tentatively across the synced offset.
LogUnderTest synced_between_checkpoints_log() {
  Options opt;
  opt.checkpoint_stride = 4;
  return make_log("synced between checkpoints", opt, [](Log& log) {
    append(log, {10});
    append(log, {12});
    REQUIRE(log.sync().is_ok());
    append(log, {14, 16});  // pending 4: a checkpoint follows
    append(log, {18});
    append(log, {20, 22, 24});
  });
}

}  // namespace

TEST_CASE("verify reports every single-bit flip in a small log where FORMAT.md says, and nothing else") {
  Tally tally;
  for (const LogUnderTest& t : {mixed_log(), recycled_log(), synced_between_checkpoints_log()}) {
    uint64_t bytes = 0;
    for (const auto& s : t.segs) bytes += s.image.size();
    MESSAGE(t.what << ": " << t.segs.size() << " segments, " << bytes << " bytes");
    flip_every_bit(t, tally);
  }
  std::ostringstream regions;
  for (const auto& [r, n] : tally.regions) regions << "  " << r << ": " << n << " flips\n";
  MESSAGE(tally.flips << " flips: " << tally.detected << " detected and located, " << tally.harmless
                      << " harmless by the format's rules, " << tally.mismatches << " mismatches\n"
                      << regions.str());
  std::ostringstream first;
  for (const auto& f : tally.first) first << f << "\n";
  CHECK_MESSAGE(tally.mismatches == 0, first.str());
}

TEST_CASE("verify finds no damage in clean logs") {
  // The bit-flip logs, and logs of random workloads closed cleanly.
  for (const LogUnderTest& t : {mixed_log(), recycled_log()}) {
    MemFs fs;
    install(fs, t);
    for (const auto& k : keys(verify_fs(fs))) {
      CAPTURE(text(k));
      CHECK(k.kind == "bytes_after_eof");
      CHECK(k.cls == Classification::warning);
    }
  }
  uint64_t logs = 0;
  for (uint64_t seed = 1; seed <= scaled(60); seed++) {
    CAPTURE(seed);
    RngChoices c(seed);
    MemFs fs;
    REQUIRE(fs.mkdir("/db").is_ok());
    Workload wl(fs, kDir, random_options(c, &fs));
    REQUIRE(wl.open(false).ok());
    for (int i = 0; i < 40; i++) wl.step(c);
    REQUIRE(wl.has_log());
    REQUIRE(wl.oracle().close(*wl.log()).is_ok());
    wl.abandon();
    auto r = verify_fs(fs);
    for (const auto& p : r.problems) {
      CAPTURE(p.file);
      CAPTURE(p.kind);
      CAPTURE(p.message);
      CHECK(p.classification == Classification::warning);
      CHECK(p.kind == "bytes_after_eof");
    }
    CHECK(r.clean());
    logs++;
  }
  MESSAGE(logs << " random clean logs verified");
}
