// Scanner::next_batch against next(): the same records, lost records and
// errors, at the same places, on the conformance vectors, damaged logs and
// random logs (lost frames included), whatever the batch size.
#include <doctest/doctest.h>

#include <filesystem>
#include <random>

#include "alog/log.h"
#include "alog/scanner.h"
#include "alog/verify.h"
#include "scanner_batch_util.h"
#include "support/util.h"

using namespace alog;
using namespace alog::test;

namespace {

// Everything a scan of [from, to] yields, and how it ends.
struct Reading {
  std::vector<std::string> items;  // "seq lost payload-hex"
  std::string end;                 // "end", or the error: code, path, offset, message
};

Reading one_by_one(const Log& log, uint64_t from, std::optional<uint64_t> to) {
  Reading r;
  auto sc = log.scan(from, to);
  REQUIRE(sc.is_ok());
  while (true) {
    auto more = (*sc)->next();
    if (!more.is_ok()) {
      r.end = error_item(more.status());
      return r;
    }
    if (!*more) break;
    r.items.push_back(record_item((*sc)->sequence(), (*sc)->lost(), (*sc)->payload()));
  }
  r.end = "end";
  return r;
}

Reading in_batches(const Log& log, uint64_t from, std::optional<uint64_t> to, size_t size) {
  Reading r;
  auto sc = log.scan(from, to);
  REQUIRE(sc.is_ok());
  std::vector<RecordView> batch(size);
  while (true) {
    auto n = (*sc)->next_batch(std::span<RecordView>(batch.data(), batch.size()));
    if (!n.is_ok()) {
      r.end = error_item(n.status());
      return r;
    }
    if (*n == 0) break;
    REQUIRE(*n <= size);
    for (size_t i = 0; i < *n; i++) r.items.push_back(record_item(batch[i].sequence, batch[i].lost, batch[i].payload));
    // The scanner's own accessors describe the batch's last record.
    CHECK((*sc)->sequence() == batch[*n - 1].sequence);
    CHECK((*sc)->lost() == batch[*n - 1].lost);
    CHECK((*sc)->payload() == batch[*n - 1].payload);
  }
  r.end = "end";
  return r;
}

// Every way of reading `dir` in batches reads what next() reads. Returns
// how the whole reading ends ("end", an error, or "unreadable").
std::string check_same_reading(const std::string& dir) {
  auto log = Log::open_read(dir);
  if (!log.is_ok()) return "unreadable";  // nothing a scanner could read
  const uint64_t first = (*log)->first_sequence(), next = (*log)->next_sequence();
  struct Span {
    uint64_t from;
    std::optional<uint64_t> to;
  };
  std::vector<Span> spans = {{0, std::nullopt}, {first + 1, std::nullopt}, {first, first + 5},
                             {first + (next - first) / 2, std::nullopt}};
  for (const Span& s : spans) {
    Reading want = one_by_one(**log, s.from, s.to);
    for (size_t size : {size_t{1}, size_t{2}, size_t{7}, size_t{4096}}) {
      INFO(dir << " from " << s.from << " batch " << size);
      Reading got = in_batches(**log, s.from, s.to, size);
      CHECK(got.items == want.items);
      CHECK(got.end == want.end);
    }
  }
  return one_by_one(**log, 0, std::nullopt).end;
}

}  // namespace

TEST_CASE("next_batch reads every conformance vector as next() does") {
  const std::string vectors = std::string(ALOG_TESTDATA_DIR) + "/vectors";
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(vectors)) {
    if (!e.is_directory()) continue;
    check_same_reading(e.path().string() + "/log");
    n++;
  }
  CHECK(n >= 14);
}

TEST_CASE("next_batch reads damaged logs as next() does, errors at the same record") {
  int errors = 0;
  for (uint32_t seed = 1; seed <= 12; seed++) {
    TempDir t;
    const std::string d = t / "log";
    RandomLog made = make_random_log(d, seed);
    damage_random_log(made, seed);
    errors += check_same_reading(d).rfind("corrupt", 0) == 0;
  }
  CHECK(errors >= 4);  // the damage is met mid-scan, not only at open
}

TEST_CASE("next_batch reads random logs with lost frames as next() does") {
  for (uint32_t seed = 100; seed < 108; seed++) {
    TempDir t;
    const std::string d = t / "log";
    RandomLog made = make_random_log(d, seed);
    salvage_random_log(d, made, seed);
    check_same_reading(d);
  }
  check_same_reading(std::string(ALOG_TESTDATA_DIR) + "/vectors/salvaged/log");
}

TEST_CASE("a truncate_after behind a batch stops next_batch as it stops next()") {
  TempDir t;
  const std::string d = t / "log";
  Options o;
  o.max_segment_size = 8192;
  o.checkpoint_stride = 4;
  auto log = Log::open(d, o);
  REQUIRE(log.is_ok());
  for (int i = 0; i < 300; i++) REQUIRE((*log)->append_one("record " + std::to_string(i)).is_ok());
  for (bool batched : {false, true}) {
    auto sc = (*log)->scan(0);
    REQUIRE(sc.is_ok());
    std::vector<RecordView> batch(50);
    uint64_t read = 0;
    while (read < 250) {
      if (batched) {
        auto n = (*sc)->next_batch(std::span<RecordView>(batch.data(), batch.size()));
        REQUIRE(n.is_ok());
        read += *n;
      } else {
        auto more = (*sc)->next();
        REQUIRE(more.is_ok());
        read++;
      }
    }
    REQUIRE((*log)->truncate_after(200).is_ok());
    if (batched) {
      auto n = (*sc)->next_batch(std::span<RecordView>(batch.data(), batch.size()));
      CHECK(n.status().code() == Errc::segment_reaped);
    } else {
      auto more = (*sc)->next();
      CHECK(more.status().code() == Errc::segment_reaped);
    }
    for (int i = 201; i < 300; i++) REQUIRE((*log)->append_one("again " + std::to_string(i)).is_ok());
  }
}
