// Frames' CRCs are taken three at a time (the walker's look-ahead, the
// scanner's batches): damage to any one of them is still found at that
// frame, by verify and by scans, whatever its place among the three.
#include <doctest/doctest.h>

#include <array>
#include <string>
#include <vector>

#include "alog/log.h"
#include "alog/scanner.h"
#include "alog/verify.h"
#include "support/util.h"

using namespace alog;
using namespace alog::test;

namespace {

constexpr uint64_t kFrame = 16 + 100;  // each record: a 16-byte header, 100 bytes of payload

// Nine records of 100 bytes in one batch, then five in another; synced or not.
std::string make_log(TempDir& t, bool synced) {
  const std::string d = t / "log";
  Options o;
  o.checkpoint_stride = 64;
  auto log = Log::open(d, o);
  REQUIRE(log.is_ok());
  std::vector<std::string> recs;
  for (int i = 0; i < 14; i++) recs.push_back(std::string(100, char('a' + i)));
  std::vector<std::string_view> first(recs.begin(), recs.begin() + 9), second(recs.begin() + 9, recs.end());
  REQUIRE((*log)->append(first).is_ok());
  REQUIRE((*log)->append(second).is_ok());
  REQUIRE((*log)->close(synced).is_ok());
  return d;
}

std::string segment_of(const std::string& d) { return d + "/00000000000000000000.seg"; }

// Sequences a scan in batches of `size` yields, and whether it ended in an error.
std::pair<std::vector<uint64_t>, bool> scan_all(const std::string& d, size_t size) {
  auto log = Log::open_read(d);
  REQUIRE(log.is_ok());
  auto sc = (*log)->scan(0, std::nullopt);
  REQUIRE(sc.is_ok());
  std::vector<uint64_t> seqs;
  std::vector<RecordView> buf(size);
  while (true) {
    auto n = (*sc)->next_batch(buf);
    if (!n.is_ok()) return {seqs, true};
    if (*n == 0) return {seqs, false};
    for (size_t i = 0; i < *n; i++) seqs.push_back(buf[i].sequence);
  }
}

}  // namespace

TEST_CASE("a damaged payload in any of fourteen consecutive frames is found at that frame by verify and by scans") {
  for (bool synced : {true, false}) {
    for (uint64_t k = 0; k < 14; k++) {
      CAPTURE(synced);
      CAPTURE(k);
      TempDir t;
      const std::string d = make_log(t, synced);
      const uint64_t at = 192 + k * kFrame;
      flip_bit(segment_of(d), at + 16 + 50, 3);
      auto rep = verify(d);
      REQUIRE(rep.is_ok());
      REQUIRE_FALSE(rep->problems.empty());
      CHECK(rep->problems[0].kind == "frame_crc");
      CHECK(rep->problems[0].offset == at);
      if (synced) {
        // Synced damage: a scan yields every record before it, then fails.
        std::vector<uint64_t> want;
        for (uint64_t s = 0; s < k; s++) want.push_back(s);
        for (size_t size : {size_t{1}, size_t{2}, size_t{3}, size_t{4}, size_t{16}}) {
          CAPTURE(size);
          auto [seqs, error] = scan_all(d, size);
          CHECK(seqs == want);
          CHECK(error);
        }
      } else {
        // An unsynced tail ends at the last batch boundary before the damage.
        auto log = Log::open_read(d);
        REQUIRE(log.is_ok());
        CHECK((*log)->next_sequence() == (k < 9 ? 0 : 9));
      }
    }
  }
}
