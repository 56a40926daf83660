// Retention policies (see alog/retention.h).
#include "alog/retention.h"

#include <algorithm>

namespace alog {

uint64_t retention_cut(const std::vector<SegmentInfo>& segs, const RetentionPolicy& p) {
  if (segs.empty()) return 0;
  const uint64_t first = segs.front().first_sequence;
  const uint64_t next = segs.back().next_sequence;
  uint64_t cut = first;
  const size_t n = segs.size();
  // The first sequence of segment i, the cut that drops every segment before it.
  auto start_of = [&](size_t i) { return std::max(segs[i].first_sequence, first); };
  if (p.keep_records) cut = std::max(cut, next - std::min(next - first, *p.keep_records));
  if (p.keep_segments && *p.keep_segments < n) {
    size_t k = std::max<uint64_t>(*p.keep_segments, 1);
    cut = std::max(cut, start_of(n - k));
  }
  if (p.keep_bytes) {
    uint64_t total = 0;
    for (const auto& s : segs) total += s.file_length;
    size_t i = 0;
    while (i + 1 < n && total > *p.keep_bytes) total -= segs[i++].file_length;
    cut = std::max(cut, start_of(i));
  }
  if (p.older_than_ms) {
    size_t i = 0;
    while (i + 1 < n && segs[i + 1].created_at_ms < *p.older_than_ms) i++;
    cut = std::max(cut, start_of(i));
  }
  return std::min(cut, next);
}

}  // namespace alog
