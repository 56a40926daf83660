// plan_recover(): what recover() does to a verified log. The first damage in
// log order decides a forced cut (FORMAT.md "A forced cut"): the segments
// after it leave whole, the damaged one is cut at the last good batch
// boundary before the damage (or leaves whole when its header is
// unreadable). A torn tail is cut without force; bytes after the active
// segment's EOF, which opening for writing would truncate, are saved first.
#include "recover_plan.h"

#include <algorithm>

#include "alog/format.h"

namespace alog::detail {

using namespace format;

namespace {

// The sequences segment j holds, as far as the files show: [first, next).
// A segment with an unreadable header holds, by its name, everything up to
// the next segment's start (unknown for the last one).
struct Span {
  std::optional<uint64_t> first, next;
};

uint64_t start_of(const SegmentDetail& sd) {
  return sd.header_ok ? sd.start_sequence : parse_segment_name(sd.name).value_or(0);
}

Span span_of(const VerifyDetail& d, size_t j) {
  const SegmentDetail& sd = d.segments[j];
  const SegmentReport& sr = d.report.segments[j];
  if (sd.header_ok) return {sr.first_sequence, std::max(sd.stop_state.seq, sd.slot.synced_sequence)};
  Span s;
  s.first = parse_segment_name(sd.name);
  if (j + 1 < d.segments.size()) s.next = start_of(d.segments[j + 1]);
  return s;
}

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

// The first damage in log order: its segment, the cut (none: the segment
// leaves whole) and why.
struct Damage {
  size_t segment;
  std::optional<WalkState> cut;
  std::string reason;
};

std::optional<Damage> first_damage(const VerifyDetail& d) {
  const size_t n = d.segments.size();
  for (size_t i = 0; i < n; i++) {
    const SegmentDetail& sd = d.segments[i];
    const bool active = i + 1 == n;
    if (!sd.header_ok) return Damage{i, std::nullopt, "unreadable segment header or slots"};
    if (sd.gap_before) return Damage{i, std::nullopt, "sequence gap before this segment"};
    if (sd.first_damage)
      return Damage{i, sd.damage_boundary, "payload damage at offset " + std::to_string(*sd.first_damage)};
    if (sd.stop == Stop::eof) continue;
    if (active && sd.stop_state.offset >= sd.slot.synced_offset) continue;  // a torn tail
    return Damage{i, sd.boundary,
                  std::string(stop_text(sd.stop)) + " at offset " + std::to_string(sd.stop_state.offset)};
  }
  return std::nullopt;
}

void plan_forced(RecoverPlan& p, const VerifyDetail& d, const Damage& dm) {
  const size_t n = d.segments.size(), k = dm.segment;
  for (size_t j = n; j-- > k + 1;) {
    RecoverAction a = saving("move_segment", d.segments[j].name, "after the damage in " + d.segments[k].name);
    a.bytes_dropped = d.report.segments[j].file_length;
    Span s = span_of(d, j);
    drop_records(a, s.first, s.next);
    PlanStep step{StepKind::move, j, {}, a.reason};
    add(p, std::move(a), std::move(step));
  }
  const SegmentReport& sr = d.report.segments[k];
  Span s = span_of(d, k);
  if (dm.cut) {
    RecoverAction a = saving("cut", sr.file, dm.reason);
    a.offset = dm.cut->offset;
    a.bytes_dropped = sr.file_length - dm.cut->offset;
    drop_records(a, dm.cut->seq, s.next);
    add(p, a, PlanStep{StepKind::cut, k, *dm.cut, "forced cut: " + dm.reason});
  } else {
    RecoverAction a = saving("move_segment", sr.file, dm.reason);
    a.bytes_dropped = sr.file_length;
    drop_records(a, s.first, s.next);
    add(p, a, PlanStep{StepKind::move, k, {}, "forced cut: " + dm.reason});
  }
  // What a reader sees afterwards: up to the cut, or to the end of the
  // segment before the one that leaves.
  if (dm.cut) {
    p.next_seq = dm.cut->seq;
  } else if (k > 0) {
    p.next_seq = d.report.segments[k - 1].next_sequence;
  } else {
    p.restart = start_of(d.segments[k]);
    p.next_seq = *p.restart;
  }
}

// A torn tail of segment i, the active one after the plan, or bytes after
// its EOF (opening for writing truncates them).
void plan_tail(RecoverPlan& p, const VerifyDetail& d, size_t i) {
  const SegmentDetail& sd = d.segments[i];
  const SegmentReport& sr = d.report.segments[i];
  if (!sd.header_ok) return;
  if (sd.stop == Stop::eof) {
    const uint64_t end = sd.stop_state.offset + kFrameHeaderSize;
    if (sr.file_length <= end) return;
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
  if (auto dm = first_damage(d)) {
    plan_forced(p, d, *dm);
    if (!dm->cut && dm->segment > 0) plan_tail(p, d, dm->segment - 1);
    if (!force) {
      p.refused = true;
      p.next_seq = r.next_sequence;
      p.restart.reset();
    }
  } else if (!d.segments.empty()) {
    plan_tail(p, d, d.segments.size() - 1);
  }
  if (r.first_sequence && p.next_seq > *r.first_sequence && !p.restart) {
    p.first_seq = r.first_sequence;
    p.last_seq = p.next_seq - 1;
  }
  return p;
}

}  // namespace alog::detail
