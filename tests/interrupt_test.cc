// The interrupt check (alog/interrupt.h): long reads stop with
// Errc::stopped when it asks, before anything changes; a salvage that has
// begun to change files goes to its end.
#include <doctest/doctest.h>

#include <atomic>

#include "alog/interrupt.h"
#include "alog/log.h"
#include "alog/verify.h"
#include "support/mem_fs.h"

using namespace alog;
using namespace alog::test;

namespace {

const std::string kDir = "/db/log";
std::atomic<int> g_reads_left{0};
std::atomic<int> g_asked{0};

// Asks reads to stop once it has been consulted `g_reads_left` times.
bool stop_after_some_reads() {
  g_asked++;
  return --g_reads_left < 0;
}

struct Check {
  explicit Check(int reads) {
    g_reads_left = reads;
    g_asked = 0;
    set_interrupt_check(&stop_after_some_reads);
  }
  ~Check() { set_interrupt_check(nullptr); }
};

void make_log(MemFs& fs, int segments) {
  REQUIRE(fs.mkdir("/db"));
  Options o;
  o.fs = &fs;
  o.max_segment_size = 4096;
  o.sync_on_append = true;
  auto log = Log::open(kDir, o);
  REQUIRE(log.is_ok());
  for (uint64_t seq = 0; (*log)->segments().size() < size_t(segments); seq++) {
    std::string p = "record-" + std::to_string(seq) + std::string(64, 'r');
    REQUIRE((*log)->append({std::string_view(p)}).is_ok());
  }
  REQUIRE((*log)->close().is_ok());
}

}  // namespace

TEST_CASE("verify stops with stopped when the interrupt check asks, and runs to its end without one") {
  MemFs fs;
  make_log(fs, 6);
  VerifyOptions vo;
  vo.fs = &fs;
  {
    Check c(2);
    auto r = verify(kDir, vo);
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().is(Errc::stopped));
    CHECK(g_asked >= 3);
  }
  auto clean = verify(kDir, vo);
  REQUIRE(clean.is_ok());
  CHECK(clean->clean());
}

TEST_CASE("a salvage stopped while it plans changes nothing") {
  MemFs fs;
  make_log(fs, 4);
  auto names = fs.list(kDir);
  REQUIRE(names.is_ok());
  std::sort(names->begin(), names->end());
  const std::string path = kDir + "/" + (*names)[1];
  std::string bytes = *fs.read_all(path);
  bytes[300] ^= 0x55;  // a payload byte of a sealed segment
  REQUIRE(fs.set_contents(path, bytes));
  const auto before = fs.snapshot();
  RecoverOptions ro;
  ro.fs = &fs;
  ro.force = true;
  ro.max_segment_size = 4096;
  int stopped = 0;
  // Stop at the first read, the second, ... until the plan completes.
  for (int reads = 0; reads < 1000; reads++) {
    Check c(reads);
    auto r = recover(kDir, ro);
    if (r.is_ok()) {
      CHECK(r->applied);
      break;
    }
    CHECK_MESSAGE(r.status().is(Errc::stopped), r.status().to_string());
    stopped++;
    // Nothing changed: the damaged segment and every other file as they were.
    CHECK(*fs.read_all(path) == bytes);
    auto now = fs.list(kDir);
    REQUIRE(now.is_ok());
    CHECK(std::count(now->begin(), now->end(), std::string("lost+found")) == 0);
    fs.restore(before);
  }
  CHECK(stopped > 0);
  // Once the plan is made, the salvage went to its end: the log is whole.
  VerifyOptions vo;
  vo.fs = &fs;
  auto after = verify(kDir, vo);
  REQUIRE(after.is_ok());
  CHECK_FALSE(after->has(Classification::corruption));
}
