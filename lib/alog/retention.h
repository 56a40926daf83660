// Retention policies: compute the truncate_before() cut for "keep N
// records", "keep at most B bytes", "keep at most K segments" and "drop
// segments whose successor was created before T". Pure: works on the
// segment list (Log::segments()), never on file modification times.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "alog/log.h"

namespace alog {

struct RetentionPolicy {
  std::optional<uint64_t> keep_records;   // keep the newest N records
  std::optional<uint64_t> keep_bytes;     // keep at most B bytes of segment files (whole segments)
  std::optional<uint64_t> keep_segments;  // keep at most K segments (K >= 1)
  // Drop each sealed segment whose successor was created before this time
  // (Unix ms): all its records are older than that.
  std::optional<uint64_t> older_than_ms;
};

// One policy's cut: truncate_before(cut) applies it (cut <= first: nothing to do).
struct RetentionCut {
  const char* policy;  // "keep_records", "keep_bytes", "keep_segments", "older_than"
  uint64_t cut;
};

struct RetentionPlan {
  std::vector<RetentionCut> cuts;  // one per policy given, in the order of RetentionPolicy
  uint64_t cut = 0;                // the strictest: the largest, at least the first sequence
  const char* policy = "";         // which policy gave it ("" when nothing is cut)
};

// Each policy's cut and the strictest of them. Never cuts into the active
// segment except for keep_records. `segs` is in log order, the last one active.
RetentionPlan retention_plan(const std::vector<SegmentInfo>& segs, const RetentionPolicy& policy);

// retention_plan(segs, policy).cut: the sequence to pass to truncate_before().
uint64_t retention_cut(const std::vector<SegmentInfo>& segs, const RetentionPolicy& policy);

}  // namespace alog
