// Fuzz target: model-based. The input bytes are the decisions of a workload
// (tests/support/workload.h) that drives random appends, syncs, both
// truncations, rolls, recycles and reopens against a log on a MemFs, with
// power cuts and crashes (FORMAT.md's device model) where the input says; the
// oracle (tests/support/oracle.h) is the model, and any violation it reports
// aborts.
#include <cstdint>
#include <string>

#include "fuzz_input.h"
#include "support/mem_fs.h"
#include "support/oracle.h"
#include "support/workload.h"

using namespace alog;
using namespace alog::test;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteChoices c(data, size);
  MemFs fs;
  if (!fs.mkdir("/fz").is_ok()) fuzz::violated("mkdir");
  Options opt = random_options(c, &fs);
  Workload wl(fs, "/fz/log", opt);
  wl.set_max_payload(1024);  // small logs: fast executions, little memory
  auto report = [&](const std::string& where, const std::vector<std::string>& v) {
    std::string s = where + ":\n";
    for (const auto& x : v) s += "  " + x + "\n";
    fuzz::violated(s + "last operations:\n" + wl.trace());
  };
  bool crashed = false;
  for (int round = 0; round < 4 && !c.exhausted(); round++) {
    if (c.percent(70)) {
      Op op = kCrashOps[c.below(std::size(kCrashOps))];
      fs.fail(op, 1 + c.below(8), FaultKind::power_off);
    }
    if (CheckReport r = wl.open(crashed); !r.ok()) report("reopen", r.violations);
    for (int i = 0; i < 30 && !c.exhausted() && wl.step(c); i++) {
    }
    if (auto v = wl.violations(); !v.empty()) report("workload", v);
    if (!fs.powered_off()) fs.power_off();
    fs.clear_faults();
    wl.abandon();
    fs.crash(c.below(1u << 30), CrashWeights::format_model());
    crashed = true;
  }
  if (CheckReport r = wl.open(crashed); !r.ok()) report("final reopen", r.violations);
  return 0;
}
