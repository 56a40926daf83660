// One flipped byte in a sealed segment's winning slot, with every record
// still readable: the older slot wins, its synced offset is not the EOF,
// and appends refuse (a sequence gap). recover --force writes both slots
// again from the walk; nothing is dropped.
#include <doctest/doctest.h>

#include "cli_util.h"

using namespace alog::test;
using namespace alog::test::cli;

TEST_CASE("recover --force repairs a sealed segment whose winning slot was damaged, dropping nothing") {
  TempDir t;
  std::string d = copy_vector(t, "multi-segment");
  std::string seg = d + "/00000000000000000000.seg";
  flip_bit(seg, 150, 3);  // inside slot B, the winner (synced 2007); slot A says 1475
  std::string records = run_alog("cat " + shq(vector_log("multi-segment"))).out;
  CHECK(run_alog("append " + shq(d), "x\n").exit_code == 4);  // the sequence gap
  RunResult dry = run_alog("recover " + shq(d));
  CHECK(dry.exit_code == 4);
  CHECK(dry.out.find("would rewrite_slots 00000000000000000000.seg") != std::string::npos);
  RunResult r = run_alog("recover --force " + shq(d));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("rewrite_slots 00000000000000000000.seg") != std::string::npos);
  CHECK(r.out.find("done: 0 records and 0 bytes dropped; log 0-173, next 174") != std::string::npos);
  CHECK(run_alog("verify " + shq(d)).exit_code == 0);
  CHECK(run_alog("cat " + shq(d)).out == records);
  CHECK(run_alog("append " + shq(d), "x\n").exit_code == 0);
  // Both slots now agree: a damaged one alone cannot bring the old offset back.
  RunResult dump = run_alog("dump-frames " + shq(seg));
  CHECK(dump.out.find("slot A at 64: valid") != std::string::npos);
  CHECK(dump.out.find("slot B at 128: valid") != std::string::npos);
  CHECK(dump.out.find("synced 1475") == std::string::npos);
}
