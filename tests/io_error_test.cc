// The I/O-error loop (SQLite's style): one fixed workload of appends, rolls,
// both truncations, a recycle (max_segments 3) and a reopen, run again and
// again with a fault injected at the N-th call of one kind, for every N and
// every fault kind. After each run the log must open again (with and without a
// crash), hold every record a successful sync covered, and have been failed
// exactly when FORMAT.md says: any failed fsync fails the log; a failed batch
// write whose rollback succeeds does not.
#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <sstream>

#include "alog/log.h"
#include "support/mem_fs.h"
#include "support/oracle.h"

using namespace alog;
using namespace alog::test;

namespace {

constexpr const char* kDir = "/db/log";

enum class Kind { open, append, sync, truncate_before, truncate_after, close };

struct Step {
  Kind kind;
  std::vector<size_t> lens;                       // append
  std::function<uint64_t(const Log&)> seq = {};  // truncations
};

std::vector<Step> script() {
  auto app = [](std::vector<size_t> l) { return Step{Kind::append, std::move(l)}; };
  auto sync = Step{Kind::sync, {}};
  // Inside the second segment: the first goes whole (a rename to .seg.del,
  // unlinked later), then a slot moves the read offset.
  auto into_second = [](const Log& l) {
    auto s = l.segments();
    return s.size() > 1 ? s[1].start_sequence + 1 : l.first_sequence() + 1;
  };
  // Inside the next-to-last segment: the last goes whole, then a cut.
  auto into_next_to_last = [](const Log& l) {
    auto s = l.segments();
    return s.size() > 1 ? s[s.size() - 2].next_sequence - 2 : l.next_sequence() - 2;
  };
  return {
      {Kind::open, {}},
      app({40}), app({20, 30}), sync,
      app({150, 150}), app({150}), app({200, 100}), app({150}), app({90}),  // a roll
      sync,
      app({300}), app({300}), app({0, 300}), app({300}),  // rolls: three segments
      {Kind::truncate_before, {}, into_second},
      app({300}), app({300}), app({300}), app({300}),  // rolls, a recycle
      app({10, 10, 10, 10}),
      {Kind::truncate_after, {}, into_next_to_last},
      sync,
      app({250}), app({250}), app({250}),  // a roll after the cut
      {Kind::close, {}}, {Kind::open, {}},
      app({50, 50}), sync, app({60}),
  };
}

// Variant 0: recycling at 3 segments, checkpoints every 3 records. Variant 1:
// every batch synced by the append, no recycling, a checkpoint after every batch.
Options options(MemFs& fs, int variant) {
  Options o;
  o.fs = &fs;
  o.max_segment_size = 1024;
  o.max_segments = variant == 0 ? 3 : 0;
  o.checkpoint_stride = variant == 0 ? 3 : 1;
  o.sync_on_append = variant == 1;
  o.clock_ms = [] { return uint64_t{1'700'000'000'000}; };
  return o;
}

// What one step did, for the clean run's map of calls to steps.
struct Trace {
  Kind kind;
  uint64_t writes_before, writes_after;  // Op::write calls
};

struct Fault {
  Op op;
  FaultKind kind;
  bool sticky;
  uint64_t nth;
  std::string text() const {
    return std::string(fault_name(kind)) + (sticky ? " (sticky)" : "") + " at " + op_name(op) +
           " call " + std::to_string(nth);
  }
};

struct Outcome {
  std::vector<std::string> violations;
  bool fired = false;
  bool failed = false;          // the log was failed at some point
  bool rolled_back = false;     // a batch write failed and the log went on
  uint64_t rolls = 0;           // segments created or recycled
  bool recycled = false;        // a segment of generation 2 or more was seen
  bool truncated = false;       // both truncations succeeded
  std::string fired_in;         // the step the fault hit, and the segments after it
};

bool is_sync(Op op) { return op == Op::sync || op == Op::sync_dir; }

// Runs the script with `fault` armed (none when nullopt). `clean` is the
// fault-free run's trace; a run without a fault fills it.
Outcome run(int variant, const std::optional<Fault>& fault, std::vector<Trace>* clean_out,
            const std::vector<Trace>& clean) {
  Outcome out;
  MemFs fs;
  REQUIRE(fs.mkdir("/db").is_ok());
  const Options opt = options(fs, variant);
  Oracle oracle(0, opt.max_segments);
  std::unique_ptr<Log> log;
  auto bad = [&](const std::string& v) { out.violations.push_back(v); };
  if (fault) fs.fail(fault->op, fault->nth, fault->kind, fault->sticky);

  auto open = [&](const std::string& where) {
    auto l = Log::open(kDir, opt);
    if (l.is_ok()) {
      Oracle::CheckOptions co;
      co.tolerate_io_errors = fault && fs.faults_injected() == 0;  // still armed
      CheckReport r = oracle.check_open(**l, &fs, co);
      for (auto& v : r.violations) bad(where + ": " + v);
      log = std::move(*l);
      return true;
    }
    oracle.open_failed();
    if (fs.faults_injected() == 0) bad(where + ": open failed without a fault: " + l.status().to_string());
    return false;
  };

  const auto steps = script();
  uint64_t active_start = 0;
  for (size_t i = 0; i < steps.size(); i++) {
    const Step& st = steps[i];
    const std::string where = "step " + std::to_string(i);
    const uint64_t faults0 = fs.faults_injected();
    const uint64_t writes0 = fs.calls(Op::write);
    bool ok = true;
    if (st.kind == Kind::open) {
      if (!open(where) && !open(where + " (again)")) {
        // A sticky fault: nothing more to do until it is cleared.
      }
    } else if (!log) {
      // The log did not open: try again (a one-shot fault is spent by now).
      if (!open(where + " (reopen)")) continue;
    }
    if (st.kind != Kind::open && log) {
      Log& l = *log;
      const bool was_failed = l.failed();
      switch (st.kind) {
        case Kind::append: {
          std::vector<std::string> b;
          for (size_t k = 0; k < st.lens.size(); k++) b.push_back(make_payload(l.next_sequence() + k, i, st.lens[k]));
          ok = oracle.append(l, b).is_ok();
          break;
        }
        case Kind::sync: ok = oracle.sync(l).is_ok(); break;
        case Kind::truncate_before: ok = oracle.truncate_before(l, st.seq(l)).is_ok(); break;
        case Kind::truncate_after: ok = oracle.truncate_after(l, st.seq(l)).is_ok(); break;
        case Kind::close:
          ok = oracle.close(l).is_ok();
          log.reset();
          break;
        case Kind::open: break;
      }
      if (!ok && !was_failed && fs.faults_injected() == faults0)
        bad(where + ": failed without a fault");
      // log_failed exactly when FORMAT.md says.
      const bool fired_here = fs.faults_injected() != faults0;
      if (fired_here) {
        out.fired_in = where;
        if (log)
          for (const auto& g : log->segments())
            out.fired_in += " " + g.file + " [" + std::to_string(g.first_sequence) + ", " +
                            std::to_string(g.next_sequence) + ")";
      }
      const bool failed_now = log ? log->failed() : !ok;
      if (fired_here && fault && !was_failed) {
        if (is_sync(fault->op) && !failed_now)
          bad(where + ": an fsync failed but the log is not failed");
        // The batch is the append's last write, or its next-to-last when the
        // append syncs and records the synced offset (a slot write) after it.
        const uint64_t batch_call = i < clean.size() ? clean[i].writes_after - (opt.sync_on_append ? 1 : 0) : 0;
        const bool batch_write = fault->op == Op::write && st.kind == Kind::append &&
                                 i < clean.size() && writes0 < batch_call && fault->nth == batch_call;
        if (batch_write && !fault->sticky) {
          if (failed_now) bad(where + ": a batch write failed and rolled back, yet the log is failed");
          if (ok) bad(where + ": the append reported success although its write failed");
          if (log && !failed_now) {
            // It goes on: the very next append works.
            auto r = oracle.append(*log, {make_payload(log->next_sequence(), 999, 17)});
            if (!r.is_ok()) bad(where + ": no append after a clean rollback: " + r.status().to_string());
            out.rolled_back = true;
          }
        }
        if (batch_write && fault->sticky && !failed_now)
          bad(where + ": the batch write and its rollback failed, yet the log is not failed");
      }
      if (!fault && !ok) bad(where + ": failed without a fault");
      if (failed_now) out.failed = true;
      if (log) {
        auto segs = log->segments();
        if (!segs.empty() && segs.back().start_sequence != active_start) {
          out.rolls++;
          active_start = segs.back().start_sequence;
        }
        for (const auto& g : segs) out.recycled |= g.generation > 1;
      }
      if (ok && (st.kind == Kind::truncate_after)) out.truncated = true;
    }
    if (clean_out) clean_out->push_back({st.kind, writes0, fs.calls(Op::write)});
  }
  out.fired = fs.faults_injected() > 0;
  for (const auto& v : oracle.live_violations()) bad("live: " + v);

  // Afterwards: faults gone, the process ends (a failed log skips its sync).
  fs.clear_faults();
  if (log) (void)oracle.close(*log);
  log.reset();
  MemFs::Snapshot snap = fs.snapshot();

  // 1. The same machine, a new process: the page cache is all there.
  {
    Oracle o = oracle;
    std::unique_ptr<Log> l;
    CheckReport r = o.reopen_and_check(kDir, opt, {}, &l);
    for (auto& v : r.violations) bad("reopen: " + v);
    if (l) {
      // What the reopened log holds, and a new synced batch, survive a power cut.
      auto a = o.append(*l, {make_payload(l->next_sequence(), 1000, 33), make_payload(l->next_sequence() + 1, 1000, 3)});
      if (!a.is_ok()) bad("append after reopen: " + a.status().to_string());
      if (Status s = o.sync(*l); !s.is_ok()) bad("sync after reopen: " + s.to_string());
      l.reset();
      // A failed fsync is final: what it covered may or may not be on disk
      // whatever the reopen synced. Nothing of it kept, and mixes.
      MemFs::Snapshot after = fs.snapshot();
      for (int j = 0; j < 6; j++) {
        fs.restore(after);
        if (j == 0) fs.crash(1, CrashMode::drop_all);
        else fs.crash(static_cast<uint64_t>(10 + j), CrashWeights::format_model());
        Oracle o2 = o;
        CheckReport r2 = o2.reopen_and_check(kDir, opt, {true});
        for (auto& v : r2.violations) bad("reopen, append, sync, power cut " + std::to_string(j) + ": " + v);
      }
    }
  }
  // 2. A power cut right after the run: only durable state, or any mix.
  for (int j = 0; j < 4; j++) {
    fs.restore(snap);
    if (j == 0) fs.crash(7, CrashMode::drop_all);
    else if (j == 1) fs.crash(7, CrashMode::keep_all);
    else fs.crash(static_cast<uint64_t>(j), CrashWeights::format_model());
    Oracle o = oracle;
    CheckReport r = o.reopen_and_check(kDir, opt, {true});
    for (auto& v : r.violations) bad("power cut " + std::to_string(j) + ": " + v);
  }
  return out;
}

struct Plan {
  Op op;
  std::vector<FaultKind> kinds;
  bool sticky_too;
};

}  // namespace

