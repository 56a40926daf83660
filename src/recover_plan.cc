// plan_recover(): what recover() does to a verified log short of salvage:
// leftovers and renames, a torn tail that is the active segment's only
// damage (cut without force), bytes after the active segment's EOF (which
// opening for writing would truncate: saved first). Corruption anywhere is
// salvage's (salvage.h), with force.
#include "recover_plan.h"

#include <algorithm>

#include "alog/format.h"

namespace alog::detail {

using namespace format;

namespace {

// Fills records_dropped, first_seq and last_seq for the records [from, next).
void drop_records(RecoverAction& a, std::optional<uint64_t> from, std::optional<uint64_t> next) {
  if (!from) return;
  a.first_seq = from;
  if (next && *next > *from) {
    a.records_dropped = *next - *from;
    a.last_seq = *next - 1;
  }
}

void add(RecoverPlan& p, RecoverAction a, PlanStep s) {
  p.actions.push_back(std::move(a));
  p.steps.push_back(std::move(s));
}

RecoverAction saving(std::string action, const std::string& file, std::string reason) {
  RecoverAction a;
  a.action = std::move(action);
  a.file = file;
  a.reason = std::move(reason);
  a.saved_to = std::string(kLostFoundName) + "/";
  return a;
}

void plan_by_open(RecoverPlan& p, const VerifyReport& r) {
  for (const auto& pr : r.problems) {
    RecoverAction a;
    a.file = pr.file;
    if (pr.kind == "leftover_file") {
      a.action = pr.file.find(".seg.tmp") != std::string::npos ? "remove_tmp" : "remove_del";
      a.reason = "not part of the log";
    } else if (pr.kind == "name_mismatch") {
      a.action = "rename";
      a.saved_to = pr.expected;
      a.reason = "rename to " + pr.expected + " (the header's start sequence)";
    } else {
      continue;
    }
    add(p, std::move(a), PlanStep{});
  }
}

// A torn tail of segment i, the active one after the plan, or bytes after
// its EOF other than stale frames (opening for writing truncates them).
void plan_tail(RecoverPlan& p, const VerifyDetail& d, size_t i) {
  const SegmentDetail& sd = d.segments[i];
  const SegmentReport& sr = d.report.segments[i];
  if (!sd.header_ok) return;
  if (sd.stop == Stop::eof) {
    const uint64_t end = sd.stop_state.offset + kFrameHeaderSize;
    // A recycled file's stale frames: opening truncates them, no repair.
    if (sr.file_length <= end || sr.stale_bytes > 0) return;
    RecoverAction a = saving("cut", sr.file, "bytes after the EOF frame");
    a.offset = end;
    a.bytes_dropped = sr.file_length - end;
    add(p, a, PlanStep{StepKind::trim, i, WalkState{end}, "bytes after the EOF frame"});
    return;
  }
  RecoverAction a = saving("cut", sr.file, std::string("torn tail: ") + stop_text(sd.stop));
  a.offset = sd.boundary.offset;
  a.bytes_dropped = sr.file_length - sd.boundary.offset;
  drop_records(a, sd.boundary.seq, sd.stop_state.seq);
  add(p, a, PlanStep{StepKind::cut, i, sd.boundary, a.reason});
}

}  // namespace

RecoverPlan plan_recover(const VerifyDetail& d, bool force) {
  RecoverPlan p;
  const VerifyReport& r = d.report;
  plan_by_open(p, r);
  p.next_seq = r.next_sequence;
  p.corrupt = r.has(Classification::corruption);
  p.refused = p.corrupt && !force;
  // The active segment's tail, unless salvage rebuilds that segment.
  if (!d.segments.empty()) {
    const std::string& active = d.segments.back().name;
    const bool salvaged = std::any_of(r.problems.begin(), r.problems.end(), [&](const Problem& pr) {
      return pr.file == active && pr.classification == Classification::corruption;
    });
    if (!salvaged) plan_tail(p, d, d.segments.size() - 1);
  }
  if (r.first_sequence && p.next_seq > *r.first_sequence) {
    p.first_seq = r.first_sequence;
    p.last_seq = p.next_seq - 1;
  }
  return p;
}

}  // namespace alog::detail
