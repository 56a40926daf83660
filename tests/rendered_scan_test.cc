// scan_rendered (alog/rendered_scan.h) against a Scanner: the records it
// writes, followed by what a Scanner reads from where it stopped, are what
// a Scanner reads on its own, errors included, on the conformance vectors,
// random logs, damaged logs, logs with lost frames and payloads that look
// like checkpoints, whatever the threads and the size of the parts.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <stdexcept>

#include "alog/crc32c.h"
#include "alog/format.h"
#include "alog/log.h"
#include "alog/rendered_scan.h"
#include "alog/scanner.h"
#include "alog/verify.h"
#include "scanner_batch_util.h"
#include "support/util.h"

using namespace alog;
using namespace alog::test;

namespace {

struct Reading {
  std::vector<std::string> items;  // "seq record|lost payload-hex"
  std::string end;                 // "end", or the error
  uint64_t rendered = 0;           // records scan_rendered wrote
};

// What sc reads, appended to r.
void read_rest(Scanner& sc, Reading& r) {
  while (true) {
    auto more = sc.next();
    if (!more.is_ok()) {
      r.end = error_item(more.status());
      return;
    }
    if (!*more) break;
    r.items.push_back(record_item(sc.sequence(), sc.lost(), sc.payload()));
  }
  r.end = "end";
}

// A Scanner's reading from `from` on, appended to r.
void scan_rest(const Log& log, uint64_t from, Reading& r) {
  auto sc = log.scan(from);
  REQUIRE(sc.is_ok());
  read_rest(**sc, r);
}

// scan_rendered from `from`, each record rendered as its payload in hex and
// a newline, then the Scanner it returns.
Reading rendered_then_scanned(const Log& log, uint64_t from, size_t threads, uint64_t part_bytes) {
  Reading r;
  RenderedScanOptions o;
  o.threads = threads;
  o.part_bytes = part_bytes;
  o.render = [](std::span<const std::string_view> payloads, RenderedBytes& out) {
    for (std::string_view p : payloads) {
      const std::string line = hex(std::string(p)) + "\n";
      std::memcpy(out.reserve(line.size()), line.data(), line.size());
      out.commit(line.size());
    }
  };
  std::optional<uint64_t> expect_first;
  o.write = [&](std::string_view bytes, uint64_t first, uint64_t records, uint32_t last_crc) -> Status {
    if (expect_first) CHECK(first == *expect_first);
    expect_first = first + records;
    uint64_t seq = first;
    size_t at = 0;
    std::string last;
    for (size_t nl; (nl = bytes.find('\n', at)) != std::string_view::npos; at = nl + 1) {
      last = std::string(bytes.substr(at, nl - at));
      r.items.push_back(std::to_string(seq++) + " record " + last);
    }
    CHECK(at == bytes.size());
    CHECK(seq == first + records);
    const std::string payload = unhex(last);
    CHECK(last_crc == crc32c(payload.data(), payload.size()));
    r.rendered += records;
    return {};
  };
  auto sc = scan_rendered(log, from, o);
  REQUIRE(sc.is_ok());
  if (expect_first) CHECK((*sc)->position() == *expect_first);
  read_rest(**sc, r);
  return r;
}

// Every way of reading `dir` with scan_rendered reads what a Scanner reads;
// returns the records it wrote from the log's first record with 2 threads
// and small parts.
uint64_t check_same_reading(const std::string& dir) {
  auto log = Log::open_read(dir);
  if (!log.is_ok()) return 0;  // nothing a scanner could read
  const uint64_t first = (*log)->first_sequence(), next = (*log)->next_sequence();
  uint64_t wrote = 0;
  for (uint64_t from : {uint64_t{0}, first, first + 1, first + (next - first) / 2, next, next + 3}) {
    Reading want;
    scan_rest(**log, from, want);
    for (size_t threads : {size_t{1}, size_t{2}, size_t{4}})
      for (uint64_t part : {uint64_t{16}, uint64_t{300}, uint64_t{2000}, uint64_t{1} << 20}) {
        INFO(dir << " from " << from << " threads " << threads << " parts of " << part << " B");
        Reading got = rendered_then_scanned(**log, from, threads, part);
        CHECK(got.items == want.items);
        CHECK(got.end == want.end);
        if (from == first && threads == 2 && part == 300) wrote = got.rendered;
      }
  }
  return wrote;
}

}  // namespace

TEST_CASE("a rendered scan reads every conformance vector as a Scanner does") {
  const std::string vectors = std::string(ALOG_TESTDATA_DIR) + "/vectors";
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(vectors)) {
    if (!e.is_directory()) continue;
    check_same_reading(e.path().string() + "/log");
    n++;
  }
  CHECK(n >= 14);
}