TEST_CASE("a fault at every I/O call of a workload never loses synced records and fails the log exactly when FORMAT.md says") {
  const std::vector<Plan> plans = {
      {Op::write, {FaultKind::eio, FaultKind::enospc, FaultKind::short_write, FaultKind::short_write_enospc}, true},
      {Op::sync, {FaultKind::eio, FaultKind::enospc, FaultKind::sync_lose}, true},
      {Op::sync_dir, {FaultKind::eio}, true},
      {Op::truncate, {FaultKind::eio, FaultKind::enospc}, true},
      {Op::rename, {FaultKind::eio}, false},
      {Op::unlink, {FaultKind::eio}, false},
      {Op::create, {FaultKind::eio, FaultKind::enospc}, false},
      {Op::open, {FaultKind::eio}, false},
      {Op::read, {FaultKind::eio}, false},
      {Op::mkdir, {FaultKind::eio}, false},
      {Op::list, {FaultKind::eio}, false},
      {Op::stat, {FaultKind::eio}, false},
      {Op::lock, {FaultKind::eio}, false},
  };
  uint64_t runs = 0, failed = 0, rolled_back = 0;
  std::map<std::string, uint64_t> per_op;
  for (int variant : {0, 1}) {
    CAPTURE(variant);
    std::vector<Trace> clean;
    {
      Outcome o = run(variant, std::nullopt, &clean, {});
      std::string v;
      for (const auto& x : o.violations) v += x + "\n";
      REQUIRE_MESSAGE(o.violations.empty(), v);
      REQUIRE_FALSE(o.failed);
      // The script does what it says: rolls, a recycle, truncations.
      CHECK(o.rolls >= 3);
      CHECK(o.recycled == (variant == 0));
      CHECK(o.truncated);
    }
    for (const Plan& p : plans) {
      for (bool sticky : {false, true}) {
        if (sticky && !p.sticky_too) continue;
        for (FaultKind k : p.kinds) {
          for (uint64_t n = 1;; n++) {
            Fault f{p.op, k, sticky, n};
            Outcome o = run(variant, f, nullptr, clean);
            if (!o.fired) break;  // past the last call of this kind
            runs++;
            per_op[op_name(p.op)]++;
            failed += o.failed;
            rolled_back += o.rolled_back;
            if (!o.violations.empty()) {
              std::string v = "variant " + std::to_string(variant) + ", " + f.text() + ", fired in " +
                              o.fired_in + ":\n";
              for (const auto& x : o.violations) v += "  " + x + "\n";
              FAIL(v);
            }
          }
        }
      }
    }
  }
  std::ostringstream ops;
  for (const auto& [op, n] : per_op) ops << "  " << op << ": " << n << " runs\n";
  MESSAGE(runs << " runs with a fault (" << failed << " left the log failed, " << rolled_back
               << " rolled a batch back and went on)\n"
               << ops.str());
  CHECK(rolled_back > 0);
  CHECK(failed > 0);
}

