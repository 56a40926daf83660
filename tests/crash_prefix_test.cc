// Every prefix of an unsynced active segment (LevelDB's log tests, exhaustively):
// a crash that keeps the first L bytes of a segment that was never synced must
// recover to exactly the last complete batch at or before L, keep the cut
// bytes in lost+found/, and take appends afterwards.
//
// Three segments of different batch shapes and checkpoint strides, about 67 KB
// each, so about 200,000 prefixes in all. The expected cut comes from a frame
// parser written here, independent of the library's walker.
#include <doctest/doctest.h>

#include <sstream>

#include "alog/format.h"
#include "alog/log.h"
#include "alog/scanner.h"
#include "support/mem_fs.h"
#include "support/oracle.h"
#include "support/workload.h"

using namespace alog;
using namespace alog::test;

namespace {

constexpr const char* kDir = "/db/log";
constexpr uint64_t kTargetSize = 67 * 1024;

struct Shape {
  const char* name;
  uint32_t stride;
  uint64_t start_sequence;
  uint64_t min_records, max_records;  // per batch
  uint64_t min_len, max_len;          // per payload
};

// A batch boundary (FORMAT.md "Batches") and the next sequence there.
struct Boundary {
  uint64_t offset;
  uint64_t next;
};

// Walks a segment image from offset 192 by the format's rules (trusting it:
// it is the library's own unsynced output) and lists every batch boundary.
std::vector<Boundary> boundaries(const std::string& img, uint64_t start, uint64_t* eof_pos) {
  using namespace format;
  std::vector<Boundary> out{{kHeaderSize, start}};
  uint64_t off = kHeaderSize, seq = start;
  const auto* p = reinterpret_cast<const uint8_t*>(img.data());
  while (off + kFrameHeaderSize <= img.size()) {
    uint16_t flags = get16(p + off + 10);
    if (flags == kFlagData || flags == (kFlagData | kFlagBatchEnd)) {
      off += kFrameHeaderSize + get32(p + off);
      seq++;
      if (flags & kFlagBatchEnd) out.push_back({off, seq});
    } else if (flags == kFlagCheckpoint) {
      off += kFrameHeaderSize;
      out.push_back({off, seq});
    } else {
      REQUIRE(flags == (kFlagCheckpoint | kFlagEof));
      *eof_pos = off;
      return out;
    }
  }
  FAIL("no EOF frame");
  return out;
}

struct Built {
  std::string image;  // the segment file: header, frames, EOF, never synced
  std::string name;
  std::vector<std::string> payloads;  // by sequence - start
};

Built build(const Shape& sh, Options opt) {
  MemFs fs;
  REQUIRE(fs.mkdir("/db").is_ok());
  opt.fs = &fs;
  auto log = Log::open(kDir, opt);
  REQUIRE(log.is_ok());
  RngChoices c(sh.stride * 7 + sh.max_len);
  Built b;
  uint64_t tag = 0;
  while ((*log)->segments().back().size < kTargetSize) {
    uint64_t n = sh.min_records + c.below(sh.max_records - sh.min_records + 1);
    std::vector<std::string> batch;
    for (uint64_t i = 0; i < n; i++)
      batch.push_back(make_payload((*log)->next_sequence() + i, ++tag,
                                   sh.min_len + c.below(sh.max_len - sh.min_len + 1)));
    std::vector<std::string_view> v(batch.begin(), batch.end());
    REQUIRE((*log)->append(v).is_ok());
    b.payloads.insert(b.payloads.end(), batch.begin(), batch.end());
  }
  REQUIRE((*log)->segments().size() == 1);
  b.name = (*log)->segments().back().file;
  b.image = *fs.current_image(std::string(kDir) + "/" + b.name);
  // Nothing was synced: the winning slot's synced offset is still 192.
  REQUIRE((*log)->segments().back().synced_offset == format::kHeaderSize);
  // (Closing now changes nothing in the image taken.)
  return b;
}

struct Tally {
  uint64_t prefixes = 0;
  uint64_t mismatches = 0;
  std::vector<std::string> first;
  void bad(uint64_t len, const std::string& what) {
    mismatches++;
    if (first.size() < 8) first.push_back("prefix " + std::to_string(len) + ": " + what);
  }
};

void check_every_prefix(const Shape& sh, Tally& res) {
  Options opt;
  opt.max_segment_size = 1 * kMiB;
  opt.checkpoint_stride = sh.stride;
  opt.start_sequence = sh.start_sequence;
  opt.clock_ms = [] { return uint64_t{1'700'000'000'000}; };
  Built b = build(sh, opt);
  uint64_t eof_pos = 0;
  std::vector<Boundary> bounds = boundaries(b.image, sh.start_sequence, &eof_pos);
  REQUIRE(b.image.size() == eof_pos + format::kFrameHeaderSize);
  const std::string seg = std::string(kDir) + "/" + b.name;
  const std::string lf = std::string(kDir) + "/lost+found";

  MemFs fs;
  REQUIRE(fs.mkdir("/db").is_ok());
  REQUIRE(fs.mkdir(kDir).is_ok());
  MemFs::Snapshot base = fs.snapshot();
  opt.fs = &fs;
  size_t bi = 0;  // bounds[bi] is the last boundary at or before len
  for (uint64_t len = format::kHeaderSize; len <= b.image.size(); len++) {
    while (bi + 1 < bounds.size() && bounds[bi + 1].offset <= len) bi++;
    const Boundary want = bounds[bi];
    const bool whole = len == b.image.size();
    res.prefixes++;
    fs.restore(base);
    REQUIRE(fs.set_contents(seg, std::string_view(b.image).substr(0, len)).is_ok());
    auto log = Log::open(kDir, opt);
    if (!log.is_ok()) {
      res.bad(len, "does not open: " + log.status().to_string());
      continue;
    }
    Log& l = **log;
    if (l.first_sequence() != sh.start_sequence || l.next_sequence() != want.next) {
      res.bad(len, "recovered [" + std::to_string(l.first_sequence()) + ", " +
                       std::to_string(l.next_sequence()) + "), expected [" +
                       std::to_string(sh.start_sequence) + ", " + std::to_string(want.next) + ")");
      continue;
    }
    // The cut bytes, exactly, in lost+found/ (with a manifest); none when whole.
    auto names = fs.list(lf);
    if (whole) {
      if (names.is_ok() && !names->empty()) res.bad(len, "lost+found/ written for a clean segment");
    } else if (!names.is_ok() || names->size() != 2) {
      res.bad(len, "lost+found/ should hold one .bin and one .json");
    } else {
      const std::string& bin = (*names)[0];  // sorted: ".bin" before ".json"
      std::string stem = b.name + "@" + std::to_string(want.offset) + ".";
      if (bin.rfind(stem, 0) != 0 || bin.size() < 4 || bin.substr(bin.size() - 4) != ".bin")
        res.bad(len, "lost+found/ holds " + bin + ", expected " + stem + "*.bin");
      else if (fs.current_image(lf + "/" + bin) != b.image.substr(want.offset, len - want.offset))
        res.bad(len, "lost+found/" + bin + " differs from the cut bytes");
    }
    // Now and then, every surviving payload byte for byte.
    if (len % 613 == 0) {
      auto sc = l.scan(0);
      uint64_t n = 0;
      while (sc.is_ok()) {
        auto more = (*sc)->next();
        if (!more.is_ok() || !*more) break;
        if ((*sc)->payload() != b.payloads[(*sc)->sequence() - sh.start_sequence])
          res.bad(len, "payload of " + std::to_string((*sc)->sequence()) + " differs");
        n++;
      }
      if (n != want.next - sh.start_sequence) res.bad(len, "scan found " + std::to_string(n) + " records");
    }
    // It takes appends, and they survive a reopen.
    auto a = l.append({std::string_view("after the cut")});
    if (!a.is_ok() || *a != want.next) {
      res.bad(len, "append after recovery: " + (a.is_ok() ? std::to_string(*a) : a.status().to_string()));
      continue;
    }
    if (Status st = l.close(); !st.is_ok()) {
      res.bad(len, "close: " + st.to_string());
      continue;
    }
    log->reset();
    auto r = Log::open_read(kDir, opt);
    if (!r.is_ok() || (*r)->next_sequence() != want.next + 1 || !(*r)->torn_tail().empty()) {
      res.bad(len, "reopen after the append: " + (r.is_ok() ? std::to_string((*r)->next_sequence()) : r.status().to_string()));
      continue;
    }
    auto rec = (*r)->read(want.next);
    if (!rec.is_ok() || rec->payload != "after the cut") res.bad(len, "the appended record does not read back");
  }
}

}  // namespace

TEST_CASE("every prefix of an unsynced active segment recovers to the last complete batch before the cut") {
  const Shape shapes[] = {
      // One small record per batch, a checkpoint after every batch.
      {"single records, stride 1", 1, 0, 1, 1, 0, 40},
      // Batches of 1-20 records of up to 300 bytes, a checkpoint every 7 records.
      {"batches of 1-20, stride 7", 7, 1000, 1, 20, 0, 300},
      // Large records crossing 512-byte sectors (some written from the caller's memory), stride 64.
      {"large records, stride 64", 64, 5, 1, 4, 400, 5000},
  };
  uint64_t total = 0;
  for (const Shape& sh : shapes) {
    const std::string name = sh.name;
    CAPTURE(name);
    Tally res;
    check_every_prefix(sh, res);
    std::ostringstream msg;
    for (const auto& f : res.first) msg << f << "\n";
    CHECK_MESSAGE(res.mismatches == 0, msg.str());
    MESSAGE(name << ": " << res.prefixes << " prefixes, " << res.mismatches << " mismatches");
    total += res.prefixes;
  }
  CHECK(total >= 190000);
}