TEST_CASE("a rendered scan of an intact random log writes every record itself, in parts on several threads") {
  for (uint32_t seed = 1; seed <= 6; seed++) {
    TempDir t;
    const std::string d = t / "log";
    RandomLog made = make_random_log(d, seed);
    auto log = Log::open_read(d);
    REQUIRE(log.is_ok());
    CHECK(check_same_reading(d) == made.payloads.size());
    Reading got = rendered_then_scanned(**log, 0, 3, 64);
    REQUIRE(got.items.size() == made.payloads.size());
    for (size_t i = 0; i < made.payloads.size(); i++)
      CHECK(got.items[i] == record_item(i, false, made.payloads[i]));
  }
}

TEST_CASE("a rendered scan of a damaged log stops where a Scanner takes over and meets the damage as it does") {
  int partly = 0;
  for (uint32_t seed = 1; seed <= 48; seed++) {
    TempDir t;
    const std::string d = t / "log";
    RandomLog made = make_random_log(d, seed);
    damage_random_log(made, seed);
    const uint64_t wrote = check_same_reading(d);
    partly += wrote > 0 && wrote < made.payloads.size();
  }
  CHECK(partly >= 12);  // the parallel reading stopped partway, the Scanner went on
}

TEST_CASE("a rendered scan stops before a lost record and the Scanner reads it as lost") {
  for (uint32_t seed = 100; seed < 106; seed++) {
    TempDir t;
    const std::string d = t / "log";
    RandomLog made = make_random_log(d, seed);
    salvage_random_log(d, made, seed);
    check_same_reading(d);
  }
  check_same_reading(std::string(ALOG_TESTDATA_DIR) + "/vectors/salvaged/log");
}

TEST_CASE("a payload that looks like a checkpoint where a part would begin does not change what is read") {
  // Records whose payloads hold a whole checkpoint frame of the segment's
  // generation, its own CRC valid: a part begins there, and the part before
  // it ends on a real checkpoint after it instead.
  TempDir t;
  const std::string d = t / "log";
  Options opt;
  opt.checkpoint_stride = 20;  // real checkpoints too: parts end on them
  uint8_t cp[format::kFrameHeaderSize];
  format::encode_checkpoint(0, 0, /*generation=*/1, /*eof=*/false, cp);
  std::vector<std::string> payloads;
  {
    auto log = Log::open(d, opt);
    REQUIRE(log.is_ok());
    for (int i = 0; i < 400; i++) {
      std::string p = "record " + std::to_string(i) + " ";
      for (int k = 0; k < 3; k++) p += std::string(reinterpret_cast<const char*>(cp), 16) + "pad";
      payloads.push_back(p);
      REQUIRE((*log)->append({std::string_view(p)}).is_ok());
    }
    REQUIRE((*log)->close().is_ok());
  }
  auto log = Log::open_read(d);
  REQUIRE(log.is_ok());
  for (uint64_t part : {uint64_t{100}, uint64_t{1000}, uint64_t{5000}}) {
    Reading got = rendered_then_scanned(**log, 0, 2, part);
    REQUIRE(got.items.size() == payloads.size());
    for (size_t i = 0; i < payloads.size(); i++) CHECK(got.items[i] == record_item(i, false, payloads[i]));
    CHECK(got.end == "end");
    CHECK(got.rendered < payloads.size());  // the parts went no further than the first false one
  }
  check_same_reading(d);
}

TEST_CASE("a rendered scan returns the error its write returns, and an exception from write leaves no thread behind") {
  TempDir t;
  const std::string d = t / "log";
  make_random_log(d, 2);
  auto log = Log::open_read(d);
  REQUIRE(log.is_ok());
  RenderedScanOptions o;
  o.threads = 3;
  o.part_bytes = 64;
  o.render = [](std::span<const std::string_view>, RenderedBytes& out) {
    std::memcpy(out.reserve(1), "x", 1);
    out.commit(1);
  };
  int calls = 0;
  o.write = [&](std::string_view, uint64_t, uint64_t, uint32_t) -> Status {
    return ++calls == 3 ? Status(Errc::io, "disk full") : Status();
  };
  auto r = scan_rendered(**log, 0, o);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().code() == Errc::io);
  CHECK(calls == 3);
  o.write = [&](std::string_view, uint64_t, uint64_t, uint32_t) -> Status { throw std::runtime_error("stdout closed"); };
  CHECK_THROWS_WITH_AS((void)scan_rendered(**log, 0, o), "stdout closed", std::runtime_error);
}
