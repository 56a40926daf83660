// recover(): the repair tool's library side. Verifies every segment, plans
// (recover_plan.cc; with force and corruption, salvage.h) and carries the
// plan out step by step: a torn tail always, corruption only when forced,
// by salvage (FORMAT.md "Salvage"). Every removed byte is first copied to
// lost+found/ with a manifest.
#include <algorithm>
#include <chrono>

#include "alog/format.h"
#include "alog/interrupt.h"
#include "alog/log.h"
#include "alog/verify.h"
#include "alog/write_plan.h"
#include "lost_found.h"
#include "recover_plan.h"
#include "salvage.h"
#include "verify_internal.h"
#include "file_cache.h"

namespace alog {

using namespace detail;
using namespace format;

namespace {

struct Ctx {
  Fs& fs;
  std::string dir;
  std::function<uint64_t()> clock;
  uint64_t now() const {
    if (clock) return clock();
    using namespace std::chrono;
    return uint64_t(duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
  }
};

// One action per segment a salvage rebuilds or creates, with its kept and
// lost sequences; records_dropped counts the records it loses (lost frames
// of an earlier salvage were no records), bytes_dropped the bytes of the
// original not carried over in kept records.
void add_salvage_actions(const SalvagePlan& plan, RecoverReport& rep) {
  for (const SegmentSalvage& s : plan.segments) {
    RecoverAction a;
    a.action = s.create ? "create_lost" : "salvage";
    a.file = s.file;
    uint64_t kept_bytes = 0;
    for (const KeptRecord& k : s.records) kept_bytes += kFrameHeaderSize + k.length;
    if (!s.create) a.bytes_dropped = s.original_length - std::min(s.original_length, kHeaderSize + kept_bytes);
    for (const SeqRun& r : s.kept) a.kept.push_back({r.first, r.last, ""});
    if (s.dropped_before_first.records > 0) {  // below the operator's --first-seq
      a.records_dropped += s.dropped_before_first.records;
      a.first_seq = s.dropped_before_first.first_seq;
      a.last_seq = s.first_sequence - 1;
    }
    for (const SeqRun& r : s.lost) {
      a.lost.push_back({r.first, r.last, r.reason});
      // Lost frames of an earlier salvage, or a range no segment held, were no
      // records of the log: nothing leaves it.
      if (s.create || r.reason == "lost in an earlier salvage") continue;
      a.records_dropped += r.last - r.first + 1;
      if (!a.first_seq) a.first_seq = r.first;
      a.last_seq = r.last;
    }
    a.reason = s.create ? "no segment holds these sequences: a segment of lost frames takes them"
                        : "damaged: rebuilt with every proven record at its sequence";
    a.saved_to = s.create ? "" : std::string(kLostFoundName) + "/";
    rep.actions.push_back(a);
  }
}

// What carrying out the actions writes: each is done under the lock, and
// the ordinary open for writing follows (every segment opened for writing).
WritePlan write_plan_of(const RecoverReport& rep) {
  WritePlan w;
  w.lock = false;  // checked and taken already
  w.write_open = true;
  for (const RecoverAction& a : rep.actions) {
    if (a.action == "cut" || a.action == "salvage") w.lost_found = true;
    if (a.action != "cut") w.names = true;  // removals, renames, a salvage's new segments
  }
  return w;
}

// The cut of a torn tail at B inside the active segment (bytes after B already
// saved): FORMAT.md "Cutting at a boundary B".
Status cut_segment(const Ctx& c, const SegmentDetail& sd, const WalkState& b) {
  ALOG_ASSIGN(auto f, open_shedding(c.fs, path_join(c.dir, sd.name), OpenMode::read_write));
  ALOG_TRY(f->truncate(b.offset));
  uint8_t frames[2 * kFrameHeaderSize];
  size_t n = encode_end(b.crc, b.pending, sd.generation, b.open_batch, frames);
  ALOG_TRY(f->pwrite(frames, n, b.offset));
  return f->datasync();
}

// Carries out step `s` of the plan (action `a`) while holding the lock.
Status carry_out(const Ctx& c, const VerifyDetail& d, const PlanStep& s, RecoverAction& a) {
  const SegmentDetail& sd = d.segments[s.segment];
  switch (s.kind) {
    case StepKind::by_open: return {};
    case StepKind::cut:
    case StepKind::trim: {
      {
        ALOG_ASSIGN(auto f, open_shedding(c.fs, path_join(c.dir, sd.name), OpenMode::read));
        ALOG_ASSIGN(a.saved_to, save_tail(c.fs, c.dir, *f, sd.name, s.at.offset, s.manifest_reason, c.now()));
      }
      if (s.kind == StepKind::cut) return cut_segment(c, sd, s.at);
      ALOG_ASSIGN(auto f, open_shedding(c.fs, path_join(c.dir, sd.name), OpenMode::read_write));
      ALOG_TRY(f->truncate(s.at.offset));
      return f->datasync();
    }
  }
  return {};
}

}  // namespace

Result<RecoverReport> recover(const std::string& dir, const RecoverOptions& opt) {
  Fs& fs = opt.fs ? *opt.fs : posix_fs();
  ALOG_ASSIGN(FileStat st, fs.stat(dir));
  if (!st.exists) return Status(Errc::not_found, dir + ": no such log directory").at(dir);
  if (!st.is_dir) return Status(Errc::not_a_log, dir + ": not a directory").at(dir);
  // Every change below (lock, cuts, lost+found/, salvage) is made in the
  // directory opened here, whatever DIR names meanwhile.
  ALOG_ASSIGN(std::shared_ptr<DirAnchor> anchor, fs.anchor(dir));
  // The lock file's refusals first, for both runs: the dry run takes no lock
  // (nor creates LOCK), the real run takes it right after.
  ALOG_TRY(check_write_plan(dir, WritePlan{}, &fs));
  std::unique_ptr<FileLock> lock;
  if (!opt.dry_run) {
    ALOG_ASSIGN(lock, fs.lock(path_join(dir, std::string(kLockName))));
  }
  VerifyOptions vo;
  vo.fs = &fs;
  vo.progress = opt.progress;
  ALOG_ASSIGN(VerifyDetail d, verify_detail(dir, vo, /*lock_is_ours=*/lock != nullptr));
  Ctx c{fs, dir, opt.clock_ms};
  RecoverPlan plan = plan_recover(d, opt.force);
  RecoverReport rep;
  rep.before = d.report;
  rep.actions = plan.actions;
  rep.refused = plan.refused;
  rep.first_seq = plan.first_seq;
  rep.last_seq = plan.last_seq;
  rep.next_seq = plan.next_seq;
  SalvagePlan salvage;
  if (plan.corrupt && opt.force) {
    ALOG_ASSIGN(salvage, plan_salvage(fs, dir, d, salvage_options(opt), c.now()));
    if (!salvage.refused.empty()) {
      rep.refused = true;
      rep.refusal = salvage.refused;
    } else {
      add_salvage_actions(salvage, rep);
      // No sequence moves: the log ends where the files show it synced.
      rep.next_seq = std::max(rep.next_seq, salvage.next_sequence);
      rep.first_seq = salvaged_first_sequence(d, salvage);
      rep.last_seq = std::nullopt;
      if (rep.first_seq && rep.next_seq > *rep.first_seq) rep.last_seq = rep.next_seq - 1;
    }
  }
  if (!rep.refused)
    for (const auto& a : rep.actions) {
      rep.records_dropped += a.records_dropped;
      rep.bytes_dropped += a.bytes_dropped;
    }
  if (rep.refused || rep.actions.empty()) return rep;
  // Every refusal a step would meet, before the first step: a real run that
  // fails has changed nothing, and the dry run fails alike.
  ALOG_TRY(check_write_plan(dir, write_plan_of(rep), &fs));
  if (opt.dry_run) return rep;
  // From here files change: an interrupt no longer stops the reads (the
  // report must say what was done).
  NoInterrupts carry_on;

  for (size_t i = 0; i < plan.steps.size(); i++) ALOG_TRY(carry_out(c, d, plan.steps[i], rep.actions[i]));
  if (!salvage.segments.empty()) {
    ALOG_ASSIGN(auto saved, apply_salvage(fs, dir, salvage, opt.checkpoint_stride, c.now()));
    for (size_t i = 0; i < saved.size(); i++)
      rep.actions[plan.actions.size() + i].saved_to = saved[i];
  }
  lock.reset();
  // The ordinary open for writing removes leftovers and renames misnamed
  // segments.
  Options o;
  o.fs = &fs;
  o.clock_ms = opt.clock_ms;
  o.max_disk_size = 0;
  {
    ALOG_ASSIGN(auto log, Log::open(dir, o));
    ALOG_TRY(log->close());
  }
  rep.applied = true;
  ALOG_ASSIGN(VerifyDetail after, verify_detail(dir, vo));
  rep.after = after.report;
  return rep;
}

}  // namespace alog
