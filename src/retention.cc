// Retention policies (see alog/retention.h).
#include "alog/retention.h"

#include <algorithm>

namespace alog {

RetentionPlan retention_plan(const std::vector<SegmentInfo>& segs, const RetentionPolicy& p) {
  RetentionPlan plan;
  if (segs.empty()) return plan;
  const uint64_t first = segs.front().first_sequence;
  const uint64_t next = segs.back().next_sequence;
  const size_t n = segs.size();
  plan.cut = first;
  // The cut that drops every segment before segment i.
  auto start_of = [&](size_t i) { return std::max(segs[i].first_sequence, first); };
  auto add = [&](const char* name, uint64_t cut) {
    cut = std::min(std::max(cut, first), next);
    plan.cuts.push_back({name, cut});
    if (cut > plan.cut) {
      plan.cut = cut;
      plan.policy = name;
    }
  };
  if (p.keep_records) add("keep_records", next - std::min(next - first, *p.keep_records));
  if (p.keep_bytes) {
    uint64_t total = 0;
    for (const auto& s : segs) total += s.file_length;
    size_t i = 0;
    while (i + 1 < n && total > *p.keep_bytes) total -= segs[i++].file_length;
    add("keep_bytes", start_of(i));
  }
  if (p.keep_segments) {
    size_t k = static_cast<size_t>(std::max<uint64_t>(*p.keep_segments, 1));
    add("keep_segments", k < n ? start_of(n - k) : first);
  }
  if (p.older_than_ms) {
    size_t i = 0;
    while (i + 1 < n && segs[i + 1].created_at_ms < *p.older_than_ms) i++;
    add("older_than", start_of(i));
  }
  return plan;
}

uint64_t retention_cut(const std::vector<SegmentInfo>& segs, const RetentionPolicy& p) {
  return retention_plan(segs, p).cut;
}

}  // namespace alog
