// Regression tests for library bugs found by the crash, fault and fuzz tests,
// each named after the behaviour it pins down.
#include <doctest/doctest.h>

#include "alog/log.h"
#include "support/mem_fs.h"
#include "support/oracle.h"

using namespace alog;
using namespace alog::test;

namespace {
constexpr const char* kDir = "/db/log";
}  // namespace

// truncate_before(seq) into records that were appended but not synced used to
// write a slot whose synced offset (the new read offset) claimed bytes the
// disk did not have yet; a crash before the following fsync could keep the
// slot and drop the data, and the log no longer opened ("synced offset lies
// beyond the end of the file").
TEST_CASE("truncate_before into the unsynced tail leaves a log that opens after any crash") {
  // A power cut at each write and fsync the truncation makes, then every
  // combination the crash seeds give of unsynced writes kept or dropped.
  for (Op op : {Op::write, Op::sync}) {
    for (uint64_t nth = 1; nth <= 3; nth++) {
      const std::string op_text = op_name(op);
      CAPTURE(op_text);
      CAPTURE(nth);
      MemFs fs;
      REQUIRE(fs.mkdir("/db").is_ok());
      Options opt;
      opt.fs = &fs;
      {
        auto log = Log::open(kDir, opt);
        REQUIRE(log.is_ok());
        REQUIRE((*log)->append({"one", "two", "three"}).is_ok());
        REQUIRE((*log)->append({"four"}).is_ok());
        fs.fail(op, nth, FaultKind::power_off);
        (void)(*log)->truncate_before(3);
        fs.power_off();
        fs.clear_faults();
      }
      MemFs::Snapshot snap = fs.snapshot();
      CrashWeights w{};
      w.zero = w.garble = w.torn = 0;  // each unsynced write kept or dropped
      for (uint64_t seed = 0; seed < 64; seed++) {
        CAPTURE(seed);
        fs.restore(snap);
        fs.crash(seed, w);
        auto log = Log::open(kDir, opt);
        REQUIRE_MESSAGE(log.is_ok(), log.status().to_string());
        CHECK((*log)->first_sequence() <= 3);
      }
    }
  }
}