TEST_CASE("a tail cut whose copy does not fit in the free space is refused before a byte changes") {
  MemFs fs;
  REQUIRE(fs.mkdir("/t").is_ok());
  Options o;
  o.fs = &fs;
  {
    auto log = Log::open("/t/log", o);
    REQUIRE(log.is_ok());
    std::vector<std::string_view> batch{"a", "b"};
    REQUIRE((*log)->append(batch).is_ok());
    REQUIRE((*log)->close().is_ok());
  }
  const std::string seg = "/t/log/00000000000000000000.seg";
  // 5000 bytes after the active segment's EOF: a write open cuts them and
  // saves them in lost+found/ first.
  REQUIRE(fs.set_contents(seg, fs.read_all(seg).value() + std::string(5000, 'g')).is_ok());
  const std::string before = fs.read_all(seg).value();
  fs.set_available(6000);  // the bytes fit, their manifest does not
  auto r = Log::open("/t/log", o);
  REQUIRE(!r.is_ok());
  CHECK(r.status().sys_errno() == ENOSPC);
  CHECK(r.status().message().find("5000 bytes") != std::string::npos);
  CHECK(fs.read_all(seg).value() == before);
  auto saved = fs.list("/t/log/lost+found");
  CHECK((!saved.is_ok() || saved->empty()));
  fs.set_available(UINT64_MAX);
  auto again = Log::open("/t/log", o);
  REQUIRE_MESSAGE(again.is_ok(), again.status().to_string());
  CHECK((*again)->next_sequence() == 2);
}

TEST_CASE("a disk-full write names the segment file, not the .seg.tmp it was created as") {
  MemFs fs;
  REQUIRE(fs.mkdir("/t").is_ok());
  Options o;
  o.fs = &fs;
  auto log = Log::open("/t/log", o);
  REQUIRE(log.is_ok());
  // Each segment is made as NAME.seg.tmp and renamed: the first by the open,
  // the second by a roll. A failed write is rolled back and the log goes on.
  for (const char* seg : {"/t/log/00000000000000000000.seg", "/t/log/00000000000000000001.seg"}) {
    CAPTURE(seg);
    fs.fail(Op::write, 1, FaultKind::enospc);
    auto r = (*log)->append_one("b");
    REQUIRE(!r.is_ok());
    CHECK(r.status().sys_errno() == ENOSPC);
    CHECK(r.status().path() == seg);
    REQUIRE((*log)->append_one("a").is_ok());
    REQUIRE((*log)->roll().is_ok());
  }
}
