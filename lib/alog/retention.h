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

// The sequence to pass to Log::truncate_before(): the largest cut any of the
// given policies asks for (the strictest wins). Never cuts into the active
// segment except for keep_records; returns the first sequence when there is
// nothing to remove. `segs` is in log order, the last one active.
uint64_t retention_cut(const std::vector<SegmentInfo>& segs, const RetentionPolicy& policy);

}  // namespace alog
