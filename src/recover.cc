// recover(): the repair tool's library side. Verifies every segment, plans
// the repairs, and applies them: a torn tail through the ordinary open-time
// recovery, corruption only when forced, by salvage (FORMAT.md "Salvage";
// salvage.h). Every removed byte is first copied to lost+found/ with a
// manifest.
#include <algorithm>
#include <chrono>

#include "alog/format.h"
#include "alog/log.h"
#include "alog/verify.h"
#include "lost_found.h"
#include "salvage.h"
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
    for (const SalvagedFrame& f : s.frames)
      if (!f.lost) kept_bytes += kFrameHeaderSize + f.length;
    if (!s.create) a.bytes_dropped = s.original_length - std::min(s.original_length, kHeaderSize + kept_bytes);
    for (const SeqRun& r : s.kept) a.kept.push_back({r.first, r.last, ""});
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
  rep.planned_next = plan.next_sequence;
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
  RecoverReport rep;
  rep.before = d.report;
  Ctx c{fs, dir, opt.clock_ms};

  for (const auto& p : d.report.problems) {
    if (p.kind == "leftover_file") {
      RecoverAction a;
      a.action = p.file.find(".seg.tmp") != std::string::npos ? "remove_tmp" : "remove_del";
      a.file = p.file;
      a.reason = "not part of the log";
      rep.actions.push_back(a);
    } else if (p.kind == "name_mismatch") {
      RecoverAction a;
      a.action = "rename";
      a.file = p.file;
      a.reason = "rename to " + p.expected + " (the header's start sequence)";
      rep.actions.push_back(a);
    }
  }

  // A torn tail that is the active segment's only damage is cut in place
  // (by the open below); corruption anywhere is salvaged (with force).
  const size_t n = d.segments.size();
  const bool corrupt = d.report.has(Classification::corruption);
  if (n > 0) {
    const SegmentDetail& sd = d.segments[n - 1];
    const bool only_torn = std::none_of(
        d.report.problems.begin(), d.report.problems.end(), [&](const Problem& p) {
          return p.file == sd.name && p.classification == Classification::corruption;
        });
    if (sd.header_ok && only_torn && sd.stop != Stop::eof &&
        sd.stop_state.offset >= sd.slot.synced_offset) {
      RecoverAction a;
      a.action = "cut";
      a.file = sd.name;
      a.offset = sd.boundary.offset;
      a.bytes_dropped = d.report.segments[n - 1].file_length - sd.boundary.offset;
      a.first_seq = sd.boundary.seq;
      a.records_dropped = sd.stop_state.seq - sd.boundary.seq;
      if (a.records_dropped) a.last_seq = sd.stop_state.seq - 1;
      a.reason = std::string("torn tail: ") + stop_text(sd.stop);
      a.saved_to = std::string(kLostFoundName) + "/";
      rep.actions.push_back(a);
    }
  }
  SalvagePlan plan;
  if (corrupt) {
    rep.refused = !opt.force;
    if (opt.force) {
      SalvageOptions so;
      so.first_seq = opt.first_seq;
      so.next_seq = opt.next_seq;
      so.generation = opt.generation;
      so.confirm_missing = opt.confirm_missing;
      so.checkpoint_stride = opt.checkpoint_stride;
      ALOG_ASSIGN(plan, plan_salvage(fs, dir, d, so, c.now()));
      if (!plan.refused.empty()) {
        rep.refused = true;
        rep.refusal = plan.refused;
      } else {
        add_salvage_actions(plan, rep);
      }
    }
  }
  if (opt.dry_run || rep.refused) return rep;

  // Apply the salvage while holding the lock.
  if (!plan.segments.empty()) {
    ALOG_ASSIGN(auto saved, apply_salvage(fs, dir, plan, opt.checkpoint_stride, c.now()));
    for (size_t i = 0; i < saved.size(); i++)
      for (auto& a : rep.actions)
        if (a.file == plan.segments[i].file && (a.action == "salvage" || a.action == "create_lost"))
          a.saved_to = saved[i];
  }
  lock.reset();
  // The ordinary open-time recovery cuts a torn tail (saving it in
  // lost+found/), removes leftovers and renames misnamed segments.
  Options o;
  o.fs = &fs;
  o.clock_ms = opt.clock_ms;
  o.max_disk_size = 0;
  std::vector<std::string> lf_before;
  if (auto l = fs.list(c.lost_found()); l.is_ok()) lf_before = *l;
  {
    ALOG_ASSIGN(auto log, Log::open(dir, o));
    ALOG_TRY(log->close());
  }
  // Name what the open-time recovery saved for a torn-tail cut.
  if (auto l = fs.list(c.lost_found()); l.is_ok()) {
    for (const auto& name : *l) {
      if (std::find(lf_before.begin(), lf_before.end(), name) != lf_before.end()) continue;
      for (auto& a : rep.actions)
        if (a.action == "cut" && a.offset &&
            name.rfind(a.file + "@" + std::to_string(*a.offset) + ".", 0) == 0 &&
            name.size() > 4 && name.compare(name.size() - 4, 4, ".bin") == 0)
          a.saved_to = std::string(kLostFoundName) + "/" + name;
    }
  }
  rep.applied = true;
  ALOG_ASSIGN(VerifyDetail after, verify_detail(dir, vo));
  rep.after = after.report;
  return rep;
}

}  // namespace alog
