// Crash states: seeded random workloads (batches of random shapes, syncs, both
// truncations, rolls, recycles, reopens) are cut by a power failure at a random
// I/O call, or between operations; each cut is turned into many post-crash
// images (MemFs::crash: synced data kept, unsynced writes dropped, kept or torn
// in 512-byte sectors, unsynced directory changes kept or reverted), and every
// image is reopened and checked by the oracle. The workload then goes on from
// one of the images, so crashes also hit recovery and logs that crashed before.
//
// A failure prints the workload seed; replay it alone with
//   ALOG_CRASH_SEED=<seed> build/tests/alog_tests -tc='*crash image*'
// The slow tier scales the number of workloads with ALOG_TEST_SCALE.
#include <doctest/doctest.h>

#include <set>

#include "support/mem_fs.h"
#include "support/oracle.h"
#include "support/workload.h"

using namespace alog;
using namespace alog::test;

namespace {

constexpr const char* kDir = "/db/log";

struct Tally {
  std::set<uint64_t> images;
  uint64_t checks = 0;
  uint64_t cuts = 0;
  uint64_t cuts_in_open = 0;
};

struct Plan {
  CrashWeights weights;
  bool device_model = true;  // weights within FORMAT.md's device model
  uint64_t rounds = 8;
  uint64_t images_per_cut = 10;   // distinct images to check per power cut
  uint64_t tries_per_cut = 24;   // crash seeds tried to find them
};

// Runs workload `seed`; returns "" or a description of the first violation.
std::string run_workload(uint64_t seed, const Plan& plan, Tally& t) {
  RngChoices c(seed);
  MemFs fs;
  if (!fs.mkdir("/db").is_ok()) return "mkdir failed";
  Options opt = random_options(c, &fs);
  Workload wl(fs, kDir, opt);
  auto fail = [&](const std::string& where, const std::vector<std::string>& v) {
    std::string s = "seed " + std::to_string(seed) + ", " + where + ":\n";
    for (const auto& x : v) s += "  " + x + "\n";
    s += "options: segment size " + std::to_string(opt.max_segment_size) + ", max segments " +
         std::to_string(opt.max_segments) + ", stride " + std::to_string(opt.checkpoint_stride) +
         (opt.sync_on_append ? ", sync on append" : "") + ", start " +
         std::to_string(opt.start_sequence) + ", disk budget " + std::to_string(opt.max_disk_size) +
         "\nlast operations:\n" + wl.trace();
    return s;
  };
  bool crashed = false;
  bool relaxed = false;  // the last crash hit recovery, outside the device model
  for (uint64_t round = 0; round < plan.rounds; round++) {
    const std::string where = "round " + std::to_string(round);
    // Aim a power cut at the n-th call of some kind from here on (perhaps
    // inside the reopen's recovery), or cut between operations.
    if (c.percent(85)) {
      Op op = kCrashOps[c.below(std::size(kCrashOps))];
      fs.fail(op, 1 + c.below(op == Op::write || op == Op::sync ? 10 : 4), FaultKind::power_off);
    }
    if (CheckReport r = wl.open(crashed, relaxed); !r.ok()) return fail(where + ", reopen", r.violations);
    uint64_t steps = 1 + c.below(25);
    for (uint64_t i = 0; i < steps && wl.step(c); i++) {
    }
    if (auto v = wl.violations(); !v.empty()) return fail(where, v);
    if (!fs.powered_off()) {
      wl.note("power cut between operations");
      fs.power_off();
    } else {
      wl.note("power cut during the last operation");
    }
    fs.clear_faults();
    wl.abandon();
    const bool in_open = wl.take_power_cut_in_open();
    t.cuts++;
    t.cuts_in_open += in_open;
    MemFs::Snapshot snap = fs.snapshot();
    uint64_t found = 0;
    std::set<uint64_t> mine;  // per workload, so that a seed replays alone
    for (uint64_t j = 0; j < plan.tries_per_cut && found < plan.images_per_cut; j++) {
      fs.restore(snap);
      uint64_t crash_seed = seed * 1000003 + round * 1009 + j;
      if (j == 0) fs.crash(crash_seed, CrashMode::drop_all);
      else if (j == 1) fs.crash(crash_seed, CrashMode::keep_all);
      else fs.crash(crash_seed, plan.weights);
      uint64_t h = tree_hash(fs, "/db");
      if (!mine.insert(h).second) continue;  // seen: nothing new to check
      t.images.insert(h);
      found++;
      t.checks++;
      Oracle o = wl.oracle();
      // Outside the device model (a zeroed or garbled write) a cut while
      // recovery rewrites the synced tail can destroy synced bytes; the
      // other promises still hold.
      Oracle::CheckOptions co;
      co.after_crash = true;
      co.synced_may_be_lost = !plan.device_model && in_open;
      CheckReport r = o.reopen_and_check(kDir, wl.options(), co);
      if (!r.ok())
        return fail(where + ", crash image " + std::to_string(j) + " (crash seed " +
                        std::to_string(crash_seed) + ")",
                    r.violations);
    }
    // Go on from one of the images.
    fs.restore(snap);
    fs.crash(seed * 7919 + round, plan.weights);
    crashed = true;
    relaxed = !plan.device_model && in_open;
  }
  return "";
}

void run_all(const Plan& plan, uint64_t workloads, uint64_t min_images, uint64_t seed_base) {
  const uint64_t only = env_u64("ALOG_CRASH_SEED", UINT64_MAX);
  Tally t;
  for (uint64_t w = 0; w < (only != UINT64_MAX ? 1 : workloads); w++) {
    uint64_t seed = only != UINT64_MAX ? only : seed_base + w;
    std::string err = run_workload(seed, plan, t);
    if (!err.empty()) FAIL(err);
  }
  MESSAGE(t.images.size() << " distinct crash images checked, from " << t.cuts << " power cuts ("
                          << t.cuts_in_open << " during recovery), " << workloads << " workloads");
  if (only == UINT64_MAX) CHECK(t.images.size() >= min_images);
}

}  // namespace

TEST_CASE("every crash image of a random workload reopens to a state the oracle allows") {
  // FORMAT.md's device model: unsynced writes absent, present, or torn in sectors.
  Plan plan;
  plan.weights = CrashWeights::format_model();
  run_all(plan, scaled(450), 10000, 1);
}

TEST_CASE("crash images with zeroed and garbled unsynced writes lose no synced record outside recovery") {
  Plan plan;
  plan.weights = CrashWeights{};
  plan.device_model = false;
  plan.images_per_cut = 4;
  run_all(plan, scaled(120), 2000, 1'000'000);
}
