// Retention policies (see retention.h).
#include "retention.h"

#include <algorithm>

namespace alog::cli {

namespace {

// The cut that drops segments [0, n): the start of segment n's records.
uint64_t cut_before_segment(const std::vector<RetentionSegment>& segs, size_t n) {
  if (n == 0) return segs.front().first_sequence;
  return segs[n - 1].next_sequence;
}

}  // namespace

RetentionPlan plan_retention(const std::vector<RetentionSegment>& segs, const RetentionPolicy& p,
                             uint64_t now_ms) {
  RetentionPlan plan;
  if (segs.empty()) return plan;
  const uint64_t first = segs.front().first_sequence;
  const uint64_t next = segs.back().next_sequence;
  const size_t sealed = segs.size() - 1;  // the active segment never goes

  if (p.keep_records) {
    uint64_t n = *p.keep_records;
    plan.cuts.push_back({"keep", next - first > n ? next - n : first});
  }
  if (p.keep_bytes) {
    uint64_t total = 0;
    for (const auto& s : segs) total += s.file_length;
    size_t drop = 0;
    while (drop < sealed && total > *p.keep_bytes) total -= segs[drop++].file_length;
    plan.cuts.push_back({"keep_bytes", cut_before_segment(segs, drop)});
  }
  if (p.keep_segments) {
    uint64_t k = std::max<uint64_t>(*p.keep_segments, 1);
    size_t drop = segs.size() > k ? size_t(segs.size() - k) : 0;
    plan.cuts.push_back({"keep_segments", cut_before_segment(segs, std::min(drop, sealed))});
  }
  if (p.older_than_ms) {
    // A segment goes when its successor was created before the cutoff
    // (strictly, as alog/retention.h and alog-truncate-before(1) say).
    size_t drop = 0;
    if (now_ms >= *p.older_than_ms) {
      uint64_t cutoff = now_ms - *p.older_than_ms;
      while (drop < sealed && segs[drop + 1].created_at_ms < cutoff) drop++;
    }
    plan.cuts.push_back({"older_than", cut_before_segment(segs, drop)});
  }

  plan.cut = first;
  for (const auto& c : plan.cuts) {
    if (c.cut > plan.cut) {
      plan.cut = c.cut;
      plan.policy = c.policy;
    }
  }
  return plan;
}

}  // namespace alog::cli
