// Fuzz target: model-based. The input bytes are the decisions of a workload
// (tests/support/workload.h) that drives random appends, syncs, both
// truncations, rolls, recycles and reopens against a log on a MemFs, with
// power cuts and crashes (FORMAT.md's device model) where the input says; the
// oracle (tests/support/oracle.h) is the model, and any violation it reports
// aborts. Then, where the input says, one byte of a segment is flipped and
// the log salvaged (recover --force): no kept record may differ from what
// was there, no sequence may move, and a salvaged log verifies clean.
#include <cstdint>
#include <map>
#include <string>

#include "alog/scanner.h"
#include "alog/verify.h"

#include "fuzz_input.h"
#include "support/mem_fs.h"
#include "support/oracle.h"
#include "support/workload.h"

using namespace alog;
using namespace alog::test;

namespace {

// Every record a reader finds (lost ones as nullopt), and the next sequence.
struct Seen {
  std::map<uint64_t, std::optional<std::string>> records;
  uint64_t next = 0;
  bool clean = false;  // read to the end without damage
};

Seen read_log(MemFs& fs, const std::string& dir) {
  Seen s;
  Options o;
  o.fs = &fs;
  auto log = Log::open_read(dir, o);
  if (!log.is_ok() || !(*log)->damage().is_ok()) return s;
  s.next = (*log)->next_sequence();
  auto sc = (*log)->scan((*log)->first_sequence());
  if (!sc.is_ok()) return s;
  while (true) {
    auto more = (*sc)->next();
    if (!more.is_ok()) return s;
    if (!*more) break;
    if ((*sc)->lost()) s.records[(*sc)->sequence()] = std::nullopt;
    else s.records[(*sc)->sequence()] = std::string((*sc)->payload());
  }
  s.clean = true;
  return s;
}

// Flips one byte of one segment file, then salvages and checks.
void salvage_step(ByteChoices& c, MemFs& fs, const std::string& dir, const Options& opt) {
  VerifyOptions vo;
  vo.fs = &fs;
  auto v = verify(dir, vo);
  if (!v.is_ok() || !v->clean() || v->segments.empty()) return;
  const Seen before = read_log(fs, dir);
  if (!before.clean) return;
  const SegmentReport& seg = v->segments[c.below(v->segments.size())];
  const std::string path = dir + "/" + seg.file;
  auto f = fs.open(path, OpenMode::read_write);
  if (!f.is_ok() || seg.file_length == 0) fuzz::violated("cannot open " + path);
  const uint64_t at = c.below(seg.file_length);
  uint8_t b = 0;
  if (!(*f)->pread(&b, 1, at).is_ok()) fuzz::violated("cannot read " + path);
  b = uint8_t(b ^ (1u << c.below(8)));
  if (!(*f)->pwrite(&b, 1, at).is_ok()) fuzz::violated("cannot write " + path);
  f->reset();
  RecoverOptions ro;
  ro.fs = &fs;
  ro.force = true;
  ro.checkpoint_stride = opt.checkpoint_stride;
  ro.max_segment_size = opt.max_segment_size;
  ro.clock_ms = [] { return uint64_t{1'700'000'000'000}; };
  auto r = recover(dir, ro);
  const std::string where = seg.file + " byte " + std::to_string(at) + " flipped";
  if (!r.is_ok()) fuzz::violated("salvage failed on a MemFs (" + where + "): " + r.status().to_string());
  if (r->refused) return;
  auto after_v = verify(dir, vo);
  if (!after_v.is_ok() || !after_v->clean())
    fuzz::violated("a salvaged log does not verify clean (" + where + ")");
  const Seen after = read_log(fs, dir);
  if (!after.clean) fuzz::violated("a salvaged log does not read to its end (" + where + ")");
  if (after.next < before.next)
    fuzz::violated("salvage moved the next sequence back (" + where + "): " + std::to_string(before.next) +
                   " -> " + std::to_string(after.next));
  for (const auto& [seq, payload] : after.records) {
    if (!payload) continue;
    auto it = before.records.find(seq);
    if (it == before.records.end() || it->second != payload)
      fuzz::violated("salvage kept a record at sequence " + std::to_string(seq) + " that was not there (" +
                     where + "; " + (it == before.records.end() ? "no such sequence before" : "another payload before") +
                     ", next " + std::to_string(before.next) + " before, " + std::to_string(after.next) + " after)");
  }
  for (const auto& [seq, payload] : before.records)
    if (!after.records.count(seq))
      fuzz::violated("salvage left no record or lost frame at sequence " + std::to_string(seq) + " (" +
                     where + ")");
}

}  // namespace

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
  if (!c.exhausted() && c.percent(50)) {
    wl.abandon();  // a clean close: everything synced
    salvage_step(c, fs, wl.dir(), wl.options());
  }
  return 0;
}
