// Retention policies for truncate-before: where --keep, --keep-bytes,
// --keep-segments and --older-than cut a log. Pure: no I/O, no library
// state, so it is unit-tested on its own (tests/cli_retention_test.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace alog::cli {

// What a policy needs to know of a segment, in log order.
struct RetentionSegment {
  uint64_t first_sequence;  // first live record
  uint64_t next_sequence;   // one past its last record
  uint64_t file_length;     // bytes on disk
  uint64_t created_at_ms;   // from the segment header, never the file's mtime
  bool active;              // the last segment: never removed
};

struct RetentionPolicy {
  std::optional<uint64_t> keep_records;   // --keep N: the newest N records stay
  std::optional<uint64_t> keep_bytes;     // --keep-bytes: oldest sealed segments go until the rest fit
  std::optional<uint64_t> keep_segments;  // --keep-segments K (K >= 1): the newest K segments stay
  std::optional<uint64_t> older_than_ms;  // --older-than: segments wholly older than now - this go
  bool any() const { return keep_records || keep_bytes || keep_segments || older_than_ms; }
};

struct RetentionCut {
  std::string policy;  // "keep", "keep_bytes", "keep_segments", "older_than"
  uint64_t cut;        // truncate_before(cut) applies it (<= first: nothing to do)
};

struct RetentionPlan {
  std::vector<RetentionCut> cuts;  // one per policy given, in the order above
  uint64_t cut = 0;                // the strictest: the largest of the cuts, at least the first sequence
  std::string policy;              // which policy gave it ("" when nothing is cut)
};

// Applies every policy given to `segs` (non-empty, in log order) at time
// now_ms and returns the strictest cut. Segment i is wholly older than
// created_at(i + 1), since every record in it was written before that
// segment was created; the active segment has no successor and never goes.
RetentionPlan plan_retention(const std::vector<RetentionSegment>& segs, const RetentionPolicy& p,
                             uint64_t now_ms);

}  // namespace alog::cli
