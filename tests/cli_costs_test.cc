// Costs bounded by the file's real size: searches over garbage end in time
// linear in its bytes (each run is bounded by timeout(1)).
#include <doctest/doctest.h>

#include <random>

#include "cli_util.h"

using namespace alog::test;
using namespace alog::test::cli;

TEST_CASE("dump-frames --stale searches 4 MB of garbage after the EOF without a read per byte") {
  TempDir t;
  std::string d = copy_vector(t, "seed-append");
  std::string seg = d + "/00000000000000000000.seg";
  std::string bytes = read_file(seg);
  std::mt19937 rng(3);
  std::string junk(4'000'000, '\0');
  for (auto& c : junk) c = char(rng());
  write_file(seg, bytes + junk);
  RunResult r = run("timeout -k 5 20 " + alog_cli() + " dump-frames --stale " + shq(seg));
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("resync from 270: no valid frame to the end of the file") != std::string::npos);
}
