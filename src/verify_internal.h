// What verify() learns beyond its public report: per-segment walk states,
// used by recover() to plan cuts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "alog/format.h"
#include "alog/verify.h"
#include "frame_reader.h"

namespace alog::detail {

struct SegmentDetail {
  std::string name;
  bool header_ok = false;
  format::Slot slot;
  uint16_t generation = 0;
  uint64_t start_sequence = 0;
  Stop stop = Stop::none;
  WalkState stop_state;  // where the walk stopped (or the EOF position)
  WalkState boundary;    // last batch boundary at or before the stop
  std::optional<uint64_t> first_damage;  // first confirmed damaged record's offset
  WalkState damage_boundary;             // the batch boundary before it
  bool gap_before = false;  // its start does not follow the previous segment
};

struct VerifyDetail {
  VerifyReport report;
  std::string dir;
  std::vector<SegmentDetail> segments;  // in log order, parallel to report.segments
};

// The last step of verify_detail (problem_ranges.cc): fills each problem's
// range and an unreadable header's expected/found values, and sorts the
// problems by segment, then offset.
void fill_problem_ranges(VerifyDetail& d, Fs& fs);

// Holds `path` open (Fs::anchor) when it is a directory; else nothing.
Result<std::shared_ptr<DirAnchor>> anchor_if_dir(Fs& fs, const std::string& path);

// lock_is_ours: the caller holds LOCK itself (recover), so it is no live writer.
Result<VerifyDetail> verify_detail(const std::string& path, const VerifyOptions& opt,
                                   bool lock_is_ours = false);

}  // namespace alog::detail
