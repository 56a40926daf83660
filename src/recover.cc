// recover(): the repair tool's library side. Verifies every segment, plans
// (recover_plan.cc) and carries the plan out step by step: a torn tail
// always, corruption only when forced (FORMAT.md "A forced cut"). Every
// removed byte is first copied or moved to lost+found/ with a manifest.
#include <algorithm>
#include <chrono>

#include "alog/format.h"
#include "alog/log.h"
#include "alog/verify.h"
#include "lost_found.h"
#include "recover_plan.h"
#include "verify_internal.h"

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
  std::string lost_found() const { return path_join(dir, std::string(kLostFoundName)); }
};

// Writes the losing slot of a segment file (counter = winner's + 1).
Status write_slot(File& f, const Slot& winner, int winner_idx, Slot s) {
  s.counter = static_cast<uint16_t>(winner.counter + 1);
  uint8_t buf[kSlotSize];
  encode_slot(s, buf);
  return f.pwrite(buf, kSlotSize, kSlotAOffset + uint64_t(1 - winner_idx) * kSlotSize);
}

// The forced cut at B inside segment `sd` (bytes after B already saved).
Status cut_segment(const Ctx& c, const SegmentDetail& sd, int winner_idx, const WalkState& b) {
  ALOG_ASSIGN(auto f, c.fs.open(path_join(c.dir, sd.name), OpenMode::read_write));
  if (sd.slot.synced_offset > b.offset) {
    Slot s = sd.slot;
    s.synced_offset = b.offset;
    s.synced_sequence = b.seq;
    s.synced_crc = b.crc;
    s.synced_pending = b.pending;
    if (s.read_offset > b.offset) {
      s.read_offset = b.offset;
      s.first_sequence = b.seq;
      s.read_crc = b.crc;
      s.read_pending = b.pending;
    }
    ALOG_TRY(write_slot(*f, sd.slot, winner_idx, s));
    ALOG_TRY(f->datasync());
  }
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
    case StepKind::move: {
      ALOG_ASSIGN(a.saved_to, move_to_lost_found(c.fs, c.dir, a.file, a.bytes_dropped, s.manifest_reason, c.now()));
      return {};
    }
    case StepKind::cut:
    case StepKind::trim: {
      {
        ALOG_ASSIGN(auto f, c.fs.open(path_join(c.dir, sd.name), OpenMode::read));
        ALOG_ASSIGN(a.saved_to, save_tail(c.fs, c.dir, *f, sd.name, s.at.offset, s.manifest_reason, c.now()));
      }
      if (s.kind == StepKind::cut) return cut_segment(c, sd, d.report.segments[s.segment].winner_slot, s.at);
      ALOG_ASSIGN(auto f, c.fs.open(path_join(c.dir, sd.name), OpenMode::read_write));
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
  std::unique_ptr<FileLock> lock;
  if (!opt.dry_run) {
    ALOG_ASSIGN(lock, fs.lock(path_join(dir, std::string(kLockName))));
  }
  VerifyOptions vo;
  vo.fs = &fs;
  vo.progress = opt.progress;
  ALOG_ASSIGN(VerifyDetail d, verify_detail(dir, vo, /*lock_is_ours=*/lock != nullptr));
  RecoverPlan plan = plan_recover(d, opt.force);
  RecoverReport rep;
  rep.before = d.report;
  rep.actions = plan.actions;
  rep.refused = plan.refused;
  rep.first_seq = plan.first_seq;
  rep.last_seq = plan.last_seq;
  rep.next_seq = plan.next_seq;
  if (!plan.refused)
    for (const auto& a : plan.actions) {
      rep.records_dropped += a.records_dropped;
      rep.bytes_dropped += a.bytes_dropped;
    }
  if (opt.dry_run || rep.refused || rep.actions.empty()) return rep;

  Ctx c{fs, dir, opt.clock_ms};
  for (size_t i = 0; i < plan.steps.size(); i++) ALOG_TRY(carry_out(c, d, plan.steps[i], rep.actions[i]));
  lock.reset();
  // The ordinary open for writing removes leftovers and renames misnamed
  // segments; with every segment gone it starts the log afresh.
  Options o;
  o.fs = &fs;
  o.clock_ms = opt.clock_ms;
  o.start_sequence = plan.restart.value_or(0);
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
