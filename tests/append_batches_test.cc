// Log::append_batches: several batches written together leave the bytes of
// one append per batch, roll at most once per call (before its first
// batch), and stop before a batch that needs a roll, fails the disk budget
// or is invalid, which the next call then rolls for or reports.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "alog/log.h"
#include "alog/verify.h"
#include "support/util.h"

using namespace alog;
using namespace alog::test;

namespace {

using Batch = std::vector<std::string>;
using Spans = std::vector<std::span<const std::string_view>>;

std::unique_ptr<Log> must_open(const std::string& dir, const Options& o) {
  auto r = Log::open(dir, o);
  REQUIRE_MESSAGE(r.is_ok(), r.status().to_string());
  return std::move(r).value();
}

Options fixed(uint64_t seg, uint32_t stride) {
  Options o;
  o.max_segment_size = seg;
  o.checkpoint_stride = stride;
  o.clock_ms = [] { return uint64_t(1700000000000); };
  return o;
}

// Batches of 1..9 records of 0..120 bytes, now and then one of 3000 (a
// payload written from the caller's memory rather than copied).
std::vector<Batch> random_batches(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Batch> out(count);
  for (auto& b : out) {
    size_t n = 1 + rng() % 9;
    for (size_t i = 0; i < n; i++) {
      size_t len = rng() % 40 == 0 ? 3000 : rng() % 121;
      b.push_back(std::string(len, char('a' + rng() % 26)));
    }
  }
  return out;
}

// Views of every record and a span per batch over them.
struct Views {
  std::vector<std::string_view> all;
  Spans spans;
  explicit Views(const std::vector<Batch>& batches) {
    for (const auto& b : batches)
      for (const auto& r : b) all.push_back(r);
    size_t at = 0;
    for (const auto& b : batches) {
      spans.push_back(std::span<const std::string_view>(all).subspan(at, b.size()));
      at += b.size();
    }
  }
};

// Every file of a log directory but LOCK: name and bytes.
std::vector<std::pair<std::string, std::string>> files_of(const std::string& dir) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename() != "LOCK")
      out.emplace_back(e.path().filename().string(), read_file(e.path().string()));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE(
    "append_batches leaves the bytes that one append per batch leaves, across checkpoints and "
    "rolls") {
  for (uint32_t seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    TempDir t;
    const Options o = fixed(16 * kKiB, 5);
    const auto batches = random_batches(400, seed);
    {
      auto one = must_open(t / "one", o);
      for (const auto& b : batches) {
        std::vector<std::string_view> v(b.begin(), b.end());
        REQUIRE(one->append(v).is_ok());
      }
      REQUIRE(one->close().is_ok());
    }
    size_t calls = 0;
    {
      auto many = must_open(t / "many", o);
      Views views(batches);
      std::span<const std::span<const std::string_view>> rest(views.spans);
      while (!rest.empty()) {
        auto done = many->append_batches(rest);
        REQUIRE_MESSAGE(done.is_ok(), done.status().to_string());
        REQUIRE(*done >= 1);
        rest = rest.subspan(*done);
        calls++;
      }
      REQUIRE(many->close().is_ok());
    }
    const auto one = files_of(t / "one"), many = files_of(t / "many");
    REQUIRE(one.size() > 3);     // several segments: the calls met rolls
    CHECK(calls == one.size());  // one call per segment
    CHECK(one == many);
  }
}

TEST_CASE(
    "append_batches returns the batches before one that needs a roll, and the next call rolls") {
  TempDir t;
  auto log = must_open(t / "log", fixed(4 * kKiB, 64));
  const std::vector<Batch> batches(40, Batch(3, std::string(100, 'x')));  // 3 × 116 bytes each
  Views views(batches);
  // Between the 192-byte header and the 16-byte EOF (no checkpoint before
  // 64 records), 348-byte batches: 11 fit 4 KiB.
  const size_t fit = (4096 - 192 - 16) / 348;
  REQUIRE(fit == 11);
  auto first = log->append_batches(views.spans);
  REQUIRE(first.is_ok());
  CHECK(*first == fit);
  CHECK(log->segments().size() == 1);
  CHECK(log->next_sequence() == 3 * fit);
  auto second = log->append_batches(std::span(views.spans).subspan(*first));
  REQUIRE(second.is_ok());
  CHECK(*second == fit);
  CHECK(log->segments().size() == 2);
  CHECK(log->segments().back().start_sequence == 3 * fit);
  CHECK(log->next_sequence() == 6 * fit);
}

TEST_CASE("append_batches stops before an invalid batch, and the next call returns its error") {
  TempDir t;
  Options o = fixed(1 * kMiB, 64);
  o.max_payload_size = 50;
  auto log = must_open(t / "log", o);
  const std::vector<Batch> batches = {{"a", "b"}, {"c"}, {std::string(51, 'x')}, {"d"}};
  Views views(batches);
  auto first = log->append_batches(views.spans);
  REQUIRE(first.is_ok());
  CHECK(*first == 2);
  CHECK(log->next_sequence() == 3);
  auto second = log->append_batches(std::span(views.spans).subspan(2));
  REQUIRE_FALSE(second.is_ok());
  CHECK(second.status().code() == Errc::payload_too_large);
  CHECK(log->next_sequence() == 3);
  auto rep = verify(t / "log");
  REQUIRE(rep.is_ok());
  CHECK(rep->clean());
}

TEST_CASE(
    "append_batches stops before a batch past the disk budget, and the next call returns "
    "disk_full") {
  TempDir t;
  Options o = fixed(1 * kMiB, 64);
  // An empty segment is 208 bytes; room for three batches of 116 bytes.
  o.max_disk_size = 208 + 3 * 116;
  auto log = must_open(t / "log", o);
  const std::vector<Batch> batches(5, Batch{std::string(100, 'y')});
  Views views(batches);
  auto first = log->append_batches(views.spans);
  REQUIRE(first.is_ok());
  CHECK(*first == 3);
  auto second = log->append_batches(std::span(views.spans).subspan(3));
  REQUIRE_FALSE(second.is_ok());
  CHECK(second.status().code() == Errc::disk_full);
  CHECK(log->next_sequence() == 3);
}

TEST_CASE("append_batches skips empty batches and appends the others in order") {
  TempDir t;
  auto log = must_open(t / "log", fixed(1 * kMiB, 64));
  const std::vector<Batch> batches = {{}, {"a"}, {}, {"b", "c"}, {}};
  Views views(batches);
  auto done = log->append_batches(views.spans);
  REQUIRE(done.is_ok());
  CHECK(*done == 5);
  CHECK(log->next_sequence() == 3);
  CHECK(log->read(2)->payload == "c");
  auto none = log->append_batches(std::span(views.spans).subspan(0, 1));
  REQUIRE(none.is_ok());
  CHECK(*none == 1);
  CHECK(log->next_sequence() == 3);
}

TEST_CASE("append_batches of one batch per call equals append, sequence for sequence") {
  TempDir t;
  auto log = must_open(t / "log", fixed(1 * kMiB, 2));
  const std::vector<Batch> batches = {{"a", "b"}, {"c"}};
  Views views(batches);
  for (const auto& s : views.spans) {
    auto done = log->append_batches(std::span(&s, 1));
    REQUIRE(done.is_ok());
    CHECK(*done == 1);
  }
  CHECK(log->last_sequence() == 2);
  REQUIRE(log->close().is_ok());
  auto rep = verify(t / "log");
  REQUIRE(rep.is_ok());
  CHECK(rep->clean());
  CHECK(rep->records == 3);
}
